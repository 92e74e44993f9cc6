"""What the fifteenth new-user walkthrough of the README met, each as its kind: a restore refused
over a file the target itself holds, rules both states share read as the state left's own, an
attempt said to change nothing, a re-promotion counted as a promotion, a secret named in one of
the checkpoints holding it, a REMOTE:T of no remote called fetched, an empty name that lost the
e-mail, and a dry run that kept the merge warning to itself.

Real repositories, real clones of a real bare repository, the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import os

import pytest

from conftest import ckpt, git
from test_remote import _team


@pytest.mark.parametrize("how", ["git -c", "git config, then unset"])
def test_a_restore_is_not_refused_over_an_overlay_file_the_target_holds(repo, how):
    (repo / ".gitignore").write_text("tmp/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "ignore tmp")
    (repo / "tmp").mkdir()
    (repo / "tmp/t.txt").write_text("t\n")
    if how == "git -c":
        git(repo, "-c", "ckpt.overlay.include=tmp/", "ckpt", "save", "-m", "one")
    else:
        git(repo, "config", "ckpt.overlay.include", "tmp/")
        ckpt(repo, "save", "-m", "one")
        git(repo, "config", "--unset", "ckpt.overlay.include")
    (repo / "a.txt").write_text("b\n")
    plan = ckpt(repo, "restore", "default/1", "--dry-run").out
    assert plan == "would restore default/1:\ndelete  a.txt\nleave   2 other file(s)\n", plan
    ckpt(repo, "restore", "default/1")
    assert (repo / "tmp/t.txt").read_text() == "t\n" and not (repo / "a.txt").exists()
    # a different file there is the user's, saved nowhere: still refused, nothing changed
    (repo / "tmp/t.txt").write_text("mine\n")
    (repo / "a.txt").write_text("b\n")
    res = ckpt(repo, "restore", "default/1", rc=1)
    assert "the pre-restore save would not hold: tmp/t.txt" in res.err and (repo / "tmp/t.txt").read_text() == "mine\n"


@pytest.mark.parametrize("rule", ["/d/x", "d/x", "/d/*", "x"])
def test_files_ignored_by_rules_both_states_share_are_not_the_state_lefts(repo, rule):
    (repo / ".git/info/exclude").write_text(rule + "\n")
    (repo / "d").mkdir()
    (repo / "d/x").write_text("x\n")
    (repo / ".gitignore").write_text("")
    ckpt(repo, "save", "-m", "one")
    (repo / ".gitignore").write_text("cache/\n")
    (repo / "cache").mkdir()
    (repo / "cache/y").write_text("y\n")
    ckpt(repo, "save", "-m", "two")
    out = ckpt(repo, "restore", "default/1", "--dry-run").out
    assert "keep    cache/ (ignored by the rules of the state left;" in out
    assert "d/" not in out, out
    ckpt(repo, "restore", "default/1")
    assert (repo / "d/x").read_text() == "x\n" and (repo / "cache/y").read_text() == "y\n"
    assert git(repo, "status", "--porcelain", "--ignored").decode().count("!! d/") == 1


def test_an_attempt_that_lands_on_an_earlier_result_says_so(repo):
    git(repo, "config", "ckpt.verifier.t.command", "false")
    (repo / "a.txt").write_text("a\n")
    ckpt(repo, "save", "-m", "start")
    ckpt(repo, "attempt", "--", "sh", "-c", "echo x >> a.txt", rc=1)
    res = ckpt(repo, "attempt", "--", "sh", "-c", "echo x >> a.txt", rc=1)
    assert "checkpoint: default/2 (sh -c 'echo x >> a.txt' left the worktree as default/2 holds it already)\n" in res.out, res.out
    res = ckpt(repo, "attempt", "--", "true", rc=1)
    assert "checkpoint: default/1 (true changed nothing)\n" in res.out, res.out


def test_promote_force_of_the_promoted_checkpoint_adds_no_promotion(repo):
    git(repo, "config", "ckpt.verifier.t.command", "true")
    (repo / "a.txt").write_text("a\n")
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "verify")
    promotes = lambda: [e for e in ckpt(repo, "log", "--json").json()["result"] if e["type"] == "promote"]  # noqa: E731
    assert len(promotes()) == 1
    assert ckpt(repo, "promote", "default/1", "--force").out == "default/1 is already promoted\n"
    assert len(promotes()) == 1
    s = ckpt(repo, "stats", "--json").json()["result"]
    assert (s["promotions"], s["forced_promotions"]) == (1, 0)


def test_a_secret_is_named_in_every_checkpoint_that_holds_it(tmp_path):
    _bare, _alice, bob = _team(tmp_path)
    (bob / "fixtures").mkdir()
    (bob / "fixtures/aws.ini").write_text("[default]\naws_access_key_id = AKIAQWERTYUIOPASDFGH\n")
    (bob / "keys.txt").write_text("aws_access_key_id = AKIAQWERTYUIOPASDFGZ\n")
    ckpt(bob, "task", "start", "bob-work")
    ckpt(bob, "save", "-m", "mine")
    ckpt(bob, "save", "--allow-empty", "-m", "mine2")
    res = ckpt(bob, "push", rc=10)
    assert "fixtures/aws.ini: AWS Access Key (line 2) [overlay of bob-work/1, bob-work/2]" in res.err, res.err
    assert "keys.txt: AWS Access Key (line 1) [worktree of bob-work/1, bob-work/2]" in res.err, res.err


@pytest.mark.parametrize("args", [["task", "start", "origin:x"], ["save", "--task", "origin:x"],
                                  ["task", "note", "origin:x", "--next", "n"], ["task", "done", "origin:x"]])
def test_a_remote_task_name_of_no_remote_is_that_error(repo, args):
    res = ckpt(repo, *args, rc=2)
    assert res.err == "error: 'origin' is not a configured remote\nhint: git remote add origin URL adds it (git remote -v lists the remotes)\n"


def test_an_empty_name_keeps_the_email_git_would_use(repo):
    (repo / "a.txt").write_text("a\n")
    git(repo, "-c", "user.name=", "-c", "user.email=bob@example.com", "ckpt", "save", "-m", "x")
    assert git(repo, "log", "-1", "--format=%an <%ae>", "refs/ckpt/default/1") == b"git-ckpt <bob@example.com>\n"


def test_a_dry_run_says_the_merge_state_will_not_come_back(repo):
    from test_walk13 import _mid_merge

    _mid_merge(repo)
    ckpt(repo, "save", "-m", "mid-merge")
    (repo / "f").write_text("resolved\n")
    git(repo, "commit", "-qam", "resolved", env={**os.environ, "GIT_EDITOR": "true"})
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    theirs = git(repo, "rev-parse", "HEAD^2").decode().strip()
    # (walkthrough 22: the merge was committed since: no --reset-head offered to go back before it)
    want = (f"warning: default/1 was saved during a merge; MERGE_HEAD is not brought back: HEAD {head[:12]} already "
            f"contains what it merged ({theirs[:12]}), so the merge was made since\n")
    assert ckpt(repo, "restore", "default/1", "--dry-run").err == want
    assert ckpt(repo, "restore", "default/1", "--dry-run", "--reset-head").err == ""
    assert ckpt(repo, "restore", "default/1").err == want


def test_status_says_why_the_worktree_cannot_be_compared(repo):
    (repo / "a.txt").write_text("a\n")
    ckpt(repo, "save", "-m", "one")
    (repo / ".ckpt.toml").write_text("[overlay\n")
    out = ckpt(repo, "status").out
    assert "worktree:  unknown (.ckpt.toml: " in out and "; latest is default/1\n" in out, out


def test_drop_of_several_says_their_objects(repo):
    for i in range(3):
        (repo / "a.txt").write_text(f"{i}\n")
        ckpt(repo, "save", "-m", str(i))
    out = ckpt(repo, "drop", "default/1", "default/2").out
    assert out.endswith("their objects are freed by git gc once nothing else reaches them\n"), out
    assert ckpt(repo, "drop", "default/3").out.endswith("its objects are freed by git gc once nothing else reaches them\n")
