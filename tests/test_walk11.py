"""What the eleventh new-user walkthrough of the README met that is not a view of results or of
fetched ids (tests/test_walk11_views.py): a checkpoint that was dropped or pruned is named as
such, not offered a "did you mean"; the protection reasons read as sentences.

Real repositories, the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import pytest

from conftest import ckpt


def _three(repo):
    for i in range(3):
        (repo / "f").write_text(f"{i}\n")
        ckpt(repo, "save", "-m", f"s{i}")


@pytest.mark.parametrize("command", [["drop"], ["show"], ["restore"], ["diff"]])
def test_a_dropped_checkpoint_is_named_as_dropped(repo, command):
    """`drop t/2` twice answered `no checkpoint t/2` / `did you mean t/3?`, as if it had never
    been: the ledger records the drop, and every command naming it says so (exit 4)."""
    _three(repo)
    ckpt(repo, "drop", "default/2", "--force")
    res = ckpt(repo, *command, "default/2", rc=4)
    assert res.err == ("error: no checkpoint default/2: it was dropped (numbers are never given again)\n"
                       "hint: git ckpt log --task default shows when; git ckpt list --task default shows its checkpoints\n")
    res = ckpt(repo, "task", "note", "--fact", "x", "--evidence", "default/2", rc=4)
    assert "it was dropped" in res.err


def test_a_pruned_checkpoint_is_named_as_pruned(repo):
    _three(repo)
    ckpt(repo, "gc", "--keep", "1")
    res = ckpt(repo, "show", "default/1", rc=4)
    assert res.err.startswith("error: no checkpoint default/1: it was pruned by git ckpt gc (numbers are never given again)\n"), res.err
    assert ckpt(repo, "show", "default/7", rc=4).err.splitlines()[1].startswith("hint: did you mean default/3")


def test_the_protection_of_the_state_an_undo_left_reads_as_a_sentence(repo):
    """`error: t1/4 is protected (from of the last undo)` - the key name leaked into the text."""
    _three(repo)
    (repo / "g").write_text("g\n")
    ckpt(repo, "restore", "1")  # saves default/4 first
    ckpt(repo, "undo")
    res = ckpt(repo, "drop", "default/4", rc=2)
    assert res.err.startswith("error: default/4 is protected (target of the last undo); not dropped\n"), res.err
    res = ckpt(repo, "drop", "default/1", rc=2)
    assert res.err.startswith("error: default/1 is protected (the state the last undo left); not dropped\n"), res.err
