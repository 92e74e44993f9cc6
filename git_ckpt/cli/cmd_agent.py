"""git ckpt agent: wire checkpoints and the handoff receipt into a coding agent's hooks."""

from __future__ import annotations

import json
import sys

import click

from . import emit, json_option, open_repo, say, warn

AGENT = click.Choice(["claude-code", "codex", "gemini", "cursor", "copilot", "generic"])
HOOKED = click.Choice(["claude-code", "codex", "gemini", "cursor", "copilot"])


@click.group("agent")
def command() -> None:
    """Manage agent hooks ({commands}) for Claude Code, Codex, Gemini CLI, Cursor and Copilot CLI: save before compaction and at the end of a turn, hand the receipt to a new session."""


@command.command("install")
@click.argument("agent", type=AGENT)
@click.option("--print", "print_", is_flag=True, help="Print the configuration instead of writing it (any agent).")
@click.option("--local", is_flag=True, help="claude-code: write .claude/settings.local.json (not committed) instead of .claude/settings.json.")
@json_option
def install_cmd(agent: str, print_: bool, local: bool, as_json: bool) -> int:
    """Merge AGENT's hooks into its settings file, keeping every existing key.

    The hooks run git-ckpt from the agent's PATH, else through $GIT_COMMON_DIR/ckpt/git-ckpt
    (written here, naming this machine's git-ckpt), so the settings file holds nothing
    machine-specific and can be committed.
    """
    from .. import agent as agent_mod

    if print_:
        snip = agent_mod.snippet(agent)

        def human_snippet() -> None:
            if agent != "generic":
                say(json.dumps(snip, indent=2))
            else:
                for when, cmd in snip.items():
                    say(f"{when}: {cmd}")

        emit("agent install", snip, as_json, human_snippet)
        return 0
    repo = open_repo()
    res = agent_mod.install(repo, agent, local=local)

    def human() -> None:
        if res["added"]:
            say(f"{'created' if res['created'] else 'updated'} {res['path']}: added hooks {', '.join(res['added'])}")
        if res["already"]:
            say(f"already installed in {res['path']}: {', '.join(res['already'])}")
        if res["note"]:
            say(f"note: {res['note']}")

    emit("agent install", res, as_json, human)
    return 0


@command.command("uninstall")
@click.argument("agent", type=AGENT)
@click.option("--local/--shared", "local", default=None,
              help="Only the local (.claude/settings.local.json) or only the shared settings file; default: wherever it was installed.")
@json_option
def uninstall_cmd(agent: str, local: bool | None, as_json: bool) -> int:
    """Remove exactly what install added, wherever it was installed (the original bytes and permissions come back when a file is unchanged).

    With nothing installed for AGENT it says there was nothing to remove and exits 0.
    """
    from .. import agent as agent_mod

    repo = open_repo()
    rows = agent_mod.uninstall(repo, agent, local=local)

    def human() -> None:
        if not rows:
            files = agent_mod.settings_files(repo, agent, local)
            say(f"nothing to remove: no git ckpt hooks for {agent} are installed in {' or '.join(files)}" if files else
                "nothing to remove: git ckpt never installs generic hooks (remove the commands you wired in by hand)")
        for res in rows:
            say({"original": f"restored {res['path']} to its original bytes",
                 "removed-file": f"removed {res['path']} (install created it)",
                 "edited": f"removed the git ckpt hooks from {res['path']} (it was edited since install; the rest is kept)",
                 "absent": f"nothing to remove from {res['path']}: the git ckpt hooks are no longer in it (reverted, or "
                           "removed by hand); left it as it is and forgot the install record",
                 "gone": f"{res['path']} no longer exists; forgot the install record"}[res["restored"]])

    emit("agent uninstall", rows[0] if len(rows) == 1 else rows, as_json, human)
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
            gone = (f" [gone: deleted since install; git ckpt agent install {r['agent']}{' --local' if r['local'] else ''} "
                    "writes it again]")
            say(f"{r['agent']}: {r['path']} ({', '.join(r['events'])})"
                + {"intact": "", "edited": " [edited since install]",
                   "absent": (f" [hooks no longer in it: reverted or removed since install; git ckpt agent install {r['agent']}"
                              f"{' --local' if r['local'] else ''} adds them again]")}.get(r["state"], gone))

    emit("agent status", rows, as_json, human)
    return 0


HOOK_ACTIONS = ("start", "compact", "turn", "end")


@command.command("hook")
@click.argument("agent")
@click.argument("action")
@click.option("--json", "as_json", is_flag=True, help="Accepted for uniformity: stdout is always what the agent reads (JSON for Gemini CLI and Cursor).")
def hook_cmd(agent: str, action: str, as_json: bool) -> int:
    """What the installed hooks run: read the agent's JSON input on stdin, then give the receipt
    (start) or save an auto checkpoint recording the agent's session id (compact, turn, end).

    Always exits 0 and prints no progress: a hook never blocks the agent; a problem is one
    warning line on stderr.
    """
    from .. import agent as agent_mod

    if agent not in HOOKED.choices or action not in HOOK_ACTIONS:  # not an installed hook's words: do nothing
        what = (f"unknown agent {agent!r} (known: {', '.join(HOOKED.choices)})" if agent not in HOOKED.choices
                else f"unknown event {action!r} (known: {', '.join(HOOK_ACTIONS)})")
        warn(f"git ckpt agent hook: {what}; nothing done")
        sys.stdout.write(agent_mod.quiet_output(agent) if agent in HOOKED.choices else "")
        return 0
    payload = None if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read(agent_mod.MAX_INPUT)
    info = agent_mod.session_of(payload or b"")
    out = agent_mod.quiet_output(agent)
    problem = agent_mod.input_problem(payload)
    if problem is not None:  # every agent alike: say so once, carry on without a session id
        warn(f"git ckpt {agent} hook ({action}): {problem}; a checkpoint saved now records no session id" if action != "start"
             else f"git ckpt {agent} hook ({action}): {problem}")
    try:
        from .. import config, store

        repo = open_repo()
        cfg = config.load(repo)
        task = store.current_task(repo)
        if action == "start":
            from .. import handoff

            r = handoff.receipt(repo, task, cfg)
            out = agent_mod.start_output(agent, handoff.markdown(r))
            handoff.mark(repo, task, r["current"])
        else:
            from ..snapshot import save

            res = save(repo, cfg, task=task, message=agent_mod.MESSAGES[action], kind="auto",
                       agent=agent, agent_session=info.get("session"))
            for w in res.warnings:
                warn(w)
    except Exception as exc:  # noqa: BLE001 - a hook must never fail the agent
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        warn(f"git ckpt {agent} hook ({action}): {message}")
    sys.stdout.write(out)
    return 0
