"""What the twelfth new-user walkthrough of the README met: overlay content that is not ignored
in the clone restoring it, log --verify of a fetched task after verifying one of its
checkpoints here, and the push-refusal warning for one's own task after a drop.

Real clones of a real bare repository, the real ``git ckpt`` entry point.
"""

from __future__ import annotations

from conftest import ckpt, git
from test_remote import _team


def _fixture_ignored_only_by_alice(alice, bob):
    (alice / ".git/info/exclude").write_text("data/\n")
    (alice / "data").mkdir()
    (alice / "data/f.txt").write_text("data\n")
    ckpt(alice, "task", "start", "t")
    ckpt(alice, "save", "-m", "one")
    ckpt(alice, "push")
    ckpt(bob, "fetch")
    ckpt(bob, "task", "start", "mine")


def test_overlay_content_not_ignored_here_is_said_and_replaced_in_one_action(tmp_path):
    """Alice's data/ is ignored by her .git/info/exclude only; restored in Bob's clone it is
    an untracked file there.  The restore says so (status and verify will see it as a change)
    and a plan never both deletes and writes one path; nothing of Bob's is lost (undo)."""
    _bare, alice, bob = _team(tmp_path)
    (alice / ".ckpt.toml").write_text('[overlay]\ninclude = ["fixtures/", "data/"]\n')
    git(alice, "commit", "-qam", "overlay: data/ too")
    git(alice, "push", "-q", "origin", "HEAD")
    git(bob, "pull", "-q")
    _fixture_ignored_only_by_alice(alice, bob)
    note = ("note: 1 overlay file(s) of origin:t/1 are not ignored here (e.g. data/f.txt): they come back as "
            "untracked files, which status, verify and the next save see as changes; ignore them here too "
            "(a committed .gitignore rule serves every clone)\n")
    assert note in ckpt(bob, "restore", "origin:t/1", "--dry-run").out
    assert note in ckpt(bob, "restore", "origin:t/1").out
    (bob / "data/f.txt").write_text("bob's\n")
    plan = ckpt(bob, "restore", "origin:t/1", "--dry-run", "--json").json()["result"]["plan"]
    assert (plan["delete"], plan["overlay_write"]) == ([], ["data/f.txt"])
    ckpt(bob, "restore", "origin:t/1")
    assert (bob / "data/f.txt").read_text() == "data\n"
    ckpt(bob, "undo")
    assert (bob / "data/f.txt").read_text() == "bob's\n"
    (bob / ".gitignore").write_text("fixtures/\ndata/\n")  # ignored here too: no note, and the restore is exact
    git(bob, "add", ".gitignore")
    git(bob, "commit", "-qm", "ignore fixtures")
    res = ckpt(bob, "restore", "origin:t/1")
    assert "not ignored here" not in res.out


def test_log_verify_of_a_fetched_task_after_verifying_it_here(tmp_path):
    """`verify origin:T/1 --isolated` (as the README suggests) writes its verify event to the
    current task's ledger; `log --verify --task origin:T` then reported the result line as one
    whose event was dropped (exit 1, a false tamper alarm)."""
    _bare, alice, bob = _team(tmp_path)
    ckpt(alice, "task", "start", "T")
    (alice / "f").write_text("2\n")
    ckpt(alice, "save", "-m", "t1")
    ckpt(alice, "push")
    git(bob, "config", "ckpt.verifier.ok.command", "true")
    ckpt(bob, "fetch")
    ckpt(bob, "task", "start", "mine")
    assert ckpt(bob, "log", "--verify", "--task", "origin:T").out == "ledger of origin:T: intact (3 events)\n"
    ckpt(bob, "verify", "origin:T/1", "--isolated")
    assert ckpt(bob, "log", "--verify", "--task", "origin:T").out == "ledger of origin:T: intact (3 events)\n"


def test_no_push_refusal_warning_for_ones_own_task_after_a_drop(tmp_path):
    """After `drop T/1` of a pushed task, every `task start T` warned that pushing T would be
    refused (the remote holds T/1, this clone no longer does) while the push succeeded: a
    number dropped here is never given again, so no push sends it."""
    _bare, alice, _bob = _team(tmp_path)
    ckpt(alice, "task", "start", "T")
    for i in range(2):
        (alice / "f").write_text(f"{i}\n")
        ckpt(alice, "save", "-m", f"s{i}")
    ckpt(alice, "push")
    ckpt(alice, "fetch")
    ckpt(alice, "drop", "T/1")
    ckpt(alice, "task", "start", "other")
    res = ckpt(alice, "task", "start", "T")
    assert res.err == "" and res.out == "task T is now current (existing: 1 checkpoint(s))\n", res
    (alice / "f").write_text("4\n")
    ckpt(alice, "save", "-m", "c")
    assert ckpt(alice, "push").out.endswith("pushed 2 ref(s) to origin\n")
