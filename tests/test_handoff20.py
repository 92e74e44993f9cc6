"""What the twentieth handoff pass found, each as its kind.

- Two views of where the worktree stands, computed two ways: after ``git ckpt restore T/N`` on a
  HEAD that had moved since T/N was saved, ``status`` said ``worktree: matches T/N`` (and ``diff``
  showed nothing) while the handoff receipt said ``Workspace: changed since T/N`` and
  ``handoff --check`` reported ``DRIFT worktree: index, HEAD or overlay differ`` (exit 1): only
  ``--reset-head`` cleared it, though a HEAD that *commits* the checkpoint was fine.  The
  receipt, its ``--json`` and ``--check`` now rest on status's own facts
  (``git_ckpt.status.facts``): the files, index and overlay match and HEAD moved is said as such
  (not drift), and a difference names which of files, index, overlay and HEAD differ.
- The MCP server left a request line unanswered when it was a JSON object but no valid JSON-RPC
  request (``params`` that is neither an object nor an array, no ``method``, an ``id`` that is
  an array, null, a fraction or a boolean): the client waited forever.  Each such line is
  answered once (-32600 Invalid Request, -32602 Invalid params) and the server goes on.

Real repositories, the real ``git`` and ``git ckpt``.
"""

from __future__ import annotations

import pytest

from conftest import ckpt, git


def _restored_on_moved_head(repo):
    """The brief's repro: T/1 saved, a commit since, T/1 restored without --reset-head."""
    ckpt(repo, "task", "start", "t", "--goal", "g")
    (repo / "README").write_text("a2\n")
    ckpt(repo, "save", "-m", "edit")
    base = git(repo, "rev-parse", "HEAD").decode().strip()
    (repo / "b.py").write_text("b\n")
    git(repo, "add", "b.py")
    git(repo, "commit", "-q", "-m", "add b")
    ckpt(repo, "restore", "t/1")
    return base, git(repo, "rev-parse", "HEAD").decode().strip()


def test_handoff_says_what_status_says_when_only_head_moved(repo):
    from test_verify import verifier, write_config

    write_config(repo, verifier("ok", ["true"]))
    base, head = _restored_on_moved_head(repo)
    out = ckpt(repo, "status").out.splitlines()
    assert out[3:5] == ["worktree:  matches t/1 (@)", f"HEAD:      not where t/1 was saved (saved on {base[:12]}, HEAD is {head[:12]})"]
    assert ckpt(repo, "diff").out == ""
    said = "matches t/1; HEAD moved since (git ckpt restore t/1 --reset-head brings it back)"
    assert f"Workspace: {said}" in ckpt(repo, "handoff").out.splitlines()
    r = ckpt(repo, "handoff", "--json").json()["result"]
    assert r["workspace"] == "clean"
    assert r["worktree"] == {"checkpoint": "t/1", "files_match": True, "head_moved": True, "head_commits": False,
                             "base": base, "head": head, "exact": False, "differs": ["HEAD"],
                             "reset_head": "git ckpt restore t/1 --reset-head"}
    # not drift: the files, index and overlay are the checkpoint's; the verifier is re-run on them
    res = ckpt(repo, "handoff", "--check")
    assert res.out.splitlines()[1:] == [f"ok    worktree: {said}",
                                        "ok    verifier ok: re-run: passed (recorded), nothing recorded before",
                                        "handoff of t: no drift"]
    # --reset-head brings HEAD back, as said: then exactly the checkpoint
    ckpt(repo, "restore", "t/1", "--reset-head")
    assert "Workspace: clean (matches t/1)" in ckpt(repo, "handoff").out.splitlines()
    assert ckpt(repo, "handoff", "--check").out.splitlines()[1] == "ok    worktree: matches t/1"


