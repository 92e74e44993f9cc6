"""The ledger of a task: ``refs/ckpt/T/log``, a chain of commits with {event.json, card.json}.

Each event carries ``seq`` (1, 2, …), ``prev`` (the previous event's hash) and ``hash`` (sha256 of
its own deterministic encoding), and each ledger commit has the previous one as its only parent:
a commit chain that is also a hash chain inside the JSON, so rewriting, dropping or editing an
event is caught by :func:`verify`.  Appends are compare-and-swap on the ref, retried on conflict.
"""

from __future__ import annotations

import os
import socket
from datetime import datetime, timezone
from typing import Any, Callable, Iterator, Mapping

import msgspec

from .errors import CkptError, CorruptError, UsageError
from .gitcore import Repo
from .model import MAX_CARD, MAX_EVENT, Card, Event, decode_json, encode
from . import notes, store


def now_iso() -> str:
    """Current UTC time as RFC 3339 with seconds (``2026-11-30T05:00:00Z``)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def user_name() -> str:
    """The login name, or ``unknown``."""
    for var in ("LOGNAME", "USER", "LNAME", "USERNAME"):  # getpass.getuser()'s order, without its import
        if os.environ.get(var):
            return os.environ[var]
    try:
        import getpass

        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no passwd entry in containers
        return "unknown"


HOST = socket.gethostname()


class Record:
    """One ledger entry as read back: ledger ``commit`` id, its ``event`` and the ``card`` then
    (read from the object store on first use, so a walk over a long ledger holds its events
    only; :class:`CorruptError` then when it is unreadable)."""

    __slots__ = ("_card", "_load", "commit", "event")

    def __init__(self, commit: str, event: Event, card: Card | None = None,
                 load: Callable[[], Card] | None = None) -> None:
        self.commit, self.event, self._card, self._load = commit, event, card, load

    @property
    def card(self) -> Card:
        """The task card as of this entry."""
        if self._card is None:
            assert self._load is not None  # a Record is built with a card or a way to read it
            self._card, self._load = self._load(), None
        return self._card


def _corrupt(task: str, commit: str, exc: Exception) -> CorruptError:
    return CorruptError(f"ledger of task {task} is corrupt at {commit[:12]}: {exc}",
                        f"git ckpt log --verify --task {task} names the first bad event")


#: The most bytes of event and card JSON one walk decodes from a fetched ledger (``REMOTE:T``).
#: Each event is bounded (:data:`MAX_EVENT`), but a teammate's ledger can name one 1 MiB event
#: from thousands of commits in a push of a few kilobytes, and a view that keeps every event
#: (stats, log --graph, report) then held gigabytes.  8 MiB is ~20,000 events of a real ledger.
FETCHED_LEDGER_BYTES = 8 << 20


class _Budget:
    """What one walk of ``task``'s ledger may still decode: :data:`FETCHED_LEDGER_BYTES` for a
    fetched task, unbounded for this repository's own (its events are this tool's writing)."""

    def __init__(self, task: str) -> None:
        self.left: int | None = FETCHED_LEDGER_BYTES if store.is_fetched_task(task) else None

    def charge(self, size: int) -> None:
        """Spend ``size`` bytes; :class:`CorruptError` once the walk has read too much."""
        if self.left is None:
            return
        self.left -= size
        if self.left < 0:
            raise CorruptError(f"the fetched ledger holds more than {FETCHED_LEDGER_BYTES >> 20} MiB of events, "
                               "more than git ckpt reads of a teammate's ledger")


def _read(repo: Repo, commit: str, task: str, budget: _Budget | None = None) -> Record:
    try:
        tree = repo.read_commit(commit).tree
        ev = decode_json(_file(repo, tree, "event.json", MAX_EVENT, budget), Event)
        card_entry = repo.tree_entry(tree, "card.json")
    except (CorruptError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise _corrupt(task, commit, exc) from None

    def load() -> Card:
        try:
            return decode_json(_file(repo, tree, "card.json", MAX_CARD, budget), Card)
        except (CorruptError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise _corrupt(task, commit, exc) from None

    if card_entry is None:
        raise _corrupt(task, commit, CorruptError("no card.json"))
    return Record(commit, ev, load=load)


def _file(repo: Repo, tree: str, name: str, limit: int, budget: _Budget | None = None) -> bytes:
    """The blob ``name`` at the top of ledger tree ``tree`` (at most ``limit`` bytes, checked
    before it is read, and charged to ``budget``); :class:`CorruptError` when absent or larger."""
    entry = repo.tree_entry(tree, name)
    if entry is None:
        raise CorruptError(f"no {name}")
    size = repo.blob_size(entry.oid)
    if size > limit:  # a fetched ledger is someone else's: bounded before it is read
        raise CorruptError(f"{name} is larger than {limit} bytes")
    if budget is not None:
        budget.charge(size)
    return repo.read_blob(entry.oid)


def head(repo: Repo, task: str) -> Record | None:
    """The newest ledger entry of ``task``, or None when it has no ledger yet."""
    oid = repo.read_ref(store.log_ref(task))
    return _read(repo, oid, task) if oid else None


def card(repo: Repo, task: str) -> Card:
    """The task card as of the newest event (an empty card when there is none)."""
    rec = head(repo, task)
    return rec.card if rec else Card(task=task)


def append(
    repo: Repo,
    task: str,
    type: str,
    data: dict[str, Any],
    update_card: Callable[[Card], Card | None] | None = None,
) -> Record:
    """Append one event (and the card, changed by ``update_card`` if given) to the ledger of
    ``task``; compare-and-swap on ``refs/ckpt/T/log``, rebuilt and retried when another process
    appended first.  Returns the new :class:`Record`.  A fetched task (``REMOTE:T``) is
    read-only: :class:`UsageError` (exit 2), written nowhere."""
    store.check_task_name(task)
    ref = store.log_ref(task)

    def build(old: str | None) -> tuple[str, Record]:
        prev = _read(repo, old, task) if old else None
        cur_card = prev.card if prev else Card(task=task)
        new_card = cur_card
        if update_card is not None:
            changed = update_card(msgspec.structs.replace(cur_card))
            new_card = changed if changed is not None else cur_card
        ev = Event(
            seq=(prev.event.seq + 1) if prev else 1,
            type=type,
            task=task,
            at=now_iso(),
            host=HOST,
            user=user_name(),
            data=data,
            prev=prev.event.hash if prev else None,
        )
        ev.hash = ev.compute_hash()
        card_bytes, ev_bytes = encode(new_card), encode(ev)
        if len(card_bytes) > MAX_CARD or len(ev_bytes) > MAX_EVENT:  # no reader would read it back
            raise UsageError(f"the {type} event would make the ledger of task {task} unreadable: its card or event "
                             f"exceeds {MAX_CARD} or {MAX_EVENT} bytes", "shorten the note")
        tree = repo.mktree([(0o100644, repo.blob(card_bytes), b"card.json"),
                            (0o100644, repo.blob(ev_bytes), b"event.json")])
        commit = repo.commit(tree, [old] if old else [], f"ckpt ledger {task} #{ev.seq}: {describe(ev)}\n")
        return commit, Record(commit, ev, new_card)

    return repo.swap(ref, build, reason=f"ckpt: {type}", step="ledger.before-ref", reflog=True)


def append_or_warn(repo: Repo, task: str, type: str, data: dict[str, Any],
                   update_card: Callable[[Card], Card | None] | None = None) -> str | None:
    """:func:`append`, but a damaged ledger does not undo the work already done: returns a
    warning instead of raising :class:`CorruptError` (None when the event was logged)."""
    try:
        append(repo, task, type, data, update_card)
    except CorruptError as exc:
        return f"{exc.message}; the {type} was done but not logged (git ckpt log --verify --task {task} names the damage)"
    return None


def records(repo: Repo, task: str) -> list[Record]:
    """All ledger entries of ``task``, oldest first (first-parent walk from the ref)."""
    out = []
    budget = _Budget(task)
    oid = repo.read_ref(store.log_ref(task))
    while oid:
        rec = _read(repo, oid, task, budget)
        out.append(rec)
        parents = repo.read_commit(oid).parents
        oid = parents[0] if parents else None
    out.reverse()
    return out


def iter_records(repo: Repo, task: str, newest: int | None = None) -> Iterator[Record]:
    """The ledger entries of ``task`` oldest first, decoded one at a time as the caller reads
    (``git ckpt log | head`` decodes only what it prints); with ``newest`` only the newest
    that many (``log -n``), which reads only those.  Raises :class:`CorruptError` at an
    unreadable entry."""
    oid = repo.read_ref(store.log_ref(task))
    if not oid:
        return
    try:  # the walk below peels a tag and reads a tree as no commits: the tip itself must be one
        repo.read_commit(oid)
    except CorruptError as exc:
        raise _corrupt(task, oid, exc) from None
    budget = _Budget(task)
    for commit in reversed(repo.first_parent_chain(oid, newest)):
        yield _read(repo, commit, task, budget)


def changed_nothing(data: Mapping[str, Any]) -> bool:
    """Whether a ``restore`` or ``undo`` event changed nothing.

    ``data`` is the event's :attr:`Event.data` (or the same keys before they are logged, as
    :mod:`git_ckpt.restore` builds them from its journal).  True when the state before it
    (``from``, ``from_commit``) is the very checkpoint and commit it restored (``target``,
    ``target_commit``), or when the restore found nothing to write (``unchanged``: true; the
    state left may be saved under another name, such as an own checkpoint equal to a fetched
    target): the worktree held the target already.  Such an event is no jump:
    ``undo`` passes over it, it is not remembered as the worktree's last jump, and ``stats``
    counts it neither as a restore or undo nor as a rollback.  Only ``restore``/``undo`` events
    carry these keys (the caller checks the type); a missing key reads as None.  Raises nothing.
    """
    return data.get("unchanged") is True or (data.get("from") == data.get("target")
                                              and data.get("from_commit") == data.get("target_commit"))


def find_last(repo: Repo, task: str, match: Callable[[Event], bool], limit: int = 500) -> Record | None:
    """The newest event of ``task`` for which ``match`` is true, looking back ``limit`` events."""
    oid = repo.read_ref(store.log_ref(task))
    while oid and limit > 0:
        try:  # the event alone is decoded while looking; the card only for the one found
            ev = decode_json(_file(repo, repo.read_commit(oid).tree, "event.json", MAX_EVENT), Event)
        except (CorruptError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise CorruptError(f"ledger of task {task} is corrupt at {oid[:12]}: {exc}", f"git ckpt log --verify --task {task} names the first bad event") from None
        if match(ev):
            return _read(repo, oid, task)
        parents = repo.read_commit(oid).parents
        oid = parents[0] if parents else None
        limit -= 1
    return None


def result_ids(repo: Repo, tasks: list[str], want: set[str] | None, *, isolated: bool = False) -> set[str]:
    """Which of the result ids in ``want`` (:func:`git_ckpt.evidence.result_id` of a note line) a
    ``verify`` event in the ledgers of ``tasks`` names (its ``result``); every id named when
    ``want`` is None.  With ``isolated``, only events of ``verify --isolated`` runs count
    (``[gate] isolated = true``).

    This is what makes a note line *evidence*: the ledger is written only by this repository's
    own commands (``fetch`` never writes it), while notes merge every teammate's lines.  Walks
    each ledger newest first and stops once every id is found; an unreadable entry ends that
    ledger's walk (what lies behind it is not evidence)."""
    return set(result_events(repo, tasks, want, isolated=isolated))


