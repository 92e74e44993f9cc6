"""The git layer: the only module that touches pygit2 or runs the ``git`` executable.

Objects, refs and notes go through pygit2 (libgit2); in a repository using the reftable ref
backend (``extensions.refstorage = reftable``, Git 3.0's default) refs go through the git
executable instead (``for-each-ref``, ``rev-parse``, and ``update-ref --stdin`` transactions with
old values), behind the same :class:`Repo` methods.  The index and the worktree go through the
user's ``git`` executable, because libgit2 does not implement everything real indexes use (split
index, sparse index, fsmonitor, external filter drivers such as Git LFS) and because ``git add``
and ``git checkout-index`` are the definition of "content as git stores it" and "bytes as git
writes them".  Every ref write goes through :meth:`Repo.update_ref`, a compare-and-swap under the
same ``.lock`` files git uses.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Collection, Iterator, NamedTuple, Sequence, TypeVar, cast

from . import fsutil
from .errors import BusyError, CkptError, ConfigError, CorruptError, IOFailure, NotFoundError, RepoError

@dataclass(frozen=True)
class ObjectFormat:
    """An object format (``extensions.objectformat``): its name, the length of its hex ids, and
    the ids git gives the null object, the empty tree and the empty blob in it."""

    name: str
    hexsz: int
    zero: str
    empty_tree: str
    empty_blob: str


OBJECT_FORMATS = {
    "sha1": ObjectFormat("sha1", 40, "0" * 40, "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
                         "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"),
    "sha256": ObjectFormat("sha256", 64, "0" * 64, "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
                           "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813"),
}
# A full hex object id of either format: what stored records (manifest fields, note names, cache
# files) may hold.  Code that needs this repository's format uses ``Repo.object_format``.
OID_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# SHA-1 ids (the only format libgit2 can open today); per repository: ``Repo.zero_oid`` etc.
ZERO_OID = OBJECT_FORMATS["sha1"].zero
EMPTY_BLOB = OBJECT_FORMATS["sha1"].empty_blob
EMPTY_TREE = OBJECT_FORMATS["sha1"].empty_tree
_HEX_OID = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")

# Variables git sets for hooks and subcommands that would point our own git calls at another
# index or repository; we pass the locations explicitly instead.
_LOCATION_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
)


class RefConflict(BusyError):
    """A compare-and-swap ref update found another value than expected.

    ``name`` is the ref, ``expected`` and ``actual`` are hex object ids or None (absent).
    Callers that can rebuild on the new value catch this and retry.
    """

    def __init__(self, name: str, expected: str | None, actual: str | None) -> None:
        super().__init__(
            f"ref {name} changed underneath us (expected {expected or 'absent'}, found {actual or 'absent'})",
            "another git ckpt process wrote it at the same time; run the command again",
        )
        self.name = name
        self.expected = expected
        self.actual = actual


def fault(step: str) -> None:
    """Test-only fault injection at ``step`` when ``$GIT_CKPT_FAULT`` names it: SIGKILL this
    process, or, when ``$GIT_CKPT_FAULT_RUN`` holds a shell command, run that command and go on
    (a concurrent writer acting at exactly this point, e.g. ``git update-ref`` between our read
    of a ref and our compare-and-swap)."""
    if os.environ.get("GIT_CKPT_FAULT") == step:
        command = os.environ.get("GIT_CKPT_FAULT_RUN")
        if command:
            subprocess.run(["/bin/sh", "-c", command], check=False)
            return
        os.kill(os.getpid(), 9)


T = TypeVar("T")

_HEX = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_BAD_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|/\.|\.lock(?:/|$)|[./]$")


class Oid(str):
    """A full object id: 40 lowercase hex digits (SHA-1) or 64 (SHA-256), checked when made.

    A ``str``, so it prints, compares and serialises as the hex git shows; :class:`ValueError`
    for anything else.  Mirrors git-revise's ``Oid``."""

    __slots__ = ()

    def __new__(cls, value: object) -> "Oid":
        if type(value) is Oid:
            return value
        text = str(value)
        if not _HEX.fullmatch(text):
            raise ValueError(f"not an object id: {text[:80]!r}")
        return super().__new__(cls, text)


class RefName(str):
    """A full ref name: ``HEAD`` or ``refs/...`` as ``git check-ref-format`` accepts it (no
    ``..``, control characters, spaces, ``~^:?*[\\``, ``@{``, empty or dot-led components, no
    ``.lock`` component end, no trailing ``/`` or ``.``); :class:`ValueError` otherwise."""

    __slots__ = ()

    def __new__(cls, value: object) -> "RefName":
        if type(value) is RefName:
            return value
        text = str(value)
        if text != "HEAD" and (not text.startswith("refs/") or _BAD_REF.search(text)):
            raise ValueError(f"not a ref name: {text[:80]!r}")
        return super().__new__(cls, text)


@dataclass(frozen=True)
class CommitInfo:
    """A commit as read: its ``id``, its ``tree`` and its ``parents`` in order."""

    id: Oid
    tree: Oid
    parents: tuple[Oid, ...]

