"""Every way a commit reaches history is gated, or named with its backstop (issue 11).

Real repositories, real `git` commands firing the installed hooks.  The README's table "Which
command is gated by what" is exercised row by row in ``test_history_table``; the numbered inputs
of the issue have their own tests below it.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Result, ckpt, git, init_repo
from test_verify import events, rev, verifier, write_config

from git_ckpt.hooks import HOOKS

TRAILER_KEY = "Ckpt-Verified"


def run(repo: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """A real `git ARGS` (hooks fire); never asserts."""
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=dict(os.environ, **(env or {})))


def via_git(repo: Path, *args: str) -> Result:
    """`git ARGS` (e.g. `-c K=V ckpt verify`) as a :class:`Result`; never a traceback."""
    res = Result(subprocess.run(["git", *args], cwd=repo, capture_output=True))
    assert "Traceback" not in res.err, res
    return res


def trailers(repo: Path, what: str = "HEAD") -> list[str]:
    """The Ckpt-Verified trailer values of a commit, as git's own trailer parser reads them."""
    out = git(repo, "log", "-1", f"--format=%(trailers:key={TRAILER_KEY},valueonly,separator=%x00)", what).decode()
    return [v for v in out.strip("\n").split("\0") if v]


def save_verify(repo: Path, *extra: str) -> str:
    """Save the worktree and verify it (promoting it); returns the checkpoint id."""
    saved = ckpt(repo, "save", *extra).out.strip().rpartition(" ")[2]
    ckpt(repo, "verify")
    return saved


def gated(tmp_path: Path, *, pre_push: str = "refuse") -> tuple[Path, Path]:
    """A repository with a verifier that always passes, `[gate] pre_push`, a bare remote
    `origin` holding main, a branch `feat` with an unverified commit (file f) and main one
    commit ahead of the fork point (file m), both pushed; hooks installed (since = main)."""
    repo = init_repo(tmp_path / "repo")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    write_config(repo, verifier("ok", ["true"]) + f'[gate]\npre_push = "{pre_push}"\n')
    git(repo, "checkout", "-q", "-b", "feat")
    (repo / "f").write_text("feature\n")
    git(repo, "add", "f")
    git(repo, "commit", "-q", "-m", "feature")
    git(repo, "checkout", "-q", "main")
    (repo / "m").write_text("main\n")
    git(repo, "add", "m")
    git(repo, "commit", "-q", "-m", "main moves")
    git(repo, "push", "-q", "origin", "main", "feat")
    ckpt(repo, "hooks", "install")
    return repo, remote


def refused_by_gate(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode != 0, proc
    assert "error: commit refused by git ckpt gate: " in proc.stderr, proc.stderr


def backstop_catches(repo: Path, what: str = "HEAD") -> None:
    """The commit exists without a trailer; verify-commit says not verified; a refusing pre-push
    hook refuses to send it and names it."""
    assert trailers(repo, what) == []
    short = rev(repo, what)[:12]
    res = ckpt(repo, "verify-commit", what, rc=1)
    assert f"({short}): not verified: no checkpoint has this tree" in res.out
    proc = run(repo, "push", "origin", f"{what}:refs/heads/backstop")
    assert proc.returncode != 0, proc
    assert f"  {short}: no checkpoint has this tree" in proc.stderr
    assert "error: push refused: " in proc.stderr


# ------------------------------------------------------------------------------ the table

def _commit(repo):
    (repo / "x").write_text("x\n")
    git(repo, "add", "x")
    return run(repo, "commit", "-m", "x")


def _commit_a(repo):
    (repo / "m").write_text("changed\n")
    return run(repo, "commit", "-a", "-m", "x")


def _commit_only(repo):
    (repo / "m").write_text("changed\n")
    return run(repo, "commit", "-o", "m", "-m", "x")


def _amend(repo):
    (repo / "m").write_text("changed\n")
    git(repo, "add", "m")
    return run(repo, "commit", "--amend", "--no-edit")


def _merge(repo):
    return run(repo, "merge", "--no-ff", "-m", "merge feat", "feat")


def _pull(repo):
    return run(repo, "pull", "--no-rebase", "--no-edit", "origin", "feat")


def _squash(repo):
    assert run(repo, "merge", "--squash", "feat").returncode == 0
    return run(repo, "commit", "-m", "squashed")


def _am(repo):
    patch = git(repo, "format-patch", "--stdout", "-1", "feat")
    return subprocess.run(["git", "am"], cwd=repo, input=patch, capture_output=True)


def _revert(repo):
    return run(repo, "revert", "--no-edit", "HEAD")


def _cherry_pick(repo):
    return run(repo, "cherry-pick", "feat")


def _rebase(repo):
    git(repo, "checkout", "-q", "feat")
    return run(repo, "rebase", "main")


def _commit_tree(repo):
    (repo / "x").write_text("x\n")
    git(repo, "add", "x")
    tree = git(repo, "write-tree").decode().strip()
    c = git(repo, "commit-tree", tree, "-p", "HEAD", "-m", "plumbing").decode().strip()
    git(repo, "update-ref", "HEAD", c)
    return subprocess.CompletedProcess([], 0, "", "")


def _no_verify(repo):
    (repo / "x").write_text("x\n")
    git(repo, "add", "x")
    return run(repo, "commit", "--no-verify", "-m", "x")


def _merge_no_verify(repo):
    return run(repo, "merge", "--no-verify", "--no-ff", "-m", "merge feat", "feat")


def _am_no_verify(repo):
    patch = git(repo, "format-patch", "--stdout", "-1", "feat")
    proc = subprocess.run(["git", "am", "--no-verify"], cwd=repo, input=patch, capture_output=True)
    if proc.returncode == 129:  # git < 2.40 has no `am --no-verify`: switch the hooks off instead
        proc = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "am"], cwd=repo, input=patch, capture_output=True)
    return proc


