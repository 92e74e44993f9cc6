"""``git ckpt mcp``: a client from the official MCP SDK starts the real server over stdio, lists
the tools, saves, plans and applies a restore, and reads the handoff receipt."""

from __future__ import annotations

import json
import os

import pytest

from conftest import ckpt, run

mcp = pytest.importorskip("mcp")


def call(session, name, args=None):
    return session.call_tool(name, args or {})


async def _session_run(repo, body):
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command="git", args=["ckpt", "mcp"], cwd=str(repo), env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)


def text(result) -> dict:
    assert not result.is_error, result
    return json.loads(result.content[0].text)


def test_tools_save_restore_handoff(repo):
    import anyio

    ckpt(repo, "task", "start", "mcp-task", "--goal", "drive git ckpt from an agent", fsck=False)
    (repo / "a.txt").write_text("one\n")

    async def body(s):
        names = {t.name for t in (await s.list_tools()).tools}
        assert {"ckpt_save", "ckpt_list", "ckpt_show", "ckpt_diff", "ckpt_restore", "ckpt_undo", "ckpt_handoff",
                "ckpt_task_start", "ckpt_task_show", "ckpt_task_note"} <= names
        saved = text(await call(s, "ckpt_save", {"message": "first", "next": "change a.txt"}))
        assert (saved["id"], saved["created"], saved["text"]) == ("mcp-task/1", True, "checkpoint saved: mcp-task/1")
        (repo / "a.txt").write_text("two\n")
        (repo / "junk.txt").write_text("junk\n")
        diff = text(await call(s, "ckpt_diff"))
        assert diff["changes"] == [{"path": "a.txt", "status": "M"}, {"path": "junk.txt", "status": "A"}]
        plan = text(await call(s, "ckpt_restore", {"checkpoint": "mcp-task/1"}))
        assert plan["applied"] is False and plan["plan"]["write"] == ["a.txt"] and plan["plan"]["delete"] == ["junk.txt"]
        assert (repo / "a.txt").read_text() == "two\n"  # a plan changes nothing
        refused = await call(s, "ckpt_restore", {"checkpoint": "mcp-task/1", "apply": True})
        assert refused.is_error and "plan_id" in refused.content[0].text
        (repo / "late.txt").write_text("late\n")  # the worktree moves on: the old plan no longer holds
        stale = await call(s, "ckpt_restore", {"checkpoint": "mcp-task/1", "apply": True, "plan_id": plan["plan_id"]})
        assert stale.is_error and "the worktree changed since that plan" in stale.content[0].text
        plan = text(await call(s, "ckpt_restore", {"checkpoint": "mcp-task/1"}))
        done = text(await call(s, "ckpt_restore", {"checkpoint": "mcp-task/1", "apply": True, "plan_id": plan["plan_id"]}))
        assert done["applied"] is True and done["saved"] == "mcp-task/2"
        assert (repo / "a.txt").read_text() == "one\n" and not (repo / "junk.txt").exists()
        text(await call(s, "ckpt_task_note", {"failed": "edit a.txt to two", "reason": "wrong", "evidence": ["mcp-task/2"],
                                              "decided": ["keep one"]}))
        receipt = text(await call(s, "ckpt_handoff"))
        r = receipt["receipt"]
        assert r["goal"] == "drive git ckpt from an agent" and r["current"] == "mcp-task/1"
        assert r["failed"][0]["option"] == "edit a.txt to two" and r["next"] == "change a.txt"
        assert receipt["markdown"].startswith("# Handoff: mcp-task\n")
        listed = text(await call(s, "ckpt_list"))
        assert [c["id"] for c in listed["checkpoints"]] == ["mcp-task/1", "mcp-task/2"]
        bad = await call(s, "ckpt_show", {"checkpoint": "mcp-task/9"})
        assert bad.is_error and "error: no checkpoint mcp-task/9" in bad.content[0].text
        undone = text(await call(s, "ckpt_undo"))
        assert undone["target"] == "mcp-task/2"
        return True

    assert anyio.run(_session_run, repo, body)
    assert (repo / "a.txt").read_text() == "two\n" and (repo / "junk.txt").read_text() == "junk\n"
    ckpt(repo, "log", "--verify")


def test_missing_sdk_is_a_clear_error(repo, tmp_path):
    fake = tmp_path / "fake"
    (fake / "mcp").mkdir(parents=True)
    (fake / "mcp" / "__init__.py").write_text("raise ImportError('no mcp here')\n")
    res = run(["git", "ckpt", "mcp"], repo, env={"PYTHONPATH": str(fake)}, check=False)
    assert res.returncode == 2
    err, hint = res.stderr.decode().splitlines()
    assert err == "error: git ckpt mcp needs the MCP Python SDK, which is not installed"
    assert hint.startswith("hint: /") and hint.endswith(" -m pip install 'mcp>=1.0' (or, in a git-ckpt checkout: pip install '.[mcp]')")


def test_outside_a_repository(tmp_path):
    res = ckpt(tmp_path, "mcp", rc=3)
    assert res.err.startswith("error: not a git repository")