def test_handoff_names_what_differs(repo):
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["cfg/"]\n')
    (repo / ".gitignore").write_text("cfg/\n")
    (repo / "cfg").mkdir()
    (repo / "cfg" / "local.env").write_text("A=1\n")
    git(repo, "add", ".ckpt.toml", ".gitignore")
    git(repo, "commit", "-q", "-m", "overlay")
    ckpt(repo, "task", "start", "t")
    (repo / "README").write_text("unstaged\n")
    ckpt(repo, "save", "-m", "s")

    def said() -> tuple[str, str, list[str]]:
        ws = next(ln for ln in ckpt(repo, "handoff").out.splitlines() if ln.startswith("Workspace: "))
        env = ckpt(repo, "handoff", "--check", "--json", rc=1).json()["result"]
        row = next(c for c in env["checks"] if c["check"] == "worktree")
        assert env["drift"] == [f"worktree differs from t/1: {row['detail']}"]
        return ws, row["detail"], row["differs"]

    git(repo, "add", "README")  # the index stages what the checkpoint left unstaged
    assert said() == ("Workspace: changed since t/1 (index differs)", "index differs", ["index"])
    git(repo, "reset", "-q")
    (repo / "cfg" / "local.env").write_text("A=2\n")
    assert said() == ("Workspace: changed since t/1 (overlay differs)", "overlay differs", ["overlay"])
    (repo / "new.py").write_text("n\n")
    assert said() == ("Workspace: changed since t/1 (files and overlay differ)",
                      "files and overlay differ (changed: new.py)", ["files", "overlay"])
    (repo / "cfg" / "local.env").write_text("A=1\n")
    git(repo, "add", "new.py")
    git(repo, "commit", "-q", "-m", "new")
    assert said() == ("Workspace: changed since t/1 (files and HEAD differ)",
                      "files and HEAD differ (changed: new.py)", ["files", "HEAD"])
    (repo / "new.py").unlink()
    git(repo, "add", "README")
    assert said() == ("Workspace: changed since t/1 (index and HEAD differ)", "index and HEAD differ", ["index", "HEAD"])


# ------------------------------------------------------------------- MCP: JSON-RPC request shape

REQ = 'Invalid Request: '


@pytest.mark.parametrize("line,answer", [
    (b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":5}', (3, -32600, REQ + '"params" must be an object or an array')),
    (b'{"jsonrpc":"2.0","id":"s","method":"tools/list","params":"x"}', ("s", -32600, REQ + '"params" must be an object or an array')),
    (b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":["ckpt_save"]}',
     (3, -32602, 'Invalid params: "params" must be an object (by name), not an array')),
    (b'{"id":1}', (1, -32600, REQ + 'no "method"')),
    (b'{"jsonrpc":"2.0","id":1}', (1, -32600, REQ + 'no "method"')),
    (b'{"jsonrpc":"2.0","id":1,"method":7}', (1, -32600, REQ + '"method" must be a string')),
    (b'{"jsonrpc":"1.0","id":1,"method":"tools/list"}', (1, -32600, REQ + '"jsonrpc" must be "2.0"')),
    (b'{"jsonrpc":"2.0","id":[1],"method":"tools/list"}', (None, -32600, REQ + '"id" must be a string or an integer')),
    (b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', (None, -32600, REQ + '"id" must be a string or an integer')),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', (None, -32600, REQ + '"id" must be a string or an integer')),
    (b'{"jsonrpc":"2.0","id":1.0,"method":"tools/list"}', (None, -32600, REQ + '"id" must be a string or an integer')),
    (b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}', (None, -32600, REQ + '"id" must be a string or an integer')),
    (b'{"jsonrpc":"2.0","method":1,"params":"bar"}', (None, -32600, REQ + '"method" must be a string')),  # JSON-RPC's own example
])
def test_mcp_answers_every_request_that_is_no_valid_jsonrpc_request(repo, line, answer):
    from test_attack19 import _Server

    server = _Server(repo)
    try:
        server.send(line)
        code, message = answer[1:]
        assert server.answer() == {"jsonrpc": "2.0", "id": answer[0], "error": {"code": code, "message": message}}
        server.still_serves(9)  # the next answer is the next request's: exactly one answer each
    finally:
        rc, rest = server.close()
    assert rc == 0 and b"Traceback" not in rest, rest


def test_mcp_answers_no_notification_and_no_response(repo):
    """A notification is never answered, not even with params the SDK cannot read; nor is a
    response of the client's (to a request of the server's): the next answer is the next request's."""
    from test_attack19 import _Server

    server = _Server(repo)
    try:
        server.send(b'{"jsonrpc":"2.0","method":"notifications/progress","params":[1]}')
        server.send(b'{"jsonrpc":"2.0","id":77,"result":{}}')
        server.send(b'{"jsonrpc":"2.0","id":78,"error":{"code":1,"message":"no"}}')
        server.still_serves(9)
        server.send(b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"ckpt_save","arguments":{"message":"m"}}}')
        res = server.answer()
        assert res["id"] == 10 and not res["result"].get("isError"), res
    finally:
        rc, rest = server.close()
    assert rc == 0 and b"Traceback" not in rest, rest
