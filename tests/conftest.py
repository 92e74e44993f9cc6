"""Hermetic test harness: real repositories in temp folders, the real ``git-ckpt`` entry point and
the real ``git`` binary; HOME, XDG directories and git config sealed off from the developer's.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
REAL_HOME = os.environ.get("HOME", "")
TEST_DATE = "1767225600 +0000"  # 2026-01-01T00:00:00Z

# The repository format every test repository is created in (``.ci/run`` sets it per run):
# ``files`` (git's files ref backend, SHA-1 ids; the default), ``reftable`` (the reftable ref
# backend), ``sha256`` (SHA-256 object ids) or ``reftable-sha256``.  It is applied through the
# sealed gitconfig (``init.defaultRefFormat`` / ``init.defaultObjectFormat``), so every ``git
# init`` and ``git clone`` of a test gets it, and through :func:`init_repo`'s explicit options,
# which fail loudly on a git too old to know them.  Needs git >= 2.45 unless ``files``.
REPO_FORMATS = {
    "files": {},
    "reftable": {"ref-format": "reftable"},
    "sha256": {"object-format": "sha256"},
    "reftable-sha256": {"ref-format": "reftable", "object-format": "sha256"},
}
REPO_FORMAT = os.environ.get("CKPT_TEST_REPO_FORMAT", "files") or "files"


def git_version() -> tuple[int, ...]:
    """The version of the ``git`` on PATH, e.g. ``(2, 55, 0)``."""
    out = subprocess.run(["git", "--version"], stdout=subprocess.PIPE, check=True).stdout.decode()
    return tuple(int(p) for p in out.split()[2].split(".")[:3] if p.isdigit())


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # once, in the controller, before any worker starts
        compile_package()
    if REPO_FORMAT not in REPO_FORMATS:
        raise pytest.UsageError(f"CKPT_TEST_REPO_FORMAT={REPO_FORMAT!r}: use one of {', '.join(REPO_FORMATS)}")
    if REPO_FORMAT != "files" and git_version() < (2, 45):
        raise pytest.UsageError(f"CKPT_TEST_REPO_FORMAT={REPO_FORMAT} needs git >= 2.45 on PATH "
                                f"(found {'.'.join(map(str, git_version()))}); put git 2.55 first on PATH")


def compile_package() -> None:
    """Write git_ckpt's bytecode (``__pycache__``) if it is missing or stale.  Every test runs
    the real ``git ckpt``, a new Python each time; an editable install is never byte-compiled,
    and under ``PYTHONDONTWRITEBYTECODE`` (set on this project's CI machines) no run writes it,
    so each of the suite's thousands of runs compiled every module again (110 of 350 ms a run)."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("git_ckpt")
    for location in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(location, quiet=2)


def init_options(fmt: str = REPO_FORMAT) -> list[str]:
    """``git init`` options creating a repository of format ``fmt`` (see :data:`REPO_FORMATS`):
    none in a default run (any git), both formats spelled out otherwise (the sealed gitconfig's
    defaults would apply to what is not)."""
    if fmt == "files" and REPO_FORMAT == "files":
        return []
    chosen = {"ref-format": "files", "object-format": "sha1", **REPO_FORMATS[fmt]}
    return [f"--{k}={v}" for k, v in chosen.items()]


@pytest.fixture
def repo_format() -> str:
    """The repository format of this run (``CKPT_TEST_REPO_FORMAT``)."""
    return REPO_FORMAT


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory, monkeypatch):
    """Seal every test off from the user's HOME, config, editor, pager and dates."""
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = Test User\n\temail = test@example.com\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n[tag]\n\tgpgsign = false\n"
        "[core]\n\tautocrlf = false\n[advice]\n\tdetachedHead = false\n[protocol \"file\"]\n\tallow = always\n"
        + "".join(f"[init]\n\tdefault{k.title().replace('-', '')} = {v}\n" for k, v in REPO_FORMATS[REPO_FORMAT].items())
    )
    for var in list(os.environ):
        if var.startswith("GIT_") or var.startswith("XDG_"):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local/share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local/state"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # an editor that fails: a command that unexpectedly opens one fails loudly instead of
    # silently accepting whatever message git prepared (a test that wants one sets it itself)
    monkeypatch.setenv("GIT_EDITOR", "false")
    # the tests' own commits get fixed dates (git's test suite does the same), so commit ids
    # are the same on every run; git ckpt's own commits (libgit2) keep the real time, and the
    # ages gc and list work with come from manifests and the ledger, not from commit dates
    monkeypatch.setenv("GIT_AUTHOR_DATE", TEST_DATE)
    monkeypatch.setenv("GIT_COMMITTER_DATE", TEST_DATE)
    monkeypatch.setenv("GIT_PAGER", "cat")
    monkeypatch.setenv("PAGER", "cat")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    # libgit2 fixed its config search path when pygit2 was imported (it ignores HOME changes and
    # GIT_CONFIG_GLOBAL): point it at the sealed home for tests that open repositories in-process.
    import pygit2
    from pygit2.enums import ConfigLevel

    levels = (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM)
    saved = {lvl: pygit2.settings.search_path[lvl] for lvl in levels}
    pygit2.settings.search_path[ConfigLevel.GLOBAL] = str(home)
    pygit2.settings.search_path[ConfigLevel.XDG] = str(home / ".config")
    pygit2.settings.search_path[ConfigLevel.SYSTEM] = str(home / "no-system-config")
    try:
        yield home
    finally:
        for lvl, value in saved.items():
            pygit2.settings.search_path[lvl] = value


