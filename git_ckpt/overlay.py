"""The overlay: named ignored paths (fixtures, agent state) archived as a deterministic tar.

* :func:`select` walks only the directories the ``include`` patterns can reach, keeps ignored
  regular files and symlinks matching ``include`` and not ``exclude``, leaves likely-secret and
  oversized files out (reported), and never descends into ``.git``.
* :func:`build_tar` writes an **uncompressed** tar with entries sorted by path, fixed owner
  (0/0, no names), the file's mode and integer mtime, symlinks as links.
* :func:`read_archive` parses a tar with the standard library and validates every entry with our
  own strict rules; :func:`extract` writes validated entries itself (never ``tarfile.extract``):
  regular files, directories and symlinks only; no absolute paths, no ``..``; never through a
  symlink, whether in the archive or already on disk; sizes and counts capped.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from contextlib import AbstractContextManager
from typing import IO, TYPE_CHECKING, Callable, Iterable, Literal, Mapping, Union

from .config import Config, SecretNames
from .errors import CkptError, ConfigError, CorruptError, IOFailure
from .model import OverlayFile, OverlayInfo, digest, path_display, path_from_str, path_to_str
from .words import counted

if TYPE_CHECKING:
    from .config import Patterns

#: Hard limits of an overlay archive, the same for every repository and configuration: a reader
#: (:func:`read_archive`) refuses an archive past them (bounded time and memory against a hostile
#: fetched archive), and a save (:func:`select`) leaves out what would take its archive past them,
#: so no archive a save writes is ever refused.  ``overlay.max_file_size`` is not one of them: it
#: decides what a save captures, never what a restore may read back.
MAX_ENTRIES = 200_000  # entries (files and symlinks; directories a foreign archive holds count too)
MAX_TOTAL = 8 * 1024**3  # bytes of regular-file content, all entries together

#: A callable opening an overlay archive as a binary stream (``with src() as fh``).
Opener = Callable[[], AbstractContextManager[IO[bytes]]]
#: An overlay archive: its bytes, or an :data:`Opener`.
Source = Union[bytes, bytearray, memoryview, Opener]


@dataclass
class Item:
    """One selected overlay entry: ``path`` relative (bytes), ``kind`` ``file``/``symlink``."""

    path: bytes
    kind: Literal["file", "symlink"]
    mode: int
    size: int
    mtime: int
    sha256: str
    data: bytes  # file content, or the link target


@dataclass
class Selection:
    """What :func:`select` found: ``items`` sorted by path, plus what it left out and why
    (``unreadable``: files the walk could not read, a path too long for the system included;
    warned about, not recorded in the manifest, whose paths are bounded; ``over_limits``: files
    past the archive's hard limits :data:`MAX_ENTRIES` / :data:`MAX_TOTAL`, recorded in
    ``skipped`` like those over ``max_file_size``)."""

    items: list[Item]
    secrets: list[bytes]
    too_large: list[bytes]
    unsafe_links: list[bytes]
    unreadable: list[bytes] = field(default_factory=list)
    over_limits: list[bytes] = field(default_factory=list)

    def info(self, cfg: Config) -> OverlayInfo:
        """The manifest's overlay record for this selection."""
        files = [
            OverlayFile(path=path_to_str(i.path), kind=i.kind, mode=i.mode, size=i.size, sha256=i.sha256, mtime=i.mtime)
            for i in self.items
        ]
        return OverlayInfo(
            include=list(cfg.overlay.include),
            exclude=list(cfg.overlay.exclude),
            max_file_size=cfg.max_file_size,
            files=files,
            digest=overlay_digest(files),
            skipped=[path_to_str(p) for p in self.secrets + self.too_large + self.unsafe_links + self.over_limits],
        )


def within_limits(items: list[Item]) -> tuple[list[Item], list[bytes]]:
    """Split ``items`` (sorted by path) into those an archive holds without passing the hard
    limits :data:`MAX_ENTRIES` and :data:`MAX_TOTAL` that :func:`read_archive` applies, and the
    paths left out.  Deterministic: items are taken in path order; a file whose bytes would take
    the total past :data:`MAX_TOTAL` is left out (a later, smaller one may still fit); once
    :data:`MAX_ENTRIES` are taken, every later item is left out.  Raises nothing."""
    kept: list[Item] = []
    left: list[bytes] = []
    total = 0
    for item in items:
        size = item.size if item.kind == "file" else 0
        if len(kept) >= MAX_ENTRIES or total + size > MAX_TOTAL:
            left.append(item.path)
            continue
        kept.append(item)
        total += size
    return kept, left


