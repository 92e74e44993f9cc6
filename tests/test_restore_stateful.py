"""A stateful property test (Hypothesis ``RuleBasedStateMachine``) of restore and undo when the
world moves: edits at several depths, saves, restores whole and by path, undos, ``.gitignore``
edits at several depths and in ``info/exclude``, sparse-cone changes, index flags, HEAD moves,
overlay patterns naming ignored files (and a file where a directory was, and back), and commands
run from subdirectories.  After every step:

* nothing is lost: every file on disk before a ``restore``/``undo`` is still there with the
  same bytes, or a checkpoint holds exactly those bytes at that path (in its tree or overlay);
* a file ignored before the command is still there, byte for byte, or (an ignored file the
  pre-restore overlay holds, which a restore may replace) a checkpoint's overlay holds it;
* a refused command changed nothing;
* a whole restore gives exactly the saved worktree (``git ckpt diff`` is empty) and index
  (tree and flags); an undo right after a restore gives back exactly the files and index before it.

Bounded for CI (a handful of examples of a dozen steps, no deadline).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from conftest import ckpt, git, init_repo, worktree_state

pytestmark = pytest.mark.once  # a volume/generator test: under the machine's git only (.ci/run)

PATHS = ["f", "a/g", "a/b/h", "data/big.bin", "a/data/x.bin", "a/b/keep.bin", "in/i", "out/o", "sub/s", "out", "data"]
DIRS = ["", "a/", "a/b/"]
PATTERNS = ["*.bin", "data/", "!keep.bin", "# nothing", "out", "data"]
OVERLAYS = [None, "*.bin", "out", "data/", "data"]
CWDS = ["", "a", "sub", "in"]


def files_only(state: dict) -> dict:
    return {p: v for p, v in state.items() if v[0] != "dir"}


def index_with_flags(root: Path) -> tuple[bytes, bytes]:
    return git(root, "ls-files", "-s", "-z"), git(root, "ls-files", "-v", "-t", "-z")


def ignored_files(root: Path) -> dict:
    out = git(root, "ls-files", "-z", "-o", "-i", "--exclude-standard").split(b"\0")
    state = files_only(worktree_state(root))
    return {p: state[p] for p in out if p in state}


class RestoreWorld(RuleBasedStateMachine):
    @initialize()
    def make_repo(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="ckpt-stateful-"))
        self.root = init_repo(self.tmp / "repo")
        for p in ("in/i", "out/o", "a/g"):
            (self.root / p).parent.mkdir(parents=True, exist_ok=True)
            (self.root / p).write_text(p + "\n")
        git(self.root, "add", ".")
        git(self.root, "commit", "-qm", "base")
        self.saved: dict[str, tuple] = {}  # id -> (files, index+flags, sparse?) at save time
        self.last_restore: tuple | None = None  # (files, index) before the last successful whole restore
        self.sparse = False
        self.save()

    def teardown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    # ---------------------------------------------------------------- the world moves
    def write(self, path, data):
        full = self.root / path
        if self.sparse and path.startswith("out/") and git(self.root, "ls-files", path):
            return  # writing a tracked file outside the cone is the user's own business
        for parent in list(full.parents)[: len(Path(path).parts) - 1]:
            if parent.exists() and not parent.is_dir():
                return
        full.parent.mkdir(parents=True, exist_ok=True)
        if full.is_dir():
            return
        full.write_bytes(data)
        self.last_restore = None

    def delete(self, path):
        full = self.root / path
        if full.is_file():
            full.unlink()
            self.last_restore = None

    def stage(self, path):
        git(self.root, "add", "-A", "--sparse", "--", path, check=False)
        self.last_restore = None

    def ignore_rule(self, d, pattern):
        target = self.root / ".git/info/exclude" if d == "info/exclude" else self.root / d / ".gitignore"
        if not target.parent.is_dir():
            return
        target.write_text(pattern + "\n")
        self.last_restore = None

    def index_flag(self, path, flag):
        if not git(self.root, "ls-files", path) or git(self.root, "ls-files", "-u", path):
            return
        if flag == "assume":
            git(self.root, "update-index", "--assume-unchanged", path)
        elif flag.startswith("skip"):
            git(self.root, "update-index", "--skip-worktree", path)
            if flag == "skip-absent" and (self.root / path).is_file():
                (self.root / path).unlink()
        else:
            git(self.root, "update-index", "--no-assume-unchanged", "--no-skip-worktree", path)
        self.last_restore = None

    def sparse_cone(self, on):
        if on == self.sparse:
            return
        args = ["sparse-checkout", "set", "in", "a"] if on else ["sparse-checkout", "disable"]
        if git(self.root, *args, check=False) is not None:
            self.sparse = (self.root / ".git/info/sparse-checkout").exists() and on
        self.last_restore = None

    def overlay(self, include):
        git(self.root, "config", "--unset-all", "ckpt.overlay.include", check=False)
        if include is not None:
            git(self.root, "config", "ckpt.overlay.include", include)
        self.last_restore = None

    def move_head(self, how):
        if how == "commit":
            git(self.root, "commit", "-q", "--allow-empty", "-m", "moved")
        else:
            git(self.root, "reset", "-q", "--soft", "HEAD~1", check=False)
        self.last_restore = None

    @rule(action=st.one_of(
        st.tuples(st.just("write"), st.sampled_from(PATHS), st.binary(max_size=8)),
        st.tuples(st.just("delete"), st.sampled_from(PATHS)),
        st.tuples(st.just("stage"), st.sampled_from(PATHS)),
        st.tuples(st.just("ignore_rule"), st.sampled_from(DIRS + ["info/exclude"]), st.sampled_from(PATTERNS)),
        st.tuples(st.just("index_flag"), st.sampled_from(["a/g", "in/i", "f", "a/b/h"]), st.sampled_from(["assume", "skip", "skip-absent", "clear"])),
        st.tuples(st.just("sparse_cone"), st.booleans()),
        st.tuples(st.just("move_head"), st.sampled_from(["commit", "back"])),
        st.tuples(st.just("overlay"), st.sampled_from(OVERLAYS)),
    ))
    def world_moves(self, action):
        getattr(self, action[0])(*action[1:])

    # ---------------------------------------------------------------- git ckpt
    def _cwd(self, sub):
        d = self.root / sub
        return d if d.is_dir() else self.root

    @rule()
    def save(self):
        res = ckpt(self.root, "save", "--allow-empty", "--json")
        cid = res.json()["result"]["id"]
        self.saved[cid] = (files_only(worktree_state(self.root)), index_with_flags(self.root), self.sparse)

    def _command(self, args, sub, allowed=(0, 1, 4)):
        before_files = files_only(worktree_state(self.root))
        before_index = index_with_flags(self.root)
        ignored = ignored_files(self.root)
        res = ckpt(self._cwd(sub), *args, rc=None)
        assert res.rc in allowed, res
        for line in res.out.splitlines():  # the pre-restore checkpoint can be a target later
            if line.startswith("saved current state as ") and line.endswith(" (pre-restore)"):
                self.saved[line.split()[4]] = (before_files, before_index, self.sparse)
        after = files_only(worktree_state(self.root))
        if res.rc != 0:  # refused: nothing changed
            assert after == before_files and index_with_flags(self.root) == before_index, res
            return res, before_files, before_index
        held = self._held()
        for p, v in ignored.items():  # ignored files are never touched, but for one an overlay holds
            assert after.get(p) == v or (v[0] == "file" and (p, v[2]) in held), (p, res)
        for p, v in before_files.items():  # nothing lost
            if p.startswith(b".git/") or after.get(p) == v:
                continue
            assert v[0] == "file" and (p, v[2]) in held, (p, v, res)
        return res, before_files, before_index

    def _held(self):
        """``(path, bytes)`` of every file a checkpoint holds, in its tree or its overlay."""
        import io
        import tarfile

        held = set()
        for ref in git(self.root, "for-each-ref", "--format=%(refname)", "refs/ckpt/").decode().split():
            if not ref.rsplit("/", 1)[1].isdigit():
                continue
            for rec in git(self.root, "ls-tree", "-r", "-z", ref).split(b"\0"):
                if rec:
                    info, path = rec.split(b"\t", 1)
                    held.add((path, git(self.root, "cat-file", "blob", info.split()[2].decode())))
            tar = git(self.root, "cat-file", "blob", f"{ref}^3:overlay.tar", check=False)
            if tar:
                with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
                    for m in archive.getmembers():
                        if m.isfile():
                            held.add((m.name.encode(), archive.extractfile(m).read()))
        return held

    @rule(k=st.integers(0, 4), by_path=st.sampled_from([None, None, None, "a", "f", "a/b"]), sub=st.sampled_from(CWDS))
    def restore(self, k, by_path, sub):
        if not self.saved:
            return
        ids = sorted(self.saved, key=lambda c: int(c.rsplit("/", 1)[1]))
        cid = ids[k % len(ids)]
        if git(self.root, "for-each-ref", "refs/ckpt/" + cid) == b"":
            return
        args = ["restore", cid] + (["--", os.path.relpath(self.root / by_path, self._cwd(sub))] if by_path else [])
        res, before_files, before_index = self._command(args, sub)
        if res.rc != 0 or by_path:
            self.last_restore = None
            return
        self.last_restore = (before_files, before_index)
        files, (stages, tags), sparse = self.saved[cid]
        assert ckpt(self.root, "diff", cid).out == "", cid  # the worktree is the checkpoint's
        if sparse == self.sparse and not self.sparse:
            assert index_with_flags(self.root)[0] == stages
            assert index_with_flags(self.root)[1] == tags

    @rule(sub=st.sampled_from(CWDS))
    def undo(self, sub):
        expect = self.last_restore
        # exit 2: nothing to undo (no restore here yet, or only ones that changed nothing)
        res, _f, _i = self._command(["undo"], sub, allowed=(0, 1, 2, 4))
        assert res.rc != 2 or res.err.startswith("error: nothing to undo"), res
        if res.rc == 0 and expect is not None:
            assert files_only(worktree_state(self.root)) == {p: v for p, v in expect[0].items()}, res
            assert index_with_flags(self.root) == expect[1], res
        self.last_restore = None

    @invariant()
    def sound(self):
        if hasattr(self, "root"):
            assert not (self.root / ".git/ckpt/RESTORE").exists()


def test_restore_world_state_machine():
    run_state_machine_as_test(RestoreWorld, settings=settings(
        max_examples=int(os.environ.get("CKPT_STATEFUL_EXAMPLES", "5")), stateful_step_count=int(os.environ.get("CKPT_STATEFUL_STEPS", "16")), deadline=None,
        suppress_health_check=list(HealthCheck), derandomize=True))