#: How many times :meth:`Repo.swap` rebuilds after losing a race before giving up.
SWAP_ATTEMPTS = 200


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a tree listing or diff side: ``path`` as bytes (relative to the tree
    listed), octal ``mode`` (``0o100644``, ``0o40000``, …), ``oid`` hex."""

    path: bytes
    mode: int
    oid: str

    @property
    def is_tree(self) -> bool:
        """Whether the entry is a subtree (mode ``040000``)."""
        return self.mode == 0o40000


class Change(NamedTuple):
    """One changed path of :meth:`Repo.diff_trees`: the ``old`` and ``new`` entries (None when
    absent on that side); unpacks as ``(old, new)``."""

    old: TreeEntry | None
    new: TreeEntry | None

    @property
    def path(self) -> bytes:
        """The path that changed (the same on both sides: renames are not detected)."""
        entry = self.new if self.new is not None else self.old
        assert entry is not None, "a change has at least one side"
        return entry.path

    @property
    def status(self) -> str:
        """``A`` added, ``D`` deleted, ``M`` changed (:func:`change_status`)."""
        return change_status(self.old, self.new)


def change_status(old: TreeEntry | None, new: TreeEntry | None) -> str:
    """The status letter of a :meth:`Repo.diff_trees` pair: ``A`` added, ``D`` deleted, ``M``."""
    return "A" if old is None else "D" if new is None else "M"


# Repository extensions (``core.repositoryformatversion = 1``) git ckpt serves, and the values it
# serves of those that have one: objects through libgit2, refs through libgit2 (files) or the git
# executable (reftable).  SHA-256 object ids are refused: libgit2 is built without them.
SERVED_EXTENSIONS: dict[str, tuple[str, ...] | None] = {
    "noop": None,
    "preciousobjects": None,
    "worktreeconfig": None,
    "relativeworktrees": None,
    "objectformat": ("sha1",),
    "refstorage": ("files", "reftable"),
}


class _LazyPygit2:
    """Stands for the ``pygit2`` module until its first use, then imports it (45-70 ms: libgit2,
    ``ssl``, its enums) and puts the module in its place.  A command that reads everything it
    needs through the git executable (``list`` through one ``for-each-ref``) never pays for it."""

    def __getattr__(self, name: str) -> Any:
        import pygit2 as module

        # libgit2 opens a reftable repository only when told the extension is known; it then
        # serves its objects, config and ignore rules, while every ref goes through the git
        # executable (libgit2 has no reftable backend: it would read no refs and write loose ones
        # git never sees).
        module.option(module.enums.Option.SET_EXTENSIONS, ["refstorage"], 1)
        globals()["pygit2"] = module
        return getattr(module, name)


if TYPE_CHECKING:
    import pygit2
else:
    pygit2 = _LazyPygit2()


def _served_list() -> str:
    return ", ".join(f"{k} ({'/'.join(v)})" if v else k for k, v in SERVED_EXTENSIONS.items())


def unsupported_extension(name: str, value: str | None) -> RepoError:
    """The refusal for a repository using extension ``extensions.NAME`` (= ``value``), naming it and
    what git ckpt supports instead (exit 3)."""
    name = name.lower()
    shown = f"extensions.{name}" + (f" = {value}" if value is not None else "")
    if name in ("objectformat", "compatobjectformat"):
        return RepoError(
            f"this repository uses SHA-256 object ids, which libgit2 {pygit2.LIBGIT2_VERSION} (under git ckpt) "
            f"cannot open ({shown})",
            "git ckpt works in SHA-1 repositories (git's default, git init --object-format=sha1), with the "
            "files or the reftable ref backend; nothing was changed",
        )
    return RepoError(
        f"this repository uses the repository extension {shown}, which git ckpt does not support",
        f"git ckpt supports the extensions {_served_list()}; nothing was changed",
    )


def git_version() -> tuple[int, int, int] | None:
    """The version of the ``git`` on PATH as ``(major, minor, patch)``, or None when there is none
    (``git --version``; asked once per process)."""
    global _GIT_VERSION
    if _GIT_VERSION is None:
        try:
            out = subprocess.run(["git", "--version"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
        except OSError:
            return None
        nums = [int(p) for p in out.decode("ascii", "replace").split()[2].split(".")[:3] if p.isdigit()] if out.count(b" ") >= 2 else []
        _GIT_VERSION = tuple((nums + [0, 0, 0])[:3])  # type: ignore[assignment]
    return _GIT_VERSION


_GIT_VERSION: tuple[int, int, int] | None = None
# The first git release that reads and writes reftable repositories.
REFTABLE_GIT = (2, 45, 0)


def check_repository_format(git_dir: Path) -> None:
    """Refuse (:class:`RepoError`, exit 3) a repository whose ``config`` declares an extension, or
    an extension value, git ckpt cannot serve -- before libgit2 opens it, so the message names
    the extension.  Mirrors git's ``verify_repository_format()``: extensions count only with
    ``core.repositoryformatversion >= 1``.  ``git_dir`` may be a linked worktree's; the config read
    is the common directory's.
    """
    common = git_dir / "commondir"
    with contextlib.suppress(OSError):
        if common.is_file():
            git_dir = (git_dir / common.read_text().strip()).resolve()
    path = git_dir / "config"
    if not path.is_file():
        return  # libgit2 reports what is missing
    try:
        conf = pygit2.Config(str(path))
        version = int(conf["core.repositoryformatversion"] or 0) if "core.repositoryformatversion" in conf else 0
        extensions = [(e.name.split(".", 1)[1].lower(), e.value) for e in conf if e.name.lower().startswith("extensions.")]
    except (pygit2.GitError, ValueError, KeyError):
        return  # an unreadable config: libgit2 says what is wrong with it
    if version < 1:
        return
    for name, value in extensions:
        if name not in SERVED_EXTENSIONS:
            raise unsupported_extension(name, value)
        allowed = SERVED_EXTENSIONS[name]
        if allowed is not None and (value or "").lower() not in allowed:
            raise unsupported_extension(name, value)
        if name == "refstorage" and (value or "").lower() == "reftable":
            have = git_version()
            if have is not None and have < REFTABLE_GIT:
                raise RepoError(
                    f"this repository uses the reftable ref backend (extensions.refstorage = reftable), which "
                    f"the git on PATH ({'.'.join(map(str, have))}) cannot read",
                    f"put git {'.'.join(map(str, REFTABLE_GIT[:2]))} or newer first on PATH; git ckpt serves reftable "
                    "repositories through it; nothing was changed",
                )


def ref_number(text: str) -> int | None:
    """N of a checkpoint ref's last component (``refs/ckpt/T/N``) or of an id ``T/N``: ASCII
    decimal digits, no leading zero, at most 9 digits, as ``save`` writes them; None for
    anything else (``²`` and ``٣`` are digits to :meth:`str.isdigit` but not to :func:`int`'s
    grammar here, ``007``, ``+1``, ``1e3``).  The one parser for every N read from a ref name,
    a ledger event or user input, so a crafted name cannot reach ``int()`` unchecked."""
    if 0 < len(text) <= 9 and text.isascii() and text.isdigit() and text[0] != "0":
        return int(text)
    return None


class Repo:
    """An open, non-bare repository with a worktree.

    Attributes: ``workdir`` (Path, the worktree root), ``git_dir`` (Path, this worktree's
    ``$GIT_DIR``), ``common_dir`` (Path, where refs and objects live).  The pygit2 Repository
    is private: every object, ref and config read and write is a method here, so that this
    class is the only holder of pygit2 objects (and a second ref backend fits behind it).
    Construct with :meth:`discover`.
    """

    def __init__(self, pg: pygit2.Repository | None, *, located: tuple[Path, Path, str] | None = None) -> None:
        # ``located``: (worktree root, git dir, object format) as ``git rev-parse`` found them
        # (:meth:`discover` with ``lazy``); libgit2 then opens the repository on first use.
        self._pg_open = pg
        self._idents: dict[str, tuple[str, str]] = {}  # signature(): who → (name, email)
        if located is not None:
            self.workdir, self.git_dir, fmt = located
        else:
            assert pg is not None
            if pg.is_bare or pg.workdir is None:
                raise RepoError(
                    "this is a bare repository; git ckpt checkpoints a working tree",
                    "run it inside a clone or a linked worktree (git worktree add)",
                )
            self.workdir = Path(pg.workdir).resolve()
            self.git_dir = Path(pg.path).resolve()
            # object ids of this repository (SHA-256 repositories are refused on opening, for now)
            try:
                fmt = str(pg.config["extensions.objectformat"]).lower()
            except (KeyError, ValueError, pygit2.GitError):
                fmt = "sha1"
        common = self.git_dir / "commondir"
        if common.exists():
            self.common_dir = (self.git_dir / common.read_text().strip()).resolve()
        else:
            self.common_dir = self.git_dir
        self._git_env: dict[str, str] | None = None
        self._backend: str | None = None
        if located is not None:  # its config declares no extension (_locate_with_git): no refStorage
            self._backend = "reftable" if (self.common_dir / "reftable").is_dir() else "files"
        self.object_format = OBJECT_FORMATS.get(fmt, OBJECT_FORMATS["sha1"])
        self.zero_oid = self.object_format.zero
        self.empty_tree = self.object_format.empty_tree
        self.empty_blob = self.object_format.empty_blob
        # loose refs the last refs_under() read (for pack_refs_if_many)
        self.loose_refs_seen = 0
        # told once when a command has to wait for another one's lock (the CLI prints it)
        self.on_wait: Callable[[str], None] | None = None
        self._worktree_lock: str | None = None  # "shared"/"exclusive" while this Repo holds it

    @property
    def _pg(self) -> pygit2.Repository:
        """The libgit2 repository, opened on first use when :meth:`discover` was ``lazy``."""
        pg = self._pg_open
        if pg is None:
            try:
                pg = pygit2.Repository(str(self.git_dir))
            except pygit2.GitError as exc:
                raise RepoError(f"cannot open the repository: {exc}",
                                "check that .git is readable and that git itself can use it (git status)") from None
            if pg.workdir is None or Path(pg.workdir).resolve() != self.workdir:
                pg.workdir = str(self.workdir)
            self._pg_open = pg
        return pg

    # ---------------------------------------------------------------- opening

    @classmethod
    def discover(cls, start: str | os.PathLike[str] | None = None, git_dir: str | None = None,
                 work_tree: str | None = None, *, lazy: bool = False) -> "Repo":
        """Open the repository containing ``start`` (default: the current directory).

        ``git_dir`` (from ``$GIT_DIR``, read by the CLI) opens that repository directly and
        ``work_tree`` (``$GIT_WORK_TREE``) sets its worktree.
        Raises :class:`RepoError` outside a repository or in a bare one; mirrors
        ``git rev-parse --git-dir`` discovery.

        ``lazy``: find the repository with one ``git rev-parse`` and import pygit2 only when a
        method needs libgit2 (a command that only runs git, ``list``, never loads it).  Anything
        unusual (``$GIT_DIR`` and the other location variables set, git refusing, a bare
        repository, a config that declares ``extensions.*``) takes the libgit2 path below, so
        errors are the same either way.
        """
        if lazy and not git_dir and not work_tree:
            found_lazily = cls._locate_with_git(start)
            if found_lazily is not None:
                return cls(None, located=found_lazily)
        try:
            found: str | None
            if git_dir:
                found = git_dir
            else:
                found = pygit2.discover_repository(str(start or os.getcwd()))
                if found is None:
                    raise RepoError(
                        "not a git repository (or any of the parent directories)",
                        "run git ckpt inside a git worktree, or create one with git init",
                    )
            check_repository_format(Path(found))
            pg = pygit2.Repository(found)
            if work_tree:  # $GIT_WORK_TREE, as git honours it
                pg.workdir = os.path.abspath(work_tree)
        except pygit2.GitError as exc:
            text = str(exc)
            if "unsupported extension name extensions." in text:
                name = text.rsplit("extensions.", 1)[1].strip().strip("'\"")
                raise unsupported_extension(name, None) from None
            if "object format" in text or "objectformat" in text.lower():
                raise unsupported_extension("objectformat", "sha256") from None
            raise RepoError(f"cannot open the repository: {exc}",
                            "check that .git is readable and that git itself can use it (git status)") from None
        return cls(pg)

    @staticmethod
    def _locate_with_git(start: str | os.PathLike[str] | None) -> tuple[Path, Path, str] | None:
        """``(worktree root, git dir, object format)`` from ``git rev-parse``, or None when
        :meth:`discover` should take the libgit2 path (see there)."""
        if any(v in os.environ for v in _LOCATION_VARS):
            return None
        try:
            proc = subprocess.run(["git", "rev-parse", "--absolute-git-dir", "--show-toplevel", "--show-object-format"],
                                  cwd=start or None, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError:
            return None
        lines = proc.stdout.decode("utf-8", "surrogateescape").split("\n")
        if proc.returncode != 0 or len(lines) != 4 or not lines[0] or not lines[1] or lines[3]:
            return None
        git_dir, top = Path(lines[0]).resolve(), Path(lines[1]).resolve()
        common = git_dir / "commondir"
        try:
            config_dir = (git_dir / common.read_text().strip()).resolve() if common.exists() else git_dir
            config = (config_dir / "config").read_bytes()
        except OSError:
            return None
        if b"extensions" in config.lower():  # check_repository_format decides (through libgit2)
            return None
        return top, git_dir, lines[2]

    # ---------------------------------------------------------------- git binary

    def git_env(self, index_file: str | os.PathLike[str] | None = None) -> dict[str, str]:
        """The environment for our own ``git`` calls: location variables pinned to this repository."""
        if self._git_env is None:
            env = {k: v for k, v in os.environ.items() if k not in _LOCATION_VARS}
            env["GIT_DIR"] = str(self.git_dir)
            env["GIT_WORK_TREE"] = str(self.workdir)
            env["GIT_LITERAL_PATHSPECS"] = "1"
            env.setdefault("GIT_TERMINAL_PROMPT", "0")
            self._git_env = env
        env = dict(self._git_env)
        if index_file is not None:
            env["GIT_INDEX_FILE"] = str(index_file)
        return env

    def git(
        self,
        *args: str | bytes,
        input: bytes | None = None,
        index_file: str | os.PathLike[str] | None = None,
        check: bool = True,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``git ARGS`` in the worktree root and return the completed process (stdout as bytes).

        ``index_file`` sets ``GIT_INDEX_FILE`` (a temporary index); ``check`` raises a
        :class:`CkptError` carrying git's own first error line when git exits non-zero.
        """
        full_env = self.git_env(index_file)
        if env:
            full_env.update(env)
        try:
            proc = subprocess.run(
                ["git", *args],
                input=input,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.workdir,
                env=full_env,
            )
        except FileNotFoundError:
            raise RepoError("the git executable was not found on PATH", "install git or fix PATH") from None
        if proc.returncode in (-signal.SIGINT, 128 + signal.SIGINT):
            raise KeyboardInterrupt  # Ctrl-C reached git too: report it as an interruption
        if check and proc.returncode != 0:
            raise git_failure(args, proc)
        return proc

    # ---------------------------------------------------------------- state

    def in_progress(self) -> str | None:
        """Name the operation in progress in this worktree (merge, rebase, …) or None."""
        g = self.git_dir
        for name, what in (
            ("rebase-merge", "a rebase"),
            ("rebase-apply", "a rebase or am"),
            ("MERGE_HEAD", "a merge"),
        ):
            if (g / name).exists():
                return what
        for name, what in (("CHERRY_PICK_HEAD", "a cherry-pick"), ("REVERT_HEAD", "a revert")):
            # pseudorefs: files in the files backend, entries of the reftable stack otherwise
            if (self.read_ref(name) is not None) if self.ref_backend == "reftable" else (g / name).exists():
                return what
        return None

    def check_index_unlocked(self) -> None:
        """Raise :class:`BusyError` when ``index.lock`` is held (another git process is running)."""
        if (self.git_dir / "index.lock").exists():
            raise BusyError(
                f"the index is locked: {self.git_dir / 'index.lock'} exists",
                "wait for the other git process to finish; if none is running, remove that file",
            )

    def head(self) -> tuple[str | None, str | None]:
        """Return ``(commit id or None if unborn, branch ref name or None if detached)``."""
        if self.ref_backend == "reftable":
            sym = self.git("symbolic-ref", "-q", "HEAD", check=False)
            target = sym.stdout.decode("utf-8", "surrogateescape").strip() if sym.returncode == 0 else ""
            return self.read_ref("HEAD"), target or None
        pg = self._pg
        branch: str | None = None
        try:
            ref = pg.references.get("HEAD")
            if ref is not None and ref.type == pygit2.enums.ReferenceType.SYMBOLIC:
                branch = str(ref.target)
        except pygit2.GitError:
            pass
        if pg.head_is_unborn:
            return None, branch
        try:
            return str(pg.head.target), branch
        except pygit2.GitError:
            return None, branch

    def config_get(self, key: str) -> str | None:
        """A git config value (None when unset or unreadable).  Read by libgit2, or by ``git
        config`` when ``git -c`` passed settings in the environment (libgit2 ignores those) or
        the value is not UTF-8 (a Latin-1 ``core.hooksPath``: its bytes kept as surrogate
        escapes, as :func:`os.fsencode` gives them back, never read as unset)."""
        if "GIT_CONFIG_PARAMETERS" not in os.environ and "GIT_CONFIG_COUNT" not in os.environ:
            try:
                return str(self._pg.config[key])
            except UnicodeDecodeError:
                pass
            except (KeyError, ValueError, pygit2.GitError):
                return None
        proc = self.git("config", "--get", key, check=False)
        return _text(proc.stdout).removesuffix("\n") if proc.returncode == 0 else None

    def config_entries(self, prefix: str) -> list[tuple[str, str]]:
        """Every git config entry whose name starts with ``prefix`` (e.g. ``ckpt.``), as
        ``(name, value)`` in the order git reads them (system, global, local, worktree, then
        ``git -c``), multi-valued keys once per value.  Names as git prints them: section and
        key lowercase, subsection as written.  Read by libgit2, or by ``git config -z
        --get-regexp`` when ``git -c`` passed settings in the environment (libgit2 ignores
        those).  A key with no value (``[ckpt] flag``) reads as ``""``.  Raises
        :class:`ConfigError` for a config file git cannot parse, or an entry under ``prefix``
        whose name or value is not UTF-8 (decoded once, here: no surrogate reaches a verifier
        definition, a JSON line or a hash)."""
        raw: list[tuple[bytes, bytes]] | None = None
        if "GIT_CONFIG_PARAMETERS" not in os.environ and "GIT_CONFIG_COUNT" not in os.environ:
            try:  # the bytes, as git prints them
                want = prefix.encode()
                raw = [(e.raw_name, e.raw_value or b"") for e in self._pg.config if e.raw_name.startswith(want)]
            except UnicodeDecodeError:
                pass  # libgit2 decodes every name it lists: a Latin-1 name anywhere is git's to read
            except pygit2.GitError as exc:
                raise ConfigError(f"cannot read git config: {exc}") from None
        if raw is None:
            proc = self.git("config", "-z", "--get-regexp", "^" + re.escape(prefix), check=False)
            if proc.returncode == 1 and not proc.stderr.strip():
                return []  # no such entry
            if proc.returncode != 0:
                raise ConfigError(f"cannot read git config: {git_failure(('config',), proc).message}")
            raw = [(name, value) for name, _, value in (rec.partition(b"\n") for rec in proc.stdout.split(b"\0") if rec)]
        out = []
        for name, value in raw:
            try:
                out.append((name.decode(), value.decode()))
            except UnicodeDecodeError:
                shown = name.decode("utf-8", "backslashreplace")
                raise ConfigError(f"git config {shown} is not UTF-8 text", f"git config --edit (or fix the file that sets {shown})") from None
        return out

    def config_bool(self, key: str) -> bool:
        """Whether ``git config --type=bool --get key`` prints ``true``: git's own reading (an
        empty value is false, a key without ``=`` true, ``'true '`` or ``2x`` no boolean at all),
        so False when unset or not a boolean.  The installed hooks ask git the same question
        (``git config --bool ckpt.gate``); an own parser read ``''`` and ``' on'`` as true where
        the hooks read them as off, and status said "gate: on" for a gate that let commits by."""
        proc = self.git("config", "--type=bool", "--get", key, check=False)
        return proc.returncode == 0 and proc.stdout == b"true\n"

    def is_ignored(self, rel: str) -> bool:
        """Whether git ignores worktree-relative ``rel`` (``git check-ignore``); names that are
        not UTF-8 are asked of the git binary, the rest of libgit2."""
        try:
            return bool(self._pg.path_is_ignored(rel))
        except UnicodeEncodeError:
            raw = os.fsencode(rel)
            return raw in self._check_ignore([raw], self.git_env(), self.workdir)

    @staticmethod
    def _check_ignore(paths: list[bytes], env: dict[str, str], cwd: str | os.PathLike[str]) -> set[bytes]:
        """Which of ``paths`` (relative to ``cwd``) ``git check-ignore --no-index`` says are
        ignored.  check-ignore takes no ``literal`` pathspec magic and would read a leading ``:``
        as magic, so each path goes in NUL-terminated behind ``./`` and comes back stripped."""
        env = dict(env)
        env.pop("GIT_LITERAL_PATHSPECS", None)
        proc = subprocess.run(["git", "check-ignore", "-z", "--stdin", "--no-index"], input=b"".join(b"./" + p + b"\0" for p in paths),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env)
        if proc.returncode not in (0, 1):
            raise git_failure(("check-ignore",), proc)
        return {p[2:] if p.startswith(b"./") else p for p in proc.stdout.split(b"\0") if p}

    def sparse_checkout(self) -> tuple[str, list[bytes]] | None:
        """The sparse checkout of this worktree, or None when it has none: ``("cone", dirs)``
        (``git sparse-checkout list``) or ``("patterns", [])`` for non-cone patterns.  Asks the
        git binary only when ``$GIT_DIR/info/sparse-checkout`` exists (per-worktree config)."""
        if not (self.git_dir / "info" / "sparse-checkout").is_file():
            return None
        out = self.git("config", "--bool", "core.sparseCheckout", check=False).stdout.strip()
        if out != b"true":
            return None
        cone = self.git("config", "--bool", "core.sparseCheckoutCone", check=False).stdout.strip()
        if cone == b"false":
            return ("patterns", [])
        proc = self.git("sparse-checkout", "list", check=False)
        if proc.returncode != 0:
            return ("patterns", [])
        return ("cone", [ln.strip().strip(b'"').rstrip(b"/") for ln in proc.stdout.splitlines() if ln.strip()])

    def outside_sparse_cone(self, tree: str, paths: Collection[bytes]) -> set[bytes]:
        """Which of ``paths`` (entries of ``tree``) a sparse checkout of this worktree leaves out
        of the worktree (git would mark them skip-worktree); empty when it is not sparse.

        Cone mode mirrors ``dir.c``'s cone rule (files at the top, everything below a listed
        directory, files directly inside its parents); pattern mode asks ``git ls-files -i``
        with the sparse-checkout file as the pattern list."""
        sparse = self.sparse_checkout()
        if sparse is None or not paths:
            return set()
        kind, dirs = sparse
        if kind == "cone":
            parents = {b"/".join(d.split(b"/")[:i]) for d in dirs for i in range(1, d.count(b"/") + 1)}
            out = set()
            for p in paths:
                parent = p.rpartition(b"/")[0]
                if parent == b"" or parent in parents or any(p.startswith(d + b"/") for d in dirs):
                    continue
                out.add(p)
            return out
        with self.temp_index(copy_real=False) as idx:
            self.git("read-tree", tree, index_file=idx)
            inside = self.git("ls-files", "-c", "-i", "-z", "--exclude-from=" + str(self.git_dir / "info" / "sparse-checkout"),
                              index_file=idx).stdout.split(b"\0")
        return set(paths) - set(inside)

    def ignored_under_tree(self, tree: str, paths: list[bytes]) -> set[bytes]:
        """Which of ``paths`` git would ignore if the worktree held ``tree``: the ``.gitignore``
        files of ``tree`` (at every depth) together with ``$GIT_DIR/info/exclude`` and
        ``core.excludesFile``, as ``git check-ignore --no-index`` judges them.

        The ``.gitignore`` blobs are written into a scratch worktree inside ``$GIT_DIR`` and
        ``git check-ignore`` runs there, so the real worktree and index are not read.  ``tree``
        may be a teammate's (or crafted): a ``.gitignore`` whose path is no worktree path
        (:func:`~git_ckpt.model.raw_path_problem`: ``..``, absolute, ``.git``; a raw entry name
        holding a ``/``) is not written — such a tree is refused before anything is restored —
        and every file is created new (``O_EXCL|O_NOFOLLOW``) below directories made here."""
        from .model import raw_path_problem

        if not paths:
            return set()
        listing = self.git("ls-tree", "-r", "-z", tree).stdout.split(b"\0")
        rules: list[tuple[bytes, str]] = []
        for rec in listing:
            info, _, path = rec.partition(b"\t")
            if (path == b".gitignore" or path.endswith(b"/.gitignore")) and raw_path_problem(path) is None:
                mode, _typ, blob_id = info.split(b" ")
                if mode in (b"100644", b"100755"):
                    rules.append((path, blob_id.decode()))
        with fsutil.temp_dir("ckpt-rules-", dir=self.git_dir) as scratch:
            root = os.fsencode(scratch)
            for path, oid in rules:
                full = os.path.join(root, path)
                try:  # (a path met twice, or a .gitignore where a directory goes: git reads no rules there)
                    fsutil.makedirs(os.path.dirname(full))
                    fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
                except OSError:
                    continue
                with os.fdopen(fd, "wb") as fh:
                    fh.write(self.read_blob(oid))
            env = self.git_env()
            env["GIT_WORK_TREE"] = scratch
            env["GIT_INDEX_FILE"] = os.path.join(scratch, "no-index")
            return self._check_ignore(paths, env, scratch)

    def index_path(self) -> Path:
        """The real index file of this worktree."""
        return self.git_dir / "index"

    def ckpt_dir(self) -> Path:
        """``$GIT_DIR/ckpt`` (per worktree), created on demand."""
        path = self.git_dir / "ckpt"
        path.mkdir(exist_ok=True)
        return path

    @contextlib.contextmanager
    def worktree_lock(self, exclusive: bool, timeout: float = 60.0) -> Iterator[None]:
        """Hold ``$GIT_DIR/ckpt/lock`` (flock): exclusive for restore/undo, shared for save and verify.

        Waits up to ``timeout`` seconds (``$GIT_CKPT_LOCK_TIMEOUT`` overrides it, e.g. 0 for an
        agent that would rather be told at once), then raises :class:`BusyError` (exit 5).
        Re-entrant on one :class:`Repo`: taken again while held (restore's pre-restore save), it
        is already held and nothing waits; a shared hold cannot become exclusive."""
        if self._worktree_lock is not None:
            if exclusive and self._worktree_lock == "shared":
                raise RuntimeError("the worktree lock is held shared; it cannot be taken exclusive inside")
            yield
            return
        with contextlib.suppress(ValueError):
            timeout = float(os.environ.get("GIT_CKPT_LOCK_TIMEOUT", timeout))
        with self.flock(self.ckpt_dir() / "lock", exclusive=exclusive, timeout=timeout,
                        holder=("another git ckpt command (save, verify, restore or undo) is running in this worktree"
                                if exclusive else "a git ckpt restore or undo is running in this worktree")):
            self._worktree_lock = "exclusive" if exclusive else "shared"
            try:
                yield
            finally:
                self._worktree_lock = None

    def worktree_busy(self) -> bool:
        """Whether another process holds this worktree's lock (:meth:`worktree_lock`) exclusive
        right now: a restore or undo is running (its journal is then no interrupted one).  Asks
        with a non-blocking shared flock, released at once; creates nothing."""
        try:
            fd = os.open(self.git_dir / "ckpt" / "lock", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return False  # no lock file: nobody ever held it
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return False
        except BlockingIOError:
            return True
        except OSError:
            return False
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def flock(self, path: Path, *, exclusive: bool, timeout: float, holder: str) -> Iterator[None]:
        """Hold an flock on ``path`` (freed by the kernel if this process dies).  While it has
        to wait, ``self.on_wait(holder)`` is called once after a second; after ``timeout``
        seconds :class:`BusyError` names ``holder``."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
            start = time.monotonic()
            told = False
            while True:
                try:
                    fcntl.flock(fd, mode | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    waited = time.monotonic() - start
                    if waited > timeout:
                        raise BusyError(holder, "wait for it to finish and run the command again") from None
                    if not told and waited > 1.0 and self.on_wait is not None:
                        self.on_wait(holder)
                        told = True
                    time.sleep(0.05)
            yield
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def temp_index(self, copy_real: bool) -> Iterator[Path]:
        """A temporary index file inside ``$GIT_DIR`` (so renames stay on one file system).

        With ``copy_real`` it starts as a copy of the real index (stat data included, so git
        re-hashes only files whose stat changed); otherwise it starts absent (empty).
        """
        _remove_stale(self.git_dir, "ckpt-index-*")
        fd, name = tempfile.mkstemp(prefix="ckpt-index-", dir=self.git_dir)
        os.close(fd)
        path = Path(name)
        try:
            real = self.index_path()
            if copy_real and real.exists():
                # copy2 keeps the mtime, so git's racy-entry check behaves as on the real index
                shutil.copy2(real, path)
            else:
                path.unlink()
            yield path
        finally:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            with contextlib.suppress(FileNotFoundError):
                Path(str(path) + ".lock").unlink()

    def worktree_roots(self) -> list[Path]:
        """The root of every worktree of this repository that exists on disk, this one first:
        the main worktree (none for a bare repository) and each linked one, as ``git worktree
        list`` names them (a linked worktree whose directory is gone is left out)."""
        out = [self.workdir]
        try:
            main = pygit2.Repository(str(self.common_dir))
            if not main.is_bare and main.workdir:
                out.append(Path(main.workdir).resolve())
            for name in main.list_worktrees():
                try:
                    out.append(Path(main.lookup_worktree(name).path).resolve())
                except (pygit2.GitError, KeyError, ValueError):
                    continue
        except pygit2.GitError:
            pass
        seen: list[Path] = []
        for p in out:
            if p not in seen and p.is_dir():
                seen.append(p)
        return seen

    # ---------------------------------------------------------------- refs

    def read_ref(self, name: str) -> Oid | None:
        """The object id a ref points at (a symbolic ref resolved), or None when absent or not
        a valid ref name (``git rev-parse -q --verify NAME``)."""
        if self.ref_backend == "reftable":
            if name.startswith("refs/"):
                # for-each-ref matches a full name exactly (refnames hold no glob characters)
                out = self.git("for-each-ref", "--format=%(refname) %(objectname)", "--end-of-options", name).stdout
                for line in out.decode("utf-8", "surrogateescape").splitlines():
                    refname, _, oid = line.partition(" ")
                    if refname == name:
                        return Oid(oid)
                return None
            proc = self.git("rev-parse", "-q", "--verify", "--end-of-options", name, check=False)
            oid = proc.stdout.decode("ascii", "replace").strip()
            return Oid(oid) if proc.returncode == 0 and oid else None
        try:
            ref = self._pg.references.get(name)
        except (pygit2.GitError, ValueError):
            return None
        if ref is None:
            return None
        try:
            return Oid(ref.resolve().target)
        except (pygit2.GitError, ValueError):
            return None

    def refs_under(self, prefix: str) -> dict[str, Oid]:
        """All direct refs whose name starts with ``prefix`` (e.g. ``refs/ckpt/T/``), name (a
        :class:`RefName`, typed ``str`` so plain names look it up) → object id; like
        ``git for-each-ref PREFIX``, reading only refs under ``prefix``.

        With git's ``files`` ref backend and a ``prefix`` ending in ``/`` the loose refs are read
        from that directory alone and ``packed-refs`` is searched for the prefix (in C), so the
        cost follows the refs under the prefix, not every ref of the repository (pygit2 offers
        no prefix-limited iteration).  Loose refs are read before ``packed-refs``, the order in
        which a concurrent ``git pack-refs`` (which writes ``packed-refs`` and then deletes the
        loose files) can hide nothing; a loose ref wins over its packed copy, as in git.  Other
        backends (reftable) and other prefixes ask ``git for-each-ref``.  Symbolic refs are
        left out.
        """
        if not prefix.endswith("/") or not prefix.startswith("refs/") or self._ref_backend() != "files":
            return self._for_each_ref(prefix)
        out: dict[str, Oid] = {}
        loose_root = self.common_dir / prefix
        loose: dict[str, Oid] = {}
        self._read_loose(loose_root, prefix, loose)
        self.loose_refs_seen = len(loose)
        packed = self._packed_refs()
        needle = b" " + os.fsencode(prefix)
        i = packed.find(needle)
        while i != -1:
            start = packed.rfind(b"\n", 0, i) + 1
            end = packed.find(b"\n", i)
            end = len(packed) if end == -1 else end
            oid = packed[start:i]
            if not oid.startswith((b"#", b"^")) and _HEX_OID.fullmatch(oid):
                with contextlib.suppress(ValueError):  # a name git would refuse
                    out[RefName(packed[i + 1:end].decode("utf-8", "surrogateescape"))] = Oid(oid.decode())
            i = packed.find(needle, end)
        out.update(loose)
        return out

    def _packed_refs(self) -> bytes:
        """The bytes of ``$GIT_COMMON_DIR/packed-refs`` (b"" when there is none); an unreadable
        file is :class:`IOFailure` or :class:`CorruptError` (:func:`io_or_corrupt`)."""
        try:
            with open(self.common_dir / "packed-refs", "rb") as fh:
                return fh.read()
        except FileNotFoundError:
            return b""
        except OSError as exc:
            raise io_or_corrupt(exc, "cannot read packed-refs") from None

    def highest_number_under(self, prefix: str) -> int | None:
        """The highest N of the refs ``PREFIX N`` (decimal, no leading zero), or None when there
        is none; what ``max(refs_under(prefix))`` would give for numbered refs, without building
        a record per ref (``save``, ``status`` and ``@`` need only the newest checkpoint).
        With the ``files`` backend: the names in the loose directory and one regular-expression
        pass over ``packed-refs``; otherwise :meth:`refs_under`."""
        if not prefix.endswith("/") or not prefix.startswith("refs/") or self._ref_backend() != "files":
            nums = [n for n in (ref_number(r[len(prefix):]) for r in self.refs_under(prefix)) if n is not None]
            return max(nums) if nums else None
        best: int | None = None
        loose = 0
        try:
            with os.scandir(self.common_dir / prefix) as it:
                for entry in it:
                    name = entry.name
                    if (n := ref_number(name)) is not None and entry.is_file(follow_symlinks=False):
                        loose += 1
                        best = max(best or 0, n)
        except (FileNotFoundError, NotADirectoryError):
            pass
        except OSError as exc:
            raise io_or_corrupt(exc, f"cannot read {prefix}") from None
        self.loose_refs_seen = loose
        packed = self._packed_refs()
        if packed:
            pattern = re.compile(rb"^[0-9a-f]{40}(?:[0-9a-f]{24})? " + re.escape(os.fsencode(prefix)) + rb"([1-9][0-9]{0,8})$", re.M)
            found = [int(m) for m in pattern.findall(packed)]
            if found:
                best = max(best or 0, max(found))
        return best

    def _read_loose(self, directory: Path, prefix: str, out: dict[str, Oid]) -> None:
        """Loose refs under ``directory`` (the ref name ``prefix``) and every directory below it
        (walked without recursion: ref directories may nest as deep as paths go), into ``out``."""
        todo = [(directory, prefix)]
        while todo:
            directory, prefix = todo.pop()
            try:
                entries = list(os.scandir(directory))
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as exc:
                raise io_or_corrupt(exc, f"cannot read {directory}") from None
            for entry in entries:
                name = entry.name
                if name.endswith(".lock"):
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        todo.append((Path(entry.path), f"{prefix}{name}/"))
                        continue
                    with open(entry.path, "rb") as fh:
                        data = fh.read(200).strip()
                except (FileNotFoundError, NotADirectoryError):
                    continue  # deleted or packed meanwhile: packed-refs, read after this, has it
                except OSError as exc:
                    raise io_or_corrupt(exc, f"cannot read ref {prefix}{name}") from None
                if _HEX_OID.fullmatch(data):
                    with contextlib.suppress(ValueError):  # a name git would refuse
                        out[RefName(prefix + name)] = Oid(data.decode())

    @property
    def ref_backend(self) -> str:
        """``files`` (libgit2 reads and writes refs) or ``reftable`` (the git executable does)."""
        return self._ref_backend()

    def _ref_backend(self) -> str:
        """``files`` or ``reftable`` (``extensions.refStorage``), read once."""
        if self._backend is None:
            fmt = "files"
            if (self.common_dir / "reftable").is_dir():
                fmt = "reftable"
            else:
                with contextlib.suppress(KeyError, ValueError, pygit2.GitError):
                    fmt = str(self._pg.config["extensions.refstorage"]).lower() or "files"
            self._backend = fmt
        return self._backend

    def _for_each_ref(self, prefix: str) -> dict[str, Oid]:
        """``git for-each-ref`` of the refs starting with ``prefix`` (any ref backend)."""
        pattern = prefix if prefix.endswith("/") else prefix + "*"
        out = self.git("for-each-ref", "--format=%(objectname) %(objecttype) %(refname)", pattern).stdout
        refs: dict[str, Oid] = {}
        for line in out.split(b"\n"):
            oid, _, rest = line.partition(b" ")
            _kind, _, name = rest.partition(b" ")
            text = name.decode("utf-8", "surrogateescape")
            if oid and text.startswith(prefix):
                with contextlib.suppress(ValueError):
                    refs[RefName(text)] = Oid(oid.decode())
        return refs

    def pack_refs_if_many(self, loose: int, threshold: int = 256) -> bool:
        """Pack loose refs (``git pack-refs --all``, as ``git gc`` does) when ``loose`` (the count
        of loose refs a caller just saw, e.g. :attr:`loose_refs_seen`) reaches ``threshold``.

        git ckpt writes a ref per checkpoint and never triggers git's own housekeeping, so
        without this every ref read would open thousands of files.  Best effort: a failure
        (a lock held by a concurrent git) is ignored and tried again next time.  Returns
        whether it packed."""
        if loose < threshold or self._ref_backend() != "files":
            return False
        return self.git("pack-refs", "--all", check=False).returncode == 0

    def update_refs(self, updates: Sequence[tuple[str, str | None, str | None]], *, reason: str) -> None:
        """Apply many ``(name, new or None to delete, expected old or None for absent)`` updates
        in one transaction (``git update-ref --stdin -z``: every ref compared and locked, then all
        written, or none), for the thousands of refs a push or fetch may touch; the same
        compare-and-swap as :meth:`update_ref`.  Raises :class:`CkptError` with git's message."""
        if not updates:
            return
        recs = []
        for name, new, old in updates:
            raw = name.encode("utf-8", "surrogateescape")  # a name read back from a ref (another tool's bytes)
            if new is None:
                recs.append(b"delete %s\0%s\0" % (raw, (old or "").encode()))
            else:
                recs.append(b"update %s\0%s\0%s\0" % (raw, new.encode(), (old or self.zero_oid).encode()))
        self.git("update-ref", "-m", reason, "--stdin", "-z", input=b"".join(recs))

    def update_ref(
        self,
        name: str,
        new: str | None,
        *,
        expected_old: str | None,
        reason: str,
        reflog: bool = False,
        timeout: float = 20.0,
    ) -> None:
        """Compare-and-swap ``name`` from ``expected_old`` to ``new`` (None deletes), like
        ``git update-ref NAME NEW OLD``.

        The ref is locked with git's own ``NAME.lock`` file, re-read under the lock, compared and
        written in one libgit2 transaction.  A lock held by another process is waited for (up to
        ``timeout`` seconds, then :class:`BusyError`); a different current value raises
        :class:`RefConflict` and writes nothing.  ``reflog`` makes sure a reflog is kept for the
        ref (libgit2 only appends to existing logs outside ``refs/heads`` and ``refs/notes``).
        In a reftable repository the same transaction is ``git update-ref --stdin`` with the old
        value (see :meth:`_update_ref_git`).
        """
        name = RefName(name)
        if new is not None:
            new = Oid(new)
        if self.ref_backend == "reftable":
            self._update_ref_git(name, new, expected_old=expected_old, reason=reason, reflog=reflog, timeout=timeout)
            return
        if reflog:
            log = self.common_dir / "logs" / name
            log.parent.mkdir(parents=True, exist_ok=True)
            log.touch(exist_ok=True)
        deadline = time.monotonic() + timeout
        delay = 0.005
        while True:
            try:
                with self._pg.transaction() as txn:
                    txn.lock_ref(name)
                    actual = self.read_ref(name)
                    if actual != expected_old:
                        raise RefConflict(name, expected_old, actual)
                    if new is None:
                        txn.remove(name)
                    else:
                        txn.set_target(name, pygit2.Oid(hex=new), message=reason)
                return
            except pygit2.GitError as exc:
                text = str(exc)
                if "lock" in text and time.monotonic() < deadline:
                    time.sleep(delay)
                    delay = min(delay * 2, 0.2)
                    continue
                if "lock" in text:
                    raise BusyError(f"ref {name} is locked by another process", "try again") from None
                raise io_or_corrupt(exc, f"cannot update {name}") from None

    def reflog(self, name: str) -> list[tuple[str | None, str | None]]:
        """The reflog of ref ``name`` as ``(old, new)`` pairs, oldest first (None for git's zero
        id); [] when the ref or its reflog does not exist.  Mirrors ``git reflog show NAME``
        (which serves it in a reftable repository, where libgit2 sees no reflog: there each
        entry's old value is the entry before it)."""
        if self._ref_backend() != "files":
            proc = self.git("reflog", "show", "--format=%H", "--end-of-options", name, "--", check=False)
            if proc.returncode != 0:
                return []
            news = [x for x in proc.stdout.decode().split() if x][::-1]  # oldest first
            return [(news[i - 1] if i else None, new) for i, new in enumerate(news)]
        try:
            ref = self._pg.references[name]
            entries = list(ref.log())
        except (KeyError, ValueError, pygit2.GitError):
            return []

        def hexid(oid: object) -> str | None:
            text = str(oid)
            return None if set(text) == {"0"} else text

        return [(hexid(e.oid_old), hexid(e.oid_new)) for e in reversed(entries)]

    def _update_ref_git(self, name: str, new: str | None, *, expected_old: str | None, reason: str,
                        reflog: bool, timeout: float) -> None:
        """:meth:`update_ref` through ``git update-ref --no-deref --stdin -z``: one transaction
        holding the expected old value (the zero id for "absent"), so git compares and swaps
        under its own lock on any ref backend.  On failure the ref is re-read: another value
        raises :class:`RefConflict`; a lock held by another writer is waited for up to
        ``timeout`` seconds, then :class:`BusyError`.
        """
        old = expected_old or self.zero_oid
        if new is None:
            cmd = b"delete %s\0%s\0" % (name.encode(), old.encode())
        else:
            cmd = b"update %s\0%s\0%s\0" % (name.encode(), new.encode(), old.encode())
        args = ["update-ref", "--no-deref", "-m", reason, *(["--create-reflog"] if reflog else []), "--stdin", "-z"]
        deadline = time.monotonic() + timeout
        delay = 0.005
        while True:
            proc = self.git(*args, input=cmd, check=False)
            if proc.returncode == 0:
                return
            actual = self.read_ref(name)
            if actual != expected_old:
                raise RefConflict(name, expected_old, actual)
            if b"lock" not in proc.stderr.lower():
                raise git_failure(("update-ref",), proc)
            if time.monotonic() >= deadline:
                raise BusyError(f"ref {name} is locked by another process", "try again")
            time.sleep(delay)
            delay = min(delay * 2, 0.2)

    def swap(
        self,
        name: str | Callable[[], str],
        build: Callable[[str | None], tuple[str | None, T]],
        *,
        reason: str | Callable[[str], str],
        reflog: bool = False,
        step: str | None = None,
        before_write: Callable[[str | None, str | None], None] | None = None,
        attempts: int = SWAP_ATTEMPTS,
    ) -> T:
        """The one read-build-compare-and-swap loop every ref update goes through.

        Each attempt reads ``name`` (a ref name, or a function naming the ref for this attempt,
        e.g. the next free checkpoint number), calls ``build(current value or None)`` for
        ``(new value, result)`` and, when the new value differs, writes it with
        :meth:`update_ref` expecting the value it read (``new`` None deletes).  ``build`` must
        only write objects: it runs again, on the new value, after a lost race; it may raise
        :class:`RefConflict` itself to ask for another attempt (a value it cannot build on).
        ``reason`` is the reflog message (or a function of the ref name giving it).
        ``before_write(old, new)`` runs once, before the first write: a side effect that must
        precede the ref's move and must happen once (promote's ledger event).  ``step`` names the
        point for :func:`fault` just before each write.  A lost race backs off (1 ms doubling to
        50 ms, plus jitter) and retries; after ``attempts`` lost races :class:`BusyError`
        (exit 5).  Returns ``build``'s result of the attempt that won (or that found nothing to
        change).  Mirrors ``git update-ref NAME NEW OLD`` in a loop, as ``git notes`` and
        ``git fetch`` do with their lock files.
        """
        delay = 0.001
        wrote_once = False
        ref = name
        for _attempt in range(attempts):
            ref = name() if callable(name) else name
            old = self.read_ref(ref)
            try:
                new, result = build(old)
                if new == old:
                    return result
                if before_write is not None and not wrote_once:
                    before_write(old, new)
                    wrote_once = True
                if step:
                    fault(step)
                why = reason(ref) if callable(reason) else reason
                self.update_ref(ref, new, expected_old=old, reason=why, reflog=reflog)
                return result
            except RefConflict:
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 0.05)
        raise BusyError(
            f"could not update {ref}: other processes kept changing it ({attempts} attempts)",
            "run the command again",
        )

    def move_head(self, new: str, *, expected_old: str | None, reason: str) -> None:
        """Move HEAD (the branch it names, or HEAD itself when detached) from ``expected_old``
        (None: unborn) to ``new``, like ``git update-ref -m REASON HEAD NEW OLD``.

        The one ref write that goes through the git binary: git keeps both the branch's and
        HEAD's reflog, which libgit2's transaction would not.  A different current value raises
        :class:`RefConflict` and moves nothing.
        """
        proc = self.git("update-ref", "-m", reason, "HEAD", new, expected_old or self.zero_oid, check=False)
        if proc.returncode != 0:
            actual, _branch = self.head()
            if actual != expected_old:
                raise RefConflict("HEAD", expected_old, actual)
            raise git_failure(("update-ref",), proc)

    # ---------------------------------------------------------------- objects

    def blob(self, data: bytes) -> Oid:
        """Write ``data`` as a blob and return its id (``git hash-object -w``)."""
        try:
            if len(data) >= 65536:
                # libgit2 compresses and writes even when the object exists; git only freshens it.
                oid = pygit2.hash(data)
                if self._pg.odb.exists(oid):  # (`oid in repo` would read the whole object)
                    return Oid(oid)
            return Oid(self._pg.create_blob(data))
        except (pygit2.GitError, OSError) as exc:  # libgit2 I/O errors arrive as OSError
            raise io_or_corrupt(exc, "cannot write an object") from None

    def blob_id(self, data: bytes) -> str:
        """The id ``data`` would have as a blob, nothing written (``git hash-object``)."""
        return str(pygit2.hash(data))

    def read_blob(self, oid: str) -> bytes:
        """The bytes of blob ``oid``; :class:`CorruptError` if missing or not a blob."""
        try:
            obj = self._pg[oid]
        except (KeyError, ValueError, pygit2.GitError):
            raise CorruptError(f"object {oid} is missing from the object store") from None
        if not isinstance(obj, pygit2.Blob):
            raise CorruptError(f"object {oid} is not a blob")
        return obj.data

    def blob_size(self, oid: str) -> int:
        """The size in bytes of blob ``oid`` from its header, without inflating it (``git
        cat-file -s``); :class:`CorruptError` if missing or not a blob."""
        try:
            kind, size = self._pg.odb.read_header(oid)
        except (KeyError, ValueError, pygit2.GitError):
            raise CorruptError(f"object {oid} is missing from the object store") from None
        if kind != pygit2.enums.ObjectType.BLOB:
            raise CorruptError(f"object {oid} is not a blob")
        return size

    @contextlib.contextmanager
    def open_blob(self, oid: str) -> Iterator[IO[bytes]]:
        """Stream the bytes of blob ``oid`` (``git cat-file blob``, which streams large blobs
        instead of inflating them into memory as libgit2 does): yields a binary file object.
        :class:`CorruptError` if missing or not a blob."""
        self.blob_size(oid)
        with self._cat_file("blob", oid) as proc:
            assert proc.stdout is not None
            yield proc.stdout

    @contextlib.contextmanager
    def _cat_file(self, *args: str, stdin: bool = False) -> Iterator[subprocess.Popen[bytes]]:
        """A running ``git cat-file ARGS`` whose stdout (and stdin, with ``stdin``) are pipes;
        on leaving, its pipes are closed and it is killed if still running, then waited for.
        :class:`RepoError` when git cannot be run."""
        try:
            proc = subprocess.Popen(["git", "cat-file", *args], stdin=subprocess.PIPE if stdin else None,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=self.workdir, env=self.git_env())
        except FileNotFoundError:
            raise RepoError("the git executable was not found on PATH", "install git or fix PATH") from None
        try:
            yield proc
        finally:
            if proc.stdout is not None:
                proc.stdout.close()
            if proc.poll() is None:
                proc.kill()
            proc.wait()

    def iter_objects(self, oids: list[str], max_size: int) -> Iterator[tuple[str, str, bytes | None]]:
        """``(oid, type, content)`` of each of ``oids``, in order, through one ``git cat-file
        --batch`` read as a stream: ``content`` is None for an object over ``max_size`` bytes (read
        past in chunks, never held whole), ``type`` is ``"missing"`` (content None) for an id the
        object store lacks.  Memory stays bounded by ``max_size`` whatever the objects hold (a
        crafted 50 MiB commit message costs a read, not 50 MiB per ref that names it).  The ids
        are written by a thread, so a long list cannot dead-lock against git's output.  Raises
        :class:`RepoError` when git cannot be run, :class:`CorruptError` on output it cannot parse."""
        if not oids:
            return
        with self._cat_file("--batch", stdin=True) as proc:
            yield from self._read_batch(proc, oids, max_size)

    @staticmethod
    def _read_batch(proc: subprocess.Popen[bytes], oids: list[str], max_size: int) -> Iterator[tuple[str, str, bytes | None]]:
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout

        def feed() -> None:
            with contextlib.suppress(BrokenPipeError, OSError, ValueError):
                stdin.write(b"".join(o.encode("ascii") + b"\n" for o in oids))
            with contextlib.suppress(BrokenPipeError, OSError):
                stdin.close()

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            for _ in oids:
                header = stdout.readline(200)
                fields = header.split()
                if len(fields) == 2 and fields[1] == b"missing":
                    yield fields[0].decode("ascii", "replace"), "missing", None
                    continue
                if len(fields) != 3 or not fields[2].isdigit():
                    raise CorruptError(f"git cat-file --batch printed {header[:80]!r}", "git fsck reports what is damaged")
                size = int(fields[2])
                if size > max_size:
                    left = size
                    while left:
                        chunk = stdout.read(min(left, 1 << 20))
                        if not chunk:
                            raise CorruptError("git cat-file --batch ended early", "git fsck reports what is damaged")
                        left -= len(chunk)
                    content = None
                else:
                    content = stdout.read(size)
                    if len(content) != size:
                        raise CorruptError("git cat-file --batch ended early", "git fsck reports what is damaged")
                stdout.read(1)  # the newline after each object
                yield fields[0].decode("ascii", "replace"), fields[1].decode("ascii", "replace"), content
        finally:
            stdout.close()
            if proc.poll() is None:
                proc.kill()
            writer.join()

    def commit_message(self, oid: str) -> bytes:
        """The message of commit ``oid`` as stored (bytes, its encoding header not applied), as
        ``git cat-file commit`` shows it after the headers; :class:`CorruptError` if missing or
        not a commit."""
        obj = self._object(oid)
        if obj is None:
            raise CorruptError(f"object {oid} is missing from the object store")
        if obj.type_str != "commit":
            raise CorruptError(f"object {oid} is a {obj.type_str}, not a commit")
        return bytes(cast(pygit2.Commit, obj).raw_message)

    def commit(self, tree: str, parents: list[str], message: str) -> Oid:
        """Write a commit (author and committer: :meth:`signature`, as ``git commit-tree`` would) and return its id."""
        try:
            return Oid(
                self._pg.create_commit(
                    None, self.signature("AUTHOR"), self.signature(), message, pygit2.Oid(hex=tree), [pygit2.Oid(hex=p) for p in parents]
                )
            )
        except (pygit2.GitError, OSError) as exc:  # libgit2 I/O errors arrive as OSError
            raise io_or_corrupt(exc, "cannot write a commit") from None

    def signature(self, who: str = "COMMITTER") -> pygit2.Signature:
        """The identity git would write now for ``who`` (``"AUTHOR"`` or ``"COMMITTER"``), as
        ``git var GIT_AUTHOR_IDENT`` / ``GIT_COMMITTER_IDENT`` resolve it: ``GIT_AUTHOR_NAME``/
        ``_EMAIL`` (``GIT_COMMITTER_…``) in the environment, then ``author.*``/``committer.*``,
        ``user.*`` from every config git reads (``GIT_CONFIG_GLOBAL``, includes), then ``EMAIL``
        and the auto-detected one.  The time is now whatever ``GIT_*_DATE`` says: checkpoint
        ages (gc, list) must not move with a date exported for some other commit.  When git
        finds no identity (an empty name, ``user.useConfigOnly``, no domain) the missing part is
        ``git-ckpt`` / ``git-ckpt@localhost`` (an e-mail git finds is kept), and so is a part libgit2 cannot write (an empty e-mail, which git
        accepts): a checkpoint is never refused for want of a name.  One ``git var``
        per kind per :class:`Repo`, cached."""
        cached = self._idents.get(who)
        if cached is None:
            m = None
            # git refuses an empty name (or finds none): then the placeholder name, with the e-mail
            # git would use, and only when that fails too the placeholder e-mail as well
            for env in ({}, {f"GIT_{who}_NAME": "git-ckpt"},
                        {f"GIT_{who}_NAME": "git-ckpt", f"GIT_{who}_EMAIL": "git-ckpt@localhost"}):
                proc = self.git("var", f"GIT_{who}_IDENT", check=False, env=env)
                m = re.fullmatch(rb"(.*) <([^<>]*)> \d+ [+-]\d{4}\n?", proc.stdout) if proc.returncode == 0 else None
                if m:
                    break
            name, email = (m.group(1), m.group(2)) if m else (b"git-ckpt", b"git-ckpt@localhost")
            # git accepts an empty e-mail (user.email "" or only crud such as "." that it strips);
            # libgit2 refuses one, and a name or e-mail it cannot take: the placeholder for that part
            ident = (name.decode("utf-8", "replace").strip() or "git-ckpt",
                     email.decode("utf-8", "replace").strip() or "git-ckpt@localhost")
            try:
                pygit2.Signature(*ident)
            except (ValueError, pygit2.GitError):
                ident = ("git-ckpt", "git-ckpt@localhost")
            cached = self._idents[who] = ident
        return pygit2.Signature(*cached)

    def mktree(self, entries: list[tuple[int, str, bytes]]) -> Oid:
        """Build a (nested) tree from ``(mode, oid, path)`` entries, paths as bytes with ``/``.

        Goes through a temporary index and ``git write-tree``, so any path bytes work; a flat
        list of UTF-8 names (the usual meta tree) is built in-process instead.
        """
        flat = self._mktree_flat(entries)
        if flat is not None:
            return flat
        with self.temp_index(copy_real=False) as idx:
            data = b"".join(b"%o %s\t%s\0" % (mode, oid.encode(), path) for mode, oid, path in entries)
            self.git("update-index", "-z", "--index-info", input=data, index_file=idx)
            return Oid(self.git("write-tree", "--missing-ok", index_file=idx).stdout.decode().strip())

    def _mktree_flat(self, entries: list[tuple[int, str, bytes]]) -> Oid | None:
        """:meth:`mktree` without a subprocess when every entry is a plain top-level UTF-8 name."""
        names = set()
        for mode, _oid, path in entries:
            if b"/" in path or not path or path in (b".", b"..", b".git") or mode not in (0o100644, 0o100755, 0o120000):
                return None
            try:
                names.add(path.decode("utf-8"))
            except UnicodeDecodeError:
                return None
        if len(names) != len(entries):
            return None
        try:
            tb = self._pg.TreeBuilder()
            for mode, oid, path in entries:
                tb.insert(path.decode("utf-8"), pygit2.Oid(hex=oid), mode)
            return Oid(tb.write())
        except (pygit2.GitError, ValueError):
            return None  # e.g. an entry naming a missing object: git write-tree --missing-ok decides

    def paths_in_tree(self, tree: str, paths: list[bytes]) -> set[bytes]:
        """Which of ``paths`` (worktree-relative bytes) name an entry of ``tree``; looked up
        in-process (``git ls-tree TREE -- PATH`` for the rare name that is not UTF-8)."""
        dirs = self._dir_cache(tree)
        found: set[bytes] = set()
        slow: list[bytes] = []
        for p in paths:
            try:
                name = p.decode("utf-8")
            except UnicodeDecodeError:
                slow.append(p)
                continue
            if self._entry_at(dirs, name) is not None:
                found.add(p)
        if slow:
            wanted = set(slow)  # built once, not per entry listed
            found |= {e.path for e in self.ls_tree(tree, *slow) if e.path in wanted}
        return found

    def _dir_cache(self, tree: str) -> dict[str, pygit2.Tree | None]:
        """A cache for :meth:`_entry_at`: directory path → its tree (None: not a directory)."""
        return {"": self._pg[tree].peel(pygit2.Tree)}

    def _entry_at(self, dirs: dict[str, pygit2.Tree | None], path: str) -> pygit2.Object | None:
        """The entry at ``path`` in the tree of ``dirs`` (:meth:`_dir_cache`), or None; each
        directory on the way is read once per cache.  ``tree[path]`` re-reads and re-parses
        every directory on the way (libgit2 caches no large tree), so one lookup in a directory
        of 20k files cost a parse of 20k entries: quadratic over a 20k-file restore."""
        parent, _, name = path.rpartition("/")
        if not name or "\0" in name or path.startswith("/"):
            return None
        if parent not in dirs:  # down from the nearest directory read, without recursion (a tree may nest any depth)
            missing = [parent]
            while (up := missing[-1].rpartition("/")[0]) not in dirs:
                missing.append(up)
            for d in reversed(missing):
                above, _, base = d.rpartition("/")
                tree, entry = dirs[above], None
                if tree is not None and base:
                    with contextlib.suppress(KeyError):
                        entry = tree[base]
                dirs[d] = (cast(pygit2.Tree, self._pg[entry.id]) if entry is not None and entry.filemode == pygit2.enums.FileMode.TREE
                           else None)
        where = dirs[parent]
        if where is None:
            return None
        try:
            return where[name]
        except KeyError:
            return None

    def entry_mode(self, tree: str, path: bytes) -> int | None:
        """The mode of the entry at ``path`` in ``tree`` (``0o100644``, ``0o40000``, …) or None."""
        try:
            return self._pg[tree].peel(pygit2.Tree)[path.decode("utf-8")].filemode
        except KeyError:
            return None
        except UnicodeDecodeError:
            found = [e for e in self.ls_tree(tree, path) if e.path == path]
            return found[0].mode if found else None

    def index_info(self, tree: str, paths: list[bytes]) -> bytes | None:
        """``git update-index -z --index-info`` input holding the blobs of ``paths`` in ``tree``
        (so a small temporary index replaces ``git read-tree`` of the whole tree), or None when a
        path is not a UTF-8 name of a file or symlink there."""
        dirs = self._dir_cache(tree)
        out = []
        for p in paths:
            try:
                entry = self._entry_at(dirs, p.decode("utf-8"))
            except UnicodeDecodeError:
                return None
            if entry is None:
                return None
            mode = entry.filemode
            if mode not in (0o100644, 0o100755, 0o120000):
                return None
            out.append(b"%o %s\t%s\0" % (mode, str(entry.id).encode(), p))
        return b"".join(out)

    def ls_tree(self, tree: str, *paths: bytes) -> list[TreeEntry]:
        """Recursive listing of ``tree`` (``git ls-tree -r -z``), optionally limited to ``paths``
        (literal: a file, or a directory and all below it).  So many paths that they would not
        fit a command line are applied to the whole listing here instead."""
        if _too_many(paths):
            wanted = set(paths)  # built once, not per entry of the whole listing
            return [e for e in self.ls_tree(tree) if _under(e.path, wanted)]
        out = self.git("ls-tree", "-r", "-z", "--full-tree", tree, "--", *paths).stdout
        entries = []
        for rec in out.split(b"\0"):
            if not rec:
                continue
            meta, _, path = rec.partition(b"\t")
            mode, _kind, oid = meta.split(b" ")
            entries.append(TreeEntry(path, int(mode, 8), oid.decode()))
        return entries

    def ignored_files(self, *dirs: bytes) -> list[bytes]:
        """The ignored untracked files below ``dirs`` (literal directories, each ``d/``), one path
        each (``git ls-files -z -o -i --exclude-standard -- DIRS``, without ``--directory``), in
        git's order.  So many directories that they would not fit a command line are applied to
        the whole worktree's listing here instead (as :meth:`ls_tree` does)."""
        if not dirs:
            return []
        many = _too_many(dirs)
        spec: list[str | bytes] = [] if many else ["--", *dirs]
        out = self.git("ls-files", "-z", "-o", "-i", "--exclude-standard", *spec).stdout
        found = [p for p in out.split(b"\0") if p]
        if many:
            wanted = {d.rstrip(b"/") for d in dirs}
            found = [p for p in found if _under(p, wanted)]
        return found

    def tree_entries_once(self, tree: str, seen: set[str], prefix: bytes = b"") -> Iterator[TreeEntry]:
        """The non-tree entries of ``tree`` (recursively, paths under ``prefix``), skipping every
        subtree whose id is in ``seen`` and adding the ones walked to it; read in-process.

        Walking many checkpoints with one ``seen`` visits each distinct tree once (like
        ``git rev-list --objects`` does), where one ``git ls-tree -r`` per checkpoint would
        re-list every shared directory.  Names are bytes as stored."""
        if tree in seen:
            return
        seen.add(tree)
        try:
            obj = self._pg[tree]
        except (KeyError, ValueError, pygit2.GitError):
            return
        # the caller passes a tree id; pygit2 types repository lookups as the base Object
        stack: list[tuple[bytes, pygit2.Tree]] = [(prefix, cast(pygit2.Tree, obj))]
        while stack:
            base, t = stack.pop()
            for e in t:
                name = base + cast(bytes, e.raw_name)  # pygit2 types it optional; a tree entry always has a name
                if e.filemode == 0o040000:
                    sub = str(e.id)
                    if sub in seen:
                        continue
                    seen.add(sub)
                    try:
                        stack.append((name + b"/", cast(pygit2.Tree, self._pg[sub])))
                    except (KeyError, ValueError, pygit2.GitError):
                        continue
                else:
                    yield TreeEntry(name, e.filemode, str(e.id))

    def diff_trees(self, old: str, new: str, paths: Sequence[bytes | str] | None = None) -> list[Change]:
        """Changed paths between two trees (``git diff-tree -r -z --no-renames``).

        Returns :class:`Change` pairs ``(old entry or None, new entry or None)`` in git's path
        order; ``.path`` and ``.status`` name the path and its letter.
        """
        if paths and _too_many(paths):
            wanted = {p.encode("utf-8", "surrogateescape") if isinstance(p, str) else p for p in paths}
            return [c for c in self.diff_trees(old, new) if _under(c.path, wanted)]
        args = ["diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", old, new]
        if paths:
            args += ["--", *[p.decode("utf-8", "surrogateescape") if isinstance(p, bytes) else p for p in paths]]
        out = self.git(*args).stdout
        parts = out.split(b"\0")
        result: list[Change] = []
        i = 0
        while i + 1 < len(parts):
            meta = parts[i]
            if not meta.startswith(b":"):
                i += 1
                continue
            path = parts[i + 1]
            i += 2
            m1, m2, o1, o2, _status = meta[1:].split(b" ")
            a = None if int(m1, 8) == 0 else TreeEntry(path, int(m1, 8), o1.decode())
            b = None if int(m2, 8) == 0 else TreeEntry(path, int(m2, 8), o2.decode())
            result.append(Change(a, b))
        return result

    def first_parent_chain(self, commit: str, limit: int | None = None) -> list[str]:
        """``commit`` and its first-parent ancestors, newest first, at most ``limit`` of them
        (``git rev-list --first-parent [-n LIMIT] COMMIT``); reads commits only, never their
        trees.  A short walk is done in-process, a whole one by git."""
        if limit is not None and limit <= 64:
            out: list[str] = []
            oid: str | None = commit
            while oid and len(out) < limit:
                out.append(oid)
                try:
                    parents = cast(pygit2.Commit, self._pg[oid]).parent_ids  # pygit2 types lookups as Object
                except (KeyError, ValueError, pygit2.GitError):
                    break
                oid = str(parents[0]) if parents else None
            return out
        args = ["rev-list", "--first-parent"] + ([f"--max-count={limit}"] if limit is not None else []) + [commit, "--"]
        return self.git(*args).stdout.decode().split()

    def commit_tree_id(self, oid: str) -> str | None:
        """The tree id of commit ``oid`` (``git rev-parse OID^{tree}``), or None when ``oid``
        is not a commit of this repository."""
        try:
            return str(self._pg[oid].peel(pygit2.Commit).tree_id)
        except (KeyError, ValueError, TypeError, pygit2.GitError, pygit2.InvalidSpecError):
            return None

    def object_exists(self, oid: str) -> bool:
        """Whether ``oid`` is in the object store."""
        try:
            return pygit2.Oid(hex=oid) in self._pg.odb
        except (ValueError, pygit2.GitError):
            return False

    def _object(self, oid: str) -> pygit2.Object | None:
        try:
            return self._pg[oid]
        except (KeyError, ValueError, TypeError, pygit2.GitError):
            return None

    def object_type(self, oid: str) -> str | None:
        """``commit``, ``tree``, ``blob`` or ``tag`` for ``oid``; None when it is missing or not
        an object id (``git cat-file -t``)."""
        obj = self._object(oid)
        return None if obj is None else obj.type_str

    def read_commit(self, oid: str) -> CommitInfo:
        """Commit ``oid``'s tree and parents (``git cat-file commit``); :class:`CorruptError`
        when it is missing or not a commit."""
        obj = self._object(oid)
        if obj is None:
            raise CorruptError(f"object {oid} is missing from the object store")
        if obj.type_str != "commit":
            raise CorruptError(f"object {oid} is a {obj.type_str}, not a commit")
        c = cast(pygit2.Commit, obj)
        return CommitInfo(Oid(c.id), Oid(c.tree_id), tuple(Oid(p) for p in c.parent_ids))

    def _tree(self, tree_ish: str) -> pygit2.Tree:
        obj = self._object(tree_ish)
        if obj is None:
            raise CorruptError(f"object {tree_ish} is missing from the object store")
        try:
            return obj.peel(pygit2.Tree)
        except (ValueError, TypeError, pygit2.GitError, pygit2.InvalidSpecError):
            raise CorruptError(f"object {tree_ish} is a {obj.type_str}, not a tree or commit") from None

    def tree_of(self, tree_ish: str) -> Oid:
        """The tree of a commit (a tree is its own), like ``git rev-parse X^{tree}``;
        :class:`CorruptError` when missing or not a commit or tree."""
        return Oid(self._tree(tree_ish).id)

    def tree_entry(self, tree_ish: str, path: str) -> TreeEntry | None:
        """The entry at ``path`` (``/``-separated, UTF-8) in the tree of ``tree_ish``, or None
        (``git ls-tree TREE -- PATH`` without recursion); :class:`CorruptError` for a missing
        or non-tree object."""
        root = self._tree(tree_ish)
        try:
            e = root[path]
        except (KeyError, ValueError):
            return None
        return TreeEntry(path.encode("utf-8", "surrogateescape"), e.filemode, Oid(e.id))

    def tree_list(self, tree_ish: str) -> list[TreeEntry]:
        """The entries of one tree level (``git ls-tree TREE``), names as bytes, in tree order;
        :class:`CorruptError` for a missing or non-tree object."""
        return [TreeEntry(e.raw_name or b"", e.filemode, Oid(e.id)) for e in self._tree(tree_ish)]

    def tree_with(self, tree_ish: str | None, path: str, mode: int, oid: str) -> Oid:
        """A new tree: ``tree_ish``'s tree (None: empty) with the entry at ``path``
        (``/``-separated, UTF-8; missing subtrees are created) set to ``(mode, oid)``, like
        ``git update-index --cacheinfo`` + ``git write-tree`` on a copy.  Nothing else
        changes; :class:`CorruptError` for a missing or non-tree base."""
        base = self._tree(tree_ish) if tree_ish else None
        return Oid(self._tree_with(base, path.split("/"), mode, oid))

    def _tree_with(self, base: pygit2.Tree | None, parts: list[str], mode: int, oid: str) -> pygit2.Oid:
        tb = self._pg.TreeBuilder(base) if base is not None else self._pg.TreeBuilder()
        if len(parts) == 1:
            tb.insert(parts[0], pygit2.Oid(hex=oid), mode)
        else:
            sub = None
            if base is not None and parts[0] in base:
                found = self._object(str(base[parts[0]].id))
                sub = found if isinstance(found, pygit2.Tree) else None
            tb.insert(parts[0], self._tree_with(sub, parts[1:], mode, oid), pygit2.enums.FileMode.TREE)
        try:
            return tb.write()
        except (pygit2.GitError, OSError) as exc:
            raise io_or_corrupt(exc, "cannot write a tree") from None

    def resolve_commit(self, rev: str) -> Oid | None:
        """The commit ``rev`` names (``git rev-parse --verify REV^{commit}``), or None when it
        names nothing or something that is not a commit."""
        if self.ref_backend == "reftable":  # libgit2 would resolve no ref there
            if not rev or "\0" in rev:
                return None
            proc = self.git("rev-parse", "-q", "--verify", "--end-of-options", rev + "^{commit}", check=False)
            oid = proc.stdout.decode("ascii", "replace").strip()
            return Oid(oid) if proc.returncode == 0 and oid else None
        try:
            return Oid(self._pg.revparse_single(rev).peel(pygit2.Commit).id)
        except (KeyError, ValueError, TypeError, pygit2.GitError, pygit2.InvalidSpecError):
            return None

    def commit_of(self, rev: str) -> str | None:
        """The hex id of the commit ``rev`` names, as git itself reads it (``git rev-parse
        --verify -q --end-of-options REV^{commit}``: every revision syntax git has, a tag
        peeled, a leading ``-`` never an option); None when it names nothing or no commit."""
        if not rev or "\0" in rev:
            return None
        proc = self.git("rev-parse", "--verify", "-q", "--end-of-options", rev + "^{commit}", check=False)
        oid = proc.stdout.decode("ascii", "replace").strip()
        return oid if proc.returncode == 0 and oid else None

    def descends(self, commit: str, ancestor: str) -> bool:
        """Whether ``ancestor`` is a proper ancestor of ``commit`` (``git merge-base
        --is-ancestor``, minus equality); False when either is missing."""
        try:
            return bool(self._pg.descendant_of(commit, ancestor))
        except (KeyError, ValueError, pygit2.GitError):
            return False

    def fast_forwards(self, new: str, old: str) -> bool:
        """Whether moving a ref from ``old`` to ``new`` is a fast-forward: ``new`` is ``old`` or
        has it in its history (``git merge-base --is-ancestor OLD NEW``); False when ``old``
        is not in this repository."""
        if new == old:
            return True
        if not self.object_exists(old):
            return False
        return self.descends(new, old)


