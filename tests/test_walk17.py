"""What the seventeenth new-user walkthrough of the README met, each as its kind: diff into a
closed pipe called damage, hints naming commands that fail (the wrong --abort, an option undo
does not have, a verify that refuses), a typo answered in other words than every other
command's, and a warning for a save that saved nothing.

Real repositories and the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import pytest

from conftest import ckpt, git


@pytest.mark.parametrize("op,abort", [("cherry-pick", "git cherry-pick --abort"), ("revert", "git revert --abort"),
                                      ("merge", "git merge --abort")])
def test_an_operation_in_progress_names_its_own_abort(repo, op, abort):
    (repo / "f").write_text("0\n")
    git(repo, "add", "f")
    git(repo, "commit", "-qm", "0")
    ckpt(repo, "save", "-m", "s")
    git(repo, "checkout", "-qb", "x")
    (repo / "f").write_text("1\n")
    git(repo, "commit", "-qam", "1")
    git(repo, "checkout", "-q", "main")
    (repo / "f").write_text("2\n")
    git(repo, "commit", "-qam", "2")
    if op == "revert":
        git(repo, "revert", "--no-edit", "HEAD~1", check=False)
        (repo / "f").write_text("3\n")
        git(repo, "commit", "-qam", "3")
        git(repo, "revert", "--no-edit", "HEAD~1", check=False)
    else:
        git(repo, op, "x", check=False)
    res = ckpt(repo, "restore", "default/1", rc=5)
    assert res.err.endswith(f"hint: finish it or abort it first ({abort}), then restore\n"), res.err


def test_undo_after_a_reset_head_restore_hints_what_undo_can_do(repo):
    (repo / "a").write_text("a\n")
    git(repo, "add", "a")
    git(repo, "commit", "-qm", "a")
    (repo / "b").write_text("b\n")
    git(repo, "add", "b")
    git(repo, "commit", "-qm", "b")
    ckpt(repo, "save", "-m", "onb")
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    ckpt(repo, "restore", "default/1", "--reset-head")
    git(repo, "checkout", "-q", "main")
    res = ckpt(repo, "undo", rc=2)
    assert res.err.endswith("hint: check out a detached HEAD (git checkout --detach) first, then git ckpt undo; "
                            "nothing was changed\n"), res.err
    git(repo, "checkout", "-q", "--detach")
    ckpt(repo, "undo")


def test_promote_hints_isolated_when_the_worktree_moved_on(repo):
    git(repo, "config", "ckpt.verifier.t.command", "true")
    (repo / "a").write_text("a\n")
    ckpt(repo, "save", "-m", "two")
    (repo / "a").write_text("edit\n")
    res = ckpt(repo, "promote", rc=1)
    assert res.err.endswith("hint: git ckpt verify default/1 (with --isolated when the worktree no longer holds it), "
                            "or git ckpt promote default/1 --force, recorded as forced\n"), res.err
    ckpt(repo, "verify", "default/1", "--isolated")


def test_push_of_a_mistyped_task_says_no_task(repo):
    (repo / "a").write_text("a\n")
    ckpt(repo, "task", "start", "fix-div")
    ckpt(repo, "save", "-m", "one")
    res = ckpt(repo, "push", "--task", "fix-dvi", rc=4)
    assert res.err == "error: no task fix-dvi\nhint: did you mean fix-div? git ckpt task list shows every task\n", res.err


def test_a_done_task_warns_only_when_a_save_went_into_it(repo):
    (repo / "a").write_text("a\n")
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "task", "done")
    assert ckpt(repo, "save", "-m", "again").err == ""
    (repo / "a").write_text("b\n")
    assert ckpt(repo, "save", "-m", "more").err == (
        "warning: task default is marked done; saved into it anyway (git ckpt task start NAME begins a new one)\n")
