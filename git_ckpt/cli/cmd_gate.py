"""git ckpt gate: what the pre-commit hook runs; exit 0 allows the commit."""

from __future__ import annotations

import os

import click

from . import emit, json_option, open_repo


@click.command("gate")
@click.option("--hook", is_flag=True, help="Running from a hook: say nothing when the gate is off.")
@click.option("--message-file", type=click.Path(dir_okay=False), default=None,
              help="prepare-commit-msg mode: set the Ckpt-Verified trailer in FILE when the commit is allowed, remove any when it is not; never refuses.")
@json_option
def command(hook: bool, message_file: str | None, as_json: bool) -> int:
    """Allow a commit only when the tree of the index being committed ($GIT_INDEX_FILE when git
    sets it, as for commit -a and commit PATH; else the index) is the tree of the current task's
    promoted checkpoint and its required verifiers passed on that content.

    A refusal (exit 1) names the differing paths (the first 20 and a count) or the failing
    verifier, and the one command that fixes it; from a hook (--hook) it is recorded as a
    gate-refused ledger event, run by hand it is only said.
    An untrusted .ckpt.toml (never trusted with verifiers, or changed or deleted since git ckpt
    trust) refuses with exit 9: its required verifiers cannot judge the commit.  Only results
    this repository's own git ckpt verify recorded count (fetched ones never do).
    The gate acts only where git config ckpt.gate is true (git ckpt hooks install sets it);
    elsewhere it allows everything (exit 0).
    """
    from ..errors import UntrustedError
    from ..gate import gate, set_trailer

    repo = open_repo()
    index_file = os.environ.get("GIT_INDEX_FILE") or None
    if index_file and not os.path.isabs(index_file):
        index_file = os.path.join(os.getcwd(), index_file)
    merging = hook and os.environ.get("GIT_CKPT_HOOK") == "pre-merge-commit"
    # a refusal is a refused commit only from a hook; by hand it is a question, logged nowhere
    res = gate(repo, index_file=index_file, record=hook and message_file is None, merging=merging)
    if res.enabled and res.allowed:
        from ..gatecache import remember

        remember(repo, tree=res.tree)  # so the hooks answer the next commit of this state without Python
    if message_file is not None:
        if res.enabled:
            set_trailer(repo, message_file, res.promoted if res.allowed else None)
        emit("gate", res.to_json(), as_json, lambda: None)
        return 0

    def human() -> None:
        if not res.enabled:
            if not hook:
                click.echo("git ckpt gate is off in this repository (git ckpt hooks install turns it on)", err=True)
            return
        if res.allowed:
            click.echo(f"git ckpt gate: commit matches the promoted checkpoint {res.promoted}; verifiers passed", err=True)
            return
        click.echo(f"error: commit refused by git ckpt gate: {res.reason}", err=True)
        for p in res.paths:
            click.echo(f"  {p}", err=True)
        if res.count > len(res.paths):
            click.echo(f"  ... and {res.count - len(res.paths)} more", err=True)
        click.echo(f"hint: {res.fix}", err=True)

    emit("gate", res.to_json(), as_json, human)
    if res.allowed:
        return 0
    return UntrustedError.exit_code if res.untrusted else 1