def test_text_that_is_not_utf8_gets_a_tool_error_not_a_hang(repo):
    """Hostile report: ``{"message": "\\ud800"}`` (a lone surrogate) left the client waiting
    forever.  It must get a tool error naming the argument; the server keeps serving."""
    import select
    import subprocess

    proc = subprocess.Popen(["git", "ckpt", "mcp"], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)

    def send(raw: str) -> None:
        proc.stdin.write(raw.encode() + b"\n")
        proc.stdin.flush()

    def answer() -> dict:
        ready, _, _ = select.select([proc.stdout], [], [], 60)  # a guard against a hang, not a timing check
        assert ready, "the server did not answer"
        return json.loads(proc.stdout.readline())

    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        assert answer()["id"] == 1
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        send('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ckpt_save","arguments":{"message":"\\ud800"}}}')
        res = answer()
        assert res["id"] == 2 and res["result"]["isError"] is True
        assert "error: argument message is not valid UTF-8 text" in res["result"]["content"][0]["text"]
        # a valid surrogate pair is fine, and the server still answers
        send('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ckpt_save","arguments":{"message":"ok \\ud83d\\ude00"}}}')
        res = answer()
        assert res["id"] == 3 and not res["result"].get("isError"), res
        assert json.loads(res["result"]["content"][0]["text"])["id"] == "default/1"
    finally:
        proc.stdin.close()
        proc.wait(60)
    assert checkpoint_messages(repo) == ["ok \U0001f600"]


def checkpoint_messages(repo) -> list[str]:
    out = run(["git", "ckpt", "list", "--json"], repo).stdout
    return [c["message"] for c in json.loads(out)["result"]]


def test_a_plan_covers_the_content_it_overwrites(repo):
    """Issue 10, input 11: a path the plan writes or deletes, edited after the plan (same set of
    paths), makes the apply refuse and keeps the edit; so does a changed mode or a file turned
    into a symlink."""
    import anyio

    ckpt(repo, "task", "start", "plan-task", fsck=False)
    (repo / "x.py").write_text("saved\n")
    ckpt(repo, "save", "-m", "base", fsck=False)
    (repo / "x.py").write_text("changed once\n")
    (repo / "extra.txt").write_text("extra\n")

    def state():
        return {p.name: (p.is_symlink(), p.stat().st_mode if not p.is_symlink() else 0, p.read_bytes() if not p.is_symlink() else b"")
                for p in repo.iterdir() if p.name != ".git"}

    async def body(s):
        edits = [
            lambda: (repo / "x.py").write_text("edited after the plan\n"),
            lambda: (repo / "extra.txt").write_text("edited residue\n"),
            lambda: os.chmod(repo / "x.py", 0o755),
            lambda: ((repo / "extra.txt").unlink(), os.symlink("x.py", repo / "extra.txt")),
        ]
        for edit in edits:
            plan = text(await call(s, "ckpt_restore", {"checkpoint": "plan-task/1"}))
            assert "x.py" in plan["plan"]["write"]
            edit()
            before = state()
            stale = await call(s, "ckpt_restore", {"checkpoint": "plan-task/1", "apply": True, "plan_id": plan["plan_id"]})
            assert stale.is_error and "changed since that plan" in stale.content[0].text
            assert state() == before
        plan = text(await call(s, "ckpt_restore", {"checkpoint": "plan-task/1"}))
        done = text(await call(s, "ckpt_restore", {"checkpoint": "plan-task/1", "apply": True, "plan_id": plan["plan_id"]}))
        assert done["applied"] is True and (repo / "x.py").read_text() == "saved\n"

    anyio.run(_session_run, repo, body)


def test_the_mcp_tools_say_what_the_cli_says(repo):
    """One renderer per result: save, restore and undo print the same lines in the terminal and
    in the MCP tools' ``text``; their JSON is the CLI's ``--json`` result."""
    from git_ckpt.mcp_server import Tools

    tools = Tools(str(repo))
    (repo / "f").write_text("one\n")
    saved = tools.save(message="one")
    cli = ckpt(repo, "save", "-m", "again")
    assert cli.out == "no changes since default/1; nothing saved (use --allow-empty to save anyway)\n"
    assert saved["text"] == "checkpoint saved: default/1"
    (repo / "f").write_text("two\n")
    plan = tools.restore("default/1")
    done = tools.restore("default/1", apply=True, plan_id=plan["plan_id"])
    assert done["text"].split("\n") == ["saved current state as default/2 (pre-restore)", "restored default/1"]
    undone = ckpt(repo, "undo")
    assert undone.out.splitlines() == ["current state matches default/1; not saved again", "undo: restored default/2"]
    again = tools.restore("default/1", apply=True, plan_id=tools.restore("default/1")["plan_id"])
    assert again["text"].split("\n") == ["current state matches default/2; not saved again", "restored default/1"]
    json_undo = ckpt(repo, "undo", "--json").json()["result"]
    assert set(json_undo) == {"target", "previous", "saved", "dry_run", "plan", "warnings"}
    assert set(tools.undo()) == set(json_undo) | {"text"}