def result_events(repo: Repo, tasks: list[str], want: set[str] | None, *, isolated: bool = False) -> dict[str, dict[str, Any]]:
    """:func:`result_ids` with the data of the newest ``verify`` event naming each id (its
    ``reused_from`` says where a reused result came from).  Same walk, same errors (none: an
    unreadable entry ends that ledger's walk)."""
    found: dict[str, dict[str, Any]] = {}
    for task in tasks:
        oid = repo.read_ref(store.log_ref(task))
        while oid and (want is None or not want <= found.keys()):
            try:
                c = repo.read_commit(oid)
                ev = decode_json(_file(repo, c.tree, "event.json", MAX_EVENT), Event)
            except (CorruptError, msgspec.DecodeError, msgspec.ValidationError):
                break
            if ev.type == "verify" and (not isolated or ev.data.get("isolated") is True):
                rid = ev.data.get("result")
                if isinstance(rid, str) and (want is None or rid in want):
                    found.setdefault(rid, ev.data)
            oid = c.parents[0] if c.parents else None
        if want is not None and want <= found.keys():
            break
    return found


def verify(repo: Repo, task: str) -> list[str]:
    """Re-check the ledger of ``task``; return problems, first broken link first ([] when intact).

    Checks: every commit has at most one parent; ``seq`` counts up from 1; each ``hash`` matches
    the event; each ``prev`` names the previous event's hash; every checkpoint manifest's
    ``ledger_head`` is a commit on the chain; ``refs/ckpt/T/promoted`` (when present) names a
    commit that a ``promote`` event on the chain promoted (promote logs the event before it
    moves the ref, so dropping the newest events by re-pointing the ledger ref is caught);
    every value the ledger ref's reflog records is on the chain (a ref moved backwards, e.g.
    ``git update-ref refs/ckpt/T/log refs/ckpt/T/log~1``, is caught while its reflog lasts);
    every checkpoint ref ``refs/ckpt/T/N`` has a ``save`` event (except one whose manifest
    names the current ledger head: a save killed before its event, which the next save logs);
    and, where the reflog cannot show the ref only moved forward, every result line on a
    checkpoint of T that names T/N and this host has the ``verify`` event naming it (for a
    fetched ``REMOTE:T``, on any of this repository's own ledgers: a fetched checkpoint's verify
    event goes to the task current then).
    What it cannot see: a rewrite that also rewrites or deletes the reflog, the notes and the
    checkpoints' manifests consistently (see the README, "Tamper evidence").
    """
    problems: list[str] = []
    ref = store.log_ref(task)
    oid = repo.read_ref(ref)
    chain: list[str] = []
    while oid:
        chain.append(oid)
        try:
            c = repo.read_commit(oid)
        except CorruptError as exc:  # missing, or a tree, blob or tag (a fetched ref is anyone's)
            problems.append(f"ledger commit {oid[:12]}: {exc.message}")
            break
        if len(c.parents) > 1:
            problems.append(f"ledger commit {oid[:12]} has {len(c.parents)} parents")
        oid = c.parents[0] if c.parents else None
    chain.reverse()
    prev_hash: str | None = None
    promoted_on_chain: set[str] = set()
    saved_on_chain: set[str] = set()
    results_on_chain: set[str] = set()
    budget = _Budget(task)
    for i, commit in enumerate(chain, start=1):
        try:
            rec = _read(repo, commit, task, budget)
        except CorruptError as exc:
            problems.append(f"event #{i} ({commit[:12]}): unreadable: {exc.message}")
            break
        if rec.event.type == "promote" and isinstance(rec.event.data.get("commit"), str):
            promoted_on_chain.add(rec.event.data["commit"])
        if rec.event.type == "save" and isinstance(rec.event.data.get("commit"), str):
            saved_on_chain.add(rec.event.data["commit"])
        if rec.event.type == "verify" and isinstance(rec.event.data.get("result"), str):
            results_on_chain.add(rec.event.data["result"])
        ev = rec.event
        if ev.seq != i:
            problems.append(f"event #{i} ({commit[:12]}): sequence number is {ev.seq}, expected {i} (an event was deleted or inserted)")
            break
        if ev.compute_hash() != ev.hash:
            problems.append(f"event #{i} ({commit[:12]}): event.json does not match its hash (edited)")
            break
        if ev.prev != prev_hash:
            problems.append(f"event #{i} ({commit[:12]}): does not link to the event before it (history rewritten)")
            break
        prev_hash = ev.hash
    promoted = repo.read_ref(store.promoted_ref(task))
    if not problems and promoted and promoted not in promoted_on_chain:
        try:
            shown = store.load(repo, promoted).manifest.id
        except Exception:  # noqa: BLE001 - reported, not raised
            shown = promoted[:12]
        problems.append(f"refs/ckpt/{task}/promoted names {shown} ({promoted[:12]}), but no promote event on the ledger "
                        "promoted it (events were dropped or the ref was moved by hand)")
    on_chain_early = set(chain)
    reflog = list(repo.reflog(ref))
    # the reflog shows the ref only ever moved forward: a result line without its verify event
    # is then a verify killed between its note and its event (never evidence), not a truncation
    reflog_clean = bool(reflog)
    for old_v, new_v in reflog:
        gone = next((x for x in (new_v, old_v) if x and x not in on_chain_early), None)
        if gone is not None:
            reflog_clean = False
            problems.append(f"refs/ckpt/{task}/log once pointed at {gone[:12]} (its reflog), which is not on the ledger now: "
                            "the ref was moved backwards or rewritten (events dropped)")
            break
    on_chain = set(chain)
    own_results: set[str] = set()
    rewritten: list[tuple[int, str]] = []
    for n, cp_oid in store.numbered(repo, task):
        try:
            cp = store.load(repo, cp_oid, id=f"{task}/{n}", ref=store.ckpt_ref(task, n))
        except CorruptError as exc:  # reported, not raised; a ref someone else made is named as such
            problems.append(exc.message if store.NOT_MADE_BY_US in exc.message else f"checkpoint {task}/{n}: unreadable ({exc.message})")
            continue
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            problems.append(f"checkpoint {task}/{n}: unreadable ({exc})")
            continue
        # a save killed after its ref and before its event left the ledger where the checkpoint
        # saw it (the next save logs it); anything else without a save event was dropped or forged
        interrupted_save = cp.manifest.ledger_head == (chain[-1] if chain else None)
        if not problems and chain and cp_oid not in saved_on_chain and not interrupted_save:
            problems.append(f"checkpoint {task}/{n} has no save event on the ledger (events dropped or the ref was made by hand)")
        if chain and not reflog_clean:
            if store.is_fetched_task(task) and not own_results:
                # a fetched checkpoint verified here: its verify event is on this repository's
                # own ledger of the task current then (never on the fetched one)
                own_results.update(result_ids(repo, store.tasks(repo), None) or {""})
            lost = _unlogged_results(repo, cp, f"{task}/{n}", results_on_chain | own_results)
            if lost:
                problems.append(f"checkpoint {task}/{n} has {lost} result line(s) recorded on this host whose verify event "
                                "is not on the ledger (events dropped)")
        lh = cp.manifest.ledger_head
        if lh and lh not in on_chain:
            first = _first_divergence(repo, lh, chain)
            if first is not None:
                i = first
                rewritten.append((i, f"event #{i + 1} ({chain[i][:12] if i < len(chain) else 'missing'}): differs from the history "
                                     f"checkpoint {task}/{n} recorded (history rewritten from here)"))
            problems.append(f"checkpoint {task}/{n} records ledger head {lh[:12]}, which is no longer on the chain (history rewritten)")
    if rewritten:
        rewritten.sort()
        if not problems or not problems[0].startswith("event #") or _event_no(problems[0]) > rewritten[0][0] + 1:
            problems.insert(0, rewritten[0][1])
    return problems


