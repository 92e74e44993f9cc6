"""``git ckpt stats``: how a task went, computed from its ledger (and the branch it committed to).

* checkpoints saved (by kind), restores and undos (those that changed the state), and the
  rollback rate: the share of the checkpoints saved on purpose (manual + auto) that a later whole-tree ``restore`` went back to
  (each counted once however often; an ``undo`` returns to the state a restore left, so it is no
  rollback of its own), a number from 0 to 1;
* verifier runs and their pass rate: every ``verify`` event on a checkpoint of this task counts
  as one run (the runs ``report --html`` and ``log --graph`` draw on its checkpoints), reused
  results included and reported apart; a run on another task's checkpoint recorded here (``verify
  REMOTE:T/N``) is counted apart, as ``verifier_runs_elsewhere``;
* promotions (those that moved the promoted ref: a forced record on the checkpoint already
  promoted is none), forced promotions and gate refusals;
* commits on the current branch since the task's first checkpoint whose tree no verified
  checkpoint holds (:func:`git_ckpt.gate.verify_commit`, the check the pre-push hook runs); not
  for a fetched task ``REMOTE:T``, whose checkpoints were based on the teammate's history: this
  branch's commits are this clone's own (``commits`` is ``{"fetched": true}``);
* recovery time: the median seconds from a restore or undo to the next passing verify.
"""

from __future__ import annotations

import calendar
import statistics
import time
from typing import Any

from . import ledger, store
from .config import Config
from .errors import CkptError
from .gitcore import Repo

MAX_COMMITS = 2000


def _ts(at: str) -> float | None:
    try:
        return float(calendar.timegm(time.strptime(at, "%Y-%m-%dT%H:%M:%SZ")))
    except (TypeError, ValueError):
        return None


def unverified_commits(repo: Repo, cfg: Config, task: str) -> dict[str, Any]:
    """Commits on HEAD's branch made since the base of ``task``'s first checkpoint (all of HEAD
    when that base is unborn) without a verified checkpoint of the same tree.  Returns
    ``{"checked", "unverified": [commit ids], "truncated"}``."""
    from . import handoff

    head, _branch = repo.head()
    if head is None:
        return {"checked": 0, "unverified": [], "truncated": False}
    first = handoff.first_checkpoint(repo, task)
    if first is None:
        return {"checked": 0, "unverified": [], "truncated": False}
    args = ["rev-list", f"--max-count={MAX_COMMITS + 1}", head]
    if first.base:
        args.append(f"^{first.base}")
    commits = repo.git(*args).stdout.decode().split()
    truncated = len(commits) > MAX_COMMITS
    commits = commits[:MAX_COMMITS]
    from .gate import verify_commit

    bad = [c for c in commits if not verify_commit(repo, cfg, c).verified]
    return {"checked": len(commits), "unverified": bad, "truncated": truncated}


def stats(repo: Repo, cfg: Config, task: str, *, commits: bool = True) -> dict[str, Any]:
    """The numbers of ``task`` as JSON-ready data (see the module docstring for definitions)."""
    store.check_task_spec(task)
    recs = ledger.records(repo, task)
    saved = {"manual": 0, "auto": 0, "pre-restore": 0}
    restores = undos = runs = passed = reused = promotions = forced = refusals = elsewhere = 0
    saved_ids: set[str] = set()  # every checkpoint of this task saved so far
    on_purpose_ids: set[str] = set()  # checkpoints saved on purpose so far
    rolled_back_to: set[str] = set()  # of those, the ones a later restore went back to
    pending: list[float] = []  # restore/undo times waiting for a passing verify
    recoveries: list[float] = []
    for r in recs:
        ev = r.event
        d = ev.data
        t = _ts(ev.at)
        if ev.type == "save":
            kind = str(d.get("kind") or "manual")
            saved[kind] = saved.get(kind, 0) + 1
            saved_ids.add(str(d.get("id")))
            if kind in ("manual", "auto"):
                on_purpose_ids.add(str(d.get("id")))
        elif ev.type in ("restore", "undo"):
            if ledger.changed_nothing(d):
                continue  # the worktree held its target already: no rollback, nothing to recover from
            if ev.type == "restore":
                restores += 1
                if store.left_whole(d) and str(d.get("target")) in on_purpose_ids:
                    rolled_back_to.add(str(d.get("target")))
            else:
                undos += 1
            if t is not None:
                pending.append(t)
        elif ev.type == "verify":
            ours = str(d.get("id")) in saved_ids
            runs += ours
            elsewhere += not ours
            if ours and d.get("reused"):
                reused += 1
            if d.get("status") == "passed":
                passed += ours
                if t is not None:
                    recoveries.extend(t - p for p in pending if t >= p)  # a clock that went back measures nothing
                pending = []
        elif ev.type == "promote":
            if d.get("previous") is not None and d.get("previous") == d.get("commit"):
                continue  # the promoted checkpoint promoted again (a forced record): no new promotion
            promotions += 1
            if d.get("forced") is True:
                forced += 1
        elif ev.type == "gate-refused":
            refusals += 1
    on_purpose = saved.get("manual", 0) + saved.get("auto", 0)
    out = {
        "task": task,
        "events": len(recs),
        "checkpoints_saved": sum(saved.values()),
        "saved_by_kind": saved,
        "restores": restores,
        "undos": undos,
        "rolled_back_to": len(rolled_back_to),
        "rollback_rate": round(len(rolled_back_to) / on_purpose, 3) if on_purpose else None,
        "verifier_runs": runs,
        "verifier_passed": passed,
        "verifier_reused": reused,
        "verifier_runs_elsewhere": elsewhere,
        "pass_rate": round(passed / runs, 3) if runs else None,
        "promotions": promotions,
        "forced_promotions": forced,
        "gate_refusals": refusals,
        "recovery_median_seconds": statistics.median(recoveries) if recoveries else None,
        "recoveries": len(recoveries),
    }
    if commits and store.split_task(task)[0] is not None:
        out["commits"] = {"fetched": True}
    elif commits:
        try:
            out["commits"] = unverified_commits(repo, cfg, task)
        except CkptError as exc:
            out["commits"] = {"error": exc.message}
    return out