def _hooks_off(repo):
    (repo / "x").write_text("x\n")
    git(repo, "add", "x")
    return run(repo, "-c", "core.hooksPath=/dev/null", "commit", "-m", "x")


GATED = {"commit": _commit, "commit -a": _commit_a, "commit -o": _commit_only, "commit --amend": _amend,
         "merge": _merge, "pull": _pull, "merge --squash + commit": _squash, "am": _am}
BACKSTOP = {"revert": _revert, "cherry-pick": _cherry_pick, "rebase": _rebase, "commit-tree": _commit_tree,
            "commit --no-verify": _no_verify, "merge --no-verify": _merge_no_verify,
            "am --no-verify": _am_no_verify, "-c core.hooksPath=/dev/null": _hooks_off}


@pytest.mark.parametrize("row", sorted(GATED))
def test_history_table_gated_rows(tmp_path, row):
    """README table: the commands a hook gates refuse an unverified tree; HEAD does not move."""
    repo, _remote = gated(tmp_path)
    head = rev(repo, "HEAD")
    proc = GATED[row](repo)
    assert proc.returncode != 0, proc
    err = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode()
    assert "error: commit refused by git ckpt gate: " in err, err
    assert rev(repo, "HEAD") == head
    assert events(repo)[-1]["type"] == "gate-refused"


@pytest.mark.parametrize("row", sorted(BACKSTOP))
def test_history_table_backstop_rows(tmp_path, row):
    """README table: the commands no hook can gate make their commit, without a trailer, and
    verify-commit and the pre-push hook catch it."""
    repo, _remote = gated(tmp_path)
    head = rev(repo, "HEAD")
    proc = BACKSTOP[row](repo)
    assert proc.returncode == 0, proc
    assert rev(repo, "HEAD") != head
    backstop_catches(repo)


def test_history_table_push_no_verify(tmp_path):
    """README table: `push --no-verify` skips the pre-push hook, and CI's verify-commit RANGE
    names what it sent."""
    repo, _remote = gated(tmp_path)
    assert _no_verify(repo).returncode == 0
    proc = run(repo, "push", "--no-verify", "origin", "main")
    assert proc.returncode == 0, proc
    res = ckpt(repo, "verify-commit", "origin/main~1..origin/main", rc=1)
    assert f"{rev(repo, 'HEAD')[:12]}: not verified: no checkpoint has this tree" in res.out
    assert res.out.endswith("0 of 1 commit(s) verified\n")


def test_history_table_verified_rows_pass_and_get_the_trailer(tmp_path):
    """The same commands on a promoted, verified tree: allowed, with the trailer naming it."""
    repo, _remote = gated(tmp_path)
    # merge: the merge result was verified first (git merge --no-commit, save, verify, abort)
    assert run(repo, "merge", "--no-commit", "--no-ff", "feat").returncode == 0
    cid = save_verify(repo)
    git(repo, "merge", "--abort")
    proc = _merge(repo)
    assert proc.returncode == 0, proc
    assert f"git ckpt gate: commit matches the promoted checkpoint {cid}; verifiers passed" in proc.stderr
    assert trailers(repo) == [cid]
    assert len(git(repo, "rev-list", "--parents", "-n1", "HEAD").split()) == 3
    assert "verified: tree of checkpoint " + cid in ckpt(repo, "verify-commit", "HEAD").out
    # am of a patch whose tree was verified
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    (repo / "f").write_text("feature\n")
    cid = save_verify(repo)
    os.unlink(repo / "f")
    assert _am(repo).returncode == 0
    assert trailers(repo) == []  # no hook after pre-applypatch can write it; verify-commit still says yes
    assert "verified: tree of checkpoint " + cid in ckpt(repo, "verify-commit", "HEAD").out


# ------------------------------------------------------------------------------ input 1: merges


def test_refused_merge_is_finished_by_a_gated_commit(tmp_path):
    """Input 1: a merge of a --no-verify branch is refused by pre-merge-commit; the merge stays in
    progress, and saving + verifying it lets `git commit` (pre-commit) conclude it."""
    repo, _remote = gated(tmp_path)
    proc = _merge(repo)
    refused_by_gate(proc)
    assert "Not committing merge" in proc.stderr + proc.stdout
    assert (repo / ".git" / "MERGE_HEAD").exists()
    cid = save_verify(repo)
    proc = run(repo, "commit", "--no-edit")
    assert proc.returncode == 0, proc
    assert trailers(repo) == [cid]
    assert git(repo, "rev-list", "--parents", "-n1", "HEAD").decode().split()[2] == rev(repo, "feat")


