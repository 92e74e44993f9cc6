"""Crafted refs, messages and ledgers a teammate's remote can carry (attacker pass of the
round-3 changes), each tried as its kind: every command that reads them stays bounded, exits
with a documented code (never 70) and probes no path outside the worktree.

Real clones of a real bare repository, the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import BIN, ckpt, forge_card, git
from test_remote import _team

# Every N is ASCII digits without a leading zero: these are digits to str.isdigit() only, or not
# the number save would write.
ODD_NUMBERS = ["²", "٣", "١٢", "007", "0", "1" * 10, "+1", "1e3"]
READERS = [["fetch"], ["task", "list"], ["task", "list", "--json"], ["list", "--remote", "origin"],
           ["list", "--remote", "origin", "--json"], ["list", "--all"], ["check", "--all"],
           ["log", "--task", "origin:x"], ["handoff", "origin:x"], ["handoff", "--check", "origin:x"],
           ["stats", "origin:x"], ["report", "--html", "-", "--task", "origin:x"]]


def _alice_saved(alice):
    (alice / "f.txt").write_text("work\n")
    ckpt(alice, "save", "-m", "w")
    ckpt(alice, "push")


@pytest.mark.parametrize("number", ODD_NUMBERS)
def test_a_ref_with_an_odd_number_is_no_checkpoint_anywhere(tmp_path, number):
    bare, alice, bob = _team(tmp_path)
    _alice_saved(alice)
    ckpt(alice, "task", "start", "x")  # task x has a ledger, the odd ref has no number
    ckpt(alice, "push", "--task", "x")
    git(alice, "push", "-q", "origin", f"refs/ckpt/default/1:refs/ckpt/x/{number}")
    assert ckpt(bob, "fetch").out.endswith(f"not fetched: 1 ref on origin naming no checkpoint, ledger or promotion "
                                           f"(refs/ckpt/T/N, T/log, T/promoted): refs/ckpt/x/{number}\n")
    assert git(bob, "for-each-ref", f"refs/ckpt-remotes/origin/x/{number}") == b""
    # as an older git ckpt fetched it (or another tool): every reader still takes it for no checkpoint
    git(bob, "fetch", "-q", "origin", f"refs/ckpt/x/{number}:refs/ckpt-remotes/origin/x/{number}")
    for args in READERS:
        res = ckpt(bob, *args, rc=None)
        assert res.rc in (0, 1), (args, res)
        assert "internal error" not in res.err, (args, res)
    listed = ckpt(bob, "list", "--remote", "origin").out  # (an age such as "10s" may hold the digits)
    assert f"x/{number}" not in listed, listed
    assert git(bob, "for-each-ref", "--format=%(refname)", f"refs/ckpt-remotes/origin/x/{number}").decode() == \
        f"refs/ckpt-remotes/origin/x/{number}\n"  # fetch leaves it be (it blocks nothing); it only never counts as N


def test_a_ledger_event_naming_an_odd_number_is_ignored(tmp_path):
    bare, alice, bob = _team(tmp_path)
    _alice_saved(alice)
    commit = git(alice, "rev-parse", "refs/ckpt/default/1").decode().strip()
    ckpt(alice, "task", "start", "evil")
    (alice / "f.txt").write_text("more\n")
    ckpt(alice, "save", "-m", "e")
    # a ledger commit whose event names "evil/²" with a real checkpoint commit
    ledger = "refs/ckpt/evil/log"
    tip = git(alice, "rev-parse", ledger).decode().strip()
    card = git(alice, "rev-parse", f"{tip}:card.json").decode().strip()
    event = json.dumps({"schema": "ckpt-event/1", "seq": 99, "type": "save", "task": "evil", "at": "2026-01-01T00:00:00Z",
                        "data": {"id": "evil/²", "commit": commit}}).encode()
    ev = git(alice, "hash-object", "-w", "--stdin", input=event).decode().strip()
    tree = git(alice, "mktree", input=f"100644 blob {card}\tcard.json\n100644 blob {ev}\tevent.json\n".encode()).decode().strip()
    new = git(alice, "commit-tree", tree, "-p", tip, "-m", "save").decode().strip()
    git(alice, "update-ref", ledger, new)
    git(alice, "push", "-q", "-f", "origin", f"{ledger}:{ledger}")
    ckpt(bob, "fetch")
    for args in (["handoff", "origin:evil"], ["handoff", "--check", "origin:evil"], ["log", "--task", "origin:evil"],
                 ["task", "show", "origin:evil"]):
        res = ckpt(bob, *args, rc=None)
        assert res.rc in (0, 1, 7), (args, res)
        assert "internal error" not in res.err, (args, res)


def test_a_task_name_that_is_not_utf8_is_left_out_and_json_stays_one_document(tmp_path):
    bare, alice, bob = _team(tmp_path)
    _alice_saved(alice)
    subprocess.run(["git", "push", "-q", "origin", b"refs/ckpt/default/1:refs/ckpt/\xff\xfe/1"], cwd=alice, check=True)
    ckpt(bob, "fetch")
    assert ckpt(bob, "list", "--remote", "origin").out.split()[0] == "origin:default/1"
    assert b"\xff" not in subprocess.run([str(BIN / "git-ckpt"), "list", "--remote", "origin"], cwd=bob,
                                         capture_output=True, check=True).stdout
    assert [r["id"] for r in ckpt(bob, "list", "--remote", "origin", "--json").json()["result"]] == ["origin:default/1"]
    rows = ckpt(bob, "task", "list", "--json").json()["result"]
    assert [r["task"] for r in rows if r["fetched"]] == ["origin:default"]


def test_list_reads_a_huge_message_once_and_bounded(tmp_path):
    """A 6 MiB commit message named by 30 refs: list falls back to the manifest for each (over
    the 2 MiB row bound) and holds none of it whole: the output is the same rows."""
    bare, alice, bob = _team(tmp_path)
    _alice_saved(alice)
    raw = git(alice, "cat-file", "commit", "refs/ckpt/default/1")
    headers = raw.split(b"\n\n", 1)[0]
    big = git(alice, "hash-object", "-w", "-t", "commit", "--stdin", input=headers + b"\n\n" + b"A" * (6 << 20) + b"\n").decode().strip()
    for n in range(1, 31):
        git(alice, "update-ref", f"refs/ckpt/big/{n}", big)
    git(alice, "push", "-q", "origin", "refs/ckpt/big/*:refs/ckpt/big/*")
    ckpt(bob, "fetch")
    rows = ckpt(bob, "list", "--remote", "origin", "--task", "big", "--json").json()["result"]
    # the manifest names default/1, not big/N: each row is what a checkpoint that is not its
    # ref's says (corrupt or the manifest's id), never the message's text
    assert len(rows) == 30 and all("AAAA" not in json.dumps(r) for r in rows)


def test_handoff_check_probes_no_path_outside_the_worktree(tmp_path):
    bare, alice, bob = _team(tmp_path)
    secret = tmp_path / "SECRET_EXISTS"
    secret.write_text("x")
    ckpt(alice, "task", "start", "evil")
    (alice / "f.txt").write_text("w\n")
    ckpt(alice, "task", "note", "--read", "f.txt")
    ckpt(alice, "save", "-m", "e")
    # rewrite the card of the ledger tip: reads name paths outside any worktree
    ledger = "refs/ckpt/evil/log"
    reads = [str(secret), str(tmp_path / "nope"), "../SECRET_EXISTS", "a/../../x", ".git/config", "f.txt"]
    forge_card(alice, "evil", lambda card: card.update(reads=reads))
    git(alice, "push", "-q", "-f", "origin", f"{ledger}:{ledger}", "refs/ckpt/evil/1:refs/ckpt/evil/1")
    ckpt(bob, "fetch")
    res = ckpt(bob, "handoff", "--check", "origin:evil", "--json", rc=1).json()["result"]
    [files] = [c for c in res["checks"] if c["check"] == "files"]
    assert not files["ok"]
    # every foreign path is named as such, none as merely "missing" (which would tell whether it exists)
    assert "missing: f.txt" in files["detail"]
    for p in (str(secret), str(tmp_path / "nope"), "../SECRET_EXISTS", "a/../../x", ".git/config"):
        assert p in files["detail"].split("not a path of this worktree (not looked up): ", 1)[1], files["detail"]
