"""The strict overlay extractor against crafted archives, directly and through ``git ckpt restore``.

Each hostile archive must be refused with the entry named and NOTHING written anywhere: the
tests list the whole parent folder of the worktree (worktree included) before and after.
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from conftest import ckpt, git, index_state, init_repo, worktree_state
from git_ckpt import overlay
from git_ckpt.errors import CorruptError


def _huge_header(name: str, claimed: int) -> bytes:
    """A tar of one file header claiming ``claimed`` bytes it does not hold: refused from the header."""
    info = tarfile.TarInfo(name)
    info.size = claimed
    return info.tobuf(format=tarfile.PAX_FORMAT) + b"\0" * 1024


def _tar(*members: tuple) -> bytes:
    """Build a tar from ``(name, kind, payload)``: kind file (payload bytes), dir, symlink and
    hardlink (payload = link name), chr, fifo."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, payload in members:
            info = tarfile.TarInfo(name)
            info.mtime = 1_700_000_000
            if kind == "file":
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE,
                         "chr": tarfile.CHRTYPE, "fifo": tarfile.FIFOTYPE}[kind]
            if kind in ("symlink", "hardlink"):
                info.linkname = payload
            if kind == "chr":
                info.devmajor, info.devminor = 1, 3
            tar.addfile(info)
    return buf.getvalue()


def _listing(folder: Path) -> dict:
    """Every path below ``folder`` with kind, mode and content; inside a repository's ``.git``
    only what git ckpt could be tricked into writing (hooks, config), since git itself refreshes
    the index and logs there."""
    state = worktree_state(folder, skip=())
    return {k: v for k, v in state.items()
            if b".git" not in k.split(b"/") or b"/.git/hooks" in k or k.endswith(b"/.git/config")}


@pytest.fixture
def place(tmp_path):
    """``tmp_path/parent`` holding the worktree ``wt`` (with a file), an ``outside`` folder with
    a file, and a symlink ``wt/out`` pointing at ``outside`` (already in the worktree)."""
    parent = tmp_path / "parent"
    wt = parent / "wt"
    outside = parent / "outside"
    wt.mkdir(parents=True)
    outside.mkdir()
    (outside / "target").write_text("outside, must not change\n")
    (wt / "keep.txt").write_text("keep\n")
    os.symlink(str(outside), wt / "out")
    return parent, wt, outside


def _crafted(parent: Path) -> dict[str, tuple[bytes, str]]:
    ok = ("ok.txt", "file", b"fine\n")  # a harmless first entry: refusal must still write nothing
    return {
        "absolute path": (_tar(ok, (str(parent / "evil"), "file", b"x")), "has an absolute path"),
        "dot-dot": (_tar(ok, ("../evil", "file", b"x")), "contains '..'"),
        "dot-dot inside": (_tar(ok, ("a/../../evil", "file", b"x")), "contains '..'"),
        "symlink out then file through it": (_tar(ok, ("ln", "symlink", ".."), ("ln/evil", "file", b"x")), "points outside the worktree"),
        "symlink in then file through it": (_tar(ok, ("ln", "symlink", "sub"), ("ln/evil", "file", b"x")), "lies below a symlink of the archive"),
        "file through a later symlink": (_tar(ok, ("ln/evil", "file", b"x"), ("ln", "symlink", ".")), "lies below a symlink of the archive"),
        "absolute symlink": (_tar(ok, ("ln", "symlink", str(parent / "outside"))), "points outside the worktree"),
        "symlink climbing after a name": (_tar(ok, ("s", "symlink", "."), ("l", "symlink", "s/..")), "points outside the worktree"),
        "existing symlink in the worktree": (_tar(ok, ("out/evil", "file", b"x")), "is a symlink in the worktree"),
        "hard link": (_tar(ok, ("h", "hardlink", "../outside/target")), "is a hard link"),
        "hard link inside": (_tar(ok, ("h", "hardlink", "ok.txt")), "is a hard link"),
        "character device": (_tar(ok, ("dev", "chr", "")), "is a device, FIFO or other special file"),
        "fifo": (_tar(ok, ("pipe", "fifo", "")), "is a device, FIFO or other special file"),
        "entry past the total size limit": (_huge_header("big", overlay.MAX_TOTAL + 1), "takes the archive past the total size limit"),
        "into .git": (_tar(ok, (".git/hooks/post-checkout", "file", b"#!/bin/sh\n")), "writes into .git"),
        "into .GIT": (_tar(ok, ("sub/.GIT/config", "file", b"x")), "writes into .git"),
        "file below a file": (_tar(ok, ("f", "file", b"x"), ("f/g", "file", b"y")), "lies below a file of the archive"),
        "duplicate": (_tar(ok, ("d", "file", b"x"), ("d", "file", b"y")), "twice"),
        "garbage": (b"not a tar at all" * 64, "overlay archive is corrupt"),
    }


