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

from . import gatecache, ledger, retention, store
from .errors import BusyError, CorruptError, UsageError
from .gitcore import Repo, fault
from .model import task_name_problem
from .store import Checkpoint


@dataclass
class DropResult:
    """``id`` and ``commit`` of the dropped checkpoint; ``forced`` when a protection was
    overridden; ``unpromoted`` when it was its task's promoted checkpoint, whose
    ``refs/ckpt/T/promoted`` went with it (the task has none until the next promotion)."""

    id: str
    commit: str
    forced: bool = False
    protected: str | None = None
    unpromoted: str | None = None  # the task whose promoted ref went

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "commit": self.commit, "forced": self.forced, "protected": self.protected,
                "unpromoted": self.unpromoted is not None}


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


@dataclass
class Planned:
    """One argument of ``git ckpt drop``, resolved and judged before anything is dropped: the
    checkpoint ``cp`` (None for a damaged ref, then ``damaged`` is ``spec``), why it is
    protected (``why``), and ``ref``, the ref that goes: ``refs/ckpt/T/N``, or
    ``refs/ckpt/T/promoted`` alone when that names a checkpoint whose own ref is already gone."""

    spec: str
    cp: Checkpoint | None
    ref: str
    commit: str
    why: str | None
    damaged: bool = False


def plan(repo: Repo, specs: list[str], task: str) -> list[Planned]:
    """Resolve every one of ``specs`` (``T/N``, ``N``, ``@``, ``promoted``, …) and say what each
    would drop and what protects it, writing nothing: ``drop`` is all or nothing, so every
    argument is judged before the first ref goes.  A spec naming a checkpoint another spec
    names already is left out.  Raises what :func:`git_ckpt.store.resolve` raises, and
    :class:`UsageError` for a checkpoint that is not this repository's own."""
    out: list[Planned] = []
    protected: dict[str, str] | None = None
    for spec in specs:
        try:
            cp = store.resolve(repo, spec, task, command="drop")
        except CorruptError:  # a damaged one (check / log --verify name it): by its ref
            found = store.damaged_ref(repo, spec, task)
            if found is None:
                raise
            _t, cid, ref, oid = found
            if all(p.ref != ref for p in out):
                out.append(Planned(spec, None, ref, oid, "damaged", damaged=True))
            continue
        ref = _own_ref(repo, cp)
        if protected is None:
            # gc keeps the latest so a task always has one; drop may take it (numbers are never reused)
            protected = retention.protections(repo, latest=False)
        why = "promoted" if ref == store.promoted_ref(cp.manifest.task) else protected.get(cp.id)
        if all(p.ref != ref for p in out):
            out.append(Planned(spec, cp, ref, cp.commit, why))
    return out


def _own_ref(repo: Repo, cp: Checkpoint) -> str:
    """The ref ``drop`` deletes for ``cp``: its ``refs/ckpt/T/N`` (also when it was named as
    ``promoted``); ``refs/ckpt/T/promoted`` when that is what names it and its own ref is gone
    (a promotion left pointing at a dropped checkpoint: dropping it ends the promotion).
    :class:`UsageError` for a fetched checkpoint or a commit no local ref names."""
    m = cp.manifest
    if store.is_local(repo, cp):
        return store.ckpt_ref(m.task, m.number)
    if cp.ref is not None and task_name_problem(m.task) is None and cp.ref == store.promoted_ref(m.task):
        return cp.ref
    raise UsageError(f"{cp.id} is not a checkpoint of this repository (refs/ckpt/T/N)", "git ckpt list shows the checkpoints you can drop")


def refused(items: list[Planned], force: bool) -> list[Planned]:
    """The planned drops a protection refuses (none with ``force``; a damaged one never is)."""
    return [] if force else [p for p in items if p.why and not p.damaged]


def apply(repo: Repo, p: Planned, *, force: bool) -> DropResult:
    """Drop one planned checkpoint: the ``drop`` event first (the ledger records the commit
    before the ref goes), then its ref with compare-and-swap (a ref that changed meanwhile is
    left alone: :class:`BusyError`).  When it is its task's promoted checkpoint, the promoted
    ref goes too (while it still names that commit), so nothing names a dropped checkpoint as
    promoted: the gate then refuses commits until another is promoted."""
    if p.damaged:
        d = drop_damaged(repo, p.spec, store.current_task(repo))
        assert d is not None
        return d
    assert p.cp is not None
    cp, m = p.cp, p.cp.manifest
    promoted_ref = store.promoted_ref(m.task)
    unpromote = repo.read_ref(promoted_ref) == cp.commit
    forced = bool(p.why and force)
    ledger.append(repo, m.task, "drop", {"id": m.id, "commit": cp.commit, "forced": forced, "reason": p.why,
                                         **({"unpromoted": True} if unpromote else {})})
    fault("drop.after-event")
    # deleted only while it still names the commit judged (a changed ref is never rebuilt on)
    for ref in dict.fromkeys([p.ref, promoted_ref] if unpromote else [p.ref]):
        if not repo.swap(ref, lambda old: (None, True) if old == cp.commit else (old, False), reason=f"ckpt: drop {m.id}"):
            raise BusyError(f"{m.id} changed while it was being dropped; left alone", "run git ckpt drop again")
    if unpromote:
        gatecache.forget(repo)
    return DropResult(m.id, cp.commit, forced, p.why, m.task if unpromote else None)
