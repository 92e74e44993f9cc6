"""git ckpt diff: compare checkpoints with each other or with the worktree."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from typing import TYPE_CHECKING

import click

from . import after_dashdash, emit, json_option, open_repo, say
from ..errors import CorruptError

if TYPE_CHECKING:
    from ..gitcore import Repo
    from ..store import Checkpoint


@click.command("diff", context_settings={"ignore_unknown_options": False})
@click.argument("ckpts", nargs=-1)
@click.option("--stat", is_flag=True, help="Show a diffstat instead of the patch.")
@click.option("--name-status", is_flag=True, help="Show only changed paths with their status.")
@click.option("--scope", "scope_", is_flag=True, help="Sort the changes since CKPT (default @) into those the task card names (next step, touched files) and the rest.")
@json_option
def command(ckpts: tuple[str, ...], stat: bool, name_status: bool, scope_: bool, as_json: bool) -> int:
    """Diff CKPT against the current worktree (untracked files included), or CKPT against CKPT2.

    With no CKPT, compares @ with the worktree (@: the latest checkpoint, or after a restore the
    one restored, until the next save).  Limit with -- PATHS.
    """
    from .. import config, store
    from ..errors import UsageError
    from ..diff import compare
    from ..restore import parse_paths

    paths = after_dashdash()
    args = list(ckpts[: len(ckpts) - len(paths)])
    if len(args) > 2:
        raise UsageError("git ckpt diff takes at most two checkpoints", "put paths after --")
    repo = open_repo()
    task = store.current_task(repo)
    old = store.resolve(repo, args[0], task, command="diff") if args else store.resolve_default(repo, task)
    if scope_:
        return _scope(repo, task, old, len(args), as_json)
    new = store.resolve(repo, args[1], task, command="diff") if len(args) == 2 else None
    rel = parse_paths(repo, paths, os.getcwd()) if paths else []
    cmp = compare(repo, config.load(repo), old, new, rel)
    if as_json:
        emit("diff", cmp.to_json(), True, lambda: None)
        return 0
    fmt = ["--stat"] if stat else ["--name-status"] if name_status else []
    sys.stdout.flush()
    # --stat / --name-status read no blob over 16 MiB (git's core.bigFileThreshold: binary, unread)
    proc = subprocess.run(["git", "-c", "core.bigFileThreshold=16m", "diff", *fmt, cmp.old_tree, cmp.new_tree, "--", *map(os.fsdecode, rel)],
                          cwd=repo.workdir, env=repo.git_env())
    if proc.returncode in (-signal.SIGPIPE, 128 + signal.SIGPIPE):
        return 0  # `git ckpt diff | head`: the reader left; the comparison was made (as for log)
    if proc.returncode not in (0, 1):
        raise CorruptError(f"git diff failed (exit {proc.returncode}) comparing {old.id} with {cmp.new}",
                           f"git ckpt check {old.id} reports damaged checkpoints")
    for title, rows in (("overlay changes", cmp.overlay), ("index changes", cmp.index)):
        if rows:
            say(f"{title} ({len(rows)}):")
            for c in rows:
                say(f"{c['status']}\t{c['path']}")
    return 0


def _scope(repo: Repo, task: str, since: Checkpoint, nargs: int, as_json: bool) -> int:
    """``diff --scope``: the changes since ``since`` in scope of the task card, and the rest."""
    from .. import config
    from ..errors import UsageError
    from ..scope import scope
    from . import say

    if nargs > 1:
        raise UsageError("--scope compares one checkpoint with the worktree", "git ckpt diff --scope [CKPT]")
    res = scope(repo, config.load(repo), task, since)

    def human() -> None:
        if not res["in_scope"] and not res["outside"]:
            say(f"no changes since {res['since']}")
            return
        say(f"in scope (next step or files the task touched), since {res['since']}:")
        for r in res["in_scope"] or [{"status": " ", "path": "(none)", "why": []}]:
            say(f"  {r['status']} {r['path']}" + (f"  ({', '.join(r['why'])})" if r["why"] else ""))
        say("outside the scope of the task card:")
        for r in res["outside"] or [{"status": " ", "path": "(none)"}]:
            say(f"  {r['status']} {r['path']}")

    emit("diff", res, as_json, human)
    return 0
