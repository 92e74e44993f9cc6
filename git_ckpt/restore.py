"""Restore a checkpoint exactly (``git ckpt restore``, ``undo``, ``restore --continue``).

Order of work (DESIGN.md behaviour 1–3):

1. refuse, changing nothing, while a merge/rebase/cherry-pick is in progress, ``index.lock`` is
   held, or a restore would overwrite an ignored file outside the overlay;
2. capture the current state and save it as a ``pre-restore`` checkpoint, unless it is identical
   to the latest checkpoint of the task (then that one is the way back);
3. write a journal (``$GIT_DIR/ckpt/RESTORE``) naming the target and the way back;
4. delete paths the target does not have, write the paths that differ through
   ``git checkout-index`` (smudge filters, eol rules, modes, symlinks), then the ``raw/`` bytes;
5. make the overlay equal the target's (strict extractor; residue removed);
6. set the index to the target's staged state (stat data of unchanged entries kept), conflict
   stages, intent-to-add and skip-worktree flags; refresh;
7. move HEAD only with ``reset_head``; log the event; remove the journal.

Every step is idempotent, so an interrupted restore is finished by running it again
(``--continue``) or undone (``undo``).
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import hashlib
import os
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import msgspec

from . import fsutil, ledger, overlay, store
from .config import Config
from .errors import BusyError, CkptError, CorruptError, IOFailure, NotFoundError, UsageError
from .gitcore import Repo, TreeEntry, fault, git_failure, path_line, read_state
from .model import OverlayFile, decode_json, encode, escape, path_display, path_from_str, path_to_str, task_name_problem
from .snapshot import Snapshot, already_saved, capture, kept_ignored, left_out_paths, log_if_missing, note_warned, save, set_kept_ignored
from .store import Checkpoint
from .words import counted, short_base

GITLINK = 0o160000


class Journal(msgspec.Struct, kw_only=True):
    """``$GIT_DIR/ckpt/RESTORE``: an unfinished restore."""

    type: str
    task: str
    target_commit: str
    target_id: str
    from_commit: str
    from_id: str
    paths: list[str] = []
    reset_head: bool = False
    unchanged: bool = False  # the worktree held the target already: nothing was to be written


@dataclass
class Plan:
    """What a restore would do: paths to ``write`` and ``delete`` (worktree and overlay), how many
    are left alone, whether the index changes, and paths that ``blocked`` it (ignored files)."""

    target: str
    write: list[bytes] = field(default_factory=list)
    delete: list[bytes] = field(default_factory=list)
    overlay_write: list[bytes] = field(default_factory=list)
    overlay_delete: list[bytes] = field(default_factory=list)
    raw_write: list[bytes] = field(default_factory=list)
    index_changes: bool = False
    head_changes: bool = False
    # the merge state changes: MERGE_HEAD set to the target's merge_heads, or removed (a whole
    # restore; a fetched manifest's merge_heads change git's state beyond the files: never "nothing")
    merge_to: list[str] | None = None
    leave: int | None = None  # files of the target left as they are (counted for dry runs)
    blocked: list[bytes] = field(default_factory=list)
    kept_ignored: list[bytes] = field(default_factory=list)  # not deleted: ignored under the target's rules
    # kept: ignored under the rules of the state left only (the target's rules would show them):
    # still treated as ignored after the restore (store.KEPT_IGNORED), so save/status/diff agree
    kept_left_ignored: list[bytes] = field(default_factory=list)
    provenance: list[str] = field(default_factory=list)  # where the target was saved, when not here
    sparse_skipped: list[bytes] = field(default_factory=list)  # tracked files outside the sparse cone, not written
    sparse_index_changes: set[bytes] = field(default_factory=set)  # ... of those, the ones whose index entry changes
    head_branch: str | None = None  # the branch --reset-head moves (None: a detached HEAD)
    head_from: str | None = None
    head_to: str | None = None
    head_unreachable: int = 0  # commits reachable from the branch now and not after the move
    base_note: str | None = None  # the target was saved on another HEAD, which stays (no --reset-head)
    base_from: str | None = None  # ... its base
    # the tree a whole restore sets the index to: the target's index, or HEAD's tree when HEAD
    # (not the target's base) commits exactly the target's files (committed_on_head)
    index_tree: str | None = None
    committed_on_head: bool = False

    def keep_lines(self) -> list[str]:
        """``keep PATH (why)``: the files a restore leaves although its target does not hold
        them (the dry run's plan and the restore's own report print the same lines)."""
        return ([f"keep    {path_display(p)} (ignored by the checkpoint's rules)" for p in self.kept_ignored]
                + [f"keep    {path_display(p)} (ignored by the rules of the state left; still treated as ignored: "
                   "git add it to track it)" for p in self.kept_left_ignored])

    @property
    def empty(self) -> bool:
        """True when nothing would change."""
        return not (self.write or self.delete or self.overlay_write or self.overlay_delete or self.raw_write or self.index_changes
                    or self.head_changes or self.merge_to is not None)

    def to_json(self) -> dict[str, Any]:
        """The plan as JSON-ready data (paths as strings)."""
        return {
            "target": self.target,
            "write": [path_to_str(p) for p in self.write],
            "delete": [path_to_str(p) for p in self.delete],
            "overlay_write": [path_to_str(p) for p in self.overlay_write],
            "overlay_delete": [path_to_str(p) for p in self.overlay_delete],
            "raw_write": [path_to_str(p) for p in self.raw_write],
            "index_changes": self.index_changes,
            "head_changes": self.head_changes,
            "leave": self.leave,
            "keep_ignored": [path_to_str(p) for p in self.kept_ignored],
            "keep_ignored_left": [path_to_str(p) for p in self.kept_left_ignored],
            "provenance": self.provenance,
            "base_differs": {"saved_on": self.base_from, "note": self.base_note} if self.base_note else None,
            "merge_heads": self.merge_to,
            "outside_sparse_cone": [path_to_str(p) for p in self.sparse_skipped],
            "outside_sparse_cone_index_changes": [path_to_str(p) for p in self.sparse_skipped if p in self.sparse_index_changes],
            "head": {"branch": self.head_branch, "from": self.head_from, "to": self.head_to,
                     "unreachable": self.head_unreachable} if self.head_changes else None,
        }


@dataclass
class RestoreResult:
    """What a restore did: ``target`` and ``saved`` (the pre-restore checkpoint id, or None when
    the state was already a checkpoint: ``previous``), the plan, and ``dry_run``."""

    target: str
    previous: str | None
    saved: str | None
    plan: Plan
    dry_run: bool = False
    type: str = "restore"
    warnings: list[str] = field(default_factory=list)
    continued: bool = False  # finished an interrupted restore (``previous`` is its way back)
    paths: list[bytes] | None = None  # a restore of these paths only

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` result (and the MCP tool's data)."""
        return {"target": self.target, "previous": self.previous, "saved": self.saved,
                "dry_run": self.dry_run, "plan": self.plan.to_json(), "warnings": self.warnings}

    def lines(self) -> list[str]:
        """What happened, one line each, for the terminal and the MCP tool alike (a dry run's
        plan is printed by the CLI from :attr:`plan`)."""
        # a note quotes the target's manifest (a teammate's, or crafted): one line each, always
        out = [f"note: {escape(note)}" for note in self.plan.provenance]
        if self.plan.base_note:
            out.append(f"note: {escape(self.plan.base_note)}")
        what = self.target
        if self.paths:  # "restored a.py, b.py from T/N": never as if the whole checkpoint came back
            shown = ", ".join(path_display(p) for p in self.paths[:5]) + (f" and {len(self.paths) - 5} more" if len(self.paths) > 5 else "")
            what = f"{shown} from {self.target}"
        held = (f"{shown} already match{'es' if len(self.paths) == 1 else ''} {self.target}" if self.paths
                else f"the worktree already matches {self.target}")
        if self.dry_run:
            return [*out, f"would restore {what}:" + (f" nothing to change ({held})" if self.plan.empty else "")]
        done = f"restored {what}" if self.type == "restore" else f"undo: restored {what}"
        if self.continued:
            out.append(f"finishing the interrupted restore (the state before it is {self.previous})")
        elif self.plan.empty and not self.saved:  # nothing written, nothing saved: say it once
            return [*out, f"{held}; nothing to {self.type}", *self.plan.keep_lines()]
        elif self.saved:
            out.append(f"saved current state as {self.saved} (pre-restore)")
        elif self.previous:
            out.append(f"current state matches {self.previous}; not saved again")
        if self.plan.empty:
            done += " (nothing to write: the files and the index matched it already)"
        if self.plan.head_changes and self.plan.head_to:
            lost = (f"; {self.plan.head_unreachable} commit(s) no longer reachable from it (undo moves it back)"
                    if self.plan.head_unreachable else "")
            moved = f"branch {_branch_name(self.plan.head_branch)}" if self.plan.head_branch else "HEAD (detached)"
            out.append(f"{moved} moved from {short_base(self.plan.head_from)} to {short_base(self.plan.head_to)}{lost}")
        merge = []
        if self.plan.merge_to:  # as the plan says it: a merge in progress is no news to hide
            merge = [f"merging again: MERGE_HEAD is {', '.join(h[:12] for h in self.plan.merge_to)}, as when {self.target} was saved "
                     "(git commit concludes the merge, git merge --abort ends it)"]
        elif self.plan.merge_to is not None:
            merge = ["MERGE_HEAD removed: the merge an earlier restore brought back ends"]
        return [*out, done, *merge, *self.plan.keep_lines()]


def _under(path: bytes, paths: list[bytes] | None) -> bool:
    if not paths:
        return True
    return any(path == p or path.startswith(p.rstrip(b"/") + b"/") for p in paths)


def _raw_map(repo: Repo, cp: Checkpoint) -> dict[bytes, TreeEntry]:
    return cp.raw_entries()


def _stage_entries(repo: Repo, cp: Checkpoint) -> list[tuple[int, str, int, bytes]]:
    return cp.stage_entries()


def _overlay_map(files: list[OverlayFile]) -> dict[bytes, tuple[str, int, str]]:
    return {path_from_str(f.path): (f.kind, f.mode, f.sha256) for f in files}


def _same_bytes(repo: Repo, rel: bytes, oid: str) -> bool:
    """Whether the file ``rel`` holds exactly the bytes of blob ``oid``: the sizes agree (the
    blob's from its header) and the file hashes, as a blob, to ``oid`` (what ``git hash-object
    --no-filters`` computes; read in chunks here, so a large file is never held whole).  False
    when it is missing or unreadable."""
    import hashlib

    full = os.path.join(os.fsencode(repo.workdir), rel)
    try:
        with open(full, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode) or size != repo.blob_size(oid):
                return False
            h = hashlib.new(repo.object_format.name, b"blob %d\0" % size)
            return hashlib.file_digest(fh, lambda: h).hexdigest() == oid
    except OSError:
        return False


