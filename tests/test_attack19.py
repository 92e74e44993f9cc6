"""What the attack pass on the eighteenth walkthrough's changes found, each as its kind: JSON
nested deeper than the decoders recurse (a note line, a manifest, a ledger event, a state file,
a ``.ckpt.toml``, an agent hook's stdin, an MCP message) ended in ``RecursionError``; the MCP
stdin pump died on one such line, buffered quadratically and without bound.

Real repositories, clones of a real bare repository, crafted objects, the real ``git ckpt``
entry point (a subprocess timeout is only a safety net against a hang).
"""

from __future__ import annotations

import json
import os
import select
import subprocess

import pytest

from conftest import ckpt, forge_checkpoint, git, init_repo
from test_hostile_ledger import CARD, _event, _fast_import
from test_remote import _team

HANG = 120
# deeper than any decoder recurses (arrays, objects), and just deeper than the documented bound
DEEP = {
    "arrays": b"[" * 3000 + b"]" * 3000,
    "objects": b'{"a":' * 3000 + b"1" + b"}" * 3000,
    "just-over-the-bound": b"[" * 101 + b"]" * 101,
}
TOO_DEEP = "JSON nested deeper than 100 levels"


def _with_key(obj: dict, key: str, raw: bytes) -> bytes:
    """``obj`` as JSON with one more key whose value is the raw JSON ``raw`` (json.dumps
    cannot write what is nested this deep)."""
    return json.dumps(obj)[:-1].encode() + b', "' + key.encode() + b'": ' + raw + b"}"


def _shared(tmp_path):
    """Alice saved t/1 and pushed it; returns ``(bare, alice, bob)``."""
    bare, alice, bob = _team(tmp_path)
    ckpt(alice, "task", "start", "t")
    (alice / "a.txt").write_text("a\n")
    ckpt(alice, "save", "-m", "one")
    ckpt(alice, "push")
    return bare, alice, bob


# ------------------------------------------------------------------- A. JSON nested too deeply

@pytest.mark.parametrize("shape", DEEP)
def test_a_note_line_nested_too_deeply_is_skipped_with_the_warning_of_any_malformed_line(tmp_path, shape):
    _bare, alice, bob = _shared(tmp_path)
    tree = git(alice, "rev-parse", "refs/ckpt/t/1^{tree}").decode().strip()
    line = _with_key({"verifier": "tests", "tree": tree, "status": "passed"}, "zzz", DEEP[shape])
    git(alice, "notes", "--ref=ckpt", "add", "-f", "-F", "-", "refs/ckpt/t/1", input=line + b"\n")
    git(alice, "push", "-q", "origin", "refs/notes/ckpt")
    ckpt(bob, "fetch")
    for args in (("list", "--remote", "origin", "--task", "t"), ("show", "origin:t/1"), ("show", "--json", "origin:t/1")):
        res = ckpt(bob, *args)
        warnings = [ln for ln in res.err.splitlines() if ln.startswith("warning: ")]
        assert len(warnings) == 1 and warnings[0].startswith("warning: skipping malformed result line(s) in "), (args, res)
        assert f"line 1: {TOO_DEEP})" in warnings[0], (args, res)
    # the merge of notes (cat_sort_uniq) keeps the line as bytes: bob's push does not fail on it
    ckpt(bob, "push")


@pytest.mark.parametrize("shape", DEEP)
def test_a_manifest_nested_too_deeply_is_corrupt_and_nothing_is_written(tmp_path, shape):
    _bare, alice, bob = _shared(tmp_path)
    manifest = json.loads(git(alice, "cat-file", "blob", "refs/ckpt/t/1^3:manifest.json"))
    manifest["id"], manifest["number"] = "t/2", 2
    forge_checkpoint(alice, source="refs/ckpt/t/1", dest="refs/ckpt/t/2",
                     blobs={"manifest.json": _with_key(manifest, "zzz", DEEP[shape])})
    git(alice, "push", "-q", "origin", "refs/ckpt/t/2:refs/ckpt/t/2")
    ckpt(bob, "task", "start", "mine")
    ckpt(bob, "fetch")
    before = (git(bob, "status", "--porcelain=v2", "-z", "--untracked-files=all", "--ignored"),
              git(bob, "for-each-ref"))
    for args in (("show", "origin:t/2"), ("restore", "origin:t/2"), ("restore", "--dry-run", "origin:t/2"),
                 ("diff", "origin:t/2"), ("check", "origin:t/2")):
        res = ckpt(bob, *args, rc=None)
        assert res.rc in (1, 7), (args, res)
        assert f"the manifest of origin:t/2 is corrupt: {TOO_DEEP}" in res.err, (args, res)
    assert (git(bob, "status", "--porcelain=v2", "-z", "--untracked-files=all", "--ignored"),
            git(bob, "for-each-ref")) == before
    listed = ckpt(bob, "list", "--remote", "origin", "--task", "t", rc=None)
    assert listed.rc in (0, 7) and "t/1" in listed.out + listed.err, listed


