"""git ckpt check: prove that checkpoints would restore exactly (test restore on purpose)."""

from __future__ import annotations

import click

from ..words import counted
from . import NAME, emit, json_option, open_repo, say


@click.command("check")
@click.argument("ckpt", required=False)
@click.option("--all", "all_", is_flag=True, help="Check every checkpoint of every task.")
@click.option("--task", default=None, type=NAME, help="Check every checkpoint of this task (default: the current task).")
@json_option
def command(ckpt: str | None, all_: bool, task: str | None, as_json: bool) -> int:
    """Materialise CKPT (default: every checkpoint of the task; --all: of every task) in a
    temporary directory and compare it with its manifest, tree, raw/ bytes and overlay.

    Exit 0 when every checkpoint would restore exactly; exit 1 listing the ones that would not
    (missing objects, a corrupt manifest or overlay tar, files that would come back different).
    Nothing outside the temporary directory is written.
    """
    from .. import check, store
    from ..errors import CheckFailed, UsageError

    if ckpt and all_:
        raise UsageError("give a checkpoint or --all, not both")
    repo = open_repo()
    task = store.existing_task(repo, task, fetched=True) if task else store.current_task(repo)
    items = check.targets(repo, spec=ckpt, all_tasks=all_, task=task)
    results = check.check_all(repo, items)
    bad = [r for r in results if not r.ok]

    def human() -> None:
        if not results:
            say(f"no checkpoints to check in task {task}" if not all_ else "no checkpoints to check")
        for r in results:
            if r.ok:
                say(f"ok       {r.id}  ({counted(r.files, 'file')}, {counted(r.overlay_files, 'overlay file')})")
            else:
                say(f"DAMAGED  {r.id}: " + "; ".join(r.problems))

    emit("check", {"ok": not bad, "checked": len(results), "checkpoints": [r.to_json() for r in results]}, as_json, human)
    if bad:
        local = [r.id for r in bad if ":" not in r.id and not r.id.endswith("/promoted")]
        promotions = [r.id for r in bad if ":" not in r.id and r.id.endswith("/promoted")]
        fix = "get a good copy from a teammate (git ckpt fetch REMOTE)"
        if local:
            fix += ", or drop the damaged ones: " + check.drop_command(repo, local)
        if promotions:  # no checkpoint of its own to drop: the ref goes
            fix += "; end a damaged promotion with " + " and ".join(f"git update-ref -d {store.PREFIX}{p}" for p in promotions)
        raise CheckFailed(
            f"{len(bad)} of {len(results)} checkpoint(s) would not restore exactly: " + ", ".join(r.id for r in bad), fix)
    return 0
