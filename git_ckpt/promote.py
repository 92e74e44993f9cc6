"""Promotion: mark the checkpoint whose required verifiers all passed as the trusted one.

``refs/ckpt/T/promoted`` is moved with compare-and-swap and a reflog (so ``git reflog
refs/ckpt/T/promoted`` shows the history), and every promotion is a ``promote`` ledger event,
appended before the ref moves (so the ref always names a commit some event promoted);
``force`` promotes without passing results and is recorded as forced.

Results count only as this repository's own evidence (:func:`git_ckpt.verify.evidence`: a
line a local ``verify`` event names, never one merged in by ``fetch``), judged against a
trusted ``.ckpt.toml`` (:mod:`git_ckpt.trust`), and only checkpoints of this repository are
promoted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import gatecache, ledger, notes, store
from .config import Config
from .errors import CheckFailed, CkptError, UsageError
from .gitcore import RefConflict, Repo, fault
from .store import Checkpoint


@dataclass
class Requirement:
    """Whether a checkpoint's content meets the required verifiers of a config.

    ``required`` names every required verifier; ``passed`` maps those with a passing result on
    this content and definition to that result line; ``missing`` maps the others to their latest
    status (``"no result"`` when none); ``foreign`` names the missing ones for which only a line
    this repository did not record (fetched from a teammate) says ``passed``."""

    required: list[str]
    passed: dict[str, dict] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    foreign: list[str] = field(default_factory=list)

    @property
    def satisfied(self) -> bool:
        """True when every required verifier passed (also when none is required)."""
        return not self.missing


def requirement(repo: Repo, cfg: Config, cp: Checkpoint) -> Requirement:
    """Evaluate the required verifiers of ``cfg`` against the results on ``cp``'s note: a result
    counts when this repository's own ``verify`` recorded it (:func:`git_ckpt.verify.evidence`),
    it is about ``cp``'s tree and overlay digest and the verifier's current definition, and the
    newest such line says ``passed``.  ``cfg`` is taken as given: callers check it is trusted
    (:func:`git_ckpt.trust.check`).  Raises :class:`CorruptError` for a corrupt note."""
    from .verify import definition_hash, evidence, latest_results, overlay_digest

    req = Requirement([v.name for v in cfg.verifier if v.required])
    if not req.required:
        return req
    lines = notes.read_lines(repo, cp.commit)
    latest = latest_results(evidence(repo, cp, lines), cp.tree, overlay_digest(cp))
    every = None
    for v in cfg.verifier:
        if not v.required:
            continue
        line = latest.get((v.name, definition_hash(v)))
        if line is not None and line.get("status") == "passed":
            req.passed[v.name] = line
        else:
            req.missing[v.name] = str(line.get("status")) if line else "no result"
            if every is None:
                every = latest_results(lines, cp.tree, overlay_digest(cp))
            other = every.get((v.name, definition_hash(v)))
            if other is not None and other.get("status") == "passed":
                req.foreign.append(v.name)
    return req


def missing_text(req: Requirement) -> tuple[str, str]:
    """The first missing verifier and a phrase for it: ``no passing result`` / ``status S``,
    plus ``(only a fetched result says passed; it is not evidence here)`` when that is why."""
    name, status = next(iter(req.missing.items()))
    text = "no passing result" if status == "no result" else "status " + status
    if name in req.foreign:
        text += " (only a result recorded elsewhere says passed: fetched results are not evidence here)"
    return name, text


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

    def to_json(self) -> dict:
        """JSON-ready data."""
        return {"id": self.id, "commit": self.commit, "task": self.task, "previous": self.previous,
                "changed": self.changed, "forced": self.forced, "verifiers": self.verifiers}


def promote(repo: Repo, cfg: Config, cp: Checkpoint, *, force: bool = False, reason: str = "promote") -> PromoteResult:
    """Make ``cp`` the promoted checkpoint of its task (``refs/ckpt/T/promoted``, CAS, reflog).

    Without ``force`` the ``.ckpt.toml`` must be trusted (else :class:`UntrustedError`, exit 9:
    its requirement may have been loosened or deleted) and every required verifier must have a
    passing result of this repository's own on this content, else :class:`CheckFailed` (exit 1)
    names the first missing one.  With ``force`` and an untrusted config the promotion is
    recorded as forced.  A fetched checkpoint is refused (:class:`UsageError`).  A checkpoint
    that is already promoted is left alone (``changed`` False, no event) unless ``force`` adds
    a forced record.
    """
    from . import trust

    if not store.is_local(repo, cp):
        raise UsageError(
            f"{cp.id} is not a checkpoint of this repository; only local checkpoints are promoted",
            f"git ckpt restore {cp.id}, then git ckpt save and git ckpt verify make it one",
        )
    trusted = trust.state(repo, cfg).ok
    if not trusted and not force:
        trust.check(repo, cfg, doing=f"{cp.id} was not promoted (its required verifiers cannot be judged)")
    req = requirement(repo, cfg, cp)
    if not req.satisfied and not force:
        name, text = missing_text(req)
        raise CheckFailed(
            f"{cp.id} cannot be promoted: required verifier {name} has {text} on this content",
            f"git ckpt verify {cp.id} (or git ckpt promote {cp.id} --force, recorded as forced)",
        )
    task = cp.manifest.task
    ref = store.promoted_ref(task)
    forced = force and (not req.satisfied or not trusted)
    for _ in range(50):
        old = repo.read_ref(ref)
        if old == cp.commit and not force:
            gatecache.remember(repo, task=task)  # the commit gate's fast path (hooks/pre-commit)
            return PromoteResult(cp.id, cp.commit, task, old, False, False, sorted(req.passed))
        # The event first, then the ref: the promoted ref never names a commit that no promote
        # event on the ledger names (git ckpt log --verify checks it), even after a crash.
        ledger.append(repo, task, "promote", {
            "id": cp.id, "commit": cp.commit, "forced": forced, "previous": old, "reason": reason,
            "verifiers": sorted(req.passed), "missing": req.missing, "empty_requirement": not req.required,
            **({} if trusted else {"untrusted_config": True}),
        })
        if old != cp.commit:
            try:
                repo.update_ref(ref, cp.commit, expected_old=old, reason=f"ckpt: promote {cp.id}" + (" (forced)" if forced else ""), reflog=True)
            except RefConflict:
                continue
            fault("promote.after-ref")
        gatecache.remember(repo, task=task)
        return PromoteResult(cp.id, cp.commit, task, old, old != cp.commit, forced, sorted(req.passed))
    raise CkptError(f"could not promote {cp.id}: refs/ckpt/{task}/promoted keeps changing", "run the command again")


def was_forced(repo: Repo, task: str, commit: str) -> bool:
    """Whether the newest ``promote`` event of ``task`` for ``commit`` was forced."""
    rec = ledger.find_last(repo, task, lambda ev: ev.type == "promote" and ev.data.get("commit") == commit)
    return bool(rec and rec.event.data.get("forced"))
