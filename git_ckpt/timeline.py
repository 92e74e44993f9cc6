"""A picture of a task: its ledger as a timeline of checkpoints, verifier results, jumps
(restores and undos), promotions and handoffs — for ``log --graph`` and ``report --html``.

The ledger is read once (:func:`git_ckpt.ledger.records`).  Each checkpoint becomes a
:class:`Node` whose ``parent`` is the checkpoint the worktree was at when it was saved (the one
saved or restored last), so work that went on after a restore branches off the checkpoint it
restored; ``lane`` numbers those branches for drawing (:func:`assign_lanes`: at most
:data:`MAX_LANES` of them, in one pass, however the ledger jumps about).  Everything shown comes
from stored, possibly foreign text: :func:`plain` escapes control characters, the HTML page
escapes markup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from . import ledger, store
from .errors import CkptError
from .gitcore import Repo
from .model import Card, escape
from .words import result_word


def plain(text: object) -> str:
    """Stored text for a terminal: one line, control and invisible format characters escaped
    (:func:`git_ckpt.model.escape`)."""
    return escape(str(text if text is not None else ""))


@dataclass
class Result:
    """One verifier outcome on a node."""

    verifier: str
    word: str  # passed, failed, could not run, undecided, changed-files, ...
    exit_code: object = None
    reused: bool = False

    @property
    def ok(self) -> bool:
        return self.word == "passed"


@dataclass
class Node:
    """One checkpoint of the task, as the timeline knows it."""

    id: str
    kind: str
    message: str
    at: str
    commit: str | None
    parent: str | None
    lane: int = 0
    results: list[Result] = field(default_factory=list)
    promoted: bool = False
    handoff: bool = False
    #: pruned by gc or dropped: its ref (refs/ckpt/T/N, or refs/ckpt-remotes/REMOTE/T/N for a
    #: fetched task) no longer names its commit
    gone: bool = False
    #: its ref names something that is no checkpoint (a tree, a blob, another commit): neither
    #: pruned nor dropped, and not read (git ckpt check names what is wrong)
    damaged: bool = False


@dataclass
class Step:
    """One event in order: ``type`` (save, verify, restore, undo, promote, handoff, other), the
    node it concerns, and for a jump the node it left (``source``)."""

    type: str
    at: str
    node: str | None
    text: str
    source: str | None = None
    ok: bool | None = None


@dataclass
class Timeline:
    """A task's timeline: its newest card, its checkpoints by id in save order, its events in
    order, and how many lanes the checkpoints are drawn in (:func:`assign_lanes`)."""

    task: str
    card: Card | None
    nodes: dict[str, Node]
    steps: list[Step]
    lanes: int

    @property
    def live(self) -> int:
        """How many of the task's checkpoints still exist (pruned and dropped ones not counted)."""
        return sum(1 for n in self.nodes.values() if not n.gone and not n.damaged)

    @property
    def gone(self) -> int:
        """How many checkpoints on the timeline were pruned (gc) or dropped since."""
        return sum(1 for n in self.nodes.values() if n.gone)

    @property
    def damaged(self) -> int:
        """How many checkpoints on the timeline have a ref naming something that is no checkpoint."""
        return sum(1 for n in self.nodes.values() if n.damaged)


