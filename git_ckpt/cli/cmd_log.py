"""git ckpt log: the ledger of a task."""

from __future__ import annotations

import click

from ..model import escape
from ..words import counted
from . import NAME, emit, json_option, open_repo, say


def _since(text: str) -> str:
    """``--since``: an RFC 3339 UTC time, or an age like ``90m``, ``12h``, ``3d`` → RFC 3339."""
    import re
    import time

    from ..errors import UsageError

    m = re.fullmatch(r"\s*(\d+)\s*([smhdw])\s*", text)
    if m:
        secs = int(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[m.group(2)]
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - secs))
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?Z?)?", text):
        return text
    raise UsageError(f"--since {text!r}: give a UTC time (2026-11-30T10:00:00Z) or an age (90m, 12h, 3d)")


@click.command("log")
@click.option("--task", default=None, type=NAME, help="Show this task instead of the current one.")
@click.option("--verify", "verify_", is_flag=True, help="Re-check the hash chain; exit 1 naming the first broken link.")
@click.option("--graph", is_flag=True, help="Draw the timeline: checkpoints, verifier pass/fail, restores and undos as jumps, promotions, handoffs.")
@click.option("-n", "--max-count", "max_count", type=click.IntRange(min=0), default=None,
              help="Only the newest N events (read alone, however long the ledger).")
@click.option("--since", default=None, help="Only events at or after this UTC time (2026-11-30T10:00:00Z) or this recent (90m, 12h, 3d).")
@json_option
def command(task: str | None, verify_: bool, graph: bool, max_count: int | None, since: str | None, as_json: bool) -> int:
    """Print the ledger: one terminal-friendly line per event (save, restore, verify, promote…)."""
    from .. import ledger, store
    from ..errors import CheckFailed

    repo = open_repo()
    task = store.existing_task(repo, task, fetched=True) if task else store.current_task(repo)
    if verify_:
        problems = ledger.verify(repo, task)
        n = len(ledger.records(repo, task)) if not problems else None
        emit("log", {"task": task, "ok": not problems, "problems": problems}, as_json,
             lambda: say(f"ledger of {task}: intact ({counted(n or 0, 'event')})") if not problems else None)
        if problems:
            first = problems[0]
            if store.NOT_MADE_BY_US in first:  # a hand-made ref, not the ledger's fault
                text = f"task {task}: {first}"
                fix = f"git ckpt drop {first.split(' ', 1)[0].removeprefix(store.PREFIX)} removes it (the ledger records that)"
            else:
                text = f"ledger of {task} is broken: {first}"
                fix = "the ledger was rewritten or edited; compare with a teammate's copy (git ckpt fetch)"
            if as_json:  # one envelope only: the result above names every problem
                return CheckFailed.exit_code
            raise CheckFailed(text, fix)
        return 0
    if graph:
        import dataclasses

        from .. import timeline

        tl = timeline.build(repo, task)
        steps = [s for s in tl.steps if not since or s.at >= _since(since)]
        tl.steps = steps

        def draw() -> None:
            if not steps:
                say(f"no events in task {task}")
                return
            say("\n".join(timeline.graph_lines(tl)))

        # the JSON result only when it is asked for: asdict of every node and step took longer
        # than the rest of a text graph of a long ledger
        emit("log", {"task": task, "lanes": tl.lanes, "nodes": [dataclasses.asdict(n) for n in tl.nodes.values()],
                     "steps": [dataclasses.asdict(s) for s in steps]} if as_json else None, as_json, draw)
        return 0
    recs = ledger.iter_records(repo, task, max_count)
    if since:
        cutoff = _since(since)
        recs = (r for r in recs if r.event.at >= cutoff)

    def human() -> None:
        shown = 0
        lines: list[str] = []
        for r in recs:  # decoded and written a block at a time: `log | head` stops early
            lines.append(f"#{r.event.seq:<4} {escape(r.event.at)}  {escape(ledger.describe_in(task, r.event, r.card))}\n")
            shown += 1
            if len(lines) >= 64:
                click.echo("".join(lines), nl=False)
                lines.clear()
        click.echo("".join(lines), nl=False)
        if not shown and max_count != 0:
            say(f"no events in task {task}")

    from ..model import to_builtins

    emit("log", [to_builtins(r.event) for r in recs] if as_json else None, as_json, human)
    return 0
