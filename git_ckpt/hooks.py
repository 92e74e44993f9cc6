"""``git ckpt hooks install|uninstall|status``: the commit gate's git hooks.

Modelled on pre-commit's installer: the hooks go into the directory git really runs them from
(``git rev-parse --git-path hooks``, so ``core.hooksPath`` and linked worktrees work; the setting
itself is never changed, a ``hint:`` says where they went); each hook we write carries an ID
marker line; a foreign hook already there is kept as ``<hook>.legacy`` and run first; uninstall
puts back exactly what was there (bytes and mode, by renaming ``.legacy`` back) and removes the
hooks directory only when install created it.  Install sets ``git config ckpt.gate true`` and
uninstall unsets it, so a shared hooks directory gates only the repositories that asked for it.

The hook scripts are the templates in the top-level ``hooks/`` directory (packaged as
``git_ckpt.hook_scripts``); ``@PYTHON@`` becomes the interpreter running this code, and the
hooks fall back to ``git-ckpt`` on ``PATH`` when that interpreter is gone.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import CkptError
from .gitcore import Repo

HOOKS = ("pre-commit", "prepare-commit-msg", "pre-push")
MARKER = b"# ID: git-ckpt-hook-5f1d2a9c"
STATE_FILE = "hooks.json"


def template(name: str) -> bytes:
    """The hook script template ``name`` shipped in ``git_ckpt.hook_scripts``."""
    from importlib import resources

    return resources.files("git_ckpt.hook_scripts").joinpath(name).read_bytes()


def render(name: str, python: str | None = None) -> bytes:
    """The hook script ``name`` with the interpreter path filled in (shell-quoted)."""
    return template(name).replace(b"@PYTHON@", shlex.quote(python or sys.executable).encode())


def is_ours(path: Path) -> bool:
    """Whether the file at ``path`` is a hook we wrote (it carries the ID marker)."""
    try:
        with open(path, "rb") as fh:
            return MARKER in fh.read(4096)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return False


def hooks_dir(repo: Repo) -> Path:
    """The directory git runs hooks from: ``git rev-parse --git-path hooks`` (core.hooksPath
    honoured, relative paths taken from the worktree root, as git does for hooks)."""
    out = repo.git("rev-parse", "--git-path", "hooks").stdout.decode().rstrip("\n")
    path = Path(out)
    if not path.is_absolute():
        path = repo.workdir / path
    return Path(os.path.normpath(path))


def hooks_path_setting(repo: Repo) -> str | None:
    """The value of ``core.hooksPath`` in effect, or None."""
    proc = repo.git("config", "--get", "core.hooksPath", check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def _state_path(repo: Repo) -> Path:
    d = repo.common_dir / "ckpt"
    d.mkdir(exist_ok=True)
    return d / STATE_FILE


def _read_state(repo: Repo) -> dict:
    try:
        data = json.loads(_state_path(repo).read_text())
        return data if isinstance(data, dict) else {}
    except (FileNotFoundError, ValueError):
        return {}


def _write_state(repo: Repo, data: dict) -> None:
    from .store import atomic_write

    path = _state_path(repo)
    if data:
        atomic_write(path, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode())
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def _write_hook(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + f".ckpt-tmp{os.getpid()}")
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)


def install(repo: Repo, python: str | None = None) -> dict:
    """Install the three hooks and set ``ckpt.gate = true``.

    Returns ``{"dir", "hooks_path" (core.hooksPath or None), "installed": [names],
    "legacy": [names kept as .legacy], "created_dir": bool, "python"}``.  Raises
    :class:`CkptError` when a foreign hook and a ``.legacy`` file are both present (installing
    would lose one of them) and nothing is changed.  Installing again updates our hooks.
    """
    d = hooks_dir(repo)
    for name in HOOKS:
        hook, legacy = d / name, d / f"{name}.legacy"
        if (hook.exists() or hook.is_symlink()) and not is_ours(hook) and (legacy.exists() or legacy.is_symlink()):
            raise CkptError(
                f"{hook} is not ours and {legacy} already exists; installing would lose one of them",
                "merge or remove one of them by hand, then run git ckpt hooks install again",
            )
    state = _read_state(repo)
    created = False
    if not d.is_dir():
        d.mkdir(parents=True)
        created = True
    if state.get("dir") == str(d):
        created = created or bool(state.get("created_dir"))
    legacy_kept = []
    for name in HOOKS:
        hook, legacy = d / name, d / f"{name}.legacy"
        if (hook.exists() or hook.is_symlink()) and not is_ours(hook):
            os.replace(hook, legacy)
            legacy_kept.append(name)
        _write_hook(hook, render(name, python))
    repo.git("config", "ckpt.gate", "true")
    _write_state(repo, {"dir": str(d), "created_dir": created})
    return {
        "dir": str(d), "hooks_path": hooks_path_setting(repo), "installed": list(HOOKS),
        "legacy": legacy_kept, "created_dir": created, "python": python or sys.executable,
    }


def uninstall(repo: Repo) -> dict:
    """Remove our hooks, put each ``.legacy`` hook back (a rename: same bytes, same mode), remove
    the hooks directory if install created it and it is empty, and unset ``ckpt.gate``.

    Foreign hooks are never touched.  Returns ``{"dir", "removed": [names], "restored":
    [names], "removed_dir": bool}``.
    """
    d = hooks_dir(repo)
    removed, restored = [], []
    for name in HOOKS:
        hook, legacy = d / name, d / f"{name}.legacy"
        if not is_ours(hook):
            continue
        hook.unlink()
        removed.append(name)
        if legacy.exists() or legacy.is_symlink():
            os.replace(legacy, hook)
            restored.append(name)
    state = _read_state(repo)
    removed_dir = False
    if state.get("dir") == str(d) and state.get("created_dir") and d.is_dir() and not any(d.iterdir()):
        d.rmdir()
        removed_dir = True
    repo.git("config", "--unset-all", "ckpt.gate", check=False)
    _write_state(repo, {})
    return {"dir": str(d), "removed": removed, "restored": restored, "removed_dir": removed_dir}


@dataclass
class HookState:
    """One hook's state: ``ours``, ``foreign`` (someone else's), or ``absent``; ``legacy`` when a
    kept foreign hook is chained; ``python`` the interpreter ours records (and whether it
    ``python_ok``)."""

    name: str
    state: str
    legacy: bool
    python: str | None = None
    python_ok: bool = False


def status(repo: Repo) -> dict:
    """``{"dir", "hooks_path", "gate" (ckpt.gate), "hooks": [HookState as dict]}``."""
    from .gate import enabled

    d = hooks_dir(repo)
    out = []
    for name in HOOKS:
        hook = d / name
        legacy = (d / f"{name}.legacy").exists()
        if is_ours(hook):
            py = None
            for line in hook.read_bytes().splitlines():
                if line.startswith(b"INSTALL_PYTHON="):
                    try:
                        py = shlex.split(line[len(b"INSTALL_PYTHON="):].decode())[0]
                    except (ValueError, IndexError):
                        py = None
            out.append(HookState(name, "ours", legacy, py, bool(py and os.access(py, os.X_OK))))
        elif hook.exists() or hook.is_symlink():
            out.append(HookState(name, "foreign", legacy))
        else:
            out.append(HookState(name, "absent", legacy))
    return {
        "dir": str(d), "hooks_path": hooks_path_setting(repo), "gate": enabled(repo),
        "hooks": [h.__dict__ for h in out],
    }
