"""What the nineteenth attack pass found, each as its kind.

A reader that leaves: every command's exit code was 0 once its output pipe closed, so a verdict
became "pass" wherever it was printing (``git commit | true`` committed past the gate hook,
``git ckpt verify | true`` of a failing verifier and ``verify-commit`` exited 0).  Now output to a
closed pipe is dropped and the command runs to its end with its own exit code.

Real repositories, the real ``git`` and ``git ckpt``, real pipes (bash).
"""

from __future__ import annotations

import subprocess

import pytest

from conftest import ckpt, git
from test_verify import verifier, write_config


def _piped(repo, command, reader):
    """``command | reader`` in bash; returns (exit code of ``command``, its stderr as bytes)."""
    proc = subprocess.run(f"{command} 2>&1 | {reader}; exit ${{PIPESTATUS[0]}}", shell=True, cwd=repo,
                          executable="/bin/bash", capture_output=True)
    return proc.returncode, proc.stderr


READERS = ["true", "head -c1 >/dev/null", "head -n1 >/dev/null", "(exec 0<&-)"]


@pytest.mark.parametrize("reader", READERS)
def test_the_gate_refuses_a_commit_whose_output_nobody_reads(repo, reader):
    ckpt(repo, "hooks", "install")
    (repo / "b").write_text("b\n")
    git(repo, "add", "b")
    head = git(repo, "rev-parse", "HEAD")
    for _ in range(3):  # the reader leaves at a different moment each time
        rc, err = _piped(repo, "git commit -qm unverified", reader)
        assert (rc, err) == (1, b"") and git(repo, "rev-parse", "HEAD") == head


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("command,rc", [("git ckpt verify", 1), ("git ckpt verify-commit HEAD", 1), ("git ckpt check @", 0),
                                        ("git ckpt verify --json", 1)])
def test_a_verdict_is_the_exit_code_whoever_reads(repo, reader, command, rc):
    write_config(repo, verifier("fails", "python3 -c 'import sys; print(\"x\" * 100000); sys.exit(3)'"))
    ckpt(repo, "trust")
    ckpt(repo, "save", "-m", "one")
    for _ in range(3):
        assert _piped(repo, command, reader) == (rc, b"")
