"""git ckpt attempt -- CMD: save, run, save, verify; promote on pass, restore on fail."""

from __future__ import annotations

import subprocess
import sys

from conftest import ckpt, git, index_state, worktree_state
from test_verify import events, promoted, rev, verifier, write_config

PY = sys.executable
PARSE = [PY, "-c", "import ast; ast.parse(open('mod.py').read())"]
BREAK = ["sh", "-c", "printf 'def f(:\\n' > mod.py; echo scratch > notes.txt; echo breaking"]
FIX = ["sh", "-c", "printf 'def f():\\n    return 2\\n' > mod.py"]


def _setup(repo, extra: str = ""):
    (repo / "mod.py").write_text("def f():\n    return 1\n")
    write_config(repo, verifier("parse", PARSE) + extra)
    git(repo, "add", "mod.py")
    git(repo, "commit", "-q", "-m", "mod")
    (repo / "mod.py").write_text("def f():\n    return 1  # edited, unstaged\n")
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")


def test_failed_attempt_restores_the_worktree_and_keeps_the_broken_state(repo):
    _setup(repo)
    before_files, before_index = worktree_state(repo), index_state(repo)
    res = ckpt(repo, "attempt", "-m", "try breaking", "--", *BREAK, rc=1)
    lines = res.out.splitlines()
    assert lines[0] == "checkpoint saved: default/1"
    assert lines[1] == "breaking"  # CMD's own output, on the terminal
    assert lines[2].startswith("attempt: sh -c ") and lines[2].endswith(" exited 0")
    assert lines[3] == "checkpoint saved: default/2"
    assert any(ln.startswith("verifier: parse ...... failed (exit 1, ") for ln in lines)
    tail = lines[-3:]
    assert tail[0] == "restoring default/1"
    assert tail[1] == "workspace status: clean"
    assert tail[2].startswith("next: the failed state is kept as default/2; compare with git ckpt diff default/1 default/2")
    # the worktree and the index are exactly as before CMD (notes.txt, which CMD created, is gone)
    assert worktree_state(repo) == before_files
    assert index_state(repo) == before_index
    # the broken state is a checkpoint
    assert git(repo, "show", "refs/ckpt/default/2:mod.py") == b"def f(:\n"
    assert git(repo, "show", "refs/ckpt/default/2:notes.txt") == b"scratch\n"
    assert promoted(repo) is None
    ev = [e for e in events(repo) if e["type"] == "attempt"][-1]["data"]
    assert ev["before"] == "default/1" and ev["after"] == "default/2" and ev["outcome"] == "restored"
    assert ev["cmd_exit"] == 0 and ev["verifiers"] == {"parse": "failed"}
    types = [e["type"] for e in events(repo)]
    assert types.index("verify") < types.index("restore") < len(types) - 1


def test_successful_attempt_is_promoted_and_committable(repo):
    _setup(repo)
    ckpt(repo, "hooks", "install")
    res = ckpt(repo, "attempt", "--", *FIX)
    lines = res.out.splitlines()
    assert lines[0] == "checkpoint saved: default/1"
    assert lines[1].endswith(" exited 0") and lines[2] == "checkpoint saved: default/2"
    assert lines[3].startswith("verifier: parse ...... passed (exit 0, ")
    assert lines[4:] == ["promoted default/2", "workspace status: clean"]
    assert promoted(repo) == rev(repo, "refs/ckpt/default/2")
    git(repo, "add", "-A")
    proc = subprocess.run(["git", "commit", "-q", "-m", "fixed f"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc
    assert git(repo, "log", "-1", "--format=%B").decode() == "fixed f\n\nCkpt-Verified: default/2\n\n"
    assert git(repo, "show", "HEAD:mod.py") == b"def f():\n    return 2\n"


def test_on_failure_keep_leaves_the_result(repo):
    _setup(repo, '[attempt]\non_failure = "keep"\n')
    ckpt(repo, "trust")
    res = ckpt(repo, "attempt", "--", *BREAK, rc=1)
    assert "keeping the failed state default/2 (on_failure = \"keep\" under [attempt] in .ckpt.toml, or git config ckpt.attempt.onFailure keep)" in res.out
    assert "workspace status: clean" in res.out
    assert "next: fix and run git ckpt verify, or go back with git ckpt restore default/1" in res.out
    assert (repo / "mod.py").read_text() == "def f(:\n"
    assert [e for e in events(repo) if e["type"] == "attempt"][-1]["data"]["outcome"] == "kept"


def test_command_that_cannot_start_and_json(repo):
    _setup(repo)
    res = ckpt(repo, "attempt", "--", "/nonexistent/agent", rc=2)
    assert "cannot run '/nonexistent/agent'" in res.err
    res = ckpt(repo, "attempt", "--json", "--", *FIX)
    data = res.json()["result"]
    assert data["outcome"] == "promoted" and data["before"] == "default/1" and data["after"] == "default/2"
    assert data["verify"]["results"][0]["status"] == "passed" and data["cmd_exit"] == 0
    assert "checkpoint saved: default/1" in data["log"]