@pytest.mark.parametrize("shape", DEEP)
def test_a_ledger_event_nested_too_deeply_is_corrupt(tmp_path, shape):
    bare, _alice, bob = _team(tmp_path)
    event = _with_key(json.loads(_event(1, "note", {})), "zzz", DEEP[shape])
    _fast_import(bare, "refs/ckpt/q/log", [[("card.json", CARD), ("event.json", event)]])
    ckpt(bob, "fetch")
    for args in (("log", "--task", "origin:q"), ("task", "show", "origin:q"), ("stats", "origin:q"),
                 ("handoff", "origin:q")):
        res = ckpt(bob, *args, rc=7)
        assert res.err.startswith("error: ledger of task origin:q is corrupt at "), (args, res)
        assert res.err.splitlines()[0].endswith(TOO_DEEP), (args, res)
    # the check says the ledger is broken (exit 1: a check said no)
    res = ckpt(bob, "log", "--verify", "--task", "origin:q", rc=1)
    assert res.err.startswith("error: ledger of origin:q is broken: event #1 ") and TOO_DEEP in res.err, res
    # the task list still lists a task whose ledger is damaged
    assert "origin:q " in ckpt(bob, "task", "list").out


def _state_file(repo, where: str):
    return {"journal": repo / ".git/ckpt/RESTORE", "hooks": repo / ".git/ckpt/hooks.json",
            "agent": repo / ".git/ckpt/agent-install.json"}[where]


@pytest.mark.parametrize("shape", DEEP)
@pytest.mark.parametrize("where,args,rc,says", [
    ("journal", ("undo",), 7, "RESTORE is corrupt"),
    ("journal", ("restore", "--continue"), 7, "RESTORE is corrupt"),
    ("journal", ("gc", "--dry-run"), 7, "RESTORE is corrupt; refusing to prune while a restore is unfinished"),
    ("agent", ("agent", "status"), 1, "agent-install.json is corrupt"),
    ("hooks", ("hooks", "status"), 0, None),  # read as no record, as any record that is not JSON
])
def test_a_state_file_nested_too_deeply_is_refused_as_one_that_is_not_json(repo, shape, where, args, rc, says):
    ckpt(repo, "save", "--allow-empty", "-m", "one")
    path = _state_file(repo, where)
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(_with_key({"target_id": "default/1"}, "zzz", DEEP[shape]))
    res = ckpt(repo, *args, rc=rc)
    if says is not None:
        assert res.err.startswith("error: ") and says in res.err.splitlines()[0], res


@pytest.mark.parametrize("shape", DEEP)
def test_a_trust_store_nested_too_deeply_is_a_config_error(repo, shape, hermetic):
    (repo / ".ckpt.toml").write_text('[[verifier]]\nname = "t"\ncommand = "true"\n')
    store = hermetic / ".local/share/git-ckpt/trusted.json"
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_bytes(_with_key({}, "zzz", DEEP[shape]))
    res = ckpt(repo, "trust", rc=6)
    assert res.err.startswith(f"error: the trust store {store} is unreadable\n"), res


@pytest.mark.parametrize("toml", [
    b"a = " + b"[" * 3000 + b"]" * 3000,
    b"a = " + b"{b = " * 3000 + b"1" + b"}" * 3000,
    b"[" + b".".join([b"a"] * 200) + b"]\nx = 1\n",  # dotted keys nest without the parser recursing
])
def test_a_ckpt_toml_nested_too_deeply_is_a_config_error(repo, toml):
    (repo / ".ckpt.toml").write_bytes(toml)
    res = ckpt(repo, "save", "-m", "x", rc=6)
    assert res.err.startswith("error: .ckpt.toml: arrays or tables nested deeper than 100 levels\n"), res


