"""``git ckpt status`` as data."""

from __future__ import annotations

from typing import Any

from . import config, store
from .restore import checkpoint_with_state, reset_head_command
from .errors import CkptError
from .config import Config
from .gitcore import Repo
from .snapshot import Snapshot, capture
from .standing import differs, files_match, head_commits
from .store import Checkpoint


def worktree_checkpoint(repo: Repo, cfg: Config | None, task: str, last: Checkpoint | None = None,
                        snap: Snapshot | None = None) -> Checkpoint | None:
    """The checkpoint the worktree equals right now: the latest of ``task`` (``last`` when the
    caller has read it), or the one last restored in this worktree; None when neither matches,
    or the worktree cannot be captured (``cfg`` None: the configuration is unreadable).
    ``snap``: the capture of the worktree when the caller has made it (one capture per command)."""
    if cfg is None:
        return None
    try:
        return checkpoint_with_state(repo, task, (snap or capture(repo, cfg, read_only=True)).state(), last=last)
    except CkptError:
        return None


def compare(repo: Repo, cfg: Config | None, task: str, last: Checkpoint | None = None,
            snap: Snapshot | None = None) -> dict[str, Any]:
    """Where the worktree stands against a checkpoint, as two separate facts (what ``status``
    prints): ``checkpoint`` (``@``, :func:`store.at`, or the latest when that one matches and
    ``@`` does not), ``at`` (the id of ``@``), ``files_match`` (the worktree files and the overlay
    are the checkpoint's, and the index stages what it staged: the same index, or nothing staged
    on either side; what ``git ckpt diff`` and ``git status`` show), ``head_moved`` (HEAD is not
    the checkpoint's base: a commit, pull or checkout since; ``base`` and ``head`` give both),
    ``head_commits`` (HEAD moved by committing the checkpoint's files on its base, as after a
    gated commit: nothing staged against HEAD, whose first parent is the base)
    and ``exact`` (everything a restore reproduces is equal, HEAD included), with ``differs``
    and ``reset_head`` (:func:`facts`, which ``handoff`` shares).  Empty when the
    task has no checkpoint or the worktree cannot be captured.  ``snap``: the capture of the
    worktree when the caller has made it."""
    if cfg is None:
        return {}
    try:
        at = store.at(repo, task)
        snap = snap or capture(repo, cfg, read_only=True)
    except CkptError:
        return {}
    if at is None:
        return {}
    cands = [at] + ([last] if last is not None and last.commit != at.commit else [])
    cp = next((c for c in cands if files_match(repo, snap, c)), at)
    return {**facts(repo, snap, cp), "at": at.id}


def facts(repo: Repo, snap: Snapshot, cp: Checkpoint) -> dict[str, Any]:
    """Where the captured worktree ``snap`` stands against ``cp`` (what ``status`` and
    ``handoff`` both say): ``checkpoint`` (its id), ``files_match`` (:func:`git_ckpt.standing.files_match`),
    ``head_moved``, ``head_commits`` (HEAD moved by committing ``cp`` on its base:
    :func:`git_ckpt.standing.head_commits`; the files may have changed since), ``base`` and ``head``, ``exact``,
    ``differs`` (which of ``files``, ``index``, ``overlay`` and ``HEAD`` differ, in that
    order: :func:`git_ckpt.standing.differs`) and ``reset_head`` (the
    command that restores ``cp`` and moves HEAD back to its base,
    :func:`git_ckpt.restore.reset_head_command`; None when HEAD did not move or ``cp`` was
    saved on an unborn branch, where HEAD cannot go back)."""
    what = differs(repo, snap, cp)
    moved = snap.base != cp.manifest.base
    commits = moved and head_commits(repo, snap.base, cp)
    return {"checkpoint": cp.id, "files_match": not (set(what) - {"HEAD"}), "head_moved": moved,
            "head_commits": commits,
            "base": cp.manifest.base, "head": snap.base, "exact": snap.state() == cp.manifest.state,
            "differs": what,
            "reset_head": reset_head_command(cp, snap.branch) if moved and cp.manifest.base else None}


