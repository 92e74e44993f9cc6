"""Capture the state of a worktree and save it as a checkpoint (``git ckpt save``).

What is captured, and how (DESIGN.md "Storage layout", behaviour 2):

* the worktree as ``git add -A`` would store it (clean filters and eol rules applied), run by the
  user's ``git`` on a *copy* of the index, so stat data is reused and the real index is never
  touched or locked;
* the index as staged, via ``git write-tree`` on another copy; intent-to-add entries (which
  ``write-tree`` leaves out) and skip-worktree entries are listed in the manifest, and conflict
  stages 1–3 are stored as trees under ``stages/`` in the meta commit;
* bytes that ``smudge(clean(bytes))`` would not give back (checked only where eol rules or
  filters can apply) as blobs under ``raw/``;
* the overlay (see :mod:`git_ckpt.overlay`);
* HEAD and its branch.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import msgspec

from . import fsutil, ledger, overlay, store
from . import config
from .config import Config
from .errors import BusyError, CkptError, CorruptError, UsageError
from .gitcore import EMPTY_BLOB, RefConflict, Repo, fault, git_failure, read_state, ref_number
from .model import Card, Kind, Manifest, OverlayInfo, SHORT, decode_manifest, digest, encode, fit, path_display, path_from_str, path_to_str, row_line
from .words import counted, short_base


@dataclass
class Snapshot:
    """Everything a checkpoint records about a worktree, before it is written as commits."""

    tree: str
    index_tree: str
    base: str | None
    branch: str | None
    intent_to_add: list[bytes] = field(default_factory=list)
    skip_worktree: list[bytes] = field(default_factory=list)
    stages: list[tuple[int, str, int, bytes]] = field(default_factory=list)  # (mode, oid, stage, path)
    raw: list[tuple[bytes, int, str]] = field(default_factory=list)  # (path, mode, blob of the exact bytes)
    selection: overlay.Selection = field(default_factory=lambda: overlay.Selection([], [], [], []))
    too_large: list[bytes] = field(default_factory=list)
    overlay_info: OverlayInfo = field(default_factory=OverlayInfo)  # set by capture()
    skip_absent: list[bytes] = field(default_factory=list)
    embedded: list[bytes] = field(default_factory=list)
    merge_heads: list[str] = field(default_factory=list)
    assume_unchanged: list[bytes] = field(default_factory=list)
    overlay_tar: bytes | None = None  # overlay.tar of selection.items, when capture built it already
    merge_msg: bytes | None = None  # $GIT_DIR/MERGE_MSG of the merge in progress (with merge_heads)

    @property
    def conflicts(self) -> list[bytes]:
        """Paths with conflict stages, sorted."""
        return sorted({p for _m, _o, _s, p in self.stages})

    def state(self) -> str:
        """A digest of everything restore would reproduce (not who or when)."""
        extra: list[object] = [[path_to_str(p) for p in self.assume_unchanged]] if self.assume_unchanged or self.merge_msg is not None else []
        if self.merge_msg is not None:  # (absent from the digest before merge messages were kept)
            extra.append(hashlib.sha256(self.merge_msg).hexdigest())
        return digest(
            [
                self.tree,
                self.index_tree,
                self.base,
                [path_to_str(p) for p in self.intent_to_add],
                [path_to_str(p) for p in self.skip_worktree],
                [[m, o, s, path_to_str(p)] for m, o, s, p in self.stages],
                [[path_to_str(p), m, o] for p, m, o in self.raw],
                self.overlay_info.digest if self.overlay_info else "",
                [path_to_str(p) for p in self.skip_absent],
                self.merge_heads,
                *extra,
            ]
        )


_STAGE_REC = re.compile(rb"([A-Za-z?]) (\d+) ([0-9a-f]+) (\d)\t")
_UNMERGED_REC = re.compile(rb"(?:^|(?<=\0))[A-Za-z?] ([0-7]+) ([0-9a-f]+) ([123])\t([^\0]*)")
_SKIP_REC = re.compile(rb"(?:^|(?<=\0))[Ss] [0-7]+ [0-9a-f]+ 0\t([^\0]*)")


def _parse_ls_files(out: bytes, empty_blob: str = EMPTY_BLOB) -> tuple[list[tuple[int, str, int, bytes]], list[bytes], list[bytes]]:
    """Parse ``git ls-files -s -t -z``: (unmerged stage entries, empty-blob stage-0 paths, skip-worktree paths).

    Only the records that can matter are parsed in Python; a plain index is scanned in C.
    """
    stages: list[tuple[int, str, int, bytes]] = []
    empties: list[bytes] = []
    skips: list[bytes] = []
    # (a regex with a literal first byte scans in C; bytes.__contains__ of b"\0S " is slower)
    has_skip = out[:1] in (b"S", b"s") or re.search(rb"\0[Ss] ", out) is not None
    unmerged = re.search(rb" [123]\t", out) is not None
    interesting = empty_blob.encode() in out or has_skip or unmerged
    if not interesting:
        return stages, empties, skips
    # Each pattern finds whole records (a record starts the output or follows a NUL; paths
    # never hold NUL), so only the few records that matter reach Python.
    if unmerged:
        for m in _UNMERGED_REC.finditer(out):
            stages.append((int(m.group(1), 8), m.group(2).decode(), int(m.group(3)), m.group(4)))
    # Empty blobs can be many (empty __init__.py files): find them with bytes.find, in C.
    needle = b" " + empty_blob.encode() + b" 0\t"
    i = out.find(needle)
    while i != -1:
        start = out.rfind(b"\0", 0, i) + 1
        end = out.find(b"\0", i)
        end = len(out) if end == -1 else end
        rec = _STAGE_REC.match(out, start, end)
        if rec and rec.group(3) == empty_blob.encode() and rec.group(4) == b"0":
            empties.append(out[rec.end():end])
        i = out.find(needle, end)
    if has_skip:
        skips = [m.group(1) for m in _SKIP_REC.finditer(out)]
    return stages, empties, skips


_ASSUMED_REC = re.compile(rb"(?:^|(?<=\0))[a-z] [0-7]+ [0-9a-f]+ [0-3]\t([^\0]*)")


def _assume_unchanged(listing: bytes) -> list[bytes]:
    """Paths marked assume-unchanged in a ``git ls-files -s -v -z`` listing (lower-case tag)."""
    # "\0[a-z] " has a literal first byte, so re scans for it in C (the "(?:^|\0)" form tried
    # every position: 45 ms on a 34,000-entry listing)
    if not (listing[:1].islower() or re.search(rb"\0[a-z] ", listing)):
        return []
    return [m.group(1) for m in _ASSUMED_REC.finditer(listing)]


def _index_may_hold_flags(path: Path) -> bool:
    """False when the index file is version 2: it cannot hold intent-to-add (or skip-worktree)
    entries, and git writes version 3 whenever an entry has such a flag (read-cache.c demotes
    3 to 2 only when no entry needs the extended flags)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
    except OSError:
        return True
    return not (head[:4] == b"DIRC" and head[4:8] == b"\0\0\0\2")


