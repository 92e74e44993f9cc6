"""Issue 2: save / restore / undo on a copy of real source code, checked byte for byte."""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from conftest import ckpt, forge_checkpoint, fsck_clean, git, index_state, init_repo, run, worktree_state

STDLIB_PACKAGES = ["json", "email", "http", "urllib", "xml", "logging"]


def copy_stdlib(dst: Path) -> None:
    """A few real packages of this machine's Python standard library, __pycache__ removed."""
    src = Path(sysconfig.get_paths()["stdlib"])
    for pkg in STDLIB_PACKAGES:
        shutil.copytree(src / pkg, dst / pkg, ignore=shutil.ignore_patterns("__pycache__"))


@pytest.fixture
def real(tmp_path) -> Path:
    """A repository holding a committed copy of real stdlib packages, plus the overlay config."""
    root = init_repo(tmp_path / "real")
    copy_stdlib(root)
    (root / ".gitignore").write_text("node_modules/\n.venv/\ntmp/\n*.pyc\n")
    (root / ".ckpt.toml").write_text('[overlay]\ninclude = ["tmp/fixtures/"]\nexclude = ["node_modules/", ".venv/"]\n')
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "stdlib copy")
    return root


def agent_edits(root: Path) -> None:
    """What an agent does: edits, new files, deletions, a rename, staged+unstaged changes to one
    file, chmod +x, a symlink, fixtures under an ignored overlay path, ignored junk."""
    (root / "json/decoder.py").write_bytes((root / "json/decoder.py").read_bytes() + b"\n# agent edit\n")
    (root / "email/NEW_NOTES.md").write_text("notes\n")
    (root / "http/new module.py").write_text("x = 1\n")
    os.remove(root / "xml/dom/minicompat.py")
    git(root, "mv", "urllib/error.py", "urllib/errors.py")
    enc = root / "json/encoder.py"
    enc.write_bytes(enc.read_bytes() + b"# staged\n")
    git(root, "add", "json/encoder.py")
    enc.write_bytes(enc.read_bytes() + b"# unstaged\n")
    os.chmod(root / "logging/config.py", 0o755)
    os.symlink("json/__init__.py", root / "json-link")
    fx = root / "tmp/fixtures"
    (fx / "sub").mkdir(parents=True)
    (fx / "data.bin").write_bytes(bytes(range(256)) * 40)
    (fx / "sub/expected.json").write_text('{"ok": true}\n')
    os.symlink("data.bin", fx / "alias")
    (root / "node_modules/pkg").mkdir(parents=True)
    (root / "node_modules/pkg/index.js").write_text("module.exports = 1\n")
    (root / ".venv/bin").mkdir(parents=True)
    (root / ".venv/bin/python").write_text("#!/bin/sh\n")
    (root / "empty.txt").write_bytes(b"")


def make_mess(root: Path) -> None:
    """More edits, new files, deleted fixtures, a build artefact, staged changes."""
    (root / "json/decoder.py").write_text("broken\n")
    (root / "json/scanner.py").unlink()
    (root / "scratch.py").write_text("print('scratch')\n")
    shutil.rmtree(root / "tmp/fixtures/sub")
    (root / "tmp/fixtures/data.bin").write_bytes(b"changed")
    (root / "tmp/fixtures/extra.txt").write_text("residue\n")
    (root / "build").mkdir()
    (root / "build/artefact.o").write_bytes(b"\x7fELF")
    os.chmod(root / "logging/config.py", 0o644)
    os.remove(root / "json-link")
    os.symlink("json/decoder.py", root / "json-link")
    (root / "empty.txt").unlink()
    git(root, "add", "-A")
    (root / "email/NEW_NOTES.md").write_text("overwritten after staging\n")


def junk_state(root: Path) -> dict:
    return {k: v for k, v in worktree_state(root).items() if k.startswith((b"node_modules", b".venv"))}


