"""git ckpt fetch: bring a remote's checkpoints and results here, changing no local checkpoint."""

from __future__ import annotations

import click

from ..model import escape
from . import emit, json_option, open_repo, say, warn


@click.command("fetch")
@click.argument("remote", required=False, default="origin")
@json_option
def command(remote: str, as_json: bool) -> int:
    """Fetch REMOTE's checkpoints (default origin) into refs/ckpt-remotes/REMOTE/ and merge its
    verifier results into refs/notes/ckpt (no line from either side is lost).

    Only refs/ckpt/T/N, T/log and T/promoted are fetched (other names are counted, not
    fetched); nothing is pruned, but a fetched ref in the way of an incoming one (a ref and a
    directory of the same name) is removed, and said.
    Local checkpoints are never changed and nothing fetched is run.  Then:
    git ckpt list --remote REMOTE --all, git ckpt show REMOTE:T/N,
    git ckpt restore REMOTE:T/N [--worktree PATH].
    """
    from .. import remote as remote_mod, store

    repo = open_repo()
    res = remote_mod.fetch(repo, remote=remote, task=store.current_task(repo))

    def human() -> None:
        cps = res.checkpoints
        for u in res.updates:
            if u.status == "replaced" and u.old is not None and u.new is not None:  # a replaced ref has both
                warn(f"{remote} replaced {escape(u.ref)} (was {u.old[:12]}, now {u.new[:12]}); checkpoints and ledgers are never rewritten by git ckpt")
        for u in res.removed:  # a stale fetched ref in the way of a fetched one (named here, as git shows it)
            say(f"removed    {escape(u.ref)} (was {(u.old or '')[:12]}): {escape(u.reason)}")
        lines = remote_mod.ref_lines([u for u in res.updates if u.status != "replaced"])
        if lines:
            say("\n".join(lines))
        if res.updates:
            shown = ", ".join(cps[:6]) + (", ..." if len(cps) > 6 else "")
            say(f"fetched {len(res.updates)} ref(s) from {remote}" + (f"; checkpoints: {shown}" if cps else ""))
        if res.notes.problem:
            warn(escape(res.notes.problem))
        if res.notes.added:
            say(f"merged {res.notes.added} result line(s) from {remote} into refs/notes/ckpt")
        if res.ignored:
            say(remote_mod.ignored_line(remote, res.ignored))
        if not res.updates and not res.notes.added:
            say(f"nothing new on {remote}")
        for problem in res.warnings:
            warn(problem)

    emit("fetch", res.to_json(), as_json, human)
    return 0
