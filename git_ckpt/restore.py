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

import contextlib
import os
import stat
from dataclasses import dataclass, field

import msgspec

from . import ledger, overlay, store
from .config import Config
from .errors import BusyError, CkptError, CorruptError, IOFailure, NotFoundError, UsageError
from .gitcore import Repo, TreeEntry, fault, git_failure
from .model import encode, path_display, path_from_str, path_to_str
from .snapshot import Snapshot, capture, save
from .store import Checkpoint

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
    leave: int | None = None  # files of the target left as they are (counted for dry runs)
    blocked: list[bytes] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """True when nothing would change."""
        return not (self.write or self.delete or self.overlay_write or self.overlay_delete or self.raw_write or self.index_changes or self.head_changes)

    def to_json(self) -> dict:
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


def _under(path: bytes, paths: list[bytes] | None) -> bool:
    if not paths:
        return True
    return any(path == p or path.startswith(p.rstrip(b"/") + b"/") for p in paths)


def _raw_map(repo: Repo, cp: Checkpoint) -> dict[bytes, TreeEntry]:
    return cp.raw_entries()


def _stage_entries(repo: Repo, cp: Checkpoint) -> list[tuple[int, str, int, bytes]]:
    return cp.stage_entries()


def _overlay_map(files) -> dict[bytes, tuple[str, int, str]]:
    return {path_from_str(f.path): (f.kind, f.mode, f.sha256) for f in files}


def _same_bytes(root: bytes, rel: bytes, data: bytes) -> bool:
    """Whether the regular file ``rel`` holds exactly ``data``."""
    try:
        with open(os.path.join(root, rel), "rb") as fh:
            return fh.read() == data
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
        except (FileNotFoundError, NotADirectoryError):
            return []
        if not stat.S_ISDIR(st.st_mode):
            return [] if parent in removed else [parent]
    full = os.path.join(root, rel)
    try:
        st = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):
        return []
    if not stat.S_ISDIR(st.st_mode):
        return [] if (saved or rel in removed) else [rel]
    for dirpath, dirnames, filenames in os.walk(full):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            inner = os.path.relpath(os.path.join(dirpath, name), root)
            if inner not in removed:
                return [inner]
    return []


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
    # skip-worktree files that were not on disk at save time stay off the disk
    absent = {path_from_str(p) for p in target.manifest.skip_worktree_absent}
    if absent:
        plan.write = [p for p in plan.write if p not in absent]
        for p in sorted(absent):
            if _under(p, paths) and p not in plan.delete and os.path.lexists(os.path.join(root, p)) and p in tracked_now | set(now.skip_worktree):
                plan.delete.append(p)
    target_raw = _raw_map(repo, target)
    now_raw = {p for p, _m, _o in now.raw}
    written = set(plan.write)
    for p in sorted(now_raw - set(target_raw)):
        if _under(p, paths) and p not in written and repo.paths_in_tree(target.tree, [p]):
            plan.write.append(p)
    for p, e in sorted(target_raw.items()):  # validated by Checkpoint.raw_entries
        if _under(p, paths) and (p in set(plan.write) or not _same_bytes(root, p, repo.read_blob(e.oid))):
            plan.raw_write.append(p)
    target.stage_entries()  # a malformed stages/ tree is refused before anything is written
    # overlay
    tgt = _overlay_map(target.manifest.overlay.files)
    cur = _overlay_map(now.overlay_info.files)
    plan.overlay_write = sorted(p for p, v in tgt.items() if _under(p, paths) and cur.get(p) != v)
    plan.overlay_delete = sorted(p for p in cur if _under(p, paths) and p not in tgt)
    # Nothing that no checkpoint holds may be overwritten: an ignored file, a file save skipped,
    # a non-empty directory (ignored content, a nested repository) where a file must go.
    removed = set(plan.delete) | set(plan.overlay_delete)
    for p in plan.write:
        plan.blocked += _in_the_way(root, p, removed, saved=p in tracked_now)
    for p in plan.overlay_write:
        plan.blocked += _in_the_way(root, p, removed, saved=p in cur)
    # index
    m = target.manifest
    plan.index_changes = (
        now.index_tree != target.index_tree
        or [path_to_str(p) for p in now.intent_to_add] != m.intent_to_add
        or [path_to_str(p) for p in now.skip_worktree] != m.skip_worktree
        or [path_to_str(p) for p in now.conflicts] != m.conflicts
    )
    if paths and plan.index_changes:
        plan.index_changes = bool(repo.diff_trees(now.index_tree, target.index_tree, paths)) or any(
            _under(path_from_str(p), paths) for p in m.intent_to_add + m.conflicts
        ) or any(_under(p, paths) for p in now.intent_to_add + now.conflicts)
    plan.head_changes = bool(reset_head and target.base and target.base != now.base)
    plan.blocked = sorted(set(plan.blocked))
    return plan


