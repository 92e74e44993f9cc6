"""A teammate's ledger is JSON anyone who can push wrote: every view of a fetched task reads
it without a traceback, whatever shapes its events' data has, and within bounded memory.

Ledgers are written with ``git fast-import`` into a real bare remote, fetched with the real
``git ckpt fetch``, and read through the real ``git-ckpt`` entry point.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ckpt, git

TYPES = ["save", "restore", "undo", "verify", "promote", "gate-refused", "task-start", "card", "push", "fetch",
         "handoff", "drop", "prune", "note", "other"]
# every key a view of the ledger reads from an event's data
KEYS = ["assume", "commit", "decided", "done", "exit_code", "fact", "failed", "forced", "from", "from_commit", "goal",
        "id", "isolated", "kind", "message", "next", "paths", "pruned", "question", "read", "reason", "remote",
        "reset_head", "result", "reused", "reused_from", "status", "target", "target_commit", "verifier", "worktree",
        "confirm", "refute", "agent", "session", "duration", "tasks", "notes_added"]
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False),
                    st.text(max_size=12), st.sampled_from(["t1/1", "origin:t1/1", "../x", "passed", "error"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                      max_leaves=6)
# many keys per event (each view reads a few of them, by type), every type in each ledger
EVENTS = st.lists(st.tuples(st.sampled_from(TYPES), st.dictionaries(st.sampled_from(KEYS), VALUES, min_size=10, max_size=25)),
                  min_size=len(TYPES), max_size=len(TYPES) + 4).map(
    lambda evs: [(TYPES[i], d) if i < len(TYPES) else (t, d) for i, (t, d) in enumerate(evs)])
CARD = json.dumps({"schema": "ckpt-card/1", "task": "q"}).encode()


def _fast_import(bare, ref: str, blobs_per_commit: list[list[tuple[str, bytes]]]) -> None:
    """Write a first-parent chain of commits on ``ref``, each holding the named blobs."""
    out = []
    for i, files in enumerate(blobs_per_commit):
        out.append(f"commit {ref}\ncommitter m <m@x> 0 +0000\ndata 2\ne\n".encode())
        if i == 0:
            out.append(b"deleteall\n")
        for name, data in files:
            out.append(f"M 100644 inline {name}\ndata {len(data)}\n".encode() + data + b"\n")
    git(bare, "fast-import", "--quiet", "--force", input=b"".join(out))


def _event(seq: int, type: str, data: dict) -> bytes:
    return json.dumps({"schema": "ckpt/1", "seq": seq, "type": type, "task": "q", "at": "2026-12-01T04:00:00Z",
                       "host": "h", "user": "u", "data": data, "prev": None, "hash": ""}).encode()


@pytest.mark.once
@settings(max_examples=int(os.environ.get("CKPT_LEDGER_EXAMPLES", "6")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(events=EVENTS)
def test_every_view_reads_any_event_data(tmp_path_factory, events):
    from test_remote import _team

    tmp = tmp_path_factory.mktemp("ledger")
    bare, _alice, bob = _team(tmp)
    _fast_import(bare, "refs/ckpt/q/log", [[("card.json", CARD), ("event.json", _event(i + 1, t, d))]
                                           for i, (t, d) in enumerate(events)])
    ckpt(bob, "fetch")
    for args in (["log", "--task", "origin:q"], ["log", "--graph", "--task", "origin:q"], ["stats", "origin:q"],
                 ["handoff", "origin:q"], ["task", "show", "origin:q"], ["report", "--html", "-", "--task", "origin:q"],
                 ["log", "--task", "origin:q", "--json"], ["task", "list"]):
        res = ckpt(bob, *args, rc=None)
        assert res.rc in (0, 7), (args, res)  # shown, or refused as corrupt: never an internal error
        assert "Traceback" not in res.err and "internal error" not in res.err, (args, res)


def test_a_ledger_too_large_to_read_is_refused_not_loaded(tmp_path):
    """Attack pass: 30 commits sharing one 60 MiB event blob (a few MB pushed) made stats take
    7 GB.  An event larger than the ledger's bound is corrupt (exit 7), read by no view."""
    from test_remote import _team

    bare, _alice, bob = _team(tmp_path)
    big = _event(1, "note", {"x": [0] * (1 << 20)})  # 2 MiB of JSON, over the bound
    _fast_import(bare, "refs/ckpt/big/log", [[("card.json", CARD), ("event.json", big)]] * 3)
    ckpt(bob, "fetch")
    for args in (["stats", "origin:big"], ["log", "--task", "origin:big"], ["handoff", "origin:big"],
                 ["log", "--graph", "--task", "origin:big"]):
        res = ckpt(bob, *args, rc=7)
        assert "event.json is larger than" in res.err, (args, res)


