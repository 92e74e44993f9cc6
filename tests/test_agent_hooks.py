"""The agents people use (issue 15): Claude Code, Codex, Gemini CLI, Cursor and Copilot CLI hooks.

Each agent: install merges into its own config keeping every key; the file holds nothing of this
machine; the installed commands, fed the JSON each agent documents on stdin, save checkpoints
that name the agent session (list/show) or print the receipt in the shape the agent reads; a
hook never blocks the agent; uninstall puts the file back byte for byte."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from conftest import ckpt, git

from git_ckpt.agent import SPECS, commands, session_of

AGENTS = ["claude-code", "codex", "gemini", "cursor", "copilot"]

# What each agent's documentation says its hooks receive on stdin, per event (recorded shapes).
SID = {"claude-code": "5f0c1e2a-93b1-4c4e-9d7a-3b2f1c0d9e8f", "codex": "0199a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b",
       "gemini": "gemini-2c7f9d1e", "cursor": "c0nv-7d3e-41aa", "copilot": "copilot-sess-42"}


def payload(agent: str, event: str, cwd: str) -> bytes:
    sid = SID[agent]
    if agent == "claude-code":
        extra = {"PreCompact": {"trigger": "auto", "custom_instructions": ""}, "Stop": {"stop_hook_active": False},
                 "SessionStart": {"source": "startup"}}[event]
        obj = {"session_id": sid, "transcript_path": f"/home/u/.claude/projects/x/{sid}.jsonl", "cwd": cwd,
               "hook_event_name": event, **extra}
    elif agent == "codex":
        obj = {"session_id": sid, "transcript_path": f"/home/u/.codex/sessions/rollout-{sid}.jsonl", "cwd": cwd,
               "hook_event_name": event, "model": "gpt-5-codex", "turn_id": "t-1"}
        if event == "Stop":
            obj.update(stop_hook_active=False, last_assistant_message="done")
        if event == "SessionStart":
            obj["source"] = "startup"
    elif agent == "gemini":
        obj = {"session_id": sid, "transcript_path": f"/home/u/.gemini/tmp/chats/{sid}.json", "cwd": cwd,
               "hook_event_name": event, "timestamp": "2026-11-30T21:00:00.000Z"}
        obj.update({"SessionStart": {"source": "startup"}, "PreCompress": {"trigger": "auto"},
                    "AfterAgent": {"prompt": "fix it", "prompt_response": "fixed", "stop_hook_active": False}}[event])
    elif agent == "cursor":
        obj = {"conversation_id": sid, "generation_id": "gen-1", "model": "claude-4-sonnet", "hook_event_name": event,
               "cursor_version": "1.7.2", "workspace_roots": [cwd], "user_email": None,
               "transcript_path": f"/home/u/.cursor/projects/x/{sid}.txt"}
        if event == "stop":
            obj.update(status="completed", loop_count=0)
        if event == "sessionStart":
            obj.update(session_id=sid, is_background_agent=False, composer_mode="agent")
    else:
        obj = {"timestamp": 1764536400000, "cwd": cwd, "sessionId": sid}
        if event == "sessionStart":
            obj.update(source="new", initialPrompt="fix the bug")
        if event == "sessionEnd":
            obj["reason"] = "complete"
    return json.dumps(obj).encode()


# A settings file each agent's user may already have (keys of their own, hooks of their own).
EXISTING = {
    "claude-code": {"model": "opus", "permissions": {"allow": ["Bash(make)"]},
                    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}},
    "codex": {"hooks": {"SessionStart": [{"matcher": "startup|resume", "hooks": [{"type": "command", "command": "./ctx.sh", "timeout": 10}]}]},
              "x-team": "keep"},
    "gemini": {"theme": "GitHub", "hooksConfig": {"enabled": False, "notifications": True},
               "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}},
    "cursor": {"version": 1, "hooks": {"afterFileEdit": [{"command": "./format.sh"}], "stop": [{"command": "./audit.sh"}]}},
    "copilot": {"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "echo hi", "timeoutSec": 5}]}},
}


def _bare_path() -> str:
    """A PATH without the venv git-ckpt lives in (as an agent's shell may have)."""
    import shutil

    return os.pathsep.join(dict.fromkeys([os.path.dirname(shutil.which("git")), "/usr/bin", "/bin"]))


def run_hook(repo, command: str, data: bytes, *, path: str | None = None, cwd=None):
    env = dict(os.environ, PATH=path or _bare_path(), CLAUDE_PROJECT_DIR=str(repo), GEMINI_PROJECT_DIR=str(repo))
    return subprocess.run(["sh", "-c", command], cwd=cwd or repo, env=env, input=data, capture_output=True)


@pytest.mark.parametrize("agent", AGENTS)
def test_install_merges_and_uninstall_restores_bytes(repo, agent):
    """Every key and hook already in the agent's file is kept; nothing machine-specific is
    written into it; uninstall gives back the original bytes and mode."""
    spec = SPECS[agent]
    path = repo / spec.path
    path.parent.mkdir(parents=True, exist_ok=True)
    original = (json.dumps(EXISTING[agent], indent=4) + "\n").encode()
    path.write_bytes(original)
    os.chmod(path, 0o640)
    res = ckpt(repo, "agent", "install", agent)
    assert res.out.startswith(f"updated {spec.path}: added hooks {', '.join(spec.events)}\n")
    data = path.read_bytes()
    after = json.loads(data)
    before = EXISTING[agent]
    for key, value in before.items():
        if key != "hooks":
            assert after[key] == value or (agent == "gemini" and key == "hooksConfig"), key
    for event, entries in before["hooks"].items():
        assert after["hooks"][event][: len(entries)] == entries
    for event, command in commands(agent).items():
        entry = after["hooks"][event][-1]
        if spec.style == "nested":
            assert entry == {"matcher": "", "hooks": [{"type": "command", "command": command, "timeout": spec.timeout}]}
        elif spec.style == "flat":
            assert entry == {"command": command, "timeout": 120}
        else:
            assert entry == {"type": "command", "bash": command, "timeoutSec": 120}
    if agent == "gemini":
        assert after["hooksConfig"] == {"enabled": False, "notifications": True}  # the user's choice is theirs
    for machine in (str(repo), sys.prefix, sys.executable, os.path.dirname(sys.executable), ".venv", os.environ["HOME"]):
        assert machine.encode() not in data, machine
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert ckpt(repo, "agent", "install", agent).out.startswith(f"already installed in {spec.path}")
    assert path.read_bytes() == data
    assert ckpt(repo, "agent", "uninstall", agent).out == f"restored {spec.path} to its original bytes\n"
    assert path.read_bytes() == original and stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert not (repo / ".git/ckpt/agent-install.json").exists() and not (repo / ".git/ckpt/git-ckpt").exists()
    assert ckpt(repo, "agent", "uninstall", agent).out.startswith("nothing to remove: ")  # idempotent


@pytest.mark.parametrize("agent", AGENTS)
def test_install_into_nothing_and_uninstall_leaves_nothing(repo, agent):
    """No file before: install creates it (with the keys the agent needs: Cursor's and
    Copilot's version, Gemini's hooksConfig.enabled); uninstall removes it and the directories
    it created, and nothing else."""
    spec = SPECS[agent]
    (repo / ".github").mkdir()
    (repo / ".github" / "CODEOWNERS").write_text("* @me\n")
    before = sorted(os.listdir(repo))
    ckpt(repo, "agent", "install", agent)
    created = json.loads((repo / spec.path).read_bytes())
    if agent == "gemini":
        assert created["hooksConfig"] == {"enabled": True}
    if agent in ("cursor", "copilot"):
        assert created["version"] == 1
    assert set(created["hooks"]) == set(spec.events)
    out = ckpt(repo, "agent", "uninstall", agent).out
    assert out == f"removed {spec.path} (install created it)\n"
    assert sorted(os.listdir(repo)) == before and (repo / ".github" / "CODEOWNERS").read_text() == "* @me\n"
    assert not (repo / ".github" / "hooks").exists()


@pytest.mark.parametrize("agent", AGENTS)
def test_uninstall_after_edits_removes_only_ours(repo, agent):
    """Edited since install: exactly our handlers (and a key only we set) go, the rest stays."""
    spec = SPECS[agent]
    ckpt(repo, "agent", "install", agent)
    path = repo / spec.path
    edited = json.loads(path.read_bytes())
    edited["mine"] = {"a": 1}
    first = next(iter(spec.events))
    mine = {"command": "echo mine"} if spec.style == "flat" else (
        {"type": "command", "bash": "echo mine"} if spec.style == "copilot" else {"hooks": [{"type": "command", "command": "echo mine"}]})
    edited["hooks"][first].append(mine)
    path.write_text(json.dumps(edited))
    res = ckpt(repo, "agent", "uninstall", agent)
    assert "it was edited since install" in res.out
    final = json.loads(path.read_bytes())
    assert final == {"mine": {"a": 1}, "hooks": {first: [mine]}}, final  # version/hooksConfig: set by us, removed


def test_local_install_then_plain_uninstall_round_trips(repo):
    """Input 4: `agent install claude-code --local` then `agent uninstall claude-code` (no flag)
    removes it (it exited 4 before); --local/--shared narrow; agents without a local file refuse
    --local (exit 2)."""
    ckpt(repo, "agent", "install", "claude-code", "--local")
    assert (repo / ".claude/settings.local.json").exists()
    assert ckpt(repo, "agent", "uninstall", "claude-code").out == "removed .claude/settings.local.json (install created it)\n"
    assert not (repo / ".claude").exists()
    ckpt(repo, "agent", "install", "claude-code", "--local")
    ckpt(repo, "agent", "install", "claude-code")
    res = ckpt(repo, "agent", "uninstall", "claude-code", "--shared")
    assert res.out == "removed .claude/settings.json (install created it)\n"
    assert (repo / ".claude/settings.local.json").exists()
    res = ckpt(repo, "agent", "uninstall", "claude-code", "--shared")
    assert res.out == "nothing to remove: no git ckpt hooks for claude-code are installed in .claude/settings.json\n" and res.err == ""
    ckpt(repo, "agent", "uninstall", "claude-code")
    assert not (repo / ".claude").exists()
    for agent in ("codex", "gemini", "cursor", "copilot"):
        res = ckpt(repo, "agent", "install", agent, "--local", rc=2)
        assert res.err.startswith(f"error: {agent} has no local settings file\nhint: install into {SPECS[agent].path}")


@pytest.mark.parametrize("agent", AGENTS)
def test_recorded_payloads_save_with_the_session_and_start_gives_the_receipt(repo, agent):
    """The installed commands, run as the agent runs them (sh -c, a PATH without the venv, the
    documented JSON on stdin): save events make auto checkpoints naming the agent session,
    shown by list and show; the start event prints the receipt in the agent's shape."""
    spec = SPECS[agent]
    ckpt(repo, "task", "start", "agent-task", "--goal", "make it work")
    ckpt(repo, "agent", "install", agent)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "agent config")
    cmds = commands(agent)
    saved = 0
    for i, (event, action) in enumerate(spec.events.items()):
        data = payload(agent, event, str(repo))
        if action == "start":
            continue
        (repo / f"work{i}.txt").write_text(f"{event}\n")
        proc = run_hook(repo, cmds[event], data, cwd=repo / ".git" if spec.cd else repo)
        assert proc.returncode == 0 and proc.stderr == b"", proc
        assert proc.stdout == (b"{}\n" if agent in ("gemini", "cursor") else b""), proc
        saved += 1
    rows = ckpt(repo, "list", "--json").json()["result"]
    assert len(rows) == saved
    for r in rows:
        assert r["kind"] == "auto" and r["agent"] == agent and r["agent_session"] == SID[agent]
        assert r["message"].startswith("agent: ")
    listed = ckpt(repo, "list").out
    assert listed.count(f"({agent} {SID[agent][:8]})") == saved, listed
    shown = ckpt(repo, "show").out
    assert f"agent:    {agent} (session {SID[agent]})\n" in shown
    start = next(e for e, a in spec.events.items() if a == "start")
    proc = run_hook(repo, cmds[start], payload(agent, start, str(repo)))
    assert proc.returncode == 0 and proc.stderr == b"", proc
    text = proc.stdout.decode()
    if agent == "gemini":
        obj = json.loads(text)
        assert obj["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        text = obj["hookSpecificOutput"]["additionalContext"]
    elif agent == "cursor":
        text = json.loads(text)["additional_context"]
    assert text.startswith("# Handoff: agent-task\n") and "make it work" in text


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("breakage", ["bad-config", "interrupted-restore", "not-a-repo", "garbage-input"])
def test_a_hook_never_blocks_the_agent(repo, tmp_path, agent, breakage):
    """Whatever is wrong (malformed .ckpt.toml, an interrupted restore, no repository, input
    that is not JSON), every installed command exits 0, keeps stdout in the agent's format and
    says what went wrong in one warning line."""
    ckpt(repo, "agent", "install", agent)
    cwd = repo
    data = payload(agent, next(iter(SPECS[agent].events)), str(repo))
    if breakage == "bad-config":
        (repo / ".ckpt.toml").write_text("[overlay\n")
    elif breakage == "interrupted-restore":
        (repo / ".git/ckpt/RESTORE").write_text("{}")
    elif breakage == "not-a-repo":
        cwd = tmp_path / "elsewhere"
        cwd.mkdir()
    else:
        data = b"\xff\xfe{not json" * 100
    for event, command in commands(agent).items():
        env_repo = cwd if breakage == "not-a-repo" else repo
        proc = run_hook(env_repo, command, data, path=os.environ["PATH"], cwd=cwd)
        assert proc.returncode == 0, proc
        out = proc.stdout
        if agent in ("gemini", "cursor"):
            json.loads(out)  # still what the agent parses
        if breakage == "interrupted-restore" and SPECS[agent].events[event] == "start":
            continue  # a receipt mid-restore (read-only): fine
        assert proc.stderr.count(b"\n") == 1 and proc.stderr.startswith(f"warning: git ckpt {agent} hook (".encode()), proc
        if breakage == "garbage-input":  # every agent alike: said once, and the save still happens
            action = SPECS[agent].events[event]
            assert b"the input on stdin is not JSON" in proc.stderr, proc
            assert action == "start" or b"a checkpoint saved now records no session id" in proc.stderr, proc


def _count(repo) -> int:
    """How many checkpoints the current task has (its refs, read by git: no git ckpt run)."""
    task = (repo / ".git" / "ckpt" / "TASK").read_text().strip() if (repo / ".git" / "ckpt" / "TASK").exists() else "default"
    refs = git(repo, "for-each-ref", "--format=%(refname:lstrip=3)", f"refs/ckpt/{task}/").decode().split()
    return sum(1 for r in refs if r.isdigit())


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("data", [b"not json", b"[1, 2]", b"\"text\"", b"{\"session_id\": ", b"", b" \n"])
def test_malformed_input_is_one_warning_for_every_agent(repo, agent, data):
    """Input that is not a JSON object (the walkthrough fed Gemini's hook plain text and it said
    nothing; the tenth fed none at all, </dev/null): each of the five agents' installed commands warns in one stderr line, exits 0,
    keeps stdout in the agent's format, and a save event still saves (without a session id)."""
    ckpt(repo, "agent", "install", agent)
    for i, (event, command) in enumerate(commands(agent).items()):
        (repo / f"work{i}.txt").write_text(f"{event}\n")  # something to save
        before = _count(repo)
        proc = run_hook(repo, command, data)
        assert proc.returncode == 0, proc
        kind = ("empty (the agent sends a JSON object)" if not data.strip()
                else "not a JSON object" if data.startswith((b"[", b'"')) else "not JSON")
        suffix = "" if SPECS[agent].events[event] == "start" else "; a checkpoint saved now records no session id"
        assert proc.stderr.decode() == f"warning: git ckpt {agent} hook ({SPECS[agent].events[event]}): the input on stdin is {kind}{suffix}\n", proc
        if agent in ("gemini", "cursor"):
            json.loads(proc.stdout)
        if SPECS[agent].events[event] != "start":
            assert _count(repo) == before + 1, event
            assert ckpt(repo, "show", "@", "--json").json()["result"]["manifest"]["agent_session"] is None


@settings(max_examples=200, deadline=None)
@given(st.one_of(
    st.binary(max_size=300),
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=200),
                 lambda c: st.lists(c, max_size=4) | st.dictionaries(st.sampled_from(["session_id", "sessionId", "conversation_id", "hook_event_name", "x"]), c, max_size=5),
                 max_leaves=10).map(lambda o: json.dumps(o).encode()),
))
def test_session_of_any_input(data):
    """Whatever an agent (or anything else) sends, the session id kept is printable text of at
    most 128 characters, or nothing."""
    info = session_of(data)
    assert set(info) <= {"session", "event"}
    if "session" in info:
        assert 0 < len(info["session"]) <= 128 and info["session"].isprintable()


