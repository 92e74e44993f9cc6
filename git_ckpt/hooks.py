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
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from .errors import CkptError, UsageError
from .gitcore import Repo, read_state
from .model import escape, loads_json

#: Every hook we install.  The gate hooks (pre-commit for ``git commit``, pre-merge-commit for a
#: merge that commits by itself, pre-applypatch for ``git am``) share one script; prepare-commit-msg
#: sets or removes the ``Ckpt-Verified`` trailer of every commit git prepares a message for (even
#: under ``--no-verify``: rebase, cherry-pick, revert, amend); applypatch-msg removes it from a
#: mailed patch; pre-push judges the commits being pushed.
HOOKS = ("pre-commit", "pre-merge-commit", "pre-applypatch", "prepare-commit-msg", "applypatch-msg", "pre-push")
#: Hooks written from another hook's template (only the ``HOOK=`` line differs).
SAME_AS = {"pre-merge-commit": "pre-commit", "pre-applypatch": "pre-commit"}
MARKER = b"# ID: git-ckpt-hook-5f1d2a9c"
STATE_FILE = "hooks.json"


def template(name: str) -> bytes:
    """The hook script template ``name`` shipped in ``git_ckpt.hook_scripts``."""
    from importlib import resources

    return resources.files("git_ckpt.hook_scripts").joinpath(name).read_bytes()


def render(name: str, python: str | None = None) -> bytes:
    """The hook script ``name`` with the interpreter path filled in (shell-quoted)."""
    src = SAME_AS.get(name, name)
    data = template(src)
    if src != name:
        data = data.replace(f"HOOK={src}\n".encode(), f"HOOK={name}\n".encode(), 1)
        data = data.replace(f"git-ckpt hook: {src} ".encode(), f"git-ckpt hook: {name} ".encode(), 1)
    return data.replace(b"@PYTHON@", shlex.quote(python or sys.executable).encode())


def is_ours(path: Path) -> bool:
    """Whether the file at ``path`` is a hook we wrote (it carries the ID marker)."""
    try:
        with open(path, "rb") as fh:
            return MARKER in fh.read(4096)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return False


def hooks_dir(repo: Repo) -> Path:
    """The directory git runs hooks from in ``repo``'s worktree: ``git rev-parse --git-path
    hooks`` (core.hooksPath honoured; a relative core.hooksPath is taken from the root of *this*
    worktree, as git does for hooks, so each linked worktree may have its own)."""
    out = os.fsdecode(repo.git("rev-parse", "--git-path", "hooks").stdout).removesuffix("\n")  # the path as is
    path = Path(out)
    if not path.is_absolute():
        path = repo.workdir / path
    if ".." in path.parts:  # the kernel (and so git) resolves "lnk/.." through the link: so must we
        if unreachable(path) is not None:
            return path  # as git sees it: no hook runs from it (install refuses it; status finds none)
        return Path(os.path.realpath(path))
    return Path(os.path.normpath(path))


def unreachable(path: Path) -> str | None:
    """Why the kernel cannot walk ``path`` up to its last ``..`` (a dangling symlink, a link to a
    file or a symlink loop before it: ENOENT, ENOTDIR, ELOOP), so git runs no hook from it, as
    ``"PREFIX: reason"``; None when it can, or when ``path`` has no ``..`` (what follows the last
    one is created by install).  ``os.path.realpath`` walks on where the kernel stops, so the
    hooks went where git never looks."""
    if ".." not in path.parts:
        return None
    last = len(path.parts) - 1 - path.parts[::-1].index("..")
    prefix = Path(*path.parts[:last + 1])
    try:
        os.stat(prefix)
    except OSError as err:
        return f"{escape(str(prefix))}: {err.strerror}"
    return None


def hooks_path_setting(repo: Repo) -> str | None:
    """The value of ``core.hooksPath`` in effect, or None."""
    proc = repo.git("config", "--get", "core.hooksPath", check=False)
    return os.fsdecode(proc.stdout).removesuffix("\n") or None if proc.returncode == 0 else None