def _in_the_way(root: bytes, rel: bytes, removed: set[bytes], saved: bool) -> list[bytes]:
    """What blocks writing ``rel``: a parent that is a file or symlink the restore does not
    remove, the path itself when it holds something unsaved (``saved`` says the current file is
    in the pre-restore checkpoint), or anything below a directory there that is not removed."""
    parts = rel.split(b"/")
    for i in range(1, len(parts)):
        parent = b"/".join(parts[:i])
        try:
            st = os.lstat(os.path.join(root, parent))
        except OSError:  # absent, or a path too long to look at (refuse_unwritable refuses it)
            return []
        if not stat.S_ISDIR(st.st_mode):
            return [] if parent in removed else [parent]
    full = os.path.join(root, rel)
    try:
        st = os.lstat(full)
    except OSError:
        return []
    if not stat.S_ISDIR(st.st_mode):
        return [] if (saved or rel in removed) else [rel]
    for dirpath, dirnames, filenames in fsutil.walk(full):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            inner = os.path.relpath(os.path.join(dirpath, name), root)
            if inner not in removed:
                return [inner]
    return []


_REFUSED_HINT = "nothing was changed; the checkpoint was made by a broken or hostile tool (git ckpt check {id} names the damage)"


def refuse_unsafe_target(repo: Repo, target: Checkpoint, plan: Plan, now: Snapshot) -> None:
    """Pre-flight for a checkpoint that may be foreign, before anything is written: every path
    the plan writes, deletes or flags (worktree, index, overlay, ``raw/``, intent-to-add,
    skip-worktree) must be a safe worktree path (:func:`~git_ckpt.model.raw_path_problem`: no
    ``..``, absolute path, ``.git`` or NUL), and nothing may be written below a symlink or file
    of the target's tree (a tree symlink ``fixtures -> ../outside`` plus an overlay entry
    ``fixtures/x`` would write outside the worktree once the symlink exists).  Raises
    :class:`CorruptError` (exit 7) naming the path."""
    from .model import raw_path_problem

    index_diff = repo.diff_trees(now.index_tree, target.index_tree)
    index_paths = [c.path for c in index_diff]
    index_new = [b.path for _a, b in index_diff if b is not None]
    m = target.manifest
    flagged = [path_from_str(p) for p in m.intent_to_add + m.skip_worktree + m.skip_worktree_absent + m.conflicts]
    groups = (plan.write, plan.delete, plan.raw_write, plan.overlay_write, plan.overlay_delete, index_paths, flagged)
    for group in groups:
        for p in group:
            problem = raw_path_problem(p)
            if problem:
                raise CorruptError(f"{target.id} names the path {path_display(p)!r}, which {problem}; refusing the checkpoint",
                                   _REFUSED_HINT.format(id=target.id))
    refuse_unwritable(repo, target, plan)
    parents: dict[bytes, int | None] = {}
    for group in (plan.write, plan.overlay_write, plan.raw_write, index_new, flagged):
        for p in group:
            parts = p.split(b"/")
            for i in range(1, len(parts)):
                parent = b"/".join(parts[:i])
                if parent not in parents:
                    parents[parent] = repo.entry_mode(target.tree, parent)
                mode = parents[parent]
                if mode is not None and mode not in (0o040000, GITLINK):
                    what = "a symlink" if mode == 0o120000 else "a file"
                    raise CorruptError(f"{target.id} puts {path_display(p)!r} below {path_display(parent)!r}, which is {what} in its tree; refusing the checkpoint",
                                       _REFUSED_HINT.format(id=target.id))


def _limits(root: bytes) -> tuple[int, int]:
    """``(PATH_MAX, NAME_MAX)`` of the file system holding ``root`` (4096 and 255 when unknown)."""
    out = []
    for name, default in (("PC_PATH_MAX", 4096), ("PC_NAME_MAX", 255)):
        try:
            value = os.pathconf(root, name)
        except (OSError, ValueError):
            value = -1
        out.append(value if value > 0 else default)
    return out[0], out[1]


def _shortened(p: bytes) -> str:
    text = path_display(p)
    return text if len(text) <= 100 else text[:60] + "…" + text[-30:]


def refuse_unwritable(repo: Repo, target: Checkpoint, plan: Plan) -> None:
    """Pre-flight, before anything is written: every path the plan writes or deletes (worktree,
    overlay, ``raw/``) must be one this system can name from here.  git works below the
    worktree's root, so a checkpoint (a teammate's, saved at a shorter location, or a crafted
    one) may hold a path that, joined to this worktree's (or the scratch directory's) absolute
    path, is longer than ``PATH_MAX``, or a name longer than ``NAME_MAX``; a restore that met it
    halfway would stop interrupted.  Raises :class:`CkptError` (exit 1, like the other
    refusals of what cannot be done here) naming the first such path, shortened."""
    root = os.fsencode(repo.workdir)
    path_max, name_max = _limits(root)
    # the longest directory a path is joined to: the worktree, or the scratch directory
    # checkout-index writes into (tempfile.mkdtemp: GIT_DIR/ckpt-write-XXXXXXXX/)
    prefix = max(len(root) + 1, len(os.fsencode(repo.git_dir)) + len("/ckpt-write-XXXXXXXX/"))
    hint = (f"nothing was changed; a worktree at a shorter location can hold it (git ckpt restore {target.id} --worktree PATH), "
            f"or restore the other paths by name")
    for group in (plan.write, plan.delete, plan.raw_write, plan.overlay_write, plan.overlay_delete):
        for p in group:
            if prefix + len(p) >= path_max:
                raise CkptError(f"cannot restore {target.id}: the path {_shortened(p)!r} ({len(p)} bytes) is too long for this "
                                f"system at this worktree's location (at most {path_max - 1} bytes from /)", hint)
            longest = max(p.split(b"/"), key=len)
            if len(longest) > name_max:
                raise CkptError(f"cannot restore {target.id}: the path {_shortened(p)!r} holds a name of {len(longest)} bytes, "
                                f"longer than this file system takes ({name_max})", hint)


def _already_there(repo: Repo, tree: str, paths: list[bytes]) -> set[bytes]:
    """Which of ``paths`` are regular files whose content (cleaned as ``git add`` would) and
    executable bit are already those of ``tree``'s entry."""
    root = os.fsencode(repo.workdir)
    files = []
    for p in paths:
        mode = repo.entry_mode(tree, p)
        try:
            st = _lstat(root, p)
        except OSError:
            continue
        if mode in (0o100644, 0o100755) and stat.S_ISREG(st.st_mode) and bool(st.st_mode & 0o100) == (mode == 0o100755):
            files.append(p)
    if not files:
        return set()
    oids = repo.git("hash-object", "--stdin-paths", input=b"".join(map(path_line, files))).stdout.split()
    want = {e.path: e.oid for e in repo.ls_tree(tree, *files)}
    return {p for p, oid in zip(files, oids) if want.get(p) == oid.decode()}


_Stat = tuple[int, int, int, int, int]  # (mode, size, mtime_ns, ctime_ns, inode)


def _lstat(root: bytes, rel: bytes) -> os.stat_result:
    """``os.lstat`` of ``rel`` below ``root`` that never looks through a symlinked (or
    non-directory) parent: every component is lstat'ed, and a path below a symlink is absent
    (FileNotFoundError), so a restore never reads, hashes, moves or deletes a file outside the
    worktree through a directory that was replaced by a symlink."""
    parts = rel.split(b"/")
    for i in range(1, len(parts)):
        st = os.lstat(os.path.join(root, *parts[:i]))
        if not stat.S_ISDIR(st.st_mode):
            raise FileNotFoundError(errno.ENOENT, "below a symlink or file", os.fsdecode(b"/".join(parts[:i])))
    return os.lstat(os.path.join(root, rel))


def _stat_of(full: bytes, root: bytes | None = None) -> _Stat | None:
    try:
        st = os.lstat(full) if root is None else _lstat(root, os.path.relpath(full, root))
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _overlay_files(now: Snapshot) -> dict[bytes, OverlayFile]:
    """The capture's overlay entries by path (built once per restore: looked up per path)."""
    return {path_from_str(f.path): f for f in (now.overlay_info.files if now.overlay_info else [])}


def _content_matches(repo: Repo, now: Snapshot, rel: bytes, full: bytes | None = None,
                     overlay_files: Mapping[bytes, OverlayFile] | None = None) -> bool:
    """Whether the file at ``rel`` (or at ``full``, where it was moved) holds what the capture
    ``now`` recorded for it (its worktree tree entry, cleaned as ``git add`` would; or its
    overlay digest).  ``overlay_files`` is :func:`_overlay_files` of ``now`` when the caller
    holds it (a caller asking for many paths must: building it is linear in the overlay)."""
    import hashlib

    moved = full is not None
    full = full or os.path.join(os.fsencode(repo.workdir), rel)
    try:
        st = os.lstat(full) if moved else _lstat(os.fsencode(repo.workdir), rel)
    except (FileNotFoundError, NotADirectoryError):
        return False
    f = (overlay_files if overlay_files is not None else _overlay_files(now)).get(rel)
    if f is not None:
        try:
            if stat.S_ISLNK(st.st_mode):
                return f.kind == "symlink" and hashlib.sha256(os.readlink(full)).hexdigest() == f.sha256
            if f.kind != "file" or not stat.S_ISREG(st.st_mode) or stat.S_IMODE(st.st_mode) != f.mode & 0o7777:
                return False  # another kind or other permission bits: not what the capture archived
            with open(full, "rb") as fh:  # in chunks: an overlay file may be large
                return hashlib.file_digest(fh, "sha256").hexdigest() == f.sha256
        except OSError:
            return False
    entries = repo.ls_tree(now.tree, rel)
    entry = next((e for e in entries if e.path == rel), None)
    if entry is None:
        return stat.S_ISDIR(st.st_mode)  # an (empty) directory that gives way: nothing to lose
    if stat.S_ISLNK(st.st_mode):
        return entry.mode == 0o120000 and repo.blob_id(os.readlink(full)) == entry.oid
    if not stat.S_ISREG(st.st_mode) or b"\n" in rel:
        return False
    # cleaned by the attributes of rel, wherever the bytes are; git reads the file itself (a large
    # file is never held here)
    oid = repo.git("hash-object", "--path=" + os.fsdecode(rel), "--", full).stdout.strip().decode()
    return oid == entry.oid and (entry.mode == 0o100755) == bool(st.st_mode & 0o100)


