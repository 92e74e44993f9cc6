"""``git ckpt agent install claude-code`` merges into .claude/settings.json keeping every key;
``agent uninstall`` removes exactly what it added (byte-for-byte when the file is untouched)."""

from __future__ import annotations

import json
import shutil

from conftest import ckpt

from git_ckpt.agent import CLAUDE_HOOKS

EXISTING = b"""{
    "model": "claude-sonnet",
    "permissions": {"allow": ["Bash(npm test)"], "deny": []},
    "env": {"FOO": "bar"},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]
    },
    "unicode": "caf\\u00e9 \xe2\x9c\x93"
}"""


def ours(settings: dict) -> dict:
    return {ev: [h["command"] for g in groups for h in g["hooks"] if h["command"] in CLAUDE_HOOKS.values()]
            for ev, groups in settings["hooks"].items()}


def test_install_merges_keeping_every_key_and_uninstall_restores_bytes(repo):
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(EXISTING)
    before = json.loads(EXISTING)
    res = ckpt(repo, "agent", "install", "claude-code")
    assert res.out == "updated .claude/settings.json: added hooks PreCompact, Stop, SessionStart\n"
    after = json.loads(path.read_bytes())
    for key in ("model", "permissions", "env", "unicode"):
        assert after[key] == before[key]
    assert after["hooks"]["PreToolUse"] == before["hooks"]["PreToolUse"]
    assert after["hooks"]["Stop"][0] == before["hooks"]["Stop"][0]
    assert ours(after) == {"Stop": [CLAUDE_HOOKS["Stop"]], "PreToolUse": [], "PreCompact": [CLAUDE_HOOKS["PreCompact"]],
                           "SessionStart": [CLAUDE_HOOKS["SessionStart"]]}
    assert after["hooks"]["PreCompact"] == [{"matcher": "", "hooks": [{"type": "command", "command": CLAUDE_HOOKS["PreCompact"], "timeout": 120}]}]
    written = path.read_bytes()
    assert ckpt(repo, "agent", "install", "claude-code").out == "already installed in .claude/settings.json: PreCompact, Stop, SessionStart\n"
    assert path.read_bytes() == written
    assert ckpt(repo, "agent", "status", "--json").json()["result"] == [
        {"agent": "claude-code", "path": ".claude/settings.json", "events": ["PreCompact", "SessionStart", "Stop"],
         "state": "intact", "intact": True, "local": False}]
    assert ckpt(repo, "agent", "uninstall", "claude-code").out == "restored .claude/settings.json to its original bytes\n"
    assert path.read_bytes() == EXISTING
    assert not (repo / ".git" / "ckpt" / "agent-install.json").exists()
    assert ckpt(repo, "agent", "uninstall", "claude-code").out == \
        "nothing to remove: no git ckpt hooks for claude-code are installed in .claude/settings.json or .claude/settings.local.json\n"


def test_install_creates_and_uninstall_removes(repo):
    ckpt(repo, "agent", "install", "claude-code", "--local")
    path = repo / ".claude" / "settings.local.json"
    assert set(json.loads(path.read_bytes())["hooks"]) == {"PreCompact", "Stop", "SessionStart"}
    assert ckpt(repo, "agent", "uninstall", "claude-code", "--local").out == "removed .claude/settings.local.json (install created it)\n"
    assert not (repo / ".claude").exists()


def test_uninstall_after_user_edits_removes_only_ours(repo):
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(EXISTING)
    ckpt(repo, "agent", "install", "claude-code")
    edited = json.loads(path.read_bytes())
    edited["theme"] = "dark"
    edited["hooks"]["Stop"][1]["hooks"].append({"type": "command", "command": "echo mine"})
    path.write_text(json.dumps(edited))
    res = ckpt(repo, "agent", "uninstall", "claude-code")
    assert "it was edited since install" in res.out
    final = json.loads(path.read_bytes())
    expected = json.loads(EXISTING)
    expected["theme"] = "dark"
    expected["hooks"]["Stop"].append({"matcher": "", "hooks": [{"type": "command", "command": "echo mine"}]})
    assert final == expected


