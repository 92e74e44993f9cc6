"""Edits of the task card (``git ckpt task note``), each one ``card`` event in the ledger.

The card (:class:`~git_ckpt.model.Card`, ``card.json`` in every ledger commit) is never edited in
place: an edit appends an event whose card is the previous card changed, so the ledger keeps the
whole history of what was read, decided, ruled out and assumed, and who did it when.

Evidence (``--evidence E``) is parsed by :func:`parse_evidence`:

* ``CKPT#VERIFIER`` — the last result of VERIFIER recorded on checkpoint CKPT (status and log blob);
* a checkpoint name (``T/N``, ``REMOTE:T/N``, ``N``, ``@``, ``@~2``, ``promoted``) — that checkpoint
  (id and commit);
* ``file:PATH`` or an existing worktree path — that file (inside the worktree);
* ``text:…`` or anything else — free text, except for ``--failed`` (a checkpoint or result only).

A spec spelled like a checkpoint or a result names one that exists, and ``file:PATH`` a file of
the worktree, for every kind of note: else exit 4 with a hint ("did you mean" for a checkpoint).
Evidence backs one item of the note (:meth:`Edit.evidence_target`): its fact, failed path or
confirmed/refuted assumption, or else its one decision, assumption or question.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field

from . import ledger, notes, store
from .errors import CkptError, NotFoundError, UsageError
from .gitcore import Repo
from .model import Card, CardItem, Evidence

ASSUMPTION_STATES = ("unverified", "confirmed", "refuted")
JUDGED = ("confirmed", "refuted")


# What a checkpoint name looks like (``T/N``, ``REMOTE:T/N``, ``T/@``, ``T/@~K`` (``@~``, ``@~~``), ``T/promoted``,
# and ``N``, ``@``, ``@~K``, ``promoted`` of the current task): evidence spelled so must exist.
_TASK = r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}"
CHECKPOINT_SHAPE = re.compile(rf"(?:[A-Za-z0-9][A-Za-z0-9._-]*:)?(?:{_TASK}/)?(?:[0-9]+|@(?:~[0-9]*)*|promoted)")
#: The options of ``task note`` whose item ``--evidence`` can back (its ``-h`` and errors say so).
EVIDENCE_TAKERS = "--fact, --decided, --failed, --assume, --confirm, --refute or --question"
HINT = "cite a checkpoint (T/N) or a result (T/N#VERIFIER)"


def _cite_hint(repo: Repo, task: str | None) -> str:
    """:data:`HINT` with an example from this repository: the task's latest checkpoint and,
    when it has one, its last result (``e.g. --evidence t/3#tests``); no example without any."""
    try:
        cp = store.latest(repo, task or store.current_task(repo))
    except CkptError:
        cp = None
    if cp is None:
        return HINT
    try:
        results = [r for r in notes.read_lines(repo, cp.commit) if isinstance(r.get("verifier"), str)]
    except CkptError:
        results = []
    return f"{HINT}, e.g. --evidence {cp.id}" + (f"#{results[-1]['verifier']}" if results else "")


def checkpoint_shaped(spec: str) -> bool:
    """Whether ``spec`` is spelled like a checkpoint name (see :data:`CHECKPOINT_SHAPE`)."""
    return CHECKPOINT_SHAPE.fullmatch(spec) is not None


def _cited(repo: Repo, spec: str, cp_spec: str, task: str) -> store.Checkpoint:
    """The checkpoint ``cp_spec`` (spelled like one) of evidence ``spec``; a missing one is
    :class:`NotFoundError` (exit 4) naming the evidence, with a "did you mean" hint."""
    try:
        return store.resolve(repo, cp_spec, task)
    except NotFoundError as exc:
        hint = exc.hint
        t = cp_spec.rpartition("/")[0] if "/" in cp_spec else task
        remote, _, bare = t.rpartition(":")
        if not hint or not hint.startswith(("did you mean", "the tasks are", "no task has")):
            top = store.highest(repo, bare, f"{store.REMOTE_PREFIX}{remote}/" if remote else store.PREFIX)
            if top is not None:
                hint = f"did you mean {t}/{top[0]} (the latest of {t})? {hint}" if hint else f"did you mean {t}/{top[0]} (the latest of {t})?"
        raise NotFoundError(f"evidence {spec!r}: {exc.message}", hint) from None


def parse_evidence(repo: Repo, spec: str, *, task: str, cwd: str | None = None, strict: bool = False) -> Evidence:
    """Turn an ``--evidence`` argument into an :class:`Evidence` (see the module docstring).

    One rule for every kind of note: a spec spelled like a checkpoint (``T/N``, ``REMOTE:T/N``,
    ``T/@…``) or a result (``T/N#VERIFIER``) must name one that exists, else
    :class:`NotFoundError` (exit 4) with a "did you mean" hint; ``file:PATH`` must be inside
    the worktree (:class:`UsageError`) and name a file or directory there (:class:`NotFoundError`:
    ``no file PATH in the worktree``).  ``strict`` (what a failed path must cite) accepts only
    a checkpoint or a result and raises :class:`UsageError` for anything else; otherwise an
    existing worktree path is a file and anything else free text.
    """
    spec = spec.strip()
    if not spec:
        raise UsageError("--evidence is empty", "name a checkpoint (T/N), a result (T/N#VERIFIER), a file or some text")
    if spec.startswith("text:") and not strict:
        return Evidence(text=spec[5:].strip())
    if "#" in spec and not spec.startswith("file:"):
        cp_spec, _, verifier = spec.rpartition("#")
        cp: store.Checkpoint | None
        if not cp_spec or checkpoint_shaped(cp_spec):
            cp = _cited(repo, spec, cp_spec or "@", task)
        else:  # another revision naming a checkpoint commit, or text with a '#'
            try:
                cp = store.resolve(repo, cp_spec, task)
            except CkptError:
                cp = None
        if cp is not None:
            results = notes.read_lines(repo, cp.commit)
            lines = [r for r in results if r.get("verifier") == verifier]
            if not lines:
                names = sorted({str(r.get("verifier")) for r in results if isinstance(r.get("verifier"), str)})
                close = difflib.get_close_matches(verifier, names, n=1, cutoff=0.0) if names else []
                hint = (f"did you mean {cp.id}#{close[0]}? " if close else "") + f"git ckpt show {cp.id} lists its results"
                raise NotFoundError(f"evidence {spec!r}: no result of verifier {verifier!r} on {cp.id}", hint)
            last = lines[-1]
            return Evidence(checkpoint=cp.id, commit=cp.commit, verifier=verifier, result=str(last.get("status", "?")),
                            log=last.get("log") if isinstance(last.get("log"), str) else None)
    elif checkpoint_shaped(spec):
        found = _cited(repo, spec, spec, task)
        return Evidence(checkpoint=found.id, commit=found.commit)
    elif not spec.startswith("file:"):
        try:  # any other revision that names a checkpoint commit
            other: store.Checkpoint | None = store.resolve(repo, spec, task)
        except CkptError:
            other = None
        if other is not None:
            return Evidence(checkpoint=other.id, commit=other.commit)
    if strict:
        raise UsageError(f"evidence {spec!r} is not a checkpoint or a verifier result", _cite_hint(repo, task))
    path = spec[5:] if spec.startswith("file:") else spec
    rel = _worktree_path(repo, path, cwd)
    if spec.startswith("file:") or (rel is not None and os.path.lexists(os.path.join(repo.workdir, rel))):
        if rel is None:
            raise UsageError(f"path {path!r} is outside the worktree {repo.workdir}",
                             "cite a file of the worktree (file:PATH, relative to it or to the current directory)")
        if not os.path.lexists(os.path.join(repo.workdir, rel)):
            raise NotFoundError(f"evidence {spec!r}: no file {rel} in the worktree",
                                "file:PATH cites a file that exists (relative to the current directory); text:... records words")
        return Evidence(file=rel)
    return Evidence(text=spec)


def _worktree_path(repo: Repo, path: str, cwd: str | None) -> str | None:
    """``path`` (relative to ``cwd``) relative to the worktree root with ``/``, or None outside it."""
    full = os.path.normpath(os.path.join(cwd or os.getcwd(), path))
    rel = os.path.relpath(full, repo.workdir)
    if rel == "." or rel.startswith("..") or os.path.isabs(rel):
        return None
    return rel.replace(os.sep, "/")


@dataclass
class Edit:
    """One ``task note`` invocation.  Every field is optional; what is given is applied in one event.

    The ``evidence`` list backs one item (:meth:`evidence_target`), so it is never ambiguous;
    ``failed`` takes the ``reason``.
    """

    read: list[str] = field(default_factory=list)
    fact: str | None = None
    decided: list[str] = field(default_factory=list)
    failed: str | None = None
    reason: str | None = None
    evidence: list[str] = field(default_factory=list)
    assume: list[str] = field(default_factory=list)
    confirm: int | None = None
    refute: int | None = None
    question: list[str] = field(default_factory=list)
    next: str | None = None

    def evidence_target(self) -> str | None:
        """The option whose item the ``evidence`` backs: the edit's ``--fact``, ``--failed``,
        ``--confirm`` or ``--refute`` (at most one of them), or else its one ``--decided``,
        ``--assume`` or ``--question``; None when the edit records no item.  Raises
        :class:`UsageError` when it could back two of them (two of the first kind, or several
        of the second kind and none of the first)."""
        takers = [name for name, val in (("--fact", self.fact), ("--failed", self.failed), ("--confirm", self.confirm), ("--refute", self.refute)) if val is not None]
        if len(takers) > 1:
            raise UsageError(f"{' and '.join(takers)} in one note: the evidence would be ambiguous", "run git ckpt task note once for each")
        if takers:
            return takers[0]
        items = ["--decided"] * len(self.decided) + ["--assume"] * len(self.assume) + ["--question"] * len(self.question)
        if self.evidence and len(items) > 1:
            raise UsageError(f"--evidence with {len(items)} items in one note ({', '.join(items)}): which one it backs would be ambiguous",
                             "run git ckpt task note once for each item")
        return items[0] if items else None

    def empty(self) -> bool:
        """True when nothing would change."""
        return not (self.read or self.fact or self.decided or self.failed or self.assume or self.question
                    or self.next is not None or self.confirm is not None or self.refute is not None)


def note(repo: Repo, task: str, edit: Edit, *, cwd: str | None = None) -> ledger.Record:
    """Apply ``edit`` to the card of ``task`` as one ``card`` ledger event; return the new record.

    Raises :class:`UsageError` for an empty or ambiguous edit (evidence with no item to back or
    that could back two, :meth:`Edit.evidence_target`; ``--failed`` without ``--reason`` or
    evidence, a fact without evidence) and :class:`NotFoundError` for an unknown assumption
    number or evidence naming nothing that exists.
    """
    store.check_task_name(task)
    target = edit.evidence_target()
    if edit.evidence and target is None:
        raise UsageError(f"--evidence needs an item to attach to: {EVIDENCE_TAKERS}")
    if edit.empty():
        raise UsageError("nothing to note", "give --read, --fact, --decided, --failed, --assume, --confirm, --refute, --question or --next")
    if edit.reason and edit.failed is None:
        raise UsageError("--reason goes with --failed OPTION")
    if edit.failed is not None and not (edit.reason and edit.reason.strip()):
        raise UsageError("--failed needs --reason: say why this path was ruled out")
    if (edit.fact is not None or edit.failed is not None) and not edit.evidence:
        kinds = "a checkpoint T/N or a result T/N#VERIFIER" if edit.failed is not None else "a checkpoint T/N, a result T/N#VERIFIER, a file or text"
        raise UsageError(f"{target} needs --evidence ({kinds})")
    for label, value in (("--fact", edit.fact), ("--failed", edit.failed), ("--next", edit.next)):
        if value is not None and not value.strip() and label != "--next":
            raise UsageError(f"{label} is empty")
    evidence = [parse_evidence(repo, e, task=task, cwd=cwd, strict=edit.failed is not None) for e in edit.evidence]
    reads = []
    for r in edit.read:
        rel = _worktree_path(repo, r, cwd)
        if rel is None:
            raise UsageError(f"path {r!r} is outside the worktree {repo.workdir}",
                             "name a file of the worktree (relative to it or to the current directory)")
        if not os.path.lexists(os.path.join(repo.workdir, rel)):  # as file: evidence: what was read exists
            raise NotFoundError(f"--read {r!r}: no file or directory {r} in the worktree",
                                "--read names a file or directory you read (relative to the current directory)")
        reads.append(rel)
    at = ledger.now_iso()
    current = ledger.card(repo, task)
    for n, label in ((edit.confirm, "--confirm"), (edit.refute, "--refute")):
        if n is not None and not 1 <= n <= len(current.assumptions):
            raise UsageError(f"{label} {n}: task {task} has {len(current.assumptions)} assumption(s)", f"git ckpt task show {task} numbers them")

    def backs(option: str) -> list[Evidence]:
        return evidence if target == option else []

    def update(card: Card) -> Card:
        for r in reads:
            if r not in card.reads:
                card.reads = card.reads + [r]
        if edit.fact is not None:
            card.facts = card.facts + [CardItem(text=edit.fact.strip(), evidence=evidence, at=at)]
        for d in edit.decided:
            card.decisions = card.decisions + [CardItem(text=d.strip(), evidence=backs("--decided"), at=at)]
        if edit.failed is not None:
            card.failed = card.failed + [CardItem(text=edit.failed.strip(), reason=(edit.reason or "").strip(), evidence=evidence, at=at)]
        for a in edit.assume:
            card.assumptions = card.assumptions + [CardItem(text=a.strip(), status="unverified", evidence=backs("--assume"), at=at)]
        for n, status in ((edit.confirm, "confirmed"), (edit.refute, "refuted")):
            if n is None:
                continue
            if not 1 <= n <= len(card.assumptions):  # another process changed the card meanwhile
                raise NotFoundError(f"assumption {n} of task {task} no longer exists")
            items = list(card.assumptions)
            old = items[n - 1]
            # a judgement reversed keeps none of the evidence of the one it replaces (that note
            # stays in the ledger); the same judgement again adds to its evidence
            kept = [] if old.status in JUDGED and old.status != status else list(old.evidence)
            items[n - 1] = CardItem(text=old.text, status=status, reason=old.reason, evidence=kept + evidence, at=at)
            card.assumptions = items
        for q in edit.question:
            card.questions = card.questions + [CardItem(text=q.strip(), evidence=backs("--question"), at=at)]
        if edit.next is not None:
            card.next = edit.next.strip() or None
        return card

    data = {k: v for k, v in {
        "read": reads or None, "fact": edit.fact, "decided": edit.decided or None, "failed": edit.failed,
        "reason": edit.reason, "evidence": [_evidence_text(e) for e in evidence] or None, "assume": edit.assume or None,
        "confirm": edit.confirm, "refute": edit.refute, "question": edit.question or None, "next": edit.next,
    }.items() if v is not None}
    return ledger.append(repo, task, "card", data, update)


def reversals(card: Card, edit: Edit) -> list[str]:
    """What ``edit`` would reverse on ``card`` (the card before it): ``assumption N: confirmed ->
    refuted`` for each judged assumption it judges the other way, in option order; the earlier
    judgement's evidence is then no longer shown on the card (the ledger keeps that note)."""
    out = []
    for n, status in ((edit.confirm, "confirmed"), (edit.refute, "refuted")):
        if n is not None and 1 <= n <= len(card.assumptions):
            old = card.assumptions[n - 1].status
            if old in JUDGED and old != status:
                out.append(f"assumption {n}: {old} -> {status}")
    return out


def _evidence_text(ev: Evidence) -> str:
    return evidence_display(ev)


def evidence_suffix(texts: list[str]) -> str:
    """`` (evidence: A, B)`` after a card entry backed by evidence ``texts`` (already escaped
    for display), or nothing: the words ``handoff`` and ``task show`` both print."""
    return f" (evidence: {', '.join(texts)})" if texts else ""


def evidence_texts(task: str, item: CardItem) -> list[str]:
    """The evidence of ``item`` (a card entry of ``task``) as ``task show`` and the handoff
    receipt print it (:func:`evidence_display`), a fetched task's checkpoints named as this
    repository does (:func:`git_ckpt.store.shown_ids`)."""
    return [store.shown_ids(task, evidence_display(e)) for e in item.evidence]


def evidence_display(ev: Evidence) -> str:
    """One short human string for a piece of evidence (``T/3#tests: failed``, ``T/2``, ``file x``)."""
    if ev.verifier:
        return f"{ev.checkpoint}#{ev.verifier}: {ev.result}"
    if ev.checkpoint:
        return ev.checkpoint
    if ev.file:
        return f"file {ev.file}"
    return ev.text or ev.result or ""
