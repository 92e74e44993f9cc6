"""``git ckpt status`` as data."""

from __future__ import annotations

import contextlib

from . import config, ledger, store
from .errors import CkptError
from .gitcore import Repo
from .snapshot import capture


def gate_enabled(repo: Repo) -> bool:
    """Whether ``ckpt.gate`` is true in this repository's config (set by ``hooks install``)."""
    try:
        return bool(repo.pg.config.get_bool("ckpt.gate"))
    except (KeyError, Exception):  # noqa: BLE001 - unset or unreadable means off
        return False


def status(repo: Repo) -> dict:
    """Task, latest, promoted, ``matches_latest``, ``matches`` (the checkpoint the worktree
    equals: the latest or the last one restored here, else None), ``restore_interrupted``,
    gate on/off and state."""
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
    matches_latest, matches = False, None
    try:
        state = capture(repo, config.load(repo)).state()
    except CkptError:
        state = None
    if state is not None and last is not None and state == last.manifest.state:
        matches_latest, matches = True, last.id
    elif state is not None:
        here = str(repo.git_dir)
        with contextlib.suppress(CkptError):
            rec = ledger.find_last(repo, task, lambda ev: ev.type in ("restore", "undo") and ev.data.get("worktree") == here, limit=50)
            if rec is not None:
                cp = store.load(repo, rec.event.data["target_commit"], id=rec.event.data["target"])
                if cp.manifest.state == state:
                    matches = cp.id
    gate = gate_enabled(repo)
    gate_state = ""
    if gate:
        gate_state = "a promoted checkpoint exists" if promoted else "no promoted checkpoint: commits will be refused"
    return {
        "task": task,
        "latest": last.id if last else None,
        "promoted": promoted,
        "matches_latest": matches_latest,
        "matches": matches,
        "restore_interrupted": (repo.git_dir / "ckpt" / "RESTORE").exists(),
        "gate": gate,
        "gate_state": gate_state,
    }
