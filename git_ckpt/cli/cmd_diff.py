"""git ckpt diff: compare checkpoints with each other or with the worktree."""

from __future__ import annotations

import os
import subprocess

import click

from . import after_dashdash, emit, json_option, open_repo


@click.command("diff", context_settings={"ignore_unknown_options": False})
@click.argument("ckpts", nargs=-1)
@click.option("--stat", is_flag=True, help="Show a diffstat instead of the patch.")
@click.option("--name-status", is_flag=True, help="Show only changed paths with their status.")
@json_option
def command(ckpts: tuple[str, ...], stat: bool, name_status: bool, as_json: bool) -> int:
    """Diff CKPT against the current worktree (untracked files included), or CKPT against CKPT2.

    With no CKPT, compares the latest checkpoint with the worktree.  Limit with -- PATHS.
    """
    from .. import config, store
    from ..errors import UsageError
    from ..restore import parse_paths
    from ..snapshot import capture

    paths = after_dashdash()
    args = list(ckpts[: len(ckpts) - len(paths)])
    if len(args) > 2:
        raise UsageError("git ckpt diff takes at most two checkpoints", "put paths after --")
    repo = open_repo()
    task = store.current_task(repo)
    old = store.resolve(repo, args[0] if args else "@", task)
    if len(args) == 2:
        new_tree, new_name = store.resolve(repo, args[1], task).tree, args[1]
    else:
        new_tree, new_name = capture(repo, config.load(repo)).tree, "worktree"
    rel = [os.fsdecode(p) for p in parse_paths(repo, paths, os.getcwd())] if paths else []
    if as_json:
        changes = repo.diff_trees(old.tree, new_tree, [os.fsencode(p) for p in rel] or None)
        from ..model import path_to_str

        emit("diff", {"from": old.id, "to": new_name, "changes": [
            {"status": "A" if a is None else "D" if b is None else "M", "path": path_to_str((b or a).path)} for a, b in changes]}, True, lambda: None)
        return 0
    fmt = ["--stat"] if stat else ["--name-status"] if name_status else []
    proc = subprocess.run(["git", "diff", *fmt, old.tree, new_tree, "--", *rel], cwd=repo.workdir, env=repo.git_env())
    return 0 if proc.returncode in (0, 1) else proc.returncode