def test_pull_that_merges_is_gated_and_fast_forward_makes_no_commit(tmp_path):
    """Input 1: `git pull` that merges runs pre-merge-commit; a fast-forward pull creates no
    commit (the pulled commits are the remote's: CI's verify-commit judges them)."""
    repo, remote = gated(tmp_path)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    (other / "o").write_text("other\n")
    git(other, "add", "o")
    git(other, "commit", "-q", "-m", "other's commit")
    git(other, "push", "-q", "origin", "main")
    head = rev(repo, "HEAD")
    (repo / "mine").write_text("mine\n")
    git(repo, "add", "mine")
    git(repo, "commit", "-q", "--no-verify", "-m", "mine")
    mine = rev(repo, "HEAD")
    refused_by_gate(run(repo, "pull", "--no-rebase", "--no-edit", "origin", "main"))
    assert rev(repo, "HEAD") == mine
    git(repo, "merge", "--abort")
    git(repo, "reset", "-q", "--hard", head)
    proc = run(repo, "pull", "--ff-only", "origin", "main")
    assert proc.returncode == 0, proc
    assert rev(repo, "HEAD") == rev(other, "HEAD")


# ------------------------------------------------------------------------------ input 2: trailers


def _verified_commit(repo: Path) -> str:
    """b.txt committed through the gate; returns the checkpoint id in its trailer."""
    (repo / "b.txt").write_text("b\n")
    cid = save_verify(repo)
    git(repo, "add", "b.txt")
    proc = run(repo, "commit", "-m", "gated")
    assert proc.returncode == 0, proc
    assert trailers(repo) == [cid]
    return cid


@pytest.mark.parametrize("how", ["amend --no-edit --no-verify", "amend -C", "amend -c", "cherry-pick", "rebase"])
def test_a_trailer_the_gate_did_not_approve_is_removed(tmp_path, how):
    """Input 2 and its siblings: a message reused for another tree loses the trailer."""
    repo, _remote = gated(tmp_path)
    _verified_commit(repo)
    (repo / "b.txt").write_text("x\n")
    git(repo, "add", "b.txt")
    if how == "amend --no-edit --no-verify":
        proc = run(repo, "commit", "--amend", "--no-edit", "--no-verify")
    elif how == "amend -C":
        proc = run(repo, "commit", "--amend", "--no-verify", "-C", "HEAD")
    elif how == "amend -c":
        proc = run(repo, "commit", "--amend", "--no-verify", "-c", "HEAD", env={"GIT_EDITOR": "true"})  # editor keeps it
    elif how == "cherry-pick":
        git(repo, "stash", "-q")
        git(repo, "checkout", "-q", "feat")
        proc = run(repo, "cherry-pick", "main")
    else:  # rebase onto a moved base: the tree changes
        git(repo, "stash", "-q")
        git(repo, "checkout", "-q", "-b", "topic")
        git(repo, "checkout", "-q", "main")
        git(repo, "reset", "-q", "--hard", "HEAD~1")
        (repo / "moved").write_text("moved\n")
        git(repo, "add", "moved")
        git(repo, "commit", "-q", "--no-verify", "-m", "main moved")
        git(repo, "checkout", "-q", "topic")
        proc = run(repo, "rebase", "main")
    assert proc.returncode == 0, proc
    assert trailers(repo) == []
    assert "Ckpt-Verified" not in git(repo, "log", "-1", "--format=%B").decode()
    ckpt(repo, "verify-commit", "HEAD", rc=1)


@pytest.mark.parametrize("forged", ["Ckpt-Verified: default/1", "ckpt-verified: default/1", "CKPT-VERIFIED : default/1",
                                    "Ckpt-Verified:\tdefault/1\n  continued", "Ckpt-Verified: a\nCkpt-Verified: b"])
def test_a_typed_trailer_is_removed_and_an_earned_one_is_exactly_one(tmp_path, forged):
    """Input 2: a trailer written into the message (-m, --no-verify) is removed in every
    spelling git's trailer parser accepts; on an approved tree it is replaced by exactly one."""
    repo, _remote = gated(tmp_path)
    (repo / "x").write_text("x\n")
    git(repo, "add", "x")
    proc = run(repo, "commit", "--no-verify", "-m", f"subject\n\nbody\n\n{forged}")
    assert proc.returncode == 0, proc
    assert trailers(repo) == []
    msg = git(repo, "log", "-1", "--format=%B").decode()
    assert msg == "subject\n\nbody\n\n"
    cid = save_verify(repo)
    proc = run(repo, "commit", "--amend", "-m", f"subject\n\n{forged}")
    assert proc.returncode == 0, proc
    assert trailers(repo) == [cid]
    assert git(repo, "log", "-1", "--format=%B").decode() == f"subject\n\nCkpt-Verified: {cid}\n\n"


def test_trailer_removed_without_python(tmp_path):
    """Input 2, the hook's own shell code: with git-ckpt unavailable, nothing can approve the
    tree, so the prepare-commit-msg hook removes the trailer itself."""
    from test_gate_fast import nopy

    repo, _remote = gated(tmp_path)
    for name in ("pre-commit", "prepare-commit-msg"):
        hook = repo / ".git" / "hooks" / name
        data = hook.read_bytes()
        start = data.index(b"INSTALL_PYTHON=")
        hook.write_bytes(data[:start] + b"INSTALL_PYTHON=/nonexistent/python3" + data[data.index(b"\n", start):])
    (repo / "x").write_text("x\n")
    git(repo, "add", "x")
    proc = run(repo, "commit", "--no-verify", "-m", "s\n\nCkpt-Verified: default/1\nSigned-off-by: T <t@e>", env=nopy())
    assert proc.returncode == 0, proc
    assert git(repo, "log", "-1", "--format=%B").decode() == "s\n\nSigned-off-by: T <t@e>\n\n"