def checkpoint_with_state(repo: Repo, task: str, state: str, *, first: Checkpoint | None = None,
                          last: Checkpoint | None = None) -> Checkpoint | None:
    """A checkpoint whose state digest is ``state``: ``first`` when given, the latest of
    ``task`` (``last`` when the caller has read it), or the one last restored in this worktree;
    None when none of them is.  Such a state needs no pre-restore save."""
    for cp in (first, last if last is not None else store.latest(repo, task)):
        if cp is not None and cp.manifest.state == state:
            return cp
    prev = last_restored(repo, task)
    return prev if prev is not None and prev.manifest.state == state else None


def last_restored(repo: Repo, task: str) -> Checkpoint | None:
    """The checkpoint the last whole restore or undo in this worktree brought back (looking
    back 500 events of ``task``'s ledger), or None."""
    here = str(repo.git_dir)
    with contextlib.suppress(CkptError, KeyError):
        rec = ledger.find_last(repo, task, lambda ev: ev.type in ("restore", "undo") and ev.data.get("worktree") == here and not ev.data.get("paths"))
        if rec is not None:
            return store.load(repo, rec.event.data["target_commit"], id=rec.event.data["target"])
    return None


def _check_paths_exist(repo: Repo, target: Checkpoint, now: Snapshot, paths: list[bytes]) -> None:
    """:class:`NotFoundError` for a path that names nothing in the target or the current state
    (like git's "pathspec did not match"); paths are literal, never globs."""
    overlay_paths = [path_from_str(f.path) for f in target.manifest.overlay.files + now.overlay_info.files]
    for p in paths:
        if any(repo.paths_in_tree(t, [p.rstrip(b"/")]) for t in (target.tree, now.tree, target.index_tree, now.index_tree)):
            continue
        if any(_under(o, [p]) for o in overlay_paths):
            continue
        raise NotFoundError(f"path {path_display(p)!r} matches nothing in {target.id} or in the worktree",
                            "paths are literal and relative to the current directory; git ckpt show lists what a checkpoint holds")


def _check_ready(repo: Repo) -> None:
    what = repo.in_progress()
    if what:
        raise BusyError(f"{what} is in progress; restoring now could lose its state", "finish it or abort it first (e.g. git merge --abort), then restore")
    repo.check_index_unlocked()


def _journal_path(repo: Repo):
    return repo.git_dir / "ckpt" / "RESTORE"


def read_journal(repo: Repo) -> Journal | None:
    """The unfinished restore of this worktree, or None."""
    try:
        data = _journal_path(repo).read_bytes()
    except FileNotFoundError:
        return None
    try:
        return msgspec.json.decode(data, type=Journal)
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise CorruptError(f"{_journal_path(repo)} is corrupt", "move it aside; git ckpt list shows the pre-restore checkpoint to restore") from None


def _prune_empty_dirs(root: bytes, rel: bytes) -> None:
    parent = os.path.dirname(rel)
    while parent:
        try:
            os.rmdir(os.path.join(root, parent))
        except OSError:
            return
        parent = os.path.dirname(parent)


