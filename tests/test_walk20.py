"""What the twentieth new-user walkthrough of the README met, each as its kind: a hint naming
another command than the one typed (a path given where a checkpoint belongs), a refused restore
whose advice did not work, a merge in progress described as in no checkpoint (and planned as
ending a merge no restore brought back), a secret file repeated once per detector, and a hint
naming a command that lists less than it said.

Real repositories and the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import pytest

from conftest import ckpt


# -- 1: a path where a checkpoint belongs: the hint fits the command typed ----------------------

def _one_saved_then_changed(repo):
    (repo / "a.py").write_text("a\n")
    ckpt(repo, "save", "-m", "one")
    (repo / "a.py").write_text("a\nb\n")


@pytest.mark.parametrize("args", [["diff", "default/1", "a.py"], ["diff", "a.py"], ["diff", "a.py", "default/1"]])
def test_a_path_given_to_diff_is_told_paths_go_after_dashdash(repo, args):
    _one_saved_then_changed(repo)
    res = ckpt(repo, *args, rc=4)
    assert res.err == ("error: unknown checkpoint 'a.py': it is a path\n"
                       "hint: paths go after --: git ckpt diff [CKPT] -- PATHS\n"), res.err
    # what the hint says works, with and without the checkpoint
    for cmd in (["diff", "default/1", "--", "a.py"], ["diff", "--", "a.py"]):
        out = ckpt(repo, *cmd).out
        assert out.startswith("diff --git a/a.py b/a.py\n") and out.endswith(" a\n+b\n"), out


@pytest.mark.parametrize("command", ["show", "verify", "drop", "promote", "check"])
def test_a_path_given_to_a_command_without_paths_is_told_it_takes_a_checkpoint(repo, command):
    _one_saved_then_changed(repo)
    res = ckpt(repo, command, "a.py", rc=4)
    assert res.err == ("error: unknown checkpoint 'a.py': it is a path\n"
                       f"hint: git ckpt {command} takes a checkpoint name (T/N, N, @, promoted), not a path: "
                       "git ckpt list shows the checkpoints\n"), res.err
    assert "default/1" in ckpt(repo, "list").out


def test_a_path_given_to_restore_is_still_told_the_checkpoint_comes_first(repo):
    _one_saved_then_changed(repo)
    res = ckpt(repo, "restore", "a.py", "default/1", rc=4)
    assert res.err == ("error: unknown checkpoint 'a.py': it is a path\n"
                       "hint: the checkpoint comes first: git ckpt restore CKPT -- PATHS\n"), res.err
    ckpt(repo, "restore", "default/1", "--", "a.py")
    assert (repo / "a.py").read_text() == "a\n"