def test_real_tree_round_trip(real):
    agent_edits(real)
    saved_tree = worktree_state(real)
    saved_index = index_state(real)
    junk = junk_state(real)
    assert junk  # the ignored junk exists

    res = ckpt(real, "save", "-m", "agent work")
    assert res.out == "checkpoint saved: default/1\n"
    assert res.err == ""

    make_mess(real)
    mess_tree = worktree_state(real)
    mess_index = index_state(real)
    assert mess_tree != saved_tree

    res = ckpt(real, "restore", "default/1")
    assert res.out == "saved current state as default/2 (pre-restore)\nrestored default/1\n"
    assert worktree_state(real) == saved_tree
    assert index_state(real) == saved_index
    assert junk_state(real) == junk
    assert os.readlink(real / "json-link") == "json/__init__.py"
    assert os.readlink(real / "tmp/fixtures/alias") == "data.bin"
    assert os.stat(real / "logging/config.py").st_mode & 0o777 == 0o755
    assert (real / "empty.txt").read_bytes() == b""
    assert not (real / "build").exists()
    assert not (real / "tmp/fixtures/extra.txt").exists()

    res = ckpt(real, "undo")
    assert res.out == "current state matches default/1; not saved again\nundo: restored default/2\n"
    assert worktree_state(real) == {**mess_tree}
    assert index_state(real) == mess_index
    assert junk_state(real) == junk

    res = ckpt(real, "undo")
    assert res.out == "current state matches default/2; not saved again\nundo: restored default/1\n"
    assert worktree_state(real) == saved_tree
    assert index_state(real) == saved_index

    # plain git works on the result
    show = git(real, "show", "--stat", "ckpt/default/1")
    assert b"ckpt default/1: agent work" in show
    diff = git(real, "diff", "--name-status", "ckpt/default/1", "ckpt/default/2")
    assert b"D\tjson/scanner.py" in diff
    assert b"A\tscratch.py" in diff
    # the checkpoint commit has the stash shape: [HEAD, index commit, meta commit]
    parents = git(real, "rev-list", "--parents", "-n1", "ckpt/default/1").split()
    assert len(parents) == 4
    assert parents[1] == git(real, "rev-parse", "HEAD").strip()
    meta = git(real, "ls-tree", "--name-only", parents[3].decode()).split()
    assert meta == [b"manifest.json", b"overlay.tar"]
    # git gc keeps every checkpoint whole
    git(real, "gc", "--prune=now", "--quiet")
    fsck_clean(real)
    ckpt(real, "restore", "default/2")
    assert worktree_state(real) == mess_tree


def test_every_kind_of_entry(repo):
    """Exec bit, symlinks, empty/binary files, awkward names, intent-to-add, deletions."""
    names = ["with space.txt", "new\nline.txt", "ünïcödé.txt", "tab\there", "-dash", "quote\"s'"]
    for n in names:
        (repo / n).write_text(n + "\n")
    odd = os.fsencode(repo) + b"/latin1-\xe9.txt"
    with open(odd, "wb") as fh:
        fh.write(b"\xff\xfe binary \x00 bytes")
    (repo / "bin.dat").write_bytes(os.urandom(4096))
    (repo / "empty").write_bytes(b"")
    (repo / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(repo / "run.sh", 0o755)
    os.symlink("README", repo / "link-to-readme")
    os.symlink("does/not/exist", repo / "dangling")
    (repo / "ita.txt").write_text("intent\n")
    git(repo, "add", "-N", "ita.txt")
    git(repo, "add", "with space.txt")
    os.remove(repo / "README")
    before_tree = worktree_state(repo)
    before_index = index_state(repo)
    ckpt(repo, "save")

    # a thorough mess
    for n in names:
        p = repo / n
        if p.exists():
            p.unlink()
    os.remove(odd)
    (repo / "bin.dat").write_bytes(b"short")
    (repo / "empty").unlink()
    os.chmod(repo / "run.sh", 0o644)
    os.remove(repo / "link-to-readme")
    (repo / "link-to-readme").write_text("now a file\n")
    (repo / "README").write_text("back\n")
    git(repo, "add", "-A")
    ckpt(repo, "restore", "1")
    assert worktree_state(repo) == before_tree
    assert index_state(repo) == before_index
    ita = git(repo, "ls-files", "--stage", "ita.txt")
    assert ita.startswith(b"100644 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0\t")
    assert git(repo, "diff", "--cached", "--name-only", "--ita-invisible-in-index") == b"with space.txt\n"


def test_unborn_branch_and_detached_head(tmp_path):
    root = init_repo(tmp_path / "unborn", commit=False)
    (root / "a.txt").write_text("a\n")
    res = ckpt(root, "save", "--json")
    assert res.json()["result"]["id"] == "default/1"
    parents = git(root, "rev-list", "--parents", "-n1", "refs/ckpt/default/1").split()
    assert len(parents) == 3  # no HEAD parent on an unborn branch
    (root / "a.txt").write_text("changed\n")
    ckpt(root, "restore", "@")
    assert (root / "a.txt").read_text() == "a\n"
    assert git(root, "rev-parse", "--verify", "-q", "HEAD", check=False) == b""

    repo = init_repo(tmp_path / "det")
    git(repo, "checkout", "-q", "--detach")
    (repo / "x").write_text("x\n")
    ckpt(repo, "save")
    show = ckpt(repo, "show", "--json").json()["result"]["manifest"]
    assert show["branch"] is None
    assert show["base"] == git(repo, "rev-parse", "HEAD").decode().strip()


def test_head_moves_only_with_reset_head(repo):
    (repo / "f").write_text("one\n")
    git(repo, "add", "f")
    ckpt(repo, "save")
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "commit", "-q", "-m", "commit f")
    (repo / "f").write_text("two\n")
    git(repo, "commit", "-q", "-am", "two")
    head = git(repo, "rev-parse", "HEAD").strip()
    ckpt(repo, "restore", "default/1")
    assert git(repo, "rev-parse", "HEAD").strip() == head
    # the restored index shows as staged changes against the new HEAD
    assert git(repo, "diff", "--cached", "--name-status") == b"M\tf\n"
    assert (repo / "f").read_text() == "one\n"
    ckpt(repo, "restore", "default/1", "--reset-head")
    assert git(repo, "rev-parse", "HEAD").strip() == base
    assert git(repo, "symbolic-ref", "HEAD") == b"refs/heads/main\n"
    assert b"ckpt: restore default/1 --reset-head" in git(repo, "reflog", "-1", "main")


