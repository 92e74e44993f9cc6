"""git ckpt hooks install|uninstall|status: chaining, core.hooksPath, linked worktrees, exact uninstall."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import BIN, ckpt, git, worktree_state
from test_verify import write_config

from git_ckpt.hooks import HOOKS

FOREIGN = b"#!/bin/sh\necho foreign-ran >> \"$(git rev-parse --git-common-dir)/foreign.log\"\nexit ${FOREIGN_EXIT:-0}\n"


def hooks_state(path: Path) -> dict:
    """Every file under a hooks directory with kind, mode and bytes ({} when it does not exist)."""
    return worktree_state(path, skip=()) if path.exists() else {}


def commit(repo, *args, ok=True, env=None):
    full = dict(os.environ, **(env or {}))
    proc = subprocess.run(["git", "commit", "-q", *args], cwd=repo, capture_output=True, text=True, env=full)
    assert (proc.returncode == 0) == ok, proc
    return proc


def test_install_chains_a_foreign_hook_and_uninstall_restores_it_exactly(repo):
    hooks = repo / ".git" / "hooks"
    write_config(repo, "")
    (hooks / "pre-commit").write_bytes(FOREIGN)
    os.chmod(hooks / "pre-commit", 0o750)
    before = hooks_state(hooks)
    res = ckpt(repo, "hooks", "install")
    assert res.out.splitlines() == [
        f"installed pre-commit, pre-merge-commit, pre-applypatch, prepare-commit-msg, applypatch-msg, pre-push in {hooks}",
        "kept your existing pre-commit hook as pre-commit.legacy; it runs first",
        f"pre-push judges commits that are not ancestors of {git(repo, 'rev-parse', 'HEAD').decode()[:12]} (git config ckpt.gate.since)",
        "gate on: commits must match the promoted, verified checkpoint (git config ckpt.gate true)",
    ]
    assert (hooks / "pre-commit.legacy").read_bytes() == FOREIGN
    assert os.stat(hooks / "pre-commit.legacy").st_mode & 0o777 == 0o750
    assert b"# ID: git-ckpt-hook-5f1d2a9c" in (hooks / "pre-commit").read_bytes()
    assert git(repo, "config", "--get", "ckpt.gate") == b"true\n"
    st = ckpt(repo, "hooks", "status").out
    assert "  pre-commit           ours (chains pre-commit.legacy)" in st and "gate: on (ckpt.gate = true)" in st
    # installing again keeps the legacy hook (our own hook is just rewritten)
    ckpt(repo, "hooks", "install")
    assert (hooks / "pre-commit.legacy").read_bytes() == FOREIGN
    # the foreign hook runs first, and its refusal stops the commit
    (repo / "x").write_text("x\n")
    git(repo, "add", "x")
    proc = commit(repo, "-m", "x", ok=False, env={"FOREIGN_EXIT": "3"})
    assert "commit refused by git ckpt gate" not in proc.stderr  # never got to the gate
    assert (repo / ".git" / "foreign.log").read_text() == "foreign-ran\n"
    proc = commit(repo, "-m", "x", ok=False)
    assert "commit refused by git ckpt gate: task default has no promoted checkpoint" in proc.stderr
    assert (repo / ".git" / "foreign.log").read_text() == "foreign-ran\nforeign-ran\n"
    ckpt(repo, "save")
    ckpt(repo, "verify")
    commit(repo, "-m", "x")
    res = ckpt(repo, "hooks", "uninstall")
    assert res.out.splitlines() == [
        f"removed pre-commit, pre-merge-commit, pre-applypatch, prepare-commit-msg, applypatch-msg, pre-push from {hooks}",
        "restored your previous pre-commit hook",
        "gate off (git config ckpt.gate unset)",
    ]
    assert hooks_state(hooks) == before
    assert git(repo, "config", "--get", "ckpt.gate", check=False) == b""


def test_install_refuses_when_a_legacy_file_would_be_lost(repo):
    hooks = repo / ".git" / "hooks"
    (hooks / "pre-push").write_bytes(FOREIGN)
    (hooks / "pre-push.legacy").write_bytes(b"#!/bin/sh\nexit 0\n")
    before = hooks_state(hooks)
    res = ckpt(repo, "hooks", "install", rc=1)
    assert f"{hooks / 'pre-push'} is not ours and {hooks / 'pre-push.legacy'} already exists" in res.err
    assert hooks_state(hooks) == before
    assert git(repo, "config", "--get", "ckpt.gate", check=False) == b""


def test_core_hooks_path_is_used_and_left_alone(repo):
    git(repo, "config", "core.hooksPath", "my-hooks")
    target = repo / "my-hooks"
    assert not target.exists()
    write_config(repo, "")
    res = ckpt(repo, "hooks", "install")
    assert f"installed pre-commit, pre-merge-commit, pre-applypatch, prepare-commit-msg, applypatch-msg, pre-push in {target}" in res.out
    assert "hint: core.hooksPath is set to my-hooks; the hooks were installed there, and the setting was left alone" in res.err
    assert git(repo, "config", "--get", "core.hooksPath") == b"my-hooks\n"
    assert sorted(p.name for p in target.iterdir()) == sorted(HOOKS)
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    with open(repo / ".git" / "info" / "exclude", "a") as fh:
        fh.write("my-hooks/\n")  # a hooks directory inside the worktree is not part of the checkpoint
    (repo / "y").write_text("y\n")
    git(repo, "add", "y")
    proc = commit(repo, "-m", "y", ok=False)
    assert "commit refused by git ckpt gate" in proc.stderr
    ckpt(repo, "save")
    ckpt(repo, "verify")
    commit(repo, "-m", "y")
    assert "Ckpt-Verified: default/1" in git(repo, "log", "-1", "--format=%B").decode()
    ckpt(repo, "hooks", "uninstall")
    assert not target.exists()  # install created it, so uninstall removed it


def test_linked_worktree(repo, tmp_path):
    hooks = repo / ".git" / "hooks"
    before = hooks_state(hooks)
    write_config(repo, "")
    wt = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(wt))
    ckpt(wt, "task", "start", "side-task")
    res = ckpt(wt, "hooks", "install")
    assert f"in {hooks}" in res.out  # git runs hooks from the common directory
    (wt / "z").write_text("z\n")
    git(wt, "add", "z")
    proc = commit(wt, "-m", "z", ok=False)
    assert "task side-task has no promoted checkpoint" in proc.stderr
    ckpt(wt, "save")
    ckpt(wt, "verify")
    commit(wt, "-m", "z")
    assert "Ckpt-Verified: side-task/1" in git(wt, "log", "-1", "--format=%B").decode()
    assert git(repo, "log", "-1", "--format=%s", "main") == b"config\n"
    ckpt(wt, "hooks", "uninstall")
    assert hooks_state(hooks) == before


def test_interpreter_fallback_to_path(repo):
    hooks = repo / ".git" / "hooks"
    write_config(repo, "")
    ckpt(repo, "hooks", "install")
    for name in ("pre-commit", "prepare-commit-msg"):
        data = (hooks / name).read_bytes()
        start = data.index(b"INSTALL_PYTHON=")
        end = data.index(b"\n", start)
        (hooks / name).write_bytes(data[:start] + b"INSTALL_PYTHON=/nonexistent/python3" + data[end:])
    assert "(interpreter /nonexistent/python3 is gone; falls back to git-ckpt on PATH)" in ckpt(repo, "hooks", "status").out
    (repo / "v").write_text("v\n")
    ckpt(repo, "save")
    ckpt(repo, "verify")
    git(repo, "add", "-A")
    commit(repo, "-m", "via PATH", env={"GIT_CKPT_GATE_FAST": "0"})  # BIN (with git-ckpt) is on PATH in tests
    assert "Ckpt-Verified: default/1" in git(repo, "log", "-1", "--format=%B").decode()
    # with neither the interpreter nor git-ckpt on PATH, the gate fails closed
    env = {"PATH": os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != BIN)}
    (repo / "w").write_text("w\n")
    git(repo, "add", "w")
    proc = commit(repo, "-m", "w", ok=False, env=env)
    assert "git-ckpt is not installed" in proc.stderr


def test_pre_commit_framework_manifest():
    text = (Path(__file__).parent.parent / ".pre-commit-hooks.yaml").read_text()
    assert "- id: git-ckpt-gate" in text
    assert "entry: git-ckpt gate --hook" in text
    assert "pass_filenames: false" in text and "always_run: true" in text


def test_hooks_status_names_no_missing_interpreter_for_sh_only_hooks(repo):
    """Every hook we install reads `ours`; only a hook that records an interpreter which is gone
    says so (a plain-sh hook such as applypatch-msg records none: no `None` in the output)."""
    ckpt(repo, "hooks", "install")
    out = ckpt(repo, "hooks", "status").out
    ours = [ln.split()[0] for ln in out.splitlines() if ln.startswith("  ") and " ours" in ln]
    assert sorted(ours) == ["applypatch-msg", "pre-applypatch", "pre-commit", "pre-merge-commit", "pre-push", "prepare-commit-msg"]
    assert "None" not in out and "is gone" not in out


def test_hooks_status_names_hooks_an_older_version_wrote(repo):
    """A hook written by another git-ckpt version (the python -P change of session 3 left the
    old line until `hooks install` was run again) is named in `hooks status`, and `hooks
    install` makes it current again."""
    ckpt(repo, "hooks", "install")
    hooks = Path(git(repo, "rev-parse", "--absolute-git-dir").decode().strip()) / "hooks"
    assert all(h["current"] for h in ckpt(repo, "hooks", "status", "--json").json()["result"]["hooks"])
    old = (hooks / "pre-commit").read_bytes().replace(b" -P ", b" ", 1)
    assert old != (hooks / "pre-commit").read_bytes()
    (hooks / "pre-commit").write_bytes(old)
    lines = ckpt(repo, "hooks", "status").out.splitlines()
    assert "  pre-commit           ours (written by another git-ckpt version: git ckpt hooks install updates it)" in lines
    assert sum("another git-ckpt version" in ln for ln in lines) == 1
    ckpt(repo, "hooks", "install")
    assert "another git-ckpt version" not in ckpt(repo, "hooks", "status").out


import pytest  # noqa: E402


@pytest.mark.parametrize("hooks_path", [".githooks", "tools/git hooks[1]"])
@pytest.mark.parametrize("how", ["restore", "undo"])
def test_hooks_inside_the_worktree_are_neither_saved_nor_deleted(repo, tmp_path, hooks_path, how):
    """Eleventh walkthrough: with a relative core.hooksPath the hooks are untracked files of the
    worktree; every save took them in and a restore of a checkpoint saved before the install
    deleted all six, switching the gate off silently.  install ignores exactly those files
    through a block of .git/info/exclude (names with glob characters and spaces escaped), in
    every worktree; uninstall removes the block and leaves info/exclude byte for byte."""
    exclude = repo / ".git/info/exclude"
    original = exclude.read_bytes()
    git(repo, "config", "core.hooksPath", hooks_path)
    (repo / "b").write_text("b\n")
    ckpt(repo, "save", "-m", "before the hooks")
    res = ckpt(repo, "hooks", "install")
    assert ("the hook files inside the worktree are ignored through .git/info/exclude: no checkpoint saves them "
            "and no restore deletes them (hooks uninstall removes those lines)") in res.out
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == b"?? b\n"
    (repo / "c").write_text("c\n")
    ckpt(repo, "save", "-m", "after")
    assert git(repo, "ls-tree", "-r", "--name-only", "refs/ckpt/default/2") == b"README\nb\nc\n"
    if how == "restore":
        ckpt(repo, "restore", "1")
    else:
        ckpt(repo, "restore", "2")
        ckpt(repo, "restore", "1")
        ckpt(repo, "undo")
        ckpt(repo, "restore", "1")
    assert sorted(os.listdir(repo / hooks_path)) == sorted(HOOKS)
    assert "gate:      on" in ckpt(repo, "status").out
    wt = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "linked", str(wt))
    ckpt(wt, "hooks", "install")
    assert git(wt, "status", "--porcelain", "--untracked-files=all") == b""
    out = ckpt(repo, "hooks", "uninstall").out  # both worktrees' hooks go, and it says so
    assert f"removed them from {wt / hooks_path} too (another worktree ran its hooks from there)\n" in out, out
    assert not (wt / hooks_path / "pre-commit").exists()
    assert exclude.read_bytes() == original


# Every character that would end a line of info/exclude (git's \n; what str.splitlines splits at)
# or that a terminal acts on: a core.hooksPath inside the worktree holding one is refused.
CONTROLS = ["\n", "\r", "\t", "\x1b", "\x01", "\x7f", "\x0b", "\x1c", "\x85", "\u2028"]


@pytest.mark.parametrize("char", CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
@pytest.mark.parametrize("shape", ["hooks{c}*", "{c}/.githooks", "tools/a{c}b/hooks"])
def test_a_hooks_path_inside_the_worktree_with_a_control_character_is_refused(repo, char, shape):
    """``core.hooksPath = .githooks\\n*`` (a repository-local setting) made install write the
    exclude line ``/.githooks`` and then the rule ``*/pre-commit``, or worse: refused, exit 2,
    the path escaped in one line, nothing written (no hooks, no info/exclude change, the gate
    off)."""
    value = shape.format(c=char)
    git(repo, "config", "core.hooksPath", value)
    exclude = repo / ".git" / "info" / "exclude"
    before = exclude.read_bytes()
    listing = sorted(os.listdir(repo))
    res = ckpt(repo, "hooks", "install", rc=2)
    shown = value.encode("unicode_escape").decode("ascii")
    assert res.err.splitlines() == [
        f"error: core.hooksPath {shown} is inside the worktree and its path holds a control character",
        "hint: choose another core.hooksPath (git config core.hooksPath DIR), then run git ckpt hooks install again",
    ], res
    assert res.out == ""
    assert exclude.read_bytes() == before
    assert sorted(os.listdir(repo)) == listing
    assert git(repo, "config", "--get", "ckpt.gate", check=False) == b""
    res = ckpt(repo, "hooks", "install", "--json", rc=2)
    assert res.json()["error"]["code"] == "usage"


def test_a_hooks_path_outside_the_worktree_with_a_control_character_is_used_and_shown_escaped(repo, tmp_path):
    """Outside the worktree nothing goes into info/exclude: the hooks are installed there, and
    every line naming the directory shows it escaped."""
    outside = tmp_path / "hooks\x1b[31m\ndir"
    git(repo, "config", "core.hooksPath", str(outside))
    exclude = repo / ".git" / "info" / "exclude"
    before = exclude.read_bytes()
    res = ckpt(repo, "hooks", "install")
    assert sorted(p.name for p in outside.iterdir()) == sorted(HOOKS)
    assert "\x1b" not in res.out + res.err and "hooks\\x1b[31m\\ndir" in res.out and "hooks\\x1b[31m\\ndir" in res.err
    assert exclude.read_bytes() == before
    assert "\x1b" not in ckpt(repo, "hooks", "status").out
    ckpt(repo, "hooks", "uninstall")
    assert not outside.exists()


def test_install_and_uninstall_keep_a_users_exclude_lines_that_hold_line_separators(repo):
    """info/exclude is read as git reads it, line by line at \\n: a user's pattern holding U+2028
    or U+0085 (which str.splitlines also splits at) comes back byte for byte."""
    exclude = repo / ".git" / "info" / "exclude"
    mine = "/odd\u2028name\n/other\x85one\n".encode()
    exclude.write_bytes(exclude.read_bytes() + mine)
    before = exclude.read_bytes()
    git(repo, "config", "core.hooksPath", ".githooks")
    ckpt(repo, "hooks", "install")
    assert exclude.read_bytes().startswith(before)
    ckpt(repo, "hooks", "uninstall")
    assert exclude.read_bytes() == before


@pytest.mark.parametrize("before", [b"", b"*.log", b"*.log\n", b"a\r\nb", b"\n\n"], ids=repr)
def test_install_then_uninstall_leaves_info_exclude_byte_for_byte(repo, before):
    """A last line without a line break got one from install (the block must start on a line of
    its own) and kept it after uninstall: the file differed from the user's by one byte.  Both
    owners of a block, hooks (relative core.hooksPath) and agent settings kept local."""
    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_bytes(before)
    git(repo, "config", "core.hooksPath", ".hk")
    ckpt(repo, "hooks", "install")
    ckpt(repo, "agent", "install", "claude-code", "--local")
    assert exclude.read_bytes().startswith(before + (b"\n" if before and not before.endswith(b"\n") else b""))
    ckpt(repo, "hooks", "uninstall")
    ckpt(repo, "agent", "uninstall", "claude-code")
    assert exclude.read_bytes() == before
