"""git ckpt hooks install|uninstall|status: the commit gate's git hooks."""

from __future__ import annotations

import click

from . import emit, json_option, open_repo, say


@click.group("hooks")
def command() -> None:
    """Install, remove or inspect the pre-commit, prepare-commit-msg and pre-push hooks.

    They go into the directory git runs hooks from (git rev-parse --git-path hooks: core.hooksPath
    and linked worktrees included; core.hooksPath is never changed).  A hook already there is
    kept as HOOK.legacy and run first; uninstall puts back exactly what was there.
    """


@command.command("install")
@json_option
def install_cmd(as_json: bool) -> int:
    """Write the hooks and set git config ckpt.gate true (the gate acts only where it is set)."""
    from ..hooks import install

    repo = open_repo()
    res = install(repo)

    def human() -> None:
        say(f"installed {', '.join(res['installed'])} in {res['dir']}")
        for name in res["legacy"]:
            say(f"kept your existing {name} hook as {name}.legacy; it runs first")
        say("gate on: commits must match the promoted, verified checkpoint (git config ckpt.gate true)")
        if res["hooks_path"]:
            click.echo(f"hint: core.hooksPath is set to {res['hooks_path']}; the hooks were installed there, and the setting was left alone", err=True)

    emit("hooks", res, as_json, human)
    return 0


@command.command("uninstall")
@json_option
def uninstall_cmd(as_json: bool) -> int:
    """Remove our hooks, restore any .legacy hook byte for byte, and unset ckpt.gate."""
    from ..hooks import uninstall

    repo = open_repo()
    res = uninstall(repo)

    def human() -> None:
        if res["removed"]:
            say(f"removed {', '.join(res['removed'])} from {res['dir']}")
        else:
            say(f"no git ckpt hooks in {res['dir']}")
        for name in res["restored"]:
            say(f"restored your previous {name} hook")
        say("gate off (git config ckpt.gate unset)")

    emit("hooks", res, as_json, human)
    return 0


@command.command("status")
@json_option
def status_cmd(as_json: bool) -> int:
    """Show where hooks are run from, which are ours, chained legacy hooks, and the gate setting."""
    from ..hooks import status

    repo = open_repo()
    res = status(repo)

    def human() -> None:
        say(f"hooks directory: {res['dir']}" + (f" (core.hooksPath = {res['hooks_path']})" if res["hooks_path"] else ""))
        for h in res["hooks"]:
            line = f"  {h['name']:<20} {h['state']}"
            if h["legacy"]:
                line += f" (chains {h['name']}.legacy)"
            if h["state"] == "ours" and not h["python_ok"]:
                line += f" (interpreter {h['python']} is gone; falls back to git-ckpt on PATH)"
            say(line)
        say("gate: " + ("on (ckpt.gate = true)" if res["gate"] else "off"))

    emit("hooks", res, as_json, human)
    return 0
