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

    All or nothing: every CKPT is resolved and judged first, and none is dropped when one is
    unknown or refused.  Its number is never given to another checkpoint.  The objects stay
    until git gc prunes them (git update-ref refs/ckpt/T/N COMMIT brings it back until then).
    The promoted one, handoff points and both sides of the last restore are refused unless
    --force; dropping the promoted one ends the promotion (refs/ckpt/T/promoted goes too).
    """
    from .. import drop as drop_mod, store
    from ..errors import CkptError, UsageError

    repo = open_repo()
    task = store.current_task(repo)
    several = len(ckpts) > 1
    try:
        planned = drop_mod.plan(repo, list(ckpts), task)
    except CkptError as exc:
        if several:  # say that the others were left alone too
            exc.message += "; nothing was dropped"
        raise
    no = drop_mod.refused(planned, force)
    if no:
        ids = [p.cp.id if p.cp else p.spec for p in no]
        again = " ".join(["git ckpt drop --force", *ckpts])
        if not several:
            raise UsageError(f"{ids[0]} is protected ({no[0].why}); not dropped", f"{again} drops it anyway (the ledger records that)")
        what = (f"{ids[0]} is protected ({no[0].why})" if len(no) == 1
                else " and ".join(f"{i} ({p.why})" for i, p in zip(ids, no)) + " are protected")
        raise UsageError(f"{what}; nothing was dropped",
                         f"{again} drops them all anyway (the ledger records that), or leave {' and '.join(ids)} out")
    done: list[drop_mod.DropResult] = []

    def human() -> None:
        for d in done:
            say(f"dropped {d.id} ({d.commit[:12]})" + (f" although it was protected ({d.protected})" if d.forced else "")
                + (" (damaged: it could not be read)" if d.protected == "damaged" else ""))
            if d.unpromoted:
                say(f"task {d.unpromoted} has no promoted checkpoint now (refs/ckpt/{d.unpromoted}/promoted was deleted): "
                    "git ckpt verify promotes another")
        if done:
            say(f"{'its' if len(done) == 1 else 'their'} objects are freed by git gc once nothing else reaches them")

    try:
        for p in planned:
            done.append(drop_mod.apply(repo, p, force=force))
    except CkptError:
        if done and not as_json:  # a ref changed meanwhile: say what did go before the error
            human()
        raise
    emit("drop", [d.to_json() for d in done], as_json, human)
    return 0
