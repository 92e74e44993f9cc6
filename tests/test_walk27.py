"""Session 11: leftovers of walkthroughs 24-26 fixed as kinds.

- ``attempt`` with no verifiers: CMD's failure (any non-zero exit, a signal) is the only
  evidence, and the empty requirement no longer promotes what a failing CMD left.
"""

from __future__ import annotations

import pytest

from conftest import ckpt, git, pushed_task, with_remote, worktree_state
from test_verify import events, promoted


@pytest.mark.parametrize("script,shown_exit", [
    ("echo bad > f; exit 1", "exited 1"),
    ("echo bad > f; exit 77", "exited 77"),
    ("echo bad > f; kill -TERM $$", "was killed by signal 15"),
])
def test_attempt_without_verifiers_does_not_promote_a_failing_command(repo, script, shown_exit):
    (repo / "f").write_text("good\n")
    before = worktree_state(repo)
    res = ckpt(repo, "attempt", "--", "sh", "-c", script, rc=1)
    lines = res.out.splitlines()
    assert lines[0] == "checkpoint saved: default/1"
    assert lines[1] == f"attempt: sh -c '{script}' {shown_exit}"
    assert lines[2] == "checkpoint saved: default/2"
    assert lines[3] == f"no verifiers configured and sh -c '{script}' failed: not promoted on the empty requirement"
    assert lines[4:6] == ["restoring default/1", "workspace status: clean"]
    assert promoted(repo) is None
    assert worktree_state(repo) == before
    assert git(repo, "show", "refs/ckpt/default/2:f") == b"bad\n"
    ev = [e for e in events(repo) if e["type"] == "attempt"][-1]["data"]
    assert (ev["outcome"], ev["restored_to"], ev["verifiers"]) == ("restored", "default/1", {})
    assert "verify" not in [e["type"] for e in events(repo)]


def test_attempt_without_verifiers_keeps_and_changed_nothing(repo):
    (repo / "f").write_text("good\n")
    git(repo, "config", "ckpt.attempt.onFailure", "keep")
    res = ckpt(repo, "attempt", "--", "sh", "-c", "echo bad > f; exit 3", rc=1)
    assert "keeping the failed state default/2" in res.out
    assert (repo / "f").read_text() == "bad\n"
    res = ckpt(repo, "attempt", "--json", "--", "false", rc=1).json()["result"]
    assert (res["outcome"], res["before"], res["after"], res["verify"], res["exit_code"]) == ("kept", "default/2", "default/2", None, 1)
    assert "false changed nothing: default/2 is as it was before the command; nothing to restore" in res["log"]
    assert promoted(repo) is None


def test_attempt_without_verifiers_promotes_a_command_that_succeeds(repo):
    (repo / "f").write_text("good\n")
    res = ckpt(repo, "attempt", "--", "sh", "-c", "echo better > f")
    assert res.out.splitlines()[-3:] == ["no verifiers configured: promoted on the empty requirement",
                                         "promoted default/2", "workspace status: clean"]
    assert promoted(repo) == git(repo, "rev-parse", "refs/ckpt/default/2").decode().strip()


@pytest.mark.parametrize("name", ["HEAD", "head", "FETCH_HEAD", "ORIG_HEAD", "promoted", "Promoted", "log", "LOG"])
def test_a_new_task_may_not_take_a_revision_or_syntax_name(repo, name):
    res = ckpt(repo, "task", "start", name, rc=2)
    assert res.err.startswith(f"error: task name {name!r} is ")
    assert res.err.splitlines()[1] == "hint: choose another name, e.g. fix-auth-null"
    assert not (repo / ".git" / "ckpt" / "TASK").exists()
    assert git(repo, "for-each-ref", "refs/ckpt/") == b""


@pytest.mark.parametrize("name", ["HEADS", "head-fix", "logs", "promoted-fix", "my_HEADX"])
def test_names_that_only_contain_those_words_are_tasks(repo, name):
    ckpt(repo, "task", "start", name)
    (repo / "f").write_text("x\n")
    assert ckpt(repo, "save", "-m", "s").out == f"checkpoint saved: {name}/1\n"


