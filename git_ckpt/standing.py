"""Where a captured worktree stands against a checkpoint: which of files, index, overlay and
HEAD differ, and whether HEAD commits the checkpoint.  The rules ``status``, ``diff``,
``handoff`` and a save's default message share; below :mod:`git_ckpt.status` (which adds what
to do about it) so that :mod:`git_ckpt.snapshot` can use them."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from .errors import CkptError
from .gitcore import Repo

if TYPE_CHECKING:
    from .snapshot import Snapshot
    from .store import Checkpoint


def nothing_staged(repo: Repo, index_tree: str, base: str | None) -> bool:
    """Whether an index (``index_tree``) stages nothing against its HEAD (``base``)."""
    return index_tree == (repo.tree_of(base) if base else repo.empty_tree)


def differs(repo: Repo, snap: Snapshot, cp: Checkpoint) -> list[str]:
    """Which of ``files`` (the worktree's tracked and untracked files), ``index`` (it stages
    something else than ``cp`` staged, by the rule of :func:`files_match`), ``overlay`` and
    ``HEAD`` (moved since: not ``cp``'s base) differ between the captured worktree ``snap``
    and ``cp``, in that order; [] when they all match."""
    out = [] if snap.tree == cp.tree else ["files"]
    out += [] if _index_match(repo, snap, cp) else ["index"]
    out += [] if _overlay_match(repo, snap, cp) else ["overlay"]
    return out + (["HEAD"] if snap.base != cp.manifest.base else [])


def files_match(repo: Repo, snap: Snapshot, cp: Checkpoint) -> bool:
    """Whether the captured worktree ``snap`` holds ``cp``'s files and overlay and its index
    stages what ``cp`` staged: the same index; or nothing staged now, and nothing staged then
    or HEAD (moved) commits ``cp``'s files (restore's committed_on_head: the index is HEAD's
    tree).  What ``status``, ``diff`` and ``git status`` agree on; HEAD may differ."""
    return snap.tree == cp.tree and _overlay_match(repo, snap, cp) and _index_match(repo, snap, cp)


def _overlay_match(repo: Repo, snap: Snapshot, cp: Checkpoint) -> bool:
    """Whether ``snap``'s overlay is ``cp``'s, as a restore to ``cp`` would judge it."""
    m = cp.manifest
    if (snap.overlay_info.digest or "") == (m.overlay.digest or ""):
        return True
    from .overlay import as_restore_sees, overlay_digest

    return bool(overlay_digest(as_restore_sees(repo.workdir, m.overlay, snap.overlay_info.files)) == overlay_digest(m.overlay.files))


def _index_match(repo: Repo, snap: Snapshot, cp: Checkpoint) -> bool:
    """Whether ``snap``'s index stages what ``cp``'s staged (see :func:`files_match`)."""
    return stages_same(repo, cp.index_tree, cp.manifest.base, cp.tree, snap.index_tree, snap.base)


def stages_same(repo: Repo, old_index: str, old_base: str | None, old_tree: str,
                new_index: str, new_base: str | None) -> bool:
    """Whether an index ``new_index`` on HEAD ``new_base`` stages what a checkpoint's index
    ``old_index`` on ``old_base`` (its files ``old_tree``) staged (tree ids; a base None is an
    unborn branch): the same index; or nothing staged now, and nothing staged then or HEAD
    (moved) commits the checkpoint's files (restore's committed_on_head).  The one rule of
    ``status``, ``diff`` and ``handoff``."""
    return new_index == old_index or (nothing_staged(repo, new_index, new_base)
                                      and (nothing_staged(repo, old_index, old_base)
                                           or (new_base != old_base and new_index == old_tree)))


def head_commits(repo: Repo, head: str | None, cp: Checkpoint) -> bool:
    """Whether the commit ``head`` (hex id; None on an unborn branch: False) is a commit of
    exactly ``cp``'s files (its tree, untracked files included: a commit that leaves one out is
    no commit of the checkpoint) whose first parent is ``cp``'s base (none: a root commit): the
    checkpoint committed on its base, as the gate lets through.  The worktree and index may have
    changed since; False for ``cp``'s base itself and for an unreadable commit."""
    if head is None or head == cp.manifest.base:
        return False
    base = cp.manifest.base
    with contextlib.suppress(CkptError):
        commit = repo.read_commit(head)
        return commit.tree == cp.tree and commit.parents[:1] == ((base,) if base else ())
    return False