def _unlogged_results(repo: Repo, cp: "store.Checkpoint", cid: str, logged: set[str]) -> int:
    """How many result lines on ``cp``'s note name checkpoint ``cid`` and this host but have no
    verify event (their result id) among ``logged``."""
    mine = [ln for ln in notes.read_lines(repo, cp.commit) if ln.get("host") == HOST and ln.get("checkpoint") == cid]
    return sum(1 for ln in mine if notes.result_id(ln) not in logged)


def _event_no(problem: str) -> int:
    try:
        return int(problem.split("#", 1)[1].split(" ", 1)[0])
    except (IndexError, ValueError):
        return 1 << 30


def _first_divergence(repo: Repo, old_head: str, chain: list[str]) -> int | None:
    """The 0-based position where the chain ending at ``old_head`` (a ledger head recorded
    earlier) first differs from ``chain`` (oldest first); None when ``old_head`` is unreadable."""
    old: list[str] = []
    oid: str | None = old_head
    while oid:
        old.append(oid)
        try:
            parents = repo.read_commit(oid).parents
        except CorruptError:
            return None
        oid = parents[0] if parents else None
    old.reverse()
    for i, commit in enumerate(old):
        if i >= len(chain) or chain[i] != commit:
            return i
    return len(old)


def reused_text(data: dict[str, Any], shown: Callable[[Any], Any] = lambda cid: cid) -> str:
    """`` (reused from T/N)`` (`` (reused)`` when the source is not named) for the data of a
    ``verify`` event that reused a recorded result, as ``verify`` says it; else nothing.
    ``shown`` names the source as the view does (``REMOTE:T/N`` in a fetched task)."""
    if not data.get("reused"):
        return ""
    src = data.get("reused_from")
    return f" (reused from {shown(src)})" if isinstance(src, str) and src else " (reused)"


