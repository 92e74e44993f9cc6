"""A whole interrupted task, resumed by a process that knows nothing of the first: the handoff
receipt, ``handoff --check`` and its drift reports, ``diff --scope`` and ``stats``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import git_ckpt
from conftest import ckpt, git

HAVE_VERIFY = (Path(git_ckpt.__file__).parent / "cli" / "cmd_verify.py").exists()
TOML = '[[verifier]]\nname = "tests"\ncommand = "grep -q fixed app.py && test ! -e ../flag"\nrequired = true\n'


def record_pass(repo: Path, cid: str) -> None:
    """Verify ``cid`` (the real verifier when this git-ckpt has one, else a result line)."""
    if HAVE_VERIFY:
        ckpt(repo, "verify", cid)
        return
    from git_ckpt import notes
    from git_ckpt.gitcore import Repo

    r = Repo.discover(repo)
    commit = git(repo, "rev-parse", f"refs/ckpt/{cid}").decode().strip()
    tree = git(repo, "rev-parse", f"{commit}^{{tree}}").decode().strip()
    line = {"schema": "ckpt/1", "checkpoint": cid, "verifier": "tests", "definition": "0" * 64, "tree": tree,
            "overlay": "", "status": "passed", "exit_code": 0, "duration": 0.1, "started_at": "2026-01-01T00:00:00Z",
            "host": "h", "log": "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", "reused": False, "required": True}
    notes.append_line(r, commit, json.dumps(line, sort_keys=True).encode())


@pytest.fixture
def task(repo):
    """fix-auth: two checkpoints, a failed path with evidence, decisions, an assumption, a
    question, the next step, and a passing verifier on the latest checkpoint."""
    (repo / "app.py").write_text("def login(user):\n    return user.name\n\n")
    (repo / "lib.py").write_text("x = 1\n")
    (repo / ".ckpt.toml").write_text(TOML)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "app")
    if HAVE_VERIFY:
        ckpt(repo, "trust", fsck=False)
    ckpt(repo, "task", "start", "fix-auth", "--goal", "login must not crash on a null user",
         "--constraint", "no API change", "--acceptance", "tests pass", fsck=False)
    (repo / "app.py").write_text("def login(user):\n    return user.name if user else None  # fixed\n\n")
    ckpt(repo, "save", "-m", "guard", "--next", "try a decorator in app.py", fsck=False)
    ckpt(repo, "task", "note", "--failed", "decorator", "--reason", "hides the traceback", "--evidence", "fix-auth/1", fsck=False)
    ckpt(repo, "task", "note", "--decided", "guard inside login()", "--read", "app.py", fsck=False)
    ckpt(repo, "task", "note", "--assume", "user is never a string", "--assume", "callers handle None", fsck=False)
    ckpt(repo, "task", "note", "--confirm", "2", "--evidence", "fix-auth/1", fsck=False)
    ckpt(repo, "task", "note", "--question", "should None log a warning?", fsck=False)
    (repo / "new_test.py").write_text("a\nb\nc\n")
    (repo / "lib.py").unlink()
    ckpt(repo, "save", "-m", "tests", "--next", "add a regression test in new_test.py", fsck=False)
    record_pass(repo, "fix-auth/2")
    return repo


def test_resume_receipt_in_a_fresh_process(task):
    env = ckpt(task, "handoff", "--format", "json").json()
    assert env["schema"] == "ckpt/1" and env["command"] == "handoff"
    r = env["result"]
    assert r["task"] == "fix-auth"
    assert r["goal"] == "login must not crash on a null user"
    assert r["constraints"] == ["no API change"] and r["acceptance"] == ["tests pass"]
    assert [d["text"] for d in r["decided"]] == ["guard inside login()"]
    assert r["touched"] == [
        {"path": "app.py", "status": "M", "added": 1, "deleted": 1, "binary": False},
        {"path": "lib.py", "status": "D", "added": 0, "deleted": 1, "binary": False},
        {"path": "new_test.py", "status": "A", "added": 3, "deleted": 0, "binary": False},
    ]
    assert r["next"] == "add a regression test in new_test.py"
    assert r["current"] == "fix-auth/2" and r["latest"] == "fix-auth/2" and r["checkpoints"] == 2
    assert r["promoted"] == ("fix-auth/2" if HAVE_VERIFY else None)
    [res] = r["results"]
    assert (res["verifier"], res["status"], res["checkpoint"], res["exit_code"], res["on_current"]) == ("tests", "passed", "fix-auth/2", 0, True)
    [failed] = r["failed"]
    assert failed["option"] == "decorator" and failed["reason"] == "hides the traceback"
    assert failed["evidence"][0]["checkpoint"] == "fix-auth/1"
    assert failed["evidence"][0]["commit"] == git(task, "rev-parse", "refs/ckpt/fix-auth/1").decode().strip()
    assert [q["text"] for q in r["questions"]] == ["should None log a warning?"]
    assert [(a["n"], a["text"]) for a in r["assumptions"]] == [(1, "user is never a string")]  # 2 was confirmed
    assert r["reads"] == ["app.py"]
    assert r["workspace"] == "clean"
    assert r["resume"] == ["git ckpt restore fix-auth/2", "git ckpt verify"]


def test_markdown_receipt(task):
    out = ckpt(task, "handoff").out
    assert out.startswith("# Handoff: fix-auth\n\nGoal: login must not crash on a null user\n")
    lines = out.splitlines()
    i = lines.index("## Touched (from " + git(task, "rev-parse", "HEAD").decode()[:12] + " to fix-auth/2)")
    assert lines[i + 1:i + 4] == ["- M app.py       +1 -1", "- D lib.py       +0 -1", "- A new_test.py  +3 -0"]
    assert "- decorator: hides the traceback (evidence: fix-auth/1)" in lines
    assert "- tests: passed on fix-auth/2 (exit 0, " in out
    assert "- 1. user is never a string" in lines
    assert lines[-2:] == ["    git ckpt restore fix-auth/2", "    git ckpt verify"]


def test_check_passes_then_reports_drift(task):
    res = ckpt(task, "handoff", "--check")
    assert res.out.splitlines()[:2] == ["ok    files: all present", "ok    worktree: matches fix-auth/2"]
    assert res.out.endswith("handoff of fix-auth: no drift\n")
    (task / "app.py").write_text("changed by hand\n")
    res = ckpt(task, "handoff", "--check", rc=1)
    assert "DRIFT worktree: files differ (changed: app.py)" in res.out
    assert res.out.endswith("handoff of fix-auth: 1 drift(s) found\n")
    env = ckpt(task, "handoff", "--check", "--json", rc=1).json()["result"]
    assert env["ok"] is False and env["drift"] == ["worktree differs from fix-auth/2: files differ (changed: app.py)"]
    (task / "new_test.py").unlink()
    env = ckpt(task, "handoff", "--check", "--json", rc=1).json()["result"]
    assert env["drift"][0] == "files named by the receipt: missing: new_test.py"


@pytest.mark.skipif(not HAVE_VERIFY, reason="needs git ckpt verify")
def test_check_reruns_required_verifiers_and_reports_a_changed_result(task):
    res = ckpt(task, "handoff", "--check")
    assert "ok    verifier tests: re-run: passed (recorded), before: passed" in res.out
    (task.parent / "flag").write_text("")  # outside the worktree: the checkpoint is unchanged
    res = ckpt(task, "handoff", "--check", rc=1)
    assert "DRIFT verifier tests: re-run: failed (recorded), before: passed" in res.out


def test_receipt_of_an_empty_task_and_unknown_task(repo):
    r = ckpt(repo, "handoff", "--json").json()["result"]
    assert r["task"] == "default" and r["current"] is None and r["touched"] == [] and r["resume"] == []  # nothing to restore or verify yet
    assert ckpt(repo, "handoff", "--check", rc=1).out.splitlines()[1] == "DRIFT worktree: the task has no checkpoint"
    ckpt(repo, "handoff", "bad..name", rc=2)


def test_receipt_follows_a_restore(task):
    ckpt(task, "restore", "fix-auth/1")
    r = ckpt(task, "handoff", "--json").json()["result"]
    assert r["current"] == "fix-auth/1" and r["latest"] == "fix-auth/2"  # the state was fix-auth/2: no pre-restore save
    assert r["workspace"] == "clean"
    assert [t["path"] for t in r["touched"]] == ["app.py"]
    assert r["results"][0]["on_current"] is False
    ckpt(task, "handoff", "--check")


def test_diff_scope(task):
    (task / "new_test.py").write_text("a\nb\nc\nd\n")
    (task / "app.py").write_text("def login(user):\n    return None\n")
    (task / "unrelated.txt").write_text("extra\n")
    res = ckpt(task, "diff", "--scope", "--json").json()["result"]
    assert res["since"] == "fix-auth/2"
    assert res["in_scope"] == [
        {"path": "app.py", "status": "M", "why": ["touched by the task"]},
        {"path": "new_test.py", "status": "M", "why": ["next step", "touched by the task"]},
    ]
    assert res["outside"] == [{"path": "unrelated.txt", "status": "A", "why": []}]
    out = ckpt(task, "diff", "--scope").out.splitlines()
    assert out[-2:] == ["outside the scope of the task card:", "  A unrelated.txt"]
    ckpt(task, "diff", "--scope", "1", "2", rc=2)


def test_stats(task):
    ckpt(task, "restore", "fix-auth/1")
    ckpt(task, "undo")
    s = ckpt(task, "stats", "--json").json()["result"]
    assert s["saved_by_kind"] == {"manual": 2, "auto": 0, "pre-restore": 0}  # both states were checkpoints already
    assert (s["restores"], s["undos"], s["rolled_back_to"], s["rollback_rate"]) == (1, 1, 1, 0.5)
    if HAVE_VERIFY:
        assert (s["verifier_runs"], s["verifier_passed"], s["pass_rate"], s["promotions"], s["forced_promotions"]) == (1, 1, 1.0, 1, 0)
    assert s["commits"] == {"checked": 0, "unverified": [], "truncated": False}
    git(task, "add", "-A")
    git(task, "commit", "-q", "--no-verify", "-m", "the verified content")  # the tree of fix-auth/2
    (task / "extra.txt").write_text("never verified\n")
    git(task, "add", "-A")
    git(task, "commit", "-q", "--no-verify", "-m", "unverified work")
    s = ckpt(task, "stats", "--json").json()["result"]
    head = git(task, "rev-parse", "HEAD").decode().strip()
    if HAVE_VERIFY:
        assert s["commits"] == {"checked": 2, "unverified": [head], "truncated": False}
    else:
        assert s["commits"]["checked"] == 2 and head in s["commits"]["unverified"]
    assert ("restores: 1, undos: 1 (rollback rate 50%: 1 of 2 checkpoint(s) saved on purpose restored later)"
            in ckpt(task, "stats").out.splitlines())


def test_rollback_rate_is_a_share_of_checkpoints_never_above_one(task):
    """Fourth walkthrough: restores 1 and undos 2 printed a rollback rate of 300%.  Going back to
    the same checkpoint again, undoing and redoing, and restoring one path count no further."""
    for args in (["restore", "fix-auth/1"], ["undo"], ["undo"], ["undo"], ["restore", "fix-auth/1"]):
        ckpt(task, *args)
    (task / "app.py").write_text("edited\n")
    ckpt(task, "restore", "fix-auth/2", "--", "app.py")
    s = ckpt(task, "stats", "--json").json()["result"]
    assert (s["restores"], s["undos"], s["rolled_back_to"], s["rollback_rate"]) == (3, 3, 1, 0.5)
    ckpt(task, "restore", "fix-auth/2")
    s = ckpt(task, "stats", "--json").json()["result"]
    assert (s["rolled_back_to"], s["rollback_rate"]) == (2, 1.0)


@pytest.mark.skipif(not HAVE_VERIFY, reason="needs git ckpt verify")
def test_check_reports_drift_when_required_verifiers_have_no_usable_result(task):
    """Hostile report: with an untrusted .ckpt.toml the required verifiers were neither re-run
    nor passed, and --check still said "no drift" (exit 0)."""
    (task / ".ckpt.toml").write_text(TOML.replace('"tests"', '"tests2"'))  # changed since trusted
    ckpt(task, "save", "-m", "config changed")
    res = ckpt(task, "handoff", "--check", rc=1)
    lines = res.out.splitlines()
    assert lines[2] == ("DRIFT config: .ckpt.toml is changed since you trusted it: its required verifiers were neither "
                        "re-run nor can they be relied on (git ckpt trust)")
    assert lines[3] == ("DRIFT verifier tests2: no result recorded on this checkpoint (not re-run: .ckpt.toml is changed "
                        "since you trusted it; no verifier was run)")
    assert lines[-1] == "handoff of fix-auth: 2 drift(s) found"
    env = ckpt(task, "handoff", "--check", "--json", rc=1).json()["result"]
    assert env["ok"] is False and len(env["drift"]) == 2
    # trusted again: re-run, passes, no drift
    ckpt(task, "trust")
    assert ckpt(task, "handoff", "--check").out.endswith("handoff of fix-auth: no drift\n")
