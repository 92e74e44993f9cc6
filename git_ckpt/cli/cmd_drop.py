"""git ckpt drop: delete checkpoints (their refs), recording a drop event for each."""

from __future__ import annotations

import click

from . import emit, json_option, open_repo, say


@click.command("drop")
@click.argument("ckpts", nargs=-1, required=True)
@click.option("--force", "-f", is_flag=True, help="Drop even a promoted, handoff or restore-protected checkpoint.")
@json_option
def command(ckpts: tuple[str, ...], force: bool, as_json: bool) -> int:
    """Delete checkpoint CKPT... (T/N, N, @): its ref is removed and a drop event logged.

    Its number is never given to another checkpoint.  The objects stay until git gc prunes
    them (git update-ref refs/ckpt/T/N COMMIT brings it back until then).  The promoted one,
    handoff points and both sides of the last restore are refused unless --force.
    """
    from .. import store
    from ..drop import drop

    repo = open_repo()
    task = store.current_task(repo)
    cps = [store.resolve(repo, spec, task) for spec in ckpts]
    done = [drop(repo, cp, force=force) for cp in cps]

    def human() -> None:
        for d in done:
            say(f"dropped {d.id} ({d.commit[:12]})" + (f" although it was the {d.protected}" if d.forced else ""))
        say("its objects are freed by git gc once nothing else reaches them")

    emit("drop", [d.to_json() for d in done], as_json, human)
    return 0
