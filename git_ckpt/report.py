"""``git ckpt report --html FILE``: one self-contained page about a task, to attach to a pull
request — the timeline (an inline SVG: checkpoints, branches after restores, jumps, verifier
pass/fail, the promoted checkpoint, handoffs), the task card, and per checkpoint its changed
files and verifier results.  No network and no script: inline CSS and inline SVG only, under a
Content-Security-Policy that allows nothing else.  Every stored string is HTML-escaped."""

from __future__ import annotations

import html
from typing import Any, Iterator

from . import store
from .errors import CkptError
from .gitcore import EMPTY_TREE, Repo
from .ledger import now_iso
from .model import CardItem, escape_controls, path_display
from .timeline import Step, Timeline, build

STEP_X, LANE_Y, LEFT, TOP, R = 92, 74, 50, 46, 15
MAX_FILES = 200


def _e(text: object) -> str:
    """Stored text for the page: control and invisible format characters shown as escapes (as in
    the terminal; a raw ESC or CR in the file reaches whoever cats it) and markup escaped."""
    return html.escape(escape_controls(str(text if text is not None else "")), quote=True)


def _slug(cid: str) -> str:
    return "ckpt-" + "".join(c if c.isalnum() else "-" for c in cid)


def changed_files(repo: Repo, tl: Timeline, cid: str) -> list[tuple[str, str]] | None:
    """``(letter, path)`` changes of checkpoint ``cid`` against the checkpoint it grew from (the
    nearest one whose commit is here; its base commit for the first); None when the checkpoint
    is gone (pruned)."""
    n = tl.nodes[cid]
    try:
        cp = store.load(repo, n.commit, id=cid) if n.commit else store.resolve(repo, cid)
    except CkptError:
        return None

    def olds() -> Iterator[str]:
        """Against the checkpoint it grew from; one whose commit is not here (dropped before a
        teammate pushed, so never fetched) gives way to the one that grew from, then the base.
        Walked only as far as needed, and through at most as many checkpoints as the timeline
        has: a forged ledger's parents can go round in a circle (with no commits on it, that
        walk once never ended)."""
        parent = tl.nodes.get(n.parent) if n.parent else None
        for _ in range(len(tl.nodes)):
            if parent is None:
                break
            if parent.commit:
                yield parent.commit
            parent = tl.nodes.get(parent.parent) if parent.parent else None
        yield cp.manifest.base or EMPTY_TREE

    for old in olds():
        try:
            return [(c.status, path_display(c.path)) for c in repo.diff_trees(old, cp.tree)]
        except CkptError:
            continue
    return None


def _is_jump(s: Step) -> bool:
    """Whether step ``s`` is a jump: a restore or undo that left one checkpoint for another (its
    ``source`` is not its ``node``)."""
    return s.type in ("restore", "undo") and s.source != s.node


def _jumps(tl: Timeline) -> int:
    """How many jumps (restores and undos that moved to another checkpoint) ``tl`` holds: the
    count the page's summary line and ``report --json`` show.  Raises nothing."""
    return sum(1 for s in tl.steps if _is_jump(s))


