"""Sharing checkpoints through Git remotes: push, fetch, notes merge, collisions, secrets, trust.

Every test uses real clones of a real bare repository, reached by path or through a real
``git daemon`` on 127.0.0.1, and the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ckpt, git, index_state, init_repo, worktree_state

AWS_KEY_ID = "AKIAQYLPMN5HHHFPZAM2"
AWS_SECRET = "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"


# ------------------------------------------------------------------------------ fixtures


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def daemon(tmp_path):
    """A real ``git daemon`` serving ``tmp_path/served`` on a free 127.0.0.1 port (push enabled).

    Yields the base URL ``git://127.0.0.1:PORT``; stopped by PID afterwards.
    """
    base = tmp_path / "served"
    base.mkdir()
    proc = None
    try:
        for _ in range(5):
            port = _free_port()
            proc = subprocess.Popen(
                ["git", "daemon", "--export-all", "--enable=receive-pack", f"--base-path={base}", "--reuseaddr",
                 "--listen=127.0.0.1", f"--port={port}", "--informative-errors", str(base)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            if proc.poll() is None:
                break
            proc = None  # the port was taken meanwhile: try another
        assert proc is not None and proc.poll() is None, "git daemon did not start"
        yield base, f"git://127.0.0.1:{port}"
    finally:
        if proc is not None:
            os.kill(proc.pid, 15)
            proc.wait()


def _team(tmp_path: Path, served: Path | None = None, url: str | None = None) -> tuple[Path, Path, Path]:
    """A bare remote with one commit and two clones, alice and bob (``origin`` = the remote).

    With ``served``/``url`` the remote lives in the daemon's base path and is reached by git://.
    """
    seed = init_repo(tmp_path / "seed")
    (seed / ".gitignore").write_text("fixtures/\n")
    (seed / ".ckpt.toml").write_text('[overlay]\ninclude = ["fixtures/"]\n')
    git(seed, "add", ".gitignore", ".ckpt.toml")
    git(seed, "commit", "-q", "-m", "config")
    bare = (served or tmp_path) / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    where = f"{url}/remote.git" if url else str(bare)
    alice, bob = tmp_path / "alice", tmp_path / "bob"
    git(tmp_path, "clone", "-q", where, str(alice))
    git(tmp_path, "clone", "-q", where, str(bob))
    return bare, alice, bob


def _shared_task(tmp_path: Path, task: str = "t") -> tuple[Path, Path, Path]:
    """:func:`_team`, then Alice saves one checkpoint of ``task`` (a new file ``a``) and pushes
    it, and Bob fetches: ``(bare, alice, bob)``."""
    bare, alice, bob = _team(tmp_path)
    ckpt(alice, "task", "start", task)
    (alice / "a").write_text("a\n")
    ckpt(alice, "save", "-m", "one")
    ckpt(alice, "push")
    ckpt(bob, "fetch")
    return bare, alice, bob


def _refs(repo: Path, *patterns: str) -> bytes:
    return git(repo, "for-each-ref", "--format=%(objectname) %(refname)", *patterns)


def _state(root: Path) -> dict:
    """The worktree as files, without the ``.git`` file a linked worktree has."""
    state = worktree_state(root)
    state.pop(b".git", None)
    return state


def _rev(repo: Path, name: str) -> str:
    return git(repo, "rev-parse", "--verify", "-q", name, check=False).decode().strip()


def _messy_save(alice: Path, task: str = "feat", message: str = "wip") -> str:
    """Give alice's worktree every kind of state, save it as ``task``, return the commit id."""
    ckpt(alice, "task", "start", task, "--goal", "share it")
    (alice / "README").write_text("changed\n")
    (alice / "staged.txt").write_text("staged\n")
    git(alice, "add", "staged.txt")
    (alice / "staged.txt").write_text("staged, then changed\n")
    (alice / "untracked.txt").write_text("untracked\n")
    (alice / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(alice / "tool.sh", 0o755)
    os.symlink("README", alice / "link")
    (alice / "fixtures" / "deep").mkdir(parents=True)
    (alice / "fixtures" / "data.bin").write_bytes(bytes(range(256)) * 3)
    (alice / "fixtures" / "deep" / "notes.txt").write_text("fixture notes\n")
    os.symlink("data.bin", alice / "fixtures" / "cur")
    out = ckpt(alice, "save", "-m", message).out
    assert f"checkpoint saved: {task}/1" in out
    return _rev(alice, f"refs/ckpt/{task}/1")


def _append_result(repo: Path, commit: str, line: dict) -> None:
    code = (
        "import sys, json\n"
        "from git_ckpt.gitcore import Repo\n"
        "from git_ckpt import notes\n"
        "notes.append_line(Repo.discover(sys.argv[1]), sys.argv[2], sys.argv[3].encode())\n"
    )
    subprocess.run([sys.executable, "-c", code, str(repo), commit, json.dumps(line, sort_keys=True, separators=(",", ":"))], check=True)


def _result(commit_id: str, tree: str, host: str, status: str, started: str) -> dict:
    return {"schema": "ckpt/1", "checkpoint": commit_id, "verifier": "tests", "definition": "d" * 64, "tree": tree,
            "overlay": "", "status": status, "exit_code": 0 if status == "passed" else 1, "duration": 0.5,
            "started_at": started, "host": host, "log": "0" * 40, "reused": False, "required": True}


# ------------------------------------------------------------------------------ push, fetch, restore


def test_push_fetch_and_restore_exactly(tmp_path):
    bare, alice, bob = _team(tmp_path)
    commit = _messy_save(alice)

    res = ckpt(alice, "push")
    assert res.out.splitlines() == [
        "new        refs/ckpt/feat/1",
        "new        refs/ckpt/feat/log",
        "pushed 2 ref(s) to origin",
    ]
    assert _rev(bare, "refs/ckpt/feat/1") == commit
    assert _rev(bare, "refs/ckpt/feat/log") == _rev(alice, "refs/ckpt/feat/log")
    assert _rev(alice, "refs/ckpt-remotes/origin/feat/1") == commit  # remote-tracking copy, as git push does
    assert "pushed to origin" in ckpt(alice, "log").out
    assert git(alice, "config", "--get-all", "remote.origin.push", check=False) == b""
    assert ckpt(alice, "push").out == "everything up to date on origin\n"

    # bob fetches: remote-tracking refs only, never his own refs/ckpt/
    res = ckpt(bob, "fetch")
    assert res.out == "new        refs/ckpt/feat/1\nnew        refs/ckpt/feat/log\nfetched 2 ref(s) from origin; checkpoints: origin:feat/1\n"
    assert _rev(bob, "refs/ckpt-remotes/origin/feat/1") == commit
    assert _refs(bob, "refs/ckpt/") == b""  # a fetch alone creates no task of bob's
    assert ckpt(bob, "fetch").out == "nothing new on origin\n"
    listing = ckpt(bob, "list", "--remote", "origin", "--all").out
    assert "origin:feat/1" in listing and "wip" in listing
    shown = ckpt(bob, "show", "origin:feat/1").out
    assert "checkpoint origin:feat/1" in shown and "fixtures/data.bin" in shown and "fixtures/deep/notes.txt" in shown
    names = ckpt(bob, "diff", "origin:feat/1", "--name-status").out
    assert "untracked.txt" in names and "tool.sh" in names
    assert ckpt(bob, "show", "origin:feat/1", "--json").json()["result"]["commit"] == commit

    # a teammate's checkpoint restored exactly into a new linked worktree, foreign code apart
    wt = tmp_path / "review"
    res = ckpt(bob, "restore", "origin:feat/1", "--worktree", str(wt))
    assert f"created worktree {wt} at" in res.out and "restored origin:feat/1" in res.out
    assert _state(wt) == _state(alice)
    assert index_state(wt) == index_state(alice)
    assert git(wt, "rev-parse", "HEAD") == git(alice, "rev-parse", "HEAD")
    assert str(wt).encode() in git(bob, "worktree", "list", "--porcelain")
    ckpt(bob, "restore", "origin:feat/1", "--worktree", str(wt), rc=2)  # never into an existing folder


def test_through_a_real_git_daemon(tmp_path, daemon):
    served, url = daemon
    bare, alice, bob = _team(tmp_path, served, url)
    assert git(alice, "remote", "get-url", "origin").decode().startswith("git://127.0.0.1:")
    commit = _messy_save(alice)
    ckpt(alice, "push")
    assert _rev(bare, "refs/ckpt/feat/1") == commit
    assert ckpt(bob, "fetch").out.endswith("\nfetched 2 ref(s) from origin; checkpoints: origin:feat/1\n")
    ckpt(bob, "task", "start", "review")
    res = ckpt(bob, "restore", "origin:feat/1")  # into bob's worktree, after the pre-restore save
    assert "saved current state as review/1 (pre-restore)" in res.out and "restored origin:feat/1" in res.out
    assert worktree_state(bob) == worktree_state(alice)
    assert index_state(bob) == index_state(alice)
    assert (bob / "fixtures" / "data.bin").read_bytes() == bytes(range(256)) * 3
    assert os.readlink(bob / "fixtures" / "cur") == "data.bin"
    assert os.stat(bob / "tool.sh").st_mode & 0o777 == 0o755
    # results travel back over the daemon too
    tree = git(alice, "rev-parse", f"{commit}^{{tree}}").decode().strip()
    line = _result("feat/1", tree, "bob-host", "passed", "2026-01-01T10:00:00Z")
    _append_result(bob, commit, line)
    ckpt(bob, "push")
    assert "merged 1 result line(s) from origin" in ckpt(alice, "fetch").out
    assert git(alice, "notes", "--ref=ckpt", "show", commit) == (json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n").encode()


def test_task_selection_and_the_promoted_ref(tmp_path):
    bare, alice, _bob = _team(tmp_path)
    _messy_save(alice, "one")
    ckpt(alice, "verify")  # no verifiers: promotes on the empty requirement
    ckpt(alice, "task", "start", "two")
    (alice / "two.txt").write_text("2\n")
    ckpt(alice, "save", "-m", "second task")
    res = ckpt(alice, "push", "--task", "one")
    assert "refs/ckpt/one/1" in res.out and "refs/ckpt/one/promoted" in res.out and "two" not in res.out
    assert _rev(bare, "refs/ckpt/one/promoted") == _rev(alice, "refs/ckpt/one/1")
    assert _refs(bare, "refs/ckpt/two") == b""
    res = ckpt(alice, "push", "--all", "--json").json()["result"]
    sent = {r["ref"]: r["status"] for r in res["refs"]}
    assert sent["refs/ckpt/two/1"] == "new" and sent["refs/ckpt/one/1"] == "up-to-date"
    assert _rev(bare, "refs/ckpt/two/1") == _rev(alice, "refs/ckpt/two/1")
    # a later promotion moves the remote's promoted ref along with the ledger
    ckpt(alice, "task", "start", "one")
    (alice / "README").write_text("second\n")
    ckpt(alice, "save", "-m", "second")
    ckpt(alice, "verify")
    res = ckpt(alice, "push")
    assert "refs/ckpt/one/promoted" in res.out
    assert _rev(bare, "refs/ckpt/one/promoted") == _rev(alice, "refs/ckpt/one/2")
    assert _rev(bare, "refs/ckpt/one/log") == _rev(alice, "refs/ckpt/one/log")
    res = ckpt(alice, "push", "--task", "nope", rc=4)
    assert res.err.startswith("error: no task nope\nhint: ")
    ckpt(alice, "push", "--task", "one", "--all", rc=2)


# ------------------------------------------------------------------------------ results merge


def test_two_clones_results_end_on_both_sides(tmp_path):
    bare, alice, bob = _team(tmp_path)
    commit = _messy_save(alice)
    ckpt(alice, "push")
    ckpt(bob, "fetch")
    tree = git(alice, "rev-parse", f"{commit}^{{tree}}").decode().strip()
    a_line = _result("feat/1", tree, "alice-host", "passed", "2026-01-01T10:00:00Z")
    b_line = _result("feat/1", tree, "bob-host", "failed", "2026-01-01T11:00:00Z")
    _append_result(alice, commit, a_line)
    _append_result(bob, commit, b_line)

    res = ckpt(alice, "push")
    assert "refs/notes/ckpt" in res.out
    # bob, a reviewer with no task of his own, pushes only results: fetched and merged first,
    # then a fast-forward push
    res = ckpt(bob, "push")
    assert res.out.splitlines() == [
        "merged 1 result line(s) from origin into refs/notes/ckpt",
        "updated    refs/notes/ckpt",
        "pushed 1 ref(s) to origin",
    ]
    assert _refs(bare, "refs/ckpt/default") == b""
    res = ckpt(alice, "fetch")
    assert "merged 1 result line(s) from origin" in res.out

    def note(repo):
        return git(repo, "notes", "--ref=ckpt", "show", commit)

    lines = [json.dumps(x, sort_keys=True, separators=(",", ":")) for x in (a_line, b_line)]
    assert note(alice) == note(bob) == ("\n".join(lines) + "\n").encode()  # the newest stays last
    assert _rev(bare, "refs/notes/ckpt") == _rev(bob, "refs/notes/ckpt") == _rev(alice, "refs/notes/ckpt")
    # a normal notes ref: git reads it, and bob's merge commit has both sides as parents
    assert git(bob, "log", "--notes=ckpt", "-1", commit).count(b"bob-host") == 1
    assert git(bob, "cat-file", "-p", "refs/notes/ckpt").count(b"parent ") == 2
    assert "tests:failed" in ckpt(alice, "list").out  # the newest result (bob's) is the state shown
    # nothing more to exchange (but alice's ledger, which recorded her push)
    assert ckpt(bob, "fetch").out == "updated    refs/ckpt/feat/log\nfetched 1 ref(s) from origin\n"
    assert ckpt(bob, "push").out == "everything up to date on origin\n"


# ------------------------------------------------------------------------------ refusals


def test_colliding_push_is_refused_and_changes_nothing(tmp_path):
    bare, alice, bob = _team(tmp_path)
    a1 = _messy_save(alice)
    ckpt(alice, "push")
    # bob, independently, uses the same task name
    ckpt(bob, "task", "start", "feat")
    (bob / "README").write_text("bob's version\n")
    ckpt(bob, "save", "-m", "bob")
    b1 = _rev(bob, "refs/ckpt/feat/1")
    before_remote = _refs(bare)
    before_bob = _refs(bob, "refs/ckpt")
    res = ckpt(bob, "push", rc=10)
    assert res.out == ""
    assert f"refused  refs/ckpt/feat/1: origin already has a different checkpoint feat/1 ({a1[:12]}, yours is {b1[:12]}); checkpoints are never overwritten" in res.err
    assert "refused  refs/ckpt/feat/log: the ledger of task feat on origin has diverged from yours" in res.err
    assert "error: refusing to push to origin: 2 ref(s) there differ from yours and are never overwritten (feat/1, feat/log); nothing was sent" in res.err
    assert "another task name" in res.err
    assert _refs(bare) == before_remote
    assert _refs(bob, "refs/ckpt") == before_bob
    env = ckpt(bob, "push", "--json", rc=10).json()
    assert env["error"]["code"] == "remote" and env["error"]["exit_code"] == 10
    assert _refs(bare) == before_remote
    # a fetch never overwrites bob's own checkpoints: alice's land beside them
    ckpt(bob, "fetch")
    assert _rev(bob, "refs/ckpt/feat/1") == b1
    assert _rev(bob, "refs/ckpt-remotes/origin/feat/1") == a1
    assert ckpt(bob, "show", "origin:feat/1", "--json").json()["result"]["commit"] == a1
    assert "fetched from origin" in ckpt(bob, "log").out
    # the way out the hint names: another task name
    ckpt(bob, "task", "start", "feat-bob")
    (bob / "README").write_text("bob's version, renamed\n")
    ckpt(bob, "save", "-m", "bob")
    ckpt(bob, "push")
    assert _rev(bare, "refs/ckpt/feat-bob/1") == _rev(bob, "refs/ckpt/feat-bob/1")
    assert _rev(bare, "refs/ckpt/feat/1") == a1


def test_secrets_refused_without_printing_them(tmp_path):
    bare, alice, _bob = _team(tmp_path)
    ckpt(alice, "task", "start", "leak")
    (alice / "fixtures").mkdir()
    (alice / "fixtures" / "aws.ini").write_text(
        f"[default]\naws_access_key_id = {AWS_KEY_ID}\naws_secret_access_key = {AWS_SECRET}\n"
    )
    (alice / "deploy.pem").write_text("not really a key\n")  # untracked, not ignored: in the snapshot
    (alice / "settings.py").write_text(f'AWS_ACCESS_KEY_ID = "{AWS_KEY_ID}"\n')
    ckpt(alice, "save", "-m", "fixtures")
    before = _refs(bare)
    res = ckpt(alice, "push", rc=10)
    assert AWS_KEY_ID not in res.out + res.err and AWS_SECRET not in res.out + res.err
    assert ("secret?  fixtures/aws.ini: AWS Access Key (lines 2, 3), Base64 High Entropy String (line 3), "
            "Secret Keyword (line 3) [overlay of leak/1]\n") in res.err
    assert "secret?  deploy.pem: file name on the secrets denylist [worktree of leak/1]" in res.err
    assert "secret?  settings.py: AWS Access Key (line 1) [worktree of leak/1]" in res.err
    assert "nothing was sent" in res.err and "--allow-secrets" in res.err
    env = ckpt(alice, "push", "--json", rc=10)
    assert AWS_KEY_ID not in env.out + env.err and env.json()["error"]["code"] == "remote"
    assert _refs(bare) == before
    assert "pushed" not in ckpt(alice, "log").out
    res = ckpt(alice, "push", "--allow-secrets")
    assert AWS_KEY_ID not in res.out + res.err and AWS_SECRET not in res.out + res.err
    assert "warning: pushed despite a possible secret: fixtures/aws.ini" in res.err
    assert _rev(bare, "refs/ckpt/leak/1") == _rev(alice, "refs/ckpt/leak/1")
    # what the remote already has is not scanned again
    (alice / "README").write_text("clean change\n")
    ckpt(alice, "save")
    res = ckpt(alice, "push")
    assert "refs/ckpt/leak/2" in res.out and "secret" not in res.err


def test_remote_errors(tmp_path):
    bare, alice, _bob = _team(tmp_path)
    _messy_save(alice)
    res = ckpt(alice, "push", "nowhere", rc=2)
    assert "error: 'nowhere' is not a configured remote" in res.err and "git remote add nowhere URL" in res.err
    res = ckpt(alice, "push", str(bare), rc=2)
    assert "is not a configured remote" in res.err
    git(alice, "remote", "add", "gone", str(tmp_path / "missing.git"))
    res = ckpt(alice, "fetch", "gone", rc=10)
    assert "error: git ls-remote failed:" in res.err and "missing.git" in res.err
    res = ckpt(alice, "push", "gone", rc=10)
    assert "error: git ls-remote failed:" in res.err
    ckpt(alice, "show", "origin:feat/1", rc=4)
    ckpt(alice, "restore", "origin:feat/1", "--worktree", str(tmp_path / "x"), rc=4)
    # a fresh, empty remote receives checkpoints with their base history, and no branch
    empty = tmp_path / "empty.git"
    git(tmp_path, "init", "-q", "--bare", str(empty))
    git(alice, "remote", "add", "backup", str(empty))
    assert "pushed 2 ref(s) to backup" in ckpt(alice, "push", "backup").out
    assert _rev(empty, "refs/ckpt/feat/1") == _rev(alice, "refs/ckpt/feat/1")
    assert _refs(empty, "refs/heads") == b""
    git(empty, "fsck", "--strict", "--no-dangling")


# ------------------------------------------------------------------------------ trust


def test_restoring_a_changed_ckpt_toml_leaves_it_untrusted(tmp_path):
    bare, alice, bob = _team(tmp_path)
    cfg = '[overlay]\ninclude = ["fixtures/"]\n\n[[verifier]]\nname = "ok"\ncommand = ["true"]\n'
    (bob / ".ckpt.toml").write_text(cfg)
    git(bob, "commit", "-q", "-am", "verifier")
    ckpt(bob, "trust")
    assert ckpt(bob, "trust", "--show", "--json").json()["result"]["trusted"] is True
    # alice's checkpoint changes the verifier command
    ckpt(alice, "task", "start", "evil")
    (alice / ".ckpt.toml").write_text(cfg.replace('["true"]', '["touch", "PWNED"]'))
    ckpt(alice, "save")
    ckpt(alice, "push")
    ckpt(bob, "fetch")
    assert not (bob / "PWNED").exists()  # fetching runs nothing
    ckpt(bob, "restore", "origin:evil/1")
    assert b"PWNED" in (bob / ".ckpt.toml").read_bytes()
    assert ckpt(bob, "trust", "--show", "--json").json()["result"]["trusted"] is False
    res = ckpt(bob, "verify", rc=9)
    assert ".ckpt.toml is changed since you trusted it" in res.err
    assert not (bob / "PWNED").exists()


# ------------------------------------------------------------------------------ results from others


def _verifier_team(tmp_path: Path, marker: Path):
    """alice and bob share a .ckpt.toml whose verifier fails (and leaves ``marker`` when it
    runs); both trusted it; returns (bare, alice, bob, the verifier's definition hash)."""
    from git_ckpt import config
    from git_ckpt.gitcore import Repo
    from git_ckpt.evidence import definition_hash

    bare, alice, bob = _team(tmp_path)
    cfg = ('[overlay]\ninclude = ["fixtures/"]\n\n[[verifier]]\nname = "tests"\n'
           f'command = ["sh", "-c", "touch {marker}; exit 1"]\n')
    (bob / ".ckpt.toml").write_text(cfg)
    git(bob, "commit", "-q", "-am", "verifier")
    git(bob, "push", "-q", "origin", "main")
    git(alice, "pull", "-q", "--ff-only")
    for who in (alice, bob):
        ckpt(who, "trust")
    dh = definition_hash(config.load(Repo.discover(bob)).verifier[0])
    return bare, alice, bob, dh


def _forged(cid: str, tree: str, dh: str) -> dict:
    line = _result(cid, tree, "alice-host", "passed", "2099-01-01T00:00:00Z")
    line["definition"] = dh
    return line


def test_a_forged_passing_result_from_a_teammate_is_never_evidence(tmp_path):
    """Hostile report: alice appends a "passed" line to bob's checkpoint and pushes it; bob's
    fetch merges it.  It must not be reused, promote, pass the gate or verify-commit."""
    marker = tmp_path / "ran"
    bare, alice, bob, dh = _verifier_team(tmp_path, marker)
    ckpt(bob, "hooks", "install")
    (bob / "README").write_text("bob's work\n")
    ckpt(bob, "save", "-m", "work")
    commit = _rev(bob, "refs/ckpt/default/1")
    tree = _rev(bob, "refs/ckpt/default/1^{tree}")
    ckpt(bob, "push")
    ckpt(alice, "fetch")
    _append_result(alice, commit, _forged("default/1", tree, dh))
    ckpt(alice, "push")
    assert "merged 1 result line(s) from origin" in ckpt(bob, "fetch").out
    ledger_before = _rev(bob, "refs/ckpt/default/log")
    # promote: the forged line is not evidence
    res = ckpt(bob, "promote", "@", rc=1)
    assert res.err.splitlines()[0] == ("error: default/1 cannot be promoted: required verifier tests has no passing result "
                                       "(only a fetched result says passed: results recorded elsewhere are not evidence here) on this content")
    assert _rev(bob, "refs/ckpt/default/promoted") == "" and _rev(bob, "refs/ckpt/default/log") == ledger_before
    # list and show still show it, marked
    assert "[tests:passed(fetched)]" in ckpt(bob, "list").out
    assert ckpt(bob, "list", "--json").json()["result"][0]["fetched"] == ["tests"]
    shown = ckpt(bob, "show", "@")
    assert "  tests: passed (exit 0, 0.5 s) [fetched: not evidence here]" in shown.out
    assert [r["local"] for r in ckpt(bob, "show", "@", "--json").json()["result"]["results"]] == [False]
    # the gate: no promoted checkpoint; verify-commit: not verified
    git(bob, "add", "-A")
    refused = subprocess.run(["git", "commit", "-q", "-m", "x"], cwd=bob, capture_output=True, text=True)
    assert refused.returncode == 1 and "task default has no promoted checkpoint" in refused.stderr
    git(bob, "commit", "-q", "--no-verify", "-m", "x")
    res = ckpt(bob, "verify-commit", "HEAD", rc=1)
    assert "not verified: checkpoint default/1 has this tree, but required verifier tests has no result (only a fetched result says passed" in res.out
    # verify runs the verifier (nothing reused), which fails: still nothing promoted
    assert not marker.exists()
    res = ckpt(bob, "verify", rc=1)
    assert marker.exists() and "verifier: tests ...... failed (exit 1, " in res.out and "reused" not in res.out
    assert _rev(bob, "refs/ckpt/default/promoted") == ""
    assert "[tests:failed]" in ckpt(bob, "list").out  # bob's own result is newer than nothing: his state shows
    ckpt(bob, "verify-commit", "HEAD", rc=1)
    assert ckpt(bob, "log", "--verify").out.startswith("ledger of default: intact")


def test_verifying_a_fetched_checkpoint_creates_no_local_task_or_promotion(tmp_path):
    """A fetched checkpoint can be verified: its result goes to the note and the current
    task's ledger; its forged "passed" line is not reused; nothing of alice's task is created."""
    marker = tmp_path / "ran"
    bare, alice, bob, dh = _verifier_team(tmp_path, marker)
    ckpt(alice, "task", "start", "feat")
    (alice / "README").write_text("alice's work\n")
    ckpt(alice, "save", "-m", "work")
    commit = _rev(alice, "refs/ckpt/feat/1")
    _append_result(alice, commit, _forged("feat/1", _rev(alice, "refs/ckpt/feat/1^{tree}"), dh))
    ckpt(alice, "push")
    ckpt(bob, "task", "start", "review")
    ckpt(bob, "fetch")
    res = ckpt(bob, "verify", "origin:feat/1", "--isolated", rc=1)
    assert marker.exists() and "verifier: tests ...... failed (exit 1, " in res.out and "reused" not in res.out
    assert _refs(bob, "refs/ckpt/feat") == b""  # no local promoted ref, no local ledger of alice's task
    ev = ckpt(bob, "log", "--json").json()["result"][-1]
    assert (ev["type"], ev["task"], ev["data"]["id"], ev["data"]["status"]) == ("verify", "review", "origin:feat/1", "failed")
    # promotion is for this repository's own checkpoints, forced or not
    for args in ((), ("--force",)):
        res = ckpt(bob, "promote", "origin:feat/1", *args, rc=2)
        assert res.err.startswith("error: origin:feat/1 is not a checkpoint of this repository; only local checkpoints are promoted\n")
    assert _refs(bob, "refs/ckpt/feat") == b""
    # a fetched checkpoint whose verifier passes here: reported verified by verify-commit
    # (bob's own result, found in his current task's ledger), still not promoted
    marker.unlink()
    cfg = (bob / ".ckpt.toml").read_text().replace("exit 1", "exit 0")
    (bob / ".ckpt.toml").write_text(cfg)
    ckpt(bob, "trust")
    res = ckpt(bob, "verify", "origin:feat/1", "--isolated")
    assert "verifier: tests ...... passed" in res.out
    assert "not promoted: origin:feat/1 is a fetched checkpoint (only this repository's checkpoints are promoted)" in res.out
    assert _refs(bob, "refs/ckpt/feat") == b""
    git(bob, "fetch", "-q", "origin")
    git(bob, "read-tree", f"{commit}^{{tree}}")
    tree_commit = git(bob, "commit-tree", f"{commit}^{{tree}}", "-m", "same tree").decode().strip()
    assert "verified: tree of checkpoint origin:feat/1" in ckpt(bob, "verify-commit", tree_commit).out
    git(bob, "read-tree", "HEAD")
