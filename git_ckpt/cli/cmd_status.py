"""git ckpt status: where this worktree stands."""

from __future__ import annotations

import click

from . import emit, json_option, open_repo, say


@click.command("status")
@json_option
def command(as_json: bool) -> int:
    """Show the task, latest and promoted checkpoints, whether the worktree matches the latest,
    an interrupted restore, and whether the commit gate is on."""
    from ..status import status

    repo = open_repo()
    st = status(repo)

    def human() -> None:
        say(f"task:      {st['task']}")
        say(f"latest:    {st['latest'] or '(none)'}")
        say(f"promoted:  {st['promoted'] or '(none)'}")
        if st["matches"]:
            say(f"worktree:  matches {st['matches']}")
        elif st["latest"]:
            say(f"worktree:  changed since {st['latest']}")
        if st["restore_interrupted"]:
            say("restore:   interrupted; run git ckpt restore --continue or git ckpt undo")
        if st["gate"] and not st["gate_active"]:
            say(f"gate:      {st['gate_state']}")
        else:
            say("gate:      " + ("on" if st["gate"] else "off") + (f" ({st['gate_state']})" if st["gate"] else ""))

    emit("status", st, as_json, human)
    return 0
