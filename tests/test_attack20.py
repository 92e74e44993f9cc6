"""What the twentieth attack pass found, each as its kind.

- Paths the matcher could not read: a file name that is not UTF-8 (RE2 matches UTF-8 text: push,
  status, diff and save exited 70) and a directory name holding a newline (pathspec's expressions
  match no newline with ".": the secret-name denylist and overlay exclude patterns missed
  ``a\\nb/.pgpass``, which git's own wildmatch matches, and the password file was pushed).
- The gate's switch read two ways: ``ckpt.gate`` set to ``''``, ``'true '`` or ``' on'`` was "on"
  to status and off to the installed hooks (git's reading), so commits passed; and a hook of ours
  that is not executable (git skips it) still counted as active.

Real repositories, the real ``git`` and ``git ckpt``.
"""

from __future__ import annotations

import os

import pytest

from conftest import ckpt, git

NAMES = {"latin-1": b"caf\xe9", "newline": b"a\nb", "both": b"\xff\n\xfe"}


@pytest.mark.parametrize("name", NAMES.values(), ids=NAMES.keys())
def test_a_secret_below_any_directory_name_is_left_out_and_nothing_crashes(repo, name):
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["cfg/"]\nexclude = ["*.skip"]\n')
    (repo / ".gitignore").write_text("cfg/\n")
    git(repo, "add", ".ckpt.toml", ".gitignore")
    git(repo, "commit", "-qm", "overlay")
    base = os.fsencode(repo) + b"/cfg/" + name
    os.makedirs(base)
    for leaf, data in ((b".pgpass", b"localhost:5432:db:admin:Tr0ub4dor3\n"), (b"x.skip", b"skip\n"), (b"keep.txt", b"keep\n")):
        with open(base + b"/" + leaf, "wb") as fh:
            fh.write(data)
    (repo / "tracked").mkdir()  # a tracked file of such a name: matched (and found not ignored) first
    with open(os.fsencode(repo) + b"/tracked/" + name + b".txt", "wb") as fh:
        fh.write(b"tracked\n")
    res = ckpt(repo, "save", "-m", "s")
    assert "warning: overlay: left out likely-secret files: cfg/" in res.err and "/.pgpass (" in res.err, res
    from git_ckpt.model import path_from_str

    files = [path_from_str(f["path"]) for f in ckpt(repo, "show", "@", "--json").json()["result"]["manifest"]["overlay"]["files"]]
    assert files == [b"cfg/" + name + b"/keep.txt"], files
    for args in (["status"], ["diff", "--stat"], ["restore", "@", "--dry-run"], ["list"]):
        ckpt(repo, *args)


def test_a_name_that_is_not_utf8_pushes(tmp_path):
    from test_remote import _team

    _bare, alice, _bob = _team(tmp_path)
    with open(os.fsencode(alice) + b"/caf\xe9.txt", "wb") as fh:
        fh.write(b"x\n")
    ckpt(alice, "save", "-m", "latin-1 name")
    assert "pushed" in ckpt(alice, "push").out


@pytest.mark.parametrize("value,on", [("true", True), ("True", True), ("yes", True), ("1", True), ("", False), ("true ", False),
                                      (" on", False), ("2x", False), ("false", False), ("0", False)])
def test_status_reads_ckpt_gate_as_the_hooks_do(repo, value, on):
    ckpt(repo, "hooks", "install")
    git(repo, "config", "ckpt.gate", value)
    status = ckpt(repo, "status").out
    (repo / "b").write_text("b\n")
    git(repo, "add", "b")
    committed = git(repo, "commit", "-qm", "unverified", check=False) is not None and \
        git(repo, "log", "-1", "--format=%s").decode().strip() == "unverified"
    assert ("gate:      on" in status) == on and ("gate:      off" in status) == (not on), status
    assert committed == (not on)


def test_a_hook_of_ours_that_is_not_executable_is_not_active(repo):
    ckpt(repo, "hooks", "install")
    os.chmod(repo / ".git" / "hooks" / "pre-commit", 0o644)
    assert "gate:      NOT active in this worktree" in ckpt(repo, "status").out
    assert "  pre-commit           ours (not executable: git skips it; git ckpt hooks install makes it so)\n" in \
        ckpt(repo, "hooks", "status").out
    ckpt(repo, "hooks", "install")
    assert os.access(repo / ".git" / "hooks" / "pre-commit", os.X_OK)
    assert "gate:      on" in ckpt(repo, "status").out