def test_no_ledger_field_starts_a_line_of_its_own(tmp_path):
    """Attack pass: a save's id or kind, a restore's ``from`` and any event's ``at`` went into
    ``log --graph`` raw, so a newline in one drew a forged event of its own.  Every field of
    every event type is escaped: each event is one line whatever its fields hold."""
    from test_remote import _team

    bare, _alice, bob = _team(tmp_path)
    evil = "x\nFORGED \x1b[2J"
    fields = [("save", {"id": evil, "kind": "manual", "message": "m"}),
              ("save", {"id": "q/1", "kind": evil, "message": "m"}),
              ("save", {"id": "q/2", "kind": "manual", "message": evil}),
              ("restore", {"target": "q/1", "from": evil}),
              ("restore", {"target": evil, "from": "q/2"}),
              ("undo", {"target": "q/2", "from": evil, "paths": [evil]}),
              ("verify", {"id": "q/1", "verifier": evil, "status": "passed", "exit_code": 0}),
              ("verify", {"id": evil, "verifier": "t", "status": evil, "reused": True, "reused_from": evil}),
              ("promote", {"id": evil}),
              ("handoff", {"id": evil}),
              ("note", {"fact": evil})]
    events = []
    for i, (t, d) in enumerate(fields):
        ev = json.loads(_event(i + 1, t, d))
        if i == 4:
            ev["at"] = evil
        events.append([("card.json", CARD), ("event.json", json.dumps(ev).encode())])
    _fast_import(bare, "refs/ckpt/q/log", events)
    ckpt(bob, "fetch")
    for args in (["log", "--graph", "--task", "origin:q"], ["log", "--task", "origin:q"]):
        out = ckpt(bob, *args).out
        lines = out.splitlines()
        assert not any(line.startswith("FORGED") for line in lines), (args, out)
        assert "\x1b" not in out, (args, out)
        assert "\\nFORGED" in out, (args, out)
    graph = ckpt(bob, "log", "--graph", "--task", "origin:q").out.splitlines()
    assert sum(1 for line in graph if "FORGED" in line) >= len(fields) - 1, graph


@pytest.mark.parametrize("kind", ["tree", "blob", "tag"])
def test_a_ledger_ref_naming_no_commit_is_corrupt_in_every_view(tmp_path, kind):
    """Attack pass: a fetched ``refs/ckpt/q/log`` naming a tree made ``log`` say "no events"
    (its walk read the tree as an empty chain) while ``handoff`` called it corrupt, and
    ``log --verify`` called the commit missing.  The tip must be a commit (a tag of one too: the
    walks would peel it, the readers would not): every view says what it is, exit 7."""
    from test_remote import _team

    bare, _alice, bob = _team(tmp_path)
    _fast_import(bare, "refs/ckpt/q/log", [[("card.json", CARD), ("event.json", _event(1, "note", {"fact": "f"}))]])
    commit = git(bare, "rev-parse", "refs/ckpt/q/log").decode().strip()
    target = {"tree": lambda: git(bare, "rev-parse", "refs/ckpt/q/log^{tree}"),
              "blob": lambda: git(bare, "hash-object", "-w", "--stdin", input=b"not a ledger\n"),
              "tag": lambda: git(bare, "mktag", input=f"object {commit}\ntype commit\ntag t\n"
                                                  "tagger T <t@e> 0 +0000\n\nt\n".encode())}[kind]().decode().strip()
    git(bare, "update-ref", "refs/ckpt/q/log", target)
    ckpt(bob, "fetch")
    said = f"ledger of task origin:q is corrupt at {target[:12]}: object {target} is a {kind}, not a commit"
    for args in (["log", "--task", "origin:q"], ["log", "-n", "1", "--task", "origin:q"], ["log", "--graph", "--task", "origin:q"],
                 ["stats", "origin:q"], ["handoff", "origin:q"], ["task", "show", "origin:q"],
                 ["report", "--html", "-", "--task", "origin:q"]):
        res = ckpt(bob, *args, rc=7)
        assert res.err.splitlines()[0] == f"error: {said}" and res.out == "", (args, res)
    error = ckpt(bob, "log", "--task", "origin:q", "--json", rc=7).json()["error"]
    assert (error["code"], error["message"]) == ("corrupt", said), error
    res = ckpt(bob, "log", "--verify", "--task", "origin:q", rc=1)
    assert f"ledger commit {target[:12]}: object {target} is a {kind}, not a commit" in res.err, res


