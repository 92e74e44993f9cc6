"""Delete one checkpoint (``git ckpt drop``): its ref goes, a ``drop`` event records it.

Mirrors ``git update-ref -d refs/ckpt/T/N`` with compare-and-swap, plus a ledger event written
*first* (like ``gc``'s prune event), so a ref is never gone without a record naming its commit.
The number is never given to another checkpoint (:func:`git_ckpt.snapshot.next_number`).  The
objects stay until ``git gc`` prunes what nothing reaches; ``git update-ref refs/ckpt/T/N COMMIT``
brings the checkpoint back until then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import ledger, retention, store
from .errors import BusyError, UsageError
from .gitcore import Repo, fault
from .store import Checkpoint


@dataclass
class DropResult:
    """``id`` and ``commit`` of the dropped checkpoint; ``forced`` when a protection was overridden."""

    id: str
    commit: str
    forced: bool = False
    protected: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "commit": self.commit, "forced": self.forced, "protected": self.protected}


def drop_damaged(repo: Repo, spec: str, task: str) -> DropResult | None:
    """Drop ``refs/ckpt/T/N`` named by ``spec`` (``T/N`` or ``N`` of ``task``) whose checkpoint
    cannot be read (a corrupt manifest, a commit git ckpt did not make): ``git ckpt check`` and
    ``log --verify`` name such refs, and this is the command their hints give.  Nothing relies on
    a checkpoint that cannot be restored, so no protection applies; the ``drop`` event records
    the commit (reason ``damaged``) before the ref goes.  None when ``spec`` names no such ref."""
    found = store.damaged_ref(repo, spec, task)
    if found is None:
        return None
    t, cid, ref, oid = found
    ledger.append(repo, t, "drop", {"id": cid, "commit": oid, "forced": False, "reason": "damaged"})
    if not repo.swap(ref, lambda old: (None, True) if old == oid else (old, False), reason=f"ckpt: drop {cid} (damaged)"):
        raise BusyError(f"{cid} changed while it was being dropped; left alone", "run git ckpt drop again")
    return DropResult(cid, oid, False, "damaged")


def drop(repo: Repo, cp: Checkpoint, *, force: bool = False) -> DropResult:
    """Delete the ref of the local checkpoint ``cp`` and record a ``drop`` event in its task's ledger.

    Raises :class:`UsageError` for a fetched checkpoint (``REMOTE:T/N``) or a commit no local
    ref names, and, unless ``force``, for one something relies on (promoted, a handoff
    point, either side of the last restore/undo of a worktree, an unfinished restore);
    :class:`BusyError` when the ref changed meanwhile.
    """
    if not store.is_local(repo, cp) or cp.ref != store.ckpt_ref(cp.manifest.task, cp.manifest.number):
        raise UsageError(f"{cp.id} is not a checkpoint of this repository (refs/ckpt/T/N)", "git ckpt list shows the checkpoints you can drop")
    m = cp.manifest
    # gc keeps the latest so a task always has one; drop may take it (numbers are never reused)
    why = retention.protections(repo, latest=False).get(cp.id)
    if why and not force:
        raise UsageError(f"{cp.id} is protected ({why}); not dropped",
                         f"git ckpt drop --force {cp.id} drops it anyway (the ledger records that)")
    ledger.append(repo, m.task, "drop", {"id": cp.id, "commit": cp.commit, "forced": bool(why and force), "reason": why})
    fault("drop.after-event")
    # deleted only while it still names the commit judged (a changed ref is never rebuilt on)
    if not repo.swap(cp.ref, lambda old: (None, True) if old == cp.commit else (old, False), reason=f"ckpt: drop {cp.id}"):
        raise BusyError(f"{cp.id} changed while it was being dropped; left alone", "run git ckpt drop again")
    return DropResult(cp.id, cp.commit, bool(why and force), why)
