"""A teammate's fetched task (``REMOTE:T``) is readable by every read-only view and written by
none; REMOTE ids are refused by the id typed; an unconfigured remote is one error everywhere.

Real clones of a real bare repository, the real ``git ckpt`` entry point.
"""

from __future__ import annotations

from conftest import ckpt, git
from test_remote import _rev, _team


def _alice_task(alice, bob):
    """Alice works on fix-echo (a card, two checkpoints, a promotion) and pushes; Bob fetches."""
    ckpt(alice, "task", "start", "fix-echo", "--goal", "echo must not \x1b[31mcrash")
    (alice / "echo.py").write_text("print('a')\n")
    ckpt(alice, "save", "-m", "first", "--next", "write the test")
    ckpt(alice, "task", "note", "--decided", "keep the CLI")
    (alice / "echo.py").write_text("print('b')\n")
    ckpt(alice, "save", "-m", "second")
    ckpt(alice, "promote", "fix-echo/2", "--force")
    ckpt(alice, "push")
    ckpt(bob, "fetch")


def test_fetched_task_read_views(tmp_path):
    _bare, alice, bob = _team(tmp_path)
    _alice_task(alice, bob)
    log_before = git(bob, "for-each-ref", "refs/ckpt", "refs/ckpt-remotes")

    res = ckpt(bob, "task", "show", "origin:fix-echo")
    assert res.out.splitlines()[:3] == ["task: origin:fix-echo", "goal: echo must not \\x1b[31mcrash", "decided 1: keep the CLI"]
    assert ckpt(bob, "task", "show", "origin:fix-echo", "--json").json()["result"]["goal"] == "echo must not \x1b[31mcrash"

    res = ckpt(bob, "log", "--task", "origin:fix-echo")
    assert "checkpoint saved: fix-echo/2" in res.out and "task started" in res.out
    ckpt(bob, "log", "--task", "origin:fix-echo", "--graph")
    assert ckpt(bob, "log", "--task", "origin:fix-echo", "--verify").out == "ledger of origin:fix-echo: intact (6 events)\n"

    res = ckpt(bob, "list", "--task", "origin:fix-echo")
    assert [ln[:20].split() for ln in res.out.splitlines()] == [["origin:fix-echo/1"], ["*", "origin:fix-echo/2"]]

    rows = ckpt(bob, "task", "list", "--json").json()["result"]
    fetched = [r for r in rows if r["fetched"]]
    assert fetched == [{"task": "origin:fix-echo", "checkpoints": 2, "goal": "echo must not \x1b[31mcrash",
                        "done": False, "current": False, "fetched": "origin"}]
    assert ckpt(bob, "task", "list").out == ("* default                     0 checkpoints\n"
                                             "  origin:fix-echo             2 checkpoints  echo must not \\x1b[31mcrash\n")

    res = ckpt(bob, "handoff", "origin:fix-echo")
    assert res.out.startswith("# Handoff: origin:fix-echo\n\nGoal: echo must not \\x1b[31mcrash\n")
    assert "Checkpoint: origin:fix-echo/2 of 2, promoted origin:fix-echo/2\n" in res.out
    assert res.out.endswith("## Resume\n    git ckpt task start fix-echo-2\n    git ckpt restore origin:fix-echo/2\n    git ckpt verify\n")
    assert "task start fix-echo\n" not in res.out

    # the bare name of a task that exists only as fetched: never "task start fix-echo"
    res = ckpt(bob, "handoff", "fix-echo")
    assert res.out.endswith("## Resume\n    git ckpt task start fix-echo-2\n    git ckpt restore origin:fix-echo/@\n    git ckpt verify\n")
    ckpt(bob, "restore", "origin:fix-echo/@", "--dry-run")
    # other views of that bare name point at the fetched task instead of showing an empty one
    for args in (["log", "--task", "fix-echo"], ["task", "show", "fix-echo"], ["stats", "fix-echo"]):
        assert ckpt(bob, *args, rc=4).err == "error: no task fix-echo\nhint: it was fetched: origin:fix-echo names it\n", args

    assert [ln.split()[:2] for ln in ckpt(bob, "check", "--task", "origin:fix-echo").out.splitlines()] == [
        ["ok", "origin:fix-echo/1"], ["ok", "origin:fix-echo/2"]]
    assert ckpt(bob, "stats", "origin:fix-echo").out.startswith("task: origin:fix-echo (6 events)\ncheckpoints saved: 2 ")
    assert "origin:fix-echo" in ckpt(bob, "report", "--html", "-", "--task", "origin:fix-echo").out
    # nothing of Bob's, and nothing fetched, was written by reading
    assert git(bob, "for-each-ref", "refs/ckpt", "refs/ckpt-remotes") == log_before


def test_fetched_task_writes_refused(tmp_path):
    _bare, alice, bob = _team(tmp_path)
    _alice_task(alice, bob)
    before = git(bob, "for-each-ref", "refs/ckpt", "refs/ckpt-remotes")
    for args in (["task", "note", "origin:fix-echo", "--decided", "x"], ["task", "done", "origin:fix-echo"],
                 ["task", "start", "origin:fix-echo"], ["save", "--task", "origin:fix-echo"],
                 ["gc", "--task", "origin:fix-echo"], ["push", "--task", "origin:fix-echo"]):
        res = ckpt(bob, *args, rc=2)
        assert res.err.splitlines() == [
            "error: origin:fix-echo is a task fetched from origin: it is read-only here",
            "hint: continue it under a task name of your own: git ckpt task start NAME, then git ckpt restore origin:fix-echo/N",
        ], args
    assert git(bob, "for-each-ref", "refs/ckpt", "refs/ckpt-remotes") == before


