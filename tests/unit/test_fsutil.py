"""fsutil.rmtree: removes trees deeper than Python's recursion limit and longer than PATH_MAX
(the scratch copy `git ckpt check` makes of a checkpoint holding a file 4079 bytes below its root
sits below /tmp, past PATH_MAX: it was left behind), never following a symlink."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from git_ckpt import fsutil

NAME = "d" * 254


@pytest.fixture
def tmp_path(tmp_path):
    """pytest's ``tmp_path``, emptied with ``rm -rf`` afterwards whatever the test did: pytest's
    own later cleanup (``shutil.rmtree``) recurses once per level and fails on these trees."""
    yield tmp_path
    subprocess.run(["rm", "-rf", "--", *map(str, tmp_path.iterdir())], check=False)


def _build(root: str, names: list[str], *, leaf: str = "f") -> None:
    """mkdir root/names[0]/names[1]/... by relative steps (no path from / to the bottom fits
    PATH_MAX), with a file ``leaf`` and a second file in every directory."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names:
            os.mkdir(name, dir_fd=fd)
            with open(os.open("sibling", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
                f.write("s\n")
            nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        with open(os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
            f.write("x\n")
    finally:
        os.close(fd)


@pytest.mark.parametrize("names", [[NAME] * 40, ["a"] * 3000, ([NAME] * 9 + ["b"] * 300) * 3],
                         ids=["long-10kB", "deep-3000", "both"])
def test_rmtree_removes_a_tree_past_path_max_and_the_recursion_limit(tmp_path, names):
    top = tmp_path / "scratch"
    top.mkdir()
    _build(str(top), names)
    assert len(str(top)) + sum(len(n) + 1 for n in names) > 4096
    fsutil.rmtree(str(top))
    assert os.listdir(tmp_path) == []


def test_rmtree_in_bytes_and_str_alike(tmp_path):
    top = tmp_path / "scratch"
    top.mkdir()
    _build(str(top), [NAME] * 20)
    fsutil.rmtree(os.fsencode(top))
    assert os.listdir(tmp_path) == []


def test_rmtree_removes_symlinks_and_never_what_they_point_to(tmp_path):
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub/keep").write_text("keep\n")
    top = tmp_path / "scratch"
    top.mkdir()
    _build(str(top), [NAME] * 20)
    (top / "link-dir").symlink_to(outside)
    (top / "link-file").symlink_to(outside / "sub/keep")
    (top / "dangling").symlink_to(tmp_path / "nowhere")
    fsutil.rmtree(str(top))
    assert sorted(os.listdir(tmp_path)) == ["outside"]
    assert (outside / "sub/keep").read_text() == "keep\n"
    # the path itself a symlink: the link goes, the directory stays
    (tmp_path / "l").symlink_to(outside, target_is_directory=True)
    fsutil.rmtree(str(tmp_path / "l"))
    assert sorted(os.listdir(tmp_path)) == ["outside"] and (outside / "sub/keep").exists()


def test_rmtree_holds_a_handful_of_descriptors_whatever_the_width(tmp_path):
    """Under RLIMIT_NOFILE = 32 (stdin/out/err and Python's own take some), a tree 60 directories
    wide at 9 long levels is removed: a descriptor per level of the path walked, not per
    directory waiting."""
    top = tmp_path / "scratch"
    top.mkdir()
    _build(str(top), [NAME] * 9)
    deep = os.open(str(top), os.O_RDONLY | os.O_DIRECTORY)
    for name in [NAME] * 9:  # 60 siblings at the bottom, each past the 2048-byte anchor
        nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=deep)
        os.close(deep)
        deep = nxt
    for i in range(60):
        os.mkdir(f"w{i}", dir_fd=deep)
    os.close(deep)
    code = ("import resource, sys; from git_ckpt import fsutil; "
            "resource.setrlimit(resource.RLIMIT_NOFILE, (32, 32)); fsutil.rmtree(sys.argv[1])")
    subprocess.run([sys.executable, "-c", code, str(top)], check=True)
    assert os.listdir(tmp_path) == []
    assert resource.getrlimit(resource.RLIMIT_NOFILE)  # this process's limit untouched


def test_rmtree_leaves_what_it_cannot_remove_and_raises_nothing(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root removes from a read-only directory")
    top = tmp_path / "scratch"
    (top / "ro").mkdir(parents=True)
    (top / "ro/f").write_text("x\n")
    (top / "gone").write_text("x\n")
    (top / "ro").chmod(0o555)
    try:
        fsutil.rmtree(str(top))
        assert sorted(os.listdir(top)) == ["ro"] and os.listdir(top / "ro") == ["f"]
    finally:
        (top / "ro").chmod(0o755)


def test_rmtree_never_follows_a_directory_swapped_for_a_symlink_while_it_walks(tmp_path, monkeypatch):
    """Attack 25: once a directory was listed, a path below it was opened by its relative path
    (``a/b``) from an anchor, and O_NOFOLLOW guards only the last component: a process that
    swapped ``a`` for a symlink to another directory (a verifier's leftover process in a scratch
    worktree) had that directory emptied.  Each level is opened from its parent's descriptor."""
    outside = tmp_path / "victim"
    (outside / "b").mkdir(parents=True)
    (outside / "b/precious.txt").write_text("keep\n")
    (outside / "thesis.tex").write_text("keep\n")
    top = tmp_path / "scratch"
    (top / "a/b").mkdir(parents=True)
    (top / "a/b/f").write_text("x\n")
    for i in range(20):
        (top / f"z{i}").write_text("x\n")
    real = fsutil._entries
    swapped = []

    def entries_then_swap(fd):
        out = real(fd)
        if not swapped and out == [("b", True)]:  # a was listed (a real directory then)...
            os.rename(top / "a", tmp_path / "a-moved")
            (top / "a").symlink_to(outside)  # ...and a symlink before the walk opens it
            swapped.append(True)
        return out

    monkeypatch.setattr(fsutil, "_entries", entries_then_swap)
    fsutil.rmtree(str(top))
    assert swapped and not top.exists()  # the symlink swapped in is removed as a link
    assert sorted(os.listdir(tmp_path)) == ["a-moved", "victim"] and os.listdir(tmp_path / "a-moved") == []
    assert (outside / "b/precious.txt").read_text() == "keep\n" and (outside / "thesis.tex").read_text() == "keep\n"
