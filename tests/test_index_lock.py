"""A held ``index.lock`` (another git process writing the index): commands that only read go on
as git's own do (``git diff``, ``git status``), reading the index as it is; commands that would
write a checkpoint, the worktree or the index refuse with exit 5 and change nothing.  A dry run
shows its plan and says the restore would be refused.

Real repositories and the real ``git ckpt`` entry point."""

from __future__ import annotations

import pytest

from conftest import ckpt, git, worktree_state

LOCK_ERR = ("error: the index is locked: {lock} exists\n"
            "hint: wait for the other git process to finish; if none is running, remove that file\n")


@pytest.fixture
def locked(repo):
    (repo / "a").write_text("one\n")
    ckpt(repo, "save", "-m", "one")
    (repo / "a").write_text("two\n")
    ckpt(repo, "save", "-m", "two")
    ckpt(repo, "restore", "default/1")  # so that undo has something to do
    (repo / "a").write_text("three\n")
    git(repo, "add", "a")
    (repo / "b").write_text("untracked\n")
    lock = repo / ".git" / "index.lock"
    lock.write_bytes(b"")
    return repo, lock


READERS = [
    (["diff", "--stat"], " a | 2 +-\n b | 1 +\n 2 files changed, 2 insertions(+), 1 deletion(-)\nindex changes (1):\nA\ta\n"),
    (["status"], None),
    (["handoff"], None),
]


@pytest.mark.parametrize("args,out", READERS, ids=lambda a: " ".join(a) if isinstance(a, list) else "")
def test_a_command_that_only_reads_goes_on(locked, args, out):
    repo, lock = locked
    index, before = (repo / ".git/index").read_bytes(), worktree_state(repo)
    res = ckpt(repo, *args)
    assert res.err == ""
    if out is not None:
        assert res.out == out
    assert "unknown" not in res.out and "locked" not in res.out
    assert (repo / ".git/index").read_bytes() == index and lock.read_bytes() == b"" and worktree_state(repo) == before


def test_a_dry_run_shows_its_plan_and_says_the_restore_would_be_refused(locked):
    repo, lock = locked
    index = (repo / ".git/index").read_bytes()
    res = ckpt(repo, "restore", "default/1", "--dry-run")
    assert res.out == "would restore default/1:\nwrite   a\ndelete  b\nindex   set to the checkpoint's staged state\nleave   1 other file(s)\n", res
    assert res.err == (f"warning: the index is locked: {lock} exists, so restore would be refused: wait for the other git "
                       "process to finish; if none is running, remove that file\n")
    assert (repo / ".git/index").read_bytes() == index


@pytest.mark.parametrize("args", [["save", "-m", "two"], ["restore", "default/1"], ["restore", "default/1", "a"], ["undo"],
                                  ["verify"]], ids=" ".join)
def test_a_command_that_writes_refuses_and_changes_nothing(locked, args):
    repo, lock = locked
    refs, index, before = git(repo, "for-each-ref"), (repo / ".git/index").read_bytes(), worktree_state(repo)
    res = ckpt(repo, *args, rc=5)
    assert res.err == LOCK_ERR.format(lock=lock), res
    assert git(repo, "for-each-ref") == refs and (repo / ".git/index").read_bytes() == index
    assert worktree_state(repo) == before
