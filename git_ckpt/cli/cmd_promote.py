"""git ckpt promote: mark a checkpoint as the promoted one of its task."""

from __future__ import annotations

import click

from . import emit, json_option, open_repo, say


@click.command("promote")
@click.argument("ckpt", required=False)
@click.option("--force", is_flag=True, help="Promote even without passing results (recorded in the ledger as forced).")
@json_option
def command(ckpt: str | None, force: bool, as_json: bool) -> int:
    """Make CKPT (default @) refs/ckpt/TASK/promoted (compare-and-swap, with a reflog).

    @ is the latest checkpoint, or after a restore the one restored, until the next save.

    Refused (exit 1) unless every required verifier has a passing result on CKPT's content
    that this repository's own git ckpt verify recorded (a fetched result does not count), and
    (exit 9) while .ckpt.toml is not trusted (never trusted with verifiers, or changed or
    deleted since git ckpt trust); --force promotes anyway and the ledger records it as forced.
    A forced promotion does not pass the commit gate: the gate also requires the results.  A
    fetched checkpoint (REMOTE:T/N) is never promoted (exit 2).
    """
    from .. import config, store
    from ..promote import promote, promoted_line

    repo = open_repo()
    cfg = config.load(repo)
    cp = store.resolve_default(repo) if ckpt is None else store.resolve(repo, ckpt, command="promote")
    res = promote(repo, cfg, cp, force=force, reason="promote")

    def human() -> None:
        if res.forced:
            say(f"promoted {res.id} (forced: {'; '.join(res.why_forced)})")
        else:
            say(promoted_line(res.id, already=not res.changed and not res.earned, earned=res.earned))

    emit("promote", res.to_json(), as_json, human)
    return 0
