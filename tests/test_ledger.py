"""The ledger is a hash chain: ``git ckpt log --verify`` catches rewritten, deleted and edited events,
naming the first bad one, when the tampering is done with plain git plumbing."""

from __future__ import annotations

import json

import msgspec
import pytest

from conftest import ckpt, git

from git_ckpt.model import Event, encode

LOG = "refs/ckpt/t/log"
DATES = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


@pytest.fixture
def task_repo(repo):
    """Task t with six events: start, save t/1, card, save t/2, card, save t/3."""
    ckpt(repo, "task", "start", "t", "--goal", "make it work", fsck=False)
    (repo / "a.txt").write_text("one\n")
    ckpt(repo, "save", "-m", "first", fsck=False)
    ckpt(repo, "task", "note", "--decided", "use a.txt", fsck=False)
    (repo / "a.txt").write_text("two\n")
    ckpt(repo, "save", "-m", "second", fsck=False)
    ckpt(repo, "task", "note", "--failed", "rewrite everything", "--reason", "too risky", "--evidence", "t/2", fsck=False)
    (repo / "a.txt").write_text("three\n")
    ckpt(repo, "save", "-m", "third", fsck=False)
    return repo


def chain(repo) -> list[str]:
    return git(repo, "rev-list", "--first-parent", "--reverse", LOG).decode().split()


def blob(repo, commit: str, name: str) -> bytes:
    return git(repo, "cat-file", "blob", f"{commit}:{name}")


def put_blob(repo, data: bytes) -> str:
    return git(repo, "hash-object", "-w", "--stdin", input=data).decode().strip()


def mktree(repo, event_blob: str, card_blob: str) -> str:
    spec = f"100644 blob {card_blob}\tcard.json\n100644 blob {event_blob}\tevent.json\n".encode()
    return git(repo, "mktree", input=spec).decode().strip()


def commit_tree(repo, tree: str, parent: str | None, message: str) -> str:
    args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
    return git(repo, *args, env=DATES).decode().strip()


def tree_of(repo, commit: str) -> str:
    return git(repo, "rev-parse", f"{commit}^{{tree}}").decode().strip()


def rebuild(repo, parent: str, commits: list[str]) -> str:
    """Re-create ``commits`` (same trees) on top of ``parent``; return the new head."""
    for c in commits:
        parent = commit_tree(repo, tree_of(repo, c), parent, f"rebuilt {c[:7]}")
    return parent


def repoint(repo, new: str) -> None:
    old = git(repo, "rev-parse", LOG).decode().strip()
    git(repo, "update-ref", LOG, new, old)


def verify_fails(repo, first: str) -> str:
    res = ckpt(repo, "log", "--verify", "--task", "t", rc=1)
    err = res.err
    assert res.err.startswith(f"error: ledger of t is broken: {first}"), res
    res = ckpt(repo, "log", "--verify", "--task", "t", "--json", rc=1)
    assert res.err == ""  # one JSON document names every problem; nothing repeated on stderr
    env = res.json()
    assert env["result"]["ok"] is False and env["result"]["problems"][0].startswith(first), env
    return err


def test_intact_ledger_verifies(task_repo):
    res = ckpt(task_repo, "log", "--verify")
    assert res.out == "ledger of t: intact (6 events)\n"
    assert len(chain(task_repo)) == 6
    env = ckpt(task_repo, "log", "--verify", "--json").json()
    assert env["result"] == {"task": "t", "ok": True, "problems": []}


def test_rewritten_old_event_without_rehash_is_caught(task_repo):
    c = chain(task_repo)
    ev = json.loads(blob(task_repo, c[2], "event.json"))
    ev["data"]["decided"] = ["use b.txt"]
    new_blob = put_blob(task_repo, json.dumps(ev, sort_keys=True).encode() + b"\n")
    card_blob = git(task_repo, "rev-parse", f"{c[2]}:card.json").decode().strip()
    new3 = commit_tree(task_repo, mktree(task_repo, new_blob, card_blob), c[1], "ckpt ledger t #3: decided")
    repoint(task_repo, rebuild(task_repo, new3, c[3:]))
    verify_fails(task_repo, f"event #3 ({new3[:12]}): event.json does not match its hash (edited)")


