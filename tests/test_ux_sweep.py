"""What a new user following the README met (round 4): the README and help say what the
commands do, one wording for the same kind of message, completion in a fresh fish, idempotent
uninstall, notes first.  Real repositories, the real ``git ckpt``."""

from __future__ import annotations

from pathlib import Path

from conftest import ckpt, git

ROOT = Path(__file__).parents[1]


def test_restore_removes_extra_overlay_files_as_the_readme_says(repo):
    """README "Overlay paths are restored exactly as saved": an ignored file inside an overlay
    path that the checkpoint lacks is deleted (the plan says so), a likely-secret one (no overlay
    holds it) stays, and undo brings the deleted one back from the pre-restore save."""
    (repo / ".gitignore").write_text("tmp/\n")
    git(repo, "config", "ckpt.overlay.include", "tmp/")
    (repo / "tmp").mkdir()
    (repo / "tmp/keep.txt").write_text("x\n")
    ckpt(repo, "save", "-m", "one")
    (repo / "tmp/f.txt").write_text("extra\n")
    (repo / "tmp/.env").write_text("K=1\n")
    plan = ckpt(repo, "restore", "default/1", "--dry-run")
    assert plan.out == "would restore default/1:\ndelete  tmp/f.txt (overlay)\nleave   2 other file(s)\n", plan
    res = ckpt(repo, "restore", "default/1")
    assert res.out == "saved current state as default/2 (pre-restore)\nrestored default/1\n", res
    assert sorted(p.name for p in (repo / "tmp").iterdir()) == [".env", "keep.txt"]
    ckpt(repo, "undo")
    assert (repo / "tmp/f.txt").read_text() == "extra\n"
    readme = (ROOT / "README.md").read_text()
    assert "**Overlay paths are restored exactly as saved.**" in readme
    assert "**Other ignored files are never deleted**" in readme
