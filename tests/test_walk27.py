"""Session 11: leftovers of walkthroughs 24-26 fixed as kinds.

- ``attempt`` with no verifiers: CMD's failure (any non-zero exit, a signal) is the only
  evidence, and the empty requirement no longer promotes what a failing CMD left.
"""

from __future__ import annotations

import pytest

from conftest import ckpt, git, worktree_state
from test_verify import events, promoted


@pytest.mark.parametrize("script,shown_exit", [
    ("echo bad > f; exit 1", "exited 1"),
    ("echo bad > f; exit 77", "exited 77"),
    ("echo bad > f; kill -TERM $$", "was killed by signal 15"),
])
def test_attempt_without_verifiers_does_not_promote_a_failing_command(repo, script, shown_exit):
    (repo / "f").write_text("good\n")
    before = worktree_state(repo)
    res = ckpt(repo, "attempt", "--", "sh", "-c", script, rc=1)
    lines = res.out.splitlines()
    assert lines[0] == "checkpoint saved: default/1"
    assert lines[1] == f"attempt: sh -c '{script}' {shown_exit}"
    assert lines[2] == "checkpoint saved: default/2"
    assert lines[3] == f"no verifiers configured and sh -c '{script}' failed: not promoted on the empty requirement"
    assert lines[4:6] == ["restoring default/1", "workspace status: clean"]
    assert promoted(repo) is None
    assert worktree_state(repo) == before
    assert git(repo, "show", "refs/ckpt/default/2:f") == b"bad\n"
    ev = [e for e in events(repo) if e["type"] == "attempt"][-1]["data"]
    assert (ev["outcome"], ev["restored_to"], ev["verifiers"]) == ("restored", "default/1", {})
    assert "verify" not in [e["type"] for e in events(repo)]


def test_attempt_without_verifiers_keeps_and_changed_nothing(repo):
    (repo / "f").write_text("good\n")
    git(repo, "config", "ckpt.attempt.onFailure", "keep")
    res = ckpt(repo, "attempt", "--", "sh", "-c", "echo bad > f; exit 3", rc=1)
    assert "keeping the failed state default/2" in res.out
    assert (repo / "f").read_text() == "bad\n"
    res = ckpt(repo, "attempt", "--json", "--", "false", rc=1).json()["result"]
    assert (res["outcome"], res["before"], res["after"], res["verify"], res["exit_code"]) == ("kept", "default/2", "default/2", None, 1)
    assert "false changed nothing: default/2 is as it was before the command; nothing to restore" in res["log"]
    assert promoted(repo) is None


def test_attempt_without_verifiers_promotes_a_command_that_succeeds(repo):
    (repo / "f").write_text("good\n")
    res = ckpt(repo, "attempt", "--", "sh", "-c", "echo better > f")
    assert res.out.splitlines()[-3:] == ["no verifiers configured: promoted on the empty requirement",
                                         "promoted default/2", "workspace status: clean"]
    assert promoted(repo) == git(repo, "rev-parse", "refs/ckpt/default/2").decode().strip()