def test_a_task_of_such_a_name_made_before_is_still_used(repo):
    # made by an earlier version: the current task file and a checkpoint ref
    (repo / ".git" / "ckpt").mkdir(exist_ok=True)
    (repo / ".git" / "ckpt" / "TASK").write_text("log\n")
    (repo / "f").write_text("x\n")
    assert ckpt(repo, "save", "-m", "s").out == "checkpoint saved: log/1\n"
    assert ckpt(repo, "task", "start", "log").out.startswith("task log is now current (existing: 1 checkpoint(s))")


@pytest.mark.parametrize("how", ["all-staged", "merge"])
def test_restore_says_head_commits_its_files_when_its_index_was_heads_tree(repo, how):
    """Walkthrough 27: a checkpoint whose index was its files already (everything staged, or a
    clean merge's result), then committed: restore said nothing, while status said "HEAD commits
    it on its base".  The note is said whenever HEAD commits exactly the checkpoint's files."""
    if how == "merge":
        git(repo, "checkout", "-qb", "side")
        (repo / "s").write_text("side\n")
        git(repo, "add", "s")
        git(repo, "commit", "-qm", "side")
        git(repo, "checkout", "-q", "main")
        (repo / "m").write_text("main\n")
        git(repo, "add", "m")
        git(repo, "commit", "-qm", "main")
        git(repo, "merge", "-q", "--no-commit", "side")
    else:
        (repo / "f").write_text("staged\n")
        git(repo, "add", "f")
    base = git(repo, "rev-parse", "HEAD").decode().strip()
    ckpt(repo, "save", "-m", "s")
    git(repo, "commit", "-qm", "the checkpoint's files")
    commit = git(repo, "rev-parse", "HEAD").decode().strip()
    (repo / "later").write_text("x\n")
    note = (f"note: default/1 was saved on {base[:12]}; HEAD {commit[:12]} commits its files and stays: "
            "the index is set to HEAD's tree (nothing staged), not as it was staged on that base")
    assert note in ckpt(repo, "restore", "1", "--dry-run").out.splitlines()
    js = ckpt(repo, "restore", "1", "--dry-run", "--json").json()["result"]["plan"]["base_differs"]
    assert js == {"saved_on": base, "note": note[len("note: "):]}
    assert note in ckpt(repo, "restore", "1").out.splitlines()
    assert git(repo, "status", "--porcelain") == b""
    assert git(repo, "rev-parse", "HEAD").decode().strip() == commit
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert f"HEAD:      {commit[:12]} commits default/1 on its base {base[:12]}" in ckpt(repo, "status").out.splitlines()


@pytest.mark.parametrize("start,pushed", [
    ((), False),
    (("--goal", "review alice's fix"), True),
    (("--acceptance", "tests pass"), True),
])
def test_a_reviewer_task_started_without_a_card_stays_home(tmp_path, start, pushed):
    """Walkthrough 27: ``task start bob-review`` then ``verify REMOTE:T/N --isolated`` and
    ``push`` sent refs/ckpt/bob-review/log, though the task recorded nothing but a review."""
    remote, _a, bob = pushed_task(tmp_path, "work", {"g": "y\n"}, who="a", config='[[verifier]]\nname = "tests"\ncommand = "true"\n')
    ckpt(bob, "task", "start", "bob-review", *start)
    ckpt(bob, "fetch")
    ckpt(bob, "trust")
    ckpt(bob, "verify", "origin:work/1", "--isolated")
    res = ckpt(bob, "push")
    assert ("new        refs/ckpt/bob-review/log" in res.out.splitlines()) is pushed, res.out
    assert "new        refs/notes/ckpt" in res.out.splitlines()
    refs = git(remote, "for-each-ref", "--format=%(refname)", "refs/ckpt/").decode().split()
    assert refs == (["refs/ckpt/bob-review/log"] if pushed else []) + ["refs/ckpt/work/1", "refs/ckpt/work/log"]


