"""What the eighteenth new-user walkthrough of the README met, each as its kind: a closed pipe
that made some commands exit 1 (click's answer to EPIPE, depending on when the reader left), and
the refusal during a merge: its words, the command its hint names, and a dry run refused though
it changes nothing.

Real repositories and the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import subprocess

import pytest

from conftest import ckpt, git, merge_stopped_on_conflict


@pytest.mark.parametrize("args", ["status", "show @", "restore @ --dry-run", "list", "log", "gc --keep 0 --dry-run", "diff"])
def test_a_closed_pipe_is_a_quiet_exit_every_time(repo, args):
    for i in range(3):
        (repo / f"f{i}.txt").write_text("".join(f"{j}\n" for j in range(5000)))
        ckpt(repo, "save", "-m", f"s{i}")
    (repo / "f0.txt").write_text("changed\n")
    for _ in range(6):  # the reader leaves at a different moment each time
        proc = subprocess.run(f"git ckpt {args} | head -c1 >/dev/null; exit ${{PIPESTATUS[0]}}", shell=True, cwd=repo,
                              executable="/bin/bash", capture_output=True)
        assert (proc.returncode, proc.stderr) == (0, b""), (args, proc)


def _merging(repo):
    (repo / "f").write_text("a\n")
    git(repo, "add", "f")
    git(repo, "commit", "-qm", "a")
    merge_stopped_on_conflict(repo, branch="o")
    git(repo, "merge", "--abort")
    ckpt(repo, "save", "-m", "clean")  # on main's commit, before the merge
    git(repo, "merge", "-q", "o", check=False)


@pytest.mark.parametrize("command", ["restore", "undo"])
def test_a_merge_in_progress_is_refused_in_the_words_of_the_command(repo, command):
    _merging(repo)
    if command == "undo":
        git(repo, "merge", "--abort")
        (repo / "g").write_text("g\n")
        ckpt(repo, "restore", "default/1")
        ckpt(repo, "undo")
        git(repo, "merge", "-q", "o", check=False)
    args = ["restore", "default/1"] if command == "restore" else ["undo"]
    res = ckpt(repo, *args, rc=5)
    assert res.err == ("error: a merge is in progress; " + command + " would leave it half-done (a checkpoint keeps MERGE_HEAD "
                       "and MERGE_MSG, not the rest of git's merge state: MERGE_MODE, AUTO_MERGE, an autostash, rerere's records)"
                       f"\nhint: finish it or abort it first (git merge --abort), then {command}\n"), res.err
    assert (repo / ".git/MERGE_HEAD").exists()


def test_a_dry_run_during_a_merge_shows_the_plan_and_says_it_would_be_refused(repo):
    _merging(repo)
    res = ckpt(repo, "restore", "default/1", "--dry-run")
    assert res.out.startswith("would restore default/1:"), res.out
    assert res.err == ("warning: a merge is in progress; restore would leave it half-done (a checkpoint keeps MERGE_HEAD "
                       "and MERGE_MSG, not the rest of git's merge state: MERGE_MODE, AUTO_MERGE, an autostash, rerere's records)"
                       ": finish it or abort it first (git merge --abort), then restore\n"), res.err
    assert (repo / ".git/MERGE_HEAD").exists()


def test_a_mistyped_remote_gets_a_suggestion(tmp_path):
    from test_remote import _team

    _bare, alice, _bob = _team(tmp_path)
    res = ckpt(alice, "push", "orign", rc=2)
    assert res.err == ("error: 'orign' is not a configured remote\nhint: did you mean 'origin'? git remote add orign URL "
                       "adds it (git remote -v lists the remotes)\n"), res.err


@pytest.mark.parametrize("args,err", [
    (["restore", "a.txt", "default/1"], "error: unknown checkpoint 'a.txt': it is a path\nhint: the checkpoint comes first: git ckpt restore CKPT -- PATHS\n"),
    (["show", "default"], "error: unknown checkpoint 'default': it is a task\nhint: its checkpoints are default/N: git ckpt list --task default shows them\n"),
])
def test_a_path_or_a_task_given_as_a_checkpoint_says_what_it_is(repo, args, err):
    (repo / "a.txt").write_text("a\n")
    ckpt(repo, "save", "-m", "one")
    assert ckpt(repo, *args, rc=4).err == err
