"""What the attack pass on the seventeenth walkthrough's changes found, each as its kind:
overlay patterns whose wildcards, spread over components, still backtracked without bound, and
bracket expressions pathspec reads otherwise than git; a fetched manifest's merge_heads that
changed git's state while the restore said nothing changed (and undo refused); a core.hooksPath
through a symlink and ".." that put the hooks where git does not look; init replacing a dangling
.ckpt.toml symlink.

Real repositories, clones of a real bare repository, crafted manifests, the real ``git ckpt``
entry point (a subprocess timeout is only a safety net against a hang).
"""

from __future__ import annotations

import os
import subprocess

import pytest

from git_ckpt.model import escape
from conftest import ckpt, git
from test_attack17 import _craft, _renumber
from test_remote import _team

HANG = 120


def _run(cwd, *args):
    proc = subprocess.run(["git", "ckpt", *args], cwd=cwd, capture_output=True, timeout=HANG)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.mark.parametrize("pattern,problem", [
    ("*a*/" * 12 + "zz", "has more than 3 wildcards"),
    ("*?*/" * 12 + "zz", "has more than 2 wildcards in one path component"),
    ("a[!x]b", "has a negated, range or [:class:] bracket expression (read otherwise than git reads it)"),
    ("a[^x]b", "has a negated, range or [:class:] bracket expression (read otherwise than git reads it)"),
    ("a[.-0]b", "has a negated, range or [:class:] bracket expression (read otherwise than git reads it)"),
    ("a[[:alpha:]]b", "has a negated, range or [:class:] bracket expression (read otherwise than git reads it)"),
    ("a[z-a]b", "has a negated, range or [:class:] bracket expression (read otherwise than git reads it)"),
])
def test_an_overlay_pattern_git_and_pathspec_read_apart_or_slowly_is_refused(repo, pattern, problem):
    (repo / ".ckpt.toml").write_text(f'[overlay]\ninclude = ["{pattern}"]\n')
    deep = repo.joinpath(*["aaaaaaaa"] * 12)
    deep.mkdir(parents=True)
    (deep / "x").write_text("x\n")
    rc, out, err = _run(repo, "save", "-m", "x")
    assert rc == 6 and err.startswith(f"error: .ckpt.toml: overlay.include pattern '{escape(pattern)}' {problem}\n"), err
    # a restore and an undo still go back (the .ckpt.toml is left out, and said)
    (repo / ".ckpt.toml").unlink()
    ckpt(repo, "save", "-m", "good")
    (repo / ".ckpt.toml").write_text(f'[overlay]\ninclude = ["{pattern}"]\n')
    rc, out, err = _run(repo, "restore", "default/1")
    assert rc == 0 and "going on without it" in err, err


def test_a_fetched_merge_head_is_a_change_a_restore_names_and_undo_takes_back(tmp_path):
    _bare, alice, bob = _team(tmp_path)
    git(alice, "checkout", "-qb", "side")
    (alice / "side.txt").write_text("side\n")
    git(alice, "add", "side.txt")
    git(alice, "commit", "-qm", "side")
    side = git(alice, "rev-parse", "HEAD").decode().strip()
    git(alice, "push", "-q", "origin", "side")
    git(alice, "checkout", "-q", "main")
    ckpt(alice, "task", "start", "t")
    ckpt(alice, "save", "--allow-empty", "-m", "clean")

    def forge(m):
        _renumber(2)(m)
        m["merge_heads"] = [side]
    _craft(alice, "refs/ckpt/t/1", "refs/ckpt/t/2", forge)
    git(alice, "push", "-q", "origin", "refs/ckpt/t/1:refs/ckpt/t/1", "refs/ckpt/t/2:refs/ckpt/t/2")
    git(bob, "fetch", "-q", "origin", "side")
    ckpt(bob, "task", "start", "mine")
    ckpt(bob, "fetch")
    plan = ckpt(bob, "restore", "origin:t/2", "--dry-run", fsck=False).out
    assert f"merge   MERGE_HEAD set to {side[:12]} (the merge in progress when it was saved)\n" in plan, plan
    res = ckpt(bob, "restore", "origin:t/2", fsck=False)
    assert "nothing to restore" not in res.out and (bob / ".git/MERGE_HEAD").read_text() == side + "\n"
    ckpt(bob, "undo", fsck=False)
    assert not (bob / ".git/MERGE_HEAD").exists()


def test_a_hooks_path_through_a_symlink_and_dotdot_is_where_git_looks(repo, tmp_path):
    deep = tmp_path / "out" / "deep"
    deep.mkdir(parents=True)
    os.symlink(deep, repo / "lnk")
    git(repo, "config", "core.hooksPath", "lnk/../hk")
    ckpt(repo, "hooks", "install")
    assert (tmp_path / "out/hk/pre-commit").is_file()  # where the kernel, and git, resolve lnk/..
    (repo / "f.txt").write_text("x\n")
    git(repo, "add", "f.txt")
    res = subprocess.run(["git", "commit", "-qm", "unverified"], cwd=repo, capture_output=True)
    assert res.returncode != 0 and b"refused" in res.stderr, res


def test_init_never_replaces_a_dangling_symlink_without_force(repo):
    os.symlink("../shared/team-ckpt.toml", repo / ".ckpt.toml")
    res = ckpt(repo, "init", rc=2)
    assert res.err.startswith("error: .ckpt.toml already exists\n")
    assert os.readlink(repo / ".ckpt.toml") == "../shared/team-ckpt.toml"