def _filters_may_apply(repo: Repo, index_listing: bytes, untracked: list[bytes]) -> bool:
    """Whether eol conversion or filters could make ``smudge(clean(bytes)) != bytes``."""
    for key in ("core.autocrlf", "core.eol", "core.attributesFile"):
        val = repo.config_get(key)
        if val is None:
            continue
        if key == "core.autocrlf" and str(val).lower() in ("false", "0", "no", "off"):
            continue
        if key == "core.eol" and str(val).lower() in ("native", "lf"):
            continue
        return True
    if (repo.common_dir / "info" / "attributes").exists():
        return True
    if b".gitattributes\0" in index_listing:
        return True
    return any(p == b".gitattributes" or p.endswith(b"/.gitattributes") for p in untracked)


_NO_CONVERSION = (b"unspecified", b"unset")


def _autocrlf(repo: Repo) -> bool:
    """Whether core.autocrlf or core.eol=crlf can convert any text file."""
    for key, off in (("core.autocrlf", ("false", "0", "no", "off")), ("core.eol", ("native", "lf"))):
        val = repo.config_get(key)
        if val is not None and val.lower() not in off:
            return True
    return False


def _raw_check(repo: Repo, w_tree: str, base: str | None) -> list[tuple[bytes, int, str]]:
    """Blobs of the exact bytes of files whose smudged blob would differ from the disk.

    Candidates are every regular file git may convert: all of them under core.autocrlf, else
    those with a ``text``, ``eol``, ``filter``, ``ident`` or ``working-tree-encoding``
    attribute (``git check-attr``).  Each is checked out into a scratch prefix exactly as
    restore would write it and compared with the bytes on disk.
    """
    files = [e for e in repo.ls_tree(w_tree) if e.mode in (0o100644, 0o100755)]
    if not files:
        return []
    if _autocrlf(repo):
        candidates = files
    else:
        attrs = repo.git("check-attr", "-z", "--stdin", "text", "eol", "filter", "ident", "working-tree-encoding",
                         input=b"".join(e.path + b"\0" for e in files)).stdout.split(b"\0")
        converted = {attrs[i] for i in range(0, len(attrs) - 2, 3) if attrs[i + 2] not in _NO_CONVERSION}
        candidates = [e for e in files if e.path in converted]
    if not candidates:
        return []
    # smudge(blob) for every candidate: check them out exactly as restore would (same temp
    # index holding the whole snapshot tree, so .gitattributes apply), into a scratch prefix.
    smudged: dict[bytes, bytes] = {}
    with fsutil.temp_dir("ckpt-raw-", dir=repo.git_dir) as scratch, repo.temp_index(copy_real=False) as idx:
        repo.git("read-tree", w_tree, index_file=idx)
        prefix = os.fsencode(scratch) + b"/"
        repo.git("checkout-index", "-f", "-q", "-z", "--stdin", "--prefix=" + os.fsdecode(prefix),
                 input=b"".join(e.path + b"\0" for e in candidates), index_file=idx)
        for e in candidates:
            try:
                with open(prefix + e.path, "rb") as fh:
                    smudged[e.path] = fh.read()
            except OSError:
                smudged[e.path] = b""
    out: list[tuple[bytes, int, str]] = []
    root = os.fsencode(repo.workdir)
    for entry in candidates:
        try:
            with open(os.path.join(root, entry.path), "rb") as fh:
                disk = fh.read()
        except OSError:
            continue
        if smudged[entry.path] != disk:
            out.append((entry.path, entry.mode, repo.blob(disk)))
    return out


T = TypeVar("T")

_NO_COMMIT = re.compile(rb"'(.+?)/?' does not have a commit checked out")