def test_a_note_on_a_reviewer_task_is_shared(tmp_path):
    _remote, _a, bob = pushed_task(tmp_path, "work", {"g": "y\n"}, who="a")
    ckpt(bob, "task", "start", "bob-review")
    ckpt(bob, "task", "note", "--decided", "the guard belongs in login()")
    assert "new        refs/ckpt/bob-review/log" in ckpt(bob, "push").out.splitlines()


def test_diff_scope_does_not_take_a_named_files_directory(repo):
    (repo / "tests").mkdir()
    (repo / "lib").mkdir()
    (repo / "tests" / "a.py").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "i")
    ckpt(repo, "task", "start", "s")
    ckpt(repo, "save", "-m", "s", "--allow-empty", "--next", "add a regression test in tests/test_login.py")
    (repo / "tests" / "zzz.py").write_text("b\n")
    (repo / "tests" / "test_login.py").write_text("c\n")
    (repo / "lib" / "other.py").write_text("d\n")
    assert ckpt(repo, "diff", "--scope").out == (
        "in scope (next step or files the task touched), since s/1:\n"
        "  A tests/test_login.py  (next step)\n"
        "outside the scope of the task card:\n"
        "  A lib/other.py\n"
        "  A tests/zzz.py\n")


def test_a_bad_overlay_pattern_is_exit_6_where_the_worktree_is_read_and_said_by_status(repo):
    ckpt(repo, "save", "-m", "x", "--allow-empty")
    git(repo, "config", "ckpt.overlay.include", "[a-c]x")
    why = ("git config: ckpt.overlay.include pattern '[a-c]x' has a negated, range or [:class:] bracket expression "
           "(read otherwise than git reads it)")
    for command in (["save"], ["diff"], ["restore", "1"], ["verify"], ["handoff"], ["stats"]):
        assert ckpt(repo, *command, rc=6).err.splitlines()[0] == f"error: {why}", command
    for command in (["list"], ["show"], ["log"], ["check"]):
        ckpt(repo, *command)
    assert f"worktree:  unknown ({why}); latest is default/1" in ckpt(repo, "status").out.splitlines()
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/ckpt/default/").decode().split() == [
        "refs/ckpt/default/1", "refs/ckpt/default/log"]


@pytest.mark.parametrize("name,want", [
    ("t/4~1", "t/3"), ("t/4^", "t/3"), ("t/4~~", "t/1"), ("t/4~2", "t/1"), ("4^^", "t/1"), ("t/4~0", "t/4"),
    ("t/3~1", "t/1"),          # t/2 was dropped: no step
    ("promoted~1", "t/3"), ("t/promoted^", "t/3"), ("origin:t/4~1", "origin:t/3"), ("origin:t/3^", "origin:t/1"),
])
def test_steps_back_count_from_any_checkpoint(tmp_path, name, want):
    _remote, repo = with_remote(tmp_path)
    ckpt(repo, "task", "start", "t")
    for i in range(4):
        (repo / "f").write_text(f"{i}\n")
        ckpt(repo, "save", "-m", f"s{i}")
    ckpt(repo, "verify", "t/4")
    ckpt(repo, "drop", "t/2")
    ckpt(repo, "push")
    ckpt(repo, "fetch")
    assert ckpt(repo, "show", name, "--json").json()["result"]["id"] == want


@pytest.mark.parametrize("name,err", [
    ("t/3~2", "error: t/3~2: task t has only 1 checkpoint(s) before t/3\nhint: t/1 is the oldest; git ckpt list --task t shows them\n"),
    ("t/1^", "error: t/1^: task t has only 0 checkpoint(s) before t/1\nhint: t/1 is the oldest; git ckpt list --task t shows them\n"),
    ("t/9~1", "error: no checkpoint t/9\nhint: did you mean t/3 (the latest of t)? git ckpt list --task t shows its checkpoints\n"),
    ("x/1~1", None),
    ("t/2~1", "error: no checkpoint t/2: it was dropped (numbers are never given again)\n"),
])
def test_steps_back_that_name_nothing(repo, name, err):
    ckpt(repo, "task", "start", "t")
    for i in range(3):
        (repo / "f").write_text(f"{i}\n")
        ckpt(repo, "save", "-m", f"s{i}")
    ckpt(repo, "drop", "t/2")
    res = ckpt(repo, "show", name, rc=4)
    if err is None:
        assert res.err.startswith("error: no checkpoint x/1: there is no task x\n")
    elif err.count("\n") == 1:
        assert res.err.startswith(err)
    else:
        assert res.err == err