def test_am_removes_a_mailed_trailer(tmp_path):
    """Input 2, `git am`: a trailer in the mail is removed (applypatch-msg)."""
    repo, _remote = gated(tmp_path)
    git(repo, "checkout", "-q", "feat")
    git(repo, "commit", "-q", "--amend", "--no-verify", "-m", "feature\n\nCkpt-Verified: default/1")
    assert trailers(repo) == []  # prepare-commit-msg already removed it: forge it with commit-tree
    c = git(repo, "commit-tree", "HEAD^{tree}", "-p", "HEAD~1", "-m", "feature\n\nCkpt-Verified: default/1").decode().strip()
    git(repo, "checkout", "-q", "main")
    (repo / "f").write_text("feature\n")
    save_verify(repo)
    os.unlink(repo / "f")
    patch = git(repo, "format-patch", "--stdout", "-1", c)
    assert b"Ckpt-Verified: default/1" in patch
    proc = subprocess.run(["git", "am"], cwd=repo, input=patch, capture_output=True)
    assert proc.returncode == 0, proc
    assert "Ckpt-Verified" not in git(repo, "log", "-1", "--format=%B").decode()


# ------------------------------------------------------------------------------ input 3: hooksPath per worktree


def test_relative_hooks_path_reaches_every_worktree(tmp_path):
    """Input 3: with a relative core.hooksPath git runs each worktree's own directory: install
    writes every one (including worktrees made before it), status names a worktree made after it
    as not gated, and install run there fixes it."""
    repo = init_repo(tmp_path / "repo")
    write_config(repo, verifier("ok", ["true"]))
    with open(repo / ".git" / "info" / "exclude", "a") as fh:
        fh.write(".hooks/\n")  # an untracked, ignored hooks directory in each worktree
    git(repo, "config", "core.hooksPath", ".hooks")
    early = tmp_path / "early"
    git(repo, "worktree", "add", "-q", "-b", "early", str(early))
    res = ckpt(repo, "hooks", "install")
    assert f"installed them in {early / '.hooks'} too (another worktree runs its hooks from there)" in res.out
    for root in (repo, early):
        assert sorted(p.name for p in (root / ".hooks").iterdir()) == sorted(HOOKS)
    (early / "e").write_text("e\n")
    git(early, "add", "e")
    refused_by_gate(run(early, "commit", "-m", "e"))
    late = tmp_path / "late"
    git(repo, "worktree", "add", "-q", "-b", "late", str(late))
    st = ckpt(late, "status")
    assert (f"gate:      NOT active in this worktree: git runs its hooks from {late / '.hooks'}, where the git ckpt"
            " hooks are not installed or not executable; run git ckpt hooks install") in st.out
    assert ckpt(late, "status", "--json").json()["result"]["gate_active"] is False
    hs = ckpt(late, "hooks", "status").out
    assert "gate: NOT active in this worktree" in hs
    (late / "l").write_text("l\n")
    git(late, "add", "l")
    assert run(late, "commit", "-m", "not gated").returncode == 0  # what status warned about
    git(late, "reset", "-q", "--soft", "HEAD~1")
    ckpt(late, "hooks", "install")
    assert "gate:      on" in ckpt(late, "status").out and "gate:      on" in ckpt(repo, "status").out
    refused_by_gate(run(late, "commit", "-m", "gated now"))
    res = ckpt(repo, "hooks", "uninstall")
    for root in (repo, early, late):
        assert not (root / ".hooks").exists()  # install created each directory


def test_tracked_hooks_directory_is_refused_naming_why(tmp_path):
    """Input 3, husky style: core.hooksPath = .husky with a tracked .husky/pre-commit: install
    changes nothing (no tracked file is renamed or rewritten), says why, and the gate stays off."""
    repo = init_repo(tmp_path / "repo")
    write_config(repo, verifier("ok", ["true"]))
    (repo / ".husky").mkdir()
    (repo / ".husky" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    os.chmod(repo / ".husky" / "pre-commit", 0o755)
    git(repo, "add", ".husky")
    git(repo, "commit", "-q", "-m", "husky")
    git(repo, "config", "core.hooksPath", ".husky")
    wt = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "linked", str(wt))
    for where in (repo, wt):
        res = ckpt(where, "hooks", "install", rc=1)
        assert res.err.startswith(f"error: git runs the hooks of worktree {where} from {where / '.husky'} (core.hooksPath = .husky), where .husky/pre-commit is tracked;")
        assert "hint: call git ckpt gate --hook from that hook yourself" in res.err
        assert sorted(p.name for p in (where / ".husky").iterdir()) == ["pre-commit"]
        assert git(where, "status", "--porcelain") == b""
        assert git(where, "config", "--get", "ckpt.gate", check=False) == b""
        assert "gate:      off" in ckpt(where, "status").out


def test_absolute_hooks_path_is_one_directory_for_all_worktrees(tmp_path):
    """Input 3, the sibling: an absolute core.hooksPath is shared; one install gates every
    worktree, and status says so in each."""
    repo = init_repo(tmp_path / "repo")
    write_config(repo, verifier("ok", ["true"]))
    shared = tmp_path / "shared-hooks"
    git(repo, "config", "core.hooksPath", str(shared))
    wt = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "linked", str(wt))
    res = ckpt(wt, "hooks", "install")
    assert res.out.splitlines()[0].endswith(f" in {shared}") and "too" not in res.out
    for where in (repo, wt):
        assert "gate:      on" in ckpt(where, "status").out
        (where / "n").write_text("n\n")
        git(where, "add", "n")
        refused_by_gate(run(where, "commit", "-m", "n"))