CASES = list(_crafted(Path("/p")).keys())


@pytest.mark.parametrize("case", CASES)
def test_crafted_archive_refused_and_nothing_written(place, case):
    parent, wt, _outside = place
    data, why = _crafted(parent)[case]
    before = _listing(parent)
    with pytest.raises(CorruptError) as exc:
        overlay.extract(wt, data)
    assert why in exc.value.message
    assert _listing(parent) == before


def test_too_many_entries(place, monkeypatch):
    parent, wt, _outside = place
    monkeypatch.setattr(overlay, "MAX_ENTRIES", 10)
    data = _tar(*[(f"f{i}", "file", b"x") for i in range(11)])
    before = _listing(parent)
    with pytest.raises(CorruptError, match="more than 10 entries"):
        overlay.extract(wt, data)
    assert _listing(parent) == before


def test_total_size_cap(place, monkeypatch):
    parent, wt, _outside = place
    monkeypatch.setattr(overlay, "MAX_TOTAL", 100)
    data = _tar(*[(f"f{i}", "file", b"x" * 60) for i in range(2)])
    before = _listing(parent)
    with pytest.raises(CorruptError, match="total size limit"):
        overlay.extract(wt, data)
    assert _listing(parent) == before


def test_a_symlink_at_the_target_is_replaced_never_followed(place):
    parent, wt, outside = place
    os.symlink(str(outside / "target"), wt / "f")
    written = overlay.extract(wt, _tar(("f", "file", b"mine\n"), ("d/ok", "symlink", "../keep.txt")))
    assert written == [b"f", b"d/ok"]
    assert (outside / "target").read_text() == "outside, must not change\n"
    assert not os.path.islink(wt / "f") and (wt / "f").read_bytes() == b"mine\n"
    assert os.readlink(wt / "d" / "ok") == "../keep.txt"


def test_safe_archive_extracts_exactly(place):
    _parent, wt, _outside = place
    data = _tar(("a/b.txt", "file", b"hello\n"), ("a/link", "symlink", "b.txt"), ("up", "symlink", "a/../keep.txt"), ("e", "dir", ""))
    with pytest.raises(CorruptError):  # '..' after a name: refused even though it stays inside
        overlay.extract(wt, data)
    data = _tar(("a/b.txt", "file", b"hello\n"), ("a/link", "symlink", "b.txt"), ("a/up", "symlink", "../keep.txt"), ("e", "dir", ""))
    assert overlay.extract(wt, data) == [b"a/b.txt", b"a/link", b"a/up"]
    assert (wt / "a" / "b.txt").read_bytes() == b"hello\n"
    assert os.readlink(wt / "a" / "up") == "../keep.txt"
    assert (wt / "e").is_dir()


# ------------------------------------------------------------------------------ through restore


def _hostile_checkpoint(repo: Path, tar: bytes) -> str:
    """A checkpoint built with plumbing from a real one (fixtures/a.txt in its overlay), whose
    overlay.tar is replaced by ``tar``; stored as refs/ckpt/work/2.  Returns its commit id."""
    good = git(repo, "rev-parse", "refs/ckpt/work/1").decode().strip()
    parents = git(repo, "rev-list", "--parents", "-n1", good).decode().split()[1:]
    manifest = git(repo, "rev-parse", f"{parents[-1]}:manifest.json").decode().strip()
    evil = git(repo, "hash-object", "-w", "--stdin", input=tar).decode().strip()
    tree = git(repo, "mktree", input=f"100644 blob {manifest}\tmanifest.json\n100644 blob {evil}\toverlay.tar\n".encode()).decode().strip()
    meta = git(repo, "commit-tree", tree, "-m", "ckpt meta work/2").decode().strip()
    wtree = git(repo, "rev-parse", f"{good}^{{tree}}").decode().strip()
    args = []
    for p in parents[:-1] + [meta]:
        args += ["-p", p]
    commit = git(repo, "commit-tree", wtree, *args, "-m", "crafted").decode().strip()
    git(repo, "update-ref", "refs/ckpt/work/2", commit)
    return commit


