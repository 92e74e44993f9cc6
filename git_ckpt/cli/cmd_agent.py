"""git ckpt agent: wire checkpoints and the handoff receipt into a coding agent's hooks."""

from __future__ import annotations

import json

import click

from . import emit, json_option, open_repo, say

AGENT = click.Choice(["claude-code", "generic"])


@click.group("agent")
def command() -> None:
    """Install or remove agent hooks: save before compaction and at the end of a turn, hand the
    receipt to a new session."""


@command.command("install")
@click.argument("agent", type=AGENT)
@click.option("--print", "print_", is_flag=True, help="Print the configuration instead of writing it (any agent).")
@click.option("--local", is_flag=True, help="Write .claude/settings.local.json (not committed) instead of .claude/settings.json.")
@json_option
def install_cmd(agent: str, print_: bool, local: bool, as_json: bool) -> int:
    """Merge AGENT's hooks into its settings file, keeping every existing key."""
    from .. import agent as agent_mod

    if print_:
        snip = agent_mod.snippet(agent)

        def human() -> None:
            if agent == "claude-code":
                say(json.dumps(snip, indent=2))
            else:
                for when, cmd in snip.items():
                    say(f"{when}: {cmd}")

        emit("agent install", snip, as_json, human)
        return 0
    repo = open_repo()
    res = agent_mod.install(repo, agent, local=local)

    def human() -> None:
        if res["added"]:
            say(f"{'created' if res['created'] else 'updated'} {res['path']}: added hooks {', '.join(res['added'])}")
        if res["already"]:
            say(f"already installed in {res['path']}: {', '.join(res['already'])}")

    emit("agent install", res, as_json, human)
    return 0


@command.command("uninstall")
@click.argument("agent", type=AGENT)
@click.option("--local", is_flag=True, help="Undo an install into .claude/settings.local.json.")
@json_option
def uninstall_cmd(agent: str, local: bool, as_json: bool) -> int:
    """Remove exactly what install added (the original bytes and permissions come back when the file is unchanged)."""
    from .. import agent as agent_mod

    res = agent_mod.uninstall(open_repo(), agent, local=local)
    text = {"original": f"restored {res['path']} to its original bytes",
            "removed-file": f"removed {res['path']} (install created it)",
            "edited": f"removed the git ckpt hooks from {res['path']} (it was edited since install; the rest is kept)",
            "gone": f"{res['path']} no longer exists; forgot the install record"}[res["restored"]]
    emit("agent uninstall", res, as_json, lambda: say(text))
    return 0


@command.command("status")
@json_option
def status_cmd(as_json: bool) -> int:
    """Which settings files carry git ckpt hooks in this worktree."""
    from .. import agent as agent_mod

    rows = agent_mod.status(open_repo())

    def human() -> None:
        if not rows:
            say("no agent hooks installed")
        for r in rows:
            say(f"{r['agent']}: {r['path']} ({', '.join(r['events'])})" + ("" if r["intact"] else " [edited since install]"))

    emit("agent status", rows, as_json, human)
    return 0
