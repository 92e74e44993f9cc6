"""The commit gate through real `git commit` and the installed hooks; verify-commit; pre-push."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ckpt, git, init_repo
from test_verify import events, promoted, rev, verifier, write_config

PY = sys.executable


def commit(repo, *args, ok=True, env=None):
    """Run a real `git commit ARGS` (hooks fire); assert it succeeded or was refused."""
    proc = subprocess.run(["git", "commit", "-q", *args], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    assert (proc.returncode == 0) == ok, proc
    return proc


def test_real_verifiers_promotion_and_the_commit_gate(repo):
    """Done-when 1: pytest + compileall; fail → not promoted; fix → promoted; commit gated, trailer written."""
    (repo / "tests").mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "tests" / "test_calc.py").write_text("from calc import add\n\ndef test_add():\n    assert add(2, 2) == 4\n")
    write_config(
        repo,
        verifier("tests", [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], env={"PYTHONPATH": "."})
        + verifier("compile", f"{PY} -m compileall -q calc.py tests"),
    )
    ckpt(repo, "hooks", "install")
    ckpt(repo, "save", "-m", "buggy add")
    res = ckpt(repo, "verify", rc=1)
    assert "verifier: tests ...... failed (exit 1, " in res.out
    assert "verifier: compile ...... passed (exit 0, " in res.out
    assert "1 failed" in res.out  # pytest's own output streamed through
    assert promoted(repo) is None
    git(repo, "add", "-A")
    refused = commit(repo, "-m", "buggy", ok=False)
    assert "error: commit refused by git ckpt gate: task default has no promoted checkpoint" in refused.stderr
    assert "hint: git ckpt verify default/1" in refused.stderr
    assert git(repo, "log", "--format=%s").decode().splitlines() == ["config", "initial"]

    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    ckpt(repo, "save", "-m", "fix add")
    res = ckpt(repo, "verify")
    assert "verifier: tests ...... passed" in res.out and res.out.endswith("promoted default/2\n")
    assert promoted(repo) == rev(repo, "refs/ckpt/default/2")
    # the staged index still has the buggy calc.py: refused, naming the path
    refused = commit(repo, "-m", "stale index", ok=False)
    assert "differs from the promoted checkpoint default/2 in 1 path(s)" in refused.stderr
    assert "  M calc.py" in refused.stderr
    git(repo, "add", "-A")
    ok = commit(repo, "-m", "fix add")
    assert "git ckpt gate: commit matches the promoted checkpoint default/2; verifiers passed" in ok.stderr
    msg = git(repo, "log", "-1", "--format=%B").decode()
    assert msg == "fix add\n\nCkpt-Verified: default/2\n\n"
    assert git(repo, "log", "-1", "--format=%(trailers:key=Ckpt-Verified,valueonly)").decode().strip() == "default/2"
    assert rev(repo, "HEAD^{tree}") == rev(repo, "refs/ckpt/default/2^{tree}")
    refusals = [e for e in events(repo) if e["type"] == "gate-refused"]
    assert len(refusals) == 2 and refusals[1]["data"]["paths"] == ["M calc.py"]
    assert refusals[1]["data"]["fix"] == "git ckpt save && git ckpt verify"
    # verify-commit answers the same for any commit
    assert "HEAD (" in ckpt(repo, "verify-commit", "HEAD").out
    res = ckpt(repo, "verify-commit", "HEAD~1", rc=1)
    assert "not verified: checkpoint default/1 has this tree" not in res.out  # HEAD~1 is the config commit
    assert "not verified: no checkpoint has this tree" in res.out


def _promoted_ab(repo):
    """a, b, c committed; hooks on; a and b changed, saved and verified (promoted default/1)."""
    for name in ("a", "b", "c"):
        (repo / name).write_text(f"{name}\n")
    write_config(repo, verifier("ok", ["true"]))
    ckpt(repo, "hooks", "install")
    git(repo, "add", "a", "b", "c")
    git(repo, "commit", "-q", "--no-verify", "-m", "files")
    (repo / "a").write_text("a2\n")
    (repo / "b").write_text("b2\n")
    ckpt(repo, "save")
    ckpt(repo, "verify")


def test_commit_a_is_gated_on_the_tree_it_would_commit(repo):
    """Done-when 2: `git commit -a` is judged on the tree it really commits ($GIT_INDEX_FILE)."""
    _promoted_ab(repo)
    git(repo, "add", "a", "b")  # the real index is now the promoted tree
    (repo / "c").write_text("c2, not verified\n")
    refused = commit(repo, "-a", "-m", "all", ok=False)
    assert "  M c" in refused.stderr and "in 1 path(s)" in refused.stderr
    # an empty message still aborts the commit: the trailer is not added to an empty message
    empty = commit(repo, ok=False, env={"GIT_EDITOR": "true"})  # an editor that leaves the message empty
    assert "Aborting commit due to empty commit message" in empty.stderr
    ok = commit(repo, "-m", "index only")  # the index alone is exactly the promoted tree
    assert git(repo, "show", "HEAD:c") == b"c\n"
    assert "Ckpt-Verified: default/1" in git(repo, "log", "-1", "--format=%B").decode()
    assert "default/1" in ok.stderr


def test_commit_paths_is_gated_on_the_partial_tree(repo):
    """Done-when 2: `git commit PATH` is judged on the partial tree git builds for it."""
    _promoted_ab(repo)
    refused = commit(repo, "-m", "only a", "--", "a", ok=False)
    assert "  M b" in refused.stderr and "  M a" not in refused.stderr
    assert git(repo, "log", "-1", "--format=%s") == b"files\n"
    commit(repo, "-m", "a and b", "--", "a", "b")
    assert git(repo, "log", "-1", "--format=%s") == b"a and b\n"
    assert rev(repo, "HEAD^{tree}") == rev(repo, "refs/ckpt/default/1^{tree}")


def test_refusal_lists_twenty_paths_and_a_count(repo):
    write_config(repo, "")
    git(repo, "config", "ckpt.gate", "true")
    ckpt(repo, "save")
    ckpt(repo, "verify")
    for i in range(25):
        (repo / f"f{i:02}").write_text("x\n")
    git(repo, "add", "-A")
    res = ckpt(repo, "gate", rc=1)
    lines = res.err.splitlines()
    assert lines[0] == "error: commit refused by git ckpt gate: the tree being committed differs from the promoted checkpoint default/1 in 25 path(s)"
    assert lines[1:21] == [f"  A f{i:02}" for i in range(20)]
    assert lines[21] == "  ... and 5 more"
    assert lines[22] == "hint: git ckpt save && git ckpt verify"
    data = ckpt(repo, "gate", "--json", rc=1).json()["result"]
    assert data["count"] == 25 and len(data["paths"]) == 20 and data["allowed"] is False


def test_gate_refuses_a_forced_promotion_naming_the_verifier(repo):
    write_config(repo, verifier("tests", ["false"]))
    git(repo, "config", "ckpt.gate", "true")
    ckpt(repo, "save")
    ckpt(repo, "verify", rc=1)
    ckpt(repo, "promote", "default/1", "--force")
    logged = len(events(repo))
    res = ckpt(repo, "gate", rc=1)
    assert "required verifier tests has status failed on the promoted checkpoint default/1 (it was promoted with --force)" in res.err
    assert "hint: git ckpt verify default/1" in res.err
    assert len(events(repo)) == logged  # by hand: a question, no refused commit (walkthrough 28)
    assert ckpt(repo, "gate", "--hook", rc=1).err == res.err
    ev = events(repo)[-1]
    assert ev["type"] == "gate-refused" and ev["data"]["failing"] == {"tests": "failed"}


def test_gate_is_off_unless_enabled(repo, tmp_path):
    write_config(repo, verifier("tests", ["false"]))
    res = ckpt(repo, "gate")
    assert res.err == "git ckpt gate is off in this repository (git ckpt hooks install turns it on)\n"
    assert ckpt(repo, "gate", "--hook").err == ""
    # a repository sharing the hooks directory but without ckpt.gate is never blocked
    other = init_repo(tmp_path / "other")
    shared = tmp_path / "shared-hooks"
    git(repo, "config", "core.hooksPath", str(shared))
    git(other, "config", "core.hooksPath", str(shared))
    ckpt(repo, "hooks", "install")
    (other / "x").write_text("x\n")
    git(other, "add", "x")
    commit(other, "-m", "not gated here")
    assert "Ckpt-Verified" not in git(other, "log", "-1", "--format=%B").decode()


def test_verify_commit_unknown_revision_and_usage(repo):
    assert "unknown revision 'nope'" in ckpt(repo, "verify-commit", "nope", rc=4).err
    assert "name at least one commit" in ckpt(repo, "verify-commit", rc=2).err


def test_pre_push_warns_or_refuses(repo, tmp_path):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    write_config(repo, verifier("ok", ["true"]) + '[gate]\npre_push = "warn"\n')
    ckpt(repo, "hooks", "install", "--since", "main~1")
    # HEAD ("config") was committed after the gate's since point (main~1) and never verified
    proc = subprocess.run(["git", "push", "origin", "main"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc
    assert "warning: 1 of 1 pushed commit(s) are not verified checkpoints:\n" in proc.stderr
    assert f"  {rev(repo, 'HEAD')[:12]}: no checkpoint has this tree\n" in proc.stderr
    (repo / ".ckpt.toml").write_text(verifier("ok", ["true"]) + '[gate]\npre_push = "refuse"\n')
    ckpt(repo, "trust")
    ckpt(repo, "save")
    ckpt(repo, "verify")
    git(repo, "add", "-A")
    commit(repo, "-m", "refuse mode")  # gated and verified
    (repo / "sneaky").write_text("s\n")
    git(repo, "add", "sneaky")
    git(repo, "commit", "-q", "--no-verify", "-m", "skipped the gate")
    assert git(repo, "log", "-1", "--format=%B") == b"skipped the gate\n\n"  # no trailer for an unverified tree
    proc = subprocess.run(["git", "push", "origin", "main"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode != 0, proc
    assert "error: push refused: 1 commit(s) are not verified checkpoints" in proc.stderr
    short = rev(repo, "HEAD")[:12]
    assert f"  {short}: no checkpoint has this tree" in proc.stderr
    assert rev(repo, "HEAD~1")[:12] not in proc.stderr  # the gated commit is verified
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    proc = subprocess.run(["git", "push", "origin", "main"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc


# ---------------------------------------------------------------------------- an untrusted requirement


def _refs_and_ledger(repo):
    """Every ckpt ref and the ledger events: what a refusal must leave unchanged."""
    return git(repo, "for-each-ref", "--format=%(objectname) %(refname)", "refs/ckpt", "refs/notes"), len(events(repo))


def test_a_loosened_or_deleted_config_cannot_promote_pass_the_gate_or_verify_commit(repo):
    """Hostile report: after a verified promotion, edit .ckpt.toml (required = false) or delete
    it; promote, the gate and verify-commit must judge against a trusted config (exit 9)."""
    (repo / "a.txt").write_text("good\n")
    write_config(repo, verifier("tests", ["grep", "-q", "good", "a.txt"]))
    ckpt(repo, "hooks", "install")
    ckpt(repo, "save")
    assert ckpt(repo, "verify").out.endswith("promoted default/1\n")
    (repo / "a.txt").write_text("bad\n")  # content the verifier would fail
    toml = (repo / ".ckpt.toml").read_text()
    for loosen in (lambda: (repo / ".ckpt.toml").write_text(toml.replace('"tests"\n', '"tests"\nrequired = false\n')),
                   lambda: (repo / ".ckpt.toml").unlink()):
        loosen()
        ckpt(repo, "save")
        before = _refs_and_ledger(repo)
        res = ckpt(repo, "promote", "@", rc=9)
        assert res.err.splitlines()[0].startswith("error: .ckpt.toml is ")
        assert "since you trusted it; default/" in res.err and "was not promoted" in res.err
        assert res.err.splitlines()[1] == "hint: review what would run with git ckpt trust --show, then allow it with git ckpt trust"
        assert _refs_and_ledger(repo) == before and promoted(repo) == rev(repo, "refs/ckpt/default/1")
        # the real commit: refused by the hook (exit 9 from the gate), nothing committed
        head = rev(repo, "HEAD")
        refused = subprocess.run(["git", "commit", "-qam", "x"], cwd=repo, capture_output=True, text=True)
        assert refused.returncode != 0 and rev(repo, "HEAD") == head
        assert "error: commit refused by git ckpt gate: .ckpt.toml is " in refused.stderr
        assert "so its required verifiers cannot be judged" in refused.stderr
        assert "hint: git ckpt trust (after reviewing git ckpt trust --show)" in refused.stderr
        res = ckpt(repo, "gate", rc=9)
        assert res.err.startswith("error: commit refused by git ckpt gate: .ckpt.toml is ")
        assert ckpt(repo, "gate", "--json", rc=9).json()["result"]["untrusted"] is True
        # verify-commit refuses to judge: a commit of the loosened content made with --no-verify
        git(repo, "commit", "-q", "--no-verify", "-am", "unverified")
        res = ckpt(repo, "verify-commit", "HEAD", rc=9)
        assert res.out == "" and "; no commit can be judged verified" in res.err
        assert "hint: review what would run with git ckpt trust --show" in res.err
        git(repo, "reset", "-q", "--soft", "HEAD~1")
        # --force still works and is recorded as forced
        ckpt(repo, "promote", "@", "--force")
        ev = events(repo)[-1]
        assert ev["type"] == "promote" and ev["data"]["forced"] is True and ev["data"]["untrusted_config"] is True
        git(repo, "update-ref", "refs/ckpt/default/promoted", rev(repo, "refs/ckpt/default/1"))
        git(repo, "checkout", "-q", "HEAD", "--", ".ckpt.toml")
    # trusting the new bytes is the one fix (here: no verifiers left, the empty requirement)
    (repo / ".ckpt.toml").unlink()
    ckpt(repo, "trust")
    assert ckpt(repo, "promote", "@").out == "promoted default/3\n"


def test_no_config_and_local_verifiers_need_no_trust_for_promote_and_gate(repo):
    """Kept: a repository that never had a .ckpt.toml promotes on the empty requirement, and
    verifiers from the local git config judge without any trust."""
    ckpt(repo, "hooks", "install")
    (repo / "a.txt").write_text("one\n")
    ckpt(repo, "save")
    assert ckpt(repo, "promote", "@").out == "promoted default/1\n"
    git(repo, "add", "a.txt")
    commit(repo, "-m", "empty requirement")
    assert "verified: tree of checkpoint default/1" in ckpt(repo, "verify-commit", "HEAD").out
    git(repo, "config", "ckpt.verifier.local.command", "grep -q two a.txt")
    (repo / "a.txt").write_text("two\n")
    ckpt(repo, "save")
    ckpt(repo, "promote", "@", rc=1)
    ckpt(repo, "verify")
    git(repo, "add", "a.txt")
    commit(repo, "-m", "local verifier")
    assert "verified: tree of checkpoint default/2" in ckpt(repo, "verify-commit", "HEAD").out


def test_an_untracked_file_the_commit_leaves_out_gets_a_hint_that_fixes_it(repo):
    """A checkpoint holds untracked files; a commit that leaves one out is refused, and the hint
    names the two ways out (add it, or ignore it and save again) instead of looping on save."""
    for name in ("a", "b", "c"):
        (repo / name).write_text(f"{name}\n")
    write_config(repo, verifier("ok", ["true"]))
    git(repo, "add", "a", "b", "c", ".ckpt.toml")
    git(repo, "commit", "-q", "-m", "files")
    ckpt(repo, "trust")
    ckpt(repo, "hooks", "install")
    (repo / "a").write_text("a2\n")
    (repo / "local.json").write_text("{}\n")  # untracked, e.g. an agent's local settings
    ckpt(repo, "save")
    ckpt(repo, "verify")
    refused = commit(repo, "-a", "-m", "all", ok=False)
    assert "  D local.json" in refused.stderr and "in 1 path(s)" in refused.stderr
    assert "hint: git add the paths marked D" in refused.stderr and "marked otherwise" not in refused.stderr
    (repo / "b").write_text("b2\n")  # and a change the checkpoint lacks: the hint covers both kinds
    mixed = commit(repo, "-a", "-m", "all", ok=False)
    assert "  D local.json" in mixed.stderr and "  M b" in mixed.stderr
    assert mixed.stderr.splitlines()[-1] == (
        "hint: git add the paths marked D (the verified checkpoint has them), or ignore them (e.g. in .git/info/exclude) "
        "and run git ckpt save && git ckpt verify; the paths marked otherwise need git ckpt save && git ckpt verify either way")
    (repo / "b").write_text("b\n")
    # a path marked D that is gone from the worktree too needs no git add (ninth walkthrough)
    (repo / "local.json").unlink()
    gone = commit(repo, "-a", "-m", "all", ok=False)
    assert "  D local.json" in gone.stderr and gone.stderr.splitlines()[-1] == "hint: git ckpt save && git ckpt verify"
    (repo / "local.json").write_text("{}\n")
    assert ckpt(repo, "save").out.startswith("no changes since default/1; nothing saved")  # saving again cannot help
    # either way out works: ignore it, save and verify again, commit
    (repo / ".git" / "info" / "exclude").write_text("local.json\n")
    ckpt(repo, "save")
    ckpt(repo, "verify")
    commit(repo, "-a", "-m", "all")
    assert b"local.json" not in git(repo, "ls-tree", "--name-only", "HEAD")
    assert git(repo, "show", "HEAD:a") == b"a2\n"


# ---------------------------------------------------------------------------- the hooks' Python path

SHADOWS = ["click/__init__.py", "msgspec.py", "pygit2/__init__.py", "git_ckpt/__init__.py", "json.py", "shlex.py"]


@pytest.mark.parametrize("shadow", SHADOWS)
def test_the_hooks_never_import_the_projects_own_modules(repo, tmp_path, shadow):
    """The hooks run git ckpt's Python from the worktree root: a module of the project named like
    one git ckpt imports (a dependency, git ckpt itself, the standard library) must never be
    imported in its place (``python -P``: the current directory is not put on sys.path).  Once it
    was: a project with a top-level ``click/`` broke every commit with a traceback, or ran its code."""
    marker = tmp_path / "imported"
    path = repo / shadow
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit('shadow imported')\n")
    git(repo, "add", "-A")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    ckpt(repo, "hooks", "install")
    ckpt(repo, "save")
    ckpt(repo, "verify")
    env = {"GIT_CKPT_GATE_FAST": "0"}  # the Python path of the hooks, not the sh fast path
    ok = commit(repo, "-m", "with a shadowing module", env=env)
    assert "Traceback" not in ok.stderr and "shadow imported" not in ok.stderr, ok
    assert "Ckpt-Verified: default/1" in git(repo, "log", "-1", "--format=%B").decode()
    push = subprocess.run(["git", "push", "-q", "origin", "HEAD"], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **env})
    assert push.returncode == 0 and "Traceback" not in push.stderr, push
    assert not marker.exists()