# Pathspec bytes beyond which a listing is filtered in Python instead: command lines (with the
# environment) are limited to 2 MiB on Linux and each argument to 128 KiB.
_ARG_BUDGET = 256 * 1024


def _too_many(paths: Sequence[bytes | str]) -> bool:
    """Whether ``paths`` would not fit comfortably on a command line."""
    return sum(len(p) + 1 for p in paths) > _ARG_BUDGET


def _under(path: bytes, wanted: set[bytes]) -> bool:
    """Whether ``path`` is in ``wanted`` or below a directory in it (a literal pathspec match)."""
    while True:
        if path in wanted:
            return True
        cut = path.rfind(b"/")
        if cut < 0:
            return False
        path = path[:cut]


def _remove_stale(directory: Path, pattern: str, age: float = 3600.0) -> None:
    """Remove files matching ``pattern`` older than ``age`` seconds: temporary indexes left by a
    process that was killed (a live one touches its file within seconds)."""
    cutoff = time.time() - age
    for path in directory.glob(pattern):
        with contextlib.suppress(OSError):
            if path.stat().st_mtime < cutoff:
                path.unlink()


def _text(raw: bytes) -> str:
    """Config bytes as text: UTF-8, with any other byte kept as a surrogate escape."""
    return raw.decode("utf-8", "surrogateescape")