@pytest.mark.parametrize("shape", DEEP)
def test_a_hook_input_nested_too_deeply_is_input_that_is_not_json(repo, shape):
    (repo / "f").write_text("x\n")
    res = ckpt(repo, "agent", "hook", "claude-code", "turn", input=_with_key({"session_id": "s1"}, "x", DEEP[shape]))
    assert res.err == ("warning: git ckpt claude-code hook (turn): the input on stdin is not JSON; "
                       "a checkpoint saved now records no session id\n"), res
    rows = ckpt(repo, "list", "--json").json()["result"]
    assert len(rows) == 1 and rows[0]["agent"] == "claude-code" and rows[0]["agent_session"] is None, rows


# ------------------------------------------------------------------- D. the MCP stdin pump

class _Server:
    """The real ``git ckpt mcp`` over pipes, initialized."""

    def __init__(self, repo):
        self.proc = subprocess.Popen(["git", "ckpt", "mcp"], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode())
        assert self.answer()["id"] == 1
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def send(self, raw: bytes, newline: bool = True) -> None:
        self.proc.stdin.write(raw + (b"\n" if newline else b""))
        self.proc.stdin.flush()

    def answer(self) -> dict:
        ready, _, _ = select.select([self.proc.stdout], [], [], HANG)  # a guard against a hang, not a timing check
        assert ready, "the server did not answer"
        return json.loads(self.proc.stdout.readline())

    def still_serves(self, n: int) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/list"}).encode())
        res = self.answer()
        assert res["id"] == n and any(t["name"] == "ckpt_save" for t in res["result"]["tools"]), res

    def close(self) -> tuple[int, bytes]:
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        err = self.proc.stderr.read()
        return self.proc.wait(HANG), rest + err


