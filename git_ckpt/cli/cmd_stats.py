"""git ckpt stats: numbers of a task from its ledger (rollbacks, pass rate, recovery time)."""

from __future__ import annotations

import click

from ..words import counted
from . import emit, json_option, open_repo, say, task_argument


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:.0f}%"


@click.command("stats")
@task_argument("The task (default: the current one; a fetched REMOTE:T too).")
@json_option
def command(task: str | None, as_json: bool) -> int:
    """Checkpoints, restores and undos (rollback rate), verifier runs and pass rate, forced
    promotions, gate refusals, unverified commits and median recovery time of TASK."""
    from .. import config, stats, store

    repo = open_repo()
    task = store.existing_task(repo, task, fetched=True) if task else store.current_task(repo)
    s = stats.stats(repo, config.load(repo), task)

    def human() -> None:
        k = s["saved_by_kind"]
        say(f"task: {s['task']} ({counted(s['events'], 'event')})")
        say(f"checkpoints saved: {s['checkpoints_saved']} (manual {k.get('manual', 0)}, auto {k.get('auto', 0)}, pre-restore {k.get('pre-restore', 0)})")
        on_purpose = k.get("manual", 0) + k.get("auto", 0)
        say(f"restores: {s['restores']}, undos: {s['undos']} (rollback rate {_pct(s['rollback_rate'])}: "
            f"{s['rolled_back_to']} of {on_purpose} checkpoint(s) saved on purpose restored later)")
        other = f"; {s['verifier_runs_elsewhere']} more on other tasks' checkpoints" if s["verifier_runs_elsewhere"] else ""
        say(f"verifier runs: {s['verifier_runs']}, passed {s['verifier_passed']} (pass rate {_pct(s['pass_rate'])}; {s['verifier_reused']} reused{other})")
        say(f"promotions: {s['promotions']} ({s['forced_promotions']} forced); gate refusals: {s['gate_refusals']}")
        c = s.get("commits") or {}
        if c.get("fetched"):
            say("commits without a verified checkpoint: not counted for a fetched task (this branch's commits are this "
                "clone's own; git ckpt verify-commit COMMIT checks one)")
        elif "error" in c:
            say(f"commits without a verified checkpoint: unknown ({c['error']})")
        else:
            bad = c.get("unverified", [])
            ids = f": {', '.join(b[:12] for b in bad[:3])}{' …' if len(bad) > 3 else ''}" if bad else ""
            say(f"commits on this branch since the task began (pulled ones too) without a verified checkpoint here "
                f"(as git ckpt verify-commit decides): {len(bad)} of {c.get('checked', 0)}{ids}"
                + (" (first 2000 checked)" if c.get("truncated") else ""))
        med = s["recovery_median_seconds"]
        say("median recovery time (restore or undo to the next passing verify): "
            + ("n/a" if med is None else f"{med:.0f} s over {counted(s['recoveries'], 'recovery', 'recoveries')}"))

    emit("stats", s, as_json, human)
    return 0