class Fingerprints:
    """Stat identity of every file a restore will overwrite or delete, taken after the capture
    and checked against it, then re-checked right before each write or delete: a file another
    process changed since the capture is never overwritten or deleted unseen (issue 12)."""

    def __init__(self, repo: Repo, now: Snapshot, plan: Plan) -> None:
        self.repo, self.now = repo, now
        self.overlay = _overlay_files(now)  # once: every path below is looked up in it
        self.root = os.fsencode(repo.workdir)
        self.taken = time.time_ns()
        touched = sorted(set(plan.delete + plan.write + plan.raw_write + plan.overlay_delete + plan.overlay_write))
        self.stats: dict[bytes, _Stat | None] = {p: _stat_of(os.path.join(self.root, p), self.root) for p in touched}
        changed = self._changed_since_capture([p for p, st in self.stats.items() if st is not None and not stat.S_ISDIR(st[0])])
        if changed:
            raise BusyError(f"{path_display(changed[0])!r} changed while the restore was reading it (another process is writing it?); nothing was changed",
                            "let the writer finish, then run the command again")

    def _changed_since_capture(self, present: list[bytes]) -> list[bytes]:
        """Which of ``present`` no longer hold what the capture recorded: regular files hashed in
        one ``git hash-object --stdin-paths`` (clean filters applied), the rest one by one."""
        batch = [p for p in present if p not in self.overlay and (st := self.stats[p]) is not None and stat.S_ISREG(st[0])]
        in_batch = set(batch)
        changed = [p for p in present if p not in in_batch and not _content_matches(self.repo, self.now, p, overlay_files=self.overlay)]
        if batch:
            oids = self.repo.git("hash-object", "--stdin-paths", input=b"".join(map(path_line, batch))).stdout.split()
            listed = self.repo.ls_tree(self.now.tree, *batch) if len(batch) <= 500 else self.repo.ls_tree(self.now.tree)
            want = {e.path: e for e in listed}
            for p, oid in zip(batch, oids):
                e = want.get(p)
                st = self.stats[p]
                assert st is not None  # batch holds only paths stat'ed as regular files
                if e is None or e.oid != oid.decode() or (e.mode == 0o100755) != bool(st[0] & 0o100):
                    changed.append(p)
        return sorted(changed)

    def check(self, rel: bytes) -> None:
        """Raise :class:`BusyError` (the restore stops; the journal stays) when ``rel`` is no
        longer what the capture saw: another stat identity, or, when its times are too recent
        to trust (racy, as git's index is), other content."""
        if rel not in self.stats:
            return  # not planned
        want = self.stats[rel]
        if want is not None and stat.S_ISDIR(want[0]):
            return  # not planned, or an empty directory giving way (only empty ones are removed)
        have = _stat_of(os.path.join(self.root, rel), self.root)
        same = have == want
        if same and have is not None and not stat.S_ISDIR(have[0]) and max(have[2], have[3]) >= self.taken - 50_000_000:
            same = _content_matches(self.repo, self.now, rel, overlay_files=self.overlay)
        if not same:
            raise self.changed(rel)

    def changed(self, rel: bytes) -> BusyError:
        """The error that stops a restore at ``rel`` (exit 5; the journal stays)."""
        return BusyError(f"{path_display(rel)!r} changed since the pre-restore save (another process is writing it); "
                         "the restore stopped before touching it, nothing is lost",
                         "when the writer has stopped: git ckpt restore --continue (saves the new content first), or git ckpt undo")

    def _same(self, rel: bytes, full: bytes, moved: bool) -> bool:
        want = self.stats.get(rel)
        have = _stat_of(full)
        if want is None or have is None:
            return want == have
        # a rename changes ctime: after moving it aside, identity is mode, size, mtime, inode
        if (have[:3] + have[4:]) != (want[:3] + want[4:]) or (not moved and have[3] != want[3]):
            return False
        if max(want[2], want[3]) >= self.taken - 50_000_000:  # racily clean: compare content
            return _content_matches(self.repo, self.now, rel, full, self.overlay)
        return True

    def take_away(self, rel: bytes, aside: bytes) -> bytes | None:
        """Move the file at ``rel`` to ``aside`` (one rename), then check it is exactly what the
        capture saw; put it back and raise when it is not.  Returns ``aside``, or None when
        nothing was there.  The check runs on the moved file, so a writer that opens the path
        again afterwards creates a new file instead of changing the one being replaced."""
        full = os.path.join(self.root, rel)
        if rel not in self.stats:
            self.stats[rel] = _stat_of(full, self.root)  # not planned for (a parent directory giving way)
        want = self.stats[rel]
        if want is not None and stat.S_ISDIR(want[0]):
            return None
        try:
            _lstat(self.root, rel)  # never move a file from below a symlinked parent (outside the worktree)
        except (FileNotFoundError, NotADirectoryError):
            if want is not None:
                raise self.changed(rel) from None
            return None
        try:
            os.rename(full, aside)
        except (FileNotFoundError, NotADirectoryError):
            if want is not None:
                raise self.changed(rel) from None
            return None
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise IOFailure(f"cannot replace {path_display(rel)!r}: {exc.strerror}", "fix it, then run git ckpt restore --continue") from None
            self.check(rel)  # another file system: check in place, then act
            return full
        if not self._same(rel, aside, moved=True):
            self.put_back(rel, aside)
            raise self.changed(rel)
        return aside

    def put_back(self, rel: bytes, aside: bytes) -> None:
        """Return a file moved aside to ``rel``; when something new is there already, keep both
        (the moved one as ``rel.ckpt-kept-N``) so nothing is lost."""
        full = os.path.join(self.root, rel)
        try:
            os.link(aside, full, follow_symlinks=False)
            os.unlink(aside)
        except FileExistsError:
            n = 1
            while os.path.lexists(full + b".ckpt-kept-%d" % n):
                n += 1
            os.rename(aside, full + b".ckpt-kept-%d" % n)


def _left_ignored(repo: Repo, target: Checkpoint, now: Snapshot, changes: list[Any], paths: list[bytes] | None,
                  plan: Plan, cur: dict[bytes, Any], tgt: dict[bytes, Any]) -> list[bytes]:
    """Files (or whole directories, ``dir/``) on disk that the rules of the state left ignore, or
    that an earlier restore kept as such (:func:`git_ckpt.snapshot.kept_ignored`), and that the
    target's rules would not: restore keeps them (nothing is deleted that was ignored where the
    user stood) and they stay ignored afterwards.  Computed only when a ``.gitignore`` differs
    between the two states (``info/exclude`` and ``core.excludesFile`` are the same on both)."""
    carried = kept_ignored(repo)
    rules_differ = any((c.path == b".gitignore" or c.path.endswith(b"/.gitignore"))
                       for pair in changes for c in pair if c is not None)
    if not rules_differ and not carried:
        return []
    found = set(carried)
    if rules_differ:
        listed = repo.git("ls-files", "-z", "-o", "-i", "--exclude-standard", "--directory").stdout.split(b"\0")
        found |= {p for p in listed if p}
    overlay_paths = set(cur) | set(tgt)
    written = set(plan.write) | set(plan.blocked)
    decided = sorted(overlay_paths | written)  # once: a directory is looked up by bisection

    def handled(p: bytes) -> bool:  # the overlay or the target's own files decide these
        if p.endswith(b"/"):
            i = bisect.bisect_left(decided, p)
            return i < len(decided) and decided[i].startswith(p)
        return p in overlay_paths or p in written

    cand = sorted(p for p in found if _under(p.rstrip(b"/"), paths) and not handled(p))
    if not cand:
        return []
    # What the target holds is the target's, not kept: a file it holds (that already matches,
    # so nothing writes it) is restored as part of it, and a directory that holds some of the
    # target's files is kept file by file, for the files the target does not hold.
    dirs = [p for p in cand if p.endswith(b"/")]
    held_dirs = {e.path for e in repo.ls_tree(target.tree, *(d.rstrip(b"/") for d in dirs))} if dirs else set()
    if held_dirs:
        holding = {h[: i + 1] for h in held_dirs for i, c in enumerate(h) if c == 0x2F}  # every "d/" above one
        opened = [d for d in dirs if d in holding]
        inside = repo.ignored_files(*opened)
        cand = sorted((set(cand) - set(opened)) | {p for p in inside if p not in held_dirs and _under(p, paths)})
    held = repo.paths_in_tree(target.tree, [p for p in cand if not p.endswith(b"/")])
    cand = [p for p in cand if p not in held]
    if not cand:
        return []
    ignored_there = repo.ignored_under_tree(target.tree, cand)
    # one an earlier restore kept that the target's rules ignore: kept for that reason, and said
    # (save left it out, so it is no deletion candidate that would say it otherwise)
    plan.kept_ignored = sorted(set(plan.kept_ignored) | {p for p in carried if p in ignored_there and p in cand})
    rest = [p for p in cand if p not in ignored_there]
    # A directory git lists whole (every file in it ignored) may be ignored file by file by
    # rules both states share (info/exclude "/d/x", the hooks block): check-ignore of "d/" says
    # no.  Its files decide: all ignored by the target's rules too, it is no file of the state
    # left; some, and only the others are.
    dirs = sorted(p for p in rest if p.endswith(b"/"))
    if dirs:
        inside = [f for f in repo.ignored_files(*dirs) if _under(f, paths)]
        there = repo.ignored_under_tree(target.tree, inside) if inside else set()
        if there:
            by_dir: dict[bytes, list[bytes]] = {}  # each file under the one listed directory holding it
            for f in inside:
                i = bisect.bisect_right(dirs, f) - 1
                if i >= 0 and f.startswith(dirs[i]):
                    by_dir.setdefault(dirs[i], []).append(f)
            split = {d for d, files in by_dir.items() if any(f in there for f in files)}
            rest = sorted([p for p in rest if p not in split] +
                          [f for d in split for f in by_dir[d] if f not in there])
    return rest


def _blocked_hint(repo: Repo, cfg: Config, plan: Plan) -> str:
    """The hint of a restore refused for ``plan.blocked``: move them aside, and, when every one
    is an ignored file the overlay would take if ``overlay.include`` named it (the pre-restore
    save then holds it, so the restore may replace it), that too; a likely secret the overlay
    leaves out is named with what keeps one (``overlay.allow_secrets``)."""
    written = set(plan.write) | set(plan.overlay_write)
    why = {p: overlay.why_not_kept(os.fsencode(repo.workdir), cfg, p, repo.is_ignored) if p in written else "in-the-way"
           for p in plan.blocked}
    secret = next((p for p, w in why.items() if w == "secret"), None)
    if secret is not None:
        return (f"move them aside, then restore again ({path_display(secret)} looks like a secret, which the overlay "
                "leaves out unless overlay.allow_secrets is true)")
    if all(w is None for w in why.values()):
        return "move them aside, or add them to overlay.include so the pre-restore save keeps them, then restore again"
    return "move them aside, then restore again"