def _unlink(root: bytes, rel: bytes) -> None:
    full = os.path.join(root, rel)
    try:
        st = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        if stat.S_ISDIR(st.st_mode):
            os.rmdir(full)  # only ever an empty directory; never a recursive delete
        else:
            os.unlink(full)
    except OSError as exc:
        raise IOFailure(f"cannot remove {path_display(rel)!r}: {exc.strerror}", "fix permissions, then run git ckpt restore --continue") from None
    _prune_empty_dirs(root, rel)


def overlay_limit(cfg: Config, target: Checkpoint) -> int:
    """The per-file cap for extracting ``target``'s overlay: the larger of the current
    ``overlay.max_file_size`` and the one in force when it was saved, never above 2 GiB."""
    return min(max(cfg.max_file_size, target.manifest.overlay.max_file_size), 2 * 1024**3)


def _overlay_entries(target: Checkpoint, cfg: Config, plan: Plan) -> list[overlay.Entry]:
    """Validate the target's overlay archive and pre-flight the entries the plan writes."""
    if not plan.overlay_write:
        return []
    tar = target.overlay_tar()
    if not tar:
        raise CorruptError(f"overlay of {target.id} is missing although its manifest lists files", f"git ckpt check {target.id} reports what is damaged")
    try:
        entries = overlay.read_archive(tar, overlay_limit(cfg, target))
        wanted = set(plan.overlay_write)
        missing = wanted - {e.path for e in entries}
        if missing:
            raise CorruptError(f"overlay of {target.id} lacks {len(missing)} files its manifest lists (e.g. {path_display(sorted(missing)[0])!r})")
        overlay.check_writable(target.repo.workdir, [e for e in entries if e.path in wanted], set(plan.overlay_delete) | set(plan.delete))
    except CorruptError as exc:
        if exc.hint is None:
            exc.hint = f"nothing was changed; git ckpt check {target.id} inspects it, and git ckpt restore {target.id} -- PATHS restores other paths"
        raise
    return entries


def apply(repo: Repo, cfg: Config, target: Checkpoint, now: Snapshot, paths: list[bytes] | None, plan: Plan) -> None:
    """Make the worktree, overlay and index equal ``target`` (steps 4–6).  Idempotent."""
    root = os.fsencode(repo.workdir)
    entries = _overlay_entries(target, cfg, plan)
    # worktree: deletions first (a file may become a directory), then writes.
    for p in plan.delete + plan.overlay_delete:  # overlay residue may be what fills a directory
        _unlink(root, p)
    fault("restore.after-delete")
    if plan.write:
        for p in plan.write:  # a directory may have to give way to a file: only an empty one
            full = os.path.join(root, p)
            with contextlib.suppress(OSError):
                if stat.S_ISDIR(os.lstat(full).st_mode):
                    for dirpath, _dirs, _files in os.walk(full, topdown=False):
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
            repo.git("checkout-index", "-f", "-q", "-z", "--stdin", input=b"\0".join(order) + b"\0", index_file=idx)
    fault("restore.after-write")
    if plan.raw_write:
        raw = _raw_map(repo, target)
        for p in plan.raw_write:
            data = repo.read_blob(raw[p].oid)
            full = os.path.join(root, p)
            with contextlib.suppress(FileNotFoundError):
                with open(full, "rb") as fh:
                    if fh.read() == data:
                        continue
            overlay.write_entry(repo.workdir, overlay.Entry(p, "file", 0o755 if raw[p].mode == 0o100755 else 0o644, int(os.stat(full).st_mtime) if os.path.exists(full) else 0, data))
    # overlay (its deletions were done above)
    if plan.overlay_write:
        wanted = set(plan.overlay_write)
        for e in entries:
            if e.path in wanted:
                overlay.write_entry(repo.workdir, e)
        missing = wanted - {e.path for e in entries}
        if missing:
            raise CorruptError(f"overlay of {target.id} lacks {len(missing)} files its manifest lists (e.g. {path_display(sorted(missing)[0])!r})")
    fault("restore.after-overlay")
    if plan.index_changes:
        _apply_index(repo, target, paths, now)
    fault("restore.after-index")