def test_rewritten_old_event_with_consistent_rehash_is_caught_by_checkpoint_anchors(task_repo):
    """A forger who recomputes every hash above the edit still cannot move the ledger heads that
    checkpoints t/2 and t/3 recorded in their immutable manifests."""
    c = chain(task_repo)
    parent = c[1]
    prev_hash = msgspec.json.decode(blob(task_repo, c[1], "event.json"), type=Event).hash
    new_commits = []
    for i, old in enumerate(c[2:], start=3):
        ev = msgspec.json.decode(blob(task_repo, old, "event.json"), type=Event)
        if i == 3:
            ev.data = {"decided": ["use b.txt"]}
        ev.prev = prev_hash
        ev.hash = ev.compute_hash()
        prev_hash = ev.hash
        card_blob = git(task_repo, "rev-parse", f"{old}:card.json").decode().strip()
        parent = commit_tree(task_repo, mktree(task_repo, put_blob(task_repo, encode(ev)), card_blob), parent, f"forged #{i}")
        new_commits.append(parent)
    repoint(task_repo, parent)
    err = verify_fails(task_repo, f"event #3 ({new_commits[0][:12]}): differs from the history checkpoint t/2 recorded")
    assert f"checkpoint t/2 records ledger head {c[2][:12]}" not in err  # only the first problem is printed


def test_rewritten_commit_with_same_tree_is_caught(task_repo):
    """Re-committing an old ledger commit (new author/message, same tree) and rebuilding above it
    leaves every hash intact, so the checkpoint anchors must name it."""
    c = chain(task_repo)
    new3 = commit_tree(task_repo, tree_of(task_repo, c[2]), c[1], "innocent looking")
    repoint(task_repo, rebuild(task_repo, new3, c[3:]))
    verify_fails(task_repo, f"event #3 ({new3[:12]}): differs from the history checkpoint t/2 recorded")


def test_deleted_event_is_caught(task_repo):
    c = chain(task_repo)
    head = rebuild(task_repo, c[1], c[3:])  # drop event #3
    repoint(task_repo, head)
    new_chain = chain(task_repo)
    assert len(new_chain) == 5
    verify_fails(task_repo, f"event #3 ({new_chain[2][:12]}): sequence number is 4, expected 3 (an event was deleted or inserted)")


def test_deleted_last_events_are_caught_by_a_later_checkpoint(task_repo):
    """Dropping the newest events (re-pointing the ref back) is caught when a checkpoint saved
    after them recorded the longer chain."""
    (task_repo / "a.txt").write_text("four\n")
    ckpt(task_repo, "task", "note", "--next", "ship it", fsck=False)  # event #7
    ckpt(task_repo, "save", "-m", "fourth", fsck=False)  # t/4 anchors #7; event #8
    c = chain(task_repo)
    repoint(task_repo, c[5])  # back to event #6
    verify_fails(task_repo, "event #7 (missing): differs from the history checkpoint t/4 recorded")


def test_event_json_edited_in_place_is_caught(task_repo):
    c = chain(task_repo)
    head = c[-1]
    text = blob(task_repo, head, "event.json").replace(b'"first"', b'"FIRST"').replace(b'"third"', b'"THIRD"')
    assert b"THIRD" in text
    card_blob = git(task_repo, "rev-parse", f"{head}:card.json").decode().strip()
    new = commit_tree(task_repo, mktree(task_repo, put_blob(task_repo, text), card_blob), c[-2], "ckpt ledger t #6")
    repoint(task_repo, new)
    verify_fails(task_repo, f"event #6 ({new[:12]}): event.json does not match its hash (edited)")


def test_unreadable_event_is_caught(task_repo):
    c = chain(task_repo)
    card_blob = git(task_repo, "rev-parse", f"{c[-1]}:card.json").decode().strip()
    new = commit_tree(task_repo, mktree(task_repo, put_blob(task_repo, b"{not json\n"), card_blob), c[-2], "junk")
    repoint(task_repo, new)
    verify_fails(task_repo, f"event #6 ({new[:12]}): unreadable")


