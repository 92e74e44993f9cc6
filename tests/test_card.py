"""The task card: ``task start``/``note``/``show``, one ``card`` ledger event per edit, evidence."""

from __future__ import annotations

import json

import pytest

from conftest import ckpt, git


@pytest.fixture
def t(repo):
    ckpt(repo, "task", "start", "t", "--goal", "g", "--constraint", "c1", "--acceptance", "a1", fsck=False)
    (repo / "f.txt").write_text("1\n")
    ckpt(repo, "save", "-m", "one", fsck=False)
    return repo


def events(repo):
    return ckpt(repo, "log", "--json", fsck=False).json()["result"]


def card(repo):
    return ckpt(repo, "task", "show", "--json", fsck=False).json()["result"]


def test_every_note_is_one_card_event(t):
    before = len(events(t))
    ckpt(t, "task", "note", "--read", "f.txt", "--read", "README", "--decided", "keep f", "--decided", "no deps",
         "--assume", "f is small", "--question", "why 1?", "--next", "write 2")
    evs = events(t)
    assert len(evs) == before + 1
    assert evs[-1]["type"] == "card"
    assert evs[-1]["data"] == {"read": ["f.txt", "README"], "decided": ["keep f", "no deps"], "assume": ["f is small"],
                               "question": ["why 1?"], "next": "write 2"}
    c = card(t)
    assert c["schema"] == "ckpt-card/1" and c["task"] == "t"
    assert (c["goal"], c["constraints"], c["acceptance"]) == ("g", ["c1"], ["a1"])
    assert c["reads"] == ["f.txt", "README"]
    assert [d["text"] for d in c["decisions"]] == ["keep f", "no deps"]
    assert c["assumptions"][0]["text"] == "f is small" and c["assumptions"][0]["status"] == "unverified"
    assert [q["text"] for q in c["questions"]] == ["why 1?"]
    assert c["next"] == "write 2"
    ckpt(t, "task", "note", "--read", "f.txt")  # already read: not duplicated
    assert card(t)["reads"] == ["f.txt", "README"]


def test_evidence_kinds(t):
    commit = git(t, "rev-parse", "refs/ckpt/t/1").decode().strip()
    ckpt(t, "task", "note", "--fact", "f has one line", "--evidence", "t/1", "--evidence", "f.txt", "--evidence", "text:I counted")
    [fact] = card(t)["facts"]
    assert fact["text"] == "f has one line"
    assert fact["evidence"] == [{"checkpoint": "t/1", "commit": commit}, {"file": "f.txt"}, {"text": "I counted"}]
    ckpt(t, "task", "note", "--failed", "rewrite", "--reason", "too big", "--evidence", "@")
    [failed] = card(t)["failed"]
    assert (failed["text"], failed["reason"], failed["evidence"]) == ("rewrite", "too big", [{"checkpoint": "t/1", "commit": commit}])
    assert events(t)[-1]["data"]["evidence"] == ["t/1"]


def test_evidence_from_a_verifier_result(t):
    from git_ckpt import notes
    from git_ckpt.gitcore import Repo

    commit = git(t, "rev-parse", "refs/ckpt/t/1").decode().strip()
    line = {"schema": "ckpt/1", "checkpoint": "t/1", "verifier": "tests", "status": "failed", "exit_code": 1, "log": "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"}
    notes.append_line(Repo.discover(t), commit, json.dumps(line).encode())
    ckpt(t, "task", "note", "--failed", "quick fix", "--reason", "tests fail", "--evidence", "t/1#tests")
    [failed] = card(t)["failed"]
    assert failed["evidence"] == [{"checkpoint": "t/1", "commit": commit, "verifier": "tests", "result": "failed",
                                   "log": "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"}]
    res = ckpt(t, "task", "note", "--failed", "x", "--reason", "y", "--evidence", "t/1#lint", rc=4)
    assert res.err == ("error: evidence 't/1#lint': no result of verifier 'lint' on t/1\n"
                       "hint: did you mean t/1#tests? git ckpt show t/1 lists its results\n")


def test_confirm_and_refute(t):
    ckpt(t, "task", "note", "--assume", "a", "--assume", "b")
    ckpt(t, "task", "note", "--confirm", "1", "--evidence", "t/1")
    ckpt(t, "task", "note", "--refute", "2", "--evidence", "text:saw otherwise")
    a = card(t)["assumptions"]
    assert [(x["text"], x["status"]) for x in a] == [("a", "confirmed"), ("b", "refuted")]
    assert a[1]["evidence"] == [{"text": "saw otherwise"}]
    res = ckpt(t, "task", "note", "--confirm", "3", rc=2)  # a number out of range is usage: no name of a thing was typed
    assert res.err.startswith("error: --confirm 3: task t has 2 assumption(s)\n")


