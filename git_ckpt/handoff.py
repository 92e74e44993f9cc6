"""The handoff receipt (``git ckpt handoff``): everything a fresh session needs to resume a task.

Nothing in the receipt is taken on trust from whoever wrote the card: *Touched* is computed from
the checkpoints themselves (``git diff --numstat`` between the base of the task's first
checkpoint and the current one), verifier results are read from the notes on the checkpoint
commits, and ``--check`` re-examines the worktree (and re-runs required verifiers where that is
possible and trusted) to report any drift from what was recorded.

The *current* checkpoint of a task is the one the worktree was last known to be at: the newest
save (other than a pre-restore save) or whole restore/undo target in the ledger; the highest
numbered checkpoint when the ledger names none.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable


from . import ledger, notes, store
from . import trust
from . import verify as vmod
from .card import evidence_suffix, evidence_texts
from .config import Config
from .evidence import about, evidence, mark_local, overlay_digest
from .errors import CkptError
from .gitcore import Repo
from .model import Card, CardItem, Event, escape, path_to_str, raw_path_problem, to_builtins
from .snapshot import capture
from .store import Checkpoint
from .words import listed


# ------------------------------------------------------------------------------ pieces


def current_checkpoint(repo: Repo, task: str) -> Checkpoint | None:
    """The checkpoint the worktree of ``task`` was last known to be at (see module docstring),
    or None when the task has no checkpoint."""

    def match(ev: Event) -> bool:
        if ev.type == "save":
            return bool(ev.data.get("kind") != "pre-restore")
        return ev.type in ("restore", "undo") and store.left_whole(ev.data)

    rec = ledger.find_last(repo, task, match)
    remote = store.split_task(task)[0]
    if rec is not None:
        d = rec.event.data
        cid, commit = (d.get("id"), d.get("commit")) if rec.event.type == "save" else (d.get("target"), d.get("target_commit"))
        if isinstance(commit, str) and isinstance(cid, str):
            if remote is not None:  # a fetched ledger names its own ids (T/N), as REMOTE:T/N here
                shown = store.shown_id(task, cid)
                cid = shown if isinstance(shown, str) and shown != cid else ""
            # trusted only while its ref still holds that commit (a fetched ref can be replaced)
            if store.held_ref(repo, cid, commit) is None:
                return store.latest(repo, task)
            try:
                return store.load(repo, commit, id=cid)
            except CkptError:
                pass
    return store.latest(repo, task)


#: how many of a ledger's first save events (distinct commits still present) ``first_checkpoint``
#: loads before it falls back to the refs: each load may read a manifest of up to 64 MiB
FIRST_SAVES_TRIED = 4


def first_checkpoint(repo: Repo, task: str) -> Checkpoint | None:
    """Where ``task`` began: its first checkpoint, pruned or dropped or not (``gc`` and ``drop``
    remove refs, not the start of the task): the checkpoint of the oldest ``save`` event of its
    ledger whose commit is still in the object store and is a checkpoint of this task (among
    the first :data:`FIRST_SAVES_TRIED` distinct commits such events name); else
    (its objects pruned by ``git gc``, or no ledger) the lowest-numbered checkpoint still
    present; None when the task has none.  What "since the task began" means to ``stats``,
    ``handoff`` (*Touched*) and ``diff --scope``."""
    nums = store.numbered(repo, task)
    if not nums:
        return None
    bare = store.split_task(task)[1]
    tried: set[str] = set()
    with contextlib.suppress(CkptError):
        for rec in ledger.iter_records(repo, task):
            d = rec.event.data
            if rec.event.type != "save" or not isinstance(d.get("commit"), str) or not isinstance(d.get("id"), str):
                continue
            if d["commit"] in tried or repo.object_type(d["commit"]) != "commit":
                continue
            if len(tried) >= FIRST_SAVES_TRIED:  # a fetched ledger is a teammate's: bounded work
                break
            tried.add(d["commit"])
            try:
                cp = store.load(repo, d["commit"], id=d["id"])
            except CkptError:
                continue
            if cp.manifest.task == bare:
                return cp
    n, oid = nums[0]
    return store.load(repo, oid, id=f"{task}/{n}", ref=store.ckpt_ref(task, n))


def _tree_of_commit(repo: Repo, commit: str | None) -> str:
    if not commit:
        return repo.empty_tree
    return repo.tree_of(commit)


def numstat(repo: Repo, old_tree: str, new_tree: str) -> list[dict[str, Any]]:
    """Files that differ between two trees with line counts, from ``git diff --numstat -z``
    (no renames, no textconv): ``{"path", "status" (A/M/D/T), "added", "deleted", "binary"}``.
    Binary files have ``added``/``deleted`` None."""
    status: dict[bytes, str] = {}
    for c in repo.diff_trees(old_tree, new_tree):
        a, b = c
        if a is None:
            status[c.path] = "A"
        elif b is None:
            status[c.path] = "D"
        elif (a.mode & 0o170000) != (b.mode & 0o170000):
            status[a.path] = "T"
        else:
            status[a.path] = "M"
    # blobs over 16 MiB count as binary unread (git's bigFileThreshold): bounded memory for a huge blob
    out = repo.git("-c", "core.bigFileThreshold=16m", "diff", "--numstat", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", old_tree, new_tree).stdout
    counts: dict[bytes, tuple[int, int] | tuple[None, None]] = {}
    for rec in out.split(b"\0"):
        if not rec:
            continue
        added, deleted, path = rec.split(b"\t", 2)
        prev = counts.get(path, (0, 0))
        if added == b"-" or prev[0] is None:
            counts[path] = (None, None)
        else:
            counts[path] = (prev[0] + int(added), prev[1] + int(deleted))
    rows = []
    for path in sorted(status):
        n_added, n_deleted = counts.get(path, (0, 0))
        rows.append({"path": path_to_str(path), "status": status[path], "added": n_added, "deleted": n_deleted,
                     "binary": n_added is None})
    return rows


def last_results(repo: Repo, task: str, current: Checkpoint | None = None) -> list[dict[str, Any]]:
    """The result of each verifier over the checkpoints of ``task`` that the receipt shows, by
    the one rule of :func:`git_ckpt.notes.pick_latest`: a result about the ``current``
    checkpoint's content (tree and overlay; a result reused there included) before any other,
    this repository's own before a fetched one, then the newest recorded.  Each row names the
    checkpoint it is recorded on; ``on_current`` says whether it is about the current content,
    ``local`` whether this repository's own ``verify`` recorded it (False: fetched from a
    teammate, never evidence), ``reused``/``reused_from`` whether (and from which checkpoint,
    as this repository names it) it was reused rather than run."""
    if repo.read_ref(store.NOTES_REF) is None:
        return []
    events: dict[str, dict[str, Any]] | None = None
    nums = store.numbered(repo, task)
    # evidence is what this repository's own ledgers recorded, never a fetched ledger's claim
    own_tasks = store.tasks(repo) if store.is_fetched_task(task) else [task]
    # a long task: one walk of the notes tree, then only the checkpoints that have a note
    blobs = notes.note_blobs(repo) if len(nums) > 64 else None
    flat: list[dict[str, Any]] = []
    where: list[tuple[int, str]] = []
    local: list[bool] = []
    for n, oid in nums:
        try:
            if blobs is None:
                lines = notes.read_lines(repo, oid)
            else:
                blob = blobs.get(oid)
                if blob is None:
                    continue
                lines = notes.parse_lines(repo.read_blob(blob), oid)
        except CkptError:
            continue
        if lines and events is None:
            events = ledger.result_events(repo, own_tasks, None)
        local += mark_local(repo, lines, own_tasks, set(events or ()), tree=repo.commit_tree_id(oid) or "")
        flat += lines
        where += [(n, oid)] * len(lines)
    on_current = about(flat, current.tree, overlay_digest(current)) if current else [False] * len(flat)
    out = []
    for name, i in sorted(notes.pick_latest(flat, current=on_current, local=local).items()):
        r, (n, oid) = flat[i], where[i]
        out.append({"verifier": name, "checkpoint": f"{task}/{n}", "commit": oid, "status": str(r.get("status", "?")),
                    "exit_code": r.get("exit_code"), "duration": r.get("duration"), "started_at": r.get("started_at"),
                    "required": r.get("required"), "log": r.get("log"), "tree": r.get("tree"), "local": local[i],
                    "on_current": on_current[i], "reused": r.get("reused") is True,
                    "reused_from": _reused_from(repo, task, r, events or {}) if r.get("reused") is True else None})
    return out


def _reused_from(repo: Repo, task: str, line: dict[str, Any], events: dict[str, dict[str, Any]]) -> str | None:
    """Which checkpoint a reused result ``line`` of ``task`` was reused from, as this repository
    names it: from the ``verify`` event of this repository's own ledger that recorded it, else
    (a fetched task's line) from the fetched ledger, its bare ``T/N`` written ``REMOTE:T/N``
    (:func:`git_ckpt.store.shown_id`); None when no ledger says."""
    rid = notes.result_id(line)
    src = events.get(rid, {}).get("reused_from")
    if isinstance(src, str) and src:
        return src
    if store.is_fetched_task(task):
        src = ledger.result_events(repo, [task], {rid}).get(rid, {}).get("reused_from")
        if isinstance(src, str) and src:
            return str(store.shown_id(task, src))
    return None


def results_on(repo: Repo, cp: Checkpoint) -> dict[str, tuple[dict[str, Any], bool]]:
    """The result of each verifier about ``cp``'s content recorded on ``cp`` itself, picked by
    :func:`git_ckpt.notes.pick_latest` (this repository's own before a fetched one, then the
    newest recorded), with whether it is evidence (True: this repository's own ``verify``
    recorded it, :func:`git_ckpt.evidence.evidence`; False: only a fetched line, never
    evidence).  {} when the note cannot be read."""
    try:
        lines = notes.read_lines(repo, cp.commit)
        own = {id(ln) for ln in evidence(repo, cp, lines)}
    except CkptError:
        return {}
    lines = [ln for ln, ok in zip(lines, about(lines, cp.tree, overlay_digest(cp)), strict=True) if ok]
    local = [id(ln) in own for ln in lines]
    return {name: (lines[i], local[i]) for name, i in notes.pick_latest(lines, local=local).items()}


def _items(items: list[CardItem], task: str) -> list[dict[str, Any]]:
    """The card entries of ``task`` as receipt data; evidence text names a fetched task's
    checkpoints as this repository does (:func:`git_ckpt.store.shown_ids`)."""
    return [{"n": i, "text": it.text, "status": it.status, "reason": it.reason, "at": it.at,
             "evidence": [to_builtins(e) for e in it.evidence],
             "evidence_text": evidence_texts(task, it)}
            for i, it in enumerate(items, start=1)]


# ------------------------------------------------------------------------------ receipt


def fetched_as(repo: Repo, task: str) -> list[str]:
    """The fetched tasks (``REMOTE:T``) named ``task``, sorted by remote."""
    return [f"{r}:{task}" for r in store.fetched_tasks(repo).get(task, [])]


def _goal_option(repo: Repo, card: Card, elsewhere: list[str]) -> str:
    """`` --goal 'GOAL'``: the teammate's goal (``card``'s, or the fetched ``elsewhere[0]``'s)
    as one shell word, its control characters written visibly (:func:`git_ckpt.model.escape`:
    a fetched card is anyone's text, and this line is meant to be run); empty without one."""
    import shlex

    goal: str | None = card.goal
    if elsewhere:
        try:
            goal = ledger.card(repo, elsewhere[0]).goal
        except CkptError:
            goal = None
    return f" --goal {shlex.quote(escape(goal))}" if goal else ""


def own_name(repo: Repo, task: str) -> str:
    """A task name of your own to continue a teammate's ``task`` under: ``T-2``, ``T-3``, …, the
    first that is neither a task of this repository nor a fetched one."""
    taken = set(store.tasks(repo)) | set(store.fetched_tasks(repo)) | {store.current_task(repo)}
    n = 2
    while f"{task[:90]}-{n}" in taken:
        n += 1
    return f"{task[:90]}-{n}"


def receipt(repo: Repo, task: str, cfg: Config | None = None, *, workspace: bool = True) -> dict[str, Any]:
    """The handoff receipt of ``task`` as JSON-ready data.

    Keys: ``task``, ``goal``, ``constraints``, ``acceptance``, ``done``, ``current`` (checkpoint
    id or None), ``commit``, ``base``, ``latest``, ``promoted``, ``checkpoints`` (count),
    ``decided``, ``touched`` (``numstat`` rows), ``next``, ``hypothesis``, ``results``
    (:func:`last_results`), ``failed``, ``questions``, ``judged`` (the assumptions confirmed or
    refuted, with their numbers), ``assumptions`` (unverified only, with
    their numbers), ``facts``, ``reads``, ``workspace`` (``clean``, ``changed``, ``unknown`` or
    ``other-task``; only when ``workspace`` and ``cfg`` are given), ``worktree`` (what it rests
    on: :func:`git_ckpt.status.facts` against the current checkpoint, as ``status`` says it;
    None when not compared) and ``resume`` (commands).
    """
    store.check_task_spec(task)
    card = ledger.card(repo, task)
    cur = current_checkpoint(repo, task)
    first = first_checkpoint(repo, task)
    nums = store.numbered(repo, task)
    promoted = repo.read_ref(store.promoted_ref(task))
    promoted_id = None
    if promoted:
        promoted_id = next((f"{task}/{n}" for n, oid in nums if oid == promoted), None)
    touched: list[dict[str, Any]] = []
    base = first.base if first else None
    if cur is not None:
        touched = numstat(repo, _tree_of_commit(repo, base), cur.tree)
    ws, wt = None, None
    if workspace and cfg is not None and cur is not None:
        ws, wt = workspace_state(repo, cfg, task, cur)
    resume = []
    elsewhere = [] if store.is_fetched_task(task) or nums or card.goal else fetched_as(repo, task)
    if store.is_fetched_task(task) or elsewhere:
        # a teammate's task: continue it under a name of your own (pushing under theirs is refused),
        # with their goal (walkthrough 25: the new task began with none, nothing pointing back)
        resume.append(f"git ckpt task start {own_name(repo, store.split_task(task)[1])}" + _goal_option(repo, card, elsewhere))
        if cur is not None and not elsewhere:
            resume.append(f"git ckpt restore {cur.id}")
        elif elsewhere and (theirs := current_checkpoint(repo, elsewhere[0])) is not None:
            resume.append(f"git ckpt restore {theirs.id}")
    else:
        if store.current_task(repo) != task:
            resume.append(f"git ckpt task start {task}")
        if cur is not None:
            resume.append(f"git ckpt restore {cur.id}")
    if any(c.startswith("git ckpt restore ") for c in resume):
        resume.append("git ckpt verify")  # a task without checkpoints has nothing to restore or verify
    return {
        "schema": "ckpt-handoff/1",
        "task": task,
        "goal": card.goal,
        "constraints": list(card.constraints),
        "acceptance": list(card.acceptance),
        "done": card.done,
        "current": cur.id if cur else None,
        "commit": cur.commit if cur else None,
        "base": base,
        "latest": f"{task}/{nums[-1][0]}" if nums else None,
        "promoted": promoted_id,
        "checkpoints": len(nums),
        "decided": _items(card.decisions, task),
        "touched": touched,
        "next": card.next,
        "hypothesis": card.hypothesis,
        "results": last_results(repo, task, cur),
        "failed": [{"option": it["text"], **{k: v for k, v in it.items() if k != "text"}} for it in _items(card.failed, task)],
        "questions": _items(card.questions, task),
        "assumptions": [it for it in _items(card.assumptions, task) if it["status"] in (None, "unverified")],
        "judged": [it for it in _items(card.assumptions, task) if it["status"] not in (None, "unverified")],
        "facts": _items(card.facts, task),
        "reads": list(card.reads),
        "workspace": ws,
        "worktree": wt,
        "resume": resume,
    }


def workspace_state(repo: Repo, cfg: Config, task: str, cur: Checkpoint) -> tuple[str, dict[str, Any] | None]:
    """Where the worktree stands against ``cur`` and the facts it rests on
    (:func:`git_ckpt.status.facts`, what ``status`` says; None when not compared): ``clean``
    when its files, index and overlay are ``cur``'s (HEAD may have moved since: the facts say),
    ``changed`` when not, ``other-task`` when this worktree is on another task, ``unknown`` when
    it cannot be captured (an unreadable file in the way, say)."""
    if store.current_task(repo) != task:
        return "other-task", None
    from .status import facts

    try:
        f = facts(repo, capture(repo, cfg, read_only=True), cur)
    except CkptError:
        return "unknown", None
    return ("clean" if f["files_match"] else "changed"), f


def worktree_text(f: dict[str, Any]) -> str:
    """What :func:`git_ckpt.status.facts` ``f`` say, in one line (``handoff --check``'s worktree
    row, and the receipt's Workspace line): ``matches T/N`` (exactly), ``matches T/N; HEAD commits
    it on its base``, ``matches T/N; HEAD moved since (git ckpt restore T/N --reset-head brings
    it back)``, or ``files and HEAD differ`` (naming each of files, index, overlay, HEAD that
    differs; ``files differ; HEAD commits T/N on its base`` when HEAD commits it)."""
    cid = f["checkpoint"]
    if not f["files_match"]:
        what = [w for w in f["differs"] if w != "HEAD" or not f["head_commits"]]  # said after, as what HEAD is
        text = f"{listed(what)} " + ("differ" if len(what) > 1 or what == ["files"] else "differs")
        return text + (f"; HEAD commits {cid} on its base" if f["head_commits"] else "")
    if f["exact"] or not f["head_moved"]:
        return f"matches {cid}"
    if f["head_commits"]:
        return f"matches {cid}; HEAD commits it on its base"
    back = f"{f['reset_head']} brings it back" if f["reset_head"] else f"{cid} was saved on an unborn branch"
    return f"matches {cid}; HEAD moved since ({back})"


def _counts(row: dict[str, Any]) -> str:
    if row["binary"]:
        return "binary"
    return f"+{row['added']} -{row['deleted']}"


def _escaped(value: Any, escape: Callable[[str], str]) -> Any:
    """``value`` (JSON-shaped) with every string escaped."""
    if isinstance(value, str):
        return escape(value)
    if isinstance(value, list):
        return [_escaped(v, escape) for v in value]
    if isinstance(value, dict):
        return {k: _escaped(v, escape) for k, v in value.items()}
    return value


def markdown(r: dict[str, Any]) -> str:
    """The receipt rendered as Markdown (what ``handoff`` prints and what an agent reads).
    Stored strings are shown with control characters escaped (newlines included), so a card
    or result cannot forge a line of the receipt."""
    from .model import escape

    r = _escaped(r, escape)
    from .words import result_word

    out: list[str] = [f"# Handoff: {r['task']}" + (" (done)" if r["done"] else ""), ""]
    out.append(f"Goal: {r['goal'] or '(none recorded)'}")
    for c in r["constraints"]:
        out.append(f"Constraint: {c}")
    for a in r["acceptance"]:
        out.append(f"Acceptance: {a}")
    cur = r["current"]
    mine = cur is None or str(cur).startswith(f"{r['task']}/")  # not: a fetched @ (REMOTE:T/N) restored here
    number = str(cur).rpartition("/")[2] if cur else ""
    kept = r["checkpoints"]
    # "T/14 of 5" after drops and gc read as a mistake: "of K" only while the number is within the count
    of = f" of {kept}" if number.isascii() and number.isdigit() and int(number) <= kept else f" ({kept} checkpoint(s) kept)"
    count = (of if mine else f" (task {r['task']} has {kept} checkpoint(s))") if kept else ""
    out.append(f"Checkpoint: {cur or '(none yet)'}" + count
               + (f", promoted {r['promoted']}" if r["promoted"] else ""))
    if r["workspace"]:
        out.append(f"Workspace: {_ws_text(r['workspace'], cur, r.get('worktree'))}")

    def section(title: str, lines: list[str]) -> None:
        out.extend(["", f"## {title}"])
        out.extend(lines or ["(none)"])

    section("Decided", [f"- {d['text']}" + evidence_suffix(d["evidence_text"]) for d in r["decided"]])
    base = (r["base"] or "")[:12] or "empty tree"
    width = max((len(t["path"]) for t in r["touched"]), default=0)
    section(f"Touched (from {base} to {cur})" if cur else "Touched",
            [f"- {t['status']} {t['path']:<{width}}  {_counts(t)}" for t in r["touched"]])
    section("Next", ([r["next"]] if r["next"] else []) + ([f"Hypothesis: {r['hypothesis']}"] if r["hypothesis"] else []))
    section("Last verifier results", [_result_text(v, result_word) for v in r["results"]])
    section("Failed paths", [f"- {f['option']}: {f['reason'] or ''}" + evidence_suffix(f["evidence_text"]) for f in r["failed"]])
    section("Open questions", [f"- {q['text']}" + evidence_suffix(q["evidence_text"]) for q in r["questions"]])
    section("Unverified assumptions", [f"- {a['n']}. {a['text']}" + evidence_suffix(a["evidence_text"]) for a in r["assumptions"]])
    if r["judged"]:  # what the next session must not assume again (refuted) or may rely on (confirmed)
        section("Confirmed or refuted assumptions",
                [f"- {a['n']}. {a['text']}: {escape(str(a['status']))}" + evidence_suffix(a["evidence_text"]) for a in r["judged"]])
    if r["facts"]:
        section("Facts", [f"- {f['text']}" + evidence_suffix(f["evidence_text"]) for f in r["facts"]])
    if r["reads"]:
        section("Read", [f"- {p}" for p in r["reads"]])
    section("Resume", [f"    {c}" for c in r["resume"]])
    return "\n".join(out) + "\n"


def _result_text(v: dict[str, Any], result_word: Callable[[Any, Any], str]) -> str:
    """One row of "Last verifier results" (strings already escaped): ``- tests: passed on t/3
    (reused from t/1, exit 0, 0.1 s)``, marked when not about the current content or fetched."""
    detail = []
    if v.get("reused"):
        detail.append(f"reused from {v['reused_from']}" if v.get("reused_from") else "reused")
    if v["exit_code"] is not None:
        detail.append(f"exit {v['exit_code']}")
    if isinstance(v["duration"], (int, float)):
        detail.append(f"{float(v['duration']):.1f} s")
    return (f"- {v['verifier']}: {result_word(v['status'], v['exit_code'])} on {v['checkpoint']}"
            + (f" ({', '.join(detail)})" if detail else "")
            + ("" if v["on_current"] else " [not the current content]")
            + ("" if v.get("local", True) else f" [{FETCHED}]"))


def _ws_text(state: str, cur: str | None, f: dict[str, Any] | None) -> str:
    """The Workspace line: ``clean (matches T/N)``; when HEAD moved since, what
    :func:`worktree_text` says; ``changed since T/N (files and index differ)``."""
    if f is not None and state == "clean" and not f["exact"] and f["head_moved"]:
        return worktree_text(f)
    if f is not None and state == "changed":
        return f"changed since {cur} ({worktree_text(f)})"
    return {"clean": f"clean (matches {cur})", "changed": f"changed since {cur}",
            "other-task": "this worktree is on another task", "unknown": "unknown (the worktree could not be read)"}.get(state, state)


# ------------------------------------------------------------------------------ check


#: How a result recorded elsewhere (fetched from a teammate) is marked: the words ``show`` uses.
FETCHED = "fetched: not evidence here"


def _rerun(repo: Repo, cfg: Config, cp: Checkpoint, names: list[str]) -> tuple[dict[str, str] | None, str]:
    """Re-run the required verifiers on ``cp`` (:func:`git_ckpt.verify.verify`); returns
    ({name: status} or None, a note saying what happened)."""
    try:
        # rerun: never reuse a recorded result; promote: a check does not move the promoted ref.
        report = vmod.verify(repo, cfg, cp, only=names, rerun=True, promote=False)
    except CkptError as exc:  # untrusted .ckpt.toml, worktree changed meanwhile
        return None, f"not re-run: {exc.message}"
    return {o.name: o.status for o in report.outcomes}, "re-run"


def _worktree_rel(text: str) -> bytes | None:
    """The worktree-relative path bytes ``text`` (as a receipt shows it) names, or None when it
    cannot name a file of the worktree (:func:`git_ckpt.model.raw_path_problem`: git's
    ``verify_path`` rules)."""
    raw = text.encode("utf-8", "surrogateescape")
    return None if raw_path_problem(raw) else raw


def evidence_files(card: Card) -> list[str]:
    """The paths the ``file:`` evidence of every entry of ``card`` names, in card order, each once."""
    out: list[str] = []
    for items in (card.facts, card.decisions, card.failed, card.questions, card.assumptions):
        for it in items:
            for ev in it.evidence:
                if ev.file is not None and ev.file not in out:
                    out.append(ev.file)
    return out


def check(repo: Repo, cfg: Config, task: str, *, rerun: bool = True) -> dict[str, Any]:
    """What a careful resumer checks: the files the receipt names and the card cites as
    evidence exist (or are gone, for deletions), the worktree's files, index and overlay are the
    current checkpoint's (as ``status`` judges them, :func:`git_ckpt.status.facts`: HEAD moved
    since is said, not drift, as restore leaves HEAD where it is), and the required verifiers
    pass: re-run (through a trusted verifier runner, and only when the worktree matches; the
    result is recorded as verify's is) or, when not re-run, by a passing result of this
    repository's own.  A required verifier that does not pass is drift, whatever was recorded
    before.  An untrusted ``.ckpt.toml`` is drift too (its requirement may have been
    loosened).  Returns ``{"ok", "task", "current", "checks": [...], "drift": [...]}``; ``ok`` is
    False when anything drifted."""
    r = receipt(repo, task, cfg, workspace=False)
    checks: list[dict[str, Any]] = []
    drift: list[str] = []
    root = os.fsencode(repo.workdir)
    missing, unexpected, foreign = [], [], []
    # A card's reads and evidence files and a task's touched paths may come from a teammate's ledger: only a path
    # that can name a file of this worktree (relative, normal, not into
    # .git: _worktree_rel) is looked up; anything else is drift, and no path outside the worktree is probed.
    for t in r["touched"]:
        rel = _worktree_rel(t["path"])
        if rel is None:
            foreign.append(t["path"])
            continue
        exists = os.path.lexists(os.path.join(root, rel))
        if t["status"] == "D" and exists:
            unexpected.append(t["path"])
        elif t["status"] != "D" and not exists:
            missing.append(t["path"])
    for p in r["reads"]:
        rel = _worktree_rel(p) if isinstance(p, str) else None
        if rel is None:
            foreign.append(str(p))
        elif not os.path.lexists(os.path.join(root, rel)):
            missing.append(p)
    cited: list[str] = []  # files the card cites as evidence (file:PATH), each once
    for p in evidence_files(ledger.card(repo, task)):
        rel = _worktree_rel(p)
        if rel is None:
            foreign += [] if p in foreign else [p]
        elif not os.path.lexists(os.path.join(root, rel)) and p not in missing and p not in cited:
            cited.append(p)
    files_ok = not missing and not unexpected and not foreign and not cited
    detail = "all present" if files_ok else "; ".join(filter(None, [
        ("missing: " + ", ".join(map(escape, missing))) if missing else "",
        ("deleted but present: " + ", ".join(map(escape, unexpected))) if unexpected else "",
        ("cited as evidence but missing: " + ", ".join(map(escape, cited))) if cited else "",
        ("not a path of this worktree (not looked up): " + ", ".join(escape(f) for f in foreign)) if foreign else ""]))
    checks.append({"check": "files", "ok": files_ok, "detail": detail})
    if not files_ok:
        drift.append(f"files named by the receipt: {detail}")
    cur_id = r["current"]
    ws_ok = False
    if cur_id is None:
        checks.append({"check": "worktree", "ok": False, "detail": "the task has no checkpoint"})
        drift.append("the task has no checkpoint to compare with")
        cur = None
    else:
        cur = store.load(repo, r["commit"], id=cur_id)
        fetched = store.is_fetched_task(task)  # its Resume starts a task of one's own: expected
        if store.current_task(repo) != task and not fetched:
            detail = f"this worktree is on task {store.current_task(repo)}"
            checks.append({"check": "worktree", "ok": False, "detail": detail})
            drift.append(detail)
        else:
            from .status import facts

            snap = capture(repo, cfg, read_only=True)
            # status's facts: files, index and overlay match (HEAD may have moved: said, not drift)
            f = facts(repo, snap, cur)
            if f["files_match"]:
                ws_ok = True
                checks.append({"check": "worktree", "ok": True, "detail": worktree_text(f)})
            else:
                changed = [path_to_str(c.path) for c in repo.diff_trees(cur.tree, snap.tree)]
                what = worktree_text(f) + (f" (changed: {', '.join(changed[:20])}" + (" …)" if len(changed) > 20 else ")")
                                          if changed else "")
                checks.append({"check": "worktree", "ok": False, "detail": what, "changed": changed, "differs": f["differs"]})
                drift.append(f"worktree differs from {cur_id}: {what}")
    st = trust.state(repo, cfg)
    if not st.ok:
        detail = f"{trust.untrusted_reason(st)}: its required verifiers were neither re-run nor can they be relied on (git ckpt trust)"
        checks.append({"check": "config", "ok": False, "detail": detail})
        drift.append(detail)
    required = [v.name for v in cfg.verifier if v.required]
    recorded = results_on(repo, cur) if cur is not None else {}
    statuses, how = (None, "not re-run: the worktree does not match the checkpoint")
    if rerun and required and ws_ok and cur is not None:
        statuses, how = _rerun(repo, cfg, cur, required)
    for name in required:
        shown = recorded.get(name)
        rec = shown[0] if shown is not None and shown[1] else None  # evidence: this repository's own only
        rec_status = rec.get("status") if rec else None
        # only a fetched line about this content: say so, in show's words (it is not evidence here)
        other = str(shown[0].get("status")) if shown is not None and not shown[1] else None
        theirs = f"recorded {other} [{FETCHED}]" if other else None
        row: dict[str, Any] = {"check": f"verifier {name}", "recorded": rec_status, "fetched": other}
        if statuses is not None and name in statuses:
            row["rerun"] = statuses[name]
            # a required verifier must pass, re-run as not: a failure the receipt already
            # recorded is no drift of the record but still nothing to resume on (walkthrough 24
            # read "ok" beside a failing verifier)
            row["ok"] = statuses[name] == "passed"
            # the re-run is a verify: its result is recorded (notes and ledger), and said to be
            row["detail"] = f"re-run: {statuses[name]} (recorded), " + (f"before: {rec_status}" if rec_status else
                                                                         f"before: {other} [{FETCHED}]" if other else "nothing recorded before")
            if not row["ok"]:
                drift.append(f"verifier {name}: " + (f"recorded {rec_status}, " if rec_status else "") + f"re-run {statuses[name]}")
        else:
            row["ok"] = rec_status == "passed"
            row["detail"] = (f"recorded: {rec_status}" if rec_status else theirs or "no result recorded on this checkpoint") + f" ({how})"
            if not row["ok"]:
                drift.append(f"verifier {name}: " + (f"recorded {rec_status}" if rec_status else theirs or "no result recorded") + f" ({how})")
        checks.append(row)
    return {"ok": not drift, "task": task, "current": cur_id, "checks": checks, "drift": drift}


def mark(repo: Repo, task: str, checkpoint_id: str | None) -> str | None:
    """Record that a receipt was handed over at ``checkpoint_id``: a ``handoff`` ledger event,
    which ``git ckpt gc`` never prunes past.  Skipped when there is no checkpoint or the newest
    event already marks the same one, and for a fetched task (``REMOTE:T``: read-only here).
    Returns a warning when the ledger is damaged, else None."""
    if not checkpoint_id or store.is_fetched_task(task):
        return None
    try:
        head = ledger.head(repo, task)
    except CkptError:
        head = None
    if head is not None and head.event.type == "handoff" and head.event.data.get("id") == checkpoint_id:
        return None
    return ledger.append_or_warn(repo, task, "handoff", {"id": checkpoint_id})