def make_plan(repo: Repo, target: Checkpoint, now: Snapshot, paths: list[bytes] | None, reset_head: bool = False) -> Plan:
    """Compare the current state ``now`` with ``target`` (limited to ``paths``) without writing."""
    plan = Plan(target=target.id)
    root = os.fsencode(repo.workdir)
    changes = repo.diff_trees(now.tree, target.tree, paths)
    tracked_now: set[bytes] = set()
    for a, b in changes:
        if a is not None:
            tracked_now.add(a.path)
        if a is not None and (b is None or (a.mode == GITLINK) != (b.mode == GITLINK)):
            if a.mode != GITLINK:
                plan.delete.append(a.path)
        if b is not None and b.mode != GITLINK:
            plan.write.append(b.path)
    # A file the target's ignore rules ignore is never deleted (it may be ignored now too, or
    # have been saved only because the rules of the state left did not ignore it).
    if plan.delete:
        kept = repo.ignored_under_tree(target.tree, plan.delete)
        if kept:
            plan.kept_ignored = sorted(kept)
            plan.delete = [p for p in plan.delete if p not in kept]
    # skip-worktree files that were not on disk at save time stay off the disk
    absent = {path_from_str(p) for p in target.manifest.skip_worktree_absent}
    if absent:
        plan.write = [p for p in plan.write if p not in absent]
        deleting = set(plan.delete)
        cand = [p for p in sorted(absent) if _under(p, paths) and p not in deleting and os.path.lexists(os.path.join(root, p))]
        if cand:  # on disk now and held by the current snapshot (so saved): it goes
            held = repo.paths_in_tree(now.tree, cand) | set(now.skip_worktree)
            plan.delete += [p for p in cand if p in held]
    # files absent now under skip-worktree that the target has on disk come back
    writing = set(plan.write)
    back = [p for p in now.skip_absent if p not in absent and p not in writing and _under(p, paths)]
    if back:
        plan.write += sorted(p for p in repo.paths_in_tree(target.tree, back) if repo.entry_mode(target.tree, p) != GITLINK)
    # A sparse checkout: tracked files outside the cone are not written (git keeps them
    # skip-worktree, off the disk); one on disk that the pre-restore save holds goes, so the
    # result is the clean sparse checkout of the target.  But one the target holds changed
    # against its staged entry is written, as git leaves such a file on disk when the cone
    # narrows ("not up to date ... left despite sparse patterns"): the undo of a restore
    # brings it back.  Untracked files are written anywhere.
    if plan.write:
        outside = repo.outside_sparse_cone(target.index_tree, repo.paths_in_tree(target.index_tree, plan.write))
        if outside:
            outside -= {c.path for c in repo.diff_trees(target.index_tree, target.tree, sorted(outside))}
        if outside:
            plan.sparse_skipped = sorted(outside)
            plan.sparse_index_changes = {c.path for c in repo.diff_trees(now.index_tree, target.index_tree, plan.sparse_skipped)}
            plan.write = [p for p in plan.write if p not in outside]
            held = repo.paths_in_tree(now.tree, [p for p in outside if os.path.lexists(os.path.join(root, p))])
            deleting = set(plan.delete)
            plan.delete += sorted(p for p in held if p not in deleting)
    target_raw = _raw_map(repo, target)
    now_raw = {p for p, _m, _o in now.raw}
    written = set(plan.write)
    for p in sorted(now_raw - set(target_raw)):
        if _under(p, paths) and p not in written and repo.paths_in_tree(target.tree, [p]):
            plan.write.append(p)
            written.add(p)
    skipped = set(plan.sparse_skipped)
    for p, e in sorted(target_raw.items()):  # validated by Checkpoint.raw_entries
        if _under(p, paths) and p not in skipped and (p in written or not _same_bytes(repo, p, e.oid)):
            plan.raw_write.append(p)
    target.stage_entries()  # a malformed stages/ tree is refused before anything is written
    # overlay
    tgt = _overlay_map(target.manifest.overlay.files)
    cur = _overlay_map(now.overlay_info.files)
    plan.overlay_write = sorted(p for p, v in tgt.items() if _under(p, paths) and cur.get(p) != v)
    # An overlay file of the state left that the target lacks goes only when the target's own
    # overlay policy (recorded in its manifest) covers that path: the target then says it did not
    # exist.  Outside that policy it is an ignored file like any other, never touched: a policy
    # that changed since, or one a fetched checkpoint brought ("*"), never deletes the user's files.
    gone = [p for p in cur if _under(p, paths) and p not in tgt]
    covered = overlay.policy_selects(target.manifest.overlay.include, target.manifest.overlay.exclude, gone) if gone else set()
    plan.overlay_delete = sorted(p for p in gone if p in covered)
    # Nothing the pre-restore save does not hold may be overwritten: an ignored file outside the
    # overlay (or one the overlay left out: a likely secret, too large), a file save skipped, a
    # non-empty directory (ignored content, a nested repository) where a file must go.  A file the
    # pre-restore save holds, in its tree or its overlay (``cur``: captured with ``now``, which
    # is what that save archives; the fingerprints check it is still those bytes and mode right
    # before it is replaced), may be replaced: undo brings it back.
    # A tracked file kept because the target's rules ignore it goes after all when the target puts
    # a file (or symlink) where one of its directories is (``out/x`` tracked now, ``out`` an
    # ignored overlay file of the target): it is in the tree the pre-restore save holds.
    if plan.kept_ignored:
        targets = set(plan.write) | set(plan.overlay_write)
        under = {p for p in plan.kept_ignored if any(b"/".join(p.split(b"/")[:i]) in targets for i in range(1, p.count(b"/") + 1))}
        if under:
            plan.kept_ignored = [p for p in plan.kept_ignored if p not in under]
            plan.delete += sorted(under)
    removed = set(plan.delete) | set(plan.overlay_delete)
    for p in plan.write:
        plan.blocked += _in_the_way(root, p, removed, saved=p in tracked_now or p in cur)
    for p in plan.overlay_write:
        plan.blocked += _in_the_way(root, p, removed, saved=p in cur or p in tracked_now)
    # an untracked file (saved) where overlay content goes is replaced by it: one action, a write
    # (each list made a set once: a list's ``in`` inside a loop is quadratic on a 20k-file tree;
    # the deletions deduplicated in their order)
    overlay_written = set(plan.overlay_write)
    plan.delete = [p for p in dict.fromkeys(plan.delete) if p not in overlay_written]
    plan.kept_ignored = [p for p in plan.kept_ignored if p not in overlay_written]  # replaced: not kept
    writing = set(plan.write)
    same = _already_there(repo, target.tree, [p for p in plan.blocked if p in writing])
    if same:  # an unsaved (ignored) file that already holds exactly the target's content: nothing to do
        plan.blocked = [p for p in plan.blocked if p not in same]
        plan.write = [p for p in plan.write if p not in same]
    # the same for overlay content: an ignored file the current configuration does not capture
    # (the overlay was named by git -c at save time, say) that is already the target's file
    same = overlay.already_there(root, tgt, [p for p in plan.blocked if p in overlay_written])
    if same:
        plan.blocked = [p for p in plan.blocked if p not in same]
        plan.overlay_write = [p for p in plan.overlay_write if p not in same]
    # index
    m = target.manifest
    plan.index_tree = target.index_tree
    if (not paths and not reset_head and now.base and target.base != now.base
            and not (m.conflicts or m.intent_to_add or m.skip_worktree or m.assume_unchanged)
            and (head_tree := repo.tree_of(now.base)) == target.tree):
        # HEAD commits exactly the target's files (the checkpoint was committed, here or by a
        # teammate; its base may be an unborn branch: the first commit): its index as staged
        # on the old base would stage the reverse of that commit.  Said also when that index
        # was HEAD's tree already (all staged, a merge's result): the note is the same fact
        # status and handoff tell ("HEAD commits T/N on its base"), whatever it changes
        plan.index_tree, plan.committed_on_head = head_tree, True
    plan.index_changes = (
        now.index_tree != plan.index_tree
        or [path_to_str(p) for p in now.intent_to_add] != m.intent_to_add
        or [path_to_str(p) for p in now.skip_worktree] != m.skip_worktree
        or [path_to_str(p) for p in now.conflicts] != m.conflicts
        or [path_to_str(p) for p in now.assume_unchanged] != m.assume_unchanged
    )
    if paths and plan.index_changes:
        plan.index_changes = bool(repo.diff_trees(now.index_tree, target.index_tree, paths)) or any(
            _under(path_from_str(p), paths) for p in m.intent_to_add + m.conflicts
        ) or any(_under(p, paths) for p in now.intent_to_add + now.conflicts) or any(
            {p for p in mine if _under(p, paths)} != {path_from_str(p) for p in theirs if _under(path_from_str(p), paths)}
            for mine, theirs in ((now.assume_unchanged, m.assume_unchanged), (now.skip_worktree, m.skip_worktree)))
    if plan.sparse_skipped and not plan.index_changes:
        # A file outside the cone that git left on disk (it was changed when the cone narrowed)
        # has no skip-worktree flag; the restore takes it off the disk, so its entry gets one
        flagged = set(now.skip_worktree)
        plan.index_changes = any(p not in flagged for p in plan.sparse_skipped)
    plan.head_changes = bool(reset_head and target.base and target.base != now.base)
    if plan.head_changes:
        plan.head_branch, plan.head_from, plan.head_to = now.branch, now.base, target.base
        if now.base and target.base:  # target.base is set whenever the head changes
            plan.head_unreachable = int(repo.git("rev-list", "--count", now.base, "^" + target.base).stdout.strip() or 0)
    plan.provenance = provenance(repo, target, now)
    plain = [p for p in plan.overlay_write[:1000] if not repo.is_ignored(os.fsdecode(p))]
    if plain and not paths:  # after a whole restore the target's .gitignore files are the rules
        ignored_after = repo.ignored_under_tree(target.tree, plain)
        plain = [p for p in plain if p not in ignored_after]
    if plain:  # ignored where it was saved (say by that clone's .git/info/exclude), not here
        plan.provenance.append(
            f"{len(plain)} overlay file(s) of {target.id} are not ignored here (e.g. {path_display(plain[0])}): "
            "they come back as untracked files, which status, verify and the next save see as changes; "
            "ignore them here too (a committed .gitignore rule serves every clone)")
    if plan.committed_on_head:
        plan.base_from = target.base
        plan.base_note = (f"{target.id} was saved on {short_base(target.base)}; HEAD {short_base(now.base)} commits its files "
                          "and stays: the index is set to HEAD's tree (nothing staged), not as it was staged on that base")
    elif (not paths and not reset_head and target.base != now.base
            and target.index_tree != (repo.tree_of(now.base) if now.base else repo.empty_tree)):
        # (a path restore writes the named paths as saved and leaves the rest of the index on
        # HEAD: no difference between HEAD and the base is staged, so there is nothing to say)
        plan.base_from = target.base
        plan.base_note = base_note(target, now.base, now.branch, whole=not paths)
    if not paths and sorted(target.manifest.merge_heads) != sorted(now.merge_heads):
        # what set_merge_state will do, and nothing else: it ends only a merge a restore brought
        # back, and writes a merge state only where no operation of the user's is in progress
        # (a merge the user began is no change it makes: the restore is refused, exit 5)
        heads = list(target.manifest.merge_heads)
        theirs = repo.in_progress() is not None and not merge_restored(repo)
        if (merge_restored(repo) if not heads else
                not theirs and merge_state_problem(repo, target, heads, target.base if reset_head else None) is None):
            plan.merge_to = heads  # (a merge state set_merge_state will not write is no change)
    plan.blocked = sorted(set(plan.blocked))
    plan.kept_left_ignored = _left_ignored(repo, target, now, changes, paths, plan, cur, tgt)
    refuse_unsafe_target(repo, target, plan, now)
    return plan


def _branch_name(ref: str | None) -> str:
    return ref.removeprefix("refs/heads/") if ref else "(detached HEAD)"


def reset_head_command(target: Checkpoint, branch: str | None) -> str:
    """The command that restores ``target`` and moves HEAD to its base from the current
    ``branch`` (a ref, None when detached): ``git ckpt restore T/N --reset-head``, with
    ``--force`` when ``target`` was saved on another branch (which it refuses without)."""
    force = bool(branch) and target.manifest.branch != branch
    return f"git ckpt restore {target.id} --reset-head" + (" --force" if force else "")