def _user_state(home: str) -> dict[str, float]:
    """Modification times of everything git-ckpt could write in the real user's directories."""
    out = {}
    for rel in (".gitconfig", ".config/git", ".local/share/git-ckpt", ".local/state/git-ckpt", ".cache/git-ckpt"):
        base = os.path.join(home, rel)
        for dirpath, _dirs, files in os.walk(base):
            for name in files:
                full = os.path.join(dirpath, name)
                out[full] = os.lstat(full).st_mtime
        if os.path.isfile(base):
            out[base] = os.lstat(base).st_mtime
    return out


@pytest.fixture(autouse=True, scope="session")
def real_home_untouched():
    """Fail the run if any test wrote into the real user's git or git-ckpt directories."""
    if not REAL_HOME:
        yield
        return
    before = _user_state(REAL_HOME)
    yield
    assert _user_state(REAL_HOME) == before, "a test wrote into the real user's directories"


def run(args, cwd, *, input=None, env=None, check=True):
    """Run a process, capture bytes; assert exit 0 when ``check``."""
    full = dict(os.environ)
    if env:
        full.update(env)
    proc = subprocess.run(args, cwd=cwd, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full)
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} exited {proc.returncode}\nstdout: {proc.stdout!r}\nstderr: {proc.stderr!r}")
    return proc


def git(cwd, *args, input=None, check=True, env=None) -> bytes:
    """``git ARGS`` in ``cwd``; returns stdout bytes."""
    return run(["git", *args], cwd, input=input, check=check, env=env).stdout


class Result:
    """A finished ``git ckpt`` run: ``rc``, ``out`` and ``err`` as text."""

    def __init__(self, proc):
        self.rc = proc.returncode
        self.out = proc.stdout.decode("utf-8", "replace")
        self.err = proc.stderr.decode("utf-8", "replace")

    def json(self):
        import json

        return json.loads(self.out)

    def __repr__(self):
        return f"Result(rc={self.rc}, out={self.out!r}, err={self.err!r})"


def ckpt(cwd, *args, rc=0, input=None, env=None, fsck=True) -> Result:
    """Run the real ``git ckpt ARGS`` (through git's subcommand dispatch) and check the outcome.

    Asserts the exit code ``rc`` (None: any), that no traceback was printed, and that
    ``git fsck --strict`` is clean afterwards.
    """
    proc = run(["git", "ckpt", *args], cwd, input=input, env=env, check=False)
    res = Result(proc)
    assert "Traceback" not in res.err, res
    if rc is not None:
        assert res.rc == rc, res
    if fsck:
        fsck_clean(cwd)
    return res


def merge_stopped_on_conflict(repo: Path, path: str = "f", *, branch: str = "side", message: str | None = None) -> str:
    """Branch ``branch`` off HEAD, change tracked ``path`` there and on main, then ``git merge
    branch`` (with ``-m message`` if given) from main: it stops on the conflict (MERGE_HEAD,
    MERGE_MSG, stages 1-3 of ``path``).  Returns the commit merged (MERGE_HEAD's content)."""
    git(repo, "checkout", "-q", "-b", branch)
    (repo / path).write_text(f"{branch}\n")
    git(repo, "commit", "-q", "-am", branch)
    git(repo, "checkout", "-q", "main")
    (repo / path).write_text("main\n")
    git(repo, "commit", "-q", "-am", "main")
    git(repo, "merge", "-q", branch, *(["-m", message] if message else []), check=False)
    assert (repo / ".git" / "MERGE_HEAD").exists()
    return git(repo, "rev-parse", branch).decode().strip()


def saved_clean_then_merging(repo: Path, *, message: str | None = None) -> str:
    """Commit a tracked ``f``, save the clean tree (``default/1`` in a fresh repo), then
    :func:`merge_stopped_on_conflict` on ``f``.  Returns the commit merged."""
    (repo / "f").write_text("f\n")
    git(repo, "add", "f")
    git(repo, "commit", "-qm", "f")
    ckpt(repo, "save", "--allow-empty", "-m", "clean")
    return merge_stopped_on_conflict(repo, message=message)