def git_failure(args: tuple[str | bytes, ...], proc: subprocess.CompletedProcess[bytes]) -> CkptError:
    """Turn a failed ``git`` call into the matching :class:`CkptError` with git's first error line."""
    err = proc.stderr.decode("utf-8", "replace").strip()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    start = next((i for i, ln in enumerate(lines) if ln.startswith(("fatal:", "error:"))), 0)
    # git's whole message from its first error line on (a list of paths may follow it), capped
    first = " ".join(ln.strip().removeprefix("fatal: ").removeprefix("error: ") for ln in lines[start:start + 20])
    if len(first) > 2000:
        first = first[:2000] + " ..."
    cmd = args[0].decode() if isinstance(args[0], bytes) else args[0]
    low = err.lower()
    if "no space left" in low or "read-only file system" in low or "permission denied" in low:
        return IOFailure(f"git {cmd} failed: {first}", "free disk space or fix permissions, then run the command again")
    if "index.lock" in low or ".lock': file exists" in low:
        return BusyError(f"git {cmd} failed: {first}", "another git process holds a lock; wait for it and retry")
    return CkptError(f"git {cmd} failed (exit {proc.returncode}): {first}",
                     "that is git's own message; fix what it names and run the command again")


def io_or_corrupt(exc: BaseException, what: str) -> CkptError:
    """Classify a libgit2/OS error: disk full or read-only → :class:`IOFailure`, else corrupt data."""
    text = str(exc)
    low = text.lower()
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EDQUOT):
        return IOFailure(f"{what}: {exc.strerror}", "free disk space or fix permissions, then run the command again")
    if any(s in low for s in ("no space", "read-only", "permission denied", "failed to write", "could not write", "failed to create", "failed to make")):
        return IOFailure(f"{what}: {text}", "free disk space or fix permissions, then run the command again")
    return CorruptError(f"{what}: {text}")