def _add_all(repo: Repo, idx: os.PathLike[str], exclude: list[bytes], sparse: bool) -> list[bytes]:
    """``git add -A`` into ``idx`` leaving out ``exclude``; nested repositories with no commit
    (which ``git add`` cannot record as a gitlink) are left out too and returned."""
    embedded: list[bytes] = []
    for _ in range(20):
        left_out = exclude + embedded
        extra = ["--sparse"] if sparse else []
        if left_out:
            spec = b":(top)\0" + b"".join(b":(top,exclude,literal)" + p + b"\0" for p in left_out)
            proc = repo.git("add", "-A", *extra, "--pathspec-from-file=-", "--pathspec-file-nul", input=spec,
                            index_file=idx, env={"GIT_LITERAL_PATHSPECS": "0"}, check=False)
        else:
            proc = repo.git("add", "-A", *extra, index_file=idx, check=False)
        if proc.returncode == 0:
            return embedded
        found = [m.group(1) for m in _NO_COMMIT.finditer(proc.stderr)]
        if not found or any(p in embedded for p in found):
            raise git_failure(("add",), proc)
        embedded += found
    raise git_failure(("add",), proc)


def _merge_heads(repo: Repo) -> list[str]:
    """The commits in ``$GIT_DIR/MERGE_HEAD`` (a merge in progress), or []."""
    try:
        text = read_state(repo.git_dir / "MERGE_HEAD", cap=1 << 20).decode()
    except (OSError, CkptError, UnicodeDecodeError):  # absent, or nothing git wrote: no merge to keep
        return []
    return [ln.strip() for ln in text.splitlines() if re.fullmatch(r"[0-9a-f]{40,64}", ln.strip())]


MERGE_MSG_MAX = 1 << 20  # bytes of $GIT_DIR/MERGE_MSG a checkpoint keeps


def _merge_msg(repo: Repo) -> bytes | None:
    """``$GIT_DIR/MERGE_MSG`` (the message ``git commit`` will offer for the merge in progress), or
    None when absent, not a regular file, or over :data:`MERGE_MSG_MAX` bytes (git writes a few
    lines; anything else is not worth keeping)."""
    try:
        return read_state(repo.git_dir / "MERGE_MSG", cap=MERGE_MSG_MAX)
    except (OSError, CkptError):
        return None


KEPT_IGNORED = "kept-ignored"  # in $GIT_DIR/ckpt: NUL-separated paths a restore kept as ignored


def kept_ignored(repo: Repo) -> list[bytes]:
    """The paths the last restore kept because the rules of the state it left ignored them (its
    plan's ``keep … (ignored by the rules of the state left)``), still on disk.  save, status
    and diff leave them out, as ignored files, until a restore whose rules ignore them, or
    ``git add`` (a tracked path is no longer left out).  Only a cache: a record that is no regular
    file (:func:`git_ckpt.gitcore.read_state`) or unreadable counts as none, so those paths are
    saved again rather than the save failing."""
    try:
        data = read_state(repo.git_dir / "ckpt" / KEPT_IGNORED)
    except (OSError, CorruptError):
        return []
    root = os.fsencode(repo.workdir)
    out = []
    for p in data.split(b"\0"):
        # local state, but still checked: relative, inside the worktree, not into .git
        if not p or p.startswith(b"/") or b".." in p.split(b"/") or p.split(b"/")[0].lower() == b".git":
            continue
        if os.path.lexists(os.path.join(root, p.rstrip(b"/"))):
            out.append(p)
    return out


def set_kept_ignored(repo: Repo, paths: list[bytes]) -> None:
    """Record :func:`kept_ignored` (after a restore); an empty list removes the record.  A kept
    directory (``cache/``) is recorded as the files (and symlinks) in it now, found without
    following symlinks: a file created there later is new work, not something the restore kept,
    and the next save takes it in."""
    root = os.fsencode(repo.workdir)
    files: list[bytes] = []
    for p in paths:
        if not p.endswith(b"/"):
            files.append(p)
            continue
        for top, dirs, names in fsutil.walk(os.path.join(root, p.rstrip(b"/"))):
            rel = os.path.relpath(top, root)
            links = [d for d in dirs if os.path.islink(os.path.join(top, d))]  # a link to a directory: a path of its own
            dirs[:] = [d for d in dirs if d not in links]
            files += [os.path.join(rel, n) for n in names + links]
    paths = files
    path = repo.ckpt_dir() / KEPT_IGNORED
    if not paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    store.atomic_write(path, b"\0".join(sorted(set(paths))) + b"\0")


def _concurrently(main: Callable[[], T], *gits: Callable[[], subprocess.CompletedProcess[bytes]]) -> tuple[T, list[subprocess.CompletedProcess[bytes]]]:
    """Run ``main`` in this thread while each of ``gits`` (one ``git`` process each, waited for)
    runs on a thread of its own; return ``main``'s result and the processes in order.  The first
    exception raised by any of them is raised after all have finished (no git outlives the call)."""
    procs: list[Any] = [None] * len(gits)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            procs[i] = gits[i]()
        except BaseException as exc:  # re-raised below, in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(gits))]
    for t in threads:
        t.start()
    try:
        result = main()
    finally:
        for t in threads:
            t.join()
    if errors:
        raise errors[0]
    return result, procs


