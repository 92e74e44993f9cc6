"""git ckpt handoff: the resume receipt of a task (goal, decided, touched, next, last results)."""

from __future__ import annotations

import sys

import click

from . import emit, open_repo, say, task_argument, warn


@click.command("handoff")
@task_argument("The task (default: the current one; a fetched REMOTE:T too).")
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", help="Markdown (default) or a JSON envelope.")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--check", "check_", is_flag=True,
              help="Check the receipt against reality: files exist, the worktree matches, verifiers agree; exit 1 on drift.")
def command(task: str | None, fmt: str, as_json: bool, check_: bool) -> int:
    """Print what a fresh session needs to resume TASK (default: the current task).

    Touched files are computed from the checkpoints, verifier results are read from their
    notes; with --check, drift from the recorded state exits 1: files missing, a worktree
    whose files, index or overlay are not the current checkpoint's (HEAD moved since is
    said, not drift, as status says it), a required verifier whose re-run does not pass (even one
    that failed before) or that has no passing result of this repository's own (when it cannot
    be re-run), or an untrusted
    .ckpt.toml.
    """
    from .. import config, handoff, store

    as_json = as_json or fmt == "json"
    repo = open_repo()
    task = store.existing_task(repo, task, fetched=True, bare_fetched=True) if task else store.current_task(repo)
    cfg = config.load(repo)
    if check_:
        res = handoff.check(repo, cfg, task)

        def human() -> None:
            for c in res["checks"]:
                mark = "ok   " if c["ok"] else "DRIFT"
                say(f"{mark} {c['check']}: {c['detail']}")
            say(f"handoff of {task}: " + ("no drift" if res["ok"] else f"{len(res['drift'])} drift(s) found"))

        emit("handoff", res, as_json, human)
        return 0 if res["ok"] else 1
    r = handoff.receipt(repo, task, cfg)
    emit("handoff", r, as_json, lambda: sys.stdout.write(handoff.markdown(r)))
    problem = handoff.mark(repo, task, r["current"])
    if problem:
        warn(problem)
    return 0