def test_identical_save_and_allow_empty(repo):
    (repo / "f").write_text("1\n")
    assert ckpt(repo, "save").out == "checkpoint saved: default/1\n"
    assert ckpt(repo, "save").out == "no changes since default/1; nothing saved (use --allow-empty to save anyway)\n"
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/ckpt/default/") == b"refs/ckpt/default/1\nrefs/ckpt/default/log\n"
    assert ckpt(repo, "save", "--allow-empty").out == "checkpoint saved: default/2\n"


def test_checkpoint_names(repo):
    for i in range(1, 4):
        (repo / "f").write_text(f"{i}\n")
        ckpt(repo, "save", "-m", f"m{i}")
    ids = {}
    for spec in ["@", "@~1", "@~2", "3", "default/2", "ckpt/default/1", "refs/ckpt/default/3", "default/@"]:
        ids[spec] = ckpt(repo, "show", spec, "--json").json()["result"]["id"]
    assert ids == {"@": "default/3", "@~1": "default/2", "@~2": "default/1", "3": "default/3",
                   "default/2": "default/2", "ckpt/default/1": "default/1", "refs/ckpt/default/3": "default/3", "default/@": "default/3"}
    for bad in ["9", "@~3", "nope/1", "HEAD", "../x", "a b", "x\x01y"]:
        res = ckpt(repo, "show", bad, rc=4)
        assert res.err.startswith("error: "), res
        assert len(res.err.strip().splitlines()) <= 2
    # a REMOTE: prefix naming no configured remote (and nothing fetched under it): a usage error
    assert ckpt(repo, "show", "origin:default/1", rc=2).err.startswith("error: 'origin' is not a configured remote\n")


def test_restore_paths_and_dry_run(repo):
    (repo / "a").write_text("a1\n")
    (repo / "b").write_text("b1\n")
    ckpt(repo, "save")
    (repo / "a").write_text("a2\n")
    (repo / "b").write_text("b2\n")
    (repo / "c").write_text("new\n")
    plan = ckpt(repo, "restore", "1", "--dry-run", "--json").json()["result"]["plan"]
    assert plan["write"] == ["a", "b"]
    assert plan["delete"] == ["c"]
    assert (repo / "a").read_text() == "a2\n"  # dry run changed nothing
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/ckpt/default/") == b"refs/ckpt/default/1\nrefs/ckpt/default/log\n"
    human = ckpt(repo, "restore", "1", "-n").out
    assert human == "would restore default/1:\nwrite   a\nwrite   b\ndelete  c\nleave   1 other file(s)\n"
    ckpt(repo, "restore", "1", "--", "a")
    assert (repo / "a").read_text() == "a1\n"
    assert (repo / "b").read_text() == "b2\n"
    assert (repo / "c").read_text() == "new\n"