def test_a_reversed_judgement_shows_only_its_own_evidence(t):
    """Tenth-walkthrough leftover: confirming then refuting one assumption showed both notes'
    evidence under "refuted".  A reversal keeps only its own evidence (the earlier note stays in
    the ledger) and says so; the same judgement again adds to its evidence; the assumption-time
    evidence of an unverified assumption stays when it is first judged."""
    ckpt(t, "task", "note", "--assume", "ints only", "--evidence", "text:read the caller")
    ckpt(t, "task", "note", "--confirm", "1", "--evidence", "text:test A passed")
    assert card(t)["assumptions"][0]["evidence"] == [{"text": "read the caller"}, {"text": "test A passed"}]
    ckpt(t, "task", "note", "--confirm", "1", "--evidence", "text:test B passed")
    assert card(t)["assumptions"][0]["evidence"] == [{"text": "read the caller"}, {"text": "test A passed"}, {"text": "test B passed"}]
    res = ckpt(t, "task", "note", "--refute", "1", "--evidence", "t/1")
    seq = len(events(t))
    assert res.out == (f"task card of t updated (event #{seq}) (assumption 1: confirmed -> refuted: "
                       "the earlier judgement's evidence stays in git ckpt log)\n")
    a = card(t)["assumptions"][0]
    assert (a["status"], [e.get("checkpoint") for e in a["evidence"]]) == ("refuted", ["t/1"])
    assert "assumption 1: ints only [refuted] (evidence: t/1)\n" in ckpt(t, "task", "show").out
    res = ckpt(t, "task", "note", "--confirm", "1", "--evidence", "text:re-ran")
    assert "(assumption 1: refuted -> confirmed: " in res.out
    assert card(t)["assumptions"][0]["evidence"] == [{"text": "re-ran"}]
    assert "(assumption" not in ckpt(t, "task", "note", "--confirm", "1").out  # the same judgement: no reversal


@pytest.mark.parametrize("args, message", [
    ([], "error: nothing to note"),
    (["--evidence", "t/1"], "error: --evidence needs an item to attach to: --fact, --decided, --failed, --assume, --confirm, --refute or --question"),
    (["--failed", "x", "--evidence", "t/1"], "error: --failed needs --reason: say why this path was ruled out"),
    (["--failed", "x", "--reason", "r"], "error: --failed needs --evidence"),
    (["--failed", "x", "--reason", "r", "--evidence", "just words"], "error: evidence 'just words' is not a checkpoint or a verifier result"),
    (["--fact", "x"], "error: --fact needs --evidence"),
    (["--fact", "x", "--failed", "y", "--reason", "r", "--evidence", "t/1"], "error: --fact and --failed in one note"),
    (["--reason", "r", "--decided", "d"], "error: --reason goes with --failed OPTION"),
    (["--read", "../outside"], "error: path '../outside' is outside the worktree"),
])
def test_bad_notes_change_nothing(t, args, message):
    before = events(t)
    res = ckpt(t, "task", "note", *args, rc=2)
    assert res.err.startswith(message), res
    assert events(t) == before


def test_save_next_and_hypothesis_update_the_card_in_the_save_event(t):
    n = len(events(t))
    (t / "f.txt").write_text("2\n")
    ckpt(t, "save", "-m", "two", "--next", "ship", "--hypothesis", "2 is right")
    evs = events(t)
    assert len(evs) == n + 1 and evs[-1]["type"] == "save"
    c = card(t)
    assert (c["next"], c["hypothesis"]) == ("ship", "2 is right")


def test_show_and_log_lines(t):
    ckpt(t, "task", "note", "--failed", "rewrite", "--reason", "too big", "--evidence", "t/1", "--next", "small steps")
    out = ckpt(t, "task", "show").out.splitlines()
    assert "failed 1: rewrite (too big) (evidence: t/1)" in out and "next: small steps" in out
    assert ckpt(t, "log").out.splitlines()[-1].endswith("ruled out: rewrite (too big); next action: small steps")
    ckpt(t, "task", "note", "--next", "x", "other..task", rc=2)