@dataclass
class Target:
    """Where git runs hooks from for one worktree: its root, the hooks ``dir``, and the hook
    files there that the worktree tracks (``tracked``, paths relative to the root: we never
    rename or rewrite a tracked file)."""

    worktree: Path
    dir: Path
    tracked: list[str] = field(default_factory=list)


def _tracked(repo: Repo, d: Path) -> list[str]:
    try:
        rel = d.relative_to(repo.workdir)
    except ValueError:
        return []
    names = [str(rel / n) for h in HOOKS for n in (h, f"{h}.legacy")]
    out = repo.git("ls-files", "-z", "--", *names, check=False).stdout
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def targets(repo: Repo) -> list[Target]:
    """One :class:`Target` per worktree of the repository (this one first): git resolves
    ``core.hooksPath`` per worktree, so with a relative setting each worktree runs the hooks in
    its own directory."""
    out: list[Target] = []
    for root in repo.worktree_roots():
        try:
            wt = repo if root == repo.workdir else Repo.discover(root)
            d = hooks_dir(wt)
            out.append(Target(root, d, _tracked(wt, d)))
        except CkptError:
            continue
    return out


def _state_path(repo: Repo) -> Path:
    d = repo.common_dir / "ckpt"
    d.mkdir(exist_ok=True)
    return d / STATE_FILE


