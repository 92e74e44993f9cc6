"""A picture of a task: its ledger as a timeline of checkpoints, verifier results, jumps
(restores and undos), promotions and handoffs — for ``log --graph`` and ``report --html``.

The ledger is read once (:func:`git_ckpt.ledger.records`).  Each checkpoint becomes a
:class:`Node` whose ``parent`` is the checkpoint the worktree was at when it was saved (the one
saved or restored last), so work that went on after a restore branches off the checkpoint it
restored; ``lane`` numbers those branches for drawing.  Everything shown comes from stored,
possibly foreign text: :func:`plain` escapes control characters, the HTML page escapes markup.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import ledger, store
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
    task: str
    card: Card | None
    nodes: dict[str, Node]
    steps: list[Step]
    lanes: int

    @property
    def live(self) -> int:
        """How many of the task's checkpoints still exist (pruned and dropped ones not counted)."""
        return sum(1 for n in self.nodes.values() if not n.gone)

    @property
    def gone(self) -> int:
        """How many checkpoints on the timeline were pruned (gc) or dropped since."""
        return sum(1 for n in self.nodes.values() if n.gone)


def build(repo: Repo, task: str) -> Timeline:
    """The timeline of ``task`` from its ledger (no ledger: an empty timeline).  For a fetched
    task ``REMOTE:T`` the ledger names its checkpoints ``T/N`` (as the teammate saved them):
    they are shown, and looked up under ``refs/ckpt-remotes/REMOTE/T/``, as ``REMOTE:T/N``."""
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
            src = plain(shown(d["from"])) if isinstance(d.get("from"), str) else pos
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
            steps.append(Step("promote", plain(ev.at), promoted, f"promoted {promoted}" + (" (forced)" if d.get("forced") else "")))
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
    tips: list[str | None] = []
    for n in nodes.values():  # save order
        lane = next((i for i, tip in enumerate(tips) if tip is not None and tip == n.parent), None)
        if lane is None:
            lane = len(tips) if tips else 0
            if lane == len(tips):
                tips.append(None)
        tips[lane] = n.id
        n.lane = lane
    card = recs[-1].card if recs else None
    return Timeline(task, card, nodes, steps, max(1, len(tips)))


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
            gone = "  [pruned]" if n.gone else ""
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