def _restore_cases(parent: Path) -> dict[str, tuple[bytes, str]]:
    a = ("fixtures/a.txt", "file", b"x")  # the file the manifest lists, so the restore reads the tar
    return {
        "dot-dot": (_tar(a, ("../evil", "file", b"x")), "contains '..'"),
        "absolute path": (_tar(a, (str(parent / "outside" / "evil"), "file", b"x")), "has an absolute path"),
        "symlink out then file through it": (_tar(a, ("fixtures/ln", "symlink", "../.."), ("fixtures/ln/evil", "file", b"x")), "points outside the worktree"),
        "hard link": (_tar(a, ("fixtures/h", "hardlink", "../../outside/target")), "is a hard link"),
        "device": (_tar(a, ("fixtures/dev", "chr", "")), "is a device"),
        "existing symlink in the worktree": (_tar(a), "'fixtures' is a symlink in the worktree"),
        "manifest file missing from the tar": (_tar(), "lacks 1 file its manifest lists"),
        "tar entry the manifest does not list": (_tar(a, ("fixtures/other.txt", "file", b"x")), "which its manifest does not list"),
    }


def test_crafted_checkpoints_restore_exit_7_and_change_nothing(tmp_path):
    parent = tmp_path / "parent"
    repo = init_repo(parent / "wt")
    (parent / "outside").mkdir()
    (parent / "outside" / "target").write_text("outside\n")
    (repo / ".gitignore").write_text("fixtures\n")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["fixtures/"]\n')
    git(repo, "add", ".gitignore", ".ckpt.toml")
    git(repo, "commit", "-q", "-m", "cfg")
    ckpt(repo, "task", "start", "work")
    (repo / "fixtures").mkdir()
    (repo / "fixtures" / "a.txt").write_text("fixture\n")
    ckpt(repo, "save")
    (repo / "fixtures" / "a.txt").unlink()  # so a restore has an overlay file to write
    (repo / "scratch.txt").write_text("unsaved work\n")

    def snapshot():
        return (_listing(parent), index_state(repo), git(repo, "for-each-ref"), sorted(os.listdir(repo / ".git" / "ckpt")))

    for case, (data, why) in _restore_cases(parent).items():
        if case == "existing symlink in the worktree":
            continue
        _hostile_checkpoint(repo, data)
        before = snapshot()
        res = ckpt(repo, "restore", "work/2", rc=7, fsck=False)
        assert why in res.err and "error:" in res.err, (case, res)
        ckpt(repo, "restore", "work/2", "--dry-run", rc=7, fsck=False)
        assert snapshot() == before, case  # no pre-restore save, no journal, no file anywhere
        assert "RESTORE" not in before[3]
        git(repo, "update-ref", "-d", "refs/ckpt/work/2")
    # an ignored symlink already in the worktree, pointing outside, where the overlay goes
    (repo / "fixtures").rmdir()
    os.symlink(str(parent / "outside"), repo / "fixtures")
    data, _why = _restore_cases(parent)["existing symlink in the worktree"]
    _hostile_checkpoint(repo, data)
    before = snapshot()
    # refused as an ignored path in the way (exit 1) or by the extractor (exit 7)
    res = ckpt(repo, "restore", "work/2", rc=None)
    assert res.rc in (1, 7) and "fixtures" in res.err, res
    assert snapshot() == before
    assert sorted(os.listdir(parent / "outside")) == ["target"]


def test_fetched_hostile_checkpoint_refused(tmp_path):
    """Mallory pushes a crafted checkpoint; bob fetches it (nothing runs) and restoring it fails
    with exit 7, changing nothing in bob's worktree or beside it."""
    mallory = init_repo(tmp_path / "mallory")
    (mallory / ".gitignore").write_text("fixtures/\n")
    (mallory / ".ckpt.toml").write_text('[overlay]\ninclude = ["fixtures/"]\n')
    git(mallory, "add", ".gitignore", ".ckpt.toml")
    git(mallory, "commit", "-q", "-m", "cfg")
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(mallory), str(bare))
    git(mallory, "remote", "add", "origin", str(bare))
    ckpt(mallory, "task", "start", "work")
    (mallory / "fixtures").mkdir()
    (mallory / "fixtures" / "a.txt").write_text("fixture\n")
    ckpt(mallory, "save")
    _hostile_checkpoint(mallory, _tar(("fixtures/a.txt", "file", b"x"), ("../../pwned", "file", b"x")))
    ckpt(mallory, "push", "--allow-secrets")
    home = tmp_path / "home-of-bob"
    bob = home / "bob"
    home.mkdir()
    git(home, "clone", "-q", str(bare), str(bob))
    ckpt(bob, "fetch")
    before = (_listing(home), git(bob, "for-each-ref"), git(bob, "worktree", "list", "--porcelain"))
    res = ckpt(bob, "restore", "origin:work/2", rc=7)
    assert "contains '..'" in res.err
    res = ckpt(bob, "restore", "origin:work/2", "--worktree", str(home / "review"), rc=7)
    assert "contains '..'" in res.err
    after = (_listing(home), git(bob, "for-each-ref"), git(bob, "worktree", "list", "--porcelain"))
    assert after == before
    assert not (tmp_path / "pwned").exists()
