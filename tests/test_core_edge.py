"""Edge cases of save/restore found by trying to break them: each asserts the exact outcome."""

from __future__ import annotations

import os
import subprocess

from conftest import blob, ckpt, forge_checkpoint, git, init_repo, literal_tree, worktree_state


def test_file_over_directory_with_ignored_content_is_refused(repo):
    (repo / ".gitignore").write_text("build/*.o\n")
    (repo / "build").write_text("a file\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "build is a file")
    ckpt(repo, "save", "--allow-empty")
    git(repo, "rm", "-q", "build")
    (repo / "build").mkdir()
    (repo / "build/out.o").write_bytes(b"precious artefact")
    before = worktree_state(repo)
    res = ckpt(repo, "restore", "1", rc=1)
    assert "build/out.o" in res.err and res.err.startswith("error: restoring default/1 would overwrite")
    assert worktree_state(repo) == before
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/ckpt/default/[0-9]*") == b"refs/ckpt/default/1\n"


def test_file_over_nested_repository_is_refused(repo):
    (repo / "sub").write_text("file\n")
    ckpt(repo, "save")
    os.remove(repo / "sub")
    nested = init_repo(repo / "sub")
    (nested / "wip.txt").write_text("uncommitted work in a nested repo\n")
    before = worktree_state(repo)
    res = ckpt(repo, "restore", "1", rc=1)
    assert "sub/" in res.err
    assert worktree_state(repo) == before


def test_directory_replaced_by_file_restores(repo):
    (repo / "conf").mkdir()
    (repo / "conf/a.ini").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "conf")
    ckpt(repo, "save", "--allow-empty")
    saved = worktree_state(repo)
    git(repo, "rm", "-q", "-r", "conf")
    (repo / "conf").write_text("now a file\n")
    mess = worktree_state(repo)
    plan = ckpt(repo, "restore", "1", "--dry-run", "--json").json()["result"]["plan"]
    assert plan["delete"] == ["conf"] and plan["write"] == ["conf/a.ini"]
    ckpt(repo, "restore", "1")
    assert worktree_state(repo) == saved
    ckpt(repo, "undo")
    assert worktree_state(repo) == mess


def test_overlay_file_skipped_for_size_is_never_overwritten(repo):
    (repo / ".gitignore").write_text("fx/\n")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["fx/"]\nmax_file_size = "1KiB"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "cfg")
    (repo / "fx").mkdir()
    (repo / "fx/data").write_text("small\n")
    ckpt(repo, "save")
    big = os.urandom(5000)
    (repo / "fx/data").write_bytes(big)
    res = ckpt(repo, "save")
    assert "skipped files over the size limit: fx/data" in res.err
    res = ckpt(repo, "restore", "1", rc=1)
    assert "fx/data" in res.err
    assert (repo / "fx/data").read_bytes() == big


def test_overlay_keeps_permission_bits(repo):
    (repo / ".gitignore").write_text("fx/\n")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["fx/"]\n')
    (repo / "fx").mkdir()
    (repo / "fx/key").write_text("fixture key\n")
    os.chmod(repo / "fx/key", 0o600)
    ckpt(repo, "save")
    os.remove(repo / "fx/key")
    ckpt(repo, "restore", "1")
    assert os.stat(repo / "fx/key").st_mode & 0o777 == 0o600


def test_crafted_raw_entry_cannot_escape(tmp_path):
    repo = init_repo(tmp_path / "r")
    (repo / "f").write_text("f\n")
    ckpt(repo, "save")
    # raw/ holding "../../escaped" (git mktree refuses such names; hash-object --literally does not)
    raw = literal_tree(repo, [(b"100644", b"../../escaped", blob(repo, b"pwned\n"))])
    forge_checkpoint(repo, dest="refs/ckpt/default/5", subtrees={"raw": raw})
    listing = sorted(os.listdir(tmp_path))
    res = ckpt(repo, "restore", "default/5", rc=7, fsck=False)
    assert "raw/ entry" in res.err or "contains '..'" in res.err
    assert sorted(os.listdir(tmp_path)) == listing
    assert not (tmp_path / "escaped").exists()


