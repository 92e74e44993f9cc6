"""What the sixteenth new-user walkthrough of the README met, each as its kind: status and diff
judging a checkpoint's overlay by today's policy while restore judged it by the checkpoint's; an
attempt that changed nothing "restoring" onto itself; a shared and a local agent settings file
both hooked without a word, and a directory left behind by their uninstall.

Real repositories and the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import pytest

from conftest import ckpt, git


@pytest.mark.parametrize("policy_now", ["fixtures only", "none"])
def test_status_diff_and_restore_agree_on_an_overlay_saved_under_another_policy(repo, policy_now):
    (repo / ".gitignore").write_text("build/\nfixtures/\n")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["fixtures/"]\n' if policy_now == "fixtures only" else "")
    git(repo, "add", ".gitignore", ".ckpt.toml")
    git(repo, "commit", "-qm", "cfg")
    (repo / "build").mkdir()
    (repo / "build/out.o").write_text("o3\n")
    git(repo, "-c", "ckpt.overlay.include=build/", "ckpt", "save", "-m", "b3")
    assert "worktree:  matches default/1 (@)\n" in ckpt(repo, "status").out
    assert ckpt(repo, "diff", "--json").json()["result"]["overlay"] == []
    assert "nothing to change" in ckpt(repo, "restore", "@", "--dry-run").out
    # a real difference is still one, in all three
    (repo / "build/out.o").write_text("changed\n")
    assert "worktree:  changed since default/1 (@)\n" in ckpt(repo, "status").out
    assert ckpt(repo, "diff", "--json").json()["result"]["overlay"] == [{"status": "D", "path": "build/out.o"}]
    assert ckpt(repo, "restore", "@", "--dry-run", rc=1).err.startswith("error: restoring default/1 would overwrite")


def test_an_attempt_that_changes_nothing_on_a_failing_state_restores_nothing(repo):
    git(repo, "config", "ckpt.verifier.t.command", "false")
    (repo / "a.txt").write_text("a\n")
    res = ckpt(repo, "attempt", "-m", "x", "--", "true", rc=1)
    assert res.out.splitlines()[-3:] == [
        "true changed nothing: default/1 failed as it was before the command; nothing to restore",
        "workspace status: clean",
        "next: fix it and run git ckpt verify, or go back to an earlier checkpoint (git ckpt list)"], res.out
    assert "restoring" not in res.out and "diff default/1 default/1" not in res.out
    assert [r["id"] for r in ckpt(repo, "list", "--json").json()["result"]] == ["default/1"]


def test_hooks_in_the_shared_and_the_local_settings_file_are_named_and_both_go(repo):
    ckpt(repo, "agent", "install", "claude-code")
    res = ckpt(repo, "agent", "install", "claude-code", "--local")
    assert res.out.endswith(
        "note: claude-code hooks are installed in .claude/settings.json too, and claude-code reads both files: every hook "
        "runs twice (git ckpt agent uninstall claude-code --shared removes the other)\n"), res.out
    ckpt(repo, "agent", "uninstall", "claude-code", "--shared")
    assert not (repo / ".claude/settings.json").exists() and (repo / ".claude/settings.local.json").exists()
    ckpt(repo, "agent", "install", "claude-code")
    ckpt(repo, "agent", "uninstall", "claude-code")
    assert not (repo / ".claude").exists()
