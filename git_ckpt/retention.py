"""Retention (``git ckpt gc``): drop old checkpoint refs, never the ones someone relies on.

Policy: flags given on the command line replace ``[retention]`` as a whole.

* ``--keep N`` alone prunes every checkpoint of a task but the newest N;
* ``--older-than D`` alone prunes every checkpoint older than D;
* both prune what is beyond the newest N **and** older than D; with neither flag,
  ``[retention] keep`` and ``older_than`` apply that way;
* ``--max-bytes SIZE`` (or ``[retention] max_bytes``) then prunes the oldest remaining
  candidates until the objects only checkpoints reach fit in SIZE.

Never pruned: the latest checkpoint of a task, the promoted one (``refs/ckpt/T/promoted``), one a
``handoff`` ledger event names, one a task card cites as evidence, the ``from``/``target`` of the
most recent restore or undo of each worktree, and both sides of an unfinished restore (a ``$GIT_DIR/ckpt/RESTORE`` journal).  A
checkpoint whose manifest cannot be read is reported and left alone.

Each task's ledger first gets a ``prune`` event listing the ids and commit ids to prune, then
the refs are deleted with compare-and-swap (a ref that changed meanwhile is left alone), so a pruned checkpoint
can be brought back with ``git update-ref refs/ckpt/T/N COMMIT`` until ``git gc`` drops its
objects.  Disk space comes back when git's own gc prunes unreachable objects.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import calendar
import contextlib
import re
import time
from dataclasses import dataclass, field

import msgspec

from . import ledger, store, trust
from .config import Config, parse_duration, parse_size
from .errors import CkptError, CorruptError, UsageError
from .gitcore import Repo, fault, read_state, ref_number
from .model import decode_json


# Checkpoints a ``prune`` event names at most: one costs at most ~300 bytes of its JSON (an id of a
# 100-character task twice, a commit id), so 2,000 stay well within the ledger's 1 MiB bound
# (:data:`git_ckpt.model.MAX_EVENT`); a gc pruning more writes several events.
PRUNE_EVENT_SIZE = 2000


@dataclass
class Policy:
    """The retention rule in force: ``keep`` newest (None: no count rule), ``older_than`` seconds
    (None: no age rule), ``max_bytes`` budget (None: none)."""

    keep: int | None
    older_than: int | None
    max_bytes: int | None

    def to_json(self) -> dict[str, Any]:
        return {"keep": self.keep, "older_than": self.older_than, "max_bytes": self.max_bytes}


def policy(cfg: Config, *, keep: int | None, older_than: str | None, max_bytes: str | None) -> Policy:
    """Combine command-line values with ``[retention]`` (see the module docstring).

    Raises :class:`ConfigError` for an unreadable duration or size.
    """
    if keep is None and older_than is None:
        keep = cfg.retention.keep
        older_than = cfg.retention.older_than
    age = parse_duration(older_than, "--older-than") if older_than is not None else None
    budget_src = max_bytes if max_bytes is not None else cfg.retention.max_bytes
    budget = parse_size(budget_src, "--max-bytes") if budget_src is not None else None
    if keep is not None and keep < 0:
        raise UsageError("--keep must not be negative")
    return Policy(keep, age, budget)


@dataclass
class Candidate:
    """One checkpoint considered: ``id``, ``ref``, ``commit``, ``created`` (epoch seconds or None)."""

    id: str
    task: str
    ref: str
    commit: str
    created: float | None
    protected: str | None = None  # why it is kept regardless


@dataclass
class GcResult:
    """What gc did (or would do with ``dry_run``): ``pruned`` ids with their commits, ``kept``
    protected ids with the reason, ``skipped`` ids that changed or could not be read."""

    policy: Policy
    dry_run: bool
    pruned: list[tuple[str, str]] = field(default_factory=list)
    protected: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    remaining: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "policy": self.policy.to_json(),
            "dry_run": self.dry_run,
            "pruned": [{"id": i, "commit": c} for i, c in self.pruned],
            "protected": [{"id": i, "reason": r} for i, r in self.protected],
            "skipped": [{"id": i, "reason": r} for i, r in self.skipped],
            "remaining": self.remaining,
        }


def _epoch(text: str) -> float | None:
    try:
        return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")))
    except (ValueError, TypeError):
        return None


def _worktree_git_dirs(repo: Repo) -> list[Path]:
    dirs = [repo.common_dir]
    wt = repo.common_dir / "worktrees"
    if wt.is_dir():
        dirs += sorted(p for p in wt.iterdir() if p.is_dir())
    return dirs


def protections(repo: Repo, *, latest: bool = True, cfg: Config | None = None) -> dict[str, str]:
    """Checkpoint ids that must never be pruned → the reason, over every task and worktree
    (the latest of each task only when ``latest``).

    Reads every task's ledger (``handoff`` events; the most recent restore/undo per worktree),
    every worktree's restore journal, and the commits not yet pushed (judged by ``cfg``, or the
    worktree's configuration when None: :func:`_protect_unpushed_trees`).  Raises :class:`CorruptError` when a ledger cannot be
    read, because then nobody can say what is safe to delete.
    """
    out: dict[str, str] = {}
    for task in store.tasks(repo):
        promoted = repo.read_ref(store.promoted_ref(task))
        if promoted:
            for n, oid in store.numbered(repo, task):
                if oid == promoted:
                    out.setdefault(f"{task}/{n}", "promoted")
        nums = store.numbered(repo, task)
        if nums and latest:
            out.setdefault(f"{task}/{nums[-1][0]}", "latest")
        card = ledger.card(repo, task)  # evidence the task card cites: the next session reads it
        for items in (card.facts, card.decisions, card.failed, card.questions, card.assumptions):
            for item in items:
                for e in item.evidence:
                    if e.checkpoint:
                        out.setdefault(e.checkpoint, "evidence on the task card")
        seen_worktrees: set[str] = set()
        for rec in reversed(ledger.records(repo, task)):
            ev = rec.event
            if ev.type == "handoff" and isinstance(ev.data.get("id"), str):
                out.setdefault(ev.data["id"], "handoff point")
            elif ev.type in ("restore", "undo"):
                wt = str(ev.data.get("worktree"))
                if wt in seen_worktrees:
                    continue
                seen_worktrees.add(wt)
                for key in ("from", "target"):
                    if isinstance(ev.data.get(key), str):
                        out.setdefault(ev.data[key], f"the state the last {ev.type} left" if key == "from" else f"target of the last {ev.type}")
    _protect_unpushed_trees(repo, out, cfg)
    for gd in _worktree_git_dirs(repo):
        path = gd / "ckpt" / "RESTORE"
        try:
            data = decode_json(read_state(path))
        except FileNotFoundError:
            continue
        except msgspec.DecodeError:
            raise CorruptError(f"{path} is corrupt; refusing to prune while a restore is unfinished", "run git ckpt restore --continue or git ckpt undo in that worktree") from None
        for key in ("target_id", "from_id"):
            if isinstance(data, dict) and isinstance(data.get(key), str):
                out.setdefault(data[key], "unfinished restore")
    return out


def _protect_unpushed_trees(repo: Repo, out: dict[str, str], cfg: Config | None) -> None:
    """Where the gate is on (``ckpt.gate``: ``hooks install``), add to ``out`` the checkpoint
    that backs each commit the pre-push hook would judge (:func:`git_ckpt.gate.pushed_commits`'
    set: ``git log --branches HEAD --not --remotes`` and ``ckpt.gate.since``):
    :func:`git_ckpt.gate.verify_commit` finds a commit's evidence by its tree, so pruning that
    checkpoint would refuse the push of a commit the gate let through.  Every checkpoint of this
    repository with such a tree whose own results satisfy the required verifiers is kept (all of
    them when that cannot be judged: ``cfg`` None and ``.ckpt.toml`` unreadable, or untrusted).
    The commits: every branch and every worktree's HEAD (a detached one too)."""
    from . import config as config_mod, gate

    if not gate.enabled(repo):
        return
    conf: Config | None = cfg
    if conf is None:
        with contextlib.suppress(CkptError):
            conf = config_mod.load(repo)
    since = []
    if conf is not None and conf.gate.since:
        with contextlib.suppress(CkptError):  # naming no commit: nothing is exempt, everything protected
            since = [gate.since_commit(repo, conf.gate.since)]
    commit_of: dict[str, str] = {}
    heads = _worktree_heads(repo)  # every worktree's HEAD (a detached one is on no branch)
    proc = repo.git("log", "--format=%T %H", "--branches", *heads, "--not", "--remotes", *since, "--", check=False)
    for line in proc.stdout.decode().splitlines() if proc.returncode == 0 else []:
        tree, _, commit = line.partition(" ")
        commit_of.setdefault(tree, commit)
    same_tree: dict[str, list[tuple[str, str]]] = {}
    for task in store.tasks(repo):
        for n, oid in store.numbered(repo, task):
            backed = commit_of.get(repo.commit_tree_id(oid) or "")
            if backed:
                same_tree.setdefault(backed, []).append((f"{task}/{n}", oid))
    if not same_tree:
        return
    judged = False
    if conf is not None:
        with contextlib.suppress(CkptError):
            judged = trust.state(repo, conf).ok
    from .evidence import requirement

    for commit, cands in same_tree.items():
        for cid, oid in cands:
            # every checkpoint of ours whose own results verify that tree (never one name the
            # verdict picks: it may be a fetched ref, which a teammate can move or remove)
            keep = True
            if judged and conf is not None:
                try:
                    keep = requirement(repo, conf, store.load(repo, oid, id=cid)).satisfied
                except (CkptError, KeyError, ValueError):
                    keep = False
            if keep:
                out.setdefault(cid, f"backs unpushed commit {commit[:12]} (verify-commit finds it by its tree)")


