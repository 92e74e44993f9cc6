"""git's own ``git stash`` state scenarios, ported (t3903-stash, t3904-stash-patch,
t3905-stash-include-untracked, t3906-stash-submodule, t3908-stash-in-worktree,
t7064-wtstatus-pv2).  Each states the scenario (the git test it comes from), then the same
round trip: save, mess everything up, restore, compare; undo, compare with the mess.

Compared: every file and symlink under the worktree (ignored ones too), the index (stages,
flags, ``diff --cached``), ``git status --porcelain=v2 --ignored -uall`` and HEAD.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import ckpt, git, index_state, init_repo, worktree_state


def state(root: Path):
    files = {p: v for p, v in worktree_state(root).items() if v[0] != "dir"}
    return (files, index_state(root), git(root, "ls-files", "-v", "-z"),
            git(root, "status", "--porcelain=v2", "--ignored", "-uall", "-z"),
            git(root, "rev-parse", "-q", "--verify", "HEAD", check=False))


def w(root: Path, rel: str, text: str | bytes) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(text if isinstance(text, bytes) else text.encode())


def base(root: Path) -> None:
    """t3903's setup: file, other-file, a committed subdirectory."""
    w(root, "file", "1\n")
    w(root, "other-file", "other\n")
    w(root, "dir/subfile", "sub\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "initial")


# --- t3903-stash.sh
def dirty_working_directory(r):  # "stash some dirty working directory"
    base(r); w(r, "file", "2\n"); git(r, "add", "file"); w(r, "file", "3\n")


def index_and_worktree_differ(r):  # "apply stashed changes (including index)"
    base(r); w(r, "other-file", "staged\n"); git(r, "add", "other-file"); w(r, "other-file", "unstaged\n"); w(r, "file", "2\n")


def added_file(r):  # "stash an added file"
    base(r); w(r, "file3", "new\n"); git(r, "add", "file3")


def intent_to_add(r):  # "stash --intent-to-add file"
    base(r); w(r, "file2", "new\n"); git(r, "add", "-N", "file2")


def rm_then_recreate(r):  # "stash rm then recreate"
    base(r); git(r, "rm", "-q", "file"); w(r, "file", "bar\n")


def rm_and_ignore(r):  # "stash rm and ignore"
    base(r); git(r, "rm", "-q", "file"); w(r, "file", "bar\n"); w(r, ".gitignore", "file\n")


def rm_and_ignore_staged(r):  # "stash rm and ignore (stage .gitignore)"
    rm_and_ignore(r); git(r, "add", ".gitignore")


def file_to_symlink(r):  # "stash file to symlink"
    base(r); os.unlink(r / "file"); os.symlink("file2", r / "file")


def file_to_symlink_full_stage(r):  # "stash file to symlink (full stage)"
    file_to_symlink(r); git(r, "add", "file")


def symlink_to_file(r):  # "stash symlink to file"
    base(r); os.symlink("file", r / "filelink"); git(r, "add", "filelink"); git(r, "commit", "-qm", "link")
    os.unlink(r / "filelink"); w(r, "filelink", "now a file\n")


def symlink_to_file_stage_rm(r):  # "stash symlink to file (stage rm)"
    symlink_to_file(r); git(r, "rm", "-q", "--cached", "filelink")


def staged_binary(r):  # "stash --staged with binary file"
    base(r); w(r, "file", b"\0\1\2binary\n"); git(r, "add", "file")


def head_named_file(r):  # "stash where working directory contains "HEAD" file"
    base(r); w(r, "HEAD", "foo\n"); git(r, "add", "HEAD"); w(r, "file", "changed\n")


def names_with_spaces(r):  # "handle stash specification with spaces"
    base(r); w(r, "with space", "a\n"); w(r, "dir/with space", "b\n"); git(r, "add", "with space")


# --- t3905-stash-include-untracked.sh
def untracked_files_and_dirs(r):  # "stash save --include-untracked some dirty working directory"
    base(r); w(r, "untracked/untracked", "untracked\n"); w(r, "untracked/sub/deep", "deep\n"); w(r, "file2", "2\n")


def untracked_respects_gitignore(r):  # "stash save --include-untracked respects .gitignore"
    base(r); w(r, ".gitignore", "ignored.d/\n*.o\n"); w(r, "ignored.d/untracked", "ig\n"); w(r, "a.o", "obj\n"); w(r, "b.c", "src\n")


def previously_ignored_file(r):  # "stash previously ignored file"
    untracked_respects_gitignore(r); git(r, "add", ".gitignore"); git(r, "commit", "-qm", "ign")
    w(r, ".gitignore", "ignored.d/\n")  # a.o is no longer ignored


def removed_files(r):  # "stash save --include-untracked removed files"
    base(r); os.unlink(r / "file"); os.unlink(r / "dir/subfile")


def sub_repository(r):  # "stash -u ignores sub-repository"
    base(r); (r / "sub").mkdir(); git(r / "sub", "init", "-q"); w(r, "sub/inner", "inner\n")


# --- t3904-stash-patch.sh ("none of this moved HEAD")
def head_and_index_mixed(r):
    base(r); w(r, "file", "wt\n"); w(r, "dir/subfile", "idx\n"); git(r, "add", "dir/subfile"); w(r, "dir/subfile", "idx+wt\n")


# --- t3906-stash-submodule.sh
def dirty_submodule(r):  # "stash push ... preserves dirty submodule worktree"
    base(r)
    sub = init_repo(r.parent / "subrepo")
    git(r, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sm")
    git(r, "commit", "-qm", "sm")
    w(r, "sm/README", "dirty inside the submodule\n"); w(r, "file", "super\n")


# --- t7064-wtstatus-pv2.sh
def unborn_things_added(r):  # "before initial commit, things added"
    w(r, "file0", "0\n"); w(r, "file1", "1\n"); w(r, "dir1/file_untracked", "u\n"); git(r, "add", "file0", "file1")


def staged_rename(r):  # "rename causes 2 path lines"
    base(r); git(r, "mv", "file", "renamed"); w(r, "other-file", "edit\n")


def ignored_files_printed(r):  # "ignored files are printed with --ignored"
    base(r); w(r, ".gitignore", "*.ign\nignored_dir/\n"); git(r, "add", ".gitignore"); git(r, "commit", "-qm", "ig")
    w(r, "x.ign", "x\n"); w(r, "ignored_dir/y", "y\n"); w(r, "untracked", "u\n")


def add_add_conflict(r):  # "verify AA (add-add) conflict"
    base(r)
    git(r, "switch", "-q", "-c", "aa")
    w(r, "conflict.txt", "on aa\n"); git(r, "add", "conflict.txt"); git(r, "commit", "-qm", "aa")
    git(r, "switch", "-q", "main")
    w(r, "conflict.txt", "on main\n"); git(r, "add", "conflict.txt"); git(r, "commit", "-qm", "main")
    git(r, "merge", "aa", check=False)


def edit_edit_conflict(r):  # "verify UU (edit-edit) conflict"
    base(r)
    git(r, "switch", "-q", "-c", "uu")
    w(r, "file", "on uu\n"); git(r, "commit", "-qam", "uu")
    git(r, "switch", "-q", "main")
    w(r, "file", "on main\n"); git(r, "commit", "-qam", "main")
    git(r, "merge", "uu", check=False)


SCENARIOS = [
    dirty_working_directory, index_and_worktree_differ, added_file, intent_to_add, rm_then_recreate,
    rm_and_ignore, rm_and_ignore_staged, file_to_symlink, file_to_symlink_full_stage, symlink_to_file,
    symlink_to_file_stage_rm, staged_binary, head_named_file, names_with_spaces, untracked_files_and_dirs,
    untracked_respects_gitignore, previously_ignored_file, removed_files, sub_repository, head_and_index_mixed,
    dirty_submodule, unborn_things_added, staged_rename, ignored_files_printed, add_add_conflict, edit_edit_conflict,
]


def mess(r: Path) -> None:
    """Undo every kind of state the scenarios set up: no merge, empty index, edited, removed and
    new files (ignored ones are left: nobody's checkpoint holds them)."""
    if (r / ".git/MERGE_HEAD").exists():
        git(r, "merge", "--abort")
    ignored = set(git(r, "ls-files", "-z", "-o", "-i", "--exclude-standard").split(b"\0"))
    for p, v in worktree_state(r).items():
        if v[0] == "file" and p not in ignored and not p.startswith((b"sm/", b"sub/")) and p != b".git":
            (r / os.fsdecode(p)).write_bytes(b"messed\n")
    w(r, "mess-new", "new\n")
    git(r, "rm", "-r", "-q", "-f", "--cached", "--ignore-unmatch", "--", "file", "other-file")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_stash_scenario_round_trip(tmp_path, scenario):
    r = init_repo(tmp_path / "repo", commit=False)
    scenario(r)
    before = state(r)
    ckpt(r, "save", "--allow-empty")
    mess(r)
    messed = state(r)
    where = r / "dir" if (r / "dir").is_dir() else r  # t3903 "unstashing in a subdirectory"
    ckpt(where, "restore", "1")
    assert state(r) == before
    ckpt(where, "undo")
    assert state(r) == messed


def test_t3908_apply_in_a_subdirectory_of_a_linked_worktree(tmp_path):
    """t3908-stash-in-worktree: "apply in subdirectory"."""
    r = init_repo(tmp_path / "repo")
    base(r)
    git(r, "worktree", "add", "-q", str(tmp_path / "wt"))
    wt = tmp_path / "wt"
    w(wt, "dir/subfile", "changed in the worktree\n")
    w(wt, "dir/new", "new\n")
    before = state(wt)
    ckpt(wt / "dir", "save")
    mess(wt)
    ckpt(wt / "dir", "restore", "1")
    assert state(wt) == before
    assert state(r)[0] == {p: v for p, v in worktree_state(r).items() if v[0] != "dir"}  # the main worktree untouched
