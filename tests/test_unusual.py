"""Unusual repositories: merge conflicts, linked worktrees, sparse checkout, submodules, external
filters (Git LFS when installed, a rot13 clean/smudge driver always), autocrlf and eol rules, a
split index and index v4, SHA-256 object ids."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import ckpt, git, index_state, init_repo, worktree_state


def state(root):
    return worktree_state(root), index_state(root)


def mess_up(root):
    """Change, delete and add files, and stage something, so a restore has work to do."""
    for p in sorted(root.iterdir()):
        if p.name in (".git", ".gitmodules") or p.is_dir() or p.is_symlink():
            continue
        p.write_bytes(b"messed\n")
    (root / "residue.txt").write_text("residue\n")
    git(root, "add", "residue.txt")


# ------------------------------------------------------------------------------------ merge

@pytest.fixture
def conflicted(repo):
    (repo / "f.txt").write_text("base\n")
    git(repo, "add", "f.txt")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "f.txt").write_text("other side\n")
    git(repo, "commit", "-q", "-am", "other")
    git(repo, "checkout", "-q", "main")
    (repo / "f.txt").write_text("main side\n")
    git(repo, "commit", "-q", "-am", "main")
    proc = git(repo, "merge", "other", check=False)
    assert (repo / ".git" / "MERGE_HEAD").exists(), proc
    return repo


def test_save_during_merge_keeps_conflict_stages_and_merge_head(conflicted):
    repo = conflicted
    before = state(repo)
    merge_head = (repo / ".git" / "MERGE_HEAD").read_bytes()
    res = ckpt(repo, "save", "-m", "mid-merge")
    assert res.out == "checkpoint saved: default/1\n"
    assert state(repo) == before  # the conflict is left exactly as it was
    assert (repo / ".git" / "MERGE_HEAD").read_bytes() == merge_head
    man = json.loads(git(repo, "cat-file", "blob", "refs/ckpt/default/1^3:manifest.json"))
    assert man["conflicts"] == ["f.txt"]
    stages = git(repo, "ls-tree", "-r", "--name-only", "refs/ckpt/default/1^3", "stages").decode().split()
    assert stages == ["stages/1/f.txt", "stages/2/f.txt", "stages/3/f.txt"]
    ckpt(repo, "check", "1")


def test_restore_refuses_during_a_merge(conflicted):
    """Documented: restore refuses (exit 5) while a merge is in progress, changing nothing."""
    repo = conflicted
    ckpt(repo, "save", "-m", "mid-merge")
    before = state(repo)
    res = ckpt(repo, "restore", "1", rc=5)
    assert res.err.splitlines()[0] == "error: a merge is in progress; restore would leave it half-done (a checkpoint keeps MERGE_HEAD and MERGE_MSG, not the rest of git's merge state: MERGE_MODE, AUTO_MERGE, an autostash, rerere's records)"
    assert res.err.splitlines()[1].startswith("hint: finish it or abort it first")
    assert state(repo) == before
    assert (repo / ".git" / "MERGE_HEAD").exists()
    ckpt(repo, "undo", rc=2)  # nothing restored, nothing to undo: a usage error


def test_conflict_stages_come_back_after_the_merge_is_aborted(conflicted):
    repo = conflicted
    unmerged = git(repo, "ls-files", "-u", "-z")
    worktree = worktree_state(repo)
    ckpt(repo, "save", "-m", "mid-merge")
    git(repo, "merge", "--abort")
    assert git(repo, "ls-files", "-u") == b""
    ckpt(repo, "restore", "1")
    assert git(repo, "ls-files", "-u", "-z") == unmerged
    assert worktree_state(repo) == worktree
    # MERGE_HEAD comes back too (HEAD is the checkpoint's base), so git commit records the merge
    assert (repo / ".git" / "MERGE_HEAD").exists()


# ------------------------------------------------------------------------------------ worktrees

def test_linked_worktrees_have_their_own_task_and_share_checkpoints(repo):
    wt = repo.parent / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(wt))
    ckpt(repo, "task", "start", "main-task")
    ckpt(wt, "task", "start", "side-task")
    (repo / "m.txt").write_text("main\n")
    (wt / "s.txt").write_text("side\n")
    assert ckpt(repo, "save").out == "checkpoint saved: main-task/1\n"
    assert ckpt(wt, "save").out == "checkpoint saved: side-task/1\n"
    assert json.loads(ckpt(repo, "status", "--json").out)["result"]["task"] == "main-task"
    assert json.loads(ckpt(wt, "status", "--json").out)["result"]["task"] == "side-task"
    # shared: each sees the other's checkpoints
    assert "side-task/1" in ckpt(repo, "list", "--task", "side-task").out
    assert "main-task/1" in ckpt(wt, "list", "--task", "main-task").out
    # a restore in one worktree never touches the other
    main_before = state(repo)
    side = state(wt)
    (wt / "s.txt").write_text("changed\n")
    ckpt(wt, "restore", "side-task/1")
    assert state(wt) == side
    assert state(repo) == main_before
    ckpt(wt, "restore", "main-task/1")  # another worktree's checkpoint, restored here
    assert (wt / "m.txt").read_text() == "main\n" and not (wt / "s.txt").exists()
    assert state(repo) == main_before
    ckpt(wt, "undo")
    assert (wt / "s.txt").read_text() == "side\n"


# ------------------------------------------------------------------------------------ sparse

def test_sparse_checkout_never_writes_outside_the_cone(repo):
    for d in ("in", "out"):
        (repo / d).mkdir()
        (repo / d / "f.txt").write_text(f"{d}\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "two dirs")
    git(repo, "sparse-checkout", "set", "--cone", "in")
    assert not (repo / "out").exists()
    (repo / "in" / "f.txt").write_text("in, edited\n")
    ckpt(repo, "save", "-m", "sparse")
    saved = state(repo)
    (repo / "in" / "f.txt").write_text("messed\n")
    (repo / "in" / "new.txt").write_text("new\n")
    ckpt(repo, "restore", "1")
    assert state(repo) == saved
    assert not (repo / "out").exists()
    assert b"S out/f.txt" in git(repo, "ls-files", "-t")
    ckpt(repo, "undo")
    assert not (repo / "out").exists()
    ckpt(repo, "check", "1")


# ------------------------------------------------------------------------------------ submodules

def test_submodule_is_saved_as_a_gitlink_and_never_descended(tmp_path):
    sub = init_repo(tmp_path / "sub")
    root = init_repo(tmp_path / "super")
    git(root, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(sub), "sub")
    git(root, "commit", "-q", "-m", "add sub")
    inner = root / "sub"
    # a new commit and a dirty file inside the submodule
    (inner / "README").write_text("committed inside\n")
    git(inner, "commit", "-q", "-am", "inside")
    moved_to = git(inner, "rev-parse", "HEAD").decode().strip()
    (inner / "dirty.txt").write_text("dirty inside\n")
    (root / "top.txt").write_text("top\n")
    ckpt(root, "save", "-m", "with sub")
    entries = git(root, "ls-tree", "-r", "refs/ckpt/default/1").decode()
    assert f"160000 commit {moved_to}\tsub" in entries
    assert "dirty.txt" not in entries and "sub/README" not in entries
    inside = worktree_state(inner)
    (inner / "dirty.txt").write_text("changed again inside\n")
    inside_now = worktree_state(inner)
    (root / "top.txt").write_text("messed\n")
    ckpt(root, "restore", "1")
    assert (root / "top.txt").read_text() == "top\n"
    assert worktree_state(inner) == inside_now != inside  # never descended into
    ckpt(root, "check", "1")


# ------------------------------------------------------------------------------------ filters

def test_git_lfs_pointers_stay_pointers(repo):
    if shutil.which("git-lfs") is None:
        pytest.skip("git-lfs is not installed here; the rot13 driver below exercises the same external-filter path")
    git(repo, "lfs", "install", "--local")
    git(repo, "lfs", "track", "*.bin")
    # git-lfs writes .gitattributes as 0640; like git, a checkpoint keeps only the executable bit
    (repo / ".gitattributes").chmod(0o644)
    (repo / "big.bin").write_bytes(bytes(range(256)) * 40)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "lfs")
    (repo / "big.bin").write_bytes(b"\x00changed" * 500)
    saved = state(repo)
    ckpt(repo, "save")
    blob = git(repo, "cat-file", "blob", "refs/ckpt/default/1:big.bin")
    assert blob.startswith(b"version https://git-lfs.github.com/spec/v1")
    mess_up(repo)
    ckpt(repo, "restore", "1")
    assert state(repo) == saved


ROT13 = "tr A-Za-z N-ZA-Mn-za-m"


def test_external_clean_smudge_filter_round_trips(repo):
    git(repo, "config", "filter.rot13.clean", ROT13)
    git(repo, "config", "filter.rot13.smudge", ROT13)
    git(repo, "config", "filter.rot13.required", "true")
    (repo / ".gitattributes").write_text("*.r13 filter=rot13\n")
    (repo / "secret.r13").write_text("Hello Filter\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "filtered")
    (repo / "secret.r13").write_text("Changed Text\n")
    (repo / "untracked.r13").write_text("Also Untracked\n")
    saved = state(repo)
    ckpt(repo, "save")
    # the checkpoint stores content as git add would: cleaned
    assert git(repo, "cat-file", "blob", "refs/ckpt/default/1:secret.r13") == b"Punatrq Grkg\n"
    assert git(repo, "cat-file", "blob", "refs/ckpt/default/1:untracked.r13") == b"Nyfb Hagenpxrq\n"
    mess_up(repo)
    (repo / "untracked.r13").unlink()
    ckpt(repo, "restore", "1")
    assert state(repo) == saved  # the worktree bytes come back through the smudge side
    ckpt(repo, "check", "1")


# ------------------------------------------------------------------------------------ eol

def test_autocrlf_and_eol_attributes_round_trip_byte_for_byte(repo):
    git(repo, "config", "core.autocrlf", "true")
    (repo / ".gitattributes").write_text("*.bat eol=crlf\n*.sh eol=lf\n*.dat binary\n")
    files = {
        "crlf.txt": b"one\r\ntwo\r\n",
        "lf.txt": b"one\ntwo\n",
        "mixed.txt": b"one\r\ntwo\nthree\r\n",
        "run.bat": b"@echo off\r\necho hi\n",
        "run.sh": b"#!/bin/sh\r\necho hi\r\n",
        "blob.dat": b"\r\n\x00\n\r",
    }
    for name, data in files.items():
        (repo / name).write_bytes(data)
    git(repo, "add", ".gitattributes", "crlf.txt", "lf.txt")
    saved = state(repo)
    ckpt(repo, "save")
    mess_up(repo)
    ckpt(repo, "restore", "1")
    assert state(repo) == saved
    for name, data in files.items():
        assert (repo / name).read_bytes() == data, name
    ckpt(repo, "check", "1")


# ------------------------------------------------------------------------------------ index formats

@pytest.mark.parametrize("fmt", ["split", "v4"])
def test_split_index_and_index_v4(repo, fmt):
    for i in range(5):
        (repo / f"f{i}.txt").write_text(f"{i}\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "files")
    if fmt == "split":
        git(repo, "update-index", "--split-index")
        assert list((repo / ".git").glob("sharedindex.*"))
    else:
        git(repo, "update-index", "--index-version", "4")
    (repo / "f1.txt").write_text("staged\n")
    git(repo, "add", "f1.txt")
    (repo / "f2.txt").write_text("unstaged\n")
    (repo / "new.txt").write_text("untracked\n")
    saved = state(repo)
    ckpt(repo, "save")
    mess_up(repo)
    ckpt(repo, "restore", "1")
    assert state(repo) == saved
    if fmt == "split":
        assert list((repo / ".git").glob("sharedindex.*"))
    ckpt(repo, "undo")
    ckpt(repo, "check", "--all")


# ------------------------------------------------------------------------------------ sha256

def test_sha256_repository_works_or_is_refused_clearly(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main", "--object-format=sha256")
    (root / "a.txt").write_text("one\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    (root / "a.txt").write_text("two\n")
    res = ckpt(root, "save", rc=None)
    if res.rc == 0:
        saved = state(root)
        mess_up(root)
        ckpt(root, "restore", "1")
        assert state(root) == saved
    else:
        assert res.rc == 3, res
        lines = res.err.splitlines()
        assert lines[0].startswith("error: this repository uses SHA-256 object ids, which libgit2"), res
        assert len(lines) == 2 and lines[1].startswith("hint: "), res
        assert git(root, "for-each-ref", "refs/ckpt") == b"" and (root / "a.txt").read_text() == "two\n"
