"""``git ckpt status`` as data."""

from __future__ import annotations

from typing import Any

from . import config, store
from .restore import checkpoint_with_state
from .errors import CkptError
from .config import Config
from .gitcore import Repo
from .snapshot import capture
from .store import Checkpoint


def gate_enabled(repo: Repo) -> bool:
    """Whether ``ckpt.gate`` is true in this repository's config (set by ``hooks install``)."""
    return repo.config_bool("ckpt.gate")


def worktree_checkpoint(repo: Repo, cfg: Config | None, task: str, last: Checkpoint | None = None) -> Checkpoint | None:
    """The checkpoint the worktree equals right now: the latest of ``task`` (``last`` when the
    caller has read it), or the one last restored in this worktree; None when neither matches,
    or the worktree cannot be captured (``cfg`` None: the configuration is unreadable)."""
    if cfg is None:
        return None
    try:
        return checkpoint_with_state(repo, task, capture(repo, cfg).state(), last=last)
    except CkptError:
        return None


def status(repo: Repo) -> dict[str, Any]:
    """Task, latest, promoted, ``matches_latest``, ``matches`` (the checkpoint the worktree
    equals: the latest or the last one restored here, else None), ``restore_interrupted``,
    gate on/off (``gate``: ``ckpt.gate``), ``gate_active`` (on, and git runs our hooks in this
    worktree: :func:`git_ckpt.hooks.gate_active`) and ``gate_state``."""
    task = store.current_task(repo)
    try:
        last = store.latest(repo, task)
    except CkptError:
        last = None
    promoted_commit = repo.read_ref(store.promoted_ref(task))
    promoted = None
    if promoted_commit:
        try:
            promoted = store.load(repo, promoted_commit).manifest.id
        except CkptError:
            promoted = promoted_commit
    try:
        cfg = config.load(repo)
    except CkptError:
        cfg = None
    matched = worktree_checkpoint(repo, cfg, task, last)
    matches = matched.id if matched is not None else None
    matches_latest = matched is not None and last is not None and matched.commit == last.commit
    gate = gate_enabled(repo)
    gate_state = ""
    active = False
    if gate:
        from .hooks import gate_active

        active, hooks_dir = gate_active(repo)
        if not active:
            gate_state = (f"NOT active in this worktree: git runs its hooks from {hooks_dir}, where the git ckpt"
                          " hooks are not installed; run git ckpt hooks install")
        else:
            gate_state = "a promoted checkpoint exists" if promoted else "no promoted checkpoint: commits will be refused"
    return {
        "task": task,
        "latest": last.id if last else None,
        "promoted": promoted,
        "matches_latest": matches_latest,
        "matches": matches,
        "restore_interrupted": (repo.git_dir / "ckpt" / "RESTORE").exists(),
        "gate": gate,
        "gate_active": active,
        "gate_state": gate_state,
    }