def _call(n: int, args: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ckpt_save","arguments":%s}}' % (n, args)


@pytest.mark.parametrize("line,error", [
    (_call(2, b'{"message":"\\ud800","x":' + DEEP["arrays"] + b"}"), (2, -32700, f"Parse error: {TOO_DEEP}")),
    (_call(2, b'{"message":"m","x":' + DEEP["objects"] + b"}"), (2, -32700, f"Parse error: {TOO_DEEP}")),
    (_call(2, b'{"message":"m","x":' + DEEP["just-over-the-bound"] + b"}"), (2, -32700, f"Parse error: {TOO_DEEP}")),
    (b'{"jsonrpc":"2.0","id":', (None, -32700, "Parse error: Expecting value")),
    (b"\xff\xfe", (None, -32700, "Parse error: 'utf-8' codec can't decode")),
    (b"[1, 2]", (None, -32600, "Invalid Request: not a JSON object")),
    (b'"text"', (None, -32600, "Invalid Request: not a JSON object")),
])
def test_d_every_mcp_line_that_cannot_be_read_is_answered_and_the_server_goes_on(repo, line, error):
    server = _Server(repo)
    try:
        server.send(line)
        res = server.answer()
        assert (res["id"], res["error"]["code"]) == error[:2] and res["error"]["message"].startswith(error[2]), res
        server.still_serves(3)
        server.send(_call(4, b'{"message":"after"}'))
        assert server.answer()["id"] == 4
    finally:
        rc, rest = server.close()
    assert rc == 0 and b"Traceback" not in rest, rest
    assert [c["message"] for c in ckpt(repo, "list", "--json").json()["result"]] == ["after"]


def test_d_a_line_longer_than_the_cap_is_answered_read_past_and_the_server_goes_on(repo):
    from git_ckpt.mcp_server import MAX_LINE

    server = _Server(repo)
    try:
        # the cap's worth of bytes, then more in pieces, then the newline: never held whole
        chunk = b"a" * (1 << 20)
        for _ in range(MAX_LINE // len(chunk) + 3):
            server.send(chunk, newline=False)
        server.send(b"")
        res = server.answer()
        assert res == {"jsonrpc": "2.0", "id": None,
                       "error": {"code": -32700, "message": f"Parse error: a message line longer than {MAX_LINE} bytes"}}, res
        server.still_serves(5)
    finally:
        rc, rest = server.close()
    assert rc == 0 and b"Traceback" not in rest, rest


def test_d_the_stdin_pump_yields_an_over_long_line_as_one_none():
    """40 MiB without a newline read through the pump (the old ``pending += chunk`` and split of
    everything pending took 15 s: quadratic): one over-long line, read past, and the lines
    after it as they came (in-process, the pump alone; its speed is no unit test's business)."""
    import io

    from git_ckpt.mcp_server import _lines

    data = b"a" * (40 << 20) + b"\n" + b"{}\n"
    got = list(_lines(io.BytesIO(data), limit=16 << 20))
    assert got == [None, b"{}\n"]
    small = list(_lines(io.BytesIO(b"x" * 100 + b"\n" + b"y" * 100), limit=64))
    assert small == [None, None]
    assert list(_lines(io.BytesIO(b"ab\ncd\n\nef"), limit=64)) == [b"ab\n", b"cd\n", b"\n", b"ef"]
    assert list(_lines(io.BytesIO(b"x" * 64 + b"\n" + b"y" * 65 + b"\nz"), limit=64)) == [b"x" * 64 + b"\n", None, b"z"]


# ------------------------------------------------------------------- B. trees of any depth

@pytest.fixture
def deep_tmp(tmp_path):
    """``tmp_path``, emptied with ``rm -rf`` afterwards: pytest's own cleanup of old temporary
    directories (``shutil.rmtree``) recurses once per level and would fail on these trees."""
    yield tmp_path
    subprocess.run(["rm", "-rf", "--", *map(str, tmp_path.iterdir())], check=False)


def test_b_a_fetched_tree_deeper_than_the_recursion_limit_restores_and_checks(deep_tmp):
    tmp_path = deep_tmp
    _bare, alice, bob = _team(tmp_path)
    ckpt(alice, "task", "start", "t")
    deep = alice.joinpath(*["a"] * 1200)
    subprocess.run(["mkdir", "-p", "/".join(["a"] * 1200)], cwd=alice, check=True)  # pathlib and os.makedirs recurse
    (deep / "f").write_text("deep\n")
    ckpt(alice, "save", "-m", "deep")
    ckpt(alice, "push")
    ckpt(bob, "task", "start", "mine")
    ckpt(bob, "fetch")
    assert "a/" * 3 in ckpt(bob, "restore", "--dry-run", "origin:t/1").out
    ckpt(bob, "check", "origin:t/1")
    ckpt(bob, "diff", "origin:t/1")
    ckpt(bob, "restore", "origin:t/1")
    assert bob.joinpath(*["a"] * 1200, "f").read_text() == "deep\n"
    ckpt(bob, "status")
    (bob.joinpath(*["a"] * 1200, "f")).write_text("mine\n")
    ckpt(bob, "save", "-m", "mine")
    ckpt(bob, "restore", "origin:t/1", "--", "/".join(["a"] * 1200) + "/f")
    assert bob.joinpath(*["a"] * 1200, "f").read_text() == "deep\n"


# ------------------------------------------------------------------- C. paths too long for the system

LONG = "/".join(["d" * 254] * 16)  # 4079 bytes below the worktree: git is fine, no absolute path to it is


def _long_file(root, rel: str, data: str) -> None:
    """Write ``root/rel`` by relative steps (no absolute path to it fits PATH_MAX)."""
    subprocess.run(["sh", "-c", 'cd "$1" && mkdir -p "$(dirname "$2")" && printf %s "$3" > "$2"', "-", str(root), rel, data],
                   check=True)


@pytest.mark.parametrize("where", ["deep", "long"])
def test_c_the_overlay_walk_goes_on_past_a_directory_too_deep_or_too_long_and_says_what_it_left_out(deep_tmp, where):
    repo = init_repo(deep_tmp / "repo")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["*.log"]\n')  # no fixed root: the walk looks everywhere
    (repo / ".gitignore").write_text("*.log\n")
    top = "/".join(["a"] * 1200) if where == "deep" else LONG
    _long_file(repo, top + "/tracked.txt", "t\n")
    _long_file(repo, top + "/x.log", "ignored\n")
    (repo / "near.log").write_text("near\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    ckpt(repo, "status")
    res = ckpt(repo, "save", "-m", "x")
    manifest = json.loads(git(repo, "cat-file", "blob", "refs/ckpt/default/1^3:manifest.json"))
    files = [f["path"] for f in manifest["overlay"]["files"]]
    if where == "deep":  # read: nothing stops the walk
        assert files == [top + "/x.log", "near.log"] and res.err == "", res
    else:  # no absolute path reaches it: said, once per task
        assert files == ["near.log"], files
        assert res.err.startswith("warning: overlay: left out files that cannot be read here (permissions, or a path too long "
                                  "for the system): dddd"), res
        (repo / "near.log").write_text("changed\n")
        assert ckpt(repo, "save", "-m", "y").err == ""


def test_c_an_unreadable_overlay_file_is_left_out_and_said(repo):
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["*.log"]\n')
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "secret.log").write_text("x\n")
    (repo / "secret.log").chmod(0)
    res = ckpt(repo, "save", "-m", "x")
    assert "left out files that cannot be read here" in res.err and "secret.log" in res.err, res


def _forged_long(tmp_path):
    """Alice (at a short location) saved and pushed t/1 holding LONG/f; Bob fetched it."""
    _bare, alice, bob = _team(tmp_path)
    ckpt(alice, "task", "start", "t")
    _long_file(alice, LONG + "/f", "x\n")
    ckpt(alice, "save", "-m", "long")
    ckpt(alice, "push")
    ckpt(bob, "task", "start", "mine")
    (bob / "mine.txt").write_text("mine\n")
    ckpt(bob, "fetch")
    return alice, bob


def _state(root):
    """Status, refs, the state files (the lock file the command takes aside) and the top level."""
    return (git(root, "status", "--porcelain=v2", "-z", "--untracked-files=all", "--ignored"), git(root, "for-each-ref"),
            sorted(set(os.listdir(root / ".git/ckpt")) - {"lock"}), sorted(os.listdir(root)))


@pytest.mark.parametrize("args", [("restore", "origin:t/1"), ("restore", "--dry-run", "origin:t/1")])
def test_c_a_checkpoint_holding_a_path_too_long_here_is_refused_before_anything_is_written(deep_tmp, args):
    _alice, bob = _forged_long(deep_tmp)
    before = _state(bob)
    res = ckpt(bob, *args, rc=1)
    first, *rest = res.err.splitlines()
    assert first.startswith("error: cannot restore origin:t/1: the path 'dddd") and "…" in first, res
    assert f"({len(LONG) + 2} bytes) is too long for this system at this worktree's location (at most 4095 bytes from /)" in first
    assert rest == ["hint: nothing was changed; a worktree at a shorter location can hold it (git ckpt restore origin:t/1 "
                    "--worktree PATH), or restore the other paths by name"], res
    assert _state(bob) == before  # no pre-restore save, no journal, no file
    assert "restore:   interrupted" not in ckpt(bob, "status").out
    # the other paths by name; the checkpoint itself is sound
    ckpt(bob, "restore", "origin:t/1", "--", "README")
    scratch = deep_tmp / "tmp"  # check's scratch copy of the tree is past PATH_MAX there: removed all the same
    scratch.mkdir()
    ckpt(bob, "check", "origin:t/1", env={"TMPDIR": str(scratch)})
    assert os.listdir(scratch) == []


def test_c_a_worktree_path_too_long_to_delete_is_refused_before_anything_is_written(deep_tmp):
    repo = init_repo(deep_tmp / "repo")
    ckpt(repo, "save", "--allow-empty", "-m", "short")
    _long_file(repo, LONG + "/f", "x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "long")  # saved by the pre-restore save, if it came to that
    before = _state(repo)
    res = ckpt(repo, "restore", "default/1", rc=1)
    assert res.err.startswith("error: cannot restore default/1: the path 'dddd"), res
    assert _state(repo) == before


def test_c_the_pre_restore_save_keeps_a_path_too_long_for_the_system_that_the_restore_leaves_alone(deep_tmp):
    repo = init_repo(deep_tmp / "repo")
    _long_file(repo, LONG + "/f", "x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "long")
    ckpt(repo, "save", "--allow-empty", "-m", "one")
    (repo / "README").write_text("changed\n")
    _long_file(repo, LONG + "/f", "changed too\n")  # work at the long path, outside the paths restored
    res = ckpt(repo, "restore", "default/1", "--", "README")
    assert (repo / "README").read_text() == "readme\n", res
    # the pre-restore save holds the long path's work, and undo brings README back
    listed = dict(rec.split(b"\t")[::-1] for rec in git(repo, "ls-tree", "-r", "-z", "refs/ckpt/default/2").split(b"\0") if rec)
    assert git(repo, "cat-file", "blob", listed[(LONG + "/f").encode()].split()[2].decode()) == b"changed too\n"
    ckpt(repo, "undo")
    assert (repo / "README").read_text() == "changed\n"