def test_a_fetched_ledger_naming_one_large_event_many_times_is_refused_within_a_bound(tmp_path):
    """Attack 25: 40 ledger commits naming one ~1 MiB event (a push of under 1 MB) made stats,
    log --graph and report hold a gigabyte each, growing with every commit.  One walk of a
    fetched ledger decodes at most 8 MiB of events: past that it is corrupt (exit 7)."""
    from test_remote import _team

    bare, _alice, bob = _team(tmp_path)
    big = _event(1, "note", {"x": [0] * 300_000})  # 600 KB: within the bound of one event
    assert 500_000 < len(big) < 1 << 20
    _fast_import(bare, "refs/ckpt/bomb/log", [[("card.json", CARD), ("event.json", big)]] * 16)
    ckpt(bob, "fetch")
    for args in (["stats", "origin:bomb"], ["log", "--task", "origin:bomb"], ["log", "--graph", "--task", "origin:bomb"],
                 ["report", "--html", "-", "--task", "origin:bomb"]):
        res = ckpt(bob, *args, rc=7)
        assert "the fetched ledger holds more than 8 MiB of events, more than git ckpt reads of a teammate's ledger" in res.err, (args, res)
    problems = ckpt(bob, "log", "--verify", "--task", "origin:bomb", "--json", rc=1).out
    assert '"ok":false' in problems  # the first broken link ends its walk (within the same bound past it)
    assert ckpt(bob, "handoff", "origin:bomb").out.startswith("# Handoff: origin:bomb\n")  # reads only what it shows


def test_odd_forced_values_and_a_clock_gone_back_are_read_as_what_they_are(tmp_path):
    """Attack 25: ``"forced": "no"`` showed ``(forced)`` and counted as a forced promotion (the
    gate reads ``is True``), and a verify stamped before the restore it follows made a negative
    median recovery time.  Only ``true`` is forced; a clock gone back measures nothing."""
    from test_remote import _team

    bare, _alice, bob = _team(tmp_path)

    def at(ev: bytes, stamp: str) -> bytes:
        return ev.replace(b'"at": "2026-12-01T04:00:00Z"', f'"at": "{stamp}"'.encode())

    events = [at(_event(1, "save", {"id": "q/1", "commit": "0" * 40, "kind": "manual"}), "2026-12-01T04:00:00Z"),
              at(_event(2, "promote", {"id": "q/1", "commit": "0" * 40, "forced": "no"}), "2026-12-01T04:00:01Z"),
              at(_event(3, "restore", {"target": "q/1", "from": "q/2", "from_commit": "1" * 40, "target_commit": "0" * 40}),
                 "2026-12-01T04:00:20Z"),
              at(_event(4, "verify", {"id": "q/1", "verifier": "t", "status": "passed", "exit_code": 0}), "2026-12-01T04:00:05Z")]
    _fast_import(bare, "refs/ckpt/q/log", [[("card.json", CARD), ("event.json", e)] for e in events])
    ckpt(bob, "fetch")
    assert "(forced)" not in ckpt(bob, "log", "--task", "origin:q").out
    assert "(forced)" not in ckpt(bob, "log", "--graph", "--task", "origin:q").out
    st = ckpt(bob, "stats", "origin:q", "--json").json()["result"]
    assert (st["promotions"], st["forced_promotions"], st["recoveries"], st["recovery_median_seconds"]) == (1, 0, 0, None), st
