"""Promotion: mark the checkpoint whose required verifiers all passed as the trusted one.

``refs/ckpt/T/promoted`` is moved with compare-and-swap and a reflog (so ``git reflog
refs/ckpt/T/promoted`` shows the history), and every promotion is a ``promote`` ledger event,
appended before the ref moves (so the ref always names a commit some event promoted);
``force`` promotes without passing results and is recorded as forced.

Results count only as this repository's own evidence (:func:`git_ckpt.evidence.evidence`: a
line a local ``verify`` event names, never one merged in by ``fetch``), judged against a
trusted ``.ckpt.toml`` (:mod:`git_ckpt.trust`), and only checkpoints of this repository are
promoted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import gatecache, ledger, store, trust
from .config import Config
from .errors import CheckFailed, CkptError, UsageError
from .evidence import (  # re-exported for callers of this module
    Requirement as Requirement,
)
from .evidence import (
    missing_text as missing_text,
)
from .evidence import (
    requirement as requirement,
)
from .evidence import (
    was_forced as was_forced,
)
from .gitcore import Repo, fault
from .store import Checkpoint


@dataclass
class PromoteResult:
    """``id``/``commit`` promoted, the ``previous`` promoted commit (or None), whether the ref
    ``changed``, whether it was ``forced``, and the verifiers whose results backed it."""

    id: str
    commit: str
    task: str
    previous: str | None
    changed: bool
    forced: bool
    verifiers: list[str]
    #: why a forced promotion was forced (an untrusted .ckpt.toml, a required verifier without a
    #: pass), in that order; empty when it was not
    why_forced: list[str]
    #: the ref held this commit already, promoted by force, and its required verifiers have
    #: passed since: the promotion is recorded again, not forced
    earned: bool = False

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"id": self.id, "commit": self.commit, "task": self.task, "previous": self.previous,
                "changed": self.changed, "forced": self.forced, "verifiers": self.verifiers,
                "why_forced": self.why_forced, "earned": self.earned}


def make_local_hint(repo: Repo, cp: Checkpoint) -> str:
    """How to make a checkpoint of this repository out of ``cp``, one that is not (a fetched
    one): save it into the current task and verify that, after restoring ``cp`` first unless
    the worktree already is ``cp`` (``@``, :func:`git_ckpt.store.restored_target`)."""
    task = store.current_task(repo)
    here = store.restored_target(repo, task)
    then = f"git ckpt save makes it a checkpoint of task {task}, which git ckpt verify can promote"
    if here is not None and here[2] == cp.commit:
        return f"the worktree holds {cp.id} already (it is @): {then}"
    return f"git ckpt restore {cp.id}, then {then}"


def promote(repo: Repo, cfg: Config, cp: Checkpoint, *, force: bool = False, reason: str = "promote") -> PromoteResult:
    """Make ``cp`` the promoted checkpoint of its task (``refs/ckpt/T/promoted``, CAS, reflog).

    Without ``force`` the ``.ckpt.toml`` must be trusted (else :class:`UntrustedError`, exit 9:
    its requirement may have been loosened or deleted) and every required verifier must have a
    passing result of this repository's own on this content, else :class:`CheckFailed` (exit 1)
    names the first missing one.  With ``force`` and an untrusted config the promotion is
    recorded as forced.  A fetched checkpoint is refused (:class:`UsageError`).  A checkpoint
    that is already promoted is left alone (``changed`` False, no event) unless ``force``
    overrides something (a missing result, an untrusted config): then a forced record is added.
    """
    if not store.is_local(repo, cp):
        raise UsageError(f"{cp.id} is not a checkpoint of this repository; only local checkpoints are promoted",
                         make_local_hint(repo, cp))
    st = trust.state(repo, cfg)
    trusted = st.ok
    if not trusted and not force:
        trust.check(repo, cfg, doing=f"{cp.id} was not promoted (its required verifiers cannot be judged)")
    req = requirement(repo, cfg, cp)
    if not req.satisfied and not force:
        name, text = missing_text(req)
        raise CheckFailed(
            f"{cp.id} cannot be promoted: required verifier {name} has {text} on this content",
            f"git ckpt verify {cp.id} (with --isolated when the worktree no longer holds it), "
            f"or git ckpt promote {cp.id} --force, recorded as forced",
        )
    task = cp.manifest.task
    ref = store.promoted_ref(task)
    forced = force and (not req.satisfied or not trusted)
    why_forced: list[str] = []
    if forced and not trusted:
        why_forced.append(f"{trust.untrusted_reason(st)}, so its required verifiers cannot be judged")
    if forced and not req.satisfied:
        name, text = missing_text(req)
        why_forced.append(f"required verifier {name} has {text} on this content")
    why = f"ckpt: promote {cp.id}" + (" (forced)" if forced else "")
    logged: list[str | None] = []

    def log_event(old: str | None, _new: str | None = None) -> None:
        # The event first, then the ref: the promoted ref never names a commit that no promote
        # event on the ledger names (git ckpt log --verify checks it), even after a crash.  Once:
        # after a race lost to another writer of the ref, only the ref write is retried.
        ledger.append(repo, task, "promote", {
            "id": cp.id, "commit": cp.commit, "forced": forced, "previous": old, "reason": reason,
            "verifiers": sorted(req.passed), "missing": req.missing, "empty_requirement": not req.required,
            **({} if trusted else {"untrusted_config": True}),
        })
        logged.append(old)

    previous = repo.swap(ref, lambda old: (cp.commit, old), reason=why, reflog=True, step="promote.before-ref",
                         before_write=log_event)
    changed = previous != cp.commit
    if changed:
        fault("promote.after-ref")
    earned = False
    if not changed and not logged:
        if forced:
            log_event(previous)  # promoting the promoted checkpoint again, forced past a requirement, records that
        elif _forced_last(repo, task, cp.commit):
            log_event(previous)  # forced before, backed by its verifiers now: the ledger says so
            earned = True
    gatecache.remember(repo, task=task)  # the commit gate's fast path (hooks/pre-commit)
    return PromoteResult(cp.id, cp.commit, task, previous, changed, forced, sorted(req.passed), why_forced, earned)


def promoted_line(cid: str, *, already: bool, earned: bool) -> str:
    """What verify, attempt and promote say of a promotion of ``cid`` that was not forced: it
    was ``already`` promoted, or promoted now, and ``earned`` when it was promoted by force
    before (:attr:`PromoteResult.earned`)."""
    if already:
        return f"{cid} is already promoted"
    return f"promoted {cid}" + (" (its verifiers passed; it was promoted by force before)" if earned else "")


def _forced_last(repo: Repo, task: str, commit: str) -> bool:
    """Whether the newest ``promote`` event of ``task`` promoted ``commit`` by force (an
    unreadable ledger: False, the promotion stands as it is)."""
    try:
        rec = ledger.find_last(repo, task, lambda ev: ev.type == "promote")
    except CkptError:
        return False
    return rec is not None and rec.event.data.get("commit") == commit and rec.event.data.get("forced") is True
