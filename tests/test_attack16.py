"""What the attack pass on the fifteenth walkthrough's changes found, each as its kind: overlay
patterns the user never chose (a fetched checkpoint's .ckpt.toml, a policy changed since)
deciding which ignored files a restore or undo deletes; temp files beside a target whose name
could be planted in advance; a quadratic step over a large ignored tree; invisible characters
the terminal escape missed.

Real repositories and clones of a real bare repository, the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import os

import pytest

from conftest import ckpt, git
from test_remote import _team

MINE = {".env": "SECRET=1\n", "node_modules/x/i.js": "js\n", "build/o": "obj\n", "a.log": "log\n"}


def _ignored_files(root):
    return {rel: (root / rel).read_text() for rel in MINE if (root / rel).exists()}


@pytest.mark.parametrize("bobs_toml", ["absent", "fine", "broken"])
def test_a_fetched_overlay_policy_never_deletes_the_users_ignored_files(tmp_path, bobs_toml):
    """Alice pushes a checkpoint whose .ckpt.toml includes "*" (every ignored file is overlay).
    Bob restores it, and undoes: his .env, node_modules/, build/ and logs are neither deleted by
    the restore (his .ckpt.toml unreadable: it went on with the target's) nor by the undo (the
    restored .ckpt.toml made them all overlay of the state undo left)."""
    _bare, alice, bob = _team(tmp_path)
    (alice / ".gitignore").write_text("fixtures/\n.env\nnode_modules/\nbuild/\n*.log\n")
    git(alice, "commit", "-qam", "ignore")
    git(alice, "push", "-q", "origin", "HEAD")
    git(bob, "pull", "-q")
    (alice / ".ckpt.toml").write_text('[overlay]\ninclude = ["*"]\nexclude = []\nallow_secrets = true\n')
    ckpt(alice, "task", "start", "t")
    (alice / "app.py").write_text("print(2)\n")
    ckpt(alice, "save", "-m", "evil")
    ckpt(alice, "push", "--allow-secrets")
    for rel, text in MINE.items():
        (bob / rel).parent.mkdir(parents=True, exist_ok=True)
        (bob / rel).write_text(text)
    if bobs_toml == "absent":
        (bob / ".ckpt.toml").unlink()
    elif bobs_toml == "broken":
        (bob / ".ckpt.toml").write_text("[overlay\n")
    ckpt(bob, "task", "start", "mine")
    ckpt(bob, "fetch")
    plan = ckpt(bob, "restore", "origin:t/1", "--dry-run").out
    assert "(overlay)" not in plan or "delete" not in plan, plan
    ckpt(bob, "restore", "origin:t/1")
    assert _ignored_files(bob) == MINE
    plan = ckpt(bob, "undo", "--dry-run").out
    assert not any(f"delete  {rel}" in plan for rel in MINE), plan
    ckpt(bob, "undo")
    assert _ignored_files(bob) == MINE


def test_an_overlay_file_outside_the_targets_recorded_policy_stays(repo):
    """t/1 named fx/a in its overlay, t/2 named nothing: restoring t/1 (fx/a already there) and
    undoing must leave fx/a, which t/2 never claimed."""
    (repo / ".gitignore").write_text("fx/\n")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = []\n')
    git(repo, "add", ".gitignore", ".ckpt.toml")
    git(repo, "commit", "-qm", "cfg")
    ckpt(repo, "task", "start", "t")
    (repo / "fx").mkdir()
    (repo / "fx/a").write_text("hello\n")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["fx/a"]\n')
    ckpt(repo, "save", "-m", "one")
    git(repo, "checkout", ".ckpt.toml")
    ckpt(repo, "save", "-m", "two")
    ckpt(repo, "restore", "t/1")
    plan = ckpt(repo, "undo", "--dry-run").out
    assert "fx/a" not in plan, plan
    ckpt(repo, "undo")
    assert (repo / "fx/a").read_text() == "hello\n"
    # within the target's policy an overlay file it lacks still goes (the exact round trip)
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["fx/"]\n')
    ckpt(repo, "save", "-m", "three")  # fx/a in its overlay
    (repo / "fx/a").unlink()
    ckpt(repo, "save", "-m", "four")  # the same policy, no fx/a
    (repo / "fx/a").write_text("hello\n")
    ckpt(repo, "save", "-m", "five")
    assert "delete  fx/a (overlay)" in ckpt(repo, "restore", "t/4", "--dry-run").out


def test_a_planted_temp_name_beside_a_file_is_never_followed(repo, tmp_path):
    """atomic_write used PATH.tmpPID, opened following symlinks: a restored checkpoint (or
    another user of a shared directory) could plant that name as a symlink for every pid and
    have the next write land outside the worktree."""
    from git_ckpt.store import atomic_write

    victim = tmp_path / "victim"
    victim.write_text("ORIGINAL\n")
    target = repo / "settings.json"
    for name in (f"settings.json.tmp{os.getpid()}", "settings.json.tmp"):
        (repo / name).symlink_to(victim)
    atomic_write(target, b"{}\n")
    assert victim.read_text() == "ORIGINAL\n" and target.read_bytes() == b"{}\n" and not target.is_symlink()
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old


def test_invisible_characters_of_every_kind_are_escaped(repo):
    (repo / "f.txt").write_text("1\n")
    ckpt(repo, "save", "-m", "ok\U000e0049\U000e0047 done\u00ad \u3164 \ufe0f \u180e é")
    out = ckpt(repo, "list").out
    assert "ok\\U000e0049\\U000e0047 done\\xad \\u3164 \\ufe0f \\u180e é" in out, out