def _read_state(repo: Repo) -> dict[str, bool]:
    """Hooks directories we installed into → whether install created that directory ({} when
    the record is absent or not JSON).  Raises :class:`CorruptError` when it is no regular file
    (:func:`git_ckpt.gitcore.read_state`)."""
    try:
        data = loads_json(read_state(_state_path(repo)))
    except (FileNotFoundError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    if isinstance(data.get("dirs"), dict):
        return {str(k): bool(v) for k, v in data["dirs"].items()}
    if isinstance(data.get("dir"), str):  # the one-directory format of earlier versions
        return {data["dir"]: bool(data.get("created_dir"))}
    return {}


def _write_state(repo: Repo, dirs: dict[str, bool]) -> None:
    from .store import atomic_write

    path = _state_path(repo)
    if dirs:
        atomic_write(path, (json.dumps({"dirs": dirs}, indent=1, sort_keys=True) + "\n").encode())
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def _write_hook(path: Path, data: bytes) -> None:
    """``path`` holding ``data``, mode 0755, replaced atomically (:func:`git_ckpt.store.atomic_write`)."""
    from .store import atomic_write

    atomic_write(path, data, 0o755)


def _check_dir(t: Target, setting: str | None) -> None:
    """Raise :class:`CkptError` when installing into ``t.dir`` would lose or rewrite something."""
    from .store import link_on_the_way

    link = link_on_the_way(t.worktree, t.dir / "pre-commit")
    if link is not None:
        shown = escape(str(link))
        raise CkptError(f"git runs the hooks of worktree {escape(str(t.worktree))} from {escape(str(t.dir))}, reached through the "
                        f"symlink {shown}: git ckpt writes hooks only inside the worktree or the repository",
                        f"replace the symlink {shown} with a directory (or point core.hooksPath elsewhere), then run git ckpt hooks install again")
    if t.tracked:
        where = f"core.hooksPath = {setting}" if setting else "its hooks directory"
        raise CkptError(
            f"git runs the hooks of worktree {t.worktree} from {t.dir} ({where}), where {t.tracked[0]} is tracked;"
            " git ckpt does not rename or rewrite tracked files, so the gate cannot be installed there",
            "call git ckpt gate --hook from that hook yourself, or point core.hooksPath at a directory outside"
            " the worktree (an absolute path), then run git ckpt hooks install again",
        )
    for name in HOOKS:
        hook, legacy = t.dir / name, t.dir / f"{name}.legacy"
        if (hook.exists() or hook.is_symlink()) and not is_ours(hook) and (legacy.exists() or legacy.is_symlink()):
            raise CkptError(
                f"{hook} is not ours and {legacy} already exists; installing would lose one of them",
                "merge or remove one of them by hand, then run git ckpt hooks install again",
            )


EXCLUDE_BEGIN = "# >>> git-ckpt hooks (git ckpt hooks uninstall removes this block)"
EXCLUDE_END = "# <<< git-ckpt hooks"


# What may not be in a line of info/exclude: git ends a line at \n (and drops a \r before it),
# str.splitlines (which reads the block back) also at \v, \f, \x1c-\x1e, \x85, \u2028 and
# \u2029; and every other C0 or C1 control character or DEL, which no path should hold.
_NOT_IN_A_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _shown(text: str) -> str:
    """``text`` for a message: control characters and line separators as escapes, never raw."""
    return escape(text).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def check_exclude_line(rel: str, setting: str | None) -> None:
    """The one guard of every line git ckpt writes into ``info/exclude``: ``rel`` (the path of a
    hooks directory inside a worktree, which ``core.hooksPath`` named) must hold no control
    character or line separator, which would end the line and make the rest a rule of its own
    (``.githooks\n*`` would ignore every file).  Raises :class:`UsageError` (exit 2)."""
    if _NOT_IN_A_LINE.search(rel):
        raise UsageError(
            f"core.hooksPath {_shown(setting if setting is not None else rel)} is inside the worktree and its path holds a control character",
            "choose another core.hooksPath (git config core.hooksPath DIR), then run git ckpt hooks install again",
        )


def _in_worktree(repo: Repo, t: Target) -> PurePath | None:
    """``t.dir`` relative to its worktree's root when it is inside the worktree's files (a
    relative ``core.hooksPath`` such as ``.githooks``), else None (outside, or in ``.git``)."""
    try:
        rel = t.dir.relative_to(t.worktree)
    except ValueError:
        return None  # outside the worktree: nothing there to save or restore
    if rel.parts[:1] == (".git",) or _inside(t.dir, repo.common_dir) or _inside(t.dir, repo.git_dir):
        return None  # .git/hooks: never part of a worktree's files
    return rel


def _inside(path: Path, d: Path) -> bool:
    try:
        path.resolve().relative_to(d.resolve())
    except ValueError:
        return False
    return True


def set_excluded(repo: Repo, targets_: list[Target]) -> list[str]:
    """Make the hook files git ckpt writes into a hooks directory *inside* a worktree (a relative
    ``core.hooksPath`` such as ``.githooks``) ignored, through a block of ``$GIT_COMMON_DIR/info/
    exclude``: untracked, they were captured by every save and deleted by a restore of a
    checkpoint saved before the install, which switched the gate off without a word.  Ignored,
    no save holds them and no restore touches them (nor does ``git status`` list them).
    ``targets_`` empty removes the block.  Returns the patterns written, in order."""
    from .exclude import pattern

    patterns: list[str] = []
    setting = hooks_path_setting(repo) if targets_ else None
    for t in targets_:
        rel = _in_worktree(repo, t)
        if rel is None:
            continue
        check_exclude_line(rel.as_posix(), setting)
        for name in HOOKS:
            for n in (name, f"{name}.legacy"):
                p = pattern((rel / n).as_posix())
                if p not in patterns:
                    patterns.append(p)
    from .exclude import set_block

    return set_block(repo, EXCLUDE_BEGIN, EXCLUDE_END, patterns)


def install(repo: Repo, python: str | None = None, since: str | None = None) -> dict[str, Any]:
    """Install the hooks in every directory git runs hooks from (one per worktree when a
    relative ``core.hooksPath`` makes them differ), set ``ckpt.gate = true``, and set
    ``ckpt.gate.since`` (the pre-push hook judges only commits that are not ancestors of it) to
    ``since`` or, when it is unset, to the current HEAD.

    Returns ``{"dir" (this worktree's), "dirs": [every directory written], "hooks_path"
    (core.hooksPath or None), "installed": [names], "legacy": [names kept as .legacy in this
    worktree's directory], "created_dir": bool, "python", "since", "excluded": [the patterns
    :func:`set_excluded` wrote for hook files inside a worktree]}``.  Raises
    :class:`CkptError`, changing nothing, when a foreign hook and a ``.legacy`` file are both
    present (installing would lose one of them) or a hook file git would run is tracked (with a
    relative ``core.hooksPath`` inside the worktree).  Installing again updates our hooks.
    """
    setting = hooks_path_setting(repo)
    all_targets = targets(repo)
    dirs: list[Path] = []
    for t in all_targets:
        if (why := unreachable(t.dir)) is not None:
            raise UsageError(f"core.hooksPath {_shown(setting or str(t.dir))} cannot be reached ({why}): git would run no hook from it",
                             "point core.hooksPath at a directory git can reach (git config core.hooksPath DIR), then run git ckpt hooks install again")
        if (rel := _in_worktree(repo, t)) is not None:
            check_exclude_line(rel.as_posix(), setting)  # before anything is written
        _check_dir(t, setting)
        if t.dir not in dirs:
            dirs.append(t.dir)
    from . import exclude

    exclude.read(repo)  # its block is written last: one that cannot be is refused before any hook is
    state = _read_state(repo)
    here = all_targets[0].dir if all_targets else hooks_dir(repo)
    legacy_here: list[str] = []
    created_here = False
    for d in dirs:
        created = False
        if not d.is_dir():
            d.mkdir(parents=True)
            created = True
        created = created or state.get(str(d), False)
        for name in HOOKS:
            hook, legacy = d / name, d / f"{name}.legacy"
            if (hook.exists() or hook.is_symlink()) and not is_ours(hook):
                os.replace(hook, legacy)
                if d == here:
                    legacy_here.append(name)
            _write_hook(hook, render(name, python))
        state[str(d)] = created
        if d == here:
            created_here = created
    excluded = set_excluded(repo, all_targets)
    repo.git("config", "ckpt.gate", "true")
    since_set = since or repo.config_get("ckpt.gate.since")
    if since_set is None:
        head = repo.commit_of("HEAD")
        if head:
            since_set = head
    if since_set and since_set != repo.config_get("ckpt.gate.since"):
        repo.git("config", "ckpt.gate.since", since_set)
    _write_state(repo, state)
    return {
        "dir": str(here), "dirs": [str(d) for d in dirs], "hooks_path": setting, "installed": list(HOOKS),
        "legacy": legacy_here, "created_dir": created_here, "python": python or sys.executable,
        "since": since_set, "excluded": excluded,
    }


def uninstall(repo: Repo) -> dict[str, Any]:
    """Remove our hooks from every directory install wrote or git now runs hooks from, put each
    ``.legacy`` hook back (a rename: same bytes, same mode), remove a hooks directory install
    created once it is empty, and unset ``ckpt.gate`` (and ``ckpt.gate.since``).

    Foreign hooks are never touched.  Returns ``{"dir" (this worktree's), "dirs", "removed":
    [names], "restored": [names], "removed_dir": bool, "changed": bool, "removed_from": [every
    directory a hook was removed from]}`` (names of this
    worktree's directory; ``changed`` False: there was nothing to remove, no hook anywhere and
    the gate already off).
    """
    from . import exclude

    exclude.read(repo)  # (as install: refused before anything is removed)
    state = _read_state(repo)
    here = hooks_dir(repo)
    dirs = [here] + [t.dir for t in targets(repo)] + [Path(d) for d in state]
    seen: list[Path] = []
    removed, restored = [], []
    removed_from: list[str] = []  # every directory a hook of ours was removed from, this worktree's first
    removed_dir = changed = False
    for d in dirs:
        if d in seen:
            continue
        seen.append(d)
        for name in HOOKS:
            hook, legacy = d / name, d / f"{name}.legacy"
            if not is_ours(hook):
                continue
            hook.unlink()
            changed = True
            if str(d) not in removed_from:
                removed_from.append(str(d))
            if d == here:
                removed.append(name)
            if legacy.exists() or legacy.is_symlink():
                os.replace(legacy, hook)
                if d == here:
                    restored.append(name)
        if state.get(str(d)) and d.is_dir() and not any(d.iterdir()):
            d.rmdir()
            removed_dir = removed_dir or d == here
    set_excluded(repo, [])
    for key in ("ckpt.gate", "ckpt.gate.since"):
        changed = repo.git("config", "--unset-all", key, check=False).returncode == 0 or changed
    changed = changed or bool(state)
    _write_state(repo, {})
    return {"dir": str(here), "dirs": [str(d) for d in seen], "removed": removed, "restored": restored,
            "removed_dir": removed_dir, "changed": changed, "removed_from": removed_from}


@dataclass
class HookState:
    """One hook's state: ``ours``, ``foreign`` (someone else's), or ``absent``; ``legacy`` when a
    kept foreign hook is chained; ``python`` the interpreter ours records (and whether it
    ``python_ok``); ``current``: ours is byte for byte what this version's ``hooks install``
    writes (False: an older git-ckpt wrote it, and ``hooks install`` updates it)."""

    name: str
    state: str
    legacy: bool
    python: str | None = None
    python_ok: bool = False
    current: bool = False
    executable: bool = True  # git runs it (ours and not executable: git skips it)


def _hook_states(d: Path) -> list[HookState]:
    out = []
    for name in HOOKS:
        hook = d / name
        legacy = (d / f"{name}.legacy").exists()
        if is_ours(hook):
            py = None
            data = hook.read_bytes()
            for line in data.splitlines():
                if line.startswith(b"INSTALL_PYTHON="):
                    try:
                        py = shlex.split(line[len(b"INSTALL_PYTHON="):].decode())[0]
                    except (ValueError, IndexError):
                        py = None
            # a hook that records no interpreter (plain sh, e.g. applypatch-msg) needs none
            out.append(HookState(name, "ours", legacy, py, py is None or os.access(py, os.X_OK), data == render(name, py), runnable(hook)))
        elif hook.exists() or hook.is_symlink():
            out.append(HookState(name, "foreign", legacy))
        else:
            out.append(HookState(name, "absent", legacy))
    return out


def runnable(path: Path) -> bool:
    """Whether git would run the hook file ``path``: it is executable (git skips one that is not,
    with only a hint, ``advice.ignoredHook``)."""
    return os.access(path, os.X_OK) and not path.is_dir()


def active_in(d: Path) -> bool:
    """Whether every hook of ours is in ``d`` and executable (the gate works for commits git
    makes there)."""
    return all(is_ours(d / name) and runnable(d / name) for name in HOOKS)


def gate_active(repo: Repo) -> tuple[bool, Path]:
    """Whether the gate acts on commits made in ``repo``'s worktree: ``ckpt.gate`` is true and
    the directory git runs hooks from *here* (:func:`hooks_dir`) holds our hooks.  Returns that
    and the directory."""
    from .gate import enabled

    d = hooks_dir(repo)
    return enabled(repo) and active_in(d), d


def status(repo: Repo) -> dict[str, Any]:
    """``{"dir" (this worktree's hooks directory), "hooks_path", "gate" (ckpt.gate), "active"
    (the gate acts here), "hooks": [HookState as dict], "worktrees": [{"worktree", "dir",
    "active"}]}`` (every worktree: with a relative core.hooksPath each has its own directory)."""
    from .gate import enabled

    all_targets = targets(repo)
    d = all_targets[0].dir if all_targets else hooks_dir(repo)
    gate = enabled(repo)
    return {
        "dir": str(d), "hooks_path": hooks_path_setting(repo), "gate": gate, "active": gate and active_in(d),
        "hooks": [h.__dict__ for h in _hook_states(d)],
        "worktrees": [{"worktree": str(t.worktree), "dir": str(t.dir), "active": gate and active_in(t.dir)}
                      for t in all_targets],
    }
