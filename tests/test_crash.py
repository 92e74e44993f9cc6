"""Crash safety: SIGKILL at every internal step of save, restore, undo and gc (``$GIT_CKPT_FAULT``).

After every kill: ``git fsck --strict`` is clean, no ref points at a missing object, ``git ckpt
log --verify`` and ``git ckpt check --all`` pass, and either the effect is wholly absent or
``restore --continue`` / ``undo`` / running the command again completes it; the files as they were
before the command come back byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ckpt, copy_tree, fsck_clean, git, index_state, init_repo, worktree_state

KILLED = (137, -9)  # git reports a SIGKILLed git-ckpt as 128 + 9


def killed(cwd, *args, step: str):
    """Run ``git ckpt ARGS`` with the fault hook armed at ``step``; assert it was killed there."""
    res = ckpt(cwd, *args, rc=None, env={"GIT_CKPT_FAULT": step}, fsck=False)
    assert res.rc in KILLED, (step, res)
    return res


def state(root: Path):
    """Worktree (every file, ignored ones included) and index, as bytes."""
    return worktree_state(root), index_state(root)


def refs(root: Path) -> dict[str, str]:
    out = git(root, "for-each-ref", "--format=%(refname) %(objectname)").decode().split("\n")
    return dict(line.split(" ", 1) for line in out if line)  # name -> oid


def assert_sound(root: Path, task: str = "default") -> None:
    """The repository invariants that must hold after any crash."""
    fsck_clean(root)
    table = refs(root)
    kinds = git(root, "cat-file", "--batch-check=%(objecttype)", input="".join(f"{o}\n" for o in table.values()).encode())
    assert all(k in (b"commit", b"tag") for k in kinds.split()), (table, kinds)
    ckpt(root, "log", "--verify", "--task", task, fsck=False)
    ckpt(root, "check", "--all", fsck=False)


def ledger_types(root: Path, task: str = "default") -> list[str]:
    res = ckpt(root, "log", "--json", "--task", task, fsck=False)
    return [e["type"] for e in res.json()["result"]]


@pytest.fixture
def two_states(tmp_path):
    """A repository whose checkpoint default/1 is state A; the worktree is then state B.

    Both states have tracked, staged, deleted, untracked, executable, symlinked, empty and overlay
    files; an ignored file outside the overlay (``build/out.o``) must never be touched.
    """
    root = init_repo(tmp_path / "r")
    (root / ".gitignore").write_text("fixtures/\nbuild/\n")
    (root / ".ckpt.toml").write_text('[overlay]\ninclude = ["fixtures/"]\n')
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("print('a')\n")
    (root / "src" / "run.sh").write_text("#!/bin/sh\necho run\n")
    (root / "src" / "run.sh").chmod(0o755)
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    # state A
    (root / "src" / "a.py").write_text("print('A staged')\n")
    git(root, "add", "src/a.py")
    (root / "src" / "a.py").write_text("print('A unstaged')\n")
    (root / "notes.txt").write_bytes(b"untracked A\r\n\x00bin")
    (root / "empty").write_bytes(b"")
    (root / "link").symlink_to("src/a.py")
    (root / "fixtures").mkdir()
    (root / "fixtures" / "db.json").write_text('{"a": 1}\n')
    (root / "build").mkdir()
    (root / "build" / "out.o").write_bytes(b"\x7fELF ignored")
    ckpt(root, "save", "-m", "A")
    a = state(root)
    # state B
    (root / "src" / "a.py").write_text("print('B')\n")
    git(root, "add", "src/a.py")
    (root / "src" / "run.sh").unlink()
    (root / "src" / "new.py").write_text("new in B\n")
    git(root, "add", "src/new.py")
    (root / "notes.txt").unlink()
    (root / "empty").unlink()
    (root / "residue.tmp").write_text("appeared after A\n")
    (root / "link").unlink()
    (root / "link").symlink_to("README")
    (root / "fixtures" / "db.json").write_text('{"b": 2}\n')
    (root / "fixtures" / "extra.json").write_text("{}\n")
    b = state(root)
    assert a != b
    return root, a, b


# ---------------------------------------------------------------------------------------- save

@pytest.mark.parametrize("step", ["save.before-ref", "save.after-ref", "ledger.before-ref"])
def test_save_killed(two_states, step):
    root, _a, b = two_states
    before = refs(root)
    killed(root, "save", "-m", "B", step=step)
    assert state(root) == b  # save never touches the files
    assert_sound(root)
    now = refs(root)
    if step == "save.before-ref":
        assert now == before  # wholly absent
    else:
        assert "refs/ckpt/default/2" in now  # the checkpoint exists
    # Running save again completes it: one checkpoint of B, and exactly one save event for it.
    res = ckpt(root, "save", "-m", "B")
    assert "default/2" in res.out
    assert "refs/ckpt/default/3" not in refs(root)
    saves = [e for e in ckpt(root, "log", "--json", fsck=False).json()["result"] if e["type"] == "save"]
    assert [e["data"]["id"] for e in saves] == ["default/1", "default/2"]
    assert saves[1]["data"].get("recovered", False) is (step != "save.before-ref")
    assert_sound(root)
    ckpt(root, "restore", "1")
    ckpt(root, "restore", "2")
    assert state(root) == b


# ---------------------------------------------------------------------------------------- restore

RESTORE_STEPS = [
    "restore.after-journal",
    "restore.after-delete",
    "restore.after-write",
    "restore.after-overlay",
    "restore.after-index",
    "restore.before-event",
]


@pytest.mark.parametrize("step", RESTORE_STEPS)
def test_restore_killed(two_states, step):
    """Killed at each step: --continue finishes it exactly, and undo (on a copy of the repository
    as the kill left it) goes back to the files as they were before the command."""
    root, a, b = two_states
    killed(root, "restore", "1", step=step)
    assert_sound(root)
    assert (root / ".git" / "ckpt" / "RESTORE").exists()
    spare = root.parent / "spare"
    copy_tree(root, spare)
    if step == "restore.after-write":  # anything else refuses until it is finished or undone
        res = ckpt(root, "save", rc=5, fsck=False)
        assert "restore was interrupted" in res.err
        ckpt(root, "restore", "1", rc=5, fsck=False)
    res = ckpt(root, "restore", "--continue", fsck=False)
    assert "restored default/1" in res.out
    assert state(root) == a
    assert not (root / ".git" / "ckpt" / "RESTORE").exists()
    assert ledger_types(root)[-1] == "restore"
    ckpt(root, "undo")
    assert state(root) == b
    # the other way out, from the state the kill left
    untouched = state(spare) == b  # killed before any file was written: the undo writes nothing
    res = ckpt(spare, "undo", fsck=False)
    assert res.out.splitlines()[-1] == ("the worktree already matches default/2; nothing to undo" if untouched
                                        else "undo: restored default/2")
    assert state(spare) == b
    assert not (spare / ".git" / "ckpt" / "RESTORE").exists()
    assert_sound(spare)


@pytest.mark.parametrize("step", ["save.before-ref", "save.after-ref", "ledger.before-ref"])
def test_restore_killed_in_its_pre_restore_save(two_states, step):
    """Killed before the journal exists: the worktree is untouched and the restore simply reruns."""
    root, a, b = two_states
    killed(root, "restore", "1", step=step)
    assert state(root) == b
    assert not (root / ".git" / "ckpt" / "RESTORE").exists()
    assert_sound(root)
    ckpt(root, "restore", "--continue", rc=2, fsck=False)  # nothing to continue: a usage error
    ckpt(root, "restore", "1")
    assert state(root) == a
    ckpt(root, "undo")
    assert state(root) == b
    assert_sound(root)


@pytest.mark.parametrize("step", ["restore.after-delete", "restore.after-index", "restore.before-event"])
def test_undo_killed(two_states, step):
    """An undo is a restore: killed half way, --continue finishes the undo and undo reverses it."""
    root, a, b = two_states
    ckpt(root, "restore", "1")
    assert state(root) == a
    killed(root, "undo", step=step)
    assert_sound(root)
    spare = root.parent / "spare"
    copy_tree(root, spare)
    ckpt(root, "restore", "--continue")
    assert state(root) == b
    assert_sound(root)
    # the other way out: undo the interrupted undo, back to A
    ckpt(spare, "undo")
    assert state(spare) == a
    assert_sound(spare)


def test_repeated_kills_make_no_pile_of_pre_restore_checkpoints(two_states):
    """Killed and continued again and again: the same state B is saved once, never lost."""
    root, a, b = two_states
    for step in ("restore.after-delete", "restore.after-index"):
        killed(root, "restore", "1", step=step)
        ckpt(root, "restore", "--continue", fsck=False)
        assert state(root) == a
        ckpt(root, "undo", fsck=False)
        assert state(root) == b
    assert_sound(root)
    numbered = [r for r in refs(root) if r.startswith("refs/ckpt/default/") and r.rsplit("/", 1)[1].isdigit()]
    assert len(numbered) == 2


# ---------------------------------------------------------------------------------------- gc

@pytest.mark.parametrize("step", ["gc.after-event", "gc.after-delete"])
def test_gc_killed(tmp_path, step):
    root = init_repo(tmp_path / "r")
    for i in range(5):
        (root / "f").write_text(f"{i}\n")
        ckpt(root, "save", "-m", str(i), fsck=False)
    killed(root, "gc", "--keep", "2", step=step)
    assert_sound(root)
    prune = [e for e in ckpt(root, "log", "--json", fsck=False).json()["result"] if e["type"] == "prune"]
    assert len(prune) == 1 and prune[0]["data"]["pruned"] == ["default/1", "default/2", "default/3"]
    # every checkpoint the event names is either still there or recorded with its commit
    commits = prune[0]["data"]["commits"]
    assert set(commits) == {"default/1", "default/2", "default/3"}
    for commit in commits.values():
        assert git(root, "cat-file", "-t", commit).strip() == b"commit"
    # running gc again completes the prune
    ckpt(root, "gc", "--keep", "2")
    left = sorted(r for r in refs(root) if r.startswith("refs/ckpt/default/") and r.rsplit("/", 1)[1].isdigit())
    assert left == ["refs/ckpt/default/4", "refs/ckpt/default/5"]
    assert_sound(root)


def test_fault_hook_is_inert_when_unset(two_states):
    root, a, _b = two_states
    ckpt(root, "restore", "1", env={"GIT_CKPT_FAULT": "no.such-step"})
    assert state(root) == a
    assert json.loads(ckpt(root, "status", "--json", fsck=False).out)["schema"] == "ckpt/1"


# ---------------------------------------------------------------------------------------- verify, promote

@pytest.fixture
def verifiable(tmp_path):
    root = init_repo(tmp_path / "r")
    git(root, "config", "ckpt.verifier.ok.command", "true")  # local config: needs no trust
    (root / "f.txt").write_text("verified content\n")
    ckpt(root, "save", "-m", "to verify")
    return root


def note_lines(root: Path, ref: str = "refs/ckpt/default/1") -> list[dict]:
    commit = git(root, "rev-parse", ref).decode().strip()
    proc = git(root, "notes", "--ref=ckpt", "show", commit, check=False)
    return [json.loads(x) for x in proc.decode().splitlines() if x.strip()]


@pytest.mark.parametrize("step", ["notes.before-ref", "verify.after-note"])
def test_verify_killed(verifiable, step):
    root = verifiable
    killed(root, "verify", step=step)
    assert_sound(root)
    assert "refs/ckpt/default/promoted" not in refs(root)  # never promoted half way
    if step == "notes.before-ref":
        assert note_lines(root) == []  # wholly absent
    else:
        assert [x["status"] for x in note_lines(root)] == ["passed"]  # the evidence survived
    # running verify again completes it: a passing result, recorded and promoted
    res = ckpt(root, "verify")
    assert "promoted default/1" in res.out
    assert refs(root)["refs/ckpt/default/promoted"] == refs(root)["refs/ckpt/default/1"]
    assert "verify" in ledger_types(root) and ledger_types(root)[-1] == "promote"
    assert_sound(root)


def test_promote_killed_after_the_ref(verifiable):
    root = verifiable
    killed(root, "promote", "1", "--force", step="promote.after-ref")
    assert_sound(root)
    # the promotion happened; its history is in the promoted ref's reflog
    assert refs(root)["refs/ckpt/default/promoted"] == refs(root)["refs/ckpt/default/1"]
    assert b"ckpt: promote default/1 (forced)" in git(root, "reflog", "show", "--format=%gs", "refs/ckpt/default/promoted")
    ckpt(root, "promote", "1", "--force")  # running it again is harmless and logs it
    assert ledger_types(root)[-1] == "promote"
    assert_sound(root)


# ---------------------------------------------------------------------------------------- push, fetch

@pytest.fixture
def shared(tmp_path):
    """Clones ``a`` and ``b`` of a bare ``origin``; ``a`` has checkpoint default/1 with a result."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    a = init_repo(tmp_path / "a")
    git(a, "remote", "add", "origin", str(origin))
    git(a, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "b"))
    git(a, "config", "ckpt.verifier.ok.command", "true")
    (a / "f.txt").write_text("shared\n")
    ckpt(a, "save", "-m", "share me")
    ckpt(a, "verify")
    return origin, a, tmp_path / "b"