@pytest.mark.parametrize(("agent", "event"), [*((a, "bogus") for a in AGENTS), ("nosuchagent", "turn")])
def test_an_unknown_agent_or_event_is_one_warning_and_exit_0(repo, agent, event):
    """A hook never blocks the agent: `agent hook` with an agent or an event it does not know
    (a newer settings file, a typo) says so in one `warning:` line, does nothing, exits 0."""
    (repo / "new.txt").write_text("x\n")
    res = ckpt(repo, "agent", "hook", agent, event, input=b"{}")
    what = (f"unknown agent 'nosuchagent' (known: {', '.join(AGENTS)})" if agent == "nosuchagent"
            else "unknown event 'bogus' (known: start, compact, turn, end)")
    assert res.err == f"warning: git ckpt agent hook: {what}; nothing done\n"
    assert res.out == ("{}\n" if agent in ("gemini", "cursor") else "")
    assert git(repo, "for-each-ref", "refs/ckpt/") == b""  # nothing saved


def test_install_cursor_notes_claude_code_only_when_both_are_present(repo):
    """`install cursor` warns that Cursor also runs Claude Code's hooks only when they are there."""
    alone = ckpt(repo, "agent", "install", "cursor")
    assert "note:" not in alone.out and "Claude Code" not in alone.out, alone.out
    ckpt(repo, "agent", "uninstall", "cursor")
    ckpt(repo, "agent", "install", "claude-code")
    both = ckpt(repo, "agent", "install", "cursor")
    assert ("note: Claude Code hooks are installed here too, and Cursor runs them as well: the receipt "
            "will be given twice (git ckpt agent uninstall claude-code)\n") in both.out
