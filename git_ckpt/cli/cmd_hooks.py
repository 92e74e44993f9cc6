"""git ckpt hooks install|uninstall|status: the commit gate's git hooks."""

from __future__ import annotations

from typing import Any

import click

from ..model import escape
from . import emit, json_option, open_repo, say


@click.group("hooks")
def command() -> None:
    """Manage the gate's hooks ({commands}): pre-commit, pre-merge-commit and pre-applypatch (the
    gate), prepare-commit-msg and applypatch-msg (the Ckpt-Verified trailer), pre-push (the
    pushed commits).

    They go into every directory git runs hooks from (git rev-parse --git-path hooks in each
    worktree: core.hooksPath, relative ones included, and linked worktrees; core.hooksPath is
    never changed).  A hook already there is kept as HOOK.legacy and run first; uninstall puts
    back exactly what was there.
    """


@command.command("install")
@click.option("--since", default=None, metavar="REV",
              help="pre-push judges only commits that are not ancestors of REV (git config ckpt.gate.since; default: the current HEAD when unset).")
@json_option
def install_cmd(since: str | None, as_json: bool) -> int:
    """Write the hooks into every directory git runs hooks from (one per worktree with a
    relative core.hooksPath) and set git config ckpt.gate true (the gate acts only where it is
    set) and ckpt.gate.since.  Refuses, changing nothing, where a hook git would run is a
    tracked file."""
    from ..errors import NotFoundError
    from ..hooks import install

    repo = open_repo()
    if since is not None:
        found = repo.commit_of(since)
        if found is None:
            raise NotFoundError(f"unknown revision {since!r}", "name a commit, e.g. HEAD or origin/main")
        since = found
    res = install(repo, since=since)
    emit("hooks install", res, as_json, lambda: say_installed(res))
    return 0


def say_installed(res: dict[str, Any]) -> None:
    """What ``hooks install`` (and ``init --hooks``) did, for people: :func:`git_ckpt.hooks.install`'s result."""
    say(f"installed {', '.join(res['installed'])} in {escape(res['dir'])}")
    for d in res["dirs"]:
        if d != res["dir"]:
            say(f"installed them in {escape(d)} too (another worktree runs its hooks from there)")
    for name in res["legacy"]:
        say(f"kept your existing {name} hook as {name}.legacy; it runs first")
    if res["since"]:
        say(f"pre-push judges commits that are not ancestors of {res['since'][:12]} (git config ckpt.gate.since)")
    if res["excluded"]:
        say("the hook files inside the worktree are ignored through .git/info/exclude: no checkpoint saves them "
            "and no restore deletes them (hooks uninstall removes those lines)")
    say("gate on: commits must match the promoted, verified checkpoint (git config ckpt.gate true)")
    if res["hooks_path"]:
        click.echo(f"hint: core.hooksPath is set to {escape(res['hooks_path'])}; the hooks were installed there, and the setting was left alone", err=True)


@command.command("uninstall")
@json_option
def uninstall_cmd(as_json: bool) -> int:
    """Remove our hooks, restore any .legacy hook byte for byte, and unset ckpt.gate.

    With no hooks of ours anywhere and the gate off it says there was nothing to remove (exit 0).
    """
    from ..hooks import uninstall

    repo = open_repo()
    res = uninstall(repo)

    def human() -> None:
        if not res["changed"]:
            say(f"nothing to remove: no git ckpt hooks in {escape(res['dir'])}, and the gate is off")
            return
        if res["removed"]:
            say(f"removed {', '.join(res['removed'])} from {escape(res['dir'])}")
        else:
            say(f"no git ckpt hooks in {escape(res['dir'])}")
        for d in res["removed_from"]:
            if d != res["dir"]:
                say(f"removed them from {escape(d)} too (another worktree ran its hooks from there)")
        for name in res["restored"]:
            say(f"restored your previous {name} hook")
        say("gate off (git config ckpt.gate unset)")

    emit("hooks uninstall", res, as_json, human)
    return 0


@command.command("status")
@json_option
def status_cmd(as_json: bool) -> int:
    """Show where hooks are run from, which are ours, chained legacy hooks, and the gate setting."""
    from ..hooks import status

    repo = open_repo()
    res = status(repo)

    def human() -> None:
        say(f"hooks directory: {escape(res['dir'])}" + (f" (core.hooksPath = {escape(res['hooks_path'])})" if res["hooks_path"] else ""))
        for h in res["hooks"]:
            line = f"  {h['name']:<20} {h['state']}"
            if h["legacy"]:
                line += f" (chains {h['name']}.legacy)"
            if h["state"] == "ours" and not h["executable"]:
                line += " (not executable: git skips it; git ckpt hooks install makes it so)"
            if h["state"] == "ours" and not h["python_ok"]:
                line += f" (interpreter {h['python']} is gone; falls back to git-ckpt on PATH)"
            if h["state"] == "ours" and not h["current"]:
                line += " (written by another git-ckpt version: git ckpt hooks install updates it)"
            say(line)
        for w in res["worktrees"]:
            if w["dir"] != res["dir"]:
                say(f"worktree {escape(w['worktree'])}: hooks from {escape(w['dir'])}" + ("" if w["active"] else " (git ckpt hooks are not there)"))
        if res["active"]:
            say("gate: on (ckpt.gate = true)")
        elif res["gate"]:
            say(f"gate: NOT active in this worktree: git runs its hooks from {escape(res['dir'])}, where the git ckpt hooks are not installed or not executable (git ckpt hooks install)")
        else:
            say("gate: off")

    emit("hooks status", res, as_json, human)
    return 0