# ------------------------------------------------------------------------------ inputs 4, 5: pre-push


def _unverified(repo: Path, name: str = "u") -> str:
    (repo / name).write_text(name + "\n")
    git(repo, "add", name)
    git(repo, "commit", "-q", "--no-verify", "-m", name)
    return rev(repo, "HEAD")


@pytest.mark.parametrize("refspec", [["HEAD"], ["main"], ["HEAD:refs/heads/other"], ["--all"], ["--mirror"],
                                     ["refs/tags/light"], ["refs/tags/annotated"], ["HEAD:main", "--force"],
                                     ["--tags"]])
def test_pre_push_judges_the_objects_pushed_whatever_the_refspec(tmp_path, refspec):
    """Input 4: `git push NEW HEAD` and every sibling refspec sends the same unverified commit;
    the hook judges the object ids git hands it, so each is refused in refuse mode."""
    repo, _remote = gated(tmp_path)
    new = tmp_path / "new.git"
    git(tmp_path, "init", "-q", "--bare", str(new))
    git(repo, "remote", "add", "new", str(new))
    bad = _unverified(repo)
    git(repo, "tag", "light")
    git(repo, "tag", "-a", "-m", "t", "annotated")
    proc = run(repo, "push", "new", *refspec)
    assert proc.returncode != 0, proc
    assert f"  {bad[:12]}: no checkpoint has this tree" in proc.stderr
    assert "error: push refused: " in proc.stderr
    assert git(new, "for-each-ref") == b""


def test_pre_push_passes_deletes_checkpoint_refs_and_verified_commits(tmp_path):
    """Input 4: deletions, `git ckpt push` (refs/ckpt, refs/notes) and verified commits pass."""
    repo, remote = gated(tmp_path)
    assert run(repo, "push", "origin", ":feat").returncode == 0  # a delete sends no commit
    (repo / "v").write_text("v\n")
    save_verify(repo)
    git(repo, "add", "v")
    assert run(repo, "commit", "-m", "verified").returncode == 0
    proc = run(repo, "push", "origin", "HEAD:refs/heads/verified")
    assert proc.returncode == 0 and "not verified" not in proc.stderr, proc
    ckpt(repo, "push", "origin")
    assert git(remote, "for-each-ref", "--format=%(refname)", "refs/ckpt/default/promoted") != b""


@pytest.mark.parametrize("where", ["main", "linked worktree"])
def test_git_ckpt_push_passes_the_pre_push_hook_while_ckpt_toml_is_untrusted(tmp_path, where):
    """Eleventh walkthrough: with .ckpt.toml changed since `git ckpt trust` (or in a linked
    worktree, where nothing was trusted yet), the tool's own pre-push hook refused
    `git ckpt push` (exit 10), which sends refs/ckpt and refs/notes only, no history to judge.
    It passes; a push of history is still refused while the file is untrusted (exit 9's words)."""
    repo, remote = gated(tmp_path)
    here = repo
    if where == "main":
        with open(repo / ".ckpt.toml", "a") as fh:
            fh.write("# edited\n")
    else:
        here = tmp_path / "wt"
        git(repo, "worktree", "add", "-q", "-b", "wt", str(here))
    (here / "w").write_text("w\n")
    ckpt(here, "save", "-m", "work")
    ckpt(here, "push", "origin")
    assert git(remote, "for-each-ref", "--format=%(refname)", "refs/ckpt/default/").strip() != b""
    bad = _unverified(here)
    proc = run(here, "push", "origin", "HEAD:refs/heads/judged")
    assert proc.returncode != 0 and "push refused: the pushed commits cannot be judged" in proc.stderr, proc
    assert git(remote, "for-each-ref", "refs/heads/judged") == b"" and bad


def test_pre_push_on_a_new_remote_counts_and_exempts_history_before_the_gate(tmp_path):
    """Input 5: a 300-commit history pushed to a new remote: history before `hooks install`
    (ckpt.gate.since) is exempt; what is new is a count and the first five, not a line each."""
    repo = init_repo(tmp_path / "repo")
    write_config(repo, verifier("ok", ["true"]) + '[gate]\npre_push = "refuse"\n')
    stream = ["reset refs/heads/main", f"from {rev(repo, 'HEAD')}"]
    for i in range(300):
        data = f"{i}\n"
        stream += ["commit refs/heads/main", f"committer T <t@e> {1700000000 + i} +0000", "data 2", "c" + str(i % 10),
                   f"M 100644 inline n{i}", f"data {len(data)}", data.rstrip("\n")]
    git(repo, "fast-import", "--quiet", input=("\n".join(stream) + "\n").encode())
    git(repo, "reset", "-q", "--hard", "main")
    assert int(git(repo, "rev-list", "--count", "HEAD")) == 302
    ckpt(repo, "hooks", "install")
    assert git(repo, "config", "ckpt.gate.since").decode().strip() == rev(repo, "HEAD")
    new = tmp_path / "new.git"
    git(tmp_path, "init", "-q", "--bare", str(new))
    git(repo, "remote", "add", "new", str(new))
    proc = run(repo, "push", "new", "main")
    assert proc.returncode == 0 and proc.stderr.count("\n") <= 3, proc
    new_commits = [_unverified(repo, f"u{i}") for i in range(7)]
    proc = run(repo, "push", "new", "HEAD")
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith(("To ", " ! ", "error: failed to push"))]
    assert lines == [
        "warning: 7 of 7 pushed commit(s) are not verified checkpoints:",
        *[f"  {c[:12]}: no checkpoint has this tree" for c in reversed(new_commits[2:])],
        "  ... and 2 more",
        "error: push refused: 7 commit(s) are not verified checkpoints ([gate] pre_push = \"refuse\")",
        # walkthrough 25: "save && verify" alone left every commit but the last unverified
        "hint: each commit needs a verified checkpoint of its own tree, and git ckpt save && git ckpt verify verifies the "
        "worktree's (the last commit's) only: squash them into one commit, then save and verify it (git reset --soft "
        "new/BRANCH && git commit), or git ckpt verify-commit REV explains each",
    ]
    # without the exemption every commit of history is judged, still as a count
    git(repo, "config", "--unset", "ckpt.gate.since")
    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "fresh.git"))
    git(repo, "remote", "add", "fresh", str(tmp_path / "fresh.git"))
    proc = run(repo, "push", "fresh", "HEAD")
    assert "warning: 309 of 309 pushed commit(s) are not verified checkpoints:" in proc.stderr
    assert proc.stderr.count("no checkpoint has this tree") == 5
    # install --since names the exemption point; an unknown one is refused
    ckpt(repo, "hooks", "install", "--since", new_commits[-1])
    assert run(repo, "push", "new", "HEAD").returncode == 0
    assert "unknown revision 'nope'" in ckpt(repo, "hooks", "install", "--since", "nope", rc=4).err
    git(repo, "config", "ckpt.gate.since", "0" * 40)
    _unverified(repo, "after")
    proc = run(repo, "push", "new", "HEAD")
    assert proc.returncode != 0 and "error: ckpt.gate.since names '" + "0" * 40 + "', which is not a commit here" in proc.stderr