def test_ignored_files_never_touched_and_never_overwritten(repo):
    (repo / ".gitignore").write_text("*.log\nsecret/\n")
    (repo / "keep.log").write_text("precious log\n")
    ckpt(repo, "save")
    (repo / "other.log").write_text("also precious\n")
    (repo / "x").write_text("x\n")
    ckpt(repo, "restore", "1")
    assert (repo / "keep.log").read_text() == "precious log\n"
    assert (repo / "other.log").read_text() == "also precious\n"
    assert not (repo / "x").exists()
    # a checkpoint with a tracked file where an ignored one now sits: refused, nothing changed
    (repo / "data.txt").write_text("tracked content\n")
    ckpt(repo, "save")
    os.remove(repo / "data.txt")
    (repo / ".gitignore").write_text("*.log\nsecret/\ndata.txt\n")
    (repo / "data.txt").write_text("ignored precious\n")
    before = worktree_state(repo)
    res = ckpt(repo, "restore", "@", rc=1)
    assert "would overwrite 1 ignored, skipped or unsaved path(s) whose current content the pre-restore save would not hold: data.txt" in res.err
    assert worktree_state(repo) == before


def test_overlay_secrets_and_size_limit(repo):
    (repo / ".gitignore").write_text("state/\n")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["state/"]\nmax_file_size = "1KiB"\n')
    (repo / "state").mkdir()
    (repo / "state/.env").write_text("TOKEN=abc\n")
    (repo / "state/key.pem").write_text("-----BEGIN-----\n")
    (repo / "state/ok.json").write_text("{}\n")
    (repo / "state/big.bin").write_bytes(b"x" * 2048)
    (repo / "huge-untracked.bin").write_bytes(b"y" * 4096)
    res = ckpt(repo, "save")
    assert res.out == "checkpoint saved: default/1\n"
    assert "warning: overlay: left out likely-secret files: state/.env, state/key.pem" in res.err
    assert "warning: skipped files over the size limit: state/big.bin, huge-untracked.bin" in res.err
    files = [f["path"] for f in ckpt(repo, "show", "--json").json()["result"]["overlay"]]
    assert files == ["state/ok.json"]
    assert b"huge-untracked.bin" not in git(repo, "ls-tree", "-r", "--name-only", "ckpt/default/1")


