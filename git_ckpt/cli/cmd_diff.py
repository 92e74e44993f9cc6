"""git ckpt diff: compare checkpoints with each other or with the worktree."""

from __future__ import annotations

import os
import subprocess
import sys

import click

from . import after_dashdash, emit, json_option, open_repo, say
from ..errors import CorruptError


@click.command("diff", context_settings={"ignore_unknown_options": False})
@click.argument("ckpts", nargs=-1)
@click.option("--stat", is_flag=True, help="Show a diffstat instead of the patch.")
@click.option("--name-status", is_flag=True, help="Show only changed paths with their status.")
@click.option("--scope", "scope_", is_flag=True, help="Sort the changes since CKPT into those the task card names (next step, touched files) and the rest.")
@json_option
def command(ckpts: tuple[str, ...], stat: bool, name_status: bool, scope_: bool, as_json: bool) -> int:
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
    if scope_:
        return _scope(repo, task, old, len(args), as_json)
    if len(args) == 2:
        new = store.resolve(repo, args[1], task)
        new_tree, new_name, new_overlay = new.tree, new.id, new.manifest.overlay.files
    else:
        snap = capture(repo, config.load(repo))
        new_tree, new_name, new_overlay = snap.tree, "worktree", snap.overlay_info.files
    rel = [os.fsdecode(p) for p in parse_paths(repo, paths, os.getcwd())] if paths else []
    overlay_changes = overlay_diff(old.manifest.overlay.files, new_overlay, [os.fsencode(p) for p in rel])
    if as_json:
        changes = repo.diff_trees(old.tree, new_tree, [os.fsencode(p) for p in rel] or None)
        from ..model import path_to_str

        emit("diff", {"from": old.id, "to": new_name, "changes": [
            {"status": "A" if a is None else "D" if b is None else "M", "path": path_to_str((b or a).path)} for a, b in changes],
            "overlay": overlay_changes}, True, lambda: None)
        return 0
    fmt = ["--stat"] if stat else ["--name-status"] if name_status else []
    sys.stdout.flush()
    proc = subprocess.run(["git", "diff", *fmt, old.tree, new_tree, "--", *rel], cwd=repo.workdir, env=repo.git_env())
    if proc.returncode not in (0, 1):
        raise CorruptError(f"git diff failed (exit {proc.returncode}) comparing {old.id} with {new_name}",
                           f"git ckpt check {old.id} reports damaged checkpoints")
    if overlay_changes:
        say(f"overlay changes ({len(overlay_changes)}):")
        for c in overlay_changes:
            say(f"{c['status']}\t{c['path']}")
    return 0


def overlay_diff(old_files, new_files, paths: list[bytes]) -> list[dict]:
    """``[{"status": A|D|M, "path": str}]`` between two overlay file lists (manifest entries)."""
    from ..model import path_from_str

    def keep(p: str) -> bool:
        b = path_from_str(p)
        return not paths or any(b == q or b.startswith(q.rstrip(b"/") + b"/") for q in paths)

    old = {f.path: (f.kind, f.mode, f.sha256) for f in old_files if keep(f.path)}
    new = {f.path: (f.kind, f.mode, f.sha256) for f in new_files if keep(f.path)}
    out = []
    for p in sorted(old.keys() | new.keys()):
        if p not in new:
            out.append({"status": "D", "path": p})
        elif p not in old:
            out.append({"status": "A", "path": p})
        elif old[p] != new[p]:
            out.append({"status": "M", "path": p})
    return out


def _scope(repo, task: str, since, nargs: int, as_json: bool) -> int:
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