def base_note(target: Checkpoint, head: str | None, branch: str | None = None, *, whole: bool = True) -> str:
    """What restoring ``target`` (saved on another HEAD, its index not HEAD's tree) without
    ``--reset-head`` means: HEAD stays ``head`` (None: an unborn branch) and the index is set
    exactly as saved (DESIGN "Exact round trip"), so ``git status`` shows the difference from
    HEAD as staged changes, as after ``git reset --soft``; for a ``whole`` restore of a
    target saved on a commit, :func:`reset_head_command` (from the current ``branch``) moves
    HEAD to the base too (a path restore takes no --reset-head; HEAD cannot go back to unborn)."""
    note = (f"{target.id} was saved on {short_base(target.base)}; HEAD is {short_base(head)} and stays: the restored index "
            "stages the difference (git status shows it as staged changes)")
    if not whole or target.base is None:
        return note
    force = bool(branch) and target.manifest.branch != branch
    return (note + f"; {reset_head_command(target, branch)} moves HEAD to that commit too"
            + (f" (--force: it was saved on {_branch_name(target.manifest.branch)}, not {_branch_name(branch)})" if force else ""))


def provenance(repo: Repo, target: Checkpoint, now: Snapshot) -> list[str]:
    """Notes for a target saved in another worktree or on another branch than the current
    ones (empty when it was saved here).  The manifest is attacker-writable: shown escaped."""
    m = target.manifest
    out = []
    here = str(repo.workdir)
    if m.worktree is not None and m.worktree != here:
        out.append(f"{target.id} was saved in worktree {path_display(os.fsencode(m.worktree))} (this is {path_display(os.fsencode(here))})")
    note = branch_note(target, now.branch)
    if note and not (now.branch is None and detached_by_ckpt(repo)):
        out.append(note)
    return out


# In the git dir of a worktree ``restore --worktree`` created detached: that it is on no branch is
# no news there, so no restore in it notes it (README "Sharing").
DETACHED_MARK = "ckpt-detached-worktree"


def mark_detached_by_ckpt(repo: Repo) -> None:
    """Record that git ckpt itself created this worktree on a detached HEAD."""
    (Path(repo.git_dir) / DETACHED_MARK).write_text("created detached by git ckpt restore --worktree\n")


def detached_by_ckpt(repo: Repo) -> bool:
    """Whether :func:`mark_detached_by_ckpt` marked this worktree."""
    return (Path(repo.git_dir) / DETACHED_MARK).exists()


def branch_note(target: Checkpoint, branch: str | None) -> str | None:
    """The provenance note for ``target`` restored where HEAD is ``branch`` (None: detached),
    or None when it was saved on that same branch."""
    if target.manifest.branch == branch:
        return None

    def name(ref: str | None) -> str:
        return path_display(_branch_name(ref).encode()) if ref else "a detached HEAD"

    saved = f"on branch {name(target.manifest.branch)}" if target.manifest.branch else "on a detached HEAD"
    return f"{target.id} was saved {saved} (this worktree is on {name(branch)})"


def checkpoint_with_state(repo: Repo, task: str, state: str, *, first: Checkpoint | None = None,
                          last: Checkpoint | None = None) -> Checkpoint | None:
    """A checkpoint whose state digest is ``state``: ``first`` when given (the restore's
    target), else :func:`git_ckpt.snapshot.already_saved` (the latest of ``task``, ``last``
    when the caller has read it, or ``@``: the rule ``save`` follows too); None when none of
    them is.  Such a state needs no pre-restore save."""
    # the target's state digest is trusted only when this repository wrote it: a fetched
    # manifest's "state" is anyone's words, and a copied one skipped the pre-restore save
    if first is not None and first.manifest.state == state and store.is_local(repo, first):
        return first
    return already_saved(repo, task, state, last)


def _check_paths_exist(repo: Repo, target: Checkpoint, now: Snapshot, paths: list[bytes]) -> None:
    """:class:`NotFoundError` for a path that names nothing in the target or the current state
    (like git's "pathspec did not match"); paths are literal, never globs."""
    overlay_paths = {path_from_str(f.path) for f in target.manifest.overlay.files + now.overlay_info.files}
    # every directory above an overlay file, once (a lookup per path, not a scan of the overlay)
    overlay_dirs = {o[:i] for o in overlay_paths for i, c in enumerate(o) if c == 0x2F}
    for p in paths:
        if any(repo.paths_in_tree(t, [p.rstrip(b"/")]) for t in (target.tree, now.tree, target.index_tree, now.index_tree)):
            continue
        if p in overlay_paths or p.rstrip(b"/") in overlay_dirs:  # as _under(o, [p]) for some o
            continue
        what, hint = _swapped(repo, target, p)
        # every file it holds: its commit's tree (git ckpt show lists only the files changed
        # against its base), and its overlay (show lists that whole)
        rev = target.ref or target.commit
        raise NotFoundError(f"path {path_display(p)!r} matches nothing in {target.id} or in the worktree{what}",
                            hint or f"paths are literal and relative to the current directory; git ls-tree -r --name-only {rev} "
                            f"lists the files {target.id} holds, git ckpt show {target.id} its overlay files")


def _swapped(repo: Repo, target: Checkpoint, path: bytes) -> tuple[str, str | None]:
    """For a path that matches nothing: ``(": it is a task", hint)`` when it is the name of a
    task (``restore 2 fix-div``, the arguments swapped: the hint names ``fix-div/2`` when that
    exists), ``(": it is a checkpoint", hint)`` when it names one (``T/N``, ``@``, …), else
    ``("", None)``.  Mirrors :func:`git_ckpt.store.resolve` saying a checkpoint given as a path
    "is a path"."""
    name = path.decode("utf-8", "replace")
    remotes = [] if task_name_problem(name) else store.fetched_tasks(repo).get(name, [])
    if not task_name_problem(name) and (repo.refs_under(f"{store.PREFIX}{name}/") or remotes):
        owner = name if repo.refs_under(f"{store.PREFIX}{name}/") else f"{remotes[0]}:{name}"  # fetched only: REMOTE:T
        n = target.manifest.number
        then = (f"git ckpt restore {owner}/{n}" if repo.read_ref(store.ckpt_ref(owner, n)) is not None
                else f"git ckpt list --task {owner} shows them")
        return ": it is a task", f"its checkpoints are {owner}/N, and the checkpoint comes first: {then}"
    try:
        cp = store.resolve(repo, name, store.current_task(repo))
    except CkptError:
        return "", None
    return ": it is a checkpoint", f"the checkpoint comes first: git ckpt restore {cp.id} -- PATHS"


MERGE_MARK = "MERGE_RESTORED"  # in $GIT_DIR/ckpt: the MERGE_HEAD a restore wrote
MARK_MAX = 1 << 20  # the largest MERGE_RESTORED or last-jump read (a few ids, one task name)


def _read(path: Path) -> bytes | None:
    """``path`` (``MERGE_HEAD``) as :func:`git_ckpt.gitcore.read_state` reads it, or None when
    absent or not a regular file of at most 1 MiB (no merge a restore wrote)."""
    try:
        return read_state(path, cap=1 << 20)
    except (OSError, CkptError):
        return None


def merge_restored(repo: Repo) -> bool:
    """Whether the merge in progress is one a restore brought back (``MERGE_HEAD`` is exactly
    what restore wrote): its state is in the checkpoint it came from, so restoring or undoing
    again loses nothing, unlike a merge the user is in the middle of.  A mark that is no
    regular file restore wrote (:func:`git_ckpt.gitcore.read_state`: a symlink, directory, FIFO,
    oversize) vouches for nothing: the merge counts as the user's."""
    try:
        mark: bytes | None = read_state(repo.git_dir / "ckpt" / MERGE_MARK, MARK_MAX)
    except (OSError, CorruptError):
        mark = None
    return mark is not None and mark == _read(repo.git_dir / "MERGE_HEAD")


