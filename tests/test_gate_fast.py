"""The commit gate's fast path ($GIT_DIR/ckpt/gate-ok, answered by the hooks in sh).

Every test runs real `git commit`s through the installed hooks.  The hooks' interpreter is made
unavailable (INSTALL_PYTHON points nowhere), so a commit with ``NOPY`` (git-ckpt off PATH too)
can only succeed on the shell fast path, and any fallback to `git ckpt gate` shows as "git-ckpt
is not installed"; with git-ckpt on PATH the same hooks run the full Python gate.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, REPO_FORMAT, ckpt, git
from test_verify import events, verifier, write_config

TRAILER = "Ckpt-Verified: "
NOT_INSTALLED = "git-ckpt is not installed"


def nopy() -> dict:
    """An environment where neither the hooks' interpreter nor git-ckpt can be found."""
    return {"PATH": os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != BIN)}


def commit(repo: Path, *args: str, ok: bool, env: dict | None = None) -> subprocess.CompletedProcess:
    """A real `git commit ARGS`; assert success or refusal; HEAD is put back after a success so
    that the same index can be committed again."""
    base = git(repo, "rev-parse", "HEAD").decode().strip()
    full = dict(os.environ, **(env or {}))
    proc = subprocess.run(["git", "commit", "-q", *args], cwd=repo, capture_output=True, text=True, env=full)
    assert (proc.returncode == 0) == ok, proc
    if ok:
        proc.message = git(repo, "log", "-1", "--format=%B").decode()  # type: ignore[attr-defined]
        git(repo, "update-ref", "HEAD", base)
    return proc


def setup(repo: Path, tmp_path: Path) -> Path:
    """A config with one required verifier that fails while FLAG exists; hooks installed with an
    interpreter that is gone; one change saved, verified and promoted (default/1).  Returns FLAG."""
    flag = tmp_path / "FLAG"
    write_config(repo, verifier("tests", ["sh", "-c", f"test ! -e {flag}"]))
    ckpt(repo, "hooks", "install")
    hooks = repo / ".git" / "hooks"
    for name in ("pre-commit", "pre-merge-commit", "pre-applypatch", "prepare-commit-msg"):
        data = (hooks / name).read_bytes()
        start = data.index(b"INSTALL_PYTHON=")
        end = data.index(b"\n", start)
        (hooks / name).write_bytes(data[:start] + b"INSTALL_PYTHON=/nonexistent/python3" + data[end:])
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    ckpt(repo, "save", "-m", "a")
    ckpt(repo, "verify")
    if REPO_FORMAT.startswith("reftable"):  # CKPT_TEST_REPO_FORMAT (.ci/run): no loose ref files to read
        assert not (repo / ".git" / "ckpt" / "gate-ok").exists()
        pytest.skip("reftable: the hooks' fast path reads loose ref files, so it stays off and the full gate answers")
    assert (repo / ".git" / "ckpt" / "gate-ok").is_file()
    return flag


def fast_ok(repo: Path, cid: str = "default/1", *args: str) -> None:
    """The commit succeeds with no Python anywhere: the fast path allowed it, with the trailer
    and the same message the Python gate prints."""
    proc = commit(repo, "-m", "fast", *args, ok=True, env=nopy())
    assert proc.message == f"fast\n\n{TRAILER}{cid}\n\n"
    assert proc.stderr == f"git ckpt gate: commit matches the promoted checkpoint {cid}; verifiers passed\n"


def falls_back(repo: Path, *args: str, env: dict | None = None) -> None:
    """Without Python the commit fails in the fallback: the fast path did not allow it."""
    proc = commit(repo, "-m", "x", *args, ok=False, env={**nopy(), **(env or {})})
    assert NOT_INSTALLED in proc.stderr
    assert "commit matches" not in proc.stderr


def refused(repo: Path, *args: str) -> str:
    """The full gate (git-ckpt on PATH) refuses; returns its first line."""
    proc = commit(repo, "-m", "x", *args, ok=False)
    assert proc.stderr.startswith("error: commit refused by git ckpt gate: "), proc.stderr
    return proc.stderr.splitlines()[0][len("error: commit refused by git ckpt gate: "):]


def allowed_again(repo: Path, cid: str = "default/1") -> None:
    """After the cause is undone the full gate allows the commit (and records the state), and
    the next commit of it is answered by the fast path again."""
    proc = commit(repo, "-m", "full", ok=True)
    assert TRAILER + cid in proc.message
    fast_ok(repo, cid)


