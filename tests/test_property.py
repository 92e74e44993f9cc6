"""Property tests (Hypothesis): random trees of files, directories, symlinks, modes, empty and
binary files under awkward names (spaces, unicode, newlines, tabs, quotes, non-UTF-8 bytes), then
random sequences of edits, stagings, saves, restores and undos.  A plain-dict model of the
expected worktree and index must equal what is on disk after every step.

Bounded for CI: few examples, short sequences, no deadline.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ckpt, git, init_repo

NAMES = [b"a", b"b c", b"\xc3\xa9t\xc3\xa9", b"new\nline", b"\xff\xfe", b"-dash", b"x.txt", b"tab\there",
         b"q'uo\"te", b"\xe2\x98\x83", b"UPPER"]
DIRS = [b"d", b"sp ace", b"\xe2\x98\x83dir", b"deep/er"]
paths = st.one_of(st.sampled_from(NAMES), st.tuples(st.sampled_from(DIRS), st.sampled_from(NAMES)).map(lambda t: t[0] + b"/" + t[1]))
contents = st.one_of(st.just(b""), st.binary(max_size=24), st.sampled_from([b"line\r\n", b"a\nb\n", b"\x00\x01\x02", b"mixed\r\nends\n"]))
entries = st.one_of(
    st.tuples(st.just("file"), st.sampled_from([0o644, 0o755]), contents),
    st.tuples(st.just("link"), st.just(0), st.sampled_from([b"a", b"../outside", b"d/x.txt", b"nowhere", b"\xc3\xa9t\xc3\xa9"])),
)
ops = st.one_of(
    st.tuples(st.just("write"), paths, entries),
    st.tuples(st.just("delete"), paths),
    st.tuples(st.just("stage"), paths),
    st.tuples(st.just("save")),
    st.tuples(st.just("restore"), st.integers(0, 5)),
    st.tuples(st.just("undo")),
)


class Model:
    """The expected worktree (path → (kind, mode, bytes)) and index (path → (git mode, bytes))."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.rb = os.fsencode(root)
        self.files: dict[bytes, tuple[str, int, bytes]] = {}
        self.index: dict[bytes, tuple[int, bytes]] = {}

    # -- edits applied to the disk and the model together
    def _clear_conflicts(self, table: dict, path: bytes, on_disk: bool) -> None:
        parts = path.split(b"/")
        doomed = [p for p in table if p in {b"/".join(parts[:i]) for i in range(1, len(parts))} or p.startswith(path + b"/")]
        for p in doomed:
            del table[p]
            if on_disk:
                self._unlink(p)

    def _unlink(self, rel: bytes) -> None:
        full = os.path.join(self.rb, rel)
        if os.path.lexists(full):
            os.unlink(full)
        parent = os.path.dirname(rel)
        while parent:  # like git, leave no empty directories behind
            try:
                os.rmdir(os.path.join(self.rb, parent))
            except OSError:
                break
            parent = os.path.dirname(parent)

    def write(self, path: bytes, entry: tuple[str, int, bytes]) -> None:
        self._clear_conflicts(self.files, path, on_disk=True)
        full = os.path.join(self.rb, path)
        if os.path.lexists(full):
            os.unlink(full)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        kind, mode, data = entry
        if kind == "link":
            os.symlink(data, full)
        else:
            with open(full, "wb") as fh:
                fh.write(data)
            os.chmod(full, mode)
        self.files[path] = entry

    def delete(self, path: bytes) -> None:
        if path in self.files:
            del self.files[path]
            self._unlink(path)

    def stage(self, path: bytes) -> None:
        if path not in self.files:
            return
        git(self.root, "add", "-A", "--", os.fsdecode(path), env={"GIT_LITERAL_PATHSPECS": "1"})
        self._clear_conflicts(self.index, path, on_disk=False)
        kind, mode, data = self.files[path]
        self.index[path] = (0o120000 if kind == "link" else 0o100755 if mode == 0o755 else 0o100644, data)

    def stage_all(self) -> None:
        git(self.root, "add", "-A")
        self.index = {p: (0o120000 if k == "link" else 0o100755 if m == 0o755 else 0o100644, d) for p, (k, m, d) in self.files.items()}

    # -- what is really there
    def disk(self) -> dict[bytes, tuple[str, int, bytes]]:
        out = {}
        for dirpath, dirnames, filenames in os.walk(self.rb):
            if dirpath == self.rb:
                dirnames[:] = [d for d in dirnames if d != b".git"]
            for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, self.rb)
                st_ = os.lstat(full)
                if stat.S_ISLNK(st_.st_mode):
                    out[rel] = ("link", 0, os.readlink(full))
                else:
                    with open(full, "rb") as fh:
                        out[rel] = ("file", st_.st_mode & 0o777, fh.read())
        return out

    def real_index(self) -> dict[bytes, tuple[int, str]]:
        out = {}
        for rec in git(self.root, "ls-files", "-s", "-z").split(b"\0"):
            if rec:
                meta, _, path = rec.partition(b"\t")
                mode, oid, _stage = meta.split(b" ")
                out[path] = (int(mode, 8), oid.decode())
        return out

    def expected_index(self) -> dict[bytes, tuple[int, str]]:
        return {p: (m, hashlib.sha1(b"blob %d\0" % len(d) + d).hexdigest()) for p, (m, d) in self.index.items()}

    def check(self) -> None:
        assert self.disk() == self.files
        assert self.real_index() == self.expected_index()


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(initial=st.lists(st.tuples(paths, entries), min_size=1, max_size=8), steps=st.lists(ops, min_size=2, max_size=6))
def test_model_equals_disk_through_saves_and_restores(initial, steps):
    tmp = Path(tempfile.mkdtemp(prefix="ckpt-prop-"))
    try:
        root = init_repo(tmp / "r", commit=False)
        m = Model(root)
        for path, entry in initial:
            m.write(path, entry)
        m.stage_all()
        git(root, "commit", "-q", "--allow-empty", "-m", "initial")
        m.check()
        saved: list[tuple[dict, dict]] = []
        before_restore: list[tuple[dict, dict]] = []
        for op in steps:
            kind = op[0]
            if kind == "write":
                m.write(op[1], op[2])
            elif kind == "delete":
                m.delete(op[1])
            elif kind == "stage":
                m.stage(op[1])
            elif kind == "save":
                ckpt(root, "save", "--allow-empty", fsck=False)
                saved.append((dict(m.files), dict(m.index)))
            elif kind == "restore" and saved:
                n = op[1] % len(saved)
                before_restore.append((dict(m.files), dict(m.index)))
                ckpt(root, "restore", f"default/{_number(root, n)}", fsck=False)
                m.files, m.index = dict(saved[n][0]), dict(saved[n][1])
            elif kind == "undo" and before_restore:
                ckpt(root, "undo", fsck=False)
                files, index = before_restore.pop()
                before_restore.append((dict(m.files), dict(m.index)))  # undo is itself a restore
                m.files, m.index = files, index
            m.check()
        ckpt(root, "log", "--verify", fsck=False)
        if saved:
            ckpt(root, "check", "--all", fsck=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _number(root: Path, nth_manual: int) -> int:
    """The checkpoint number of the nth manual save (pre-restore saves take numbers too)."""
    res = ckpt(root, "list", "--json", fsck=False).json()["result"]
    manual = [int(r["id"].rsplit("/", 1)[1]) for r in res if r["kind"] == "manual"]
    return sorted(manual)[nth_manual]