def _worktree_heads(repo: Repo) -> list[str]:
    """The commit every worktree's HEAD names (``git worktree list --porcelain``), unborn ones left out."""
    proc = repo.git("worktree", "list", "--porcelain", check=False)  # (-z needs git 2.36)
    out = []
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        oid = line.removeprefix("HEAD ")
        if oid != line and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", oid) and repo.object_type(oid) == "commit":
            out.append(oid)
    return sorted(set(out))


def _size(repo: Repo, commits: list[str], bases: set[str]) -> int:
    """On-disk bytes of the objects reachable from ``commits`` but not from ``bases``."""
    if not commits:
        return 0
    spec = "\n".join(commits + [f"^{b}" for b in sorted(bases)]) + "\n"
    proc = repo.git("rev-list", "--objects", "--disk-usage", "--stdin", input=spec.encode())
    return int(proc.stdout.strip() or 0)


def gc(
    repo: Repo,
    cfg: Config,
    *,
    tasks: list[str],
    pol: Policy,
    dry_run: bool = False,
    now: float | None = None,
) -> GcResult:
    """Prune checkpoints of ``tasks`` according to ``pol`` (see the module docstring).

    Returns a :class:`GcResult`.  Raises :class:`CorruptError` when a ledger or journal that
    decides protection cannot be read.  Mirrors ``git reflog expire`` + ``git update-ref -d``:
    only refs are removed; objects go when ``git gc`` prunes them.
    """
    now = time.time() if now is None else now
    keep_ids = protections(repo, cfg=cfg)
    result = GcResult(pol, dry_run)
    doomed: list[Candidate] = []
    survivors: list[Candidate] = []
    from . import progress

    numbered = [(task, store.numbered(repo, task)) for task in tasks]
    shown = progress.meter("gc: checkpoints scanned", sum(len(nums) for _t, nums in numbered))
    for task, nums in numbered:
        cands: list[Candidate] = []
        for n, oid in nums:
            shown.advance()
            cid = f"{task}/{n}"
            try:
                cp = store.load(repo, oid, id=cid)
                created = _epoch(cp.manifest.created_at)
            except CkptError as exc:
                result.skipped.append((cid, f"unreadable, left alone: {exc.message}"))
                continue
            cands.append(Candidate(cid, task, store.ckpt_ref(task, n), oid, created, keep_ids.get(cid)))
        newest_first = list(reversed(cands))
        for i, c in enumerate(newest_first):
            if c.protected:
                result.protected.append((c.id, c.protected))
                survivors.append(c)
                continue
            beyond_keep = pol.keep is None or i >= pol.keep
            too_old = pol.older_than is None or (c.created is not None and now - c.created > pol.older_than)
            if pol.keep is None and pol.older_than is None:
                beyond_keep = too_old = False
            if beyond_keep and too_old:
                doomed.append(c)
            else:
                survivors.append(c)
    shown.done()
    if pol.max_bytes is not None:
        movable = sorted((c for c in survivors if not c.protected), key=lambda c: (c.created or 0, c.id))
        while movable:
            bases = _bases(repo, survivors)
            if _size(repo, [c.commit for c in survivors], bases) <= pol.max_bytes:
                break
            c = movable.pop(0)
            survivors.remove(c)
            doomed.append(c)
    doomed.sort(key=lambda c: (c.task, ref_number(c.id.rpartition("/")[2]) or 0))
    if not dry_run:
        # The event is written first: a crash after it leaves refs a re-run prunes; a crash
        # before it leaves everything as it was.  Never a ref gone without a record of it.
        by_task: dict[str, list[Candidate]] = {}
        for c in doomed:
            by_task.setdefault(c.task, []).append(c)
        for task, items in by_task.items():
            for at in range(0, len(items), PRUNE_EVENT_SIZE):  # each event within the ledger's bound
                batch = items[at:at + PRUNE_EVENT_SIZE]
                ledger.append(repo, task, "prune", {
                    "pruned": [c.id for c in batch],
                    "commits": {c.id: c.commit for c in batch},
                    "policy": pol.to_json(),
                })
        fault("gc.after-event")
    for c in doomed:
        if not dry_run:
            # deleted only while it still names the commit judged (never rebuilt on a new value)
            if not repo.swap(c.ref, _deleter(c.commit),
                             reason=f"ckpt: gc {c.id}"):
                result.skipped.append((c.id, "changed while gc ran, left alone"))
                continue
            fault("gc.after-delete")
        result.pruned.append((c.id, c.commit))
    result.remaining = len(survivors)
    return result


def _bases(repo: Repo, cands: list[Candidate]) -> set[str]:
    out = set()
    for c in cands:
        try:
            parents = repo.read_commit(c.commit).parents
        except CkptError:
            continue
        if len(parents) == 3:
            out.add(str(parents[0]))
    return out


def _deleter(commit: str) -> Callable[[str | None], tuple[str | None, bool]]:
    """A :meth:`Repo.swap` build that deletes the ref while it names ``commit`` (True) and
    leaves it alone otherwise (False)."""
    def build(old: str | None) -> tuple[str | None, bool]:
        return (None, True) if old == commit else (old, False)
    return build
