"""Tasks and their cards: ``git ckpt task start|show|list|done``."""

from __future__ import annotations

from typing import Any, Sequence


from . import ledger, store
from .errors import CkptError
from .gitcore import Repo
from .model import Card, to_builtins


def start(repo: Repo, task: str, *, goal: str | None = None, constraints: Sequence[str] = (), acceptance: Sequence[str] = ()) -> Card:
    """Make ``task`` current in this worktree and record its card (goal, constraints,
    acceptance) in a ``task-start`` ledger event.  Starting an existing task switches to it and
    updates only the fields given.  Raises :class:`UsageError` for a name a new task may not
    have (:func:`store.own_task_name`)."""
    store.own_task_name(repo, task, new=True)
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


def start_notices(repo: Repo, task: str, *, goal: str | None) -> list[str]:
    """What ``task start`` should tell before it starts ``task``: that a teammate's fetched
    task has that name (a later ``push`` of yours would be refused: checkpoints are never
    overwritten), that the task already exists (its checkpoints and card are kept), that
    ``goal`` replaces a different goal it had, and that a task marked done is reopened."""
    store.check_task_name(task)
    out = []
    remotes = store.fetched_elsewhere(repo, task)
    mine = store.numbered(repo, task)
    if remotes:
        out.append(f"{', '.join(r + ':' + task for r in remotes)} already exists (fetched); pushing a task of "
                   f"the same name would be refused (checkpoints are never overwritten): {continue_fetched(repo, remotes[0], task)}")
    if mine or repo.read_ref(store.log_ref(task)):
        old = ledger.card(repo, task)
        if goal is not None and old.goal and old.goal != goal:
            out.append(f"task {task} already exists ({len(mine)} checkpoint(s)); its goal {old.goal!r} is replaced by {goal!r}")
        if old.done:
            out.append(f"task {task} was marked done; starting it again reopens it (git ckpt task done marks it again)")
    return out


def continue_fetched(repo: Repo, remote: str, task: str) -> str:
    """How to continue the work of ``task`` fetched from ``remote`` (``REMOTE:T``, a teammate's,
    which only its remote's owner pushes): ``to continue that work, start a task of your own
    (e.g. T-2) and git ckpt restore REMOTE:T/N`` (the checkpoint handoff's Resume names too:
    :func:`git_ckpt.handoff.current_checkpoint`), or how to see its card when it has none."""
    from .handoff import current_checkpoint, own_name

    theirs = f"{remote}:{task}"
    try:
        cur = current_checkpoint(repo, theirs)
    except CkptError:  # its ledger cannot be read: a hint is no place to fail
        cur = None
    then = (f" and git ckpt restore {cur.id}" if cur is not None
            else f" ({theirs} has no checkpoints; git ckpt task show {theirs} shows its card)")
    return f"to continue that work, start a task of your own (e.g. {own_name(repo, task)}){then}"


def done(repo: Repo, task: str) -> Card:
    """Mark ``task`` done on its card (a ``card`` event)."""
    def update(card: Card) -> Card:
        card.done = True
        return card

    return ledger.append(repo, task, "card", {"done": True}, update).card


def listing(repo: Repo) -> list[dict[str, Any]]:
    """Every task: name, checkpoint count, goal, done, whether it is current here, and
    ``fetched`` (the remote it was fetched from, or None).  This repository's tasks come first,
    then every task fetched from a remote as ``REMOTE:T`` (its card read from the fetched
    ledger ``refs/ckpt-remotes/REMOTE/T/log``, decoded and validated like any ledger)."""
    cur = store.current_task(repo)
    out = []
    names = set(store.tasks(repo)) | {cur}
    for name in sorted(names):
        card = ledger.card(repo, name)
        out.append({"task": name, "checkpoints": len(store.numbered(repo, name)), "goal": card.goal,
                    "done": card.done, "current": name == cur, "fetched": None})
    for bare, remotes in sorted(store.fetched_tasks(repo).items()):
        for remote in sorted(remotes):
            name = f"{remote}:{bare}"
            try:
                card = ledger.card(repo, name)
            except CkptError:  # a damaged fetched ledger: the task is still listed
                card = Card(task=bare)
            out.append({"task": name, "checkpoints": len(store.numbered(repo, name)), "goal": card.goal,
                        "done": card.done, "current": False, "fetched": remote})
    return out


def card_json(card: Card) -> dict[str, Any]:
    """The card as JSON-ready data."""
    out: dict[str, Any] = to_builtins(card)
    return out