def _items(value: object) -> list[object]:
    """An event field meant to hold a list, as one: a list as is, any other non-empty value as a
    list of itself, nothing for an empty one.  Event data is JSON a teammate wrote (a fetched
    ledger): its shapes are not trusted."""
    if isinstance(value, list):
        return value
    return [value] if value not in (None, "", False, {}) else []


#: The event types whose checkpoint ids :func:`describe` names through its ``shown`` function.
ID_EVENTS = frozenset({"save", "restore", "undo", "verify", "promote", "handoff", "drop"})


#: Events that record looking at other work (a fetched checkpoint verified, a fetch, a handoff
#: printed), not work of the task's own: a ledger of only these has nothing of its own to share.
REVIEW_EVENTS = frozenset({"verify", "fetch", "handoff"})


def only_reviews(repo: Repo, task: str) -> bool:
    """Whether ``task`` has no checkpoint and its ledger (if any) holds only
    :data:`REVIEW_EVENTS` and ``task start`` events that left the card empty (no goal,
    constraint or acceptance): a reviewer's task (``verify REMOTE:T/N --isolated`` records its
    result there, as evidence), whose ledger ``push`` leaves home (every reviewer's would be a
    ``default`` of its own, and the second push would be refused).  An unreadable ledger is
    not (the push then says what is wrong with it)."""
    if store.numbered(repo, task):
        return False
    try:
        return all(rec.event.type in REVIEW_EVENTS or (rec.event.type == "task-start" and _empty_card(rec.card))
                   for rec in iter_records(repo, task))
    except CkptError:
        return False


