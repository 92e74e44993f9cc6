"""git ckpt verify: run the verifiers on a checkpoint, record the results, promote on pass."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Callable

import click

from . import emit, json_option, open_repo, say, warn

if TYPE_CHECKING:
    from ..verify import Report


def output_sink(as_json: bool) -> Callable[[bytes], None]:
    """Where verifier output streams: stdout for humans, stderr under --json (stdout is JSON)."""
    stream = sys.stderr.buffer if as_json else sys.stdout.buffer

    def sink(data: bytes) -> None:
        stream.write(data)
        stream.flush()

    return sink


def print_report(report: Report, *, said_outcomes: bool) -> None:
    """The human summary lines of a verify report (the per-verifier lines unless already said)."""
    from ..verify import describe

    if not said_outcomes:
        for o in report.outcomes:
            say(describe(o))
    for o in report.outcomes:
        if o.changed:
            say(f"  {o.name} changed: " + ", ".join(o.changed[:20]) + (f" (and {len(o.changed) - 20} more)" if len(o.changed) > 20 else ""))
    if report.skipped:
        say(f"not run (the worktree was changed by a verifier): {', '.join(report.skipped)}")
        if not report.isolated:
            say(f"hint: put the files back with git ckpt restore {report.checkpoint}")
    if report.promoted:
        if report.empty_requirement:
            say("no verifiers configured: promoting on the empty requirement")
        from ..promote import promoted_line

        say(promoted_line(report.promoted, already=report.already_promoted, earned=report.earned))
    elif report.newer_promoted:
        say(f"not promoted: the newer {report.newer_promoted} stays promoted (git ckpt promote {report.checkpoint} moves promotion back to it)")
    elif report.fetched:
        say(f"not promoted: {report.checkpoint} is a fetched checkpoint (only this repository's checkpoints are promoted)")
        say(f"hint: {report.hint}")
    elif report.missing:
        shown = ", ".join(f"{k} ({v})" for k, v in report.missing.items())
        say(f"not promoted: required verifiers without a passing result: {shown}")


@click.command("verify")
@click.argument("ckpt", required=False)
@click.option("--only", "only", multiple=True, metavar="NAME", help="Run only this verifier (repeatable).")
@click.option("--isolated", is_flag=True, help="Run in a temporary worktree materialised from the checkpoint.")
@click.option("--rerun", is_flag=True, help="Run even when a passing result for identical content and definition exists.")
@json_option
def command(ckpt: str | None, only: tuple[str, ...], isolated: bool, rerun: bool, as_json: bool) -> int:
    """Run the verifiers on CKPT (default: the checkpoint the worktree matches, else @, which
    is the latest or, after a restore, the one restored), stream their output, append
    one result line each to the checkpoint's note (refs/notes/ckpt) and promote CKPT when every
    required verifier passed on its content.

    In place, the worktree must match CKPT (else exit 2; use --isolated).  A passing result for
    identical content and an identical verifier definition is reused and labelled "reused".
    Only verifiers from a trusted .ckpt.toml run (git ckpt trust; else exit 9).  Only results
    this repository's own verify recorded are reused or promote (a result fetched from a
    teammate is never evidence).  A fetched checkpoint (REMOTE:T/N) is verified but not
    promoted; its results go to its note and the current task's ledger.

    Exit status (git bisect run convention): 0 every required verifier passed, 1 one failed,
    timed out or changed checkpointed files, 125 undecided (a verifier exited 125), 126/127 a
    verifier could not run, 130 interrupted.
    """
    from .. import config, store
    from ..verify import describe, verify

    repo = open_repo()
    cfg = config.load(repo)
    for key in cfg.ignored:
        warn(f"git config {key} is ignored: .ckpt.toml defines that verifier (git config may add verifiers, never loosen one)")
    if ckpt is None:
        # the checkpoint the worktree is (after a restore: the restored one, not the pre-restore
        # save), else the latest, which an in-place verify then reports as not matching
        from ..status import worktree_checkpoint

        task = store.current_task(repo)
        cp = (None if isolated else worktree_checkpoint(repo, cfg, task)) or store.resolve_default(repo, task)
    else:
        cp = store.resolve(repo, ckpt, command="verify")
    said = not as_json
    report = verify(repo, cfg, cp, only=list(only) or None, isolated=isolated, rerun=rerun,
                    sink=output_sink(as_json), on_outcome=(lambda o: say(describe(o))) if said else (lambda o: None))
    emit("verify", report.to_json(), as_json, lambda: print_report(report, said_outcomes=said))
    return report.exit_code
