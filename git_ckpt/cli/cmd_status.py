"""git ckpt status: where this worktree stands."""

from __future__ import annotations

import click

from ..model import escape
from ..words import short_base
from . import emit, json_option, open_repo, say


@click.command("status")
@json_option
def command(as_json: bool) -> int:
    """Show the task, latest and promoted checkpoints, whether the worktree (files and index)
    matches @ (the checkpoint restored or last saved) and whether HEAD moved since it, an
    interrupted restore, and whether the commit gate is on."""
    from ..status import status

    repo = open_repo()
    st = status(repo)

    def human() -> None:
        say(f"task:      {st['task']}")
        damaged = {k: f" (damaged: {escape(v)}; git ckpt check --all)" for k, v in st["damaged"].items()}
        say(f"latest:    {st['latest'] or '(none)'}{damaged.get('latest', '')}")
        say(f"promoted:  {st['promoted'] or '(none)'}{damaged.get('promoted', '')}"
            + (" (dropped since: git ckpt drop --force promoted ends the promotion)" if st["promoted_dropped"] else ""))
        wt = st["worktree"]
        if wt:
            at = " (@)" if wt["checkpoint"] == wt["at"] else ""
            say(f"worktree:  {'matches' if wt['files_match'] else 'changed since'} {wt['checkpoint']}{at}")
            if wt["head_commits"]:
                say(f"HEAD:      {wt['head'][:12]} commits {wt['checkpoint']} on its base {(wt['base'] or '')[:12]}".rstrip()
                    if wt["base"] else f"HEAD:      {wt['head'][:12]} commits {wt['checkpoint']} (the first commit)")
            elif wt["head_moved"]:
                say(f"HEAD:      not where {wt['checkpoint']} was saved (saved on {short_base(wt['base'])}, HEAD is {short_base(wt['head'])})")
        elif st["latest"] and "latest" in st["damaged"] and not st["unknown"]:
            say(f"worktree:  not compared: {st['latest']} is damaged")
        elif st["latest"]:
            say(f"worktree:  unknown ({escape(st['unknown'] or 'it could not be read')}); latest is {st['latest']}")
        if st["restore_interrupted"]:
            say("restore:   interrupted; run git ckpt restore --continue or git ckpt undo")
        elif st["restore_running"]:
            say("restore:   running (another git ckpt restore or undo holds this worktree; wait for it)")
        if st["gate"] and not st["gate_active"]:
            say(f"gate:      {st['gate_state']}")
        else:
            say("gate:      " + ("on" if st["gate"] else "off") + (f" ({st['gate_state']})" if st["gate"] else ""))

    emit("status", st, as_json, human)
    return 0
