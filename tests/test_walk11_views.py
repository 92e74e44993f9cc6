"""What the eleventh new-user walkthrough of the README met, each as its kind: which result is
"the" result of a verifier (the one about the current content, reused included, before the
newest recorded; a reused result counts from when it was reused), the ids a view of a fetched
task prints (``REMOTE:T/N``, as ``show`` takes them), and what ``handoff --check`` says of a
result that is only fetched.

Real repositories (and a real bare remote), the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import json
import time

from conftest import ckpt, git
from test_remote import _team

ADD = "def add(a, b):\n    return a + b\n"
SUB = "def add(a, b):\n    return a - b\n"
CHECK = "grep -q 'a + b' calc.py"


def _calc(repo):
    (repo / "calc.py").write_text(ADD)
    git(repo, "add", "calc.py")
    git(repo, "commit", "-qm", "calc")
    git(repo, "config", "ckpt.verifier.tests.command", CHECK)


def _section(out: str, title: str) -> list[str]:
    """The lines of one ``## title`` section of a receipt."""
    lines = out.splitlines()
    start = lines.index(f"## {title}") + 1
    end = next((i for i in range(start, len(lines)) if not lines[i]), len(lines))
    return lines[start:end]


def _good_bad_good(repo):
    """The README walkthrough: pass, (a second later) fail, back to the passing content, whose
    verify reuses the first pass (a line carrying the first run's start time)."""
    _calc(repo)
    ckpt(repo, "task", "start", "t", "--goal", "g")
    ckpt(repo, "save", "-m", "good")
    ckpt(repo, "verify")
    time.sleep(1.1)  # the failing run starts in a later second than the passing one
    (repo / "calc.py").write_text(SUB)
    ckpt(repo, "save", "-m", "bad")
    ckpt(repo, "verify", rc=1)
    (repo / "calc.py").write_text(ADD)
    ckpt(repo, "save", "-m", "good again")
    res = ckpt(repo, "verify")
    assert res.out.splitlines()[0].startswith("verifier: tests ...... passed (reused from t/1, exit 0, ")
    assert res.out.splitlines()[1] == "promoted t/3"


def test_handoff_shows_the_reused_pass_on_the_current_checkpoint(repo):
    _good_bad_good(repo)
    res = ckpt(repo, "handoff")
    [row] = _section(res.out, "Last verifier results")
    assert row.startswith("- tests: passed on t/3 (reused from t/1, exit 0, ") and row.endswith(" s)"), row
    [r] = ckpt(repo, "handoff", "--json").json()["result"]["results"]
    assert (r["verifier"], r["checkpoint"], r["status"], r["on_current"], r["local"], r["reused"], r["reused_from"]) == \
        ("tests", "t/3", "passed", True, True, True, "t/1")
    # list, show and the receipt agree on the current checkpoint
    assert ckpt(repo, "list").out.splitlines()[-1].endswith("good again  [tests:passed]")
    assert ckpt(repo, "handoff", "--check").out.splitlines()[-2:] == [
        "ok    verifier tests: re-run: passed (recorded), before: passed", "handoff of t: no drift"]


def test_no_result_on_the_current_content_shows_the_newest_recorded(repo):
    """With nothing about the current content, the newest *recorded* result: the reuse on t/3
    came after t/2's failing run, though the reused line carries t/1's earlier start."""
    _good_bad_good(repo)
    (repo / "new.txt").write_text("n\n")
    ckpt(repo, "save", "-m", "four")
    [row] = _section(ckpt(repo, "handoff").out, "Last verifier results")
    assert row.startswith("- tests: passed on t/3 (reused from t/1, exit 0, ") and row.endswith(" s) [not the current content]"), row


def test_a_note_line_says_when_it_was_recorded(repo):
    """Every line verify appends says when (``recorded_at``); a reused copy when it was reused."""
    _good_bad_good(repo)
    note = git(repo, "notes", "--ref", "ckpt", "show", "refs/ckpt/t/3").decode().splitlines()
    [line] = [json.loads(x) for x in note]
    first = json.loads(git(repo, "notes", "--ref", "ckpt", "show", "refs/ckpt/t/1"))
    assert line["reused"] is True and line["started_at"] == first["started_at"]
    assert line["recorded_at"] > first["started_at"] and first["recorded_at"] >= first["started_at"]