# ------------------------------------------------------------------------------ input 6: loosening through git config


@pytest.mark.parametrize("loosen", [
    ("config", "ckpt.verifier.tests.command", "true"),
    ("config", "ckpt.verifier.tests.required", "false"),
    ("config", "ckpt.verifier.tests.timeout", "99999"),
    ("-c", "ckpt.verifier.tests.command", "true"),
    ("-c", "ckpt.verifier.tests.required", "false"),
])
def test_git_config_never_loosens_a_trusted_verifier(tmp_path, loosen):
    """Input 6: git config (or git -c) redefining a verifier .ckpt.toml defines is ignored and
    named: the trusted command still runs and still fails, nothing is promoted, the commit is
    refused and verify-commit says not verified; trust --show names the ignored setting."""
    how, key, value = loosen
    repo = init_repo(tmp_path / "repo")
    write_config(repo, verifier("tests", ["grep", "-q", "good", "a.txt"]))
    ckpt(repo, "hooks", "install")
    (repo / "a.txt").write_text("bad\n")
    if how == "config":
        git(repo, "config", key, value)
        prefix: list[str] = []
    else:
        prefix = ["-c", f"{key}={value}"]
    ckpt(repo, "save")
    res = via_git(repo, *prefix, "ckpt", "verify")
    assert res.rc == 1, res
    assert "verifier: tests ...... failed (exit 1, " in res.out
    assert f"warning: git config {key} is ignored: .ckpt.toml defines that verifier" in res.err or how == "-c"
    assert "promoted default/" not in res.out
    assert git(repo, "rev-parse", "-q", "--verify", "refs/ckpt/default/promoted", check=False) == b""
    show = via_git(repo, *prefix, "ckpt", "trust", "--show")
    assert "  tests: grep -q good a.txt" in show.out and "required, timeout 600 s, from .ckpt.toml" in show.out
    if how == "config":
        assert f"ignored: git config {key} (git config may add verifiers, never loosen one .ckpt.toml defines)" in show.out
    assert via_git(repo, *prefix, "ckpt", "promote", "@").rc == 1
    git(repo, "add", "a.txt")
    refused_by_gate(run(repo, *prefix, "commit", "-m", "loosened"))
    git(repo, "commit", "-q", "--no-verify", "-m", "loosened")
    res = via_git(repo, *prefix, "ckpt", "verify-commit", "HEAD")
    assert res.rc == 1 and "not verified" in res.out


def test_git_config_may_add_verifiers_and_tighten(repo):
    """Input 6, the other side: git config adds a verifier (it runs and blocks promotion when it
    fails) and may make a .ckpt.toml verifier required."""
    write_config(repo, verifier("tests", ["true"]) + verifier("lint", ["false"], required=False))
    ckpt(repo, "save")
    git(repo, "config", "ckpt.verifier.extra.command", "false")
    res = ckpt(repo, "verify", rc=1)
    assert "verifier: extra ...... failed" in res.out and "promoted default/" not in res.out
    git(repo, "config", "--unset", "ckpt.verifier.extra.command")
    git(repo, "config", "ckpt.verifier.lint.required", "true")
    res = ckpt(repo, "verify", rc=1)
    assert "verifier: lint ...... failed (exit 1, " in res.out and "not required" not in res.out
    git(repo, "config", "--unset", "ckpt.verifier.lint.required")
    assert ckpt(repo, "verify").out.endswith("promoted default/1\n")


# ------------------------------------------------------------------------------ input 8: another task's checkpoint