def build(repo: Repo, task: str) -> Timeline:
    """The timeline of ``task`` from its ledger (no ledger: an empty timeline).  For a fetched
    task ``REMOTE:T`` the ledger names its checkpoints ``T/N`` (as the teammate saved them):
    they are shown, and looked up under ``refs/ckpt-remotes/REMOTE/T/``, as ``REMOTE:T/N``.
    Lanes as :func:`assign_lanes` numbers them.  Reads the ledger once and the task's
    checkpoint refs once; the rest is linear in its events.  Raises
    :class:`~git_ckpt.errors.CorruptError` (exit 7) for a ledger entry that does not read, as
    :func:`git_ckpt.ledger.records` does."""
    recs = ledger.records(repo, task)

    def shown(cid: object) -> object:
        """``T/N`` of a fetched task as ``REMOTE:T/N``; any other value as it is."""
        return store.shown_id(task, cid)

    nodes: dict[str, Node] = {}
    steps: list[Step] = []
    pos: str | None = None
    promoted: str | None = None
    for rec in recs:
        ev = rec.event
        d = ev.data if isinstance(ev.data, dict) else {}
        t = ev.type
        if t == "save" and isinstance(d.get("id"), str):
            cid = plain(shown(d["id"]))
            if cid not in nodes:
                nodes[cid] = Node(cid, plain(d.get("kind") or "manual"), plain(d.get("message") or ""), plain(ev.at),
                                  d.get("commit") if isinstance(d.get("commit"), str) else None, pos)
            pos = cid
            steps.append(Step("save", plain(ev.at), cid, f"checkpoint saved: {plain(cid)}"))
        elif t in ("restore", "undo"):
            target = plain(shown(d.get("target")))
            # one that changed nothing is no jump, whatever checkpoint the state left is saved as
            src = target if ledger.changed_nothing(d) else plain(shown(d["from"])) if isinstance(d.get("from"), str) else pos
            only = f" (only {len(d['paths'])} path(s))" if isinstance(d.get("paths"), list) and d["paths"] else ""
            verb = "undo: back to" if t == "undo" else "restored"
            steps.append(Step(t, plain(ev.at), target, f"{verb} {target}{only}", source=src))
            pos = target
        elif t == "verify":
            cid = plain(shown(d.get("id")))
            word = result_word(d.get("status"), d.get("exit_code"))
            res = Result(plain(d.get("verifier")), word, d.get("exit_code"), bool(d.get("reused")))
            if cid in nodes:
                nodes[cid].results.append(res)
            reused = ledger.reused_text(d, lambda src: plain(shown(src)))
            steps.append(Step("verify", plain(ev.at), cid, f"{res.verifier} {word} on {cid}{reused}", ok=res.ok))
        elif t == "promote":
            promoted = plain(shown(d.get("id")))
            steps.append(Step("promote", plain(ev.at), promoted, f"promoted {promoted}" + (" (forced)" if d.get("forced") is True else "")))
        elif t == "drop" and d.get("unpromoted"):  # the promoted checkpoint went, and its promotion with it
            if plain(shown(d.get("id"))) == promoted:
                promoted = None
            steps.append(Step("other", plain(ev.at), None, plain(ledger.describe_in(task, ev, rec.card))))
        elif t == "handoff":
            cid = plain(shown(d.get("id")))
            if cid in nodes:
                nodes[cid].handoff = True
            steps.append(Step("handoff", plain(ev.at), cid, f"handoff receipt given at {cid}"))
        else:
            steps.append(Step("other", plain(ev.at), None, plain(ledger.describe_in(task, ev, rec.card))))
    if promoted in nodes:
        nodes[promoted].promoted = True
    if nodes:
        live = {f"{task}/{n}": oid for n, oid in store.numbered(repo, task)}
        for n in nodes.values():
            n.gone = live.get(n.id) is None or (n.commit is not None and live[n.id] != n.commit)
            if not n.gone or live.get(n.id) is None:
                continue
            try:  # its number names another commit: another checkpoint (this one went), or damage
                store.load(repo, live[n.id], id=n.id)
            except CkptError:
                n.gone, n.damaged = False, True
    card = recs[-1].card if recs else None
    return Timeline(task, card, nodes, steps, assign_lanes(nodes.values()))


#: The most lanes a timeline is drawn in.  ``report --html`` gives each lane a row of its picture
#: (74 pixels), and a ledger is stored, possibly foreign text: one that restores before every save
#: must not make a page tens of thousands of rows high.
MAX_LANES = 12


