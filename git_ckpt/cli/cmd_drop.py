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
    from ..drop import DropResult, drop, drop_damaged
    from ..errors import CorruptError

    repo = open_repo()
    task = store.current_task(repo)
    cps: list[store.Checkpoint | str] = []
    for spec in ckpts:
        try:
            cps.append(store.resolve(repo, spec, task))
        except CorruptError:  # a damaged one (check / log --verify name it): by its ref
            if store.damaged_ref(repo, spec, task) is None:
                raise
            cps.append(spec)
    done: list[DropResult] = []
    for cp in cps:
        if isinstance(cp, str):
            d = drop_damaged(repo, cp, task)
            assert d is not None
            done.append(d)
        else:
            done.append(drop(repo, cp, force=force))

    def human() -> None:
        for d in done:
            say(f"dropped {d.id} ({d.commit[:12]})" + (f" although it was protected ({d.protected})" if d.forced else "")
                + (" (damaged: it could not be read)" if d.protected == "damaged" else ""))
        say(f"{'its' if len(done) == 1 else 'their'} objects are freed by git gc once nothing else reaches them")

    emit("drop", [d.to_json() for d in done], as_json, human)
    return 0