def test_a_tree_promoted_by_another_task_passes_and_is_named(tmp_path):
    """Input 8: after switching task, committing a tree another task of this repository promoted
    is allowed, and the trailer names that checkpoint; other trees are still refused."""
    repo, _remote = gated(tmp_path)
    (repo / "a.txt").write_text("a\n")
    ckpt(repo, "task", "start", "first")
    save_verify(repo)
    ckpt(repo, "task", "start", "second")
    git(repo, "add", "a.txt")
    proc = run(repo, "commit", "-m", "first's work")
    assert proc.returncode == 0, proc
    assert "git ckpt gate: commit matches the promoted checkpoint first/1; verifiers passed" in proc.stderr
    assert trailers(repo) == ["first/1"]
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "b.txt")
    proc = run(repo, "commit", "-m", "unverified")
    refused_by_gate(proc)
    assert "task second has no promoted checkpoint" in proc.stderr
    # a task whose promoted checkpoint lost its passing result does not count
    ckpt(repo, "task", "start", "third")
    ckpt(repo, "save")
    ckpt(repo, "promote", "@", "--force")
    git(repo, "config", "ckpt.verifier.strict.command", "false")
    ckpt(repo, "task", "start", "second")
    refused_by_gate(run(repo, "commit", "-m", "forced elsewhere"))


def test_a_fetched_promoted_checkpoint_does_not_pass_the_gate(tmp_path):
    """Input 8, the limit: only this repository's own tasks count, never a teammate's promoted
    checkpoint fetched from a remote."""
    repo, remote = gated(tmp_path)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    ckpt(other, "trust")
    (other / "t.txt").write_text("t\n")
    ckpt(other, "task", "start", "theirs")
    save_verify(other)
    ckpt(other, "push", "origin")
    ckpt(repo, "fetch", "origin")
    git(repo, "pull", "-q", "--ff-only", "origin", "main")
    (repo / "t.txt").write_text("t\n")
    git(repo, "add", "t.txt")
    refused_by_gate(run(repo, "commit", "-m", "theirs"))


# ------------------------------------------------------------------------------ verify-commit RANGE


def test_verify_commit_checks_every_commit_of_a_range(tmp_path):
    repo, _remote = gated(tmp_path)
    base = rev(repo, "HEAD")
    good = []
    for name in ("g1", "g2"):
        (repo / name).write_text(name + "\n")
        save_verify(repo)
        git(repo, "add", name)
        assert run(repo, "commit", "-m", name).returncode == 0
        good.append(rev(repo, "HEAD"))
    res = ckpt(repo, "verify-commit", f"{base}..HEAD")
    assert res.out.splitlines() == [f"{good[1][:12]}: verified: tree of checkpoint default/2 (promoted)",
                                    f"{good[0][:12]}: verified: tree of checkpoint default/1",
                                    "2 of 2 commit(s) verified"]
    bad = _unverified(repo)
    for args in ([f"{base}..HEAD"], [f"^{base}", "HEAD"], [f"{base}...HEAD"], ["HEAD^!"]):
        res = ckpt(repo, "verify-commit", *args, rc=1)
        assert f"{bad[:12]}: not verified: no checkpoint has this tree" in res.out, args
    data = ckpt(repo, "verify-commit", "--json", f"{base}..HEAD", rc=1).json()["result"]
    assert [d["verified"] for d in data] == [False, True, True] and data[0]["commit"] == bad
    assert ckpt(repo, "verify-commit", "HEAD..HEAD").out == "0 of 0 commit(s) verified\n"
    assert "unknown revision or range 'nope..HEAD'" in ckpt(repo, "verify-commit", "nope..HEAD", rc=4).err


# ------------------------------------------------------------------------------ the trailer remover, as a family


def _shell_remover() -> str:
    """The prepare-commit-msg hook's own ckpt_set_trailer function, as shell text."""
    text = (Path(__file__).parent.parent / "hooks" / "prepare-commit-msg").read_text()
    start = text.index("ckpt_set_trailer() {")
    return text[start:text.index("\n}\n", start) + 3]


KEYS = st.sampled_from(["Ckpt-Verified", "ckpt-verified", "CKPT-VERIFIED", "Ckpt-verified", "Ckpt-Verified ",
                        "Ckpt-Verified\t", "Ckpt-Verifie", "Ckpt-Verified-By", "XCkpt-Verified", "Signed-off-by"])
LINES = st.one_of(
    st.tuples(KEYS, st.sampled_from([": a/1", ":b/2", ":  ", ": x\n  folded", ": y\n\tfolded\n \n"])).map("".join),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0\n"), max_size=20),
    st.sampled_from(["", "# comment", " indented", "Ckpt-Verified", "body: text"]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINES, min_size=1, max_size=8))
def test_shell_and_python_removers_agree_and_leave_no_trailer(tmp_path, lines):
    """Input 2 as a family: for any message, the hook's shell code and gate.strip_trailers give
    the same bytes, and git's own trailer parser finds no Ckpt-Verified trailer in either."""
    from git_ckpt.gate import strip_trailers

    text = ("subject\n\n" + "\n".join(lines) + "\n").encode()
    msg = tmp_path / "msg"
    msg.write_bytes(text)
    proc = subprocess.run(["sh", "-c", _shell_remover() + 'ckpt_set_trailer "$1" ""', "sh", str(msg)], capture_output=True)
    assert proc.returncode == 0, proc
    assert msg.read_bytes() == strip_trailers(text)
    parsed = subprocess.run(["git", "interpret-trailers", "--parse", str(msg)], capture_output=True, check=True).stdout
    assert not any(re.match(rb"(?i)ckpt-verified\s*:", ln) for ln in parsed.splitlines()), parsed


# ------------------------------------------------------------------------------ input 7: [gate] isolated


