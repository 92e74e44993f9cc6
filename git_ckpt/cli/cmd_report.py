"""git ckpt report: a self-contained HTML page about a task."""

from __future__ import annotations

import click

from . import NAME, emit, json_option, open_repo, say


@click.command("report")
@click.option("--html", "html_file", required=True, type=click.Path(dir_okay=False, writable=True),
              help="Write the page to FILE ('-' for stdout).")
@click.option("--task", default=None, type=NAME, help="Report on this task instead of the current one.")
@json_option
def command(html_file: str, task: str | None, as_json: bool) -> int:
    """Write one self-contained HTML page about TASK: its timeline, card, per-checkpoint changed files and verifier results.

    The page needs no network and runs no script (inline CSS and SVG), so it can be attached to
    a pull request.
    """
    from .. import report, store, timeline

    repo = open_repo()
    task = store.existing_task(repo, task, fetched=True) if task else store.current_task(repo)
    tl = timeline.build(repo, task)  # once, for the page and its summary
    text = report.page(repo, task, tl)
    if html_file == "-":
        click.echo(text, nl=False)
        return 0
    import os

    from ..errors import IOFailure

    try:
        store.atomic_write(os.path.abspath(html_file), text.encode("utf-8"))
    except OSError as exc:  # a path the user named: any failure to write it is theirs to fix (exit 8)
        raise IOFailure(f"cannot write {html_file}: {exc.strerror or exc}", "name a file in a directory you can write") from None
    res = dict(report.data(repo, task, tl), file=html_file)
    emit("report", res, as_json, lambda: say(f"wrote {html_file}: task {task}, {res['checkpoints']} checkpoint(s)"
                                                       + (f" ({res['pruned']} more pruned or dropped)" if res["pruned"] else "")
                                                       + f", {res['jumps']} jump(s)"))
    return 0
