"""git ckpt gc: prune old checkpoints by count, age and size; never the ones relied on."""

from __future__ import annotations

import click

from . import DURATION, NAME, SIZE, emit, json_option, open_repo, say


@click.command("gc")
@click.option("--keep", type=int, default=None, help="Keep the newest N checkpoints of each task.")
@click.option("--older-than", type=DURATION, default=None, help="Prune only checkpoints older than this (30d, 12h, 90m).")
@click.option("--max-bytes", type=SIZE, default=None, help="Then prune the oldest until checkpoint objects fit in SIZE (500MiB).")
@click.option("--dry-run", "-n", is_flag=True, help="Print what would be pruned; change nothing.")
@click.option("--task", default=None, type=NAME, help="Prune this task (default: the current task).")
@click.option("--all", "all_", is_flag=True, help="Prune every task.")
@json_option
def command(keep: int | None, older_than: str | None, max_bytes: str | None, dry_run: bool, task: str | None, all_: bool, as_json: bool) -> int:
    """Delete old checkpoint refs by the [retention] policy or the flags given.

    Flags replace [retention] as a whole: --keep N alone keeps the newest N, --older-than D alone
    prunes what is older than D, both prune what is beyond N and older than D.  The latest, the
    promoted, handoff points and both sides of the last restore/undo are never pruned.  A prune
    event in the ledger lists every id and commit pruned.
    """
    from .. import config, retention, store
    from ..errors import UsageError

    if task and all_:
        raise UsageError("give --task or --all, not both")
    repo = open_repo()
    cfg = config.load(repo)
    pol = retention.policy(cfg, keep=keep, older_than=older_than, max_bytes=max_bytes)
    tasks = store.tasks(repo) if all_ else [store.existing_task(repo, task) if task else store.current_task(repo)]
    res = retention.gc(repo, cfg, tasks=tasks, pol=pol, dry_run=dry_run)

    def human() -> None:
        verb = "would prune" if dry_run else "pruned"
        for cid, commit in res.pruned:
            say(f"{verb} {cid} ({commit[:12]})")
        for cid, why in res.skipped:
            say(f"skipped {cid}: {why}")
        say(f"{verb} {len(res.pruned)} checkpoint(s); {res.remaining} kept"
            + (f" ({len(res.protected)} protected)" if res.protected else ""))
        if res.pruned and not dry_run:
            say("the objects are freed by git gc once nothing else reaches them")

    emit("gc", res.to_json(), as_json, human)
    return 0
