"""Lost races, driven for real: another writer changes a ref between git ckpt's read of it and its
compare-and-swap (``$GIT_CKPT_FAULT`` names the step, ``$GIT_CKPT_FAULT_RUN`` runs the other
writer there, once).  Every ref git ckpt writes (checkpoint, promoted, ledger, notes, notes
merge, gc's delete) goes through one retry primitive (:meth:`git_ckpt.gitcore.Repo.swap`): the
other writer's update is kept, ours lands on top of it, and what must happen once (a ledger
event, a note line) happens once."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from conftest import ckpt, git, init_repo
from test_verify import events, promoted, rev, verifier, write_config


def racing(root: Path, step: str, other: str) -> dict[str, str]:
    """The environment that runs shell command ``other`` (in ``root``) once, at ``step``."""
    marker = root.parent / f"raced-{step}"
    once = f"[ -e {shlex.quote(str(marker))} ] || {{ : > {shlex.quote(str(marker))}; cd {shlex.quote(str(root))} && {other}; }}"
    return {"GIT_CKPT_FAULT": step, "GIT_CKPT_FAULT_RUN": once}


def raced(root: Path, step: str) -> bool:
    return (root.parent / f"raced-{step}").exists()


@pytest.fixture
def two(tmp_path):
    """A repository with checkpoints default/1 and default/2 (different trees)."""
    root = init_repo(tmp_path / "r")
    ckpt(root, "save", "-m", "one")
    (root / "f").write_text("two\n")
    ckpt(root, "save", "-m", "two")
    return root


def reflog(root: Path, ref: str) -> list[str]:
    return git(root, "reflog", "show", "--format=%H %gs", ref).decode().splitlines()


def test_promote_that_loses_the_race_for_the_promoted_ref_logs_one_event(two):
    """The double ``promote`` event: another writer moves ``refs/ckpt/T/promoted`` after
    promote appended its event and before its compare-and-swap; promote rebuilds on the new
    value and moves the ref once more, without a second event."""
    one, two_ = rev(two, "refs/ckpt/default/1"), rev(two, "refs/ckpt/default/2")
    env = racing(two, "promote.before-ref", f"git update-ref --create-reflog -m other refs/ckpt/default/promoted {two_}")
    res = ckpt(two, "promote", "1", "--force", "--json", env=env)
    assert raced(two, "promote.before-ref")
    assert promoted(two) == one
    assert [e["data"]["id"] for e in events(two) if e["type"] == "promote"] == ["default/1"]
    assert res.json()["result"]["changed"] is True
    # the other writer's update is in the reflog, ours on top of it
    assert [line.split(" ", 1)[0] for line in reflog(two, "refs/ckpt/default/promoted")] == [one, two_]
    ckpt(two, "log", "--verify")


def test_promote_racing_another_promote_through_the_ledger_logs_one_event_each(two):
    """The same race with a real ``git ckpt promote`` as the other writer, arriving while our
    promote appends its event (so both the ledger append and the ref write lose once): two
    promotions, two events, ours last."""
    one = rev(two, "refs/ckpt/default/1")
    env = racing(two, "ledger.before-ref", "git ckpt promote 2 --force")
    ckpt(two, "promote", "1", "--force", env=env)
    assert raced(two, "ledger.before-ref")
    assert [e["data"]["id"] for e in events(two) if e["type"] == "promote"] == ["default/2", "default/1"]
    assert promoted(two) == one
    ckpt(two, "log", "--verify")


def test_verify_that_loses_the_race_for_the_promoted_ref_logs_one_promote_event(two):
    write_config(two, verifier("ok", ["true"]))
    ckpt(two, "save", "-m", "three")
    two_ = rev(two, "refs/ckpt/default/2")
    env = racing(two, "promote.before-ref", f"git update-ref refs/ckpt/default/promoted {two_}")
    ckpt(two, "verify", env=env)
    assert raced(two, "promote.before-ref")
    assert promoted(two) == rev(two, "refs/ckpt/default/3")
    assert [e["data"]["id"] for e in events(two) if e["type"] == "promote"] == ["default/3"]


def test_a_ledger_append_that_loses_the_race_keeps_both_events_once(two):
    env = racing(two, "ledger.before-ref", "git ckpt task note --question theirs")
    ckpt(two, "task", "note", "--question", "ours", env=env)
    assert raced(two, "ledger.before-ref")
    evs = events(two)
    assert [e["seq"] for e in evs] == list(range(1, len(evs) + 1))
    notes = [json.dumps(e["data"]) for e in evs if e["type"] not in ("save",)]
    assert sum("theirs" in n for n in notes) == 1 and sum("ours" in n for n in notes) == 1
    assert "ours" in json.dumps(evs[-1]["data"])
    ckpt(two, "log", "--verify")


def test_a_save_that_loses_its_number_takes_the_next_one(two):
    """Another writer creates ``refs/ckpt/T/3`` first: the save becomes T/4, logged once."""
    one = rev(two, "refs/ckpt/default/1")
    (two / "f").write_text("three\n")
    env = racing(two, "save.before-ref", f"git update-ref refs/ckpt/default/3 {one}")
    res = ckpt(two, "save", "-m", "mine", env=env)
    assert raced(two, "save.before-ref")
    assert "checkpoint saved: default/4" in res.out
    assert rev(two, "refs/ckpt/default/3") == one
    assert git(two, "log", "-1", "--format=%s", "refs/ckpt/default/4").decode().strip() == "ckpt default/4: mine"
    assert [e["data"]["id"] for e in events(two) if e["type"] == "save"] == ["default/1", "default/2", "default/4"]


def test_a_note_append_that_loses_the_race_keeps_both_lines(two):
    """``verify`` appends its result line while another writer (``git notes append``) adds one
    to the same note: both lines are kept, ours once."""
    write_config(two, verifier("ok", ["true"]))
    ckpt(two, "save", "-m", "three")
    three = rev(two, "refs/ckpt/default/3")
    theirs = json.dumps({"schema": "ckpt/1", "verifier": "theirs", "status": "passed"})
    env = racing(two, "notes.before-ref", f"git notes --ref=ckpt append -m {shlex.quote(theirs)} {three}")
    ckpt(two, "verify", env=env)
    assert raced(two, "notes.before-ref")
    lines = [json.loads(ln) for ln in git(two, "notes", "--ref=ckpt", "show", three).splitlines() if ln.strip()]
    assert sorted(ln["verifier"] for ln in lines) == ["ok", "theirs"]
    assert [e["type"] for e in events(two)].count("verify") == 1


def test_gc_leaves_a_checkpoint_that_changed_while_it_ran(two):
    """gc deletes a ref only while it still names the commit it judged: another writer moving
    ``refs/ckpt/T/1`` after the prune event leaves it alone (reported as skipped)."""
    two_ = rev(two, "refs/ckpt/default/2")
    env = racing(two, "gc.after-event", f"git update-ref refs/ckpt/default/1 {two_}")
    res = ckpt(two, "gc", "--keep", "1", "--json", env=env)
    assert raced(two, "gc.after-event")
    assert rev(two, "refs/ckpt/default/1") == two_
    assert "changed while gc ran" in json.dumps(res.json())


def test_a_notes_merge_that_loses_the_race_keeps_every_line(tmp_path):
    """``fetch`` merges a teammate's notes while a local verifier appends a line: the merge is
    rebuilt on the new value, so the local line, the teammate's line and ours all stay."""
    upstream = init_repo(tmp_path / "up")
    ckpt(upstream, "save", "-m", "shared")
    mine = tmp_path / "mine"
    git(tmp_path, "clone", "-q", str(upstream), str(mine))
    ckpt(mine, "save", "-m", "local")
    local = rev(mine, "refs/ckpt/default/1")
    git(mine, "notes", "--ref=ckpt", "add", "-m", json.dumps({"verifier": "before"}), local)
    shared = rev(upstream, "refs/ckpt/default/1")
    git(upstream, "notes", "--ref=ckpt", "add", "-m", json.dumps({"verifier": "teammate"}), shared)
    ckpt(upstream, "push", rc=None)  # (no remote there: the notes ref is what is fetched)
    env = racing(mine, "notes-merge.before-ref",
                 f"git notes --ref=ckpt append -m {shlex.quote(json.dumps({'verifier': 'racer'}))} {local}")
    ckpt(mine, "fetch", env=env)
    assert raced(mine, "notes-merge.before-ref")
    mine_lines = git(mine, "notes", "--ref=ckpt", "show", local).decode()
    assert '"before"' in mine_lines and '"racer"' in mine_lines
    assert '"teammate"' in git(mine, "notes", "--ref=ckpt", "show", shared).decode()