def svg(tl: Timeline) -> str:
    """The timeline drawing."""
    ids = list(tl.nodes)
    col = {cid: i for i, cid in enumerate(ids)}

    def xy(cid: str) -> tuple[int, int]:
        return LEFT + col[cid] * STEP_X, TOP + tl.nodes[cid].lane * LANE_Y

    width = LEFT * 2 + max(0, len(ids) - 1) * STEP_X
    height = TOP + (tl.lanes - 1) * LANE_Y + 70
    parts = [f'<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="timeline of task {_e(tl.task)}">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#8250df"/></marker></defs>']
    for cid, n in tl.nodes.items():  # edges: the checkpoint each one grew from
        if n.parent in col:
            (x1, y1), (x2, y2) = xy(n.parent), xy(cid)
            parts.append(f'<path class="edge" d="M{x1},{y1} C{(x1 + x2) / 2},{y1} {(x1 + x2) / 2},{y2} {x2},{y2}" '
                         'fill="none" stroke="#8c959f" stroke-width="2"/>')
    for s in tl.steps:  # jumps: restores and undos
        if _is_jump(s) and s.source in col and s.node in col:
            (x1, y1), (x2, y2) = xy(s.source), xy(s.node)
            lift = 34 + 6 * abs(col[s.source] - col[s.node])
            parts.append(f'<path class="jump {s.type}" d="M{x1},{y1 - R} C{x1},{y1 - R - lift} {x2},{y2 - R - lift} {x2},{y2 - R - 2}" '
                         f'fill="none" stroke="#8250df" stroke-width="2" stroke-dasharray="5 4" marker-end="url(#arrow)">'
                         f'<title>{_e(s.text)} at {_e(s.at)}</title></path>')
    for cid, n in tl.nodes.items():
        x, y = xy(cid)
        passed = [r for r in n.results if r.ok]
        failed = [r for r in n.results if not r.ok]
        state = "failed" if failed and not passed else ("passed" if passed and not failed else ("mixed" if n.results else "none"))
        fill = {"passed": "#1a7f37", "failed": "#cf222e", "mixed": "#bf8700", "none": "#0969da"}[state]
        if n.kind == "pre-restore":
            fill = "#6e7781"
        if n.gone or n.damaged:
            fill = "#d0d7de"
        tip = f"{cid} ({n.kind}{', pruned' if n.gone else ', damaged' if n.damaged else ''}) {n.message} — {n.at}" + "".join(f"\n{r.verifier}: {r.word}{' (reused)' if r.reused else ''}" for r in n.results)
        parts.append(f'<g class="node {_e(n.kind)} {state}{" promoted" if n.promoted else ""}{" gone" if n.gone else ""}{" damaged" if n.damaged else ""}" id="{_slug(cid)}-dot" data-id="{_e(cid)}">'
                     f'<a href="#{_slug(cid)}"><title>{_e(tip)}</title>')
        if n.promoted:
            parts.append(f'<circle cx="{x}" cy="{y}" r="{R + 6}" fill="none" stroke="#d4a72c" stroke-width="4"/>')
        parts.append(f'<circle cx="{x}" cy="{y}" r="{R}" fill="{fill}" stroke="#ffffff" stroke-width="2"/>')
        parts.append(f'<text x="{x}" y="{y + 4}" text-anchor="middle" font-size="11" fill="#ffffff">{_e(cid.rpartition("/")[2])}</text>')
        for i, r in enumerate(n.results[-6:]):
            rx = x - 15 + i * 6
            parts.append(f'<rect class="result {"pass" if r.ok else "fail"}" x="{rx}" y="{y + R + 5}" width="5" height="9" '
                         f'fill="{"#1a7f37" if r.ok else "#cf222e"}"><title>{_e(r.verifier)}: {_e(r.word)}{" (reused)" if r.reused else ""}</title></rect>')
        if n.handoff:
            parts.append(f'<path class="handoff" d="M{x + R - 2},{y - R - 12} l0,12 M{x + R - 2},{y - R - 12} l9,4 l-9,4" '
                         'stroke="#0969da" stroke-width="2" fill="#0969da"><title>handoff receipt given here</title></path>')
        parts.append(f'<text x="{x}" y="{y + R + 27}" text-anchor="middle" font-size="10" fill="#57606a">{_e(cid)}</text>')
        parts.append("</a></g>")
    parts.append("</svg>")
    return "".join(parts)


CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2328;margin:24px auto;max-width:1100px;padding:0 16px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
.meta{color:#57606a} .scroll{overflow-x:auto;border:1px solid #d0d7de;border-radius:6px;background:#f6f8fa;padding:8px}
table{border-collapse:collapse;width:100%;margin:6px 0} td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa} code{font-family:ui-monospace,monospace;font-size:12.5px} .pass{color:#1a7f37;font-weight:600}
.fail{color:#cf222e;font-weight:600} .legend span{margin-right:14px} .ckpt{margin:14px 0;padding:8px 12px;border:1px solid #d0d7de;border-radius:6px}
.ckpt h3{margin:0 0 4px;font-size:15px} ol.steps{padding-left:22px} ol.steps li{margin:1px 0}
.ckpt td:first-child{width:2.5em}
"""

def page(repo: Repo, task: str, tl: Timeline | None = None) -> str:
    """The whole HTML page for ``task`` (from ``tl``, its timeline, when the caller has built it
    already: :func:`git_ckpt.timeline.build`).  Raises what ``build`` raises for a ledger that
    does not read."""
    tl = build(repo, task) if tl is None else tl
    card = tl.card
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'; img-src data:">',
           f"<title>git ckpt report: {_e(task)}</title><style>{CSS}</style></head><body>",
           f"<h1>Task {_e(task)}</h1>",
           f'<p class="meta">{tl.live} checkpoint(s){f" ({tl.gone} more pruned or dropped)" if tl.gone else ""}{f" ({tl.damaged} damaged: git ckpt check --task {_e(task)} says how)" if tl.damaged else ""}, {sum(len(n.results) for n in tl.nodes.values())} verifier run(s), '
           f'{_jumps(tl)} jump(s); generated {now_iso()} by git ckpt report</p>']
    out.append("<h2>Timeline</h2>")
    if tl.nodes:
        out.append(f'<div class="scroll">{svg(tl)}</div>')
        out.append('<p class="legend meta"><span style="color:#0969da">&#9679; saved</span><span style="color:#1a7f37">&#9679; verified: passed</span>'
                   '<span style="color:#cf222e">&#9679; failed</span><span style="color:#6e7781">&#9679; pre-restore</span>'
                   '<span style="color:#d4a72c">&#9711; promoted</span><span style="color:#8250df">&#8631; restore / undo</span></p>')
    else:
        out.append("<p>No checkpoints yet.</p>")
    out.append("<h2>Task card</h2><table>")
    if card is not None:
        from .card import evidence_suffix, evidence_texts

        def ev(item: CardItem) -> str:  # the words task show and the handoff print
            return evidence_suffix(evidence_texts(task, item))

        rows = [("goal", card.goal), *(("constraint", c) for c in card.constraints), *(("acceptance", a) for a in card.acceptance),
                *(("read", r) for r in card.reads), *(("fact", f.text + ev(f)) for f in card.facts),
                *(("decided", d.text + ev(d)) for d in card.decisions),
                *(("ruled out", f.text + (f" ({f.reason})" if f.reason else "") + ev(f)) for f in card.failed),
                *(("assumed", a.text + (f" ({a.status})" if a.status else "") + ev(a)) for a in card.assumptions),
                *(("question", q.text + ev(q)) for q in card.questions),
                ("hypothesis", card.hypothesis), ("next", card.next), ("done", "yes" if card.done else "")]
        out += [f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows if v]
    out.append("</table>")
    out.append("<h2>Checkpoints</h2>")
    for cid, n in reversed(list(tl.nodes.items())):
        out.append(f'<div class="ckpt" id="{_slug(cid)}"><h3>{_e(cid)}{" &#9733; promoted" if n.promoted else ""}</h3>')
        out.append(f'<p class="meta">{_e(n.kind)} &middot; {_e(n.at)}{" &middot; grew from " + _e(n.parent) if n.parent else ""}'
                   f'{" &middot; commit <code>" + _e(n.commit[:12]) + "</code>" if n.commit else ""}</p>')
        if n.message:
            out.append(f"<p>{_e(n.message)}</p>")
        if n.results:
            out.append("<table><tr><th>verifier</th><th>result</th><th>exit</th></tr>")
            out += [f'<tr><td>{_e(r.verifier)}</td><td class="{"pass" if r.ok else "fail"}">{_e(r.word)}{" (reused)" if r.reused else ""}</td>'
                    f"<td>{_e(r.exit_code)}</td></tr>" for r in n.results]
            out.append("</table>")
        files = None if n.gone or n.damaged else changed_files(repo, tl, cid)
        if files is None:
            out.append('<p class="meta">(damaged: its ref names no checkpoint; not read)</p>' if n.damaged
                       else '<p class="meta">(pruned or dropped: no longer a checkpoint here)</p>')
        elif files:
            out.append(f"<details{' open' if len(files) <= 12 else ''}><summary>{len(files)} changed file(s)</summary><table>")
            out += [f"<tr><td><code>{_e(s)}</code></td><td><code>{_e(p)}</code></td></tr>" for s, p in files[:MAX_FILES]]
            if len(files) > MAX_FILES:
                out.append(f"<tr><td></td><td>… and {len(files) - MAX_FILES} more</td></tr>")
            out.append("</table></details>")
        else:
            out.append('<p class="meta">no file changes</p>')
        out.append("</div>")
    out.append("<h2>Events</h2><ol class=\"steps\">")
    out += [f"<li><code>{_e(s.at)}</code> {_e(s.text)}</li>" for s in tl.steps]
    out.append("</ol>")
    out.append("</body></html>\n")
    return "".join(x if x.endswith("\n") else x + "\n" for x in out)


def data(repo: Repo, task: str, tl: Timeline | None = None) -> dict[str, Any]:
    """What ``report --json`` returns: the counts the page shows (from ``tl`` when given, as
    :func:`page`).  Raises what :func:`git_ckpt.timeline.build` raises."""
    tl = build(repo, task) if tl is None else tl
    return {"task": task, "checkpoints": tl.live, "pruned": tl.gone, "damaged": tl.damaged, "lanes": tl.lanes,
            "jumps": _jumps(tl),
            "promoted": next((c for c, n in tl.nodes.items() if n.promoted), None)}


__all__ = ["page", "data", "svg", "changed_files"]