def test_remote_ids_refused_by_the_id_typed(tmp_path):
    """In Alice's own clone origin:fix-echo/2 is the same commit as her fix-echo/2: still refused."""
    _bare, alice, _bob = _team(tmp_path)
    ckpt(alice, "task", "start", "fix-echo")
    (alice / "echo.py").write_text("print('a')\n")
    ckpt(alice, "save")
    (alice / "echo.py").write_text("print('b')\n")
    ckpt(alice, "save")
    ckpt(alice, "push")
    ckpt(alice, "fetch")
    assert _rev(alice, "refs/ckpt-remotes/origin/fix-echo/2") == _rev(alice, "refs/ckpt/fix-echo/2")
    res = ckpt(alice, "promote", "origin:fix-echo/2", rc=2)
    assert res.err.startswith("error: origin:fix-echo/2 is not a checkpoint of this repository; only local checkpoints are promoted\n")
    res = ckpt(alice, "promote", "origin:fix-echo/promoted", rc=4)
    res = ckpt(alice, "drop", "origin:fix-echo/1", rc=2)
    assert _rev(alice, "refs/ckpt/fix-echo/1")
    res = ckpt(alice, "verify", "origin:fix-echo/2")
    assert "not promoted: origin:fix-echo/2 is a fetched checkpoint" in res.out
    assert _rev(alice, "refs/ckpt/fix-echo/promoted") == ""
    ckpt(alice, "promote", "fix-echo/2")  # the local id promotes


def test_unconfigured_remote_same_error_everywhere(tmp_path):
    bare, alice, _bob = _team(tmp_path)
    for name in ("nosuch", str(bare)):
        for args in (["push", name], ["fetch", name], ["list", "--remote", name], ["show", f"{name}:t/1"],
                     ["restore", f"{name}:t/1"], ["diff", f"{name}:t/1"]):
            if ":" in args[-1] and "/" in name:
                continue  # a path is no REMOTE: prefix
            res = ckpt(alice, *args, rc=2)
            hint = (f"hint: git remote add {name} URL adds it (git remote -v lists the remotes)" if name == "nosuch" else
                    "hint: git ckpt pushes and fetches through a named remote: git remote add NAME URL adds one (git remote -v lists them)")
            assert res.err.splitlines() == [f"error: {name!r} is not a configured remote", hint], args
    git(alice, "remote", "add", "nosuch", str(bare))  # the hint's command works
    ckpt(alice, "fetch", "nosuch")
    assert ckpt(alice, "list", "--remote", "nosuch").out == "no checkpoints fetched from nosuch (git ckpt fetch nosuch brings them)\n"


def test_push_and_fetch_use_the_same_words(tmp_path):
    """A teammate's routine promotion move is `moved` on both sides, never a warning."""
    bare, alice, bob = _team(tmp_path)
    ckpt(alice, "task", "start", "fix-echo")
    for text in ("a", "b"):
        (alice / "echo.py").write_text(text)
        ckpt(alice, "save")
    ckpt(alice, "promote", "fix-echo/1", "--force")
    ckpt(alice, "push")
    res = ckpt(bob, "fetch")
    assert res.out == ("new        refs/ckpt/fix-echo/1\nnew        refs/ckpt/fix-echo/2\nnew        refs/ckpt/fix-echo/log\n"
                       "new        refs/ckpt/fix-echo/promoted\n"
                       "fetched 4 ref(s) from origin; checkpoints: origin:fix-echo/1, origin:fix-echo/2\n")
    ckpt(alice, "promote", "fix-echo/2", "--force")
    assert ckpt(alice, "push").out == ("updated    refs/ckpt/fix-echo/log\nmoved      refs/ckpt/fix-echo/promoted\n"
                                       "pushed 2 ref(s) to origin\n")
    res = ckpt(bob, "fetch")
    assert (res.out, res.err) == ("updated    refs/ckpt/fix-echo/log\nmoved      refs/ckpt/fix-echo/promoted\n"
                                  "fetched 2 ref(s) from origin\n", "")
    assert [(r["ref"], r["status"]) for r in ckpt(bob, "fetch", "--json").json()["result"]["refs"]] == []
    # a checkpoint ref the remote replaced with a different commit is the one warning
    one, two = _rev(alice, "refs/ckpt/fix-echo/1"), _rev(alice, "refs/ckpt/fix-echo/2")
    git(bare, "update-ref", "refs/ckpt/fix-echo/1", two)
    res = ckpt(bob, "fetch")
    assert res.err == (f"warning: origin replaced refs/ckpt/fix-echo/1 (was {one[:12]}, now {two[:12]}); "
                       "checkpoints and ledgers are never rewritten by git ckpt\n")
    assert res.out == "fetched 1 ref(s) from origin; checkpoints: origin:fix-echo/1\n"