def ignored_overlay(repo: Path, folder: str, files: dict[str, str]) -> None:
    """Ignore ``folder/`` (a committed .gitignore line), name it in ``ckpt.overlay.include``
    and write ``files`` (paths below ``folder``) there: ignored files a save keeps in its overlay."""
    with open(repo / ".gitignore", "a") as fh:
        fh.write(f"{folder}/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", f"ignore {folder}")
    git(repo, "config", "ckpt.overlay.include", f"{folder}/")
    for name, text in files.items():
        (repo / folder / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / folder / name).write_text(text)


def fsck_clean(cwd) -> None:
    """Assert ``git fsck --strict`` reports nothing (when ``cwd`` is in a repository)."""
    top = run(["git", "rev-parse", "--git-dir"], cwd, check=False)
    if top.returncode != 0:
        return
    bare = run(["git", "rev-parse", "--is-bare-repository"], cwd, check=False).stdout.strip() == b"true"
    if bare:
        return
    proc = run(["git", "fsck", "--strict", "--no-progress", "--no-dangling"], cwd, check=False)
    assert proc.returncode == 0 and not proc.stdout.strip(), (proc.stdout, proc.stderr)


def init_repo(path: Path, *, commit: bool = True, fmt: str = REPO_FORMAT) -> Path:
    """A new repository at ``path`` with one commit (README) unless ``commit`` is False, in
    repository format ``fmt`` (default: this run's ``CKPT_TEST_REPO_FORMAT``)."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main", *init_options(fmt))
    if commit:
        (path / "README").write_text("readme\n")
        git(path, "add", "README")
        git(path, "commit", "-q", "-m", "initial")
    return path


def with_remote(tmp_path: Path, who: str = "alice", bare: str = "shared.git") -> tuple[Path, Path]:
    """A bare repository ``tmp_path/bare`` and a repository ``tmp_path/who`` (:func:`init_repo`)
    whose remote ``origin`` it is, ``main`` pushed: the start of every two-people test.
    Returns ``(bare, repo)``."""
    remote = tmp_path / bare
    git(tmp_path, "init", "-q", "--bare", str(remote))
    repo = init_repo(tmp_path / who)
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    return remote, repo


def pushed_task(tmp_path: Path, task: str, files: dict[str, str], *, message: str = "s", who: str = "alice",
                clone: str = "bob", config: str | None = None) -> tuple[Path, Path, Path]:
    """:func:`with_remote` for ``who``, who (after committing ``config`` as ``.ckpt.toml``, if
    given) starts ``task``, writes ``files`` (name -> text), saves them with ``message`` and
    pushes; then ``tmp_path/clone`` clones the remote (nothing fetched yet): a teammate about to
    pick the work up.  Returns ``(bare, who's repository, the clone)``."""
    remote, repo = with_remote(tmp_path, who)
    if config is not None:
        commit_config(repo, config)
    ckpt(repo, "task", "start", task)
    for name, text in files.items():
        (repo / name).write_text(text)
    ckpt(repo, "save", "-m", message)
    ckpt(repo, "push")
    other = tmp_path / clone
    git(tmp_path, "clone", "-q", str(remote), str(other))
    return remote, repo, other


def commit_config(repo: Path, text: str, push: bool = True) -> None:
    """Write ``text`` to ``repo/.ckpt.toml``, commit it on ``main`` and (``push``) push ``main``
    to ``origin``: the shared configuration of a two-people test."""
    (repo / ".ckpt.toml").write_text(text)
    git(repo, "add", ".ckpt.toml")
    git(repo, "commit", "-qm", "config")
    if push:
        git(repo, "push", "-q", "origin", "main")


def reviewer_clones(tmp_path: Path, remote: Path, checkpoint: str, names=("rev1", "rev2")) -> list[Path]:
    """Clone ``remote`` once per name in ``names`` (``tmp_path/name``, in order); each clone
    fetches, trusts the configuration and runs ``verify CHECKPOINT --isolated``: reviewers
    who only record results on a teammate's checkpoint.  Returns the clones."""
    out = []
    for name in names:
        r = tmp_path / name
        git(tmp_path, "clone", "-q", str(remote), str(r))
        ckpt(r, "fetch")
        ckpt(r, "trust")
        ckpt(r, "verify", checkpoint, "--isolated")
        out.append(r)
    return out


@pytest.fixture
def repo(tmp_path) -> Path:
    """A fresh repository with one commit."""
    return init_repo(tmp_path / "repo")


@pytest.fixture
def core(repo):
    """The :class:`git_ckpt.gitcore.Repo` of ``repo``, for the in-process tier (``tests/unit``)."""
    from git_ckpt.gitcore import Repo

    return Repo.discover(repo)


def worktree_state(root: Path, skip=(".git",)) -> dict:
    """Every path under ``root`` (bytes) → (kind, mode bits, content or link target), ``.git`` excluded."""
    out = {}
    root_b = os.fsencode(root)
    for dirpath, dirnames, filenames in os.walk(root_b):
        rel_dir = os.path.relpath(dirpath, root_b)
        if rel_dir == b".":
            dirnames[:] = [d for d in dirnames if d not in [os.fsencode(s) for s in skip]]
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", 0, os.readlink(full))
            elif stat.S_ISDIR(st.st_mode):
                if os.path.islink(full):
                    continue
                out[rel] = ("dir", 0, b"")
            else:
                with open(full, "rb") as fh:
                    out[rel] = ("file", st.st_mode & 0o777, fh.read())
    return out


def index_state(root: Path) -> tuple[bytes, bytes, bytes]:
    """The index as git shows it: ``ls-files -s``, ``ls-files -t`` and ``diff --cached --binary``."""
    return (
        git(root, "ls-files", "-s", "-z"),
        git(root, "ls-files", "-t", "-z"),
        git(root, "diff", "--cached", "--binary"),
    )


def copy_tree(src: Path, dst: Path) -> None:
    """Copy a directory tree (symlinks as links)."""
    shutil.copytree(src, dst, symlinks=True)


def literal_tree(repo: Path, entries: list[tuple[bytes, bytes, str]]) -> str:
    """Write a tree object from ``(mode, name, oid)`` entries exactly as given (``hash-object
    --literally``, so names git itself refuses, like ``..``, are possible); returns its id."""
    data = b"".join(mode + b" " + name + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries)
    return git(repo, "hash-object", "-w", "-t", "tree", "--literally", "--stdin", input=data).decode().strip()


def blob(repo: Path, data: bytes) -> str:
    """Write a blob; return its id."""
    return git(repo, "hash-object", "-w", "--stdin", input=data).decode().strip()


def forge_checkpoint(repo: Path, *, source: str = "refs/ckpt/default/1", dest: str = "refs/ckpt/default/9",
                     blobs: dict[str, bytes] | None = None, subtrees: dict[str, str] | None = None) -> str:
    """Copy checkpoint ``source`` to ``dest`` with its meta tree changed: ``blobs`` replaces or adds
    top-level files (name → bytes), ``subtrees`` adds subtrees (name → tree id).  Returns the new
    checkpoint commit (the shape a hostile or broken tool could push)."""
    parents = git(repo, "rev-list", "--parents", "-n1", source).decode().split()
    lines = {}
    for e in git(repo, "ls-tree", parents[-1]).decode().splitlines():
        info, name = e.split("\t")
        lines[name] = info
    for name, data in (blobs or {}).items():
        lines[name] = f"100644 blob {blob(repo, data)}"
    for name, tree in (subtrees or {}).items():
        lines[name] = f"040000 tree {tree}"
    text = "".join(f"{info}\t{name}\n" for name, info in lines.items())
    meta_tree = git(repo, "mktree", "--missing", input=text.encode()).decode().strip()
    meta = git(repo, "commit-tree", meta_tree, "-m", "forged meta").decode().strip()
    wtree = git(repo, "rev-parse", f"{source}^{{tree}}").decode().strip()
    args = [a for p in parents[1:-1] for a in ("-p", p)]
    commit = git(repo, "commit-tree", wtree, *args, "-p", meta, "-m", "forged").decode().strip()
    git(repo, "update-ref", dest, commit)
    return commit


def forge_card(repo: Path, task: str, edit) -> str:
    """Rewrite the card of ``task``'s ledger tip as an attacker would (``edit`` changes the card
    dict in place), keeping its event; moves ``refs/ckpt/T/log`` to the forged commit, which it
    returns (the caller pushes it)."""
    import json

    ledger = f"refs/ckpt/{task}/log"
    tip = git(repo, "rev-parse", ledger).decode().strip()
    card = json.loads(git(repo, "cat-file", "blob", f"{tip}:card.json"))
    edit(card)
    cblob = git(repo, "hash-object", "-w", "--stdin", input=json.dumps(card).encode()).decode().strip()
    evblob = git(repo, "rev-parse", f"{tip}:event.json").decode().strip()
    tree = git(repo, "mktree", input=f"100644 blob {cblob}\tcard.json\n100644 blob {evblob}\tevent.json\n".encode()).decode().strip()
    new = git(repo, "commit-tree", tree, "-p", f"{tip}^", "-m", "card").decode().strip()
    git(repo, "update-ref", ledger, new)
    return new
