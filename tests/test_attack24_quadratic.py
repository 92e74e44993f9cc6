"""Attack pass 24: inputs a fetched ledger or an agent writes made two views quadratic.

1. ``log --graph`` and ``report --html`` numbered the timeline's lanes by scanning every lane for
   each checkpoint, and a ledger that restores (to a name it never saved) before every save
   opened a lane per save: 30,000 such pairs took ``log --graph`` 25 s (``log`` 5 s) and made
   the page's picture 30,000 rows high.  Lanes are now found by a dictionary look-up, a
   checkpoint whose parent is not on the timeline opens no lane, and there are at most
   ``timeline.MAX_LANES`` (12) of them; the text graph is drawn exactly as before.
2. ``report --html`` walked the chain a checkpoint grew from until it had as many *commits* as
   the timeline has checkpoints: saves without a commit whose parents go round in a circle (a
   forged ledger, with the refs it names) made it walk for ever.
3. ``diff --scope`` read the whole next step (up to 64 KiB, an agent's text) again for every
   changed path: 9,000 words and 3,000 changed files took 13.6 s (0.56 s without ``--scope``).

No timings here (bench/run.py --only graph,scope measures them): the exact drawings, lanes and
scopes.  Ledgers are written with ``git fast-import``; the real ``git ckpt`` entry point reads them.
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import ckpt, git

CARD = json.dumps({"schema": "ckpt-card/1", "task": "q", "goal": "g"}).encode()


def _ledger(repo, events, task="q") -> None:
    """Write ``refs/ckpt/TASK/log``: one commit per ``(type, data)`` event, as the tool's ledger
    holds them (card.json and event.json), oldest first."""
    out = []
    for i, (kind, data) in enumerate(events):
        event = json.dumps({"schema": "ckpt/1", "seq": i + 1, "type": kind, "task": task, "at": f"2026-12-01T04:{i // 60:02d}:{i % 60:02d}Z",
                            "host": "h", "user": "u", "data": data, "prev": None, "hash": ""}).encode()
        out.append(f"commit refs/ckpt/{task}/log\ncommitter m <m@x> 0 +0000\ndata 2\ne\n".encode())
        if i == 0:
            out.append(b"deleteall\n")
        for name, blob in (("card.json", CARD), ("event.json", event)):
            out.append(f"M 100644 inline {name}\ndata {len(blob)}\n".encode() + blob + b"\n")
    git(repo, "fast-import", "--quiet", "--force", input=b"".join(out))


def save(n: int, task: str = "q") -> tuple[str, dict]:
    return "save", {"id": f"{task}/{n}", "commit": "0" * 40, "kind": "manual", "message": f"m{n}"}


def restore(target: str) -> tuple[str, dict]:
    return "restore", {"target": target, "target_commit": "0" * 40, "worktree": "/w"}


def _graph(repo, task="q") -> list[str]:
    """``log --graph`` lines without their times."""
    return [re.sub(r"  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$", "", line) for line in ckpt(repo, "log", "--graph", "--task", task).out.splitlines()]


def _lanes(repo, task="q") -> tuple[int, list[tuple[str, str | None, int]]]:
    js = ckpt(repo, "log", "--graph", "--task", task, "--json").json()["result"]
    return js["lanes"], [(n["id"], n["parent"], n["lane"]) for n in js["nodes"]]


def test_a_restore_to_an_unknown_name_before_every_save_opens_no_lane(repo):
    """The attacker's ledger in small: each save follows a restore to ``xI``, which is no
    checkpoint of the task.  Drawn as before, line for line; one lane, not one per save."""
    _ledger(repo, [e for i in range(4) for e in (restore(f"x{i}"), save(i + 1))])
    assert _graph(repo) == [
        "|<- restored x0  (left None)",
        "* q/1                manual      m1  [pruned]",
        "|<- restored x1  (left q/1)",
        "* q/2                manual      m2  [pruned]",
        "|<- restored x2  (left q/2)",
        "* q/3                manual      m3  [pruned]",
        "|<- restored x3  (left q/3)",
        "* q/4                manual      m4  [pruned]",
    ]
    assert _lanes(repo) == (1, [("q/1", "x0", 0), ("q/2", "x1", 0), ("q/3", "x2", 0), ("q/4", "x3", 0)])
    res = ckpt(repo, "report", "--html", "page.html", "--task", "q", "--json").json()["result"]
    assert res == {"task": "q", "checkpoints": 0, "pruned": 4, "damaged": 0, "lanes": 1, "jumps": 4, "promoted": None, "file": "page.html"}
    assert '<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="376" height="116" ' in (repo / "page.html").read_text()


def test_branches_open_lanes_up_to_the_cap_then_stay_on_the_lane_drawn(repo):
    """Thirteen branches off q/1 (restore q/1, save): the first continues q/1's lane, the next
    eleven open lanes 1-11, and the thirteenth, with 12 lanes open, stays on the lane of the
    checkpoint saved before it and is its tip (q/16 continues it).  A checkpoint after a
    restore to another task's checkpoint opens none either; work after a restore to a lane's
    tip continues that lane.  The text graph is the same as before the cap."""
    events = [save(1)]
    for n in range(2, 15):
        events += [restore("q/1"), save(n)]
    events += [save(15), restore("other/9"), save(16), restore("q/2"), save(17)]
    _ledger(repo, events)

    def line(n: int) -> str:
        return f"* {'q/' + str(n):<18} manual      m{n}  [pruned]"

    assert _graph(repo) == [
        line(1),
        "|=  restored q/1  (the worktree held it already)",  # the ledger says nothing had moved
        line(2),
        *(text for n in range(3, 15) for text in (f"|<- restored q/1  (left q/{n - 1})", line(n))),
        line(15),
        "|<- restored other/9  (left q/15)",
        line(16),
        "|<- restored q/2  (left q/16)",
        line(17),
    ]
    lanes, nodes = _lanes(repo)
    assert lanes == 12
    assert nodes == [("q/1", None, 0), ("q/2", "q/1", 0), *((f"q/{n}", "q/1", n - 2) for n in range(3, 14)),
                     ("q/14", "q/1", 11), ("q/15", "q/14", 11), ("q/16", "other/9", 11), ("q/17", "q/2", 0)]
    res = ckpt(repo, "report", "--html", "page.html", "--task", "q", "--json").json()["result"]
    assert res["lanes"] == 12 and res["jumps"] == 14
    # 46 + 11 lanes x 74 + 70: twelve rows, however many more branches there were
    assert 'width="1572" height="930" ' in (repo / "page.html").read_text()


def test_report_of_saves_whose_parents_go_round_in_a_circle_ends(repo, tmp_path):
    """q/1 saved after a restore to q/2, q/2 after a restore to q/1, neither with a commit in
    its save event, both refs present: the page used to walk q/1 -> q/2 -> q/1 ... for ever
    looking for a commit to diff against.  It now diffs against the checkpoint's base."""
    (repo / "f").write_text("one\n")
    ckpt(repo, "save", "-m", "one")
    (repo / "f").write_text("two\n")
    ckpt(repo, "save", "-m", "two")
    _ledger(repo, [restore("q/2"), ("save", {"id": "q/1"}), restore("q/1"), ("save", {"id": "q/2"})])
    git(repo, "update-ref", "refs/ckpt/q/1", "refs/ckpt/default/1")
    git(repo, "update-ref", "refs/ckpt/q/2", "refs/ckpt/default/2")
    assert _lanes(repo) == (1, [("q/1", "q/2", 0), ("q/2", "q/1", 0)])
    res = ckpt(repo, "report", "--html", "page.html", "--task", "q")
    assert res.out == "wrote page.html: task q, 2 checkpoint(s), 1 jump(s)\n"
    page = (repo / "page.html").read_text()
    # each against its base (the repository's first commit), which has no f
    assert re.findall(r'<div class="ckpt" id="ckpt-q-(\d)">.*?grew from (q/\d)</p>\n<details open><summary>1 changed file\(s\)</summary>'
                      r'<table>\n<tr><td><code>A</code></td><td><code>f</code></td></tr>\n</table>', page, re.S) == [("2", "q/1"), ("1", "q/2")]


