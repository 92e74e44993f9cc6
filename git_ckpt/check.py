"""Test restore on purpose (``git ckpt check [CKPT | --all]``).

A checkpoint is proved restorable by materialising it into a temporary directory, the same way
restore writes it, and comparing what comes out with what the checkpoint claims:

1. the ref points at a commit, its manifest decodes, and its tree, index commit, meta commit and
   base are all present, with every object they reach (``git rev-list --objects
   --missing=print``);
2. the manifest agrees with the commits (``tree``, ``index_tree``, its own id);
3. the tree is written out with ``git checkout-index`` through a temporary index (smudge filters
   and eol rules applied, as restore does), the ``raw/`` bytes laid over it, and every file
   hashed back through the clean side (``git update-index --refresh``, then ``git diff-files``):
   each must give its blob and mode again (gitlinks are skipped: restore never descends into
   them);
4. ``stages/`` and ``raw/`` hold exactly the paths the manifest lists;
5. the overlay tar passes the strict extractor, is extracted into a second temporary directory,
   and every file there matches the manifest's kind, mode and sha256; the digest recomputes;
6. every path of the tree is a safe worktree path and no overlay file lies below a symlink of
   the tree.

Result notes are not judged: ``check`` is about restorability only (a malformed note line is
skipped by its readers with a warning).

Nothing outside the temporary directories is written, not even objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from . import fsutil, overlay, store
from .errors import CkptError, CorruptError
from .gitcore import Repo
from .model import list_row, path_display, path_from_str, raw_path_problem, row_from_message, task_name_problem

GITLINK = 0o160000


@dataclass
class CheckResult:
    """The verdict on one checkpoint: ``id``, ``commit`` (or None), ``problems`` ([] when it
    would restore exactly) and how many worktree/overlay ``files`` were compared."""

    id: str
    commit: str | None
    problems: list[str] = field(default_factory=list)
    files: int = 0
    overlay_files: int = 0

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"id": self.id, "commit": self.commit, "ok": self.ok, "problems": self.problems,
                "files": self.files, "overlay_files": self.overlay_files}


def targets(repo: Repo, *, spec: str | None, all_tasks: bool, task: str) -> list[tuple[str, str, str | None]]:
    """Which checkpoints to check: ``(id, ref name, commit id or None)``.

    ``spec`` names one checkpoint (resolved like every command; :class:`NotFoundError` when
    unknown, but a ref that exists yet cannot be loaded is still returned, to be reported);
    ``all_tasks`` every checkpoint of every task, this repository's and every fetched
    ``REMOTE:T``; otherwise every checkpoint of ``task``.  A task's promoted ref is checked too
    when it names no checkpoint that is checked already (a dropped one, or damage), so the
    ``check --all`` every "damaged" error hints at names whatever a command found damaged.
    """
    if spec:
        ref = _ref_for_spec(repo, spec, task)
        if ref is not None:
            return [ref]
        cp = store.resolve(repo, spec, task, command="check")
        return [(cp.id, cp.ref or cp.commit, cp.commit)]
    out: list[tuple[str, str, str | None]] = []
    names = store.tasks(repo) if all_tasks else [task]
    if all_tasks:
        names += [f"{r}:{t}" for t, remotes in store.fetched_tasks(repo).items() for r in remotes]
    for t in names:
        numbered = store.numbered(repo, t)
        out += [(f"{t}/{n}", store.ckpt_ref(t, n), oid) for n, oid in numbered]
        promoted_ref = store.promoted_ref(t)
        promoted = repo.read_ref(promoted_ref)
        if promoted and (promoted not in {oid for _n, oid in numbered} or repo.object_type(promoted) != "commit"):
            out.append((f"{t}/promoted", promoted_ref, promoted))
    return out


def _ref_for_spec(repo: Repo, spec: str, task: str) -> tuple[str, str, str | None] | None:
    """``T/N`` or ``N`` naming an existing local ref, without loading it (so damage is reported):
    :func:`git_ckpt.store.damaged_ref`, for a valid task name only."""
    found = store.damaged_ref(repo, spec, task)
    if found is None or task_name_problem(found[0]) is not None:
        return None
    return found[1:]


def check_all(repo: Repo, items: list[tuple[str, str, str | None]]) -> list[CheckResult]:
    """Run :func:`check_one` on each ``(id, ref, commit)``."""
    from . import progress

    shown = progress.meter("check: checkpoints", len(items))
    out = []
    for cid, ref, oid in items:
        out.append(check_one(repo, cid, ref, oid))
        shown.advance()
    shown.done()
    return out


def check_one(repo: Repo, cid: str, ref: str, commit: str | None) -> CheckResult:
    """Prove that checkpoint ``cid`` (ref ``ref`` → ``commit``) would restore exactly.

    Returns a :class:`CheckResult`; never raises for damage (damage is the result), only for
    failures of the machine itself (disk full while materialising: :class:`IOFailure`).
    """
    res = CheckResult(cid, commit)
    if commit is None:
        res.problems.append("the ref points at nothing")
        return res
    kind = repo.object_type(commit)
    if kind is None:
        res.problems.append(f"checkpoint commit {commit[:12]} is missing from the object store")
        return res
    if kind != "commit":
        res.problems.append(f"{ref} points at a {kind}, not a checkpoint commit")
        return res
    try:
        cp = store.load(repo, commit, id=cid, ref=ref)
    except CkptError as exc:
        res.problems.append(exc.message)
        return res
    m = cp.manifest
    if ref.startswith(store.PREFIX) and m.id != cid and not cid.endswith("/promoted"):  # a promoted ref holds T/N
        res.problems.append(f"its manifest names it {m.id!r}, but it is stored as {cid}")
    if m.tree != cp.tree:
        res.problems.append(f"manifest tree {m.tree[:12]} differs from the commit's tree {cp.tree[:12]}")
    row = row_from_message(repo.commit_message(commit), m.id if cid.endswith("/promoted") else cid.rpartition(":")[2])  # what list shows of it
    if row is not None and row != list_row(m):
        res.problems.append("the Ckpt-Row line of its commit message disagrees with its manifest (git ckpt list shows that line)")
    missing = missing_objects(repo, cp)
    if missing:
        res.problems.append(f"{len(missing)} object(s) missing from the object store (e.g. {missing[0]})")
        return res
    try:
        if m.index_tree != cp.index_tree:
            res.problems.append(f"manifest index tree {m.index_tree[:12]} differs from the index commit's tree {cp.index_tree[:12]}")
    except (CkptError, KeyError, ValueError) as exc:
        res.problems.append(f"index commit unreadable: {exc}")
        return res
    _check_lists(repo, cp, res)
    if _check_tree_paths(repo, cp, res):
        _check_worktree(repo, cp, res)
    _check_overlay(repo, cp, res)
    return res


def _check_tree_paths(repo: Repo, cp: store.Checkpoint, res: CheckResult) -> bool:
    """Every path of the tree and the index tree is a safe worktree path, and no overlay file
    lies below a symlink or file of the tree (restore would refuse the checkpoint).  Returns
    False (with the problem recorded) when the tree must not even be materialised."""
    tree_entries = repo.ls_tree(cp.tree)
    for e in tree_entries + repo.ls_tree(cp.index_tree):
        problem = raw_path_problem(e.path)
        if problem:
            res.problems.append(f"its tree names the path {path_display(e.path)!r}, which {problem}")
            return False
    leaves = {e.path: e.mode for e in tree_entries if e.mode != GITLINK}
    for f in cp.manifest.overlay.files:
        parts = path_from_str(f.path).split(b"/")
        for i in range(1, len(parts)):
            parent = b"/".join(parts[:i])
            if parent in leaves:
                res.problems.append(f"overlay file {path_display(path_from_str(f.path))!r} lies below {path_display(parent)!r}, "
                                    "which is a symlink or file in its tree")
                return True
    return True


def missing_objects(repo: Repo, cp: store.Checkpoint) -> list[str]:
    """Ids of objects reachable from checkpoint ``cp`` (not through its base) that are absent
    from the object store ([] when complete); mirrors ``git rev-list --objects --missing=print``."""
    for oid in cp.parents:
        if not repo.object_exists(oid):
            return [oid]
    args = ["rev-list", "--objects", "--no-object-names", "--missing=print", cp.commit]
    if cp.base:
        args += ["--not", cp.base]
    proc = repo.git(*args, check=False)
    if proc.returncode != 0:
        first = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return [first[0] if first else f"git rev-list exited {proc.returncode}"]
    return [ln[1:].decode() for ln in proc.stdout.splitlines() if ln.startswith(b"?")]


def _check_lists(repo: Repo, cp: store.Checkpoint, res: CheckResult) -> None:
    """``stages/`` and ``raw/`` hold exactly what the manifest lists; listed raw paths exist."""
    m = cp.manifest
    for validate in (cp.stage_entries, cp.raw_entries):
        try:
            validate()
        except CorruptError as exc:
            res.problems.append(exc.message)
    stages = cp.meta_subtree("stages")
    stage_paths = sorted({e.path.partition(b"/")[2] for e in repo.ls_tree(stages)}) if stages else []
    if stage_paths != sorted(path_from_str(p) for p in m.conflicts):
        res.problems.append("conflict stages under stages/ do not match the manifest's conflict list")
    raw = cp.meta_subtree("raw")
    raw_paths = sorted(e.path for e in repo.ls_tree(raw)) if raw else []
    if raw_paths != sorted(path_from_str(p) for p in m.raw):
        res.problems.append("raw/ does not hold exactly the files the manifest lists as raw")


def _check_worktree(repo: Repo, cp: store.Checkpoint, res: CheckResult) -> None:
    """Materialise the tree (plus raw/ bytes) and hash it back; every file must match its blob.

    The temporary index lives in the temporary directory and nothing is written to the object
    store (``git update-index --refresh`` re-hashes through the clean side without storing), so
    this works on a read-only repository too.
    """
    with fsutil.temp_dir("ckpt-check-") as tmp:
        work = Path(tmp) / "w"
        work.mkdir()
        idx = Path(tmp) / "index"
        env = {"GIT_WORK_TREE": str(work)}
        repo.git("read-tree", cp.tree, index_file=idx, env=env)
        proc = repo.git("checkout-index", "-a", "-f", "-q", index_file=idx, env=env, check=False)
        if proc.returncode != 0:
            lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            res.problems.append("git checkout-index could not write it: " + (lines[0] if lines else f"exit {proc.returncode}"))
            return
        try:
            raw = cp.raw_entries()  # validated: safe paths of files of the tree
        except CorruptError as exc:
            res.problems.append(exc.message)
            return
        for path, e in raw.items():
            with repo.open_blob(e.oid) as content:  # streamed: a large raw file is never held whole
                overlay.write_entry(work, overlay.Entry(path, "file", 0o755 if e.mode == 0o100755 else 0o644, 0, b""), content)
        res.files = sum(1 for e in repo.ls_tree(cp.tree) if e.mode != GITLINK)
        # Entries start with no stat data, so the refresh re-reads (and re-cleans) every file.
        repo.git("update-index", "-q", "--refresh", "--ignore-submodules", index_file=idx, env=env, check=False)
        out = repo.git("diff-files", "--name-only", "-z", "--ignore-submodules", index_file=idx, env=env).stdout
        bad = [p for p in out.split(b"\0") if p]
        if bad:
            res.problems.append(f"{len(bad)} file(s) would not restore exactly (e.g. {path_display(bad[0])!r})")


def _check_overlay(repo: Repo, cp: store.Checkpoint, res: CheckResult) -> None:
    """The overlay tar extracts under the strict rules and matches the manifest file by file."""
    info = cp.manifest.overlay
    try:
        tar = cp.overlay_source()
    except CorruptError as exc:
        res.problems.append(exc.message)
        return
    if tar is None:
        if info.files:
            res.problems.append(f"its manifest lists {len(info.files)} overlay file(s) but overlay.tar is absent")
        return
    if overlay.overlay_digest(info.files) != info.digest:
        res.problems.append("the manifest's overlay digest does not match its file list")
    try:  # the archive's hard limits, never the manifest's caps nor this configuration's
        entries = overlay.read_archive(tar)
        with fsutil.temp_dir("ckpt-check-overlay-") as tmp:  # and it extracts, as restore would write it
            overlay.extract(Path(tmp), tar)
    except CkptError as exc:
        res.problems.append(exc.message)
        return
    extra, problems = overlay.manifest_mismatches(entries, info.files)
    if extra:
        res.problems.append(f"overlay.tar holds {len(extra)} file(s) the manifest does not list (e.g. {path_display(extra[0])!r})")
    if problems:
        res.problems.append(f"overlay file {path_display(problems[0][0])!r} {problems[0][1]}")
    res.overlay_files = len(info.files)


def drop_command(repo: Repo, ids: list[str]) -> str:
    """The ``git ckpt drop`` command line that drops the local checkpoints ``ids`` (in order): with
    ``--force`` when one of them is protected (promoted, a handoff point, a side of the last
    restore: :func:`git_ckpt.retention.protections`), since plain ``drop`` refuses those.  A
    damaged one whose manifest cannot be read needs no ``--force`` (nothing relies on it), but
    the protections are read from ledgers, not manifests, so it may still be named there."""
    from .retention import protections

    try:
        kept = protections(repo, latest=False)
    except CkptError:  # a ledger cannot be read: say --force rather than a command that fails
        kept = dict.fromkeys(ids, "unknown")
    force = "--force " if any(i in kept for i in ids) else ""
    return f"git ckpt drop {force}{' '.join(ids)}"

