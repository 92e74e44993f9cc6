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
    assert "checkpoint saved: origin:fix-echo/2\n" in res.out and " fix-echo/" not in res.out and "task started" in res.out
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
    assert res.out.endswith("## Resume\n    git ckpt task start fix-echo-2 --goal 'echo must not \\x1b[31mcrash'\n"
                            "    git ckpt restore origin:fix-echo/2\n    git ckpt verify\n")
    assert "task start fix-echo\n" not in res.out

    # the bare name of a task that exists only as fetched: never "task start fix-echo"
    res = ckpt(bob, "handoff", "fix-echo")
    assert res.out.endswith("## Resume\n    git ckpt task start fix-echo-2 --goal 'echo must not \\x1b[31mcrash'\n"
                            "    git ckpt restore origin:fix-echo/2\n    git ckpt verify\n")
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
                    "hint: that is the URL of remote origin; name the remote instead")  # (walkthrough 23)
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


# ------------------------------------------------------- @ after restoring a fetched checkpoint

_VERIFIED = ('[overlay]\ninclude = ["fixtures/"]\n\n[[verifier]]\nname = "tests"\n'
             'command = ["sh", "-c", "grep -q v3 app.py"]\nrequired = true\n')


def _fix_auth(tmp_path, drop: str | None = None):
    """Alice saves fix-auth/1..3 (app.py v1..v3) under a shared, trusted verifier that passes
    only on v3, drops ``drop`` when given, and pushes; Bob fetches.  Returns (bare, alice, bob)."""
    bare, alice, bob = _team(tmp_path)
    (alice / ".ckpt.toml").write_text(_VERIFIED)
    git(alice, "commit", "-q", "-am", "verifier")
    git(alice, "push", "-q", "origin", "main")
    git(bob, "pull", "-q", "--ff-only")
    for who in (alice, bob):
        ckpt(who, "trust")
    ckpt(alice, "task", "start", "fix-auth", "--goal", "login must not crash")
    for i in (1, 2, 3):
        (alice / "app.py").write_text(f"v{i}\n")
        ckpt(alice, "save", "-m", f"step {i}")
    if drop:
        ckpt(alice, "drop", drop)
    ckpt(alice, "push")
    ckpt(bob, "fetch")
    return bare, alice, bob