def test_fast_path_allows_the_promoted_tree_without_python(repo, tmp_path):
    setup(repo, tmp_path)
    fast_ok(repo)
    fast_ok(repo, "default/1", "-a")  # commit -a of the same tree ($GIT_INDEX_FILE = index.lock)
    # prepare-commit-msg alone (pre-commit skipped) still adds the trailer for the promoted tree
    proc = commit(repo, "--no-verify", "-m", "nv", ok=True, env=nopy())
    assert proc.message == f"nv\n\n{TRAILER}default/1\n\n"
    # an empty message still aborts the commit: the trailer is not added to it
    proc = commit(repo, ok=False, env={**nopy(), "GIT_EDITOR": "true"})  # an editor that leaves the message empty
    assert "Aborting commit due to empty commit message" in proc.stderr
    # the file names the task, the checkpoint, the tree
    lines = (repo / ".git" / "ckpt" / "gate-ok").read_text().splitlines()
    assert lines[:3] == ["ckpt-gate-ok 1", "default", "default/1"]
    assert lines[6] == git(repo, "rev-parse", "refs/ckpt/default/1^{tree}").decode().strip()
    # GIT_CKPT_GATE_FAST=0 turns the fast path off
    falls_back(repo, env={"GIT_CKPT_GATE_FAST": "0"})
    # a forged or damaged file only falls back
    (repo / ".git" / "ckpt" / "gate-ok").write_text("ckpt-gate-ok 1\ndefault\ndefault/1\n")
    falls_back(repo)
    allowed_again(repo)


def test_every_refusal_falls_back_to_the_full_gate(repo, tmp_path):
    flag = setup(repo, tmp_path)
    toml = (repo / ".ckpt.toml").read_bytes()

    # 1. the index holds another tree (staged, and commit -a of an unstaged change)
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "b.txt")
    falls_back(repo)
    assert refused(repo) == "the tree being committed differs from the promoted checkpoint default/1 in 1 path(s)"
    git(repo, "rm", "-q", "--cached", "b.txt")
    (repo / "b.txt").unlink()
    (repo / "a.txt").write_text("a, not verified\n")
    falls_back(repo, "-a")
    assert "in 1 path(s)" in refused(repo, "-a")
    (repo / "a.txt").write_text("a\n")
    allowed_again(repo)

    # 2. a newer failing result on the promoted checkpoint
    flag.write_text("")
    ckpt(repo, "verify", "--rerun", rc=1)
    falls_back(repo)
    assert refused(repo) == "required verifier tests has status failed on the promoted checkpoint default/1"
    flag.unlink()
    ckpt(repo, "verify", "--rerun")
    allowed_again(repo)

    # 3. a verifier added in the local git config (one redefining a .ckpt.toml verifier is
    #    ignored: git config never loosens it)
    git(repo, "config", "ckpt.verifier.extra.command", "true")
    falls_back(repo)
    assert refused(repo) == "required verifier extra has no result on the promoted checkpoint default/1"
    git(repo, "config", "--unset", "ckpt.verifier.extra.command")
    allowed_again(repo)

    # 4. .ckpt.toml edited (no longer the trusted bytes), then the trust store changed under an
    #    unchanged .ckpt.toml
    (repo / ".ckpt.toml").write_bytes(toml + b"# loosened\n")
    falls_back(repo)
    assert refused(repo).startswith(".ckpt.toml ")
    ckpt(repo, "trust")
    (repo / ".ckpt.toml").write_bytes(toml)
    falls_back(repo)
    assert refused(repo).startswith(".ckpt.toml ")
    ckpt(repo, "trust")
    allowed_again(repo)

    # 5. another current task: the shell defers; the full gate refuses a tree no task promoted,
    #    and allows (naming it) the tree another task of this repository promoted
    ckpt(repo, "task", "start", "other")
    (repo / "o.txt").write_text("o\n")
    git(repo, "add", "o.txt")
    falls_back(repo)
    assert refused(repo) == "task other has no promoted checkpoint"
    git(repo, "rm", "-q", "--cached", "o.txt")
    (repo / "o.txt").unlink()
    falls_back(repo)
    proc = commit(repo, "-m", "default's tree", ok=True)
    assert TRAILER + "default/1" in proc.message
    (repo / ".git" / "ckpt" / "TASK").write_text("default\n")
    allowed_again(repo)

    # 6. a forced promotion of a failing checkpoint never writes the file, and the gate refuses it
    flag.write_text("")
    (repo / "a.txt").write_text("a2\n")
    git(repo, "add", "a.txt")
    ckpt(repo, "save", "-m", "a2")
    ckpt(repo, "verify", rc=1)
    ckpt(repo, "promote", "default/2", "--force")
    assert not (repo / ".git" / "ckpt" / "gate-ok").exists()
    falls_back(repo)
    assert refused(repo) == "required verifier tests has status failed on the promoted checkpoint default/2 (it was promoted with --force)"
    flag.unlink()
    ckpt(repo, "verify", "default/2")
    fast_ok(repo, "default/2")
    refusals = [e for e in events(repo) if e["type"] == "gate-refused"]
    assert len(refusals) == 7  # each refusal above was the full gate's, recorded as usual (the one of task other in its own ledger)


