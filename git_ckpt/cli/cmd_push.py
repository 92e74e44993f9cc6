"""git ckpt push: send checkpoints, ledgers and verifier results to a Git remote."""

from __future__ import annotations

import click

from ..model import escape
from . import NAME, emit, json_option, open_repo, say


@click.command("push")
@click.argument("remote", required=False, default="origin")
@click.option("--task", default=None, type=NAME, help="Push this task (default: the current task; results are always pushed).")
@click.option("--all", "all_", is_flag=True, help="Push every task.")
@click.option("--allow-secrets", is_flag=True, help="Push even when the secret scan finds something.")
@json_option
def command(remote: str, task: str | None, all_: bool, allow_secrets: bool, as_json: bool) -> int:
    """Push checkpoints (refs/ckpt/T/*) and results (refs/notes/ckpt) to REMOTE (default origin).

    Uses your own git push with explicit refspecs: remote.*.push and plain git push are not
    touched.  Checkpoints are never overwritten on the remote: a push that would replace one is
    refused, whole, before anything is sent.  The remote's results are merged into yours first.
    What the remote does not have yet is scanned for secrets (detect-secrets and a file-name
    denylist); findings refuse the push unless --allow-secrets.

    Without --task or --all it pushes the current task, unless that task has no checkpoint and
    its ledger records only verifies, fetches and handoffs (a reviewer's): then results only.
    """
    from .. import remote as remote_mod, secretscan, store
    from ..errors import NotFoundError, UsageError

    if task and all_:
        raise UsageError("give --task T or --all, not both")
    repo = open_repo()
    current = store.current_task(repo)
    known = store.tasks(repo)
    if all_:
        tasks = None
    elif task:
        if store.check_task_name(task) not in known:
            if not store.task_exists(repo, task):
                if remotes := store.fetched_tasks(repo).get(task, []):  # a teammate's: theirs to push
                    from ..task import continue_fetched

                    raise NotFoundError(f"no task {task} here: {remotes[0]}:{task} is fetched from {remotes[0]}, whose owner pushes it",
                                        continue_fetched(repo, remotes[0], task))
                raise NotFoundError(f"no task {task}", store.task_hint(repo, task))  # a typo: the words every command uses
            raise NotFoundError(f"task {task} has no checkpoints or ledger to push", "git ckpt save makes its first checkpoint")
        tasks = [task]
    else:
        from ..ledger import only_reviews

        # results (notes) only: no task, or one that only reviewed others' checkpoints (README "Verify")
        tasks = [current] if current in known and not only_reviews(repo, current) else []
    try:
        res = remote_mod.push(repo, remote=remote, tasks=tasks, allow_secrets=allow_secrets, log_task=current)
    except remote_mod.PushRefused as exc:
        if not as_json:
            for u in exc.refused:
                click.echo(f"refused  {escape(u.ref)}: {escape(u.reason)}", err=True)  # a remote's ref names
        raise
    except remote_mod.SecretsFound as exc:
        if not as_json:
            for line in secretscan.by_file(exc.findings):
                click.echo(f"secret?  {line}", err=True)
        raise

    def human() -> None:
        if res.notes.problem:
            click.echo(f"warning: {escape(res.notes.problem)}", err=True)
        if res.notes.added:
            say(f"merged {res.notes.added} result line(s) from {remote} into refs/notes/ckpt")
        for line in secretscan.by_file(res.allowed_secrets):
            click.echo(f"warning: pushed despite a possible secret: {line}", err=True)
        sent = [u for u in res.updates if u.status != "up-to-date"]
        if not res.sent:
            say(f"everything up to date on {remote}")
            return
        say("\n".join(remote_mod.ref_lines(sent)))
        say(f"pushed {len(sent)} ref(s) to {remote}")

    emit("push", res.to_json(), as_json, human)
    return 0