@pytest.mark.parametrize("step", ["push.before-send", "push.after-send"])
def test_push_killed(shared, step):
    origin, a, _b = shared
    killed(a, "push", "origin", step=step)
    assert_sound(a)
    remote = git(origin, "for-each-ref", "--format=%(refname)", "refs/ckpt").decode().split()
    assert remote == ([] if step == "push.before-send" else ["refs/ckpt/default/1", "refs/ckpt/default/log", "refs/ckpt/default/promoted"])
    ckpt(a, "push", "origin")  # running it again completes it
    assert git(origin, "rev-parse", "refs/ckpt/default/1") == git(a, "rev-parse", "refs/ckpt/default/1")
    assert git(origin, "rev-parse", "refs/notes/ckpt") == git(a, "rev-parse", "refs/notes/ckpt")
    assert_sound(a)


@pytest.mark.parametrize("step", ["fetch.after-fetch", "notes-merge.before-ref"])
def test_fetch_killed(shared, step):
    origin, a, b = shared
    ckpt(a, "push", "origin")
    killed(b, "fetch", "origin", step=step)
    fsck_clean(b)
    assert git(b, "for-each-ref", "refs/ckpt") == b""  # fetch never writes local checkpoints
    ckpt(b, "fetch", "origin")  # running it again completes it
    assert git(b, "rev-parse", "refs/ckpt-remotes/origin/default/1") == git(a, "rev-parse", "refs/ckpt/default/1")
    assert note_lines(b, "refs/ckpt-remotes/origin/default/1") == note_lines(a)
    ckpt(b, "check", "origin:default/1", fsck=False)
