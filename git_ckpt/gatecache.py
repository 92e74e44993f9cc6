"""The commit gate's fast path: ``$GIT_DIR/ckpt/gate-ok``, a hint that lets the hooks answer the
common case in plain ``sh`` without starting Python.

The full gate (:func:`git_ckpt.gate.gate`) is a function of a small set of inputs: the tree of
the index being committed, the current task (``$GIT_DIR/ckpt/TASK``), ``.ckpt.toml``, the trust
store (:mod:`git_ckpt.trust`, found through ``$HOME`` / ``$XDG_DATA_HOME``), ``git config
ckpt.*``, and the refs it reads (``refs/ckpt/T/promoted``, the ledger ``refs/ckpt/T/log`` that
says which results are local and which promotions were forced, the promoted ``refs/ckpt/T/N``,
``refs/notes/ckpt``); checkpoint objects are immutable.  When git ckpt promotes a checkpoint, or
the Python gate allows a commit, :func:`remember` runs the full gate on the promoted tree and,
only when it allows it and the inputs were the same before and after, records them.  The hooks
(``hooks/pre-commit``, also installed as ``pre-merge-commit`` and ``pre-applypatch``, and
``hooks/prepare-commit-msg``) allow the commit (and set the ``Ckpt-Verified`` trailer) only when ``git diff-index --cached --quiet --ignore-submodules=none
TREE`` says the index being committed holds exactly the recorded tree and the inputs they
recompute are byte for byte the recorded ones; any difference, missing file or failing command
falls through to ``git ckpt gate``, which decides with its exact messages and ledger events.

So the file cannot allow a commit the full gate would refuse: a new result (notes), a promotion
(promoted ref), a ledger event (forced promotions, which results are local), a changed or
untrusted config (``.ckpt.toml`` bytes, trust store bytes, git config), another task, another
index: each changes what the hooks compute, and they fall back.  A promotion the gate refuses
(forced, untrusted) never writes it, and removes a previous one.  Whoever can write ``$GIT_DIR``
can rewrite the hooks themselves, so forging the file gains nothing.  Conservative by design:
packed refs (the hooks read loose ref files; ``packed-refs`` is hashed), intent-to-add entries,
``git -c ckpt.*`` settings or a ``$GIT_COMMON_DIR`` all fall back.  ``GIT_CKPT_GATE_FAST=0`` turns the
fast path off.

The pre-commit hook that allowed a commit leaves ``$GIT_DIR/ckpt/gate-pass`` (its parent pid,
the tree, the checkpoint id) for the prepare-commit-msg hook of the same commit, which uses it
once, and only while the index file is older than it.

File format (``$GIT_DIR/ckpt/gate-ok``, per worktree, written atomically), one field a line::

    ckpt-gate-ok 1                          magic and format version
    T                                       the task
    T/N                                     the promoted checkpoint (for the message and trailer)
    /home/u/.local/share/git-ckpt/trusted.json   the trust store this process used
    /abs/worktree                           the worktree root (``cd -P .`` in the hook)
    refs/ckpt/T/log refs/ckpt/T/promoted refs/ckpt/T/N refs/notes/ckpt   the refs to read
    <tree id>                               the tree allowed
    home $HOME                              -- from here on compared whole with what the hooks compute
    xdg $XDG_DATA_HOME
    files <f|- for TASK, .ckpt.toml, trust store, packed-refs: regular file or absent>
    <blob id of `git config -z --get-regexp ^ckpt\\.` output>
    <blob ids of TASK, .ckpt.toml, trust store, packed-refs>   (of /dev/null when absent)
    <first line of the loose ref file, or -> <refname>          one per ref above
"""

from __future__ import annotations

import os
from pathlib import Path

from . import config, store
from .errors import CkptError
from .gate import check_tree, enabled
from .gitcore import Repo
from .trust import TRUST_FILE, data_dir

CACHE_FILE = "gate-ok"
MAGIC = "ckpt-gate-ok 1"
ENV_SWITCH = "GIT_CKPT_GATE_FAST"
CONFIG_FILE = ".ckpt.toml"

#: What the hooks run (documentation; :func:`state` runs the same second command).
STATE_COMMANDS = (
    "git diff-index --cached --quiet --ignore-submodules=none TREE --",
    "git config -z --get-regexp '^ckpt\\.' | git hash-object --no-filters --stdin -- TASK .ckpt.toml TRUST PACKED_REFS",
)


def cache_path(repo: Repo) -> Path:
    """``$GIT_DIR/ckpt/gate-ok`` of this worktree."""
    return Path(repo.git_dir) / "ckpt" / CACHE_FILE