def test_eight_concurrent_saves(repo):
    (repo / "f").write_text("base\n")
    procs = []
    for i in range(8):
        (repo / f"file{i}").write_text(f"{i}\n")
    for i in range(8):
        procs.append(subprocess.Popen(["git", "ckpt", "save", "--allow-empty", "-m", f"p{i}"], cwd=repo,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    outs = [p.communicate() for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    ids = sorted(o.decode().strip() for o, _e in outs)
    assert ids == sorted(f"checkpoint saved: default/{n}" for n in range(1, 9))
    refs = git(repo, "for-each-ref", "--format=%(objectname)", "refs/ckpt/default/[0-9]*").split()
    assert len(set(refs)) == 8
    assert ckpt(repo, "log", "--verify").out == "ledger of default: intact (8 events)\n"
    assert len(ckpt(repo, "log").out.splitlines()) == 8


def test_restore_refused_during_merge_and_index_lock(repo):
    (repo / "f").write_text("base\n")
    git(repo, "add", "f")
    git(repo, "commit", "-q", "-m", "f")
    ckpt(repo, "save", "--allow-empty")
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "f").write_text("other\n")
    git(repo, "commit", "-q", "-am", "other")
    git(repo, "checkout", "-q", "main")
    (repo / "f").write_text("main\n")
    git(repo, "commit", "-q", "-am", "main")
    git(repo, "merge", "other", check=False)
    assert (repo / ".git/MERGE_HEAD").exists()
    before = worktree_state(repo)
    res = ckpt(repo, "restore", "1", rc=5)
    assert res.err.startswith("error: a merge is in progress")
    assert "hint: " in res.err
    assert worktree_state(repo) == before
    git(repo, "merge", "--abort")
    (repo / ".git/index.lock").write_text("")
    res = ckpt(repo, "restore", "1", rc=5)
    assert "index is locked" in res.err
    res = ckpt(repo, "save", rc=5)
    assert "index is locked" in res.err
    os.remove(repo / ".git/index.lock")


def test_errors_one_line_and_exit_code(tmp_path, repo):
    outside = tmp_path / "outside"
    outside.mkdir()
    res = ckpt(outside, "list", rc=3, fsck=False)
    assert res.err == ("error: not a git repository (or any of the parent directories)\n"
                       "hint: run git ckpt inside a git worktree, or create one with git init\n")
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    res = ckpt(bare, "save", rc=3, fsck=False)
    assert res.err.startswith("error: this is a bare repository")
    res = ckpt(repo, "restore", "default/7", rc=4)
    assert res.err.startswith("error: no checkpoint default/7\n")
    (repo / ".ckpt.toml").write_text("[overlay\ninclude = 3\n")
    res = ckpt(repo, "save", rc=6)
    assert res.err.startswith("error: .ckpt.toml: ") and "line 1" in res.err
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = "notalist"\n')
    res = ckpt(repo, "save", rc=6)
    assert "Expected `array`" in res.err and "overlay.include" in res.err
    (repo / ".ckpt.toml").write_text('[overlay]\nbogus = 1\n')
    assert "bogus" in ckpt(repo, "save", rc=6).err
    res = ckpt(repo, "save", "--json", rc=6)
    assert res.json()["error"]["code"] == "config"
    res = ckpt(repo, "frobnicate", rc=2)
    assert res.err == "error: no such command 'frobnicate'\nhint: git ckpt -h shows the usage\n"


def test_corrupt_manifest_and_tar(repo):
    (repo / ".gitignore").write_text("fx/\n")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["fx/"]\n')
    (repo / "fx").mkdir()
    (repo / "fx/a").write_text("a\n")
    ckpt(repo, "save")
    forge_checkpoint(repo, blobs={"manifest.json": b"{not json"})
    before = worktree_state(repo)
    res = ckpt(repo, "restore", "default/9", rc=7)
    assert res.err.startswith("error: the manifest of default/9 is corrupt")
    assert worktree_state(repo) == before
    git(repo, "update-ref", "-d", "refs/ckpt/default/9")
    forge_checkpoint(repo, blobs={"overlay.tar": b"this is not a tar archive" * 30})
    (repo / "fx/a").write_text("changed\n")
    before = worktree_state(repo)
    res = ckpt(repo, "restore", "default/9", rc=7)
    assert "overlay archive" in res.err
    assert worktree_state(repo) == before
    assert len(res.err.strip().splitlines()) <= 2


def test_interrupted_restore_continue_and_undo(repo):
    (repo / "a").write_text("a1\n")
    (repo / "b").write_text("b1\n")
    ckpt(repo, "save")
    saved = worktree_state(repo)
    (repo / "a").write_text("a2\n")
    (repo / "c").write_text("c2\n")
    mess = worktree_state(repo)
    res = ckpt(repo, "restore", "1", rc=None, env={"GIT_CKPT_FAULT": "restore.after-delete"})
    assert res.rc == 137  # git reports the SIGKILL of git-ckpt as 128 + 9
    assert not (repo / "c").exists()  # killed half way
    res = ckpt(repo, "save", rc=5)
    assert "restore was interrupted" in res.err
    assert ckpt(repo, "status", "--json").json()["result"]["restore_interrupted"] is True
    ckpt(repo, "restore", "--continue")
    assert worktree_state(repo) == saved
    # and the other way: interrupted, then undone
    (repo / "a").write_text("a3\n")
    mess = worktree_state(repo)
    ckpt(repo, "restore", "1", rc=None, env={"GIT_CKPT_FAULT": "restore.after-write"})
    ckpt(repo, "undo")
    assert worktree_state(repo) == mess
    assert ckpt(repo, "log", "--verify").rc == 0


def test_man_page_after_plain_install(tmp_path):
    """`git ckpt --help` and `git help ckpt` open the man page after a plain (non-editable) install."""
    import sys

    prefix = tmp_path / "prefix"
    src = Path(__file__).resolve().parent.parent
    # --ignore-installed: never uninstall the copy this test suite itself runs from
    run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--ignore-installed",
         "--prefix", str(prefix), str(src)], tmp_path)
    site = next(prefix.glob("lib/python*/site-packages"))
    assert (prefix / "share/man/man1/git-ckpt.1").exists()
    env = {"PATH": f"{prefix / 'bin'}:{os.environ['PATH']}", "PYTHONPATH": str(site), "MANPAGER": "cat", "MANWIDTH": "100"}
    repo = init_repo(tmp_path / "r")
    for args in (["git", "ckpt", "--help"], ["git", "help", "ckpt"]):
        out = run(args, repo, env=env).stdout.decode()
        assert "git-ckpt - checkpoint a Git working tree into hidden refs and restore it exactly" in out
        assert "EXIT STATUS" in out


def test_man_page_is_built_from_its_parts():
    """man/git-ckpt.1 is exactly what man/build.py makes of man/parts/*.roff."""
    import importlib.util

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("man_build", root / "man" / "build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert (root / "man" / "git-ckpt.1").read_bytes() == mod.build()