def assign_lanes(nodes: Iterable[Node]) -> int:
    """Number the lanes ``nodes`` (a task's checkpoints in save order) are drawn in: set each
    one's ``lane`` and return how many lanes there are (1 to :data:`MAX_LANES`; 1 for none).

    A checkpoint goes on the lane whose newest checkpoint (its tip) is its parent: work that went
    straight on.  One whose parent is a checkpoint saved before it on this timeline but is no
    longer a tip (work after a restore to an older checkpoint) opens a new lane, while fewer than
    :data:`MAX_LANES` are open.  Any other opens none: it goes on the lane of the checkpoint saved
    just before it (the first checkpoint on lane 0) and becomes that lane's tip.  That is a
    checkpoint whose parent is not a checkpoint saved before it on this timeline (saved after a
    restore to another task's checkpoint, to a name this ledger never saved, or to one it saved
    later), or a branch once :data:`MAX_LANES` lanes are open; the restore that led to it is still
    a jump (``|<-`` in ``log --graph``, an arrow on the page when both ends are checkpoints of the
    task), and the page still draws the edge from its parent when that is one of them.

    One pass with a dictionary look-up per checkpoint: linear in the checkpoints, whatever the
    number of lanes.  Raises nothing."""
    tips: dict[str, int] = {}  # the newest checkpoint of each lane -> that lane
    tip_of: list[str] = []  # lane -> its newest checkpoint
    seen: set[str] = set()
    prev = 0  # the lane of the checkpoint saved last
    for n in nodes:
        lane = tips.get(n.parent) if n.parent is not None else None
        if lane is None:
            branch = n.parent is not None and n.parent in seen
            if not tip_of or (branch and len(tip_of) < MAX_LANES):
                lane = len(tip_of)
                tip_of.append(n.id)
            else:
                lane = prev
        tips.pop(tip_of[lane], None)
        tips[n.id] = lane
        tip_of[lane] = n.id
        n.lane = prev = lane
        seen.add(n.id)
    return max(1, len(tip_of))


def graph_lines(tl: Timeline) -> list[str]:
    """``log --graph``: one line per event, checkpoints as ``*`` (``o`` for a pre-restore save),
    verifier results beneath them, a restore or undo as a jump arrow naming where it went (``|=``
    when the worktree held its target already: no jump), ``@`` for a promotion and ``>`` for a handoff.  A checkpoint saved after a jump says which
    checkpoint it grew from."""
    out: list[str] = []
    last_save: str | None = None
    # ids in one column however long (origin:fix-auth-null/12 is 24 characters)
    width = max([18] + [len(n.id) for n in tl.nodes.values()])
    for s in tl.steps:
        time = s.at.replace("T", " ").rstrip("Z")
        if s.type == "save" and s.node in tl.nodes:
            n = tl.nodes[s.node]
            mark = "o" if n.kind == "pre-restore" else "*"
            grew = f"  (from {n.parent})" if n.parent and n.parent != last_save else ""
            gone = "  [pruned]" if n.gone else "  [damaged]" if n.damaged else ""
            out.append(f"{mark} {n.id:<{width}} {n.kind:<11} {n.message}{grew}{gone}".rstrip() + f"  {time}")
            last_save = n.id
        elif s.type == "verify":
            out.append(f"|   {'pass' if s.ok else 'FAIL'}  {s.text}  {time}")
        elif s.type in ("restore", "undo"):
            out.append(f"|<- {s.text}  (left {s.source})  {time}" if s.source != s.node
                       else f"|=  {s.text}  (the worktree held it already)  {time}")
            last_save = s.node
        elif s.type == "promote":
            out.append(f"@   {s.text}  {time}")
        elif s.type == "handoff":
            out.append(f">   {s.text}  {time}")
        else:
            out.append(f"|   {s.text}  {time}")
    # every field above was escaped where it was read; escaping each drawn line as well keeps
    # the one-event-one-line promise even for a field a later change forgets to pass through plain
    return [plain(line) for line in out]