def forget(repo: Repo) -> None:
    """Remove the cache (never needed for correctness: a stale cache only falls back)."""
    try:
        os.unlink(cache_path(repo))
    except FileNotFoundError:
        pass


def _trust_path() -> str:
    return str(data_dir() / TRUST_FILE)


def refs_for(task: str, checkpoint_id: str) -> list[str]:
    """The refs whose values the gate's decision depends on, for promoted checkpoint ``T/N``."""
    number = checkpoint_id.rpartition("/")[2]
    return [store.log_ref(task), store.promoted_ref(task), f"{store.PREFIX}{task}/{number}", store.NOTES_REF]


def _first_line(path: str) -> str | None:
    """What ``read -r v < path`` sets: the first line without its newline ("" for an empty
    file); None when ``path`` is not a regular file (the hooks write ``-`` then)."""
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as fh:
        return fh.read().split(b"\n", 1)[0].decode("utf-8", "surrogateescape")


def state(repo: Repo, task: str, tree: str, checkpoint_id: str, promoted: str) -> str | None:
    """The header and state text the hooks would compute now for ``tree`` (see the module
    docstring), or None when it cannot be expressed: a newline in a value, a directory where a
    file belongs, a git command failing, ``$GIT_DIR/ckpt/TASK`` not naming ``task``, or the
    promoted ref not stored as a loose file holding ``promoted`` (packed refs, reftable)."""
    home = os.environ.get("HOME", "")
    xdg = os.environ.get("XDG_DATA_HOME", "")
    trust = _trust_path()
    workdir = os.path.realpath(repo.workdir)
    common = str(repo.common_dir)
    refs = refs_for(task, checkpoint_id)
    header = [MAGIC, task, checkpoint_id, trust, workdir, " ".join(refs), tree]
    if any("\n" in v or "\r" in v for v in (home, xdg, *header)) or os.environ.get("GIT_COMMON_DIR"):
        return None
    if _first_line(os.path.join(common, store.promoted_ref(task))) != promoted:
        return None
    flags = ""
    files: list[str] = []
    for f in (str(Path(repo.git_dir) / "ckpt" / "TASK"), str(Path(repo.workdir) / CONFIG_FILE), trust,
              os.path.join(common, "packed-refs")):
        if os.path.isfile(f):
            flags += "f"
            files.append(f)
        elif os.path.exists(f):
            return None
        else:
            flags += "-"
            files.append(os.devnull)
    cfg = repo.git("config", "-z", "--get-regexp", r"^ckpt\.", check=False)
    if cfg.returncode != 0:
        return None
    hashes = repo.git("hash-object", "--no-filters", "--stdin", "--", *files, input=cfg.stdout, check=False)
    if hashes.returncode != 0:
        return None
    values = []
    for r in refs:
        v = _first_line(os.path.join(common, r))
        values.append(f"{'-' if v is None else v} {r}")
    if store.current_task(repo) != task:
        return None
    body = [f"home {home}", f"xdg {xdg}", f"files {flags}", hashes.stdout.decode().rstrip("\n"), *values]
    return "\n".join(header + body) + "\n"


def remember(repo: Repo, *, task: str | None = None, tree: str | None = None) -> bool:
    """Judge ``tree`` (default: the promoted checkpoint's own tree) with the full gate of the
    current task (nothing happens when ``task`` is given and is not the current one) (:func:`git_ckpt.gate.check_tree`, config loaded afresh) and, when it allows it
    and the state it depends on (:func:`state`) was the same before and after, write the cache.

    Returns whether it wrote.  Never raises for a gate that refuses, an unreadable config or an
    unwritable ``$GIT_DIR/ckpt``: the cache is only a hint, so callers (promote, the Python gate)
    are never failed by it."""
    try:
        if not enabled(repo):
            return False
        current = store.current_task(repo)
        if task is not None and task != current:
            return False
        task = current
        oid = repo.read_ref(store.promoted_ref(task))
        if oid is None:
            return False
        cp = store.load(repo, oid, ref=store.promoted_ref(task))
        tree = tree or cp.tree
        before = state(repo, task, tree, cp.id, oid)
        if before is None:
            return False
        res = check_tree(repo, config.load(repo), tree, task)
        if not (res.enabled and res.allowed and res.promoted == cp.id):
            forget(repo)
            return False
        if state(repo, task, tree, cp.id, oid) != before:
            return False
        path = cache_path(repo)
        path.parent.mkdir(exist_ok=True)
        store.atomic_write(path, before.encode())
        return True
    except (CkptError, OSError, KeyError, ValueError):
        return False