STATE_MAX = 64 * 1024 * 1024  # the largest state file read_state reads by default (64 MiB)
_STATE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
# what open(O_NOFOLLOW|O_NONBLOCK) says for a path that is no regular file: a symlink (ELOOP;
# EMLINK on FreeBSD, EFTYPE on NetBSD), a directory (EISDIR where it cannot be opened), a socket
# (ENXIO)
_IRREGULAR = {errno.ELOOP, errno.EMLINK, errno.EISDIR, errno.ENXIO, getattr(errno, "EFTYPE", errno.ELOOP)}


def read_state(path: Path, cap: int = STATE_MAX, *, follow: bool = False) -> bytes:
    """The bytes of the state file ``path`` (``$GIT_DIR/ckpt/*``, ``.ckpt.toml``, the trust
    store), read only when it is a regular file of at most ``cap`` bytes.

    Anything else may have been planted or left by damage, and plain ``open()`` would follow a
    symlink (to ``/dev/zero``, another user's file, a 10 GB file), block forever on a FIFO or read
    a huge file into memory.  So the file is opened with ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO
    opens at once and is then refused), the open descriptor is ``fstat``-ed (no race between
    check and read) and at most ``cap + 1`` bytes are read; the descriptor is always closed.
    This mirrors git: ``read_gitfile_gently`` (``setup.c``) refuses a ``.git`` file that is not
    ``S_ISREG`` or is larger than 1 MiB, and ``open_nofollow`` (``wrapper.c``, since 2.32) reads
    ``.gitattributes``, ``.gitignore`` and ``.mailmap`` without following a symlink.

    With ``follow`` a symlink is followed (a file the user owns and may keep elsewhere:
    ``info/exclude``, ``~/.claude/settings.json``); what it reaches must still be a regular file.

    Raises :class:`FileNotFoundError` when ``path`` does not exist (callers keep their "absent
    means the default"), :class:`CorruptError` (exit 7) ``PATH is not a regular file git-ckpt
    wrote`` for a symlink, directory, FIFO, socket or device, and ``PATH is larger than N bytes``
    beyond ``cap``, and ``DIR is not a directory git-ckpt made`` when a file stands where a
    directory on the way must be (hint: move it aside); any other :class:`OSError` (permission
    denied) propagates unchanged.
    """
    try:
        fd = os.open(path, _STATE_FLAGS & ~getattr(os, "O_NOFOLLOW", 0) if follow else _STATE_FLAGS)
    except OSError as exc:
        if exc.errno in _IRREGULAR:
            raise _irregular_state(path) from None
        if exc.errno == errno.ENOTDIR:  # a file where a directory must be ($GIT_DIR/ckpt): damage
            parent = next((p for p in Path(path).parents if os.path.lexists(p)), Path(path).parent)
            raise CorruptError(f"{parent} is not a directory git-ckpt made", "move it aside") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _irregular_state(path)
        if st.st_size > cap:
            raise _oversize_state(path, cap)
        chunks: list[bytes] = []
        got = 0
        while got <= cap:
            chunk = os.read(fd, min(cap + 1 - got, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > cap:  # it grew after fstat
            raise _oversize_state(path, cap)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _irregular_state(path: Path) -> CorruptError:
    return CorruptError(f"{path} is not a regular file git-ckpt wrote", "move it aside")


def _oversize_state(path: Path, cap: int) -> CorruptError:
    return CorruptError(f"{path} is larger than {cap} bytes", "move it aside")


def not_found(what: str, hint: str | None = None) -> NotFoundError:
    """Shorthand for a :class:`NotFoundError`."""
    return NotFoundError(what, hint)


def path_line(path: bytes) -> bytes:
    """``path`` as one line of a line-based git stdin (``hash-object --stdin-paths``, which has no
    ``-z`` form): always C-quoted, as git unquotes a line that starts with ``"`` (so a name
    beginning with ``"``, or holding a newline, backslash or any byte, is read back exactly)."""
    out = bytearray(b'"')
    for b in path:
        if b == 0x22 or b == 0x5C:
            out += b"\\" + bytes([b])
        elif 0x20 <= b < 0x7F:
            out.append(b)
        else:
            out += b"\\%03o" % b
    return bytes(out + b'"\n')