def test_log_json_and_since(task_repo):
    env = ckpt(task_repo, "log", "--json").json()
    events = env["result"]
    assert [e["type"] for e in events] == ["task-start", "save", "card", "save", "card", "save"]
    assert [e["seq"] for e in events] == [1, 2, 3, 4, 5, 6]
    assert events[4]["data"]["failed"] == "rewrite everything"
    assert all(e["prev"] == p["hash"] for p, e in zip(events, events[1:], strict=False))
    assert ckpt(task_repo, "log", "--since", "2999-01-01T00:00:00Z").out == "no events in task t\n"
    assert len(ckpt(task_repo, "log", "--since", "1h", "--json").json()["result"]) == 6
    out = ckpt(task_repo, "log").out.splitlines()
    assert out[1].endswith("checkpoint saved: t/1")
    assert out[4].endswith("ruled out: rewrite everything (too risky)")
    ckpt(task_repo, "log", "--since", "yesterday", rc=2)


def test_dropping_the_newest_verify_and_promote_events_is_caught(task_repo):
    """Hostile report: re-pointing refs/ckpt/T/log at an older ledger commit dropped the verify
    and promote events and log --verify still said intact.  The promoted ref must be named by a
    promote event on the chain."""
    git(task_repo, "config", "ckpt.verifier.ok.command", "true")
    ckpt(task_repo, "verify")
    assert [json.loads(blob(task_repo, c, "event.json"))["type"] for c in chain(task_repo)[-2:]] == ["verify", "promote"]
    assert ckpt(task_repo, "log", "--verify").out == "ledger of t: intact (8 events)\n"
    before_verify = chain(task_repo)[-3]
    repoint(task_repo, before_verify)
    promoted = git(task_repo, "rev-parse", "refs/ckpt/t/promoted").decode().strip()
    err = verify_fails(task_repo, f"refs/ckpt/t/promoted names t/3 ({promoted[:12]}), but no promote event on the ledger promoted it")
    assert err == (f"error: ledger of t is broken: refs/ckpt/t/promoted names t/3 ({promoted[:12]}), but no promote event on the "
                   "ledger promoted it (events were dropped or the ref was moved by hand)\n"
                   "hint: the ledger was rewritten or edited; compare with a teammate's copy (git ckpt fetch)\n")
    assert chain(task_repo)[-1] == before_verify  # a check changes nothing


def test_text_that_is_not_utf8_is_refused_naming_the_option(repo):
    """Hostile report: save -m $'bad\\xffmsg' and task start --goal $'g\\xff' crashed (exit 70)
    encoding the text.  Every stored text option must be UTF-8: exit 2, one error line."""
    ckpt(repo, "task", "start", "t", fsck=False)
    refs = git(repo, "for-each-ref")
    for args, name in ((["save", "-m", b"bad\xffmsg"], "--message"), (["task", "start", "t2", "--goal", b"g\xff"], "--goal"),
                       (["task", "note", "--decided", b"\xfe"], "--decided"), (["save", "--next", b"n\xff"], "--next"),
                       (["show", b"t/\xff"], "CKPT"), (["task", "start", b"t\xff"], "NAME"),
                       (["attempt", "-m", b"\xff", "--", "true"], "--message")):
        res = ckpt(repo, *args, rc=2)
        assert res.err == (f"error: {name} is not valid UTF-8 text\n"
                           "hint: git ckpt stores text as UTF-8: convert it first (e.g. with iconv -t UTF-8)\n"), res
        at = args.index("--") if "--" in args else len(args)
        env = ckpt(repo, *args[:at], "--json", *args[at:], rc=2).json()
        assert env["error"]["code"] == "usage" and env["error"]["message"] == f"{name} is not valid UTF-8 text"
    assert git(repo, "for-each-ref") == refs  # nothing saved or logged
    assert git(repo, "status", "--porcelain") == b""
