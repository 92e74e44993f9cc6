"""``@`` and HEAD: one "already saved" rule (latest or @) for save, restore's pre-restore save,
undo and attempt; save's card options recorded even when nothing changed; status names @ and
says separately whether HEAD moved; a restore onto a moved HEAD says what its index means.

The real ``git ckpt`` entry point in real repositories.
"""

from __future__ import annotations

from conftest import ckpt, git


def _three(repo):
    ckpt(repo, "task", "start", "t")
    for i in (1, 2, 3):
        (repo / "f").write_text(f"{i}\n")
        ckpt(repo, "save", "-m", f"s{i}")


def _refs(repo):
    return git(repo, "for-each-ref", "--format=%(refname)", "refs/ckpt/t/").decode().split()


def test_nothing_saved_again_when_equal_to_at(repo):
    _three(repo)
    assert ckpt(repo, "restore", "t/1").out == "current state matches t/3; not saved again\nrestored t/1\n"
    # save, attempt, restore and undo all see that the state is @ (t/1), not only the latest
    assert ckpt(repo, "save").out == "no changes since t/1; nothing saved (use --allow-empty to save anyway)\n"
    res = ckpt(repo, "attempt", "-m", "try", "--", "true", rc=None)
    assert res.out.startswith("checkpoint: t/1 (no changes since it was saved)\n"), res
    assert "checkpoint: t/1 (true changed nothing)" in res.out
    git(repo, "checkout", "-q", "--", ".")
    ckpt(repo, "restore", "t/1")  # (attempt may have restored already)
    assert ckpt(repo, "restore", "t/2").out == "current state matches t/1; not saved again\nrestored t/2\n"
    assert ckpt(repo, "undo").out == "current state matches t/2; not saved again\nundo: restored t/1\n"
    assert ckpt(repo, "undo").out == "current state matches t/1; not saved again\nundo: restored t/2\n"
    assert _refs(repo) == ["refs/ckpt/t/1", "refs/ckpt/t/2", "refs/ckpt/t/3", "refs/ckpt/t/log", "refs/ckpt/t/promoted"]
    # a real change is saved as usual, and @ is the latest again
    (repo / "f").write_text("new\n")
    assert ckpt(repo, "save").out == "checkpoint saved: t/4\n"
    assert ckpt(repo, "save").out == "no changes since t/4; nothing saved (use --allow-empty to save anyway)\n"


def test_save_card_options_recorded_without_changes(repo):
    _three(repo)
    res = ckpt(repo, "save", "--next", "write the test", "--hypothesis", "it is the cache")
    assert res.out == ("no changes since t/3; nothing saved (use --allow-empty to save anyway)\n"
                       "task card of t updated (event #5)\n")
    card = ckpt(repo, "task", "show", "--json").json()["result"]
    assert (card["next"], card["hypothesis"]) == ("write the test", "it is the cache")
    assert ckpt(repo, "log").out.splitlines()[-1].endswith("next action: write the test; hypothesis: it is the cache")
    env = ckpt(repo, "save", "--next", "then ship", "--json").json()["result"]
    assert (env["created"], env["id"], env["card_event"]) == (False, "t/3", 6)
    assert ckpt(repo, "save").out == "no changes since t/3; nothing saved (use --allow-empty to save anyway)\n"
    assert _refs(repo) == ["refs/ckpt/t/1", "refs/ckpt/t/2", "refs/ckpt/t/3", "refs/ckpt/t/log"]