@pytest.mark.parametrize("files", [3, 40])
def test_diff_scope_with_a_long_next_step_names_what_it_named(repo, files):
    """A next step of a few thousand words, most naming no file: the same sorting as a short
    one, word for word (a path, a file name, a directory only with a trailing /)."""
    (repo / "lib").mkdir()
    (repo / "lib" / "keep.py").write_text("k\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "lib")
    filler = " ".join(f"word{i} lib/nope{i}.py" for i in range(1000))
    ckpt(repo, "task", "start", "s")
    ckpt(repo, "save", "-m", "s", "--allow-empty", "--next", f"{filler} fix lib/a1.py and b2.txt, see docs/ {filler}")
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("g\n")
    for i in range(files):
        (repo / "lib" / f"a{i}.py").write_text(f"{i}\n")
        (repo / f"b{i}.txt").write_text(f"{i}\n")
    out = ckpt(repo, "diff", "--scope").out.splitlines()
    assert out[:5] == ["in scope (next step or files the task touched), since s/1:",
                       "  A b2.txt  (next step)",
                       "  A docs/guide.md  (next step)",
                       "  A lib/a1.py  (next step)",
                       "outside the scope of the task card:"]
    rest = sorted([f"b{i}.txt" for i in range(files) if i != 2] + [f"lib/a{i}.py" for i in range(files) if i != 1])
    assert out[5:] == [f"  A {p}" for p in rest]