def _alice_t(alice, bob):
    """Alice's task t: a pass, a failure, a restore, a reused pass, a card note naming ids;
    pushed, and fetched by Bob."""
    _calc(alice)
    ckpt(alice, "task", "start", "t", "--goal", "g")
    ckpt(alice, "save", "-m", "good")
    ckpt(alice, "verify")
    (alice / "calc.py").write_text(SUB)
    ckpt(alice, "save", "-m", "bad")
    ckpt(alice, "verify", rc=1)
    ckpt(alice, "restore", "t/1")
    ckpt(alice, "save", "-m", "again", "--allow-empty")
    assert ckpt(alice, "verify").out.splitlines()[0].startswith("verifier: tests ...... passed (reused from t/1, ")
    ckpt(alice, "task", "note", "--decided", "t/2 failed; t/02, t/2x, t/2/3 and u/2 are not ids of t")
    ckpt(alice, "push")
    ckpt(bob, "fetch")


def test_log_of_a_fetched_task_names_its_checkpoints_as_show_does(tmp_path):
    _bare, alice, bob = _team(tmp_path)
    _alice_t(alice, bob)
    res = ckpt(bob, "log", "--task", "origin:t")
    assert [ln.split("Z  ", 1)[1] for ln in res.out.splitlines()] == [
        "task started: g",
        "checkpoint saved: origin:t/1",
        "verifier: tests ...... passed on origin:t/1",
        "promoted origin:t/1",
        "checkpoint saved: origin:t/2",
        "verifier: tests ...... failed on origin:t/2",
        "restored origin:t/1 (previous state origin:t/2)",
        "checkpoint saved: origin:t/3",
        "verifier: tests ...... passed on origin:t/3 (reused from origin:t/1)",
        "promoted origin:t/3",
        "decided: origin:t/2 failed; t/02, t/2x, t/2/3 and u/2 are not ids of t",
        "pushed to origin",
    ]
    # the graph says the same ids; show takes them
    graph = ckpt(bob, "log", "--task", "origin:t", "--graph").out
    assert "tests passed on origin:t/3 (reused from origin:t/1)" in graph
    assert "decided: origin:t/2 failed; t/02, t/2x, t/2/3 and u/2 are not ids of t" in graph
    ckpt(bob, "show", "origin:t/3")
    # Alice's own log is as she wrote it
    assert "verifier: tests ...... passed on t/3 (reused from t/1)\n" in ckpt(alice, "log").out


def test_handoff_check_says_a_fetched_result_is_fetched_not_missing(tmp_path):
    """``handoff --check REMOTE:T`` of a checkpoint whose only result was fetched says so, in
    show's words, instead of "no result recorded"; it is still not evidence (drift)."""
    _bare, alice, bob = _team(tmp_path)
    _alice_t(alice, bob)
    git(bob, "config", "ckpt.verifier.tests.command", CHECK)
    assert "[tests:passed(fetched)]" in ckpt(bob, "list", "--remote", "origin").out.splitlines()[-1]
    assert "  tests: passed (exit 0, " in ckpt(bob, "show", "origin:t/3").out
    res = ckpt(bob, "handoff", "--check", "origin:t", rc=1)
    assert res.out.splitlines()[-2:] == [
        "DRIFT verifier tests: recorded passed [fetched: not evidence here] (not re-run: the worktree does not match the checkpoint)",
        "handoff of origin:t: 2 drift(s) found"]
    [row] = [c for c in ckpt(bob, "handoff", "--check", "origin:t", "--json", rc=1).json()["result"]["checks"]
             if c["check"] == "verifier tests"]
    assert (row["ok"], row["recorded"], row["fetched"]) == (False, None, "passed")
    # re-run where it can be: the fetched result is named as such beside the run's own
    ckpt(bob, "restore", "origin:t/3")
    res = ckpt(bob, "handoff", "--check", "origin:t")
    assert "ok    verifier tests: re-run: passed (recorded), before: passed [fetched: not evidence here]" in res.out.splitlines()
