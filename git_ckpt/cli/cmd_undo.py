"""git ckpt undo: return to the state before the last restore."""

from __future__ import annotations

import click

from . import json_option, open_repo


@click.command("undo")
@click.option("--dry-run", "-n", is_flag=True, help="Print the plan; change nothing.")
@json_option
def command(dry_run: bool, as_json: bool) -> int:
    """Return to the state before the last restore (or undo) in this worktree.

    Undo is itself a restore, so a second undo returns to where the first started.  After an
    interrupted restore it goes back to the state saved before it.
    """
    from .. import store
    from ..restore import undo
    from .cmd_restore import report

    from . import jump_config

    repo = open_repo()
    cfg = jump_config(repo)
    res = undo(repo, cfg, task=store.current_task(repo), dry_run=dry_run)
    report(res, as_json, "undo")
    return 0
