"""Tasks and their cards: ``git ckpt task start|show|list|done``."""

from __future__ import annotations

import msgspec

from . import ledger, store
from .gitcore import Repo
from .model import Card


def start(repo: Repo, task: str, *, goal: str | None = None, constraints: list[str] = (), acceptance: list[str] = ()) -> Card:
    """Make ``task`` current in this worktree and record its card (goal, constraints,
    acceptance) in a ``task-start`` ledger event.  Starting an existing task switches to it and
    updates only the fields given."""
    store.check_task_name(task)
    store.set_current_task(repo, task)

    def update(card: Card) -> Card:
        if goal is not None:
            card.goal = goal
        if constraints:
            card.constraints = card.constraints + list(constraints)
        if acceptance:
            card.acceptance = card.acceptance + list(acceptance)
        card.done = False
        return card

    rec = ledger.append(repo, task, "task-start", {"goal": goal, "worktree": str(repo.git_dir)}, update)
    return rec.card


def done(repo: Repo, task: str) -> Card:
    """Mark ``task`` done on its card (a ``card`` event)."""
    def update(card: Card) -> Card:
        card.done = True
        return card

    return ledger.append(repo, task, "card", {"done": True}, update).card


def listing(repo: Repo) -> list[dict]:
    """Every task: name, checkpoint count, goal, done, and whether it is current here."""
    cur = store.current_task(repo)
    out = []
    names = set(store.tasks(repo)) | {cur}
    for name in sorted(names):
        card = ledger.card(repo, name)
        out.append({"task": name, "checkpoints": len(store.numbered(repo, name)), "goal": card.goal,
                    "done": card.done, "current": name == cur})
    return out


def card_json(card: Card) -> dict:
    """The card as JSON-ready data."""
    return msgspec.to_builtins(card)