def test_at_is_the_restored_fetched_checkpoint(tmp_path):
    """README "@ after a restore": after `restore origin:T/N`, status, diff, show @, verify and
    undo all take @ to be origin:T/N, in a clone with checkpoints of its own."""
    _bare, _alice, bob = _fix_auth(tmp_path)
    ckpt(bob, "task", "start", "fix-auth-bob")
    (bob / "b.py").write_text("bob\n")
    ckpt(bob, "save", "-m", "bob")
    res = ckpt(bob, "restore", "origin:fix-auth/3")
    assert res.out.splitlines()[-2:] == ["current state matches fix-auth-bob/1; not saved again", "restored origin:fix-auth/3"]
    assert "worktree:  matches origin:fix-auth/3 (@)\n" in ckpt(bob, "status").out
    assert ckpt(bob, "status", "--json").json()["result"]["worktree"]["at"] == "origin:fix-auth/3"
    assert ckpt(bob, "diff", "--stat").out == ""
    assert ckpt(bob, "show", "@").out.startswith("checkpoint origin:fix-auth/3\n")
    assert ckpt(bob, "show", "@~2").out.startswith("checkpoint origin:fix-auth/1\n")  # counted back through origin:fix-auth
    assert ckpt(bob, "show", "@~3", rc=4).err.splitlines() == [
        "error: @~3: task origin:fix-auth has only 3 checkpoint(s) up to origin:fix-auth/3",
        "hint: @ is origin:fix-auth/3, @~2 the oldest; git ckpt list --remote origin --task fix-auth shows them"]
    res = ckpt(bob, "verify")
    assert res.out == ("verifier: tests ...... passed (exit 0, 0.0 s)\n"
                       "not promoted: origin:fix-auth/3 is a fetched checkpoint (only this repository's checkpoints are promoted)\n"
                       "hint: the worktree holds origin:fix-auth/3 already (it is @): git ckpt save makes it a checkpoint "
                       "of task fix-auth-bob, which git ckpt verify can promote\n")
    # results recorded on it and in Bob's task, never a promotion nor a ref of Alice's task here
    assert "tests" in ckpt(bob, "show", "@").out
    assert _rev(bob, "refs/ckpt/fix-auth-bob/promoted") == "" and git(bob, "for-each-ref", "refs/ckpt/fix-auth/") == b""
    assert ckpt(bob, "show", "@").out.endswith("results:\n  tests: passed (exit 0, 0.0 s)\n")
    assert ckpt(bob, "log").out.endswith("  verifier: tests ...... passed on origin:fix-auth/3\n")

    # a change after the restore is a change since origin:fix-auth/3, and verify refuses it
    (bob / "app.py").write_text("v3 and more\n")
    assert "worktree:  changed since origin:fix-auth/3 (@)\n" in ckpt(bob, "status").out
    assert "-v3\n+v3 and more\n" in ckpt(bob, "diff").out
    assert ckpt(bob, "verify", rc=2).err.startswith("error: the worktree does not match origin:fix-auth/3 (M app.py); nothing was run\n")
    (bob / "app.py").write_text("v3\n")

    # a second restore of the same checkpoint saves nothing; undo returns to the state before it
    res = ckpt(bob, "restore", "origin:fix-auth/3")
    assert res.out.splitlines()[-1] == "the worktree already matches origin:fix-auth/3; nothing to restore"
    # ... and undo passes over it, to the state before the restore that changed it
    assert ckpt(bob, "undo", "--dry-run").out.splitlines()[0] == "would restore fix-auth-bob/1:"
    # from one fetched checkpoint to another: the state left is saved as Bob's own (a later
    # fetch may replace a fetched ref), and undo comes back to it
    res = ckpt(bob, "restore", "origin:fix-auth/1")
    assert res.out.splitlines()[-2:] == ["saved current state as fix-auth-bob/2 (pre-restore)", "restored origin:fix-auth/1"]
    assert ckpt(bob, "show", "@").out.startswith("checkpoint origin:fix-auth/1\n")
    assert ckpt(bob, "undo").out.splitlines()[-2:] == ["saved current state as fix-auth-bob/3 (pre-restore)",
                                                      "undo: restored fix-auth-bob/2"]
    assert (bob / "app.py").read_text() == "v3\n" and not (bob / "b.py").exists()
    assert "worktree:  matches fix-auth-bob/2 (@)\n" in ckpt(bob, "status").out
    ckpt(bob, "restore", "origin:fix-auth/3")

    # the event is trusted only while the fetched ref still names its commit
    git(bob, "update-ref", "refs/ckpt-remotes/origin/fix-auth/3", _rev(bob, "refs/ckpt-remotes/origin/fix-auth/2"))
    assert ckpt(bob, "show", "@").out.startswith("checkpoint fix-auth-bob/3\n")  # the latest again
    assert "worktree:  changed since fix-auth-bob/3 (@)\n" in ckpt(bob, "status").out


def test_restore_fetched_into_a_new_worktree_makes_it_at(tmp_path):
    """`restore origin:T/N --worktree PATH`: in the new worktree (task default, no checkpoint of
    its own but the pre-restore one) @ is origin:T/N for status, diff, show and verify."""
    _bare, _alice, bob = _fix_auth(tmp_path)
    review = tmp_path / "review-auth"
    res = ckpt(bob, "restore", "origin:fix-auth/3", "--worktree", str(review))
    assert res.out.splitlines()[-3:] == [f"created worktree {review} at {_rev(bob, 'HEAD')[:12]}",
                                         "saved current state as default/1 (pre-restore)", "restored origin:fix-auth/3"]
    status = ckpt(review, "status").out
    assert status.startswith("task:      default\n") and "worktree:  matches origin:fix-auth/3 (@)\n" in status
    assert ckpt(review, "diff").out == ""
    assert ckpt(review, "show", "@").out.startswith("checkpoint origin:fix-auth/3\n")
    ckpt(review, "trust")  # trust is given per worktree
    assert ckpt(review, "verify").out.startswith("verifier: tests ...... passed (exit 0, ")
    assert _rev(bob, "refs/ckpt/default/promoted") == ""
    # Bob's own worktree did not restore anything: its @ is not the review worktree's
    assert ckpt(bob, "show", "@").out.startswith("checkpoint default/1\n")


