"""What the twenty-sixth new-user walkthrough of the README met.

1. ``status`` called a restore still running "interrupted" and hinted ``undo``, which then
   reverted it; a journal under a held worktree lock is a running restore.
2. ``push --all`` sent a reviewer's ``default`` ledger (``push`` alone did not), and the second
   reviewer's ``push --all`` was refused whole.
3. ``REMOTE:T/N`` with a URL, ``origin/main`` or ``file://…`` for REMOTE got "invalid remote name"
   (exit 4) or "git remote add file URL", not the one remote error every command gives.
4. A remote git accepts (``team/shared``) was "not a configured remote", and the hint (``git
   remote add``) failed: the name is one git ckpt cannot use, and it says how to rename it.
5. A save whose overlay holds a file the earlier checkpoint's policy did not take was named
   ``same as T/N``.
6. ``list --remote`` and ``show`` of a teammate's checkpoint printed their ids (``restoring
   t/1``), which name nothing here.
7. ``restore --worktree sub/wt`` inside the worktree made a nested repository the next save
   recorded as a gitlink.

Real repositories, a bare remote and the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import fcntl
import os

import pytest

from conftest import ckpt, commit_config, git, reviewer_clones, with_remote


def test_status_tells_a_running_restore_from_an_interrupted_one(repo):
    (repo / "f").write_text("1\n")
    ckpt(repo, "save", "-m", "one")
    journal = repo / ".git" / "ckpt" / "RESTORE"
    journal.write_text("{}")  # what a restore leaves while it runs (or when it was killed)
    fd = os.open(repo / ".git" / "ckpt" / "lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another process restoring holds the worktree lock
        out = ckpt(repo, "status").out
        assert "restore:   running (another git ckpt restore or undo holds this worktree; wait for it)\n" in out
        assert "interrupted" not in out
        js = ckpt(repo, "status", "--json").json()["result"]
        assert (js["restore_running"], js["restore_interrupted"]) == (True, False)
    finally:
        os.close(fd)
    assert "restore:   interrupted; run git ckpt restore --continue or git ckpt undo\n" in ckpt(repo, "status").out
    journal.unlink()


def _reviewers(tmp_path):
    remote, a = with_remote(tmp_path, "a")
    commit_config(a, '[[verifier]]\nname = "tests"\ncommand = "true"\n')
    ckpt(a, "task", "start", "t", "--goal", "g")
    (a / "f.txt").write_text("2\n")
    ckpt(a, "save", "-m", "s")
    ckpt(a, "push")
    return remote, reviewer_clones(tmp_path, remote, "origin:t/1")


def test_push_all_leaves_a_reviewers_ledger_home(tmp_path):
    remote, (one, two) = _reviewers(tmp_path)
    for r in (two, one):
        ckpt(r, "fetch")
        res = ckpt(r, "push", "--all")
        assert "refs/ckpt/default/log" not in res.out, res.out
    assert git(remote, "for-each-ref", "--format=%(refname)", "refs/ckpt/").decode().split() == ["refs/ckpt/t/1", "refs/ckpt/t/log"]
    assert len(git(remote, "notes", "--ref=ckpt", "show", "refs/ckpt/t/1").decode().splitlines()) == 2


@pytest.mark.parametrize("form", ["{bare}", "file://{bare}", "origin/main", "https://example.invalid/r.git"])
def test_a_remote_part_of_a_checkpoint_name_gets_the_remote_error(tmp_path, form):
    bare, a = with_remote(tmp_path, "a")
    ckpt(a, "task", "start", "t")
    (a / "g").write_text("g\n")
    ckpt(a, "save", "-m", "s")
    ckpt(a, "push")
    ckpt(a, "fetch")
    remote = form.format(bare=bare)
    res = ckpt(a, "show", f"{remote}:t/1", rc=2)
    hint = {"origin/main": "did you mean origin? (origin/main names a branch of it; checkpoints are pushed and fetched "
                           "for a whole remote)",
            "https://example.invalid/r.git": "git ckpt pushes and fetches through a named remote: git remote add NAME URL "
                                             "adds one (git remote -v lists them)"}.get(
        form, "that is the URL of remote origin; name the remote instead")
    assert res.err == f"error: {remote!r} is not a configured remote\nhint: {hint}\n"
    assert res.err == ckpt(a, "fetch", remote, rc=2).err  # one error for a remote, every command


@pytest.mark.parametrize("command", [["fetch"], ["push"], ["list", "--remote"]])
def test_a_remote_name_git_accepts_but_git_ckpt_cannot_use_says_rename(tmp_path, command):
    bare, a = with_remote(tmp_path, "a")
    git(a, "remote", "add", "team/shared", str(bare))
    res = ckpt(a, *command, "team/shared", rc=2)
    assert res.err == ("error: remote 'team/shared' has a name git ckpt cannot use: letters, digits, '.', '_' and '-' only\n"
                       "hint: git remote rename team/shared team-shared\n")
    git(a, "remote", "rename", "team/shared", "team-shared")
    ckpt(a, *command, "team-shared")


def test_a_save_whose_overlay_took_more_says_overlay_changed(repo):
    (repo / ".git" / "info" / "exclude").write_text("fx/\n")
    (repo / "fx").mkdir()
    (repo / "f").write_text("2\n")
    ckpt(repo, "save")
    (repo / "fx" / "a").write_text("data\n")
    git(repo, "-c", "ckpt.overlay.include=fx/", "ckpt", "save")
    assert ckpt(repo, "show", "@", "--json").json()["result"]["manifest"]["message"] == "overlay changed"


def test_a_teammates_messages_name_checkpoints_as_this_repository_does(tmp_path):
    bare, a = with_remote(tmp_path, "a")
    ckpt(a, "task", "start", "t")
    (a / "f.txt").write_text("2\n")
    ckpt(a, "save", "-m", "two")
    (a / "f.txt").write_text("3\n")
    ckpt(a, "restore", "t/1")  # saves t/2: "before restoring t/1"
    ckpt(a, "push")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(bare), str(b))
    ckpt(b, "fetch")
    listed = ckpt(b, "list", "--remote", "origin").out
    assert "pre-restore before restoring origin:t/1\n" in listed and "restoring t/1" not in listed
    assert "message:  before restoring origin:t/1\n" in ckpt(b, "show", "origin:t/2").out
    # the teammate's own view is unchanged
    assert "before restoring t/1\n" in ckpt(a, "list").out


@pytest.mark.parametrize("where", ["sub/wt", "."])
def test_restore_worktree_refuses_a_directory_inside_this_worktree(tmp_path, where):
    _bare, a = with_remote(tmp_path, "a")
    (a / "f").write_text("f\n")
    ckpt(a, "save", "-m", "s")
    before = git(a, "worktree", "list", "--porcelain")
    target = a / where if where != "." else a / "new"
    res = ckpt(a, "restore", "@", "--worktree", str(target), rc=2)
    assert res.err == (f"error: {target} is inside this worktree ({a})\n"
                       f"hint: give a directory outside it, e.g. {tmp_path / target.name}\n")
    assert git(a, "worktree", "list", "--porcelain") == before and not target.exists()
    ckpt(a, "restore", "@", "--worktree", str(tmp_path / "outside"))
    assert (tmp_path / "outside" / "f").read_text() == "f\n"