def _add_listed(repo: Repo, idx: os.PathLike[str], untracked: list[bytes]) -> bool:
    """Add the untracked files ``untracked`` (from ``git ls-files -o``) to ``idx`` with ``git
    update-index --add --remove`` (the same clean filters and eol rules as ``git add``, and no
    walk of the worktree).  Returns False when git refused (a directory entry such as a nested
    repository, a file of a kind git cannot index): the caller then runs ``git add -A``."""
    if not untracked:
        return True
    if any(p.endswith(b"/") for p in untracked):  # nested repositories: git add decides what they become
        return False
    proc = repo.git("update-index", "--add", "--remove", "-z", "--stdin", input=b"".join(p + b"\0" for p in untracked),
                    index_file=idx, check=False)
    return proc.returncode == 0


def capture(repo: Repo, cfg: Config, *, build_tar: bool = False, read_only: bool = False) -> Snapshot:
    """Capture the worktree, index, HEAD and overlay of ``repo`` as objects (no refs written).

    Raises :class:`BusyError` while ``index.lock`` is held, unless ``read_only`` (the caller
    writes no checkpoint and changes nothing, as ``diff`` or a dry run: the capture works on a
    copy of the index and never writes the real one, so it reads it as ``git diff`` does while
    another git process holds it locked).  Mirrors ``git stash create`` plus
    untracked files, with ``git add -A`` semantics for what the worktree tree holds.

    The worktree is walked once: ``git ls-files -o`` (which untracked files there are, for the
    size cap) runs at the same time as ``git add -u`` (tracked files, which needs no walk: git's
    stat cache re-hashes only files whose stat changed) and as the index-side ``ls-files -s`` and
    ``write-tree``; the untracked files under the cap are then added by name
    (:func:`_add_listed`).  Anything unusual (assume-unchanged or skip-worktree entries present
    on disk, conflicts, nested repositories, a refused path) takes the sequential path that
    ends in ``git add -A``, whose result ``add -u`` plus the listed files equals.  With
    ``build_tar`` (a save) the overlay tar is built in that same window
    (:attr:`Snapshot.overlay_tar`; written as a blob only when a checkpoint is written: a save
    that finds nothing changed leaves no object behind).
    """
    if not read_only:
        repo.check_index_unlocked()
    base, branch = repo.head()
    limit = cfg.max_file_size
    root = os.fsencode(repo.workdir)
    sparse_cfg = repo.sparse_checkout() is not None
    with repo.temp_index(copy_real=True) as idx_i, repo.temp_index(copy_real=False) as idx_w:
        if idx_i.exists():  # one read of the real index: both copies agree
            shutil.copy2(idx_i, idx_w)
        add_u = ["add", "-u", *(["--sparse"] if sparse_cfg else [])]
        # -v: like -t, but the tag is lower case for assume-unchanged entries
        # the overlay is selected (Python, in this thread) while the four git processes run
        def select() -> tuple[overlay.Selection, bytes | None]:
            chosen = overlay.select(repo.workdir, cfg, repo.is_ignored, repo.ignored_files)
            return chosen, (overlay.build_tar(chosen.items) if build_tar and chosen.items else None)

        (sel, tar), (listing_p, others_p, itree_p, addu_p) = _concurrently(
            select,
            lambda: repo.git("ls-files", "-s", "-v", "-z", index_file=idx_i),
            lambda: repo.git("ls-files", "-z", "-o", "--exclude-standard", index_file=idx_i),
            lambda: repo.git("write-tree", index_file=idx_i, check=False),
            lambda: repo.git(*add_u, index_file=idx_w, check=False),
        )
        listing = listing_p.stdout
        # Untracked files over the size cap are left out (reported); ignored ones are never added,
        # nor what the last restore kept as ignored (while it is untracked: git add takes it in).
        untracked = [p for p in others_p.stdout.split(b"\0") if p]
        kept = kept_ignored(repo)
        if kept:
            dirs = tuple(p for p in kept if p.endswith(b"/"))
            files = set(kept)
            untracked = [p for p in untracked if p not in files and not p.startswith(dirs)]
        too_large = []
        for p in untracked:
            try:
                st = os.lstat(os.path.join(root, p))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_size > limit:
                too_large.append(p)
        stages, empties, skips = _parse_ls_files(listing, repo.empty_blob)
        assumed = _assume_unchanged(listing)
        if assumed:  # git add does not look at these; the snapshot must hold what is on disk
            repo.git("update-index", "-z", "--no-assume-unchanged", "--stdin", input=b"".join(p + b"\0" for p in assumed), index_file=idx_w)
        # A skip-worktree file that is on disk anyway holds work: capture it like any other.
        present = [p for p in skips if os.path.lexists(os.path.join(root, p))]
        if present:
            repo.git("update-index", "-z", "--no-skip-worktree", "--stdin", input=b"".join(p + b"\0" for p in present), index_file=idx_w)
        if kept:  # only while untracked: a tracked one (git add) is captured as any other
            indexed = {e.split(b"\t", 1)[1] for e in listing.split(b"\0") if b"\t" in e}
            kept = [p for p in kept if not (any(i.startswith(p) for i in indexed) if p.endswith(b"/") else p in indexed)]
        embedded: list[bytes] = []
        big = set(too_large)
        fast = (addu_p.returncode == 0 and not assumed and not present and not stages
                and _add_listed(repo, idx_w, [p for p in untracked if p not in big]))
        if not fast:
            # --sparse: a sparse checkout's untracked files outside the cone are saved (as git stash -u does)
            embedded = _add_all(repo, idx_w, too_large + [p.rstrip(b"/") for p in kept], sparse=bool(present) or sparse_cfg)
        w_tree = repo.git("write-tree", index_file=idx_w).stdout.decode().strip()
        if stages:
            conflicted = sorted({p for *_x, p in stages})
            repo.git("update-index", "-z", "--force-remove", "--stdin", input=b"\0".join(conflicted) + b"\0", index_file=idx_i)
        if stages or itree_p.returncode != 0:
            i_tree = repo.git("write-tree", index_file=idx_i).stdout.decode().strip()
        else:
            i_tree = itree_p.stdout.decode().strip()
        flags_possible = _index_may_hold_flags(idx_i)
    ita: list[bytes] = []
    if empties and flags_possible:
        if len(empties) <= 64:
            staged = repo.paths_in_tree(i_tree, empties)
        else:  # one git ls-tree beats thousands of in-process lookups through big trees
            staged = {e.path for e in repo.ls_tree(i_tree, *empties)}
        ita = [p for p in empties if p not in staged]
    raw = _raw_check(repo, w_tree, base) if _filters_may_apply(repo, listing, untracked) else []
    candidates = [i.path for i in sel.items] + sel.secrets + sel.too_large + sel.unsafe_links + sel.unreadable + sel.over_limits
    if candidates:  # a tracked file matching an ignore pattern is in the tree already, not the overlay
        tracked = repo.paths_in_tree(w_tree, candidates)
        if tracked:
            if any(i.path in tracked for i in sel.items):
                tar = None  # built again from what is left, by write_checkpoint
            sel.items = [i for i in sel.items if i.path not in tracked]
            sel.secrets = [p for p in sel.secrets if p not in tracked]
            sel.too_large = [p for p in sel.too_large if p not in tracked]
            sel.unsafe_links = [p for p in sel.unsafe_links if p not in tracked]
            sel.unreadable = [p for p in sel.unreadable if p not in tracked]
            sel.over_limits = [p for p in sel.over_limits if p not in tracked]
    snap = Snapshot(
        tree=w_tree,
        index_tree=i_tree,
        base=base,
        branch=branch,
        intent_to_add=sorted(ita),
        skip_worktree=sorted(skips),
        skip_absent=sorted(set(skips) - set(present)),
        embedded=embedded,
        merge_heads=(heads := _merge_heads(repo)),
        merge_msg=_merge_msg(repo) if heads else None,
        assume_unchanged=sorted(assumed),
        stages=sorted(stages, key=lambda s: (s[3], s[2])),
        raw=raw,
        selection=sel,
        too_large=sorted(too_large),
        overlay_tar=tar,
    )
    snap.overlay_info = sel.info(cfg)
    return snap


