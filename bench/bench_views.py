"""Pairs for views of text a fetched ledger or an agent writes (attack pass 24).

* pair 12 (``--only graph``): ``git ckpt log --graph`` of a generated ledger that restores before
  every save, each time to a name it never saved (a ledger anyone who can push writes), against
  plain ``git ckpt log`` of the same ledger.  Each save once opened a lane of its own and the
  lane step scanned every lane per checkpoint (25 s against 4.7 s at 60,000 events); drawing the
  graph should cost about what reading the ledger costs.  ``report --html`` of the same ledger
  is reported beside it, for context.
* pair 13 (``--only scope``): ``git ckpt diff --scope`` with a next step of thousands of words (an
  agent writes it, up to 64 KiB) and thousands of changed files, against ``git ckpt diff`` of the
  same change.  The next step was read again for every changed path (13.6 s against 0.56 s at
  9,000 words and 3,000 files); it is read once now.

Whole processes, alternated and timed after a warm-up like the others
(:func:`bench_scenarios.measure`).
"""

from __future__ import annotations

import json
from pathlib import Path

from bench_history import _small_repo
from bench_inputs import BenchError, run
from bench_scenarios import Row, Settings, Variant, _row, ckpt_json, measure


def ledger_stream(ref: str, task: str, pairs: int) -> bytes:
    """A ``git fast-import`` stream writing ``ref``: a ledger of ``pairs`` restore + save event
    pairs (``2 * pairs`` commits, each with card.json and event.json), every restore to a name
    the ledger never saves (``x0``, ``x1``, ...), every save a new checkpoint ``TASK/N``."""
    card = json.dumps({"schema": "ckpt-card/1", "task": task, "goal": "g", "constraints": [], "acceptance": [], "reads": [],
                       "facts": [], "decisions": [], "failed": [], "questions": [], "assumptions": [], "next": None,
                       "hypothesis": None, "done": False}).encode()
    out = [b"blob\nmark :1\ndata %d\n%s\n" % (len(card), card)]
    for seq in range(1, 2 * pairs + 1):
        i = (seq - 1) // 2
        if seq % 2:
            kind, data = "restore", {"target": f"x{i}", "target_commit": "0" * 40, "worktree": "/w"}
        else:
            kind, data = "save", {"id": f"{task}/{i + 1}", "commit": "0" * 40, "kind": "manual", "message": "m"}
        event = json.dumps({"schema": "ckpt/1", "seq": seq, "type": kind, "task": task, "at": "2026-01-01T00:00:00Z",
                            "host": "h", "user": "u", "data": data, "prev": None, "hash": ""}).encode()
        out.append(b"commit %s\ncommitter E <e@x> 0 +0000\ndata 3\nev\n" % ref.encode())
        out.append(b"M 100644 :1 card.json\nM 100644 inline event.json\ndata %d\n%s\n\n" % (len(event), event))
    return b"".join(out)


def pair_graph(tmp: Path, env: dict[str, str], s: Settings, events: int) -> list[Row]:
    """Pair 12: ``log --graph`` (and ``report --html``) of a ``events``-event ledger that restores
    before every save, against ``log`` of it.  Raises :class:`BenchError` when a command fails
    or the graph does not hold every checkpoint."""
    tree = _small_repo(tmp, env, f"ledger-{events}", 10)
    task = "jumpy"
    run(["git", "fast-import", "--quiet"], tree.root, env, input=ledger_stream(f"refs/ckpt/{task}/log", task, events // 2))
    got = ckpt_json(tree, "log", "--graph", "--task", task)
    if len(got["nodes"]) != events // 2 or len(got["steps"]) != events // 2 * 2:
        raise BenchError(f"log --graph drew {len(got['nodes'])} checkpoints and {len(got['steps'])} events, "
                         f"expected {events // 2} and {events // 2 * 2}")
    page = str(tmp / f"ledger-{events}.html")
    noop = lambda i: None  # noqa: E731
    a, b, c = "git ckpt log --graph", "git ckpt log", "git ckpt report --html"
    variants = [Variant(a, noop, lambda i: ["git", "ckpt", "log", "--graph", "--task", task]),
                Variant(b, noop, lambda i: ["git", "ckpt", "log", "--task", task]),
                Variant(c, noop, lambda i: ["git", "ckpt", "report", "--html", page, "--task", task])]
    times, _ = measure(tree, variants, s)
    note = f"{events} events, a restore to an unknown name before each save; {got['lanes']} lane(s)"
    return [_row(f"12 graph ({events})", tree, times, a, b, 1.5, note),
            _row(f"12 graph ({events})", tree, times, c, b, None, "context: " + note)]


def pair_scope(tmp: Path, env: dict[str, str], s: Settings, words: int, files: int) -> list[Row]:
    """Pair 13: ``diff --scope`` with a next step of ``words`` words (one of them naming a changed
    file) and ``files`` new files since the checkpoint, against ``diff``.  Raises
    :class:`BenchError` when a command fails or the scope is not the expected one."""
    tree = _small_repo(tmp, env, f"scope-{files}", 10)
    text = " ".join(f"w{i}" for i in range(words - 1)) + " new/f7.txt"
    if len(text) > 65536:
        raise BenchError(f"a next step of {words} words is {len(text)} characters: more than git ckpt takes")
    run(["git", "ckpt", "task", "start", "scoped"], tree.root, env)
    run(["git", "ckpt", "save", "-m", "s", "--allow-empty", "--next", text], tree.root, env)
    (tree.root / "new").mkdir()
    for i in range(files):
        (tree.root / "new" / f"f{i}.txt").write_text(f"{i}\n")
    got = ckpt_json(tree, "diff", "--scope")
    inside = [r["path"] for r in got["in_scope"]]
    if inside != ["new/f7.txt"] or len(got["outside"]) != files - 1:
        raise BenchError(f"diff --scope put {inside} in scope and {len(got['outside'])} paths outside, expected new/f7.txt and {files - 1}")
    noop = lambda i: None  # noqa: E731
    a, b = "git ckpt diff --scope", "git ckpt diff"
    variants = [Variant(a, noop, lambda i: ["git", "ckpt", "diff", "--scope"]),
                Variant(b, noop, lambda i: ["git", "ckpt", "diff"])]
    times, _ = measure(tree, variants, s)
    return [_row(f"13 scope ({files})", tree, times, a, b, 1.5, f"a next step of {words} words ({len(text)} characters), {files} new files")]