def overlay_digest(files: Iterable[OverlayFile]) -> str:
    """Content digest of an overlay (paths, kinds, modes, content hashes; not mtimes)."""
    files = list(files)
    if not files:
        return ""
    return digest([[f.path, f.kind, f.mode, f.sha256] for f in files])


def _static_prefix(pattern: str) -> str | None:
    """The literal directory part of an anchored pattern (``tmp/fixtures/`` → ``tmp/fixtures``).

    None when the pattern may match at any depth (no slash before its end).
    """
    p = pattern.strip()
    if p.startswith("!"):
        return ""
    anchored = "/" in p.rstrip("/")
    p = p.lstrip("/")
    if not anchored:
        return None
    parts = []
    for comp in p.rstrip("/").split("/"):
        if any(c in comp for c in "*?[\\"):
            break
        parts.append(comp)
    return "/".join(parts)


def _specs(include: list[str], exclude: list[str]) -> tuple[Patterns, Patterns]:
    """The compiled include and exclude specs of an overlay policy, each pattern in the form
    :func:`~git_ckpt.config.normalized_pattern` gives it, matched by RE2
    (:func:`~git_ckpt.config.compile_patterns`).  Raises what pathspec raises for a pattern it
    cannot compile (several types)."""
    from .config import compile_patterns

    return compile_patterns(include), compile_patterns(exclude)