def test_handoff_resume_steps_run_literally_in_a_fresh_clone(tmp_path):
    """The receipt's Resume lines of a fetched task, run exactly as printed, in order, in a fresh
    clone that only fetched and trusted: every one exits 0 and the last verifies origin:T/N."""
    import shlex

    bare, _alice, _bob = _fix_auth(tmp_path)
    carol = tmp_path / "carol"
    git(tmp_path, "clone", "-q", str(bare), str(carol))
    ckpt(carol, "fetch")
    ckpt(carol, "trust")
    receipt = ckpt(carol, "handoff", "origin:fix-auth").out
    steps = receipt.split("## Resume\n", 1)[1].splitlines()
    assert steps == ["    git ckpt task start fix-auth-2 --goal 'login must not crash'", "    git ckpt restore origin:fix-auth/3",
                     "    git ckpt verify"]
    outs = []
    for line in steps:
        argv = shlex.split(line)
        assert argv[:2] == ["git", "ckpt"]
        outs.append(ckpt(carol, *argv[2:]).out)
    assert outs[1].splitlines()[-2:] == ["saved current state as fix-auth-2/1 (pre-restore)", "restored origin:fix-auth/3"]
    assert outs[2].startswith("verifier: tests ...... passed (exit 0, ")
    assert "not promoted: origin:fix-auth/3 is a fetched checkpoint" in outs[2]
    assert "worktree:  matches origin:fix-auth/3 (@)\n" in ckpt(carol, "status").out
    assert ckpt(carol, "status", "--json").json()["result"]["matches"] == "origin:fix-auth/3"
    receipt = ckpt(carol, "handoff").out
    assert "Goal: login must not crash\n" in receipt  # walkthrough 25: the goal came along
    assert ("Checkpoint: origin:fix-auth/3 (task fix-auth-2 has 1 checkpoint(s))\n"
            "Workspace: clean (matches origin:fix-auth/3)\n") in receipt
    assert receipt.endswith("## Resume\n    git ckpt restore origin:fix-auth/3\n    git ckpt verify\n")
    assert ckpt(carol, "handoff", "--check").out.endswith("handoff of fix-auth-2: no drift\n")
    # to build on it: save (a checkpoint of Carol's own with that state), verify, promoted
    assert ckpt(carol, "save", "-m", "mine").out.startswith("checkpoint saved: fix-auth-2/2")
    assert ckpt(carol, "show", "@").out.startswith("checkpoint fix-auth-2/2\n")
    assert ckpt(carol, "verify").out.splitlines()[-1] == "promoted fix-auth-2/2"
    assert ckpt(carol, "save").out.startswith("no changes since fix-auth-2/2; nothing saved")


# ---------------------------------------------- log --graph and report --html of a fetched task

def _graph(repo, *args):
    """``log --graph`` lines without their trailing time stamps."""
    return [ln.rsplit("  ", 1)[0] for ln in ckpt(repo, "log", "--graph", *args).out.splitlines()]