def test_the_plans_index_line_says_what_the_index_becomes(repo):
    """The plan said "index set to the checkpoint's staged state" for a path restore (which sets
    only those paths) and when HEAD commits the checkpoint's files (the index becomes HEAD's
    tree).  Each says what it does."""
    (repo / "a").write_text("A\n")
    (repo / "b").write_text("B\n")
    git(repo, "add", "a")
    ckpt(repo, "save", "-m", "s")
    (repo / "a").write_text("Z\n")
    git(repo, "add", "a")
    assert ckpt(repo, "restore", "1", "--dry-run", "--", "a").out == (
        "would restore a from default/1:\nwrite   a\n"
        "index   the paths asked for as staged in the checkpoint (the rest of the index stays)\n")
    assert ckpt(repo, "restore", "1", "--dry-run").out.splitlines()[-2:] == [
        "index   set to the checkpoint's staged state", "leave   2 other file(s)"]
    # HEAD commits the checkpoint's files; a later change is staged
    (repo / "a").write_text("A\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the checkpoint's files")
    (repo / "a").write_text("later\n")
    git(repo, "add", "a")
    out = ckpt(repo, "restore", "1", "--dry-run").out.splitlines()
    assert out[1:] == ["would restore default/1:", "write   a",
                       "index   set to HEAD's tree (nothing staged: HEAD commits the checkpoint's files)",
                       "leave   2 other file(s)"], out
    ckpt(repo, "restore", "1")
    assert git(repo, "status", "--porcelain") == b"" and (repo / "a").read_text() == "A\n"


def test_attempt_with_only_optional_verifiers_does_not_promote_a_failing_command(repo):
    """Attack 24: only verifiers with required = false are as empty a requirement as none."""
    (repo / "f").write_text("good\n")
    git(repo, "config", "ckpt.verifier.lint.command", "true")
    git(repo, "config", "ckpt.verifier.lint.required", "false")
    res = ckpt(repo, "attempt", "--", "sh", "-c", "echo broken > f; exit 3", rc=1)
    assert "no verifier is required and sh -c 'echo broken > f; exit 3' failed: not promoted on the empty requirement" in res.out.splitlines()
    assert promoted(repo) is None and (repo / "f").read_text() == "good\n"
    # a required one decides, whatever CMD exited
    git(repo, "config", "ckpt.verifier.lint.required", "true")
    res = ckpt(repo, "attempt", "--", "sh", "-c", "echo fixed > f; exit 3")
    assert res.out.splitlines()[-2:] == ["promoted default/3", "workspace status: clean"]


def test_diff_agrees_with_status_after_head_commits_the_checkpoint(repo):
    """Attack 24: after a restore where HEAD commits the checkpoint's files (the index becomes
    HEAD's tree), status said "matches t/1" and diff listed an index change."""
    ckpt(repo, "task", "start", "t")
    (repo / "a.txt").write_text("2\n")
    git(repo, "add", "a.txt")
    (repo / "a.txt").write_text("3\n")
    ckpt(repo, "save", "-m", "partial")
    git(repo, "commit", "-qam", "c2")
    ckpt(repo, "restore", "t/1")
    assert "worktree:  matches t/1 (@)" in ckpt(repo, "status").out.splitlines()
    assert ckpt(repo, "diff").out == ""
    assert ckpt(repo, "diff", "--json").json()["result"]["index"] == []
    ckpt(repo, "handoff", "--check")
    # a staged change after it is one, as git status sees it
    (repo / "a.txt").write_text("4\n")
    git(repo, "add", "a.txt")
    assert ckpt(repo, "diff", "--json").json()["result"]["index"] == [{"status": "M", "path": "a.txt"}]
