"""git ckpt restore: bring a checkpoint back exactly, saving the current state first."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from . import emit, json_option, open_repo, say
from ..words import short_base

if TYPE_CHECKING:
    from ..restore import Plan, RestoreResult


def print_plan(plan: Plan, paths: list[bytes] | None = None) -> None:
    """Human rendering of a restore plan (write / delete / leave); ``paths``: the paths a path
    restore was asked for (its ``leave`` line counts files under them that already match)."""
    from ..model import path_display
    from ..words import counted

    for p in plan.write:
        say(f"write   {path_display(p)}")
    for p in plan.delete:
        say(f"delete  {path_display(p)}")
    # outside the cone a file's index entry is all a restore sets: named when it changes, counted
    # when it does not (a cone of 10 files in a tree of 20,000 is no plan of 19,990 lines)
    same = 0
    for p in plan.sparse_skipped:
        if p in plan.sparse_index_changes:
            say(f"skip    {path_display(p)} (outside the sparse cone: index only; git sparse-checkout add widens it)")
        else:
            same += 1
    if same:
        say(f"skip    {counted(same, 'file')} outside the sparse cone, unchanged in the index (off the disk; "
            "git sparse-checkout add widens the cone)")
    for line in plan.keep_lines():
        say(line)
    for p in plan.overlay_write:
        say(f"write   {path_display(p)} (overlay)")
    for p in plan.overlay_delete:
        say(f"delete  {path_display(p)} (overlay)")
    for p in plan.raw_write:
        say(f"write   {path_display(p)} (exact bytes)")
    if plan.index_changes:
        say("index   the paths asked for as staged in the checkpoint (the rest of the index stays)" if paths else
            "index   set to HEAD's tree (nothing staged: HEAD commits the checkpoint's files)" if plan.committed_on_head else
            "index   set to the checkpoint's staged state")
    if plan.merge_to is not None:
        say(f"merge   MERGE_HEAD set to {', '.join(h[:12] for h in plan.merge_to)} (the merge in progress when it was saved)"
            if plan.merge_to else "merge   MERGE_HEAD removed (the merge an earlier restore brought back ends)")
    if plan.head_changes:
        assert plan.head_to is not None  # set whenever the head changes
        lost = f"; {plan.head_unreachable} commit(s) no longer reachable from it (undo moves it back)" if plan.head_unreachable else ""
        if plan.head_branch:
            say(f"HEAD    branch {plan.head_branch.removeprefix('refs/heads/')} moves from {short_base(plan.head_from)} to {short_base(plan.head_to)}{lost}")
        else:
            say(f"HEAD    (detached) moves from {short_base(plan.head_from)} to {short_base(plan.head_to)}")
    if plan.leave is None:
        say("leave   everything else")
    elif paths:  # only files under the paths asked for are counted: none is "other"
        if plan.leave:
            say(f"leave   {counted(plan.leave, 'file')} (already {'matches' if plan.leave == 1 else 'match'} {plan.target})")
    else:
        say(f"leave   {plan.leave} other file(s)")


def report(res: RestoreResult, as_json: bool, command: str) -> None:
    """Print a RestoreResult."""
    from . import warn

    for w in res.warnings:
        warn(w)

    def human() -> None:
        for line in res.lines():
            say(line)
        if res.dry_run:
            print_plan(res.plan, res.paths)

    emit(command, res.to_json(), as_json, human)


@click.command("restore")
@click.argument("ckpt", required=False)
@click.argument("paths", nargs=-1)
@click.option("--dry-run", "-n", is_flag=True, help="Print the plan (write / delete / leave); change nothing.")
@click.option("--reset-head", is_flag=True, help="Also move HEAD (the current branch) to the checkpoint's base.")
@click.option("--force", "-f", is_flag=True, help="With --reset-head: move the current branch even when the checkpoint was saved on another one.")
@click.option("--continue", "cont", is_flag=True, help="Finish a restore that was interrupted.")
@click.option("--worktree", "worktree", default=None, metavar="PATH", help="Restore into a new linked worktree at PATH (git worktree add) instead.")
@json_option
def command(ckpt: str | None, paths: tuple[str, ...], dry_run: bool, reset_head: bool, force: bool, cont: bool, worktree: str | None, as_json: bool) -> int:
    """Restore CKPT (T/N, N, @, @~2, promoted, REMOTE:T/N, a revision), whole or only PATHS.

    The current state is saved first as a pre-restore checkpoint (git ckpt undo returns to it).
    Untracked files that appeared since, and extra files in overlay paths, are removed (the
    pre-restore checkpoint holds them); ignored files outside the overlay are never touched; HEAD
    stays unless --reset-head.
    """
    from .. import config, store
    from ..errors import UsageError
    from ..restore import continue_restore, parse_paths, restore

    from . import jump_config

    repo = open_repo()
    if cont:
        cfg = config.load(repo)
        if ckpt or paths:
            raise UsageError("--continue takes no checkpoint or paths")
        report(continue_restore(repo, cfg), as_json, "restore")
        return 0
    if not ckpt:
        raise UsageError("which checkpoint? give one, e.g. git ckpt restore @", "git ckpt list shows the checkpoints")
    task = store.current_task(repo)
    cp = store.resolve(repo, ckpt, task, command="restore")
    if worktree is not None:
        if paths or dry_run or reset_head:
            raise UsageError("--worktree restores the whole checkpoint into a new worktree; it takes no paths, --dry-run or --reset-head")
        from ..remote import restore_into_worktree

        new, res = restore_into_worktree(repo, cp, Path(os.path.abspath(worktree)))
        assert cp.base is not None  # restore_into_worktree refuses a checkpoint without a base commit
        if not as_json:  # the notes first, as for every restore
            for note in res.plan.provenance:
                say(f"note: {note}")
            say(f"created worktree {new.workdir} at {cp.base[:12]}")
            res.plan.provenance = []
        report(res, as_json, "restore")
        return 0
    rel = parse_paths(repo, paths, os.getcwd()) if paths else None
    loaded = jump_config(repo)
    cfg = loaded if loaded is not None else config.load_without_file(repo)
    res = restore(repo, cfg, cp, task=task, paths=rel or None, dry_run=dry_run, reset_head=reset_head, force=force)
    report(res, as_json, "restore")
    return 0