def _apply_index(repo: Repo, target: Checkpoint, paths: list[bytes] | None, now: Snapshot) -> None:
    m = target.manifest
    ita = [path_from_str(p) for p in m.intent_to_add]
    skip = [path_from_str(p) for p in m.skip_worktree]
    stages = _stage_entries(repo, target)
    if paths:
        spec = b"".join(p + b"\0" for p in paths)
        # Entries of the target for these paths, others left as they are.
        proc = repo.git("reset", "-q", "--no-refresh", target.index_commit, "--pathspec-from-file=-", "--pathspec-file-nul", input=spec, check=False)
        if proc.returncode not in (0, 1):  # 1: "unstaged changes after reset", not a failure
            raise git_failure(("reset",), proc)
        ita = [p for p in ita if _under(p, paths)]
        skip = [p for p in skip if _under(p, paths)]
        stages = [s for s in stages if _under(s[3], paths)]
    else:
        if now.intent_to_add:  # read-tree would keep the flag on an empty blob the target stages
            repo.git("update-index", "-z", "--force-remove", "--stdin", input=b"".join(p + b"\0" for p in now.intent_to_add))
        if now.assume_unchanged:  # read-tree refuses to replace entries it may not look at
            repo.git("update-index", "-z", "--no-assume-unchanged", "--stdin", input=b"".join(p + b"\0" for p in now.assume_unchanged))
        repo.git("read-tree", "--reset", target.index_tree)
        keep = [p for p in now.assume_unchanged if repo.entry_mode(target.index_tree, p) is not None]
        if keep:  # the user's local flag survives on the paths the target still has
            repo.git("update-index", "-z", "--assume-unchanged", "--stdin", input=b"".join(p + b"\0" for p in keep), check=False)
    if stages:
        data = b"".join(b"0 %s\t%s\0" % (repo.zero_oid.encode(), p) for p in sorted({s[3] for s in stages}))
        data += b"".join(b"%o %s %d\t%s\0" % (mode, oid.encode(), stg, p) for mode, oid, stg, p in stages)
        repo.git("update-index", "-z", "--index-info", input=data)
    if ita:
        _add_intent_to_add(repo, ita)
    unskip = [p for p in now.skip_worktree if p not in set(skip) and _under(p, paths)]
    if unskip:  # read-tree keeps the flags of unchanged entries; clear the ones the target lacks
        repo.git("update-index", "-z", "--no-skip-worktree", "--stdin", input=b"".join(p + b"\0" for p in unskip), check=False)
    if skip:
        repo.git("update-index", "-z", "--skip-worktree", "--stdin", input=b"".join(p + b"\0" for p in skip))
    repo.git("update-index", "-q", "--refresh", "--ignore-submodules", check=False)


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
            os.makedirs(os.path.dirname(full), exist_ok=True)
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
    problem = ledger.append_or_warn(repo, j.task, j.type, {
        "target": j.target_id, "target_commit": j.target_commit, "from": j.from_id,
        "from_commit": j.from_commit, "paths": j.paths, "worktree": str(repo.git_dir),
        "reset_head": j.reset_head,
    })
    with contextlib.suppress(FileNotFoundError):
        _journal_path(repo).unlink()
    return [problem] if problem else []


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
) -> RestoreResult:
    """Restore ``target`` into the worktree of ``repo`` (all of it, or only ``paths``).

    Saves the current state first as a ``pre-restore`` checkpoint of ``task`` unless it equals
    the latest checkpoint.  ``dry_run`` returns the plan and writes nothing.  Raises
    :class:`BusyError` while a merge/rebase is in progress, ``index.lock`` is held or a restore
    is unfinished; :class:`CkptError` when an ignored file is in the way.
    """
    with repo.worktree_lock(exclusive=True):
        _check_ready(repo)
        if not ignore_journal and read_journal(repo) is not None:
            raise BusyError("a restore was interrupted in this worktree", "run git ckpt restore --continue to finish it, or git ckpt undo to go back")
        if reset_head and target.base is None:
            raise UsageError(f"{target.id} was saved on an unborn branch; --reset-head cannot move HEAD there",
                             "restore without --reset-head, or delete the branch yourself (git update-ref -d)")
        now = capture(repo, cfg)
        if paths:
            _check_paths_exist(repo, target, now, paths)
        plan = make_plan(repo, target, now, paths, reset_head)
        if plan.blocked:
            raise CkptError(
                f"restoring {target.id} would overwrite {len(plan.blocked)} ignored, skipped or unsaved path(s) that no checkpoint holds: "
                + ", ".join(path_display(p) for p in plan.blocked[:5]),
                "move them aside (or add them to overlay.include), then restore again",
            )
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
            return RestoreResult(target.id, None, None, plan, dry_run=True, type=type)
        same = None if paths else checkpoint_with_state(repo, task, now.state(), first=target)
        if same is not None:
            prev_id, prev_commit, saved = same.id, same.commit, None
        else:
            res = save(repo, cfg, task=task, message=f"before restoring {target.id}", kind="pre-restore", snap=now, allow_empty=True, in_restore=True)
            prev_id, prev_commit, saved = res.id, res.commit, res.id
        j = Journal(type=type, task=task, target_commit=target.commit, target_id=target.id, from_commit=prev_commit,
                    from_id=prev_id, paths=[path_to_str(p) for p in paths or []], reset_head=reset_head)
        store.atomic_write(_journal_path(repo), encode(j))
        fault("restore.after-journal")
        apply(repo, cfg, target, now, paths, plan)
        warns = _finish(repo, j, target, now)
        return RestoreResult(target.id, prev_id, saved, plan, type=type, warnings=warns)


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
    """Finish the interrupted restore named by the journal.  :class:`NotFoundError` when none."""
    with repo.worktree_lock(exclusive=True):
        j = read_journal(repo)
        if j is None:
            raise NotFoundError("no interrupted restore to continue", "git ckpt status shows the state of this worktree")
        _check_ready(repo)
        target = store.load(repo, j.target_commit, id=j.target_id)
        paths = [path_from_str(p) for p in j.paths] or None
        now = capture(repo, cfg)
        plan = make_plan(repo, target, now, paths, j.reset_head)
        if plan.blocked:
            raise CkptError(f"finishing the restore of {target.id} would overwrite {len(plan.blocked)} ignored, skipped or unsaved path(s): "
                            + ", ".join(path_display(p) for p in plan.blocked[:5]), "move them aside, then run git ckpt restore --continue again")
        # Work done since the interruption is saved first: nothing --continue replaces is lost.
        if _new_work(repo, now, target, store.load(repo, j.from_commit)):
            save(repo, cfg, task=j.task, message=f"before finishing the restore of {target.id}", kind="pre-restore",
                 snap=now, allow_empty=True, in_restore=True)
        apply(repo, cfg, target, now, paths, plan)
        warns = _finish(repo, j, target, now)
        return RestoreResult(target.id, j.from_id, None, plan, type=j.type, warnings=warns, continued=True)