def test_bad_settings_are_left_alone(repo):
    path = repo / ".claude" / "settings.json"
    path.parent.mkdir()
    for data in (b"{not json", b"[1, 2]", b'{"hooks": []}'):
        path.write_bytes(data)
        res = ckpt(repo, "agent", "install", "claude-code", rc=1)
        assert res.err.startswith("error: ") and ".claude/settings.json" in res.err
        assert path.read_bytes() == data
    assert not (repo / ".git" / "ckpt" / "agent-install.json").exists()


def test_print(repo):
    snip = json.loads(ckpt(repo, "agent", "install", "claude-code", "--print").out)
    assert {ev: g[0]["hooks"][0]["command"] for ev, g in snip["hooks"].items()} == CLAUDE_HOOKS
    assert not (repo / ".claude").exists()
    out = ckpt(repo, "agent", "install", "generic", "--print").out
    assert "end of each turn: git ckpt save --kind auto -m 'agent: end of turn'\n" in out
    ckpt(repo, "agent", "install", "generic", rc=2)
    ckpt(repo, "agent", "install", "nonesuch", rc=2)


PAYLOAD = b'{"session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "hook_event_name": "Stop"}'


def test_installed_hook_commands_run(repo):
    """The commands written into the settings file work as Claude Code runs them (sh -c, project dir)."""
    import subprocess

    ckpt(repo, "task", "start", "agent-task", "--goal", "agent goal", fsck=False)
    ckpt(repo, "agent", "install", "claude-code", "--local")  # writes the shim a bare PATH falls back on
    (repo / "x.txt").write_text("x\n")
    env = {"CLAUDE_PROJECT_DIR": str(repo)}
    import os

    full = dict(os.environ, **env)
    for event in ("PreCompact", "Stop"):
        proc = subprocess.run(["sh", "-c", CLAUDE_HOOKS[event]], cwd=repo / ".git", env=full, capture_output=True, input=PAYLOAD)
        assert proc.returncode == 0, proc
    kinds = [r["kind"] for r in ckpt(repo, "list", "--json").json()["result"]]
    assert kinds == ["auto"]  # the second save found nothing new
    proc = subprocess.run(["sh", "-c", CLAUDE_HOOKS["SessionStart"]], cwd="/", env=full, capture_output=True, input=PAYLOAD)
    assert proc.returncode == 0 and proc.stdout.decode().startswith("# Handoff: agent-task\n\nGoal: agent goal\n")
    # an agent whose PATH lacks the venv git-ckpt was installed in still reaches it
    (repo / "y.txt").write_text("y\n")
    bare = dict(full, PATH=f"{os.path.dirname(shutil.which('git'))}:/usr/bin:/bin")  # the git of this run
    proc = subprocess.run(["sh", "-c", CLAUDE_HOOKS["Stop"]], cwd=repo, env=bare, capture_output=True, input=PAYLOAD)
    assert proc.returncode == 0 and proc.stderr == b"", proc
    assert [r["kind"] for r in ckpt(repo, "list", "--json").json()["result"]] == ["auto", "auto"]


def test_uninstall_restores_the_permissions_too(repo):
    """Hostile report: uninstall put the bytes back but a 0640 settings.json became 0644."""
    import os
    import stat

    path = repo / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(EXISTING)
    os.chmod(path, 0o640)
    ckpt(repo, "agent", "install", "claude-code")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640  # install keeps them as well
    ckpt(repo, "agent", "uninstall", "claude-code")
    assert path.read_bytes() == EXISTING and stat.S_IMODE(os.stat(path).st_mode) == 0o640
    # edited after install: only our handlers go, the file keeps its (new) permissions
    ckpt(repo, "agent", "install", "claude-code")
    os.chmod(path, 0o600)
    data = json.loads(path.read_bytes())
    data["model"] = "edited"
    path.write_text(json.dumps(data))
    os.chmod(path, 0o600)
    assert ckpt(repo, "agent", "uninstall", "claude-code").out.startswith("removed the git ckpt hooks from .claude/settings.json")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and json.loads(path.read_bytes())["model"] == "edited"