def test_graph_and_report_of_a_fetched_task_show_what_is_there(tmp_path):
    """Alice dropped fix-auth/2 before pushing: her own views and Bob's views of origin:fix-auth
    count 2 checkpoints and 1 gone; Bob's name them origin:fix-auth/N."""
    _bare, alice, bob = _fix_auth(tmp_path, drop="fix-auth/2")
    ckpt(alice, "verify")  # fix-auth/3 passes and is promoted
    ckpt(alice, "restore", "fix-auth/1")
    ckpt(alice, "push")
    ckpt(bob, "fetch")
    assert [ln[:20].split() for ln in ckpt(bob, "list", "--remote", "origin", "--task", "fix-auth").out.splitlines()] == [
        ["origin:fix-auth/1"], ["*", "origin:fix-auth/3"]]
    mine = ["|   task started: login must not crash",
            "* fix-auth/1         manual      step 1",
            "* fix-auth/2         manual      step 2  [pruned]",
            "* fix-auth/3         manual      step 3",
            "|   dropped fix-auth/2",
            "|   pushed to origin",
            "|   pass  tests passed on fix-auth/3",
            "@   promoted fix-auth/3",
            "|<- restored fix-auth/1  (left fix-auth/3)",
            "|   pushed to origin"]
    assert _graph(alice) == mine
    # Bob's view: the same timeline, ids as origin:fix-auth/N, the same one gone
    assert _graph(bob, "--task", "origin:fix-auth") == [
        "|   task started: login must not crash",
        "* origin:fix-auth/1  manual      step 1",
        "* origin:fix-auth/2  manual      step 2  [pruned]",
        "* origin:fix-auth/3  manual      step 3",
        "|   dropped origin:fix-auth/2",
        "|   pushed to origin",
        "|   pass  tests passed on origin:fix-auth/3",
        "@   promoted origin:fix-auth/3",
        "|<- restored origin:fix-auth/1  (left origin:fix-auth/3)",
        "|   pushed to origin"]
    for who, task, name in ((alice, "fix-auth", "fix-auth"), (bob, "origin:fix-auth", "origin:fix-auth")):
        page = tmp_path / f"{who.name}.html"
        res = ckpt(who, "report", "--html", str(page), "--task", task)
        assert res.out == f"wrote {page}: task {task}, 2 checkpoint(s) (1 more pruned or dropped), 1 jump(s)\n"
        res = ckpt(who, "report", "--html", str(page), "--task", task, "--json").json()["result"]
        assert (res["checkpoints"], res["pruned"], res["promoted"]) == (2, 1, f"{name}/3")
        html = page.read_text()
        assert html.count("(pruned or dropped: no longer a checkpoint here)") == 1
        assert f"{name}/2 (manual, pruned) step 2" in html and f"{name}/3 (manual) step 3" in html
        assert f"<h3>{name}/3 &#9733; promoted</h3>" in html


def test_fetched_views_name_the_teammates_checkpoints_as_they_are_named_here(tmp_path):
    """A teammate's ledger and card say ``fix-echo/1``; in Bob's views of ``origin:fix-echo``
    that is ``origin:fix-echo/1`` (the id show and restore take), in evidence and in the
    timeline's other events alike; his own tasks' text is unchanged."""
    _bare, alice, bob = _team(tmp_path)
    _alice_task(alice, bob)
    ckpt(alice, "task", "note", "--fact", "it crashes on null", "--evidence", "fix-echo/1")
    ckpt(alice, "drop", "--force", "fix-echo/1")  # cited as evidence: protected, dropped anyway
    ckpt(alice, "push")
    ckpt(bob, "fetch")
    out = ckpt(bob, "handoff", "origin:fix-echo").out
    assert "- it crashes on null (evidence: origin:fix-echo/1)\n" in out, out
    graph = ckpt(bob, "log", "--graph", "--task", "origin:fix-echo").out
    assert "fix-echo/1" not in graph.replace("origin:fix-echo/1", ""), graph
    assert ckpt(bob, "show", "origin:fix-echo/2").rc == 0
    assert "(evidence: fix-echo/1)" in ckpt(alice, "handoff").out


def test_shown_ids_rewrites_only_whole_ids_of_the_fetched_task():
    from git_ckpt.store import shown_ids

    reason = "the tree differs from the promoted checkpoint fix-echo/3 (see fix-echo/@, fix-echo/promoted)"
    assert shown_ids("origin:fix-echo", reason) == (
        "the tree differs from the promoted checkpoint origin:fix-echo/3 (see origin:fix-echo/@, origin:fix-echo/promoted)")
    for text in ("my-fix-echo/3", "origin:fix-echo/3", "x/fix-echo/3", "fix-echo/x", "fix-echo3"):
        assert shown_ids("origin:fix-echo", text) == text
    assert shown_ids("fix-echo", reason) == reason
