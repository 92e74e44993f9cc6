"""What the nineteenth attack pass found, each as its kind.

A reader that leaves: every command's exit code was 0 once its output pipe closed, so a verdict
became "pass" wherever it was printing (``git commit | true`` committed past the gate hook,
``git ckpt verify | true`` of a failing verifier and ``verify-commit`` exited 0).  Now output to a
closed pipe is dropped and the command runs to its end with its own exit code.

Real repositories, the real ``git`` and ``git ckpt``, real pipes (bash).
"""

from __future__ import annotations

import os
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


@pytest.mark.parametrize("link", ["dangling", "to a file", "loop"])
def test_a_hooks_path_the_kernel_cannot_walk_is_refused(repo, tmp_path, link):
    """``core.hooksPath = lnk/../hk`` with ``lnk`` dangling: ``os.path.realpath`` walked on to
    ``out/hk`` and installed there, status said "gate: on", but the kernel stops at ``lnk/..``
    (ENOENT; ENOTDIR for a link to a file, ELOOP for a loop), so git ran no hook and an
    unverified commit passed.  Refused, exit 2, nothing written."""
    (tmp_path / "out" / "hk").mkdir(parents=True)
    (tmp_path / "out" / "file").write_text("f\n")
    target = {"dangling": tmp_path / "out" / "missing", "to a file": tmp_path / "out" / "file", "loop": repo / "lnk"}[link]
    (repo / "lnk").symlink_to(target)
    git(repo, "config", "core.hooksPath", "lnk/../hk")
    res = ckpt(repo, "hooks", "install", rc=2)
    reason = {"dangling": "No such file or directory", "to a file": "Not a directory", "loop": "Too many levels of symbolic links"}[link]
    assert res.err == (f"error: core.hooksPath lnk/../hk cannot be reached ({repo}/lnk/..: {reason}): git would run no hook from it\n"
                       "hint: point core.hooksPath at a directory git can reach (git config core.hooksPath DIR), then run git "
                       "ckpt hooks install again\n"), res
    assert os.listdir(tmp_path / "out" / "hk") == [] and git(repo, "config", "--get", "ckpt.gate", check=False) == b""
    assert "gate:      off\n" in ckpt(repo, "status").out


def test_a_hooks_path_that_stops_being_reachable_is_not_called_active(repo, tmp_path):
    (tmp_path / "out" / "hk").mkdir(parents=True)
    (repo / "lnk").symlink_to(tmp_path / "out" / "sub")
    (tmp_path / "out" / "sub").mkdir()
    git(repo, "config", "core.hooksPath", "lnk/../hk")
    ckpt(repo, "hooks", "install")
    assert "gate:      on" in ckpt(repo, "status").out
    (tmp_path / "out" / "sub").rmdir()  # lnk now dangles: git runs no hook from lnk/../hk
    (repo / "b").write_text("b\n")
    git(repo, "add", "b")
    git(repo, "commit", "-qm", "passes: git finds no hook")
    assert ("gate:      NOT active in this worktree: git runs its hooks from " + f"{repo}/lnk/../hk, where the git ckpt hooks "
            "are not installed or not executable; run git ckpt hooks install\n") in ckpt(repo, "status").out


def test_a_thousand_overlay_patterns_against_long_paths_do_not_hang(repo):
    """990 patterns ``**/a*a*/**/aN``, each within every per-pattern limit, matched against
    4 KiB paths: Python's backtracking ``re`` took 90 s a file (a save, status or agent hook of a
    repository with twenty such files: half an hour).  RE2 matches the whole set in linear time.
    (The timeout is no measure of speed, only the line between done and hung.)"""
    pats = ",".join(f'"**/a*a*/**/a{i}"' for i in range(990))
    (repo / ".ckpt.toml").write_text(f"[overlay]\ninclude = [{pats}]\n")
    for j in range(10):
        d = repo.joinpath(*(["a" * 200] * 18), f"{'a' * 200}{j}")
        d.mkdir(parents=True)
        (d / "b").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "deep files")
    for args in (["save", "-m", "one"], ["status"], ["diff", "--stat"], ["restore", "@", "--dry-run"]):
        proc = subprocess.run(["git", "ckpt", *args], cwd=repo, capture_output=True, timeout=120)
        assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc


def test_re2_reads_every_allowed_pattern_as_python_re_did():
    """The matcher changed from Python's ``re`` to RE2: for patterns config accepts, both
    backends of pathspec give the same answer on every path (drawn from the same alphabet)."""
    import pathspec
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from git_ckpt.config import as_bytes_text, compile_patterns, normalized_pattern, overlay_pattern_problem

    piece = st.sampled_from(["a", "b", ".", "-", " ", "é", "*", "?", "[ab]", "[.]", "\\*", "**", "/", "x"])
    name = st.sampled_from(["a", "b", "ab", "a.b", "a b", "é", "x", ".a", "aa", "*", "[ab]", "a-b", "**"])

    @given(pattern=st.lists(piece, min_size=1, max_size=8).map("".join), anchor=st.booleans(), slash=st.booleans(),
           paths=st.lists(st.lists(name, min_size=1, max_size=4).map("/".join), min_size=1, max_size=10))
    @settings(max_examples=400, deadline=None)
    def agree(pattern, anchor, slash, paths):
        p = ("/" if anchor else "") + pattern + ("/" if slash else "")
        if overlay_pattern_problem(p):
            return
        ours = compile_patterns([p])
        # both read byte by byte, as git does (attack 21: "?" is one byte, not one "é")
        python_re = pathspec.GitIgnoreSpec.from_lines([as_bytes_text(normalized_pattern(p))], backend="simple")
        for path in paths:
            assert ours.match_file(path) == python_re.match_file(as_bytes_text(path)), (p, path)

    agree()


def test_without_google_re2_a_pattern_is_no_config_error(repo, tmp_path):
    """With the matcher's library missing every overlay pattern was reported as one that 'does
    not compile' (exit 6, fix your config); it is said as what it is, exit 3, nothing written."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "re2.py").write_text("raise ModuleNotFoundError(\"No module named 're2'\")\n")  # as when not installed
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["fx/"]\n')
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(hide), os.environ.get("PYTHONPATH", "")) if p)}
    refs = git(repo, "for-each-ref")
    res = ckpt(repo, "save", "-m", "x", rc=3, env=env)
    assert res.err.startswith("error: google-re2, which git ckpt matches overlay patterns with, is not installed for "), res
    assert res.err.endswith("\nhint: reinstall git-ckpt (pip install . in its checkout), or pip install 'google-re2>=1.1'\n")
    assert git(repo, "for-each-ref") == refs