@dataclass
class SaveResult:
    """What :func:`save` did: ``id`` (``T/N``), ``commit``, ``created`` (False when nothing changed
    since ``id``), ``kind``, and the warnings it printed (secrets/oversized files left out)."""

    id: str
    commit: str
    created: bool
    kind: str
    task: str
    warnings: list[str] = field(default_factory=list)
    card_event: int | None = None  # a card event recorded without a checkpoint (--next/--hypothesis, nothing changed)

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` result (and the MCP tool's data)."""
        return {"id": self.id, "commit": self.commit, "created": self.created, "kind": self.kind,
                "task": self.task, "warnings": self.warnings, "card_event": self.card_event}

    def text(self) -> str:
        """What happened, for the terminal and the MCP tool alike: one line, and a second when a
        card update was recorded without a checkpoint."""
        if self.created:
            return f"checkpoint saved: {self.id}"
        out = f"no changes since {self.id}; nothing saved (use --allow-empty to save anyway)"
        if self.card_event is not None:
            out += f"\ntask card of {self.task} updated (event #{self.card_event})"
        return out


def already_saved(repo: Repo, task: str, state: str, last: store.Checkpoint | None = None) -> store.Checkpoint | None:
    """The one rule deciding that a state is not saved again (``save``, the pre-restore save of
    ``restore``/``undo``, ``attempt``): the checkpoint of ``task`` whose state digest (tree,
    index, HEAD, flags, overlay: :meth:`Snapshot.state`) is ``state``, looking at the latest
    (``last`` when the caller has read it) and at ``@`` (:func:`store.at`: the one this worktree
    was restored to); None when neither is.  A damaged checkpoint counts as no match, and so does
    an ``@`` of another task (a teammate's fetched ``REMOTE:T/N``, or ``T2/N`` here): that state is
    saved as a checkpoint of ``task`` (``save`` after restoring it makes it yours; a later fetch
    may replace the fetched ref, and ``T2``'s retention may prune its checkpoint)."""
    try:
        cands = [last if last is not None else store.latest(repo, task)]
    except CkptError:
        cands = []
    with contextlib.suppress(CkptError):
        if (there := store.restored_target(repo, task)) is not None and there[0].startswith(task + "/"):
            cands.append(store.at(repo, task))
    for cp in cands:
        if cp is not None and cp.manifest.state == state:
            return cp
    return None


def warnings_for(snap: Snapshot, already: frozenset[bytes] = frozenset()) -> list[str]:
    """Human warnings for what the snapshot left out, leaving out paths in ``already`` (those the
    task's latest checkpoint left out too, :func:`left_out`, and those a save of the task already
    warned about, :func:`warned`: each path is warned about once per task, not on every save of
    an agent's every turn)."""
    out = []
    sel = snap.selection

    def new(paths: list[bytes]) -> list[bytes]:
        return [p for p in paths if p not in already]

    if new(sel.secrets):
        out.append("overlay: left out likely-secret files: " + ", ".join(path_display(p) for p in new(sel.secrets))
                   + f" (to keep them: {config.setting('overlay', 'allow_secrets', 'true')})")
    if new(sel.too_large + snap.too_large):
        out.append("skipped files over the size limit: " + ", ".join(path_display(p) for p in new(sel.too_large + snap.too_large))
                   + f" (to keep them, raise the limit: {config.setting('overlay', 'max_file_size', '500MiB')})")
    if new(snap.embedded):
        out.append("left out nested repositories with no commit (git cannot record them): " + ", ".join(path_display(p) for p in new(snap.embedded)))
    if new(sel.unsafe_links):
        out.append("overlay: left out symlinks pointing outside the worktree: " + ", ".join(path_display(p) for p in new(sel.unsafe_links)))
    if new(sel.unreadable):
        out.append("overlay: left out files that cannot be read here (permissions, or a path too long for the system): "
                   + ", ".join(fit(path_display(p), 200) for p in new(sel.unreadable)))
    if new(sel.over_limits):
        left = new(sel.over_limits)
        out.append(f"overlay: left out {counted(len(left), 'file')} past the archive's hard limits "
                   f"({overlay.MAX_ENTRIES} entries, {overlay.MAX_TOTAL} bytes in all): "
                   + ", ".join(fit(path_display(p), 200) for p in left[:20]) + (", ..." if len(left) > 20 else ""))
    return out


WARNED = "warned-"  # in $GIT_DIR/ckpt: warned-TASK, NUL-separated paths a save of TASK warned about


def left_out_paths(snap: Snapshot) -> frozenset[bytes]:
    """Every path :func:`warnings_for` can name for ``snap``: secrets, files over the size cap,
    nested repositories without a commit, symlinks leaving the worktree, files that cannot be read,
    files past the overlay archive's hard limits."""
    sel = snap.selection
    return frozenset([*sel.secrets, *sel.too_large, *snap.too_large, *snap.embedded, *sel.unsafe_links, *sel.unreadable, *sel.over_limits])


def warned(repo: Repo, task: str) -> frozenset[bytes]:
    """The paths saves of ``task`` in this worktree already warned about (local state: a save
    that finds nothing new writes no checkpoint to record them in, and an agent saves every
    turn); empty when unreadable or no regular file (:func:`git_ckpt.gitcore.read_state`): only a
    cache, whose loss repeats a warning."""
    try:
        data = read_state(repo.ckpt_dir() / (WARNED + task))
    except (OSError, CorruptError):
        return frozenset()
    return frozenset(p for p in data.split(b"\0") if p)


def note_warned(repo: Repo, task: str, paths: frozenset[bytes]) -> None:
    """Add ``paths`` to :func:`warned` of ``task`` (best effort: a failure only repeats a warning)."""
    known = warned(repo, task)
    if paths <= known:
        return
    with contextlib.suppress(OSError):
        store.atomic_write(repo.ckpt_dir() / (WARNED + task), b"\0".join(sorted(known | paths)) + b"\0")


def left_out(cp: store.Checkpoint | None) -> frozenset[bytes]:
    """The paths checkpoint ``cp`` recorded as left out (its manifest's ``skipped`` and the
    overlay's ``skipped``): the warnings its save already gave."""
    if cp is None:
        return frozenset()
    m = cp.manifest
    return frozenset(path_from_str(p) for p in [*m.skipped, *m.overlay.skipped] if isinstance(p, str))


def change_summary(repo: Repo, snap: Snapshot, since: store.Checkpoint | None,
                   latest: store.Checkpoint | None = None) -> str:
    """The default message of a checkpoint saved without one: what changed since ``since`` (``@``;
    HEAD when None), e.g. ``M calc.py, A test_calc.py``; when the files are the same, what else
    differs, by the rules of :func:`git_ckpt.standing.differs`: ``index: …``; HEAD:
    ``T/N committed as C`` (HEAD commits ``since`` on its base: :func:`git_ckpt.standing.head_commits`),
    ``HEAD moved to C`` (``since`` is ``latest``, the task's latest save: HEAD moved after it),
    ``files of T/N on HEAD C`` (``since`` was restored here onto another HEAD); ``overlay
    changed``; else ``same as T/N``."""
    from .gitcore import EMPTY_TREE
    from .standing import differs, head_commits
    from .words import change_summary as summary

    old = since.tree if since is not None else (snap.base or EMPTY_TREE)  # diff-tree peels a commit
    changes = [(c.status, path_display(c.path)) for c in repo.diff_trees(old, snap.tree)]
    if changes or since is None:
        return summary(changes)
    # the files are the same: say what else differs rather than "no changes"
    what = differs(repo, snap, since)
    if "index" in what:
        staged = [(c.status, path_display(c.path)) for c in repo.diff_trees(since.index_tree, snap.index_tree)]
        return "index: " + summary(staged)
    if "HEAD" in what:
        if head_commits(repo, snap.base, since):
            return f"{since.id} committed as {short_base(snap.base)}"
        if latest is not None and since.commit == latest.commit:
            return f"HEAD moved to {short_base(snap.base)}"
        return f"files of {since.id} on HEAD {short_base(snap.base)}"
    if "overlay" in what or (snap.overlay_info.digest or "") != (since.manifest.overlay.digest or ""):
        return "overlay changed"  # (a file the policy then did not take counts here: the save differs)
    return f"same as {since.id}"  # (save --allow-empty, or the first save of a task after restoring another's)


def write_checkpoint(
    repo: Repo,
    snap: Snapshot,
    *,
    task: str,
    kind: Kind,
    message: str,
    next: str | None = None,
    hypothesis: str | None = None,
    agent: str | None = None,
    agent_session: str | None = None,
) -> tuple[str, str]:
    """Write the meta, index and checkpoint commits and create ``refs/ckpt/T/N`` with the next free
    N (compare-and-swap from absent; a number taken concurrently moves on to the next one).

    Returns ``(id "T/N", checkpoint commit id)``.
    """
    tar = snap.overlay_tar if snap.overlay_tar is not None else (overlay.build_tar(snap.selection.items) if snap.selection.items else None)
    tar_blob = repo.blob(tar) if tar is not None else None
    index_commit = repo.commit(snap.index_tree, [snap.base] if snap.base else [], f"ckpt index of {task}\n")
    sig = repo.signature("AUTHOR")
    number = next_number(repo, task)

    def build(old: str | None) -> tuple[str, tuple[str, str]]:
        nonlocal number
        if old is not None:  # taken meanwhile by another save: the next number
            number += 1
            raise RefConflict(store.ckpt_ref(task, number - 1), None, old)
        cid = f"{task}/{number}"
        manifest = Manifest(
            id=cid,
            task=task,
            number=number,
            kind=kind,
            base=snap.base,
            branch=snap.branch if snap.branch is None or len(snap.branch) <= SHORT else None,  # (a 1 KiB ref name: none)
            created_at=ledger.now_iso(),
            author=fit(f"{sig.name} <{sig.email}>", SHORT),
            host=ledger.HOST,
            message=message,
            tree=snap.tree,
            index_tree=snap.index_tree,
            intent_to_add=[path_to_str(p) for p in snap.intent_to_add],
            skip_worktree=[path_to_str(p) for p in snap.skip_worktree],
            conflicts=[path_to_str(p) for p in snap.conflicts],
            raw=[path_to_str(p) for p, _m, _o in snap.raw],
            skipped=[path_to_str(p) for p in snap.too_large + snap.embedded],
            skip_worktree_absent=[path_to_str(p) for p in snap.skip_absent],
            assume_unchanged=[path_to_str(p) for p in snap.assume_unchanged],
            worktree=str(repo.workdir),
            merge_heads=snap.merge_heads,
            overlay=snap.overlay_info,
            state=snap.state(),
            next=next,
            hypothesis=hypothesis,
            ledger_head=repo.read_ref(store.log_ref(task)),
            agent=agent,
            agent_session=agent_session,
        )
        data = encode(manifest)
        try:  # what a restore will read: never write a checkpoint nothing can read back
            decode_manifest(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise UsageError(f"nothing saved: the checkpoint's manifest would not read back ({exc})",
                             "a message, --next or --hypothesis is at most 65536 characters") from None
        meta_tree = store.write_meta_tree(repo, manifest=repo.blob(data), overlay_tar=tar_blob,
                                          stages=snap.stages, raw=snap.raw,
                                          merge_msg=repo.blob(snap.merge_msg) if snap.merge_msg is not None else None)
        meta_commit = repo.commit(meta_tree, [], f"ckpt meta {cid}\n")
        parents = ([snap.base] if snap.base else []) + [index_commit, meta_commit]
        subject = message.splitlines()[0] if message else ("pre-restore state" if kind == "pre-restore" else "checkpoint")
        # the last line is what ``list`` reads (model.ListRow): one for-each-ref serves a listing
        body = f"ckpt {cid}: {subject}\n\nCkpt-Id: {cid}\nCkpt-Kind: {kind}\n{row_line(manifest)}\n"
        commit = repo.commit(snap.tree, parents, body)
        return commit, (cid, commit)

    cid, commit = repo.swap(lambda: store.ckpt_ref(task, number), build,
                            reason=lambda ref: f"ckpt: save {ref.removeprefix(store.PREFIX)}", step="save.before-ref")
    fault("save.after-ref")
    return cid, commit


def next_number(repo: Repo, task: str) -> int:
    """The number the next checkpoint of ``task`` gets: one above the highest of its refs and of
    the newest ``save`` event of its ledger, so a number whose ref was deleted (``drop``, ``gc``,
    ``git update-ref -d``) is never given to a different checkpoint.  A damaged ledger counts
    as having no saves (the refs still decide)."""
    top = store.highest(repo, task)
    high = top[0] if top else 0
    with contextlib.suppress(CkptError, KeyError, ValueError):
        rec = ledger.find_last(repo, task, lambda ev: ev.type == "save")
        if rec is not None:
            cid = rec.event.data.get("id")
            n = ref_number(cid[len(task) + 1:]) if isinstance(cid, str) and cid.startswith(task + "/") else None
            if n is not None:
                high = max(high, n)
    return high + 1


@contextlib.contextmanager
def _task_lock(repo: Repo, task: str, timeout: float = 60.0) -> Iterator[None]:
    """Hold ``$GIT_COMMON_DIR/ckpt/save-T.lock`` (flock; freed by the kernel if we are killed)."""
    d = repo.common_dir / "ckpt"
    d.mkdir(exist_ok=True)
    with repo.flock(d / f"save-{task}.lock", exclusive=True, timeout=timeout,
                    holder=f"another git ckpt save of task {task} is still writing"):
        yield


def log_if_missing(repo: Repo, cp: store.Checkpoint) -> None:
    """Append the ``save`` event of ``cp`` when a save was killed between writing its ref and its
    ledger event (re-running ``save`` completes it).  Looks only at events newer than the ledger
    head ``cp`` recorded, so the common case reads one or two ledger commits."""
    m = cp.manifest
    stop = m.ledger_head
    oid = repo.read_ref(store.log_ref(m.task))
    for _ in range(1000):
        if not oid or oid == stop:
            break
        try:
            rec = ledger._read(repo, oid, m.task)
        except CkptError:  # a damaged ledger is reported by log --verify, not here
            return
        if rec.event.type == "save" and rec.event.data.get("id") == cp.id:
            return
        parents = repo.read_commit(oid).parents
        oid = parents[0] if parents else None
    else:
        return
    ledger.append(repo, m.task, "save", {"id": cp.id, "commit": cp.commit, "kind": m.kind, "message": m.message,
                                         "tree": m.tree, "next": m.next, "hypothesis": m.hypothesis, "recovered": True})


def save(
    repo: Repo,
    cfg: Config,
    *,
    task: str,
    message: str = "",
    kind: Kind = "manual",
    next: str | None = None,
    hypothesis: str | None = None,
    allow_empty: bool = False,
    snap: Snapshot | None = None,
    in_restore: bool = False,
    agent: str | None = None,
    agent_session: str | None = None,
    remember_warnings: bool = True,
) -> SaveResult:
    """Save the worktree of ``repo`` as the next checkpoint of ``task`` and log it in the ledger,
    holding the worktree lock shared (:meth:`Repo.worktree_lock`: a restore in this worktree
    waits, other saves do not; inside a restore, which holds it, nothing waits).

    When the state equals the latest checkpoint of the task or ``@`` (:func:`already_saved`)
    and ``allow_empty`` is False, no checkpoint is written, ``created`` is False and ``id``
    names that checkpoint; ``next``/``hypothesis`` are then still recorded on the card, in a
    ``card`` event of their own (``card_event``, as ``task note`` does).  Raises :class:`BusyError` during an
    interrupted restore (unless ``in_restore``: the pre-restore save of an undo that rescues it),
    while ``index.lock`` is held, or when the lock is not free in time.
    Warnings name only paths the task's latest checkpoint did not already leave out; an empty
    ``message`` of a manual or auto save becomes a summary of the changes since ``@``
    (:func:`store.at`: the latest, or the checkpoint last restored whole), as ``diff`` shows them.
    ``agent``/``agent_session`` (from an agent hook's input) go into the manifest.  The paths
    warned about are remembered (:func:`warned`) once the save succeeded; without
    ``remember_warnings`` the caller does that (:func:`note_warned`) once it has delivered them
    (a restore, whose pre-restore save's warnings are printed only if the restore succeeds).
    """
    with repo.worktree_lock(exclusive=False):
        store.check_task_name(task)
        if not in_restore and (repo.git_dir / "ckpt" / "RESTORE").exists():
            raise BusyError("a restore was interrupted in this worktree", "run git ckpt restore --continue, or git ckpt undo")
        snap = snap or capture(repo, cfg, build_tar=True)

        def card_update(card: Card) -> Card:
            if next is not None:
                card.next = next
            if hypothesis is not None:
                card.hypothesis = hypothesis
            return card

        # Under the task's save lock, a checkpoint ref and its save event appear together to other
        # savers (a process killed in between leaves the lock free and the next save logs it).
        with _task_lock(repo, task):
            try:
                last = store.latest(repo, task)
            except CkptError:
                last = None  # a damaged latest checkpoint must not stop new ones being saved
            warns = warnings_for(snap, left_out(last) | warned(repo, task))  # once per path per task,
            said = left_out_paths(snap) if warns and remember_warnings else frozenset()  # noted once the save succeeded
            if not message and kind in ("manual", "auto"):  # what changed since @, as `git ckpt diff` shows it
                try:
                    since = store.at(repo, task)
                except CkptError:
                    since = last
                message = change_summary(repo, snap, since, last)
            if not allow_empty:
                same = already_saved(repo, task, snap.state(), last)
                if same is not None:
                    with contextlib.suppress(CkptError):
                        log_if_missing(repo, same)
                    card_event = None
                    if next is not None or hypothesis is not None:
                        # the card update is recorded anyway, as task note would: a card event
                        # without a checkpoint (the text is not dropped because nothing changed)
                        rec = ledger.append(repo, task, "card", {k: v for k, v in (("next", next), ("hypothesis", hypothesis)) if v is not None},
                                            card_update)
                        card_event = rec.event.seq
                    note_warned(repo, task, said)
                    return SaveResult(same.id, same.commit, False, same.manifest.kind, task, warns, card_event)
            cid, commit = write_checkpoint(repo, snap, task=task, kind=kind, message=message, next=next, hypothesis=hypothesis,
                                           agent=agent, agent_session=agent_session)

            problem = ledger.append_or_warn(
                repo,
                task,
                "save",
                {"id": cid, "commit": commit, "kind": kind, "message": message, "tree": snap.tree,
                 "next": next, "hypothesis": hypothesis},
                card_update if (next is not None or hypothesis is not None) else None,
            )
            if problem:
                warns.append(problem)
            note_warned(repo, task, said)
        # numbered() just counted the task's loose refs: pack them as git gc would, so reading
        # the refs of a long task stays one file read, not one per checkpoint
        repo.pack_refs_if_many(repo.loose_refs_seen)
        return SaveResult(cid, commit, True, kind, task, warns)