def select(repo_root: Path, cfg: Config, is_ignored: Callable[[str], bool],
           ignored_below: Callable[[bytes], list[bytes]] | None = None) -> Selection:
    """Find the overlay entries under ``repo_root`` for the ``[overlay]`` policy in ``cfg``.

    ``is_ignored(relpath: str) -> bool`` decides git-ignoredness (only ignored files belong to the
    overlay; the others are in the worktree snapshot already).  Returns a :class:`Selection`
    with items sorted by path bytes.  The walk keeps its own stack (directories may nest deeper
    than Python recurses); a path it cannot look at (longer than the system's ``PATH_MAX`` from
    the root, while git, working below the root, has no such limit) is asked about through
    ``ignored_below(rel)`` (the ignored files at or below ``rel``, as git lists them): each the
    policy would take is left out as ``unreadable``, and so is a file that cannot be read.
    Raises :class:`ConfigError` for a pattern that does not compile.
    """
    include = [p for p in cfg.overlay.include if p.strip()]
    if not include:
        return Selection([], [], [], [])

    try:
        inc, exc = _specs(include, cfg.overlay.exclude)
    except CkptError:
        raise  # no matcher (google-re2 missing): not the patterns' fault
    except Exception as err:  # noqa: BLE001 - pathspec raises several types for bad patterns
        raise ConfigError(f"overlay: bad pattern in include/exclude: {err}", "fix overlay.include / overlay.exclude in .ckpt.toml") from None
    secret_spec: list[SecretNames] = []  # compiled on first use (18 patterns: 5-20 ms)
    limit = cfg.max_file_size
    prefixes = [_static_prefix(p) for p in include]
    walk_all = any(p is None or p == "" for p in prefixes)
    roots = [""] if walk_all else sorted({p for p in prefixes if p is not None})

    items: list[Item] = []
    secrets: list[bytes] = []
    too_large: list[bytes] = []
    unsafe: list[bytes] = []
    unreadable: list[bytes] = []
    seen: set[bytes] = set()
    root_b = os.fsencode(repo_root)

    def matched(rel: bytes) -> bool:
        """Whether the file ``rel`` is one the overlay takes: included, not excluded, ignored."""
        rel_s = os.fsdecode(rel)
        return bool(inc.match_file(rel_s)) and not exc.match_file(rel_s) and is_ignored(rel_s)

    def visit(rel: bytes, todo: list[bytes]) -> None:
        """Look at ``rel``: a directory's entries go on ``todo`` (the walk keeps its own stack:
        directories nest deeper than Python recurses); a file the overlay takes is read."""
        if rel.startswith(b"/") or b".." in rel.split(b"/"):
            return  # never outside the worktree, whatever the pattern (config validation refuses these)
        if any(part.lower() == b".git" for part in rel.split(b"/")):
            return  # never .git (in any case: .GIT is .git on a case-insensitive file system)
        full = os.path.join(root_b, rel) if rel else root_b
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            return
        except OSError:  # a path too long for the system (git works below the root; this walk cannot)
            for f in ignored_below(rel) if ignored_below is not None and rel else [rel]:
                parts = f.split(b"/")
                if f in seen or any(exc.match_file(os.fsdecode(b"/".join(parts[:i])) + "/") for i in range(1, len(parts))):
                    continue
                if matched(f):
                    seen.add(f)
                    unreadable.append(f)
            return
        rel_s = os.fsdecode(rel)
        if stat.S_ISDIR(st.st_mode):
            if rel and (rel.split(b"/")[-1] == b".git" or exc.match_file(rel_s + "/")):
                return
            try:
                names = sorted(os.listdir(full))
            except OSError:
                return
            todo.extend(reversed([rel + b"/" + name if rel else name for name in names if rel or name != b".git"]))
            return
        if rel in seen or not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            return
        if not matched(rel):
            return
        seen.add(rel)
        if not cfg.overlay.allow_secrets and not secret_spec:
            secret_spec.append(SecretNames())
        if not cfg.overlay.allow_secrets and secret_spec[0].match_file(rel_s):
            secrets.append(rel)
            return
        try:
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(full)
                if not link_stays_inside(rel, target):
                    unsafe.append(rel)
                    return
                items.append(Item(rel, "symlink", 0o120000, len(target), int(st.st_mtime), hashlib.sha256(target).hexdigest(), target))
                return
            if st.st_size > limit:
                too_large.append(rel)
                return
            with open(full, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:  # gone meanwhile
            return
        except OSError:  # unreadable (permissions, a path too long): left out, and said
            unreadable.append(rel)
            return
        mode = 0o100000 | (st.st_mode & 0o7777)  # full permission bits: a 0600 key fixture stays 0600
        items.append(Item(rel, "file", mode, len(data), int(st.st_mtime), hashlib.sha256(data).hexdigest(), data))

    for r in roots:
        rb = os.fsencode(r)
        parts = rb.split(b"/") if rb else []
        # a root below a symlinked directory would be read through the link (outside the worktree)
        if any(os.path.islink(os.path.join(root_b, *parts[:i])) for i in range(1, len(parts))):
            continue
        todo = [rb]
        while todo:
            visit(todo.pop(), todo)
    items.sort(key=lambda i: i.path)
    items, over = within_limits(items)  # never an archive a reader would refuse
    return Selection(items, sorted(secrets), sorted(too_large), sorted(unsafe), sorted(unreadable), over)


def policy_selects(include: list[str], exclude: list[str], paths: Iterable[bytes]) -> set[bytes]:
    """Which of ``paths`` (worktree-relative files) the overlay policy ``include``/``exclude``
    (a checkpoint's recorded :class:`~git_ckpt.model.OverlayInfo` patterns) selects, as
    :func:`select` would on disk: an include pattern matches the file, no exclude pattern
    matches it or a directory above it.  Patterns that do not compile select nothing."""
    from .config import overlay_pattern_problem, patterns_too_many

    include = [p for p in include if p.strip()]
    wanted = list(paths)
    if not include or not wanted:
        return set()
    if patterns_too_many(include, exclude) or any(overlay_pattern_problem(p, compiled=True) for p in include + exclude):
        return set()  # a policy no config would pass (a crafted manifest's): it covers nothing (compiled below)
    try:
        inc, exc = _specs(include, exclude)
    except ConfigError:
        return set()  # too much for one matcher: a foreign manifest's, which then covers nothing
    except CkptError:
        raise  # no matcher (google-re2 missing): not the patterns' fault
    except Exception:  # noqa: BLE001 - a foreign manifest's patterns: selecting nothing is the safe answer
        return set()
    out = set()
    for p in wanted:
        rel = os.fsdecode(p)
        parts = rel.split("/")
        if inc.match_file(rel) and not exc.match_file(rel) and not any(
                exc.match_file("/".join(parts[:i]) + "/") for i in range(1, len(parts))):
            out.add(p)
    return out


def why_not_kept(root: bytes, cfg: Config, rel: bytes, is_ignored: Callable[[str], bool]) -> str | None:
    """Why the overlay would not take the file ``rel`` under ``root`` even if ``overlay.include``
    named it: ``"not-ignored"`` (the worktree snapshot's, or a file save skipped), ``"excluded"``
    (``overlay.exclude``), ``"not-a-file"``, ``"secret"`` (a likely-secret name, without
    ``allow_secrets``), ``"too-large"`` (over ``max_file_size``), ``"unsafe-link"``; None when
    it would (as :func:`select` decides)."""

    rel_s = os.fsdecode(rel)
    try:
        st = os.lstat(os.path.join(root, rel))
    except OSError:
        return "not-a-file"
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        return "not-a-file"
    if not is_ignored(rel_s):
        return "not-ignored"
    if not policy_selects(["*"], list(cfg.overlay.exclude), [rel]):
        return "excluded"
    if not cfg.overlay.allow_secrets and SecretNames().match_file(rel_s):
        return "secret"
    if stat.S_ISLNK(st.st_mode):
        try:
            return None if link_stays_inside(rel, os.readlink(os.path.join(root, rel))) else "unsafe-link"
        except OSError:
            return "not-a-file"
    return "too-large" if st.st_size > cfg.max_file_size else None


def already_there(root: bytes, entries: Mapping[bytes, tuple[str, int, str]], paths: Iterable[bytes]) -> set[bytes]:
    """Which of ``paths`` already are their overlay entry in ``entries`` (path → (kind, mode,
    sha256)) on disk under ``root``: a symlink to the same target, or a regular file with the same
    permission bits and bytes (hashed in chunks)."""
    out = set()
    for p in paths:
        kind, mode, want = entries[p]
        full = os.path.join(root, p)
        try:
            st = os.lstat(full)
            if kind == "symlink" and stat.S_ISLNK(st.st_mode):
                ok = hashlib.sha256(os.readlink(full)).hexdigest() == want
            elif kind == "file" and stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == mode & 0o7777:
                with open(full, "rb") as fh:
                    ok = hashlib.file_digest(fh, "sha256").hexdigest() == want
            else:
                ok = False
        except OSError:
            ok = False
        if ok:
            out.add(p)
    return out


def as_restore_sees(root: Path, target: OverlayInfo, now: list[OverlayFile]) -> list[OverlayFile]:
    """The overlay captured ``now`` (by the current policy) as a restore to ``target`` would judge
    it: an entry of ``target`` the capture lacks (outside the current policy: named by ``git -c``
    at save time, say) counts as present when it is on disk as saved, and an entry ``target``
    lacks that ``target``'s own recorded policy does not cover counts as absent (a restore leaves
    it).  What ``status`` and ``diff`` compare, so they agree with ``restore``; sorted by path."""
    tgt = {path_from_str(f.path): f for f in target.files}
    cur = {path_from_str(f.path): f for f in now}
    extra = [p for p in cur if p not in tgt]
    covered = policy_selects(target.include, target.exclude, extra) if extra else set()
    out = {p: f for p, f in cur.items() if p in tgt or p in covered}
    missing = [p for p in tgt if p not in cur]
    if missing:
        entries = {p: (tgt[p].kind, tgt[p].mode, tgt[p].sha256) for p in missing}
        out.update({p: tgt[p] for p in already_there(os.fsencode(root), entries, missing)})
    return [out[p] for p in sorted(out)]


def link_stays_inside(rel: bytes, target: bytes) -> bool:
    """Whether symlink ``rel`` → ``target`` resolves inside the worktree root.

    The target must be relative and in normal form: its ``..`` steps all come first (before any
    named component), and never climb above the root.  A ``..`` after a named component
    (``a/../x``) is refused because ``a`` may itself be a symlink (``a -> .``), which would make
    the physical path climb one level more than the lexical one.
    """
    if not target or target.startswith(b"/"):
        return False
    parts = rel.split(b"/")[:-1]
    named = False
    for comp in target.split(b"/"):
        if comp in (b"", b"."):
            continue
        if comp == b"..":
            if not parts or named:
                return False
            parts.pop()
        else:
            named = True
            parts.append(comp)
    return True


def build_tar(items: list[Item]) -> bytes:
    """A deterministic, uncompressed tar of ``items`` (sorted; uid/gid 0, no owner names).

    Parent directories are implied by the paths and not stored.
    """
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8", errors="surrogateescape") as tar:
        for item in sorted(items, key=lambda i: i.path):
            info = tarfile.TarInfo(os.fsdecode(item.path))
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = item.mtime
            if item.kind == "symlink":
                info.type = tarfile.SYMTYPE
                info.linkname = os.fsdecode(item.data)
                info.mode = 0o777
                tar.addfile(info)
            else:
                info.type = tarfile.REGTYPE
                info.mode = item.mode & 0o7777
                info.size = len(item.data)
                tar.addfile(info, io.BytesIO(item.data))
    return buf.getvalue()


@dataclass
class Entry:
    """A validated archive entry ready to write.  A file read from an archive carries its
    ``size`` and ``sha256`` and no ``data`` (its bytes are streamed from the archive when
    written, :func:`write_entries`); a file built in memory (``raw/``) carries ``data``."""

    path: bytes
    kind: str  # file | symlink | dir
    mode: int
    mtime: int
    data: bytes
    size: int = 0
    sha256: str = ""


CHUNK = 1 << 20  # bytes read at a time from an archive stream


def _opener(source: Source) -> Opener:
    """``source`` (archive bytes, or a callable returning a context manager of a binary
    stream) as such a callable."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = source
        return lambda: contextlib.nullcontext(io.BytesIO(bytes(data)))
    return source


def _safe_relpath(name: str) -> bytes:
    raw = os.fsencode(name)
    if raw.startswith(b"/"):
        raise CorruptError(f"overlay archive entry {path_display(raw)!r} has an absolute path; refusing the archive")
    parts = [p for p in raw.split(b"/") if p not in (b"", b".")]
    if not parts:
        raise CorruptError(f"overlay archive entry {name!r} has an empty path; refusing the archive")
    if any(p == b".." for p in parts):
        raise CorruptError(f"overlay archive entry {path_display(raw)!r} contains '..'; refusing the archive")
    if any(p.lower() == b".git" for p in parts):  # .GIT is .git on case-insensitive file systems
        raise CorruptError(f"overlay archive entry {path_display(raw)!r} writes into .git; refusing the archive")
    return b"/".join(parts)


def safe_relpath(path: bytes) -> bytes:
    """Validate a worktree-relative path from a checkpoint (no absolute path, ``..`` or
    ``.git``); returns it normalised or raises :class:`CorruptError`."""
    return _safe_relpath(os.fsdecode(path))


def read_archive(source: Source) -> list[Entry]:
    """Parse and validate a whole overlay tar before anything is written, streaming it with
    bounded memory (``source``: archive bytes or a callable opening a stream, e.g.
    :meth:`git_ckpt.store.Checkpoint.overlay_source`).  Returns the validated entries in archive
    order (a file's ``size`` and ``sha256``, no ``data``).  The size and count caps are the hard
    limits :data:`MAX_ENTRIES` and :data:`MAX_TOTAL`, which every save keeps to: never the
    archive's or its manifest's, and never the configuration's ``overlay.max_file_size`` (a
    save-time choice of what to capture: lowered since, or a restored ``.ckpt.toml``'s, it must
    not make a saved checkpoint unreadable).

    Raises :class:`CorruptError` naming the first refused entry: absolute paths, ``..``,
    ``.git``, hard links, devices, FIFOs, an entry below a symlink of the archive, a symlink
    pointing outside the worktree, more than ``MAX_ENTRIES`` entries or ``MAX_TOTAL`` bytes of
    files, or a truncated/garbled archive.  A file taking the total past ``MAX_TOTAL`` is refused
    from its header, before its content is read.
    """
    import tarfile

    entries: list[Entry] = []
    total = 0
    try:
        with _opener(source)() as stream, tarfile.open(fileobj=stream, mode="r|", encoding="utf-8", errors="surrogateescape") as tar:
            for member in tar:
                if len(entries) >= MAX_ENTRIES:
                    raise CorruptError(f"overlay archive has more than {MAX_ENTRIES} entries; refusing it")
                rel = _safe_relpath(member.name)
                shown = path_display(rel)
                if not -(2**34) < member.mtime < 2**34:
                    raise CorruptError(f"overlay archive entry {shown!r} has an impossible mtime; refusing the archive")
                if member.isreg():
                    total += member.size
                    if total > MAX_TOTAL:
                        raise CorruptError(f"overlay archive entry {shown!r} ({counted(member.size, 'byte')}) takes the archive past "
                                           f"the total size limit ({MAX_TOTAL} bytes); refusing it")
                    fh = tar.extractfile(member)
                    h, n = hashlib.sha256(), 0
                    while fh is not None:
                        chunk = fh.read(CHUNK)
                        if not chunk:
                            break
                        h.update(chunk)
                        n += len(chunk)
                    if n != member.size:
                        raise CorruptError(f"overlay archive entry {shown!r} is truncated")
                    entries.append(Entry(rel, "file", member.mode & 0o7777, int(member.mtime), b"", n, h.hexdigest()))  # all bits: setuid, setgid, sticky
                elif member.issym():
                    target = os.fsencode(member.linkname)
                    if not link_stays_inside(rel, target):
                        raise CorruptError(f"overlay archive symlink {shown!r} points outside the worktree; refusing the archive")
                    entries.append(Entry(rel, "symlink", 0o777, int(member.mtime), target))
                elif member.isdir():
                    entries.append(Entry(rel, "dir", 0o755, int(member.mtime), b""))
                elif member.islnk():
                    raise CorruptError(f"overlay archive entry {shown!r} is a hard link; refusing the archive")
                else:
                    raise CorruptError(f"overlay archive entry {shown!r} is a device, FIFO or other special file; refusing the archive")
    except (tarfile.TarError, EOFError) as exc:
        raise CorruptError(f"overlay archive is corrupt: {exc}") from None
    seen: dict[bytes, str] = {}
    for e in entries:  # a path twice only as two directory entries (a file and a directory there: which one?)
        if e.path in seen and (e.kind != "dir" or seen[e.path] != "dir"):
            raise CorruptError(f"overlay archive names {path_display(e.path)!r} twice; refusing the archive")
        seen[e.path] = e.kind
    # Whatever the order of the entries: nothing may lie below a symlink or a file of the archive.
    leaves = {e.path: e.kind for e in entries if e.kind != "dir"}
    for e in entries:
        parts = e.path.split(b"/")
        for i in range(1, len(parts)):
            kind = leaves.get(b"/".join(parts[:i]))
            if kind == "symlink":
                raise CorruptError(f"overlay archive entry {path_display(e.path)!r} lies below a symlink of the archive; refusing the archive")
            if kind == "file":
                raise CorruptError(f"overlay archive entry {path_display(e.path)!r} lies below a file of the archive; refusing the archive")
    return entries


def _check_parents(root: bytes, rel: bytes, removed: frozenset[bytes] = frozenset()) -> None:
    """Refuse when any existing parent of ``rel`` under ``root`` is a symlink or not a directory
    (:class:`CorruptError`), or cannot be looked at (:class:`IOFailure`: a path too long for the
    system, say)."""
    parts = rel.split(b"/")[:-1]
    cur = root
    for comp in parts:
        cur = os.path.join(cur, comp)
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise IOFailure(f"cannot write overlay file {path_display(rel)!r}: {exc.strerror}",
                            "free disk space or fix permissions, then run git ckpt restore --continue") from None
        if stat.S_ISLNK(st.st_mode):
            if os.path.relpath(cur, root) in removed:
                return  # a symlink the restore deletes first
            raise CorruptError(
                f"refusing to write overlay entry {path_display(rel)!r}: {path_display(os.path.relpath(cur, root))!r} is a symlink in the worktree",
                "move that symlink aside and run the command again",
            )
        if not stat.S_ISDIR(st.st_mode):
            if os.path.relpath(cur, root) in removed:
                return  # a file the restore deletes first
            raise CorruptError(
                f"refusing to write overlay entry {path_display(rel)!r}: {path_display(os.path.relpath(cur, root))!r} is a file in the worktree",
                "move that file aside and run the command again",
            )


def check_writable(root: Path, entries: list[Entry], removed: set[bytes] | frozenset[bytes] = frozenset()) -> None:
    """Pre-flight: refuse (writing nothing) if any entry would be written through a symlink on
    disk, or below a file that is not in ``removed`` (paths the caller deletes before writing)."""
    root_b = os.fsencode(root)
    gone = frozenset(removed)
    for e in entries:
        _check_parents(root_b, e.path, gone)


def _makedirs(root: bytes, rel_dir: bytes) -> None:
    cur = root
    for comp in rel_dir.split(b"/") if rel_dir else []:
        cur = os.path.join(cur, comp)
        try:
            os.mkdir(cur, 0o755)
        except FileExistsError:
            st = os.lstat(cur)
            if not stat.S_ISDIR(st.st_mode):
                raise CorruptError(f"refusing to write below {path_display(cur)!r}: not a directory") from None


def write_entry(root: Path, e: Entry, content: IO[bytes] | None = None) -> str | None:
    """Write one validated entry below ``root``: replaces a file or link there, never follows one.
    A file's bytes come from ``content`` (a stream, read in chunks) when given, else ``e.data``;
    its permission bits are exactly ``e.mode`` (setuid, setgid and sticky too).  Returns a
    warning when the system would not set them all (the kernel drops setgid for a group the
    user is not in, say), else None."""
    root_b = os.fsencode(root)
    _check_parents(root_b, e.path)
    full = os.path.join(root_b, e.path)
    try:
        if e.kind == "dir":
            _makedirs(root_b, e.path)
            return None
        _makedirs(root_b, os.path.dirname(e.path))
        try:
            st = os.lstat(full)
            if stat.S_ISDIR(st.st_mode):
                raise CorruptError(f"refusing to replace directory {path_display(e.path)!r} with an overlay {e.kind}")
            os.unlink(full)
        except FileNotFoundError:
            pass
        if e.kind == "symlink":
            os.symlink(e.data, full)
            os.utime(full, (e.mtime, e.mtime), follow_symlinks=False)
            return None
        fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, e.mode)
        try:
            h = hashlib.sha256()
            for chunk in (iter(lambda: content.read(CHUNK), b"") if content is not None else [e.data]):
                h.update(chunk)
                view = memoryview(chunk)
                while view:
                    n = os.write(fd, view)
                    view = view[n:]
            # after the bytes (a write clears setuid/setgid); the umask does not apply to fchmod
            warning = _set_mode(fd, e)
        finally:
            os.close(fd)
        if content is not None and e.sha256 and h.hexdigest() != e.sha256:
            raise CorruptError(f"overlay archive entry {path_display(e.path)!r} changed while it was read; refusing it")
        os.utime(full, (e.mtime, e.mtime), follow_symlinks=False)
        return warning
    except OSError as exc:
        raise IOFailure(f"cannot write overlay file {path_display(e.path)!r}: {exc.strerror}", "free disk space or fix permissions, then run git ckpt restore --continue") from None


def _set_mode(fd: int, e: Entry) -> str | None:
    """Give the open file ``fd`` exactly the permission bits ``e.mode``; a warning naming the
    bits the system would not set (refused, or silently dropped: setgid for a group the user
    is not in), None when all were set."""
    want = e.mode & 0o7777
    try:
        os.fchmod(fd, want)
    except PermissionError:  # setuid/setgid refused: the plain bits at least
        os.fchmod(fd, want & 0o777)
    got = stat.S_IMODE(os.fstat(fd).st_mode)
    if got == want:
        return None
    lost = [name for bit, name in ((stat.S_ISUID, "setuid"), (stat.S_ISGID, "setgid"), (stat.S_ISVTX, "sticky"))
            if want & bit and not got & bit]
    what = " and ".join(lost) or "permission"
    return (f"overlay file {path_display(e.path)} restored with mode {got:o}, not the saved {want:o}: "
            f"the system would not set its {what} bit{'s' if len(lost) > 1 else ''}")


def write_entries(root: Path, source: Source, entries: list[Entry], before: Callable[[bytes], object] | None = None) -> list[str]:
    """Write the validated ``entries`` (from :func:`read_archive` of the same ``source``) below
    ``root``, streaming each file's bytes from a second read of the archive; the caller has run
    :func:`check_writable`.  Each file's content is checked against the sha256 seen when the
    archive was validated.  ``before(path)``, when given, runs before each entry is written (a
    restore re-checks that nobody changed the file it replaces).  Returns the warnings of
    :func:`write_entry` (permission bits the system would not set)."""
    import tarfile  # lazily: only restores and checks that write files read archives

    wanted = {e.path: e for e in entries}
    warnings: list[str] = []
    for e in entries:
        if e.kind != "file":
            if before is not None:
                before(e.path)
            write_entry(root, e)
    if not any(e.kind == "file" for e in entries):
        return warnings
    try:
        with _opener(source)() as stream, tarfile.open(fileobj=stream, mode="r|", encoding="utf-8", errors="surrogateescape") as tar:
            for member in tar:
                if not member.isreg():
                    continue
                hit = wanted.get(_safe_relpath(member.name))
                if hit is not None and hit.kind == "file":
                    if before is not None:
                        before(hit.path)
                    warning = write_entry(root, hit, tar.extractfile(member))
                    if warning:
                        warnings.append(warning)
    except (tarfile.TarError, EOFError) as exc:
        raise CorruptError(f"overlay archive is corrupt: {exc}") from None
    return warnings


def manifest_mismatches(entries: Iterable[Entry], files: Iterable[OverlayFile]) -> tuple[list[bytes], list[tuple[bytes, str]]]:
    """How an archive's validated ``entries`` (:func:`read_archive`) differ from the overlay
    files its manifest lists (``files``), the one comparison restore and ``check`` make: the
    paths of file and symlink entries the manifest does not list (sorted), and ``(path,
    problem)`` for each listed path (in path order) that ``is missing from overlay.tar``,
    ``should be a symlink`` / ``should be a regular file``, ``has mode 0o…, manifest says
    0o…`` (all twelve permission bits: a setuid bit the manifest does not list is one) or
    ``differs from the manifest's sha256`` (of the content, or of a symlink's target)."""
    listed = {path_from_str(f.path): f for f in files}
    unlisted, seen = [], set()
    problems = []
    for e in entries:
        if e.kind == "dir":
            continue
        f = listed.get(e.path)
        if f is None:
            unlisted.append(e.path)
            continue
        seen.add(e.path)
        if f.kind != e.kind:
            problems.append((e.path, "should be a symlink" if f.kind == "symlink" else "should be a regular file"))
        elif e.kind == "file" and (0o100000 | (e.mode & 0o7777)) != f.mode:
            problems.append((e.path, f"has mode {oct(e.mode & 0o7777)}, manifest says {oct(f.mode & 0o7777)}"))
        elif f.sha256 != (e.sha256 if e.kind == "file" else hashlib.sha256(e.data).hexdigest()):
            problems.append((e.path, "differs from the manifest's sha256"))
    problems += [(p, "is missing from overlay.tar") for p in listed if p not in seen]
    return sorted(unlisted), sorted(problems)


def extract(root: Path, source: Source, only: set[bytes] | None = None) -> list[bytes]:
    """Validate the whole archive (:func:`read_archive`, its hard limits), pre-flight every
    target, then write below ``root`` (``only`` limits which paths), streaming: memory stays
    bounded whatever the archive's size.

    Returns the paths written.  A refused archive raises :class:`CorruptError` and writes
    nothing; a failed write raises :class:`IOFailure`.
    """
    entries = read_archive(source)
    if only is not None:
        entries = [e for e in entries if e.path in only]
    check_writable(root, entries)
    write_entries(root, source, entries)
    return [e.path for e in entries if e.kind != "dir"]