def set_merge_state(repo: Repo, target: Checkpoint) -> list[str]:
    """After a whole restore: bring back the ``MERGE_HEAD`` of a checkpoint saved mid-merge (its
    conflict stages are already in the index), or remove one an earlier restore wrote.  Only
    when HEAD is the checkpoint's base (a merge state is relative to it) and the merged objects
    are commits here (as git, which calls any other MERGE_HEAD corrupt); otherwise a warning
    says why not.  ``MERGE_MSG`` is the one saved with the checkpoint (git's own "Merge commit
    'X'" for a checkpoint saved before merge messages were kept); it replaces only a message an
    earlier restore wrote and nobody edited since (its sha256 is in ``ckpt/MERGE_MSG_RESTORED``):
    a message the user wrote or is editing is never replaced nor removed.  Returns warnings."""
    import re

    git_dir = repo.git_dir
    heads = [h for h in target.manifest.merge_heads if isinstance(h, str) and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", h)]
    mark = git_dir / "ckpt" / MERGE_MARK
    msg_mark = git_dir / "ckpt" / MERGE_MSG_MARK
    if not heads:
        if merge_restored(repo):
            for name in ("MERGE_HEAD", "MERGE_MODE"):
                with contextlib.suppress(FileNotFoundError):
                    (git_dir / name).unlink()
            if _msg_unedited(repo):
                (git_dir / "MERGE_MSG").unlink()
            for m in (mark, msg_mark):
                with contextlib.suppress(FileNotFoundError):
                    m.unlink()
        return []
    if repo.in_progress() and not merge_restored(repo):
        return []
    problem = merge_state_problem(repo, target, heads)
    if problem:
        return [problem]
    data = "".join(h + "\n" for h in heads).encode()
    replace = not (git_dir / "MERGE_MSG").exists() or (merge_restored(repo) and _msg_unedited(repo))
    store.atomic_write(git_dir / "MERGE_HEAD", data)
    if replace:
        msg = _saved_merge_msg(target)
        msg = msg if msg is not None else ("Merge " + ", ".join(f"commit '{h}'" for h in heads) + "\n").encode()
        store.atomic_write(git_dir / "MERGE_MSG", msg)
        store.atomic_write(msg_mark, hashlib.sha256(msg).hexdigest().encode())
    store.atomic_write(mark, data)
    return []


def merge_state_problem(repo: Repo, target: Checkpoint, heads: list[str], head: str | None = None) -> str | None:
    """Why the merge state of ``target`` (its ``heads``) cannot be brought back with HEAD at
    ``head`` (default: where it is), or None when it can: HEAD is not the checkpoint's base, or a
    merged object is no commit here.  The warning a whole restore gives, and its dry run too."""
    now, branch = repo.head()
    at = now if head is None else head
    if at != target.manifest.base:
        if at and heads and all(repo.git("merge-base", "--is-ancestor", h, at, check=False).returncode == 0 for h in heads):
            return (f"{target.id} was saved during a merge; MERGE_HEAD is not brought back: HEAD {at[:12]} already "
                    f"contains what it merged ({', '.join(h[:12] for h in heads)}), so the merge was made since")
        return (f"{target.id} was saved during a merge; MERGE_HEAD is not brought back because HEAD moved since "
                f"({reset_head_command(target, branch)} brings HEAD back too)")
    if not all(repo.object_type(h) == "commit" for h in heads):
        return f"{target.id} was saved during a merge of a commit this repository does not have; MERGE_HEAD is not brought back"
    return None


MERGE_MSG_MARK = "MERGE_MSG_RESTORED"  # in $GIT_DIR/ckpt: sha256 of the MERGE_MSG a restore wrote


def _msg_unedited(repo: Repo) -> bool:
    """Whether ``$GIT_DIR/MERGE_MSG`` is byte for byte the one a restore wrote (no edit since)."""
    mark = _read(repo.git_dir / "ckpt" / MERGE_MSG_MARK)
    msg = _read(repo.git_dir / "MERGE_MSG")
    return mark is not None and msg is not None and hashlib.sha256(msg).hexdigest().encode() == mark


def _saved_merge_msg(target: Checkpoint) -> bytes | None:
    """The ``MERGE_MSG`` blob of ``target``'s meta tree (saved mid-merge), or None when it has
    none, or one that is not a blob of at most :data:`git_ckpt.snapshot.MERGE_MSG_MAX` bytes
    (a foreign checkpoint's is then not used: git's default message is)."""
    from .snapshot import MERGE_MSG_MAX

    entry = target.repo.tree_entry(target.meta_tree, "MERGE_MSG")
    if entry is None or entry.mode not in (0o100644, 0o100755):
        return None
    try:
        return target.repo.read_blob(entry.oid) if target.repo.blob_size(entry.oid) <= MERGE_MSG_MAX else None
    except CkptError:  # missing or not a blob
        return None


# What a checkpoint saved mid-merge holds of git's merge state, and what it does not (git 2.39
# to 2.55 write MERGE_MODE and AUTO_MERGE on every stopped merge, MERGE_AUTOSTASH with
# --autostash, and rerere's MERGE_RR when rerere is on).
MERGE_HELD = ("a checkpoint keeps MERGE_HEAD and MERGE_MSG, not the rest of git's merge state: "
              "MERGE_MODE, AUTO_MERGE, an autostash, rerere's records")


def _check_ready(repo: Repo, type: str = "restore", dry_run: bool = False) -> str | None:
    """Refuse (:class:`BusyError`, exit 5) while git is in the middle of an operation whose state
    a restore would leave half-done (a merge a restore did not bring back, whose state a
    checkpoint keeps only in part, :data:`MERGE_HELD`; a rebase, cherry-pick, revert or am:
    their state under ``$GIT_DIR`` is in no checkpoint), or while ``index.lock`` is held.  A ``dry_run`` changes nothing, so it returns the refusal as a warning instead
    (as ``git diff`` reads the index another git process holds locked; capture never writes
    it).  ``type``: ``restore`` or ``undo``, the command the hint names."""
    what = repo.in_progress()
    if what == "a merge" and merge_restored(repo):
        what = None  # the merge a restore brought back: its checkpoint holds it
    if what:
        abort = {"a merge": "git merge --abort", "a rebase": "git rebase --abort", "a rebase or am": "git rebase --abort or git am --abort",
                 "a cherry-pick": "git cherry-pick --abort", "a revert": "git revert --abort"}.get(what, "its --abort")
        held = (MERGE_HELD if what == "a merge" else "its state under .git is in no checkpoint")
        message = f"{what} is in progress; {type} would leave it half-done ({held})"
        hint = f"finish it or abort it first ({abort}), then {type}"
        if dry_run:
            return f"{message}: {hint}"
        raise BusyError(message, hint)
    try:
        repo.check_index_unlocked()
    except BusyError as err:
        if not dry_run:
            raise
        return f"{err.message}, so {type} would be refused: {err.hint}"
    return None


def _journal_path(repo: Repo) -> Path:
    return repo.git_dir / "ckpt" / "RESTORE"


def read_journal(repo: Repo) -> Journal | None:
    """The unfinished restore of this worktree, or None.  Raises :class:`CorruptError` when the
    journal does not decode, or is no regular file (:func:`git_ckpt.gitcore.read_state`)."""
    try:
        data = read_state(_journal_path(repo))
    except FileNotFoundError:
        return None
    try:
        return decode_json(data, Journal)
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise CorruptError(f"{_journal_path(repo)} is corrupt", "move it aside; git ckpt list shows the pre-restore checkpoint to restore") from None


def cwd_dirs(root: bytes) -> frozenset[bytes]:
    """The current directory and its parents inside the worktree ``root``, relative to it
    (``b""`` for the root).  Restore never removes them, as git does not since 2.35
    (``setup.c``: the "original cwd" is protected)."""
    try:
        here = os.fsencode(os.getcwd())
    except FileNotFoundError:
        return frozenset()
    rel = os.path.relpath(here, root)
    if rel == b"." or rel.startswith(b"..") or os.path.isabs(rel):
        return frozenset()
    parts = rel.split(b"/")
    return frozenset(b"/".join(parts[:i]) for i in range(1, len(parts) + 1))


def _prune_empty_dirs(root: bytes, rel: bytes) -> None:
    keep = cwd_dirs(root)
    parent = os.path.dirname(rel)
    while parent:
        if parent in keep:
            return
        try:
            os.rmdir(os.path.join(root, parent))
        except OSError:
            return
        parent = os.path.dirname(parent)


def _unlink(root: bytes, rel: bytes) -> None:
    full = os.path.join(root, rel)
    try:
        st = _lstat(root, rel)
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        if stat.S_ISDIR(st.st_mode):
            if rel in cwd_dirs(root):
                return  # the current directory stays, empty (as git leaves it)
            os.rmdir(full)  # only ever an empty directory; never a recursive delete
        else:
            os.unlink(full)
    except OSError as exc:
        raise IOFailure(f"cannot remove {path_display(rel)!r}: {exc.strerror}", "fix permissions, then run git ckpt restore --continue") from None
    _prune_empty_dirs(root, rel)


def _overlay_entries(target: Checkpoint, cfg: Config, plan: Plan) -> list[overlay.Entry]:
    """Validate the target's overlay archive and pre-flight the entries the plan writes.

    An archive is validated whole whenever the checkpoint carries one, even when the plan writes
    none of it: a device, FIFO or other refused entry (or one its manifest does not list) makes
    the checkpoint refused before any change, never silently skipped."""
    source = target.overlay_source()
    if source is None:
        if not plan.overlay_write:
            return []
        raise CorruptError(f"overlay of {target.id} is missing although its manifest lists files", f"git ckpt check {target.id} reports what is damaged")
    try:
        entries = overlay.read_archive(source)  # hard limits: never this configuration's max_file_size
        unlisted, other = overlay.manifest_mismatches(entries, target.manifest.overlay.files)
        if unlisted:
            raise CorruptError(f"overlay of {target.id} holds {path_display(unlisted[0])!r}, which its manifest does not list; refusing the checkpoint")
        # what is written is what the manifest (and so the plan, list and show) says: the same
        # kind, content and permission bits (a setuid bit the manifest does not list is refused);
        # a listed file the archive lacks matters only where the plan writes it (below)
        other = [(p, why) for p, why in other if why != "is missing from overlay.tar"]
        if other:
            raise CorruptError(f"overlay of {target.id} holds {path_display(other[0][0])!r} with other content or permission bits "
                               "than its manifest lists; refusing the checkpoint")
        if not plan.overlay_write:
            return []
        wanted = set(plan.overlay_write)
        missing = wanted - {e.path for e in entries}
        if missing:
            raise CorruptError(f"overlay of {target.id} lacks {counted(len(missing), 'file')} its manifest lists (e.g. {path_display(sorted(missing)[0])!r})")
        overlay.check_writable(target.repo.workdir, [e for e in entries if e.path in wanted], set(plan.overlay_delete) | set(plan.delete))
    except CorruptError as exc:
        if exc.hint is None:
            exc.hint = f"nothing was changed; git ckpt check {target.id} inspects it, and git ckpt restore {target.id} -- PATHS restores other paths"
        raise
    return entries


def apply(repo: Repo, cfg: Config, target: Checkpoint, now: Snapshot, paths: list[bytes] | None, plan: Plan,
          prints: Fingerprints | None = None) -> list[str]:
    """Make the worktree, overlay and index equal ``target`` (steps 4–6).  Idempotent.

    With ``prints``, each file is moved aside and checked against the capture right before it
    is deleted or replaced (:meth:`Fingerprints.take_away`); new files are written beside the
    worktree first and linked into place only where nothing appeared meanwhile.  Returns
    warnings: overlay permission bits the system would not set (setgid for a foreign group)."""
    entries = _overlay_entries(target, cfg, plan)
    # worktree: deletions first (a file may become a directory), then writes.
    aside_dir = tempfile.mkdtemp(prefix="ckpt-aside-", dir=repo.git_dir)
    try:
        warnings = _apply_files(repo, target, plan, prints, aside_dir, entries)
    finally:
        with contextlib.suppress(OSError):  # only ever empty here; a file left in it was checked as saved
            os.rmdir(aside_dir)
    fault("restore.after-overlay")
    if plan.index_changes:
        _apply_index(repo, target, paths, now, plan.index_tree or target.index_tree)
    fault("restore.after-index")
    return warnings


def _apply_files(repo: Repo, target: Checkpoint, plan: Plan, prints: Fingerprints | None, aside_dir: str,
                 entries: list[overlay.Entry]) -> list[str]:
    root = os.fsencode(repo.workdir)
    check = prints.check if prints is not None else (lambda _p: None)
    aside = os.fsencode(aside_dir) + b"/old"
    for p in plan.delete + plan.overlay_delete:  # overlay residue may be what fills a directory
        if prints is None:
            _unlink(root, p)
            continue
        moved = prints.take_away(p, aside)
        if moved is None:
            _unlink(root, p)  # an empty directory, or already gone
        elif moved == aside:
            os.unlink(aside)
            _prune_empty_dirs(root, p)
        else:
            _unlink(root, p)
        prints.stats[p] = None  # gone by our hand: a write there later expects nothing
    fault("restore.after-delete")
    if plan.write:
        protected = cwd_dirs(root)
        for p in plan.write:  # a directory may have to give way to a file: only an empty one
            full = os.path.join(root, p)
            with contextlib.suppress(OSError):
                if stat.S_ISDIR(os.lstat(full).st_mode) and p not in protected:
                    for dirpath, _dirs, _files in fsutil.walk(full, topdown=False):
                        with contextlib.suppress(OSError):
                            os.rmdir(dirpath)
            if os.path.isdir(full) and not os.path.islink(full):
                raise CkptError(f"cannot restore {path_display(p)!r}: a non-empty directory is in the way",
                                "move it aside, then run git ckpt restore --continue")
        order = sorted(plan.write, key=lambda p: (not p.endswith(b".gitattributes"), p))
        with repo.temp_index(copy_real=False) as idx:
            # An index of only the paths to write (cheap), or of the whole target tree.
            info = repo.index_info(target.tree, order) if len(order) <= 5000 else None
            if info is not None:
                repo.git("update-index", "-z", "--index-info", input=info, index_file=idx)
            else:
                repo.git("read-tree", target.tree, index_file=idx)
            from . import progress

            # one checkout-index into a scratch prefix; on a terminal, batches, so the files written can be shown
            step = 2000 if progress.active() and len(order) > 2000 else max(1, len(order))
            shown = progress.meter("restore: writing files", len(order))
            # .gitattributes first, in a batch of their own: checkout-index reads attributes
            # from the worktree, so the target's rules must be in place before the files they
            # filter are written (into the scratch prefix) through the smudge side
            attrs = [p for p in order if p == b".gitattributes" or p.endswith(b"/.gitattributes")]
            rest = [p for p in order if p != b".gitattributes" and not p.endswith(b"/.gitattributes")]
            batches = ([attrs] if attrs else []) + [rest[i:i + step] for i in range(0, len(rest), step)]
            with fsutil.temp_dir("ckpt-write-", dir=repo.git_dir) as scratch:
                prefix = os.fsencode(scratch) + b"/"
                for batch in batches:
                    repo.git("checkout-index", "-f", "-q", "-z", "--stdin", "--prefix=" + os.fsdecode(prefix),
                             input=b"\0".join(batch) + b"\0", index_file=idx)
                    fault("restore.before-rename")
                    for p in batch:
                        _replace(root, p, prefix + p, prints, aside)
                    shown.advance(len(batch))
            shown.done()
    fault("restore.after-write")
    if plan.raw_write:
        raw = _raw_map(repo, target)
        writing = set(plan.write)
        for p in plan.raw_write:
            if p not in writing:
                check(p)
            if _same_bytes(repo, p, raw[p].oid):
                continue
            full = os.path.join(root, p)
            with repo.open_blob(raw[p].oid) as content:  # streamed: a large raw file is never held whole
                overlay.write_entry(repo.workdir, overlay.Entry(p, "file", 0o755 if raw[p].mode == 0o100755 else 0o644,
                                                                int(os.stat(full).st_mtime) if os.path.exists(full) else 0, b""),
                                    content)
    # overlay (its deletions were done above)
    if plan.overlay_write:
        wanted = set(plan.overlay_write)
        source = target.overlay_source()
        assert source is not None  # a missing overlay with files to write was refused when it was read
        warnings = overlay.write_entries(repo.workdir, source, [e for e in entries if e.path in wanted], before=check)
        missing = wanted - {e.path for e in entries}
        if missing:
            raise CorruptError(f"overlay of {target.id} lacks {counted(len(missing), 'file')} its manifest lists (e.g. {path_display(sorted(missing)[0])!r})")
        return warnings
    return []


def _replace(root: bytes, rel: bytes, src: bytes, prints: Fingerprints | None, aside: bytes) -> None:
    """Put the freshly written ``src`` at ``rel``: the file there is moved aside and checked
    (:meth:`Fingerprints.take_away`), the new one linked in only where nothing appeared
    meanwhile, and the old one dropped only if nobody wrote to it since the check."""
    dst = os.path.join(root, rel)
    fsutil.makedirs(os.path.dirname(dst))
    if prints is None:
        os.replace(src, dst)
        return
    moved = prints.take_away(rel, aside)
    try:
        os.link(src, dst, follow_symlinks=False)
    except FileExistsError:  # a writer created it after we moved the old one: keep both, stop
        if moved == aside:
            prints.put_back(rel, aside)
        raise prints.changed(rel) from None
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
            raise IOFailure(f"cannot write {path_display(rel)!r}: {exc.strerror}", "fix it, then run git ckpt restore --continue") from None
        shutil.move(os.fsdecode(src), os.fsdecode(dst))  # str for typeshed; fsdecode round-trips any bytes
    if moved == aside:
        if not prints._same(rel, aside, moved=True):  # written to after the check: it wins
            os.replace(aside, dst)
            raise prints.changed(rel)
        os.unlink(aside)


def _apply_index(repo: Repo, target: Checkpoint, paths: list[bytes] | None, now: Snapshot, index_tree: str) -> None:
    m = target.manifest
    ita = [path_from_str(p) for p in m.intent_to_add]
    skip = [path_from_str(p) for p in m.skip_worktree]
    assumed = [path_from_str(p) for p in m.assume_unchanged]
    stages = _stage_entries(repo, target)
    if paths:
        mine = [p for p in now.assume_unchanged if _under(p, paths)]
        if mine:  # reset may not replace entries git is told not to look at
            repo.git("update-index", "-z", "--no-assume-unchanged", "--stdin", input=b"".join(p + b"\0" for p in mine), check=False)
        spec = b"".join(p + b"\0" for p in paths)
        # Entries of the target for these paths, others left as they are.
        proc = repo.git("reset", "-q", "--no-refresh", target.index_commit, "--pathspec-from-file=-", "--pathspec-file-nul", input=spec, check=False)
        if proc.returncode not in (0, 1):  # 1: "unstaged changes after reset", not a failure
            raise git_failure(("reset",), proc)
        ita = [p for p in ita if _under(p, paths)]
        skip = [p for p in skip if _under(p, paths)]
        stages = [s for s in stages if _under(s[3], paths)]
        assumed = [p for p in assumed if _under(p, paths)]
    else:
        if now.intent_to_add:  # read-tree would keep the flag on an empty blob the target stages
            repo.git("update-index", "-z", "--force-remove", "--stdin", input=b"".join(p + b"\0" for p in now.intent_to_add))
        if now.assume_unchanged:  # read-tree refuses to replace entries it may not look at
            repo.git("update-index", "-z", "--no-assume-unchanged", "--stdin", input=b"".join(p + b"\0" for p in now.assume_unchanged))
        repo.git("read-tree", "--reset", index_tree)
    if stages:
        data = b"".join(b"0 %s\t%s\0" % (repo.zero_oid.encode(), p) for p in sorted({s[3] for s in stages}))
        data += b"".join(b"%o %s %d\t%s\0" % (mode, oid.encode(), stg, p) for mode, oid, stg, p in stages)
        repo.git("update-index", "-z", "--index-info", input=data)
    if ita:
        _add_intent_to_add(repo, ita)
    if repo.sparse_checkout() is not None:  # outside the cone and off the disk: skip-worktree, as git keeps them
        root = os.fsencode(repo.workdir)
        entries = [e.path for e in repo.ls_tree(target.index_tree) if _under(e.path, paths)]
        skip = sorted(set(skip) | {p for p in repo.outside_sparse_cone(target.index_tree, entries) if not os.path.lexists(os.path.join(root, p))})
    skipping = set(skip)
    unskip = [p for p in now.skip_worktree if p not in skipping and _under(p, paths)]
    if unskip:  # read-tree keeps the flags of unchanged entries; clear the ones the target lacks
        repo.git("update-index", "-z", "--no-skip-worktree", "--stdin", input=b"".join(p + b"\0" for p in unskip), check=False)
    if skip:
        repo.git("update-index", "-z", "--skip-worktree", "--stdin", input=b"".join(p + b"\0" for p in skip))
    repo.git("update-index", "-q", "--refresh", "--ignore-submodules", check=False)
    if assumed:  # after the refresh, which would otherwise record the disk's stat data for them
        repo.git("update-index", "-z", "--assume-unchanged", "--stdin", input=b"".join(p + b"\0" for p in assumed), check=False)


def _add_intent_to_add(repo: Repo, paths: list[bytes]) -> None:
    """``git add -N`` the ``paths``; one whose file is absent (an intent-to-add entry can outlive
    its file) gets an empty placeholder for the moment of the add, removed again after."""
    root = os.fsencode(repo.workdir)
    placeholders: list[bytes] = []
    for p in paths:
        full = os.path.join(root, p)
        if os.path.lexists(full):
            continue
        try:
            fsutil.makedirs(os.path.dirname(full))
            with open(full, "xb"):
                pass
            placeholders.append(p)
        except OSError:
            pass  # a parent is a file now: that entry cannot come back; git add reports nothing for it
    try:
        present = [p for p in paths if os.path.lexists(os.path.join(root, p))]
        if present:
            repo.git("add", "-N", "-f", "--pathspec-from-file=-", "--pathspec-file-nul", input=b"".join(p + b"\0" for p in present))
    finally:
        for p in placeholders:
            _unlink(root, p)


def _reset_head(repo: Repo, target: Checkpoint, now: Snapshot) -> None:
    if not target.base or target.base == now.base:
        return
    repo.move_head(target.base, expected_old=now.base, reason=f"ckpt: restore {target.id} --reset-head")


def _finish(repo: Repo, j: Journal, target: Checkpoint, now: Snapshot) -> list[str]:
    if j.reset_head:
        _reset_head(repo, target, now)
    fault("restore.before-event")
    data: dict[str, Any] = {
        "target": j.target_id, "target_commit": j.target_commit, "from": j.from_id,
        "from_commit": j.from_commit, "paths": j.paths, "worktree": str(repo.git_dir),
        "reset_head": j.reset_head,
    }
    if j.unchanged:  # whichever checkpoint "from" names (the state may be saved under another name)
        data["unchanged"] = True
    if j.paths and _left_whole(repo, target):
        data["whole"] = True  # the worktree is the target now: @ names it (store.left_whole)
    problem = ledger.append_or_warn(repo, j.task, j.type, data)
    if problem is None and not ledger.changed_nothing(data):
        # (a restore that changed nothing is passed over by undo: it is no jump to remember)
        with contextlib.suppress(OSError):  # only a shortcut for undo: losing it loses nothing
            store.atomic_write(_last_jump_path(repo), j.task.encode() + b"\n")
    with contextlib.suppress(FileNotFoundError):
        _journal_path(repo).unlink()
    return [problem] if problem else []


def _left_whole(repo: Repo, target: Checkpoint) -> bool:
    """Whether, after a restore of some paths, the worktree (files, index, HEAD, overlay: its
    state digest) is ``target``'s whole: judged only for a checkpoint this repository wrote (a
    fetched manifest's state digest is anyone's words), and False when it cannot be captured."""
    if not store.is_local(repo, target):
        return False
    try:
        from .config import load

        return capture(repo, load(repo), read_only=True).state() == target.manifest.state
    except CkptError:
        return False


def _last_jump_path(repo: Repo) -> Path:
    """``$GIT_DIR/ckpt/last-jump``: the task whose ledger holds this worktree's newest restore or
    undo (the task may have changed since: ``task start``), for :func:`undo`."""
    return repo.git_dir / "ckpt" / "last-jump"


def _last_jump_task(repo: Repo) -> str | None:
    """The task :func:`_last_jump_path` names; None when it is absent, unreadable or names no
    valid task.  Raises :class:`CorruptError` when it is no regular file of at most
    :data:`MARK_MAX` bytes (:func:`git_ckpt.gitcore.read_state`): something else put it there."""
    try:
        data = read_state(_last_jump_path(repo), MARK_MAX)
    except OSError:
        return None
    try:
        return store.check_task_name(data.decode("utf-8").strip())
    except (UnicodeDecodeError, CkptError):
        return None


def restore(
    repo: Repo,
    cfg: Config,
    target: Checkpoint,
    *,
    task: str,
    paths: list[bytes] | None = None,
    dry_run: bool = False,
    reset_head: bool = False,
    type: str = "restore",
    ignore_journal: bool = False,
    force: bool = False,
) -> RestoreResult:
    """Restore ``target`` into the worktree of ``repo`` (all of it, or only ``paths``).

    Saves the current state first as a ``pre-restore`` checkpoint of ``task`` unless it equals
    the latest checkpoint.  ``dry_run`` returns the plan and writes nothing.  Raises
    :class:`BusyError` while a merge/rebase is in progress, ``index.lock`` is held or a restore
    is unfinished; :class:`CkptError` when an ignored file is in the way; :class:`UsageError`
    when ``reset_head`` would move a branch other than the one ``target`` was saved on, unless
    ``force``.
    """
    with repo.worktree_lock(exclusive=not dry_run):  # a dry run reads, as save and verify do
        busy = _check_ready(repo, type, dry_run)
        if not ignore_journal and read_journal(repo) is not None:
            raise BusyError("a restore was interrupted in this worktree", "run git ckpt restore --continue to finish it, or git ckpt undo to go back")
        if reset_head and paths:
            raise UsageError("--reset-head moves HEAD for a whole restore; it takes no PATHS",
                             f"{reset_head_command(target, repo.head()[1])} restores all of {target.id}; "
                             f"git ckpt restore {target.id} PATH... restores paths and leaves HEAD")
        if reset_head and target.base is None:
            raise UsageError(f"{target.id} was saved on an unborn branch; --reset-head cannot move HEAD there",
                             "restore without --reset-head, or delete the branch yourself (git update-ref -d)")
        now = capture(repo, cfg, read_only=dry_run)
        if paths:
            _check_paths_exist(repo, target, now, paths)
        plan = make_plan(repo, target, now, paths, reset_head)
        if plan.head_changes and now.branch and target.manifest.branch != now.branch and not force:
            raise UsageError(
                f"--reset-head would move branch {_branch_name(now.branch)} to the base of {target.id}, which was saved on "
                f"{_branch_name(target.manifest.branch)}" + (f"; {plan.head_unreachable} commit(s) would no longer be reachable from it" if plan.head_unreachable else ""),
                (f"check out {'a detached HEAD (git checkout --detach)' if target.manifest.branch is None else _branch_name(target.manifest.branch)} first, "
                 + ("then git ckpt undo; nothing was changed" if type == "undo" else
                    f"restore without --reset-head, or add --force to move {_branch_name(now.branch)}; nothing was changed")))
        if plan.blocked:
            raise CkptError(
                f"restoring {target.id} would overwrite {len(plan.blocked)} ignored, skipped or unsaved path(s) "
                "whose current content the pre-restore save would not hold: "
                + ", ".join(path_display(p) for p in plan.blocked[:5]),
                _blocked_hint(repo, cfg, plan),
            )
        here = cwd_dirs(os.fsencode(repo.workdir))
        gone = [p for p in plan.write + plan.overlay_write if p in here]
        if gone:
            raise CkptError(f"restoring {target.id} would replace the current directory {path_display(gone[0])!r} with a file",
                             "cd to the worktree root (or any directory the checkpoint keeps) and run the command again; nothing was changed")
        # A refused overlay archive (crafted or corrupt) must change nothing: no pre-restore
        # save, no journal.  apply() validates again; this only moves the refusal earlier.
        _overlay_entries(target, cfg, plan)
        from .check import missing_objects

        missing = missing_objects(repo, target)
        if missing:  # refuse before the pre-restore save, the journal or any file is touched
            raise CorruptError(f"{target.id} cannot be restored: {len(missing)} object(s) missing from the object store (e.g. {missing[0]})",
                               f"nothing was changed; git ckpt check {target.id} names the damage, git ckpt fetch may bring the objects back")
        if dry_run:
            listed = repo.ls_tree(target.tree, *paths) if paths else repo.ls_tree(target.tree)
            plan.leave = max(0, len(listed) - len(set(plan.write)))
            merging = not paths and target.manifest.merge_heads and not (repo.in_progress() and not merge_restored(repo))
            problem = merge_state_problem(repo, target, list(target.manifest.merge_heads),
                                          target.base if reset_head else None) if merging else None
            return RestoreResult(target.id, None, None, plan, dry_run=True, type=type, paths=paths,
                                 warnings=[w for w in (busy, problem) if w])
        if paths and plan.empty:  # nothing to write, so nothing to save, log or undo
            return RestoreResult(target.id, None, None, plan, type=type, paths=paths)
        prints = Fingerprints(repo, now, plan)  # before the save: what it holds is what is on disk
        same = checkpoint_with_state(repo, task, now.state(), first=None if paths else target)
        warns: list[str] = []  # the pre-restore save's own (a secret file it left out, say)
        if same is None and plan.empty:
            # nothing will be written (files, index and HEAD stay): nothing can be lost, so
            # nothing is saved; logged as a restore that changed nothing (undo passes over it)
            prev_id, prev_commit, saved = target.id, target.commit, None
        elif same is not None:
            if store.is_local(repo, same):
                log_if_missing(repo, same)  # a pre-restore save killed before its event: log it now
            prev_id, prev_commit, saved = same.id, same.commit, None
        else:
            res = save(repo, cfg, task=task, message=f"before restoring {target.id}", kind="pre-restore", snap=now,
                       allow_empty=True, in_restore=True, remember_warnings=False)
            prev_id, prev_commit, saved, warns = res.id, res.commit, res.id, res.warnings
        j = Journal(type=type, task=task, target_commit=target.commit, target_id=target.id, from_commit=prev_commit,
                    from_id=prev_id, paths=[path_to_str(p) for p in paths or []], reset_head=reset_head,
                    unchanged=plan.empty)
        store.atomic_write(_journal_path(repo), encode(j))
        fault("restore.after-journal")
        applied = apply(repo, cfg, target, now, paths, plan, prints)
        set_kept_ignored(repo, plan.kept_left_ignored)
        if warns:  # the pre-restore save's, delivered with this result: remembered now
            note_warned(repo, task, left_out_paths(now))
        warns += applied
        warns += _finish(repo, j, target, now)
        if not paths:
            warns += set_merge_state(repo, target)
        return RestoreResult(target.id, prev_id, saved, plan, type=type, warnings=warns, paths=paths)


def _new_work(repo: Repo, now: Snapshot, target: Checkpoint, before: Checkpoint) -> bool:
    """Whether ``now`` holds a file (worktree or overlay) whose content is neither the
    target's nor the saved state's: work done after a restore was interrupted."""
    def changed(tree: str) -> set[tuple[bytes, str]]:
        return {(b.path, b.oid) for _a, b in repo.diff_trees(tree, now.tree) if b is not None}

    if changed(target.tree) & changed(before.tree):
        return True
    known = {(f.path, f.sha256) for f in target.manifest.overlay.files + before.manifest.overlay.files}
    return any((f.path, f.sha256) not in known for f in now.overlay_info.files)


def continue_restore(repo: Repo, cfg: Config) -> RestoreResult:
    """Finish the interrupted restore named by the journal.  :class:`UsageError` when none (nothing to act on)."""
    with repo.worktree_lock(exclusive=True):
        j = read_journal(repo)
        if j is None:
            raise UsageError("no interrupted restore to continue", "git ckpt status shows the state of this worktree")
        _check_ready(repo)
        target = store.load(repo, j.target_commit, id=j.target_id)
        paths = [path_from_str(p) for p in j.paths] or None
        now = capture(repo, cfg)
        plan = make_plan(repo, target, now, paths, j.reset_head)
        if plan.blocked:
            raise CkptError(f"finishing the restore of {target.id} would overwrite {len(plan.blocked)} ignored, skipped or unsaved path(s): "
                            + ", ".join(path_display(p) for p in plan.blocked[:5]), "move them aside, then run git ckpt restore --continue again")
        prints = Fingerprints(repo, now, plan)
        # Work done since the interruption is saved first: nothing --continue replaces is lost.
        warns = []
        if _new_work(repo, now, target, store.load(repo, j.from_commit)):
            warns = save(repo, cfg, task=j.task, message=f"before finishing the restore of {target.id}", kind="pre-restore",
                         snap=now, allow_empty=True, in_restore=True, remember_warnings=False).warnings
        applied = apply(repo, cfg, target, now, paths, plan, prints)
        set_kept_ignored(repo, plan.kept_left_ignored)
        if warns:
            note_warned(repo, j.task, left_out_paths(now))
        warns += applied
        warns += _finish(repo, j, target, now)
        if not paths:
            warns += set_merge_state(repo, target)
        return RestoreResult(target.id, j.from_id, None, plan, type=j.type, warnings=warns, continued=True, paths=paths)


def undo(repo: Repo, cfg: Config | None, *, task: str, dry_run: bool = False) -> RestoreResult:
    """Return to the state before the last restore or undo in this worktree that changed the
    state, whichever task logged it (the task that logged the newest is recorded in
    ``$GIT_DIR/ckpt/last-jump``; then ``task``'s ledger): itself a restore into ``task``, so a
    second undo goes back again; a restore to the state the worktree already held is passed
    over.  An interrupted restore is undone from its journal.

    ``cfg`` None: the worktree's ``.ckpt.toml`` cannot be read, and git config alone is used
    (:func:`git_ckpt.config.load_without_file`).

    Raises :class:`UsageError` when there is nothing to undo (nothing to act on).
    """
    from .config import load_without_file

    cfg = cfg if cfg is not None else load_without_file(repo)
    j = read_journal(repo)
    if j is not None:
        target = store.load(repo, j.from_commit, id=j.from_id)
        result = restore(repo, cfg, target, task=j.task, dry_run=dry_run, type="undo", ignore_journal=True)
        if not dry_run:
            with contextlib.suppress(FileNotFoundError):
                _journal_path(repo).unlink()
        return result
    here = str(repo.git_dir)
    passed_over: str | None = None  # the newest restore that changed nothing
    # the task that logged this worktree's newest jump first (the current task may have changed
    # since), then the current task
    for where in dict.fromkeys(t for t in (_last_jump_task(repo), task) if t is not None):
        for rec in reversed(ledger.records(repo, where)):
            ev = rec.event
            if ev.type in ("restore", "undo") and ev.data.get("worktree") == here:
                if ledger.changed_nothing(ev.data):
                    passed_over = passed_over or str(ev.data.get("target"))  # it held its target already: look back
                    continue
                target = store.load(repo, ev.data["from_commit"], id=ev.data["from"])
                paths = [path_from_str(p) for p in ev.data.get("paths") or []] or None
                return restore(repo, cfg, target, task=task, paths=paths, dry_run=dry_run, type="undo",
                               reset_head=bool(ev.data.get("reset_head")))
    if passed_over:
        raise UsageError(f"nothing to undo: the worktree already matched {passed_over} when it was restored, "
                         "and no earlier restore from this worktree changed the state",
                         "git ckpt log shows the history of the task")
    raise UsageError("nothing to undo: no restore was made from this worktree", "git ckpt log shows the history of the task")


def parse_paths(repo: Repo, paths: tuple[str, ...] | list[str], cwd: str) -> list[bytes]:
    """Turn user paths (relative to ``cwd``) into worktree-relative bytes; :class:`UsageError` for
    paths outside the worktree."""
    root = os.fsencode(repo.workdir)
    out = []
    for p in paths:
        full = os.path.normpath(os.path.join(os.fsencode(cwd), os.fsencode(p)))
        rel = os.path.relpath(full, root)
        if rel == b".":
            return []
        if rel.startswith(b"..") or os.path.isabs(rel):
            raise UsageError(f"path {p!r} is outside the worktree {repo.workdir}")
        out.append(rel)
    return out