def test_conservative_cases_fall_back(repo, tmp_path):
    """States the shell cannot judge exactly go to the full gate, whatever it decides."""
    setup(repo, tmp_path)
    # a gitlink hidden from diffs by .gitmodules / diff.ignoreSubmodules is still a difference
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    (repo / ".gitmodules").write_text('[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n\tignore = all\n')
    git(repo, "config", "diff.ignoreSubmodules", "all")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},sub")
    falls_back(repo)
    # (the full gate's path count leaves gitlinks out: "in 0 path(s)"; noted for gate.py's owner)
    assert refused(repo).startswith("the tree being committed differs from the promoted checkpoint default/1 in ")
    git(repo, "rm", "-q", "--cached", "sub")
    (repo / ".gitmodules").unlink()
    # an intent-to-add entry: the full gate allows (it is not part of the tree), the shell defers
    (repo / "later.txt").write_text("later\n")
    git(repo, "add", "-N", "later.txt")
    falls_back(repo)
    commit(repo, "-m", "ita", ok=True)
    git(repo, "rm", "-q", "--cached", "later.txt")
    fast_ok(repo)
    # packed refs: the shell reads loose refs only, so it defers, and no file is recorded
    git(repo, "pack-refs", "--all")
    falls_back(repo)
    commit(repo, "-m", "packed", ok=True)
    falls_back(repo)


def test_linked_worktree_has_its_own_file(repo, tmp_path):
    setup(repo, tmp_path)
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(wt))
    (wt / "w.txt").write_text("w\n")
    git(wt, "add", "w.txt")
    ckpt(wt, "trust")  # trust is per worktree
    ckpt(wt, "save", "-m", "w")
    ckpt(wt, "verify")
    gd = Path(git(wt, "rev-parse", "--absolute-git-dir").decode().strip())
    assert (gd / "ckpt" / "gate-ok").is_file()
    fast_ok(wt, "default/2")
    # the main worktree's file names default/1, now no longer promoted: it falls back
    falls_back(repo)


def test_fast_path_answers_pre_merge_commit_and_pre_applypatch(repo, tmp_path):
    """The same shell fast path gates a merge (pre-merge-commit, $GIT_INDEX_FILE set by git
    merge) and git am (pre-applypatch), and prepare-commit-msg sets the merge's trailer."""
    setup(repo, tmp_path)
    base = git(repo, "rev-parse", "HEAD").decode().strip()
    git(repo, "commit", "-q", "--no-verify", "-m", "a")  # the promoted tree, committed on main
    git(repo, "checkout", "-q", "-b", "side", base)
    git(repo, "checkout", "-q", "main", "--", "a.txt")
    git(repo, "commit", "-q", "--no-verify", "-m", "a on side")
    git(repo, "checkout", "-q", "main")
    full = dict(os.environ, **nopy())
    proc = subprocess.run(["git", "merge", "--no-ff", "-m", "merge side", "side"], cwd=repo, capture_output=True, text=True, env=full)
    assert proc.returncode == 0, proc
    assert "git ckpt gate: commit matches the promoted checkpoint default/1; verifiers passed" in proc.stderr
    assert git(repo, "log", "-1", "--format=%B").decode() == f"merge side\n\n{TRAILER}default/1\n\n"
    git(repo, "reset", "-q", "--hard", base)
    patch = git(repo, "format-patch", "--stdout", "-1", "side")
    proc = subprocess.run(["git", "am"], cwd=repo, input=patch, capture_output=True, env=full)
    assert proc.returncode == 0, proc
    assert b"commit matches the promoted checkpoint default/1" in proc.stderr
    # a merge the fast path cannot allow falls back (no Python: fails closed)
    (repo / "z").write_text("z\n")
    git(repo, "add", "z")
    git(repo, "commit", "-q", "--no-verify", "-m", "z")
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    proc = subprocess.run(["git", "merge", "--no-ff", "-m", "m", "HEAD@{1}"], cwd=repo, capture_output=True, text=True, env=full)
    assert proc.returncode != 0 and NOT_INSTALLED in proc.stderr
