"""``git ckpt status`` as data."""

from __future__ import annotations

from . import config, store
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
    """Task, latest, promoted, ``matches_latest``, ``restore_interrupted``, gate on/off and state."""
    task = store.current_task(repo)
    last = store.latest(repo, task)
    promoted_commit = repo.read_ref(store.promoted_ref(task))
    promoted = None
    if promoted_commit:
        try:
            promoted = store.load(repo, promoted_commit).manifest.id
        except CkptError:
            promoted = promoted_commit
    matches = False
    if last is not None:
        try:
            matches = capture(repo, config.load(repo)).state() == last.manifest.state
        except CkptError:
            matches = False
    gate = gate_enabled(repo)
    gate_state = ""
    if gate:
        gate_state = "a promoted checkpoint exists" if promoted else "no promoted checkpoint: commits will be refused"
    return {
        "task": task,
        "latest": last.id if last else None,
        "promoted": promoted,
        "matches_latest": matches,
        "restore_interrupted": (repo.git_dir / "ckpt" / "RESTORE").exists(),
        "gate": gate,
        "gate_state": gate_state,
    }
