"""git ckpt attempt: save, run CMD, save, verify; promote on pass, restore on fail."""

from __future__ import annotations

import os
import sys

import click

from . import emit, json_option, open_repo, say, warn


@click.command("attempt", context_settings={"ignore_unknown_options": True})
@click.option("-m", "--message", default="", help="What this attempt tries (the message of the result checkpoint).")
@click.argument("cmd", nargs=-1, required=True, type=click.UNPROCESSED)
@json_option
def command(message: str, cmd: tuple[str, ...], as_json: bool) -> int:
    """Save a checkpoint, run CMD (an agent, a script, an edit), save the result, verify it and
    promote it on pass.  On failure the worktree goes back to the checkpoint taken before CMD
    ([attempt] on_failure = "restore", the default) or stays as CMD left it ("keep"); the failed
    state is always kept as a checkpoint.  Write CMD after --.

    Exit status: 0 promoted; otherwise the verify exit status (1 failed, 125 undecided, 127 a
    verifier could not run), 9 untrusted .ckpt.toml (nothing runs), 130 interrupted.
    """
    from .. import config, store
    from ..attempt import attempt
    from .cmd_verify import output_sink

    repo = open_repo()
    cfg = config.load(repo)
    task = store.current_task(repo)
    res = attempt(repo, cfg, list(cmd), task=task, message=message, cwd=os.getcwd(),
                  say=(lambda s: None) if as_json else say, warn=(lambda s: None) if as_json else warn, sink=output_sink(as_json),
                  cmd_stdout=sys.stderr.fileno() if as_json else None)
    emit("attempt", res.to_json(), as_json, lambda: None)
    return res.exit_code