def _empty_card(card: Card) -> bool:
    """Whether ``card`` records nothing a teammate could read: no goal, constraint or acceptance
    (what ``task start`` writes), and nothing later ``task note``s or saves add."""
    return card == Card(task=card.task)


def describe(ev: Event, card: Card | None = None, shown: Callable[[Any], Any] = lambda cid: cid) -> str:
    """A one-line, terminal-friendly description of an event; ``card`` (the card after it, as a
    :class:`Record` holds it) names the assumption a ``--confirm N``/``--refute N`` judged;
    ``shown`` names each checkpoint id the event holds as the view does (identity: as written;
    :func:`describe_in` for a fetched task's ``REMOTE:T/N``)."""
    d = ev.data
    t = ev.type
    if t == "save":
        return f"checkpoint saved: {shown(d.get('id'))}" + (f" ({d.get('kind')})" if d.get("kind") not in (None, "manual") else "")
    if t in ("restore", "undo"):
        paths = _items(d.get("paths"))
        only = f" (only {len(paths)} path(s))" if paths and t == "restore" else ""
        was = "the worktree held it already" if changed_nothing(d) else f"previous state {shown(d.get('from'))}"
        return f"{'restored' if t == 'restore' else 'undo: restored'} {shown(d.get('target'))}{only} ({was})"
    if t == "verify":
        from .words import result_word

        return (f"verifier: {d.get('verifier')} ...... {result_word(d.get('status'), d.get('exit_code'))} on {shown(d.get('id'))}"
                + reused_text(d, shown))
    if t == "promote":
        return f"promoted {shown(d.get('id'))}" + (" (forced)" if d.get("forced") is True else "")
    if t == "gate-refused":
        return f"gate refused a commit: {d.get('reason')}"
    if t == "task-start":
        return f"task started: {d.get('goal') or ''}".rstrip(": ")
    if t == "card":  # every kind task note writes, in the order of its options
        parts = []
        if read := _items(d.get("read")):
            parts.append("read: " + ", ".join(map(str, read)))
        if d.get("fact"):
            parts.append(f"fact: {d['fact']}")
        parts += [f"decided: {text}" for text in _items(d.get("decided"))]
        if d.get("failed"):
            parts.append(f"ruled out: {d['failed']}" + (f" ({d['reason']})" if d.get("reason") else ""))
        parts += [f"assumed: {text}" for text in _items(d.get("assume"))]
        for key, verb in (("confirm", "confirmed"), ("refute", "refuted")):
            n = d.get(key)
            if isinstance(n, int) and not isinstance(n, bool):
                known = card is not None and 1 <= n <= len(card.assumptions)
                parts.append(f"{verb} assumption {n}" + (f": {card.assumptions[n - 1].text}" if known and card else ""))
        parts += [f"question: {text}" for text in _items(d.get("question"))]
        if d.get("next"):
            parts.append(f"next action: {d['next']}")
        if d.get("hypothesis"):
            parts.append(f"hypothesis: {d['hypothesis']}")
        if d.get("done"):
            parts.append("task done")
        return "; ".join(parts) if parts else "task card updated"
    if t == "push":
        return f"pushed to {d.get('remote')}"
    if t == "fetch":
        return f"fetched from {d.get('remote')}"
    if t == "handoff":
        return f"handoff receipt given at {shown(d.get('id'))}"
    if t == "drop":
        return (f"dropped {shown(d.get('id'))}" + (" (forced)" if d.get("forced") is True else "")
                + (", and with it the promotion" if d.get("unpromoted") else ""))
    if t == "prune":
        from .words import counted

        pruned = d.get("pruned")
        return f"pruned {counted(len(pruned) if isinstance(pruned, list) else 0, 'checkpoint')}"
    return t


def describe_in(task: str, ev: Event, card: Card | None = None) -> str:
    """:func:`describe` of an event of ``task``'s ledger as a view of ``task`` prints it (``log``,
    ``log --graph``): for a fetched task ``REMOTE:T`` (whose owner wrote bare ids), each id the
    event holds that is a ``T/N`` of that very task is named ``REMOTE:T/N``
    (:func:`git_ckpt.store.shown_id`), and in the free text of other events (a card note, a goal)
    so is each such id (:func:`git_ckpt.store.shown_ids`).  A task of this repository: as
    :func:`describe`.  Not escaped: the caller escapes what it prints."""
    text = describe(ev, card, lambda cid: store.shown_id(task, cid))
    return text if ev.type in ID_EVENTS else store.shown_ids(task, text)
