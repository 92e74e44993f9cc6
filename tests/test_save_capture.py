"""The tree ``git ckpt save`` records is exactly what ``git add -A`` on a fresh copy of the real
index gives (snapshot.capture takes a faster route: ``add -u`` beside one ``ls-files -o`` walk,
untracked files added by name; these tests fail if that route ever gives a different tree).

The reference, computed here with plain git on a copy of ``.git/index``: assume-unchanged
cleared, skip-worktree cleared for files on disk (both as the product documents), untracked files
over ``ckpt.overlay.maxFileSize`` left out, then ``git add -A --sparse`` and ``git write-tree``;
the index tree is ``git write-tree`` of an untouched copy (conflicted paths removed).

A Hypothesis state machine interleaves worktree edits (same-second rewrites of the same size
included), mode changes, symlinks, ``git add``/``reset``/``checkout``/``stash``/``rm --cached``,
intent-to-add, index flags, ignore rules, filters and saves; a few plain tests pin the cases
the state machine reaches rarely.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from conftest import ckpt, git, init_repo, merge_stopped_on_conflict

PATHS = ["f", "g.txt", "a/x", "a/b/y.txt", "a/b/z", "new/n1", "new/deep/n2", "big.bin", "ign.log", "a", "a/b", "new"]
CAP = 64  # bytes: ckpt.overlay.maxFileSize for these repositories


def expected_trees(root: Path) -> tuple[str, str]:
    """(worktree tree, index tree) as plain git computes them from a copy of the real index."""
    gd = root / ".git"
    out: list[str] = []
    for which in ("w", "i"):
        idx = gd / f"expect-index-{which}"
        if (gd / "index").exists():
            shutil.copy2(gd / "index", idx)
        env = {"GIT_INDEX_FILE": str(idx)}
        try:
            listing = git(root, "ls-files", "-s", "-v", "-z", env=env).split(b"\0")
            recs = [r for r in listing if r]
            conflicted = sorted({r.split(b"\t", 1)[1] for r in recs if r.split(b"\t", 1)[0].split()[-1] != b"0"})
            if which == "i":
                if conflicted:
                    git(root, "update-index", "-z", "--force-remove", "--stdin", input=b"\0".join(conflicted) + b"\0", env=env)
                out.append(git(root, "write-tree", env=env).decode().strip())
                continue
            assumed = [r.split(b"\t", 1)[1] for r in recs if r[:1].islower()]
            if assumed:
                git(root, "update-index", "-z", "--no-assume-unchanged", "--stdin", input=b"".join(p + b"\0" for p in assumed), env=env)
            skips = [r.split(b"\t", 1)[1] for r in recs if r[:1] in (b"S", b"s")]
            present = [p for p in skips if os.path.lexists(root / os.fsdecode(p))]
            if present:
                git(root, "update-index", "-z", "--no-skip-worktree", "--stdin", input=b"".join(p + b"\0" for p in present), env=env)
            untracked = [p for p in git(root, "ls-files", "-z", "-o", "--exclude-standard", env=env).split(b"\0") if p]
            big = [p for p in untracked if (root / os.fsdecode(p)).is_file() and not (root / os.fsdecode(p)).is_symlink()
                   and (root / os.fsdecode(p)).stat().st_size > CAP]
            spec = b":(top)\0" + b"".join(b":(top,exclude,literal)" + p + b"\0" for p in big)
            git(root, "add", "-A", "--sparse", "--pathspec-from-file=-", "--pathspec-file-nul", input=spec,
                env={**env, "GIT_LITERAL_PATHSPECS": "0"})
            out.append(git(root, "write-tree", env=env).decode().strip())
        finally:
            idx.unlink(missing_ok=True)
    return out[0], out[1]


def save_and_check(root: Path) -> None:
    """``git ckpt save`` and compare its trees with :func:`expected_trees` of the same moment."""
    w, i = expected_trees(root)
    res = ckpt(root, "save", "--allow-empty", "--json", fsck=False)
    cid = res.json()["result"]["id"]
    got_w = git(root, "rev-parse", f"refs/ckpt/{cid}^{{tree}}").decode().strip()
    parents = git(root, "rev-list", "--parents", "-n", "1", f"refs/ckpt/{cid}").decode().split()[1:]
    got_i = git(root, "rev-parse", f"{parents[-2]}^{{tree}}").decode().strip()
    if got_w != w:
        diff = git(root, "diff-tree", "-r", "--name-status", w, got_w).decode()
        raise AssertionError(f"{cid}: worktree tree {got_w} != git add -A's {w}:\n{diff}")
    assert got_i == i, (cid, got_i, i)


def setup_repo(root: Path) -> Path:
    init_repo(root)
    git(root, "config", "ckpt.overlay.maxFileSize", str(CAP))
    (root / ".gitignore").write_text("*.log\n")
    (root / "a/b").mkdir(parents=True)
    for p in ("f", "a/x", "a/b/y.txt", "g.txt"):
        (root / p).write_text(p + "\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "base")
    return root


class SaveWorld(RuleBasedStateMachine):
    @initialize()
    def make_repo(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="ckpt-capture-"))
        self.root = setup_repo(self.tmp / "repo")

    def teardown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _safe(self, path: str) -> Path | None:
        full = self.root / path
        for parent in list(full.parents)[: len(Path(path).parts) - 1]:
            if parent.is_symlink() or (parent.exists() and not parent.is_dir()):
                return None
        if full.is_dir() and not full.is_symlink():
            return None
        return full

    @rule(path=st.sampled_from(PATHS), data=st.binary(max_size=12), big=st.booleans())
    def write(self, path, data, big):
        full = self._safe(path)
        if full is None:
            return
        full.parent.mkdir(parents=True, exist_ok=True)
        if full.is_symlink():
            full.unlink()
        full.write_bytes(data * (20 if big else 1) if data else data)

    @rule(path=st.sampled_from(PATHS))
    def same_size_rewrite(self, path):
        """Racy git: new bytes of the same size within the same second as a save or git add."""
        full = self._safe(path)
        if full is None or not full.is_file() or full.is_symlink():
            return
        data = full.read_bytes()
        st0 = full.stat()
        full.write_bytes(bytes((b + 1) % 256 for b in data) if data else b"")
        os.utime(full, ns=(st0.st_atime_ns, st0.st_mtime_ns))  # same mtime: only ctime/content tell

    @rule(path=st.sampled_from(PATHS))
    def delete(self, path):
        full = self.root / path
        if full.is_symlink() or full.is_file():
            full.unlink()

    @rule(path=st.sampled_from(PATHS))
    def file_to_dir(self, path):
        """A file (or symlink) becomes a directory holding one file, or a directory becomes a file."""
        full = self.root / path
        if full.is_symlink() or full.is_file():
            full.unlink()
            full.mkdir()
            (full / "inner").write_text("inner\n")
        elif full.is_dir() and path in ("a", "a/b", "new"):
            shutil.rmtree(full)
            full.write_text("was a directory\n")

    @rule(path=st.sampled_from(PATHS))
    def chmod(self, path):
        full = self.root / path
        if full.is_file() and not full.is_symlink():
            full.chmod(full.stat().st_mode ^ 0o111)

    @rule(path=st.sampled_from(PATHS), dest=st.sampled_from(["f", "nowhere", "a"]))
    def symlink(self, path, dest):
        full = self._safe(path)
        if full is None:
            return
        full.parent.mkdir(parents=True, exist_ok=True)
        if full.is_symlink() or full.exists():
            full.unlink()
        full.symlink_to(dest)

    @rule(cmd=st.sampled_from([
        ["add", "-A"], ["add", "-u"], ["add", "--", "f"], ["add", "-N", "--", "new/n1"], ["reset", "-q"],
        ["reset", "-q", "--", "a"], ["checkout", "--", "f"], ["stash", "-q"], ["stash", "pop", "-q"],
        ["stash", "-u", "-q"], ["rm", "-q", "--cached", "--", "g.txt"], ["commit", "-qam", "c"],
        ["update-index", "--assume-unchanged", "f"], ["update-index", "--skip-worktree", "a/x"],
        ["update-index", "--no-assume-unchanged", "--no-skip-worktree", "f", "a/x"], ["reset", "-q", "--hard"],
    ]))
    def git_command(self, cmd):
        git(self.root, *cmd, check=False)

    @rule(rule_text=st.sampled_from(["*.log\n", "*.log\nnew/\n", "*.log\n*.txt\n", ""]))
    def ignore(self, rule_text):
        (self.root / ".gitignore").write_text(rule_text)

    @rule(text=st.sampled_from(["", "*.txt text eol=crlf\n", "* -text\n"]))
    def attributes(self, text):
        (self.root / ".gitattributes").write_text(text) if text else (self.root / ".gitattributes").unlink(missing_ok=True)

    @rule()
    def save(self):
        save_and_check(self.root)


def test_save_equals_git_add_all_state_machine():
    run_state_machine_as_test(SaveWorld, settings=settings(
        max_examples=int(os.environ.get("CKPT_STATEFUL_EXAMPLES", "8")), stateful_step_count=int(os.environ.get("CKPT_STATEFUL_STEPS", "25")),
        deadline=None, suppress_health_check=list(HealthCheck), derandomize=True))


@pytest.fixture
def world(tmp_path) -> Path:
    return setup_repo(tmp_path / "repo")


def test_untracked_over_the_cap_beside_small_ones(world):
    (world / "new").mkdir()
    (world / "new/small").write_text("s\n")
    (world / "new/huge").write_bytes(b"x" * (CAP + 1))
    (world / "top").write_text("t\n")
    save_and_check(world)
    tree = git(world, "ls-tree", "-r", "--name-only", "refs/ckpt/default/1").decode().split()
    assert "new/small" in tree and "top" in tree and "new/huge" not in tree


def test_same_second_rewrites_between_saves(world):
    for k in range(4):
        st0 = (world / "f").stat()
        (world / "f").write_text(f"f{k}\n"[:2] + "\n")  # same size every time
        os.utime(world / "f", ns=(st0.st_atime_ns, st0.st_mtime_ns))
        git(world, "add", "-u") if k % 2 else None
        save_and_check(world)


def test_file_that_became_ignored_and_a_deleted_one(world):
    (world / "later.txt").write_text("l\n")
    save_and_check(world)
    (world / ".gitignore").write_text("*.log\nlater.txt\n")
    (world / "a/x").unlink()
    save_and_check(world)
    tree = git(world, "ls-tree", "-r", "--name-only", "refs/ckpt/default/2").decode().split()
    assert "later.txt" not in tree and "a/x" not in tree


def test_conflict_intent_to_add_and_nested_repository(world):
    merge_stopped_on_conflict(world)
    (world / "ita").write_text("i\n")
    git(world, "add", "-N", "ita")
    init_repo(world / "nested")
    (world / "empty-nested").mkdir()
    git(world / "empty-nested", "init", "-q")
    save_and_check_with_nested(world)


def save_and_check_with_nested(root: Path) -> None:
    """A nested repository with no commit cannot be recorded (git add refuses it): the save
    leaves it out and says so; everything else matches git add -A without it."""
    res = ckpt(root, "save", "--allow-empty", "--json", fsck=False)
    cid = res.json()["result"]["id"]
    tree = git(root, "ls-tree", "-r", f"refs/ckpt/{cid}").decode()
    assert "160000 commit" in tree and "\tnested" in tree and "empty-nested" not in tree
    assert any("nested repositories" in w for w in res.json()["result"]["warnings"])


def test_file_dir_and_symlink_swaps(world):
    (world / "f").unlink()
    (world / "f").mkdir()
    (world / "f/inside").write_text("i\n")
    shutil.rmtree(world / "a/b")
    (world / "a/b").write_text("now a file\n")
    save_and_check(world)
    tree = git(world, "ls-tree", "-r", "--name-only", "refs/ckpt/default/1").decode().split()
    assert "f/inside" in tree and "a/b" in tree and "a/b/y.txt" not in tree
    shutil.rmtree(world / "a")
    (world / "a").symlink_to("f")
    save_and_check(world)
    tree = git(world, "ls-tree", "-r", "refs/ckpt/default/2").decode()
    assert "120000 blob" in tree and "\ta\n" in tree and "a/x" not in tree


def test_assume_unchanged_skip_worktree_on_disk_and_sparse(world):
    git(world, "update-index", "--assume-unchanged", "f")
    (world / "f").write_text("changed under assume-unchanged\n")
    git(world, "update-index", "--skip-worktree", "a/x")
    (world / "a/x").write_text("changed under skip-worktree\n")
    (world / "u").write_text("untracked\n")
    save_and_check(world)
    git(world, "update-index", "--no-assume-unchanged", "--no-skip-worktree", "f", "a/x")
    git(world, "sparse-checkout", "set", "a")
    (world / "outside.txt").write_text("outside the cone\n")
    save_and_check(world)


def test_unchanged_save_with_a_touched_overlay_file_writes_no_object(world):
    (world / ".gitignore").write_text("*.log\nfix/\n")
    (world / "fix").mkdir()
    (world / "fix/data.bin").write_bytes(b"fixture\n" * 100)
    git(world, "config", "ckpt.overlay.include", "fix/")
    git(world, "config", "ckpt.overlay.maxFileSize", "1MiB")
    ckpt(world, "save", "-m", "with fixture")
    before = git(world, "count-objects", "-v")
    os.utime(world / "fix/data.bin", ns=(10**18, 10**18))  # the tar would differ (mtime), the state not
    assert "no changes" in ckpt(world, "save").out
    assert git(world, "count-objects", "-v") == before
    (world / "fix/data.bin").write_bytes(b"changed\n" * 100)
    ckpt(world, "save", "-m", "changed fixture")
    tar = git(world, "cat-file", "blob", "refs/ckpt/default/2^3:overlay.tar")
    assert b"changed\n" * 100 in tar