def test_status_names_at_and_head_moved(repo):
    _three(repo)
    old = git(repo, "rev-parse", "HEAD").decode().strip()
    assert "worktree:  matches t/3 (@)\n" in ckpt(repo, "status").out
    git(repo, "add", "f")
    git(repo, "commit", "-q", "-m", "commit t/3")  # what a gated commit does
    new = git(repo, "rev-parse", "HEAD").decode().strip()
    assert git(repo, "status", "--porcelain") == b"" and ckpt(repo, "diff").out == ""
    out = ckpt(repo, "status").out
    # the fifth walkthrough: "moved since t/3" right after a gated commit was true but alarming
    assert ("worktree:  matches t/3 (@)\n"
            f"HEAD:      {new[:12]} commits t/3 on its base {old[:12]}\n") in out
    wt = ckpt(repo, "status", "--json").json()["result"]["worktree"]
    assert wt == {"checkpoint": "t/3", "at": "t/3", "files_match": True, "head_moved": True, "head_commits": True,
                  "base": old, "head": new, "exact": False, "differs": ["HEAD"],
                  "reset_head": "git ckpt restore t/3 --reset-head"}
    # a commit of something else, or on another parent, is a move
    git(repo, "commit", "-q", "--allow-empty", "-m", "on top")
    newer = git(repo, "rev-parse", "HEAD").decode().strip()
    assert f"HEAD:      not where t/3 was saved (saved on {old[:12]}, HEAD is {newer[:12]})\n" in ckpt(repo, "status").out
    git(repo, "reset", "-q", "--soft", "HEAD~1")
    (repo / "f").write_text("3\n")  # unchanged bytes; now stage something beyond the commit
    (repo / "g").write_text("g\n")
    git(repo, "add", "g")
    # HEAD still commits t/3 (walkthrough 24: whatever the files and index did since); they differ
    wt = ckpt(repo, "status", "--json").json()["result"]["worktree"]
    assert (wt["head_commits"], wt["files_match"], wt["differs"]) == (True, False, ["files", "index", "HEAD"])
    git(repo, "rm", "-q", "--cached", "g")
    (repo / "g").unlink()
    ckpt(repo, "restore", "t/1")
    out = ckpt(repo, "status").out
    assert "latest:    t/4\n" in out and "worktree:  matches t/1 (@)\n" in out  # t/4: the pre-restore save
    assert f"HEAD:      not where t/1 was saved (saved on {old[:12]}, HEAD is {new[:12]})\n" in out
    (repo / "f").write_text("edited\n")
    out = ckpt(repo, "status").out
    assert "worktree:  changed since t/1 (@)\n" in out


def test_restore_onto_a_moved_head_says_what_the_index_means(repo):
    _three(repo)
    old = git(repo, "rev-parse", "HEAD").decode().strip()
    (repo / "g").write_text("pulled\n")
    git(repo, "add", "g")
    git(repo, "commit", "-q", "-m", "a pulled commit")
    new = git(repo, "rev-parse", "HEAD").decode().strip()
    note = (f"note: t/1 was saved on {old[:12]}; HEAD is {new[:12]} and stays: the restored index stages the difference "
            "(git status shows it as staged changes); git ckpt restore t/1 --reset-head moves HEAD to that commit too")
    assert ckpt(repo, "restore", "t/1", "--dry-run").out.splitlines()[0] == note
    plan = ckpt(repo, "restore", "t/1", "--dry-run", "--json").json()["result"]["plan"]
    assert plan["base_differs"] == {"saved_on": old, "note": note.removeprefix("note: ")}
    res = ckpt(repo, "restore", "t/1")
    assert res.out.splitlines()[0] == note and res.out.endswith("restored t/1\n")
    assert git(repo, "status", "--porcelain") == b"D  g\n?? f\n"  # exactly as the note says
    assert ckpt(repo, "restore", "t/1", "--json", "--dry-run").json()["result"]["plan"]["base_differs"]["saved_on"] == old
    # --reset-head: no note, HEAD moves back, nothing staged
    assert "note:" not in ckpt(repo, "restore", "t/1", "--reset-head", "--force", "--dry-run").out
    ckpt(repo, "restore", "t/1", "--reset-head")
    assert git(repo, "rev-parse", "HEAD").decode().strip() == old
    assert git(repo, "status", "--porcelain") == b"?? f\n"
