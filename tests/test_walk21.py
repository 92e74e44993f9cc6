"""What the twenty-first new-user walkthrough of the README met: ``status`` said the worktree
changed since a checkpoint while ``diff`` (which README offers to see what changed) showed
nothing, because the only change was what the index stages.  ``diff`` now lists index changes
as ``status`` judges them.

Real repositories and the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import pytest

from conftest import ckpt, git


@pytest.mark.parametrize("how", ["staged", "unstaged"])
def test_diff_shows_what_status_counts_as_changed_when_only_the_index_differs(repo, how):
    (repo / "a.txt").write_text("1\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "a")
    (repo / "a.txt").write_text("2\n")
    if how == "unstaged":
        git(repo, "add", "a.txt")  # saved staged; then unstaged again below
    ckpt(repo, "save", "-m", "one")
    if how == "staged":
        git(repo, "add", "a.txt")
    else:
        git(repo, "reset", "-q", "--", "a.txt")
    assert "worktree:  changed since default/1 (@)" in ckpt(repo, "status").out
    assert ckpt(repo, "diff").out == "index changes (1):\nM\ta.txt\n"
    assert ckpt(repo, "diff", "--name-status").out == "index changes (1):\nM\ta.txt\n"
    assert ckpt(repo, "diff", "--json").json()["result"] == {
        "from": "default/1", "to": "worktree", "changes": [], "overlay": [], "index": [{"status": "M", "path": "a.txt"}]}
    ckpt(repo, "save", "-m", "two")
    assert ckpt(repo, "diff", "1", "2").out == "index changes (1):\nM\ta.txt\n"
    assert ckpt(repo, "diff").out == ""


def test_diff_says_nothing_of_the_index_when_neither_side_stages_anything(repo):
    (repo / "a.txt").write_text("1\n")
    ckpt(repo, "save", "-m", "one")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "a")  # HEAD moved; nothing staged on either side
    res = ckpt(repo, "diff", "--json").json()["result"]
    assert (res["changes"], res["index"]) == ([], [])


def test_the_receipt_never_says_a_number_of_a_smaller_count(repo):
    """After drops (or gc) the receipt read 'Checkpoint: fix-auth/14 of 5'."""
    for i in range(4):
        (repo / "f").write_text(f"{i}\n")
        ckpt(repo, "save", "-m", f"s{i}")
    assert "Checkpoint: default/4 of 4\n" in ckpt(repo, "handoff").out
    ckpt(repo, "drop", "1", "2")
    assert "Checkpoint: default/4 (2 checkpoint(s) kept)\n" in ckpt(repo, "handoff").out
    ckpt(repo, "restore", "3")
    assert "Checkpoint: default/3 (2 checkpoint(s) kept)\n" in ckpt(repo, "handoff").out


@pytest.mark.parametrize("args,meant", [(["save", "my message"], "-m 'my message'"), (["save", "two", "words"], "-m 'two words'"),
                                        (["save", "it's"], "-m 'it'\"'\"'s'")])
def test_a_message_without_its_option_gets_the_option(repo, args, meant):
    """`git ckpt save "my message"` (the -m forgotten) got only the usage hint."""
    res = ckpt(repo, *args, rc=2)
    assert res.err.splitlines()[-1] == f"hint: did you mean {meant}? git ckpt save -h shows the usage", res
    assert ckpt(repo, "list", "extra", rc=2).err.splitlines()[-1] == "hint: git ckpt list -h shows the usage"