def undo(repo: Repo, cfg: Config, *, task: str, dry_run: bool = False) -> RestoreResult:
    """Return to the state before the last restore or undo in this worktree (itself a restore,
    so a second undo goes back again).  An interrupted restore is undone from its journal.

    Raises :class:`NotFoundError` when there is nothing to undo.
    """
    j = read_journal(repo)
    if j is not None:
        target = store.load(repo, j.from_commit, id=j.from_id)
        result = restore(repo, cfg, target, task=j.task, dry_run=dry_run, type="undo", ignore_journal=True)
        if not dry_run:
            with contextlib.suppress(FileNotFoundError):
                _journal_path(repo).unlink()
        return result
    here = str(repo.git_dir)
    for rec in reversed(ledger.records(repo, task)):
        ev = rec.event
        if ev.type in ("restore", "undo") and ev.data.get("worktree") == here:
            target = store.load(repo, ev.data["from_commit"], id=ev.data["from"])
            paths = [path_from_str(p) for p in ev.data.get("paths") or []] or None
            return restore(repo, cfg, target, task=task, paths=paths, dry_run=dry_run, type="undo",
                           reset_head=bool(ev.data.get("reset_head")))
    raise NotFoundError(f"nothing to undo: no restore in task {task} from this worktree", "git ckpt log shows the history of the task")


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
