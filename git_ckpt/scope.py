"""``git ckpt diff --scope``: sort the changes since a checkpoint into those the task card asked
for (files its next step names, files the task already touched) and the rest, so unrequested
extras stand out before they are committed."""

from __future__ import annotations

import re
from typing import Any, Callable

from . import handoff, ledger
from .config import Config
from .gitcore import Repo
from .model import path_to_str
from .store import Checkpoint

_WORD = re.compile(r"[A-Za-z0-9_./\-]+")


def named_by(text: str | None, path: str) -> bool:
    """Whether ``text`` (a next step) names ``path`` (``/``-separated, relative to the worktree
    root): the path itself, its file name, or a directory above it appears in the text as a
    word of its own (``src/auth.py``, ``./auth.py``, ``auth.py``, ``src/``, ``src/api/``).  A
    directory is named only by a word ending in ``/``: ``tests/test_login.py`` names that file,
    not every file under ``tests/``, and ``run the tests`` names no directory.  No text (None or
    empty) names nothing.  Raises nothing.

    It reads the whole text on every call: to ask about many paths, build the test once with
    :func:`naming` (what :func:`scope` does)."""
    return naming(text)(path)


def naming(text: str | None) -> Callable[[str], bool]:
    """The test :func:`named_by` makes, with ``text`` (a next step, up to 64 KiB) read once:
    a function taking a ``/``-separated worktree path and returning whether ``text`` names it,
    in the time of a few set look-ups (one per directory above the path), however long the text.
    ``naming(text)(path) == named_by(text, path)`` for every text and path.  Raises nothing."""
    found = _WORD.findall(text) if text else []
    words = frozenset(_bare(w) for w in found) - {""}
    dirs = frozenset(_bare(w) for w in found if w.endswith("/")) - {""}

    def names(path: str) -> bool:
        if not words:
            return False
        if path in words or path.rsplit("/", 1)[-1] in words:
            return True
        if not dirs:
            return False
        parts = path.split("/")
        return any("/".join(parts[:i]) in dirs for i in range(1, len(parts)))

    return names


def _bare(word: str) -> str:
    """A word of a next step as a path: without a leading ``./`` or ``/``, or trailing ``/`` and
    sentence punctuation (``src/auth.py.`` is ``src/auth.py``)."""
    word = word.rstrip("/.")
    while word.startswith(("./", "/")):
        word = word[2:] if word.startswith("./") else word[1:]
    return word


def scope(repo: Repo, cfg: Config, task: str, since: Checkpoint) -> dict[str, Any]:
    """Changes between ``since`` and the worktree, split into ``in_scope`` (named by the card's
    next step, or among the files the task touched from its first checkpoint's base to its
    current checkpoint) and ``outside``.  Each row: ``{"path", "status", "why"}``."""
    from .snapshot import capture

    card = ledger.card(repo, task)
    touched: set[str] = set()
    cur = handoff.current_checkpoint(repo, task)
    first = handoff.first_checkpoint(repo, task)
    if cur is not None:
        base_tree = handoff._tree_of_commit(repo, first.base if first else None)
        touched = {path_to_str(c.path) for c in repo.diff_trees(base_tree, cur.tree)}
    snap = capture(repo, cfg, read_only=True)
    inside: list[dict[str, Any]] = []
    outside: list[dict[str, Any]] = []
    in_next = naming(card.next)  # the next step read once, not once per changed path
    for c in repo.diff_trees(since.tree, snap.tree):
        path = path_to_str(c.path)
        status = c.status
        why = []
        if in_next(path):
            why.append("next step")
        if path in touched:
            why.append("touched by the task")
        (inside if why else outside).append({"path": path, "status": status, "why": why})
    return {"task": task, "since": since.id, "next": card.next, "in_scope": inside, "outside": outside}
