"""git ckpt save: snapshot the worktree as the next checkpoint of the current task."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from . import NAME, emit, json_option, open_repo, say, warn

if TYPE_CHECKING:
    from ..model import Kind


@click.command("save")
@click.option("-m", "--message", default="", help="What this checkpoint is.")
@click.option("--next", "next_", default=None, help="The next step (recorded on the task card).")
@click.option("--hypothesis", default=None, help="What you expect this state to show.")
@click.option("--task", default=None, type=NAME, help="Save into this existing task instead of the current one (task start begins a task).")
@click.option("--allow-empty", is_flag=True, help="Save even when nothing changed since the latest checkpoint.")
@click.option("--kind", type=click.Choice(["manual", "auto"]), default="manual", help="Recorded in the manifest.")
@json_option
def command(message: str, next_: str | None, hypothesis: str | None, task: str | None, allow_empty: bool, kind: Kind, as_json: bool) -> int:
    """Save tracked and untracked files, the index, HEAD and the overlay as refs/ckpt/TASK/N.

    Prints "checkpoint saved: TASK/N".  When nothing changed since the latest checkpoint it
    says so and saves nothing (exit 0), unless --allow-empty.
    """
    from .. import config, store
    from ..errors import CkptError
    from ..snapshot import save

    repo = open_repo()
    cfg = config.load(repo)
    task = store.writable_task(repo, task) if task else store.current_task(repo)
    from ..ledger import card

    try:
        done = card(repo, task).done
    except CkptError:
        done = False
    res = save(repo, cfg, task=task, message=message, kind=kind, next=next_, hypothesis=hypothesis, allow_empty=allow_empty)
    if done and res.created:  # (said only when something was saved into it)
        warn(f"task {task} is marked done; saved into it anyway (git ckpt task start NAME begins a new one)")
    for w in res.warnings:
        warn(w)
    emit("save", res.to_json(), as_json, lambda: say(res.text()))
    return 0
