"""git ckpt task: start, show, list and finish tasks (a named line of work with a card)."""

from __future__ import annotations

import click

from ..model import escape
from . import emit, json_option, open_repo, say, task_argument


@click.group("task")
def command() -> None:
    """Manage tasks ({commands}): a task's checkpoints are refs/ckpt/TASK/N, its card is in its ledger."""


@command.command("start")
@click.argument("name")
@click.option("--goal", default=None, help="What the task is for.")
@click.option("--constraint", "constraints", multiple=True, help="A constraint (repeatable).")
@click.option("--acceptance", "acceptance", multiple=True, help="An acceptance criterion (repeatable).")
@json_option
def start_cmd(name: str, goal: str | None, constraints: tuple[str, ...], acceptance: tuple[str, ...], as_json: bool) -> int:
    """Make NAME the current task of this worktree and record its card."""
    from .. import task

    from . import warn

    from .. import store

    repo = open_repo()
    store.own_task_name(repo, name, new=True)
    notices = task.start_notices(repo, name, goal=goal)

    existing = len(store.numbered(repo, name))
    card = task.start(repo, name, goal=goal, constraints=list(constraints), acceptance=list(acceptance))
    if not as_json:
        for n in notices:
            warn(n)
    emit("task start", dict(task.card_json(card), warnings=notices), as_json,
         lambda: say(f"task {name} is now current" + (f" (existing: {existing} checkpoint(s))" if existing else "")
                     + (f": {card.goal}" if card.goal else "")))
    return 0


@command.command("show")
@task_argument("The task (default: the current one; a fetched REMOTE:T too).")
@json_option
def show_cmd(task: str | None, as_json: bool) -> int:
    """Show the card of TASK (default: the current task)."""
    name = task
    from .. import ledger, store
    from .. import task as task_mod
    from ..card import evidence_suffix, evidence_texts

    repo = open_repo()
    name = store.existing_task(repo, name, fetched=True) if name else store.current_task(repo)
    card = ledger.card(repo, name)

    def human() -> None:
        say(f"task: {name}{' (done)' if card.done else ''}")
        e = escape
        say(f"goal: {e(card.goal) or '(none)'}")
        for label, items in (("constraints", card.constraints), ("acceptance", card.acceptance), ("read", card.reads)):
            for it in items:
                say(f"{label}: {e(it)}")
        for label, entries in (("fact", card.facts), ("decided", card.decisions), ("failed", card.failed), ("question", card.questions), ("assumption", card.assumptions)):
            for i, item in enumerate(entries, start=1):
                extra = f" [{e(item.status)}]" if item.status else ""
                extra += f" ({e(item.reason)})" if item.reason else ""
                extra += evidence_suffix([e(t) for t in evidence_texts(name, item)])
                say(f"{label} {i}: {e(item.text)}{extra}")
        if card.next:
            say(f"next: {e(card.next)}")
        if card.hypothesis:
            say(f"hypothesis: {e(card.hypothesis)}")

    emit("task show", task_mod.card_json(card), as_json, human)
    return 0


@command.command("list")
@json_option
def list_cmd(as_json: bool) -> int:
    """List tasks with their checkpoint counts; * marks the current one."""
    from .. import task

    repo = open_repo()
    rows = task.listing(repo)

    def human() -> None:
        for r in rows:
            count = f"{r['checkpoints']:>4} checkpoint{'' if r['checkpoints'] == 1 else 's'}"
            say(f"{'*' if r['current'] else ' '} {r['task']:<24} {count:<17} {'(done) ' if r['done'] else ''}{escape(r['goal'])}".rstrip())

    emit("task list", rows, as_json, human)
    return 0


@command.command("done")
@task_argument("The task (default: the current one).")
@json_option
def done_cmd(task: str | None, as_json: bool) -> int:
    """Mark TASK (default: the current task) done."""
    from .. import store
    from .. import task as task_mod

    repo = open_repo()
    name = store.existing_task(repo, task) if task else store.current_task(repo)
    card = task_mod.done(repo, name)
    emit("task done", task_mod.card_json(card), as_json, lambda: say(f"task {name} marked done"))
    return 0


@command.command("note")
@task_argument("The task (default: the current one).")
@click.option("--read", "read", multiple=True, metavar="FILE", help="A file you read (repeatable).")
@click.option("--fact", default=None, metavar="TEXT", help="A fact you verified (needs --evidence).")
@click.option("--evidence", "evidence", multiple=True, metavar="E",
              help="What backs the note's --fact, --failed, --confirm or --refute, or else its one --decided, --assume "
                   "or --question: T/N, T/N#VERIFIER, file:PATH or text (repeatable).")
@click.option("--decided", "decided", multiple=True, metavar="TEXT", help="A decision (repeatable).")
@click.option("--failed", default=None, metavar="OPTION", help="A path you tried and ruled out (needs --reason and --evidence CKPT).")
@click.option("--reason", default=None, metavar="TEXT", help="Why the --failed path was ruled out.")
@click.option("--assume", "assume", multiple=True, metavar="TEXT", help="An assumption not yet verified (repeatable).")
@click.option("--confirm", type=int, default=None, metavar="N", help="Mark assumption N confirmed.")
@click.option("--refute", type=int, default=None, metavar="N", help="Mark assumption N refuted.")
@click.option("--question", "question", multiple=True, metavar="TEXT", help="An open question (repeatable).")
@click.option("--next", "next_", default=None, metavar="TEXT", help="The next step.")
@json_option
def note_cmd(task: str | None, read: tuple[str, ...], fact: str | None, evidence: tuple[str, ...], decided: tuple[str, ...],
             failed: str | None, reason: str | None, assume: tuple[str, ...], confirm: int | None, refute: int | None,
             question: tuple[str, ...], next_: str | None, as_json: bool) -> int:
    """Add to the card of TASK (default: the current task); one ledger event per call."""
    import os

    from .. import card as card_mod
    from .. import store
    from .. import task as task_mod

    repo = open_repo()
    name = store.writable_task(repo, task) if task else store.current_task(repo)
    edit = card_mod.Edit(read=list(read), fact=fact, decided=list(decided), failed=failed, reason=reason,
                         evidence=list(evidence), assume=list(assume), confirm=confirm, refute=refute,
                         question=list(question), next=next_)
    from .. import ledger

    reversed_ = card_mod.reversals(ledger.card(repo, name), edit)
    rec = card_mod.note(repo, name, edit, cwd=os.getcwd())
    why = f" ({'; '.join(reversed_)}: the earlier judgement's evidence stays in git ckpt log)" if reversed_ else ""
    emit("task note", task_mod.card_json(rec.card), as_json, lambda: say(f"task card of {name} updated (event #{rec.event.seq}){why}"))
    return 0
