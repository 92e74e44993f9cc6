"""git ckpt list: the checkpoints of a task."""

from __future__ import annotations

from typing import Any

import click

from . import NAME, emit, json_option, open_repo, say


@click.command("list")
@click.option("--task", default=None, type=NAME, help="List this task instead of the current one.")
@click.option("--all", "all_", is_flag=True, help="List every task.")
@click.option("--remote", default=None, help="List checkpoints fetched from REMOTE (git ckpt fetch): every task, or --task T.")
@json_option
def command(task: str | None, all_: bool, remote: str | None, as_json: bool) -> int:
    """List checkpoints: id, age, kind, message, verifier state, and * for the promoted one.

    The verifier state is the newest result this repository's own git ckpt verify recorded; a
    verifier with only results fetched from teammates shows the newest of those, marked
    "(fetched)": such a result is never evidence here.  With --remote R, every task fetched from R
    is listed (a teammate's task names are not yours) unless --task names one.
    """
    from .. import store, views
    from ..errors import UsageError

    repo = open_repo(lazy=True)  # one for-each-ref serves a listing: libgit2 loads only if needed
    prefix, shown = store.PREFIX, ""
    if task and store.is_fetched_task(store.check_task_spec(task)):
        named, bare = store.split_task(task)  # --task REMOTE:T is --remote REMOTE --task T
        if remote is not None and remote != named:
            raise UsageError(f"--remote {remote} and --task {task} name two remotes", f"git ckpt list --task {task}")
        remote, task = named, bare
    if remote is not None:  # '' too: it is no configured remote, said as for every other name
        prefix, shown = f"{store.REMOTE_PREFIX}{remote}/", f"{remote}:"
        all_ = all_ or not task
        if not repo.refs_under(prefix) and (problem := store.remote_problem(repo, remote)) is not None:
            raise problem  # nothing fetched under that name, and no such remote to fetch from
    names, rows = views.listing(repo, None if all_ else [store.existing_task(repo, task, prefix, shown, suggest_fetched=True) if task else store.current_task(repo)],
                                prefix, shown)
    states: dict[str, Any] = {}
    if any(r.verifiers for r in rows):
        from ..evidence import fetched_states

        states = fetched_states(repo, rows, names if prefix == store.PREFIX else None)
    for r in rows:
        if r.commit in states:
            r.verifiers = states[r.commit][0]

    def human() -> None:
        from ..model import escape

        if not rows:
            if remote:
                say(f"no checkpoints fetched from {remote}" + (f" in task {task}" if task else "")
                    + f" (git ckpt fetch {remote} brings them)")
                return
            say(f"no checkpoints in task {names[0] if names else '(none)'}" if not all_ else "no checkpoints")
            theirs = sorted(f"{r}:{t}" for t, rs in store.fetched_tasks(repo).items() for r in rs)
            if theirs:
                say(f"fetched tasks: {', '.join(theirs[:5])}{' …' if len(theirs) > 5 else ''} "
                    f"(git ckpt list --remote {theirs[0].split(':')[0]})")
            return
        lines = []
        width = max(20, *(len(r.id) for r in rows))  # REMOTE:T/N and long task names stay aligned
        for r in rows:
            fetched = states.get(r.commit, ({}, []))[1]
            ver = " ".join(f"{escape(k)}:{escape(v)}" + ("(fetched)" if k in fetched else "") for k, v in sorted(r.verifiers.items()))
            mark = "*" if r.promoted else " "
            first, more, _ = (r.message or "").partition("\n")  # one line a row; " …" says there is more (show has it all)
            msg = escape(first) + (" …" if more else "")
            by = r.made_by()
            lines.append(f"{mark} {r.id:<{width}} {views.age(r.created_at):>4}  {r.kind:<11} {msg}" + (f"  ({escape(by)})" if by else "")
                         + (f"  [{ver}]" if ver else ""))
        say("\n".join(lines))  # one write, not one per row

    emit("list", [dict(r.to_json(), fetched=states.get(r.commit, ({}, []))[1]) for r in rows], as_json, human)
    return 0
