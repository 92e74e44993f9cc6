"""Inputs of the benchmark, built on the fly in a temporary directory.

* a sealed environment (HOME, XDG dirs, git config, PATH with this venv's ``git-ckpt`` first,
  byte-code cache under the temp dir), so nothing reads or writes the user's own files;
* :func:`real_tree`: a copy of this machine's Python standard library (``sysconfig``'s
  ``stdlib`` path, ``__pycache__`` left out), committed;
* :func:`synthetic_tree`: a tree of many small files, committed;
* in both, a fixture folder of a few MB under an ignored path that ``.ckpt.toml`` names in
  ``[overlay] include``;
* the one change every pair measures (:meth:`Tree.apply_change`: 10 modified files, 3 new,
  1 deleted, one fixture file changed, half of it staged) and the "mess" restores undo.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path

BIN = Path(sys.executable).parent  # the venv's bin: python and git-ckpt
FIXTURE_DIR = "bench-fixtures"
TASK = "bench"


class BenchError(RuntimeError):
    """A step of the benchmark failed (its command and output are in the message)."""


def make_env(tmp: Path) -> dict[str, str]:
    """A sealed environment for every process the benchmark starts."""
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = Bench User\n\temail = bench@example.com\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n[tag]\n\tgpgsign = false\n"
        "[core]\n\tautocrlf = false\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n"
        "[advice]\n\tdetachedHead = false\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "XDG_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's python caches byte code; so do we
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local/state"),
        GIT_CONFIG_GLOBAL=str(gitconfig),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_EDITOR="true",
        GIT_PAGER="cat",
        PAGER="cat",
        LC_ALL="C.UTF-8",
        TZ="UTC",
        PYTHONPYCACHEPREFIX=str(tmp / "pycache"),
        PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    return env


def run(args: list[str] | str, cwd: Path, env: dict[str, str], *, input: bytes | None = None,
        check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run a process (a string runs through ``bash -c``); raise :class:`BenchError` on failure."""
    cmd = ["bash", "-c", args] if isinstance(args, str) else args
    proc = subprocess.run(cmd, cwd=cwd, env=env, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and proc.returncode != 0:
        raise BenchError(f"{args!r} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-2000:]}"
                         f"{proc.stdout.decode(errors='replace')[-500:]}")
    return proc


def timed(args: list[str] | str, cwd: Path, env: dict[str, str]) -> float:
    """Wall-clock seconds of one whole-process run (which must succeed)."""
    cmd = ["bash", "-c", args] if isinstance(args, str) else args
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise BenchError(f"{args!r} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-2000:]}")
    return elapsed


# ---------------------------------------------------------------------------------- trees


@dataclass
class Tree:
    """A committed repository the pairs run in, with the files its changes touch."""

    name: str
    root: Path
    env: dict[str, str]
    files: int
    bytes: int
    fixtures: dict[str, bytes]
    changed: list[str] = field(default_factory=list)   # the 10 modified files of the change
    deleted: str = ""                                    # the 1 deleted file
    mess: list[str] = field(default_factory=list)      # 10 other files a "mess" modifies
    originals: dict[str, bytes] = field(default_factory=dict)

    def git(self, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
        """``git ARGS`` in this tree; stdout bytes."""
        return run(["git", *args], self.root, self.env, input=input, check=check).stdout

    def _write(self, rel: str, data: bytes) -> None:
        path = self.root / rel
        try:
            if path.read_bytes() == data:
                return  # unchanged: keep its mtime, as an editor that saved nothing would
        except OSError:
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def fixture_change(self, token: str) -> tuple[str, bytes]:
        """The changed fixture file for ``token``: its path and new bytes."""
        name = sorted(self.fixtures)[0]
        data = bytearray(self.fixtures[name])
        stamp = f"<bench {token}>".encode()
        data[: len(stamp)] = stamp
        return f"{FIXTURE_DIR}/{name}", bytes(data)

    def apply_change(self, token: str, *, stage: bool = True) -> list[tuple[str, bytes]]:
        """Make the worktree "base + the change" (content depends only on ``token``): 10 modified
        files, 3 new, 1 deleted, one fixture file changed; the first 5 modified files and the
        first new file staged when ``stage``.  Returns the (path, bytes) written."""
        written = []
        for i, rel in enumerate(self.changed):
            data = self.originals[rel] + f"\n# bench change {token} {i}\n".encode()
            self._write(rel, data)
            written.append((rel, data))
        for j in range(3):
            rel = f"bench_new_{j}.txt"
            data = f"new file {j} of change {token}\n".encode() * 20
            self._write(rel, data)
            written.append((rel, data))
        with_deleted = self.root / self.deleted
        if with_deleted.exists():
            with_deleted.unlink()
        rel, data = self.fixture_change(token)
        self._write(rel, data)
        written.append((rel, data))
        self.reset_fixtures(keep=rel)
        if stage:
            self.git("add", "--", *self.changed[:5], "bench_new_0.txt")
        return written

    def apply_mess(self, token: str) -> None:
        """Modify 10 tracked files the change does not touch (content unique to ``token``)."""
        for rel in self.mess:
            self._write(rel, self.originals[rel] + f"\n# bench mess {token}\n".encode())

    def reset_fixtures(self, keep: str | None = None) -> None:
        """Write every fixture file back to its original bytes (except ``keep``)."""
        for name, data in self.fixtures.items():
            rel = f"{FIXTURE_DIR}/{name}"
            if rel != keep:
                path = self.root / rel
                if not path.exists() or path.read_bytes() != data:
                    path.write_bytes(data)

    def reset_base(self) -> None:
        """Back to the committed base: worktree, index, untracked files, fixtures."""
        self.git("reset", "-q", "--hard", "HEAD")
        self.git("clean", "-fdq")
        self.reset_fixtures()

    def fingerprint(self) -> str:
        """A digest of the state restore must reproduce: the worktree as ``git add -A`` stores
        it, the index tree, and the fixture files' bytes."""
        idx = self.root / ".git" / "bench-fp-index"
        shutil.copyfile(self.root / ".git" / "index", idx)
        env = dict(self.env, GIT_INDEX_FILE=str(idx))
        run(["git", "add", "-A"], self.root, env)
        wtree = run(["git", "write-tree"], self.root, env).stdout
        idx.unlink()
        itree = self.git("write-tree")
        h = hashlib.sha256(wtree + itree)
        fx = self.root / FIXTURE_DIR
        for name in sorted(os.listdir(fx)):
            h.update(name.encode() + b"\0" + (fx / name).read_bytes())
        return h.hexdigest()


def _fixtures(total: int) -> dict[str, bytes]:
    """About ``total`` bytes of fixtures: compressible text files and a few binary ones."""
    rng = random.Random(6)
    words = [f"w{rng.randrange(5000)}" for _ in range(2000)]
    out: dict[str, bytes] = {}
    n_text, n_bin = 20, 5
    size = max(256, total // (n_text + n_bin))
    for i in range(n_text):
        text = " ".join(rng.choice(words) for _ in range(size // 5))
        out[f"case{i:02d}.json"] = ('{"case": %d, "text": "%s"}\n' % (i, text)).encode()[:size]
    for i in range(n_bin):
        out[f"blob{i}.bin"] = rng.randbytes(size)
    return out


def _init(root: Path, env: dict[str, str], fixtures: dict[str, bytes]) -> None:
    (root / ".gitignore").write_text(f"/{FIXTURE_DIR}/\n")
    (root / ".ckpt.toml").write_text(f'[overlay]\ninclude = ["/{FIXTURE_DIR}/"]\n')
    fx = root / FIXTURE_DIR
    fx.mkdir()
    for name, data in fixtures.items():
        (fx / name).write_bytes(data)
    run(["git", "init", "-q", "-b", "main"], root, env)
    run(["git", "add", "-A"], root, env)
    run(["git", "commit", "-q", "-m", "base"], root, env)


def _finish(name: str, root: Path, env: dict[str, str], fixtures: dict[str, bytes]) -> Tree:
    _init(root, env, fixtures)
    listing = [p.decode() for p in run(["git", "ls-files", "-z"], root, env).stdout.split(b"\0") if p]
    total = 0
    candidates = []
    for rel in listing:
        try:
            st = os.lstat(root / rel)
        except OSError:
            continue
        total += st.st_size
        if rel.endswith((".py", ".txt")) and 200 <= st.st_size <= 64 * 1024 and rel not in (".gitignore",):
            candidates.append(rel)
    candidates.sort()
    rng = random.Random(66)
    pick = rng.sample(candidates, 21)
    tree = Tree(name, root, env, len(listing), total, fixtures, changed=pick[:10], deleted=pick[10], mess=pick[11:21])
    tree.originals = {rel: (root / rel).read_bytes() for rel in pick}
    return tree


def stdlib_source() -> Path:
    """This machine's standard library directory (``sysconfig.get_paths()["stdlib"]``)."""
    return Path(sysconfig.get_paths()["stdlib"])


def real_tree(tmp: Path, env: dict[str, str], *, size: str, fixture_bytes: int) -> Tree:
    """A committed copy of the standard library.

    ``size``: ``full`` (the whole directory, ``site-packages`` included when it lives inside it,
    as on a pyenv or system python), ``quick`` (without ``site-packages``), ``smoke`` (only the
    top-level modules).  ``__pycache__`` directories are never copied.
    """
    src = stdlib_source()
    root = tmp / "real"

    def ignore(directory: str, names: list[str]) -> list[str]:
        skip = [n for n in names if n == "__pycache__"]
        if Path(directory) == src:
            if size != "full":
                skip += [n for n in names if n == "site-packages"]
            if size == "smoke":
                skip += [n for n in names if (Path(directory) / n).is_dir()]
        return skip

    shutil.copytree(src, root, symlinks=True, ignore=ignore)
    return _finish("stdlib", root, env, _fixtures(fixture_bytes))


def synthetic_tree(tmp: Path, env: dict[str, str], *, files: int, fixture_bytes: int) -> Tree:
    """A committed tree of ``files`` small text files, 100 per directory, two levels deep."""
    root = tmp / "synthetic"
    root.mkdir()
    for i in range(files):
        d = root / f"d{i // 1000:03d}" / f"s{(i // 100) % 10}"
        if i % 100 == 0:
            d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i % 100:02d}.txt").write_bytes(
            (f"synthetic file {i}\n" + "".join(f"line {j} of {i}\n" for j in range(i % 13 + 8))).encode()
        )
    return _finish(f"synthetic-{files // 1000}k" if files >= 1000 else f"synthetic-{files}", root, env,
                   _fixtures(fixture_bytes))