def _make_repo(tmp_path: Path, isolated: bool) -> Path:
    """`make test` as the verifier; the tracked Makefile's test fails; an ignored GNUmakefile
    (which make prefers) passes."""
    repo = init_repo(tmp_path / "repo")
    (repo / "Makefile").write_text("test:\n\t@false\n")
    extra = '[gate]\nisolated = true\n' if isolated else ""
    write_config(repo, verifier("tests", ["make", "-s", "test"]) + extra)
    with open(repo / ".gitignore", "a") as fh:
        fh.write("GNUmakefile\n")
    git(repo, "add", ".gitignore", "Makefile")
    git(repo, "commit", "-q", "-m", "make")
    (repo / "GNUmakefile").write_text("test:\n\t@true\n")
    ckpt(repo, "hooks", "install")
    return repo


def test_ignored_files_decide_an_in_place_verify_unless_isolated(tmp_path):
    """Input 7: the ignored GNUmakefile makes the in-place run pass while an isolated run of the
    same checkpoint fails; with [gate] isolated = true verify runs isolated, and an in-place
    pass (recorded before the setting) counts for neither promote, the gate nor verify-commit."""
    plain = _make_repo(tmp_path / "plain", isolated=False)
    ckpt(plain, "save")
    assert ckpt(plain, "verify").out.endswith("promoted default/1\n")  # what the issue reports
    assert "verifier: tests ...... failed (exit 2, " in ckpt(plain, "verify", "--isolated", "--rerun", rc=1).out

    repo = _make_repo(tmp_path / "isolated", isolated=True)
    ckpt(repo, "save")
    res = ckpt(repo, "verify", rc=1)
    assert "verifier: tests ...... failed (exit 2, " in res.out and "promoted default/" not in res.out
    assert events(repo)[-1]["data"]["isolated"] is True
    # an in-place pass, recorded while the setting was off, does not count once it is on
    toml = (repo / ".ckpt.toml").read_text()
    (repo / ".ckpt.toml").write_text(toml.replace("isolated = true", "isolated = false"))
    ckpt(repo, "trust")
    ckpt(repo, "save")
    assert ckpt(repo, "verify").out.endswith("promoted default/2\n")  # in place, setting off
    (repo / ".ckpt.toml").write_text(toml)
    ckpt(repo, "trust")
    git(repo, "config", "ckpt.gate.isolated", "false")  # git config cannot loosen the file's setting
    ckpt(repo, "save")
    git(repo, "checkout", "-q", "HEAD", "--", ".ckpt.toml")
    refused = run(repo, "commit", "--allow-empty", "-m", "x")
    refused_by_gate(refused)
    res = ckpt(repo, "promote", "default/2", rc=1)
    assert ("required verifier tests has no passing result (only a run in place passed:"
            " with [gate] isolated = true, or git config ckpt.gate.isolated true, only git ckpt verify --isolated counts) on this content") in res.err
    git(repo, "commit", "-q", "--no-verify", "--allow-empty", "-m", "x")
    assert "not verified" in ckpt(repo, "verify-commit", "HEAD", rc=1).out
    # fixing the tracked Makefile and verifying (isolated) promotes; the commit is allowed
    (repo / "Makefile").write_text("test:\n\t@true\n")
    os.unlink(repo / "GNUmakefile")
    git(repo, "add", "Makefile")
    cid = save_verify(repo)
    assert events(repo)[-2]["data"]["isolated"] is True
    proc = run(repo, "commit", "-m", "fixed")
    assert proc.returncode == 0, proc
    assert trailers(repo) == [cid]


def test_readme_ci_recipe(tmp_path):
    """The README's CI recipe, run in a fresh clone: every verified tree passes, a failing one
    is named, exit 1."""
    repo, remote = gated(tmp_path)
    (repo / "ok.txt").write_text("ok\n")
    git(repo, "add", "ok.txt")
    git(repo, "commit", "-q", "--no-verify", "-m", "fine")
    (repo / "bad.txt").write_text("bad\n")
    git(repo, "add", "bad.txt")
    git(repo, "commit", "-q", "--no-verify", "-m", "breaks the tests")
    git(repo, "push", "-q", "--no-verify", "origin", "main:refs/heads/topic")
    ci = tmp_path / "ci"
    git(tmp_path, "clone", "-q", "-b", "topic", str(remote), str(ci))
    (ci / ".ckpt.toml").write_text(verifier("tests", ["sh", "-c", "test ! -e bad.txt"]))
    git(ci, "commit", "-q", "-am", "the real tests")
    git(ci, "push", "-q", "origin", "HEAD:refs/heads/topic")  # (hooks are not installed in CI)
    script = (Path(__file__).parent.parent / "README.md").read_text()
    script = script[script.index("git ckpt trust                                    # CI"):]
    script = script[:script.index("```")]
    proc = subprocess.run(["sh", "-c", script], cwd=ci, capture_output=True, text=True)
    assert proc.returncode == 1, proc
    lines = [ln for ln in proc.stdout.splitlines() if "verified" in ln]
    assert lines == [
        f"{rev(ci, 'HEAD')[:12]}: not verified: checkpoint default/3 has this tree, but required verifier tests has status failed",
        f"{rev(ci, 'HEAD~1')[:12]}: not verified: checkpoint default/2 has this tree, but required verifier tests has status failed",
        f"{rev(ci, 'HEAD~2')[:12]}: verified: tree of checkpoint default/1 (promoted)",
        "1 of 3 commit(s) verified",
    ]