def status(repo: Repo) -> dict[str, Any]:
    """Task, latest, promoted, ``matches_latest``, ``matches`` (the checkpoint the worktree
    equals exactly, HEAD included: the latest or ``@``, else None), ``worktree``
    (:func:`compare`: files and index against ``@``, and whether HEAD moved since), ``restore_interrupted``
    (a restore's journal that no running restore holds), ``restore_running`` (one that is),
    gate on/off (``gate``: ``ckpt.gate``), ``gate_active`` (on, and git runs our hooks in this
    worktree: :func:`git_ckpt.hooks.gate_active`) and ``gate_state``."""
    task = store.current_task(repo)
    damaged: dict[str, str] = {}  # "latest"/"promoted" -> why that checkpoint cannot be read
    latest_id = None
    try:
        last = store.latest(repo, task)
    except CkptError as exc:  # named all the same: list and check --all name it too
        last, damaged["latest"] = None, exc.message
        top = store.highest(repo, task)
        latest_id = f"{task}/{top[0]}" if top else None
    promoted_commit = repo.read_ref(store.promoted_ref(task))
    promoted = None
    promoted_dropped = False  # its ref names a checkpoint whose own ref is gone (dropped by an older git ckpt, or moved by hand)
    if promoted_commit:
        try:
            pcp = store.load(repo, promoted_commit, id=f"{task}/promoted", ref=store.promoted_ref(task))
            promoted, promoted_dropped = pcp.manifest.id, not store.is_local(repo, pcp)
            replaced = store.replaced_by(repo, pcp) if promoted_dropped else None
            if replaced is not None:  # not dropped: the ref of its number names something else
                promoted_dropped, damaged["promoted"] = False, replaced
        except CkptError as exc:
            promoted, damaged["promoted"] = f"{task}/promoted", exc.message
    unknown = None  # why the worktree cannot be compared (the error's own line)
    try:
        cfg = config.load(repo)
    except CkptError as exc:
        cfg, unknown = None, exc.message
    snap = None
    if cfg is not None:  # one capture serves both questions
        try:
            snap = capture(repo, cfg, read_only=True)
        except CkptError as exc:
            cfg, unknown = None, exc.message  # cannot be captured: neither answer is known
    matched = worktree_checkpoint(repo, cfg, task, last, snap)
    matches = matched.id if matched is not None else None
    matches_latest = matched is not None and last is not None and matched.commit == last.commit
    worktree = compare(repo, cfg, task, last, snap)
    if matches is None and worktree.get("exact"):  # @ is a fetched checkpoint, which no save rule counts
        matches = worktree["checkpoint"]
    from .gate import enabled as gate_enabled

    journal = (repo.git_dir / "ckpt" / "RESTORE").exists()
    running = journal and repo.worktree_busy()

    gate = gate_enabled(repo)
    gate_state = ""
    active = False
    if gate:
        from .hooks import gate_active

        active, hooks_dir = gate_active(repo)
        if not active:
            gate_state = (f"NOT active in this worktree: git runs its hooks from {hooks_dir}, where the git ckpt"
                          " hooks are not installed or not executable; run git ckpt hooks install")
        else:
            gate_state = ("the promoted checkpoint is damaged: commits will be refused" if "promoted" in damaged
                          else "a promoted checkpoint exists" if promoted and not promoted_dropped
                          else "no promoted checkpoint: commits will be refused")
            if cfg is not None:
                from . import trust

                st = trust.state(repo, cfg)
                if not st.ok:  # the gate refuses every commit until then (exit 9)
                    gate_state = f"commits will be refused: {trust.untrusted_reason(st)} (git ckpt trust)"
    return {
        "task": task,
        "unknown": unknown,
        "latest": last.id if last else latest_id,
        "promoted": promoted,
        "promoted_dropped": promoted_dropped,
        "damaged": damaged,
        "matches_latest": matches_latest,
        "matches": matches,
        "worktree": worktree,
        # a journal under a held lock is a restore still running, not an interrupted one
        "restore_interrupted": journal and not running,
        "restore_running": journal and running,
        "gate": gate,
        "gate_active": active,
        "gate_state": gate_state,
    }