def test_autocrlf_round_trip_of_unchanged_files(repo):
    git(repo, "config", "core.autocrlf", "true")
    (repo / "lf.txt").write_bytes(b"one\ntwo\n")
    (repo / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (repo / "mixed.txt").write_bytes(b"one\r\ntwo\n")
    git(repo, "add", "-A", env={"GIT_CONFIG_PARAMETERS": "'core.safecrlf=false'"})
    git(repo, "commit", "-q", "-m", "eol")
    saved = worktree_state(repo)
    ckpt(repo, "save", "--allow-empty")
    for name in ("lf.txt", "crlf.txt", "mixed.txt"):
        (repo / name).write_text("mess\n")
    ckpt(repo, "restore", "1")
    assert worktree_state(repo) == saved


def test_eol_attribute_crlf_in_tracked_file(repo):
    (repo / ".gitattributes").write_text("*.py text eol=lf\n")
    (repo / "m.py").write_bytes(b"a = 1\nb = 2\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "py")
    (repo / "m.py").write_bytes(b"a = 1\r\nb = 2\r\n")
    saved = worktree_state(repo)
    assert ckpt(repo, "save").out == "checkpoint saved: default/1\n"
    git(repo, "checkout", "--", "m.py")
    assert (repo / "m.py").read_bytes() == b"a = 1\nb = 2\n"
    ckpt(repo, "restore", "1")
    assert worktree_state(repo) == saved


def test_undo_after_reset_head_returns_the_branch(repo):
    (repo / "f").write_text("1\n")
    git(repo, "add", "f")
    git(repo, "commit", "-q", "-m", "c1")
    ckpt(repo, "save", "--allow-empty")
    (repo / "f").write_text("2\n")
    git(repo, "commit", "-q", "-am", "c2")
    c2 = git(repo, "rev-parse", "HEAD")
    ckpt(repo, "restore", "1", "--reset-head")
    assert git(repo, "rev-parse", "HEAD") != c2
    ckpt(repo, "undo")
    assert git(repo, "rev-parse", "HEAD") == c2
    assert git(repo, "status", "--porcelain") == b""


def test_skip_worktree_bits_follow_the_checkpoint(repo):
    (repo / "a.py").write_text("a\n")
    git(repo, "add", "a.py")
    git(repo, "commit", "-q", "-m", "a")
    git(repo, "update-index", "--skip-worktree", "a.py")
    ckpt(repo, "save", "--allow-empty")
    git(repo, "update-index", "--no-skip-worktree", "a.py")
    ckpt(repo, "save")
    ckpt(repo, "restore", "1")
    assert git(repo, "ls-files", "-t", "a.py") == b"S a.py\n"
    ckpt(repo, "restore", "2")
    assert git(repo, "ls-files", "-t", "a.py") == b"H a.py\n"


def test_restore_path_that_matches_nothing(repo):
    (repo / "a").write_text("a\n")
    ckpt(repo, "save")
    res = ckpt(repo, "restore", "1", "--", "typo.py", rc=4)
    assert res.err.startswith("error: path 'typo.py' matches nothing in default/1 or in the worktree\n")
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/ckpt/default/[0-9]*") == b"refs/ckpt/default/1\n"


def test_git_work_tree_is_honoured(tmp_path):
    a = init_repo(tmp_path / "a")
    b = tmp_path / "b"
    b.mkdir()
    (b / "fb").write_text("B\n")
    env = {"GIT_DIR": str(a / ".git"), "GIT_WORK_TREE": str(b)}
    res = ckpt(b, "save", env=env, fsck=False)
    assert res.out == "checkpoint saved: default/1\n"
    assert git(a, "ls-tree", "-r", "--name-only", "refs/ckpt/default/1") == b"fb\n"


def test_closed_pipe_is_not_an_error(repo):
    for i in range(30):
        (repo / "f").write_text(f"{i}\n")
        ckpt(repo, "save", fsck=False)
    proc = subprocess.run("git ckpt log | head -1", shell=True, cwd=repo, capture_output=True, executable="/bin/bash")
    assert proc.stdout.startswith(b"#1 ")
    assert proc.stderr == b""


def test_nested_repository_without_commit_is_left_out_with_a_warning(repo):
    init_repo(repo / "empty-nested", commit=False)
    (repo / "empty-nested/x").write_text("x\n")
    (repo / "kept.txt").write_text("k\n")
    res = ckpt(repo, "save")
    assert res.out == "checkpoint saved: default/1\n"
    assert "left out nested repositories with no commit" in res.err and "empty-nested" in res.err
    assert git(repo, "ls-tree", "-r", "--name-only", "refs/ckpt/default/1") == b"README\nkept.txt\n"


def test_crafted_raw_through_a_symlink_is_refused_by_check_and_isolated_verify(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    repo = init_repo(tmp_path / "r")
    os.symlink(str(victim), repo / "lnk")
    ckpt(repo, "save")
    inner = literal_tree(repo, [(b"100644", b"pwned", blob(repo, b"PWNED\n"))])
    forge_checkpoint(repo, dest="refs/ckpt/default/7", subtrees={"raw": literal_tree(repo, [(b"40000", b"lnk", inner)])})
    for args, rc in ((["check", "default/7"], 1), (["restore", "default/7"], 7)):
        res = ckpt(repo, *args, rc=rc, fsck=False)
        assert "raw/ entry 'lnk/pwned' of default/7 is not a file of its tree" in (res.out + res.err)
    git(repo, "config", "ckpt.verifier.t.command", "true")
    res = ckpt(repo, "verify", "default/7", "--isolated", rc=7, fsck=False)
    assert "raw/ entry" in res.err
    assert os.listdir(victim) == []


def test_crafted_stages_are_refused_before_anything_changes(repo):
    (repo / "f").write_text("f\n")
    ckpt(repo, "save")
    inner = literal_tree(repo, [(b"100644", b"f", blob(repo, b"S\n"))])
    forge_checkpoint(repo, dest="refs/ckpt/default/7", subtrees={"stages": literal_tree(repo, [(b"40000", b"x", inner)])})
    (repo / "f").write_text("changed\n")
    before = worktree_state(repo)
    res = ckpt(repo, "restore", "default/7", rc=7, fsck=False)
    assert "stages/ entry 'x/f' of default/7 is malformed" in res.err
    assert worktree_state(repo) == before
    assert not (repo / ".git/ckpt/RESTORE").exists()


def test_assume_unchanged_edits_are_captured_and_never_lost(repo):
    (repo / "f").write_text("a\n")
    git(repo, "add", "f")
    git(repo, "commit", "-q", "-m", "a")
    ckpt(repo, "save", "--allow-empty")
    (repo / "f").write_text("b\n")
    git(repo, "commit", "-q", "-am", "b")
    git(repo, "update-index", "--assume-unchanged", "f")
    (repo / "f").write_text("PRECIOUS\n")
    ckpt(repo, "save")
    assert git(repo, "show", "refs/ckpt/default/2:f") == b"PRECIOUS\n"
    ckpt(repo, "restore", "1")
    assert (repo / "f").read_text() == "a\n"
    assert git(repo, "ls-files", "-v", "f") == b"H f\n"  # the flag follows the checkpoint (issue 12)
    ckpt(repo, "undo")
    assert (repo / "f").read_text() == "PRECIOUS\n"
    assert git(repo, "ls-files", "-v", "f") == b"h f\n"


def test_verify_after_restore_targets_the_restored_checkpoint(repo):
    (repo / "f").write_text("a\n")
    ckpt(repo, "save", "-m", "one")
    (repo / "f").write_text("b\n")
    ckpt(repo, "restore", "@")
    res = ckpt(repo, "verify")
    assert res.out == "no verifiers configured: promoting on the empty requirement\npromoted default/1\n"
    st = ckpt(repo, "status", "--json").json()["result"]
    assert (st["latest"], st["promoted"], st["matches"], st["matches_latest"]) == ("default/2", "default/1", "default/1", False)


def test_continue_saves_work_done_after_the_interruption(repo):
    (repo / "a").write_text("a\n")
    (repo / "b").write_text("b\n")
    ckpt(repo, "save", "-m", "one")
    (repo / "a").write_text("a2\n")
    ckpt(repo, "restore", "1", rc=None, env={"GIT_CKPT_FAULT": "restore.after-delete"})
    (repo / "a").write_text("IMPORTANT NEW WORK\n")
    (repo / "newwork").write_text("work\n")
    ckpt(repo, "restore", "--continue")
    assert (repo / "a").read_text() == "a\n" and not (repo / "newwork").exists()
    saved = [r["id"] for r in ckpt(repo, "list", "--json").json()["result"]]
    kept = saved[-1]
    assert git(repo, "show", f"refs/ckpt/{kept}:a") == b"IMPORTANT NEW WORK\n"
    assert git(repo, "show", f"refs/ckpt/{kept}:newwork") == b"work\n"


def test_intent_to_add_entry_without_its_file(repo):
    (repo / "x").write_text("x\n")
    git(repo, "add", "-N", "x")
    os.remove(repo / "x")
    ckpt(repo, "save", "-m", "one")
    (repo / "a").write_text("c\n")
    git(repo, "add", "a")
    ckpt(repo, "restore", "1")
    assert not (repo / "x").exists()
    assert git(repo, "ls-files", "-s", "x") == b"100644 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0\tx\n"
    assert not (repo / ".git/ckpt/RESTORE").exists()


def test_staged_empty_file_is_not_left_intent_to_add(repo):
    (repo / "E").write_bytes(b"")
    git(repo, "add", "E")
    ckpt(repo, "save", "-m", "one")
    git(repo, "rm", "-q", "--cached", "E")
    git(repo, "add", "-N", "E")
    ckpt(repo, "restore", "1")
    assert git(repo, "status", "--porcelain", "E") == b"A  E\n"


def test_file_replacing_a_directory_of_overlay_files(repo):
    (repo / ".gitignore").write_text("*.log\n")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["*.log"]\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "cfg")
    (repo / "d").write_text("file\n")
    ckpt(repo, "save", "-m", "one")
    saved = worktree_state(repo)
    os.remove(repo / "d")
    (repo / "d").mkdir()
    (repo / "d/y.log").write_text("fx\n")
    (repo / "d/u").write_text("u\n")
    ckpt(repo, "restore", "1")
    assert worktree_state(repo) == saved


def test_tracked_file_matching_an_overlay_pattern_is_not_in_the_overlay(repo):
    (repo / ".gitignore").write_text("*.log\n")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["*.log"]\n')
    (repo / "t.log").write_text("t\n")
    git(repo, "add", "-f", "t.log")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a")
    ckpt(repo, "save", "--allow-empty")
    assert ckpt(repo, "show", "--json").json()["result"]["overlay"] == []
    git(repo, "rm", "-q", "--cached", "t.log")
    (repo / "t.log").write_text("v2\n")
    ckpt(repo, "restore", "1")
    assert (repo / "t.log").read_text() == "t\n"
    assert git(repo, "ls-files", "t.log") == b"t.log\n"


def test_a_command_that_waits_for_a_lock_says_so(repo):
    """A save blocked by another process's worktree lock says it is waiting, then proceeds."""
    import fcntl

    (repo / "f").write_text("f\n")
    lock = repo / ".git/ckpt"
    lock.mkdir(exist_ok=True)
    fd = os.open(lock / "lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    proc = subprocess.Popen(["git", "ckpt", "save"], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # the handshake: the line saying it waits is the sign it is blocked on our lock
    waiting = proc.stderr.readline()
    assert waiting == b"warning: waiting: a git ckpt restore or undo is running in this worktree\n"
    assert proc.poll() is None and not (repo / ".git/refs/ckpt/default/1").exists()
    os.close(fd)  # releases the lock
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert out == b"checkpoint saved: default/1\n"
    assert err == b""  # told once
    res = ckpt(repo, "save", "--allow-empty", env={"GIT_CKPT_LOCK_TIMEOUT": "0"})  # free now: no wait
    assert res.err == ""
