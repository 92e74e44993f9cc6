"""Restore and undo stay exact when the world around them moves (issue 12): ignore rules,
sparse cones, the current directory, index flags, concurrent writers, provenance, checkpoint
numbers and the meaning of ``@``.  Real repositories, the real ``git ckpt`` and ``git``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ckpt, git, index_state, init_repo, worktree_state


def ledger_events(repo, task="default"):
    out = ckpt(repo, "log", "--json", "--task", task).json()["result"]
    return out["events"] if isinstance(out, dict) else out


# ------------------------------------------------------------------ 7. numbers are never reused


@pytest.mark.parametrize("how", ["update-ref", "drop", "drop-middle", "gc"])
def test_a_deleted_number_is_never_given_again(repo, how):
    (repo / "f").write_text("1\n")
    ckpt(repo, "save", "-m", "one")
    (repo / "f").write_text("2\n")
    ckpt(repo, "save", "-m", "two")
    first = git(repo, "rev-parse", "refs/ckpt/default/1").strip()
    second = git(repo, "rev-parse", "refs/ckpt/default/2").strip()
    if how == "update-ref":
        git(repo, "update-ref", "-d", "refs/ckpt/default/2")
    elif how == "drop":
        ckpt(repo, "drop", "2")
    elif how == "drop-middle":
        ckpt(repo, "drop", "1")
        git(repo, "update-ref", "-d", "refs/ckpt/default/2")
    else:
        ckpt(repo, "gc", "--keep", "1")  # prunes 1
        git(repo, "update-ref", "-d", "refs/ckpt/default/2")
    (repo / "f").write_text("3\n")
    res = ckpt(repo, "save", "-m", "three")
    assert "checkpoint saved: default/3" in res.out
    saved = [e for e in ckpt(repo, "log", "--json").json()["result"]["events"] if e["type"] == "save"] \
        if isinstance(ckpt(repo, "log", "--json").json()["result"], dict) else None
    log = ckpt(repo, "log").out
    assert log.count("checkpoint saved: default/1") == 1
    assert log.count("checkpoint saved: default/2") == 1
    assert log.count("checkpoint saved: default/3") == 1
    assert git(repo, "rev-parse", "refs/ckpt/default/3").strip() not in (first, second)
    del saved


def test_drop_records_an_event_and_the_commit(repo):
    (repo / "f").write_text("1\n")
    ckpt(repo, "save")
    (repo / "f").write_text("2\n")
    ckpt(repo, "save")
    commit = git(repo, "rev-parse", "refs/ckpt/default/1").decode().strip()
    res = ckpt(repo, "drop", "default/1", "--json")
    assert res.json()["result"] == [{"id": "default/1", "commit": commit, "forced": False, "protected": None, "unpromoted": False}]
    assert git(repo, "for-each-ref", "refs/ckpt/default/1") == b""
    assert "dropped default/1" in ckpt(repo, "log").out
    ckpt(repo, "log", "--verify")
    # the dropped number cannot be named any more; a second drop is "unknown checkpoint"
    res = ckpt(repo, "drop", "1", rc=4)
    assert res.err.startswith("error: no checkpoint default/1")


def test_drop_refuses_what_undo_relies_on_unless_forced(repo):
    (repo / "f").write_text("1\n")
    ckpt(repo, "save")
    (repo / "f").write_text("2\n")
    ckpt(repo, "restore", "1")  # pre-restore is default/2
    res = ckpt(repo, "drop", "2", rc=2)
    assert "protected" in res.err and "hint: git ckpt drop --force" in res.err
    assert git(repo, "for-each-ref", "refs/ckpt/default/2") != b""
    ckpt(repo, "drop", "--force", "2")
    assert "dropped default/2 (forced)" in ckpt(repo, "log").out


def test_drop_refuses_a_fetched_checkpoint(tmp_path):
    a = init_repo(tmp_path / "a")
    (a / "f").write_text("1\n")
    ckpt(a, "save")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(a), str(b))
    git(b, "remote", "rename", "origin", "up")
    ckpt(a, "push", str(b), rc=None)
    git(b, "remote", "add", "origin", str(a))
    ckpt(b, "fetch", "origin")
    res = ckpt(b, "drop", "origin:default/1", rc=2)
    assert "not a checkpoint of this repository" in res.err


def test_the_secrets_hint_names_drop(repo):
    from git_ckpt import remote

    assert "git ckpt drop" in remote.SecretsFound("origin", []).hint


# ------------------------------------------------------------------ 4. every index flag round-trips


def flags_state(root):
    """The index with its flags: ``ls-files -v`` (h: assume-unchanged, S: skip-worktree), stages,
    intent-to-add (``diff --cached`` shows it as a new file) and the worktree."""
    return (git(root, "ls-files", "-v", "-z"), git(root, "ls-files", "-s", "-z"),
            git(root, "diff", "--cached", "--binary"), worktree_state(root))


def issue_state(repo):
    """Input 4 as filed: C.t assume-unchanged with an edit on disk; A.t staged, skip-worktree and
    absent; N.t intent-to-add; B.t skip-worktree and present."""
    for n in "ABCN":
        (repo / f"{n}.t").write_text(f"{n}\n")
    git(repo, "add", "A.t", "B.t", "C.t")
    git(repo, "commit", "-qm", "base")
    git(repo, "update-index", "--assume-unchanged", "C.t")
    (repo / "C.t").write_text("C edited under the flag\n")
    (repo / "A.t").write_text("A staged\n")
    git(repo, "add", "A.t")
    git(repo, "update-index", "--skip-worktree", "A.t", "B.t")
    (repo / "A.t").unlink()
    (repo / "B.t").write_text("B on disk under skip-worktree\n")
    git(repo, "add", "-N", "N.t")


def clear_flags(repo):
    git(repo, "update-index", "--no-assume-unchanged", "C.t")
    git(repo, "update-index", "--no-skip-worktree", "A.t", "B.t")
    git(repo, "checkout", "--", "A.t")
    git(repo, "rm", "-q", "--cached", "N.t")
    (repo / "C.t").write_text("C messed\n")


@pytest.mark.parametrize("paths", [None, ["A.t"], ["C.t"], ["A.t", "B.t", "C.t", "N.t"], ["."]])
def test_index_flags_round_trip_whole_and_by_path(repo, paths):
    issue_state(repo)
    saved = flags_state(repo)
    ckpt(repo, "save")
    clear_flags(repo)
    before = flags_state(repo)
    ckpt(repo, "restore", "1", *(["--", *paths] if paths else []))
    after = flags_state(repo)
    if paths in (None, ["A.t", "B.t", "C.t", "N.t"], ["."]):
        assert after == saved
    else:
        # only the named path follows the checkpoint: its flag and its file
        for p in paths:
            line = [ln for ln in after[0].split(b"\0") if ln.endswith(b" " + p.encode())]
            want = [ln for ln in saved[0].split(b"\0") if ln.endswith(b" " + p.encode())]
            assert line == want
            assert after[3].get(p.encode()) == saved[3].get(p.encode())
    ckpt(repo, "undo")
    assert flags_state(repo) == before
    ckpt(repo, "undo")
    assert flags_state(repo) == after


def test_issue_input_4_exactly(repo):
    issue_state(repo)
    ckpt(repo, "save")
    clear_flags(repo)
    ckpt(repo, "restore", "1")
    tags = dict(ln.split(b" ", 1)[::-1] for ln in git(repo, "ls-files", "-v", "-z").split(b"\0") if ln)
    assert tags[b"C.t"] == b"h" and tags[b"A.t"] == b"S" and tags[b"B.t"] == b"S"
    assert not (repo / "A.t").exists()
    assert (repo / "C.t").read_text() == "C edited under the flag\n"
    assert git(repo, "status", "--porcelain") == b"M  A.t\n A N.t\n"


def test_a_flag_change_alone_is_a_new_state(repo):
    (repo / "C.t").write_text("c\n")
    git(repo, "add", "C.t")
    git(repo, "commit", "-qm", "c")
    ckpt(repo, "save")
    git(repo, "update-index", "--assume-unchanged", "C.t")
    assert "checkpoint saved: default/2" in ckpt(repo, "save").out
    ckpt(repo, "restore", "1")
    assert git(repo, "ls-files", "-v", "C.t") == b"H C.t\n"
    ckpt(repo, "undo")
    assert git(repo, "ls-files", "-v", "C.t") == b"h C.t\n"


# ------------------------------------------------------------------ 1. ignored files are never deleted

DEPTHS = ["", "a/", "a/b/"]


def _rules(repo, source, d, pattern):
    """Put ``pattern`` where ``source`` says (the directory ``d`` for .gitignore files)."""
    if source in ("untracked", "tracked"):
        (repo / d).mkdir(parents=True, exist_ok=True)
        (repo / d / ".gitignore").write_text(pattern + "\n")
        if source == "tracked":
            git(repo, "add", "-f", f"{d}.gitignore")
    elif source == "info/exclude":
        with open(repo / ".git/info/exclude", "a") as fh:
            fh.write(f"/{d}{pattern}\n" if d else pattern + "\n")
    else:
        (repo / "excludes").write_text(pattern + "\n")
        git(repo, "config", "core.excludesFile", str(repo / "excludes"))


@pytest.mark.parametrize("d", DEPTHS)
@pytest.mark.parametrize("source", ["untracked", "tracked"])
def test_ignore_rules_created_after_the_checkpoint(repo, source, d):
    """Input 1: the rules arrive after the checkpoint; restore leaves the ignored file (rules of
    the state left), undo brings the rules back and never deletes it (rules of the target)."""
    ckpt(repo, "save", "--allow-empty")
    _rules(repo, source, d, "data/")
    (repo / d / "data").mkdir(parents=True)
    (repo / d / "data/big.bin").write_bytes(b"\0big\n")
    whole = worktree_state(repo)
    ckpt(repo, "restore", "1")
    assert (repo / d / "data/big.bin").read_bytes() == b"\0big\n"
    plan = ckpt(repo, "undo", "--dry-run", "--json").json()["result"]["plan"]
    assert f"{d}data/big.bin" not in plan["delete"]
    # the restore kept data/ as ignored (the rules it left), so it was not saved again: undo
    # keeps the files it kept there (the record names files, not the directory), ignored by
    # its target's rules
    assert f"{d}data/big.bin" in plan["keep_ignored"]
    assert f"keep    {d}data/big.bin (ignored by the checkpoint's rules)" in ckpt(repo, "undo", "--dry-run").out
    ckpt(repo, "undo")
    assert worktree_state(repo) == whole


@pytest.mark.parametrize("d", DEPTHS)
@pytest.mark.parametrize("source", ["untracked", "tracked", "info/exclude", "core.excludesFile"])
def test_ignore_rules_of_the_target_only(repo, source, d):
    """The file is ignored only under the target's rules (the current state un-ignores it, or
    lacks the .gitignore): restoring the target keeps it; undo and redo keep everything."""
    _rules(repo, source, d, "*.bin")
    if source == "tracked":
        git(repo, "commit", "-qm", "rules")
    (repo / d).mkdir(parents=True, exist_ok=True)
    ckpt(repo, "save", "--allow-empty")
    # now un-ignore it: remove the .gitignore, or negate the rule in a closer .gitignore
    if source in ("untracked", "tracked"):
        (repo / d / ".gitignore").unlink()
    else:
        (repo / d / ".gitignore").write_text("!big.bin\n")
    (repo / d / "big.bin").write_bytes(b"precious\n")
    state = worktree_state(repo)
    ckpt(repo, "restore", "1")
    assert (repo / d / "big.bin").read_bytes() == b"precious\n"
    ckpt(repo, "undo")
    assert worktree_state(repo) == state
    ckpt(repo, "undo")
    assert (repo / d / "big.bin").read_bytes() == b"precious\n"


def _tree_paths(repo, rev):
    return set(git(repo, "ls-tree", "-r", "--name-only", "-z", rev).split(b"\0")) - {b""}


@pytest.mark.parametrize("how", ["restore", "undo"])
@pytest.mark.parametrize("what", ["file", "dir"])
@pytest.mark.parametrize("d", DEPTHS)
@pytest.mark.parametrize("source", ["untracked", "tracked"])
def test_a_file_the_target_holds_is_restored_although_the_rules_left_ignore_it(repo, source, d, what, how):
    """Tenth walkthrough: a checkpoint holds an untracked file (or files in a directory); the
    rules of the state left ignore it (a .gitignore at any depth, tracked or not).  Restoring
    (or undoing back to) the checkpoint must reach it exactly: the file is the target's, not
    one "kept as ignored" - it said `keep x.tmp (ignored by the rules of the state left)`,
    status said "changed since", verify refused and every later save left the file out.  Files
    in the same directory that the target does not hold are still kept as ignored."""
    (repo / d).mkdir(parents=True, exist_ok=True)
    held = f"{d}x.tmp" if what == "file" else f"{d}cache/new.bin"
    pattern = "*.tmp" if what == "file" else "cache/"
    if what == "dir":
        (repo / d / "cache").mkdir()
    (repo / held).write_bytes(b"held\n")
    ckpt(repo, "save", "-m", "holds it")
    _rules(repo, source, d, pattern)
    if source == "tracked":
        git(repo, "commit", "-qm", "rules")
    extra = f"{d}cache/other.bin"
    if what == "dir":
        (repo / extra).write_bytes(b"other\n")  # ignored now; the target does not hold it
    ckpt(repo, "save", "-m", "rules")
    if how == "undo":
        ckpt(repo, "restore", "1")
        ckpt(repo, "restore", "2")
        res = ckpt(repo, "undo")
    else:
        res = ckpt(repo, "restore", "1")
    assert f"keep    {held}" not in res.out and f"keep    {d}cache/ " not in res.out, res.out
    assert (repo / held).read_bytes() == b"held\n"
    status = ckpt(repo, "status", "--json").json()["result"]
    # undo goes back to the pre-restore save when the restore moved off HEAD's commit (tracked rules)
    target = "default/3" if how == "undo" and source == "tracked" else "default/1"
    assert f"restored {target}\n" in res.out, res.out
    assert status["worktree"]["files_match"] is True and status["worktree"]["checkpoint"] == target, status
    kept = (repo / ".git/ckpt/kept-ignored").read_bytes().split(b"\0") if (repo / ".git/ckpt/kept-ignored").exists() else []
    assert held.encode() not in kept
    if what == "dir":  # the file the target lacks: kept, still ignored for git ckpt
        assert (repo / extra).read_bytes() == b"other\n" and kept == [extra.encode(), b""]
        assert f"keep    {extra} (ignored by the rules of the state left; " in res.out
    (repo / "later.txt").write_text("later\n")
    later = "default/4" if target == "default/3" else "default/3"
    assert ckpt(repo, "save", "-m", "later").out == f"checkpoint saved: {later}\n"
    assert held.encode() in _tree_paths(repo, f"refs/ckpt/{later}")


def test_many_ignored_directories_the_target_holds_files_in(repo):
    """Attack pass: 600 directories the target holds files in, each with a 3.7 KB name, that
    the rules of the state left ignore: their listing (2.2 MB of pathspecs) crashed the restore
    with "Argument list too long" (exit 70).  Listed within the argument budget instead; every
    held file comes back as part of the target."""
    tail = ("x" * 250 + "/") * 14 + "gen"
    for i in range(600):
        d = repo / f"p{i:03d}" / tail
        d.mkdir(parents=True)
        (d / "f").write_text(f"{i}\n")
    ckpt(repo, "save", "-m", "holds gen")
    (repo / ".gitignore").write_text("gen/\n")
    ckpt(repo, "save", "-m", "ignores gen")
    res = ckpt(repo, "restore", "1")
    assert "keep " not in res.out and res.out.endswith("restored default/1\n"), res.out[-300:]
    status = ckpt(repo, "status", "--json").json()["result"]["worktree"]
    assert (status["checkpoint"], status["files_match"]) == ("default/1", True)


def test_a_kept_ignored_file_that_blocks_the_target_is_named(repo):
    ckpt(repo, "save", "--allow-empty")
    (repo / "data").write_text("file first\n")
    ckpt(repo, "save")
    (repo / "data").unlink()
    (repo / ".gitignore").write_text("data/\n")
    (repo / "data").mkdir()
    (repo / "data/big.bin").write_bytes(b"x")
    res = ckpt(repo, "restore", "2", rc=1)
    assert "data/big.bin" in res.err
    assert (repo / "data/big.bin").read_bytes() == b"x"


# ------------------------------------------------------------------ 3. the current directory is never removed


@pytest.mark.parametrize("sub", ["sub", "sub/deeper"])
@pytest.mark.parametrize("target_has_it", [True, False])
@pytest.mark.parametrize("by_path", [False, True])
def test_the_current_directory_survives_restore_and_undo(repo, sub, target_has_it, by_path):
    (repo / sub).mkdir(parents=True)
    if target_has_it:
        (repo / sub / "s").write_text("saved\n")
        ckpt(repo, "save")
        (repo / sub / "s").unlink()
    else:
        ckpt(repo, "save", "--allow-empty")
    (repo / sub / "new").write_text("new work\n")
    here = repo / sub
    ino = os.stat(here).st_ino
    args = ["restore", "1"] + (["--", "."] if by_path else [])
    ckpt(here, *args)
    assert os.stat(here).st_ino == ino  # the very same directory, never removed and re-made
    assert not (here / "new").exists()
    assert (here / "s").exists() == target_has_it
    if not target_has_it:
        assert os.listdir(here) == []  # left empty, as git leaves it
    ckpt(here, "undo")
    assert os.stat(here).st_ino == ino
    assert (here / "new").read_text() == "new work\n"


@pytest.mark.parametrize("command", [["undo"], ["restore", "1"], ["save"], ["status"], ["list"], ["diff"]])
def test_a_command_run_from_a_deleted_directory_is_one_clear_error(repo, command):
    (repo / "f").write_text("f\n")
    ckpt(repo, "save")
    before = (worktree_state(repo), index_state(repo), git(repo, "for-each-ref"))
    (repo / "gone").mkdir()
    proc = subprocess.run(["sh", "-c", 'cd gone && rmdir ../gone && exec git ckpt "$@"', "sh", *command],
                          cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = proc.stderr.decode()
    assert proc.returncode == 3, err
    assert err.startswith("error: the current directory no longer exists") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 2 and err.splitlines()[1].startswith("hint: ")
    assert (worktree_state(repo), index_state(repo), git(repo, "for-each-ref")) == before


def test_a_file_that_would_replace_the_current_directory_is_refused(repo):
    (repo / "sub").write_text("a file\n")
    ckpt(repo, "save")
    (repo / "sub").unlink()
    (repo / "sub").mkdir()
    (repo / "sub/x").write_text("x\n")
    before = (worktree_state(repo), index_state(repo), git(repo, "for-each-ref"))
    res = ckpt(repo / "sub", "restore", "1", rc=1)
    assert "would replace the current directory 'sub' with a file" in res.err
    assert (worktree_state(repo), index_state(repo), git(repo, "for-each-ref")) == before
    ckpt(repo, "restore", "1")  # from the root it works
    assert (repo / "sub").read_text() == "a file\n"


# ------------------------------------------------------------------ 8. what `@` means after a restore


def _at(repo, spec="@"):
    return ckpt(repo, "show", spec, "--json").json()["result"]["id"]


def test_at_names_the_checkpoint_the_worktree_matches(repo):
    for i in (1, 2, 3):
        (repo / "f").write_text(f"{i}\n")
        ckpt(repo, "save")
    ckpt(repo, "restore", "2")  # saves nothing: the state is default/3
    assert _at(repo) == "default/2" and _at(repo, "@~1") == "default/1"
    assert ckpt(repo, "diff").out == ""  # compared with default/2, which the worktree holds
    assert ckpt(repo, "diff", "--json").json()["result"] == ckpt(repo, "diff", "--json", "2").json()["result"]
    (repo / "f").write_text("edited\n")
    ckpt(repo, "restore", "1", "--", "f")  # by path: the edit is saved as default/4
    # f was the only difference: the worktree is default/1 whole, and @ says so (walkthrough 25)
    assert _at(repo) == "default/1"
    ckpt(repo, "undo")  # by path too: the state it leaves is default/1, saved already
    assert _at(repo) == "default/4"  # and it is back at default/4 whole
    ckpt(repo, "restore", "1")  # saves nothing: the state is default/4's
    assert _at(repo) == "default/1"
    assert ckpt(repo, "undo").out.splitlines()[-1] == "undo: restored default/4"
    assert _at(repo) == "default/4"
    (repo / "g").write_text("g\n")
    ckpt(repo, "restore", "1", "--", "f")  # g stays: not default/1 whole, @ is the latest
    assert _at(repo) == "default/5"
    (repo / "f").write_text("new\n")
    ckpt(repo, "save")
    assert _at(repo) == "default/6"


def test_at_after_a_failed_attempt_is_the_state_you_are_back_on(repo):
    (repo / ".ckpt.toml").write_text('[[verifier]]\nname = "t"\ncommand = "grep -q good f"\nrequired = true\n')
    (repo / "f").write_text("good\n")
    ckpt(repo, "trust")
    ckpt(repo, "save")
    res = ckpt(repo, "attempt", "--", "sh", "-c", "echo bad > f", rc=1)
    assert (repo / "f").read_text() == "good\n", res
    assert ckpt(repo, "diff").out == ""
    assert ckpt(repo, "diff", "--json").json()["result"] == ckpt(repo, "diff", "--json", "1").json()["result"]
    assert _at(repo) == "default/1"
    assert ckpt(repo, "verify", "--json", rc=None).json()["result"]["checkpoint"] == "default/1"


def test_at_in_another_worktree_is_the_latest(repo, tmp_path):
    (repo / "f").write_text("1\n")
    ckpt(repo, "save")
    (repo / "f").write_text("2\n")
    ckpt(repo, "save")
    git(repo, "worktree", "add", "-q", str(tmp_path / "b"))
    ckpt(repo, "restore", "1")
    assert _at(repo) == "default/1"
    assert _at(tmp_path / "b") == "default/2"


def test_a_forged_restore_event_cannot_move_at(repo):
    (repo / "f").write_text("1\n")
    ckpt(repo, "save")
    (repo / "f").write_text("2\n")
    ckpt(repo, "save")
    ckpt(repo, "restore", "1")
    ckpt(repo, "drop", "--force", "1")  # the event's target no longer exists
    assert _at(repo) == "default/2"


# ------------------------------------------------------------------ 6. provenance: other worktree, other branch


def test_restoring_another_worktrees_checkpoint_says_so(repo, tmp_path):
    (repo / "a.txt").write_text("from A\n")
    ckpt(repo, "save")
    b = tmp_path / "B"
    git(repo, "worktree", "add", "-q", "-b", "laneB", str(b))
    (b / "new-in-B").write_text("B's work\n")
    plan = ckpt(b, "restore", "@", "--dry-run", "--json").json()["result"]["plan"]
    assert plan["provenance"] == [f"default/1 was saved in worktree {repo} (this is {b})",
                                  "default/1 was saved on branch main (this worktree is on laneB)"]
    assert "delete" in plan and "new-in-B" in plan["delete"]
    out = ckpt(b, "restore", "@").out.splitlines()
    assert out[0] == f"note: default/1 was saved in worktree {repo} (this is {b})"
    assert out[1] == "note: default/1 was saved on branch main (this worktree is on laneB)"
    assert out[2].startswith("saved current state as default/2")
    ckpt(b, "undo")
    assert (b / "new-in-B").read_text() == "B's work\n"
    # a checkpoint saved here, on this branch, gets no note
    assert ckpt(repo, "restore", "1", "--dry-run", "--json").json()["result"]["plan"]["provenance"] == []


def _two_branches(repo):
    (repo / "f").write_text("main\n")
    git(repo, "commit", "-qam", "m") if git(repo, "ls-files", "f") else (git(repo, "add", "f"), git(repo, "commit", "-qm", "m"))
    ckpt(repo, "save")  # saved on main at M
    git(repo, "switch", "-q", "-c", "feature")
    (repo / "f").write_text("feature\n")
    git(repo, "commit", "-qam", "feature work")


def test_reset_head_refuses_to_move_another_branch(repo):
    _two_branches(repo)
    head = git(repo, "rev-parse", "feature").strip()
    before = (worktree_state(repo), index_state(repo), git(repo, "for-each-ref"))
    dry = ckpt(repo, "restore", "1", "--reset-head", "--dry-run", rc=2)
    assert "--reset-head would move branch feature to the base of default/1, which was saved on main; 1 commit(s) would no longer be reachable from it" in dry.err
    res = ckpt(repo, "restore", "1", "--reset-head", rc=2)
    assert res.err.splitlines()[1].startswith("hint: check out main first")
    assert (worktree_state(repo), index_state(repo), git(repo, "for-each-ref")) == before
    plan = ckpt(repo, "restore", "1", "--reset-head", "--force", "--dry-run")
    assert "HEAD    branch feature moves from " in plan.out and "; 1 commit(s) no longer reachable from it" in plan.out
    ckpt(repo, "restore", "1", "--reset-head", "--force")
    assert git(repo, "rev-parse", "feature").strip() == git(repo, "rev-parse", "main").strip()
    ckpt(repo, "undo")
    assert git(repo, "rev-parse", "feature").strip() == head
    assert (repo / "f").read_text() == "feature\n"


def test_reset_head_on_the_same_branch_names_it_and_the_commits(repo):
    (repo / "f").write_text("1\n")
    git(repo, "add", "f")
    git(repo, "commit", "-qm", "one")
    ckpt(repo, "save")
    for i in (2, 3):
        (repo / "f").write_text(f"{i}\n")
        git(repo, "commit", "-qam", str(i))
    plan = ckpt(repo, "restore", "1", "--reset-head", "--dry-run", "--json").json()["result"]["plan"]
    assert plan["head"]["branch"] == "refs/heads/main" and plan["head"]["unreachable"] == 2
    ckpt(repo, "restore", "1", "--reset-head")
    assert git(repo, "log", "--format=%s", "-1") == b"one\n"


def test_reset_head_from_a_detached_head_moves_no_branch(repo):
    _two_branches(repo)
    git(repo, "switch", "-q", "--detach")
    ckpt(repo, "restore", "1", "--reset-head")
    assert git(repo, "rev-parse", "HEAD").strip() == git(repo, "rev-parse", "main").strip()
    assert git(repo, "log", "--format=%s", "-1", "feature") == b"feature work\n"


# ------------------------------------------------------------------ 2. sparse checkouts


def _sparse_repo(repo, mode):
    for f in ("in/a", "in/deep/d", "in/other/o", "out/b", "out/sub/c", "top"):
        (repo / f).parent.mkdir(parents=True, exist_ok=True)
        (repo / f).write_text(f + "\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "tree")
    return {"cone": ["set", "in"], "nested-cone": ["set", "in/deep"], "patterns": ["set", "--no-cone", "/in/", "/top"]}[mode]


def tags(repo):
    return dict(ln.split(b" ", 1)[::-1] for ln in git(repo, "ls-files", "-t", "-z").split(b"\0") if ln)


SPARSE = ["cone", "nested-cone", "patterns"]


@pytest.mark.parametrize("mode", SPARSE)
@pytest.mark.parametrize("where", ["out/new.txt", "out/sub/deeper/new.txt", "in/other/new.txt"])
def test_save_captures_untracked_files_outside_the_cone(repo, mode, where):
    git(repo, "sparse-checkout", *_sparse_repo(repo, mode))
    ckpt(repo, "save", "--allow-empty")
    (repo / where).parent.mkdir(parents=True, exist_ok=True)
    (repo / where).write_text("untracked outside\n")
    state = (worktree_state(repo), index_state(repo), tags(repo))
    assert "checkpoint saved: default/2" in ckpt(repo, "save").out
    assert git(repo, "show", f"refs/ckpt/default/2:{where}") == b"untracked outside\n"
    ckpt(repo, "restore", "1")
    assert not (repo / where).exists()
    ckpt(repo, "undo")
    assert (worktree_state(repo), index_state(repo), tags(repo)) == state


@pytest.mark.parametrize("mode", SPARSE)
def test_restore_into_a_sparse_checkout_never_writes_outside_the_cone(repo, mode):
    spec = _sparse_repo(repo, mode)
    (repo / "out/b").write_text("changed in the full checkout\n")
    (repo / "in/a").write_text("changed inside\n")
    git(repo, "add", "out/b")
    ckpt(repo, "save")  # full checkout: out/ on disk
    git(repo, "checkout", "-q", "--", ".")
    git(repo, "reset", "-q", "--hard")
    git(repo, "sparse-checkout", *spec)
    outside = sorted(p for p, t in tags(repo).items() if t == b"S")
    assert b"out/b" in outside
    before = (worktree_state(repo), index_state(repo), tags(repo))
    plan = ckpt(repo, "restore", "1", "--dry-run", "--json").json()["result"]["plan"]
    assert "out/b" not in plan["write"] and "out/b" in plan["outside_sparse_cone"]
    ckpt(repo, "restore", "1")
    assert not (repo / "out").exists()  # nothing written outside the cone
    t = tags(repo)
    assert sorted(p for p, v in t.items() if v == b"S") == outside  # skip-worktree entries put back
    assert git(repo, "show", ":out/b") == b"changed in the full checkout\n"  # the staged state is exact
    if mode != "nested-cone":
        assert (repo / "in/a").read_text() == "changed inside\n"
    # and the user can keep going: save, restore, undo
    (repo / "top").write_text("more\n")
    ckpt(repo, "save")
    ckpt(repo, "restore", "1")
    ckpt(repo, "undo")
    assert (repo / "top").read_text() == "more\n"
    ckpt(repo, "undo")
    ckpt(repo, "undo")
    ckpt(repo, "restore", "2")
    assert (worktree_state(repo), index_state(repo), tags(repo)) == before


@pytest.mark.parametrize("mode", SPARSE)
@pytest.mark.parametrize("paths", [[], ["out/b"], ["out"]], ids=["whole", "by-path", "by-directory"])
def test_a_changed_file_git_left_outside_the_cone_is_restored_and_undone_exactly(repo, mode, paths):
    """Walkthrough 28: a changed tracked file git leaves on disk when the cone narrows ("not up
    to date ... left despite sparse patterns") has no skip-worktree flag; a restore took it off
    the disk but left the entry unflagged, so git status showed it deleted and status said
    "changed since".  Now its entry is flagged, as for every file outside the cone, and undo
    writes it back where git had left it (a changed file outside the cone is written, as git
    keeps one), so the state before the restore comes back exactly."""
    spec = _sparse_repo(repo, mode)
    ckpt(repo, "save", "-m", "full")  # out/b as committed, on disk
    (repo / "out/b").write_text("changed, then the cone narrowed\n")
    git(repo, "sparse-checkout", *spec, check=False)  # warns: out/b is left on disk
    assert tags(repo)[b"out/b"] == b"H" and (repo / "out/b").exists()
    before = (worktree_state(repo), index_state(repo), tags(repo))
    plan = ckpt(repo, "restore", "default/1", "--dry-run", "--json", "--", *paths).json()["result"]["plan"]
    assert "out/b" in plan["delete"] and "out/b" in plan["outside_sparse_cone"] and plan["index_changes"], plan
    ckpt(repo, "restore", "default/1", "--", *paths)
    assert not (repo / "out/b").exists() and tags(repo)[b"out/b"] == b"S"
    assert git(repo, "status", "--porcelain", "--", "out") == b""
    # by path, @ is the pre-restore save (README: "@ after a restore")
    assert ckpt(repo, "status").out.splitlines()[3] == ("worktree:  changed since default/2 (@)" if paths
                                                       else "worktree:  matches default/1 (@)")
    ckpt(repo, "undo")
    assert (worktree_state(repo), index_state(repo), tags(repo)) == before
    assert (repo / "out/b").read_text() == "changed, then the cone narrowed\n"


def test_a_failing_git_command_reports_its_whole_message():
    import subprocess as sp

    from git_ckpt.gitcore import git_failure

    proc = sp.CompletedProcess(["git", "add"], 1, b"", b"The following paths and/or pathspecs matched paths that exist\n"
                               b"outside of your sparse-checkout definition, so will not be\nupdated in the index:\nout/new.txt\n"
                               b"hint: If you intend to update such entries, try one of the following:\n")
    err = git_failure(("add",), proc)
    assert "outside of your sparse-checkout definition" in err.message and "out/new.txt" in err.message
    assert err.hint


# ------------------------------------------------------------------ 5. a process still writing

WRITER = r"""
import os, select, sys
path = sys.argv[1]
i = 0
while True:
    i += 1
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)  # a logger: open, append, close
    os.write(fd, b"%d\n" % i)
    os.close(fd)
    if i == 1:
        sys.stdout.write("ready\n"); sys.stdout.flush()
    if select.select([sys.stdin], [], [], 0.001)[0]:  # the test closed our stdin: stop
        break
sys.stdout.write("%d\n" % i); sys.stdout.flush()
"""


def _lines_everywhere(repo, name):
    seen = set()
    for ref in git(repo, "for-each-ref", "--format=%(refname)", "refs/ckpt/").decode().split():
        if ref.rsplit("/", 1)[1].isdigit():
            data = git(repo, "show", f"{ref}:{name}", check=False)
            seen |= {int(x) for x in data.split() if x.isdigit()}
    if (repo / name).exists():
        seen |= {int(x) for x in (repo / name).read_bytes().split() if x.isdigit()}
    for kept in repo.glob(name + ".ckpt-kept-*"):
        seen |= {int(x) for x in kept.read_bytes().split() if x.isdigit()}
    return seen


@pytest.mark.parametrize("tracked", [True, False])
@pytest.mark.parametrize("round", range(3))
def test_a_concurrent_writer_loses_no_line(repo, tracked, round):
    """Input 5: a writer appends a line every millisecond while restore runs; every line ends
    up in a checkpoint or on disk (restore may stop with exit 5; --continue finishes it)."""
    name = "log.txt"
    if tracked:
        (repo / name).write_text("0\n")
        git(repo, "add", name)
        git(repo, "commit", "-qm", "log")
    ckpt(repo, "save", "--allow-empty")
    (repo / "other").write_text("residue\n")  # the restore has more to do than the log
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(repo / name)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert writer.stdout.readline() == b"ready\n"  # handshake: the writer is running
        res = ckpt(repo, "restore", "1", rc=None)
        assert res.rc in (0, 5), res
        if res.rc == 5:
            assert res.err.startswith("error: 'log.txt' changed") and "nothing" in res.err, res
    finally:
        writer.stdin.close()
        last = int(writer.stdout.readline())
        writer.wait()
    if (repo / ".git/ckpt/RESTORE").exists():
        ckpt(repo, "restore", "--continue")
    assert _lines_everywhere(repo, name) >= set(range(1, last + 1))
    assert not (repo / "other").exists() or res.rc == 5


def test_a_file_changed_after_the_capture_stops_the_restore_before_it(repo):
    """Deterministic: the file changes between the capture and the write (a git filter run by
    the capture's ``git add`` plays the writer, so no timing is involved)."""
    (repo / "f").write_text("saved\n")
    ckpt(repo, "save")
    (repo / "f").write_text("newer work\n")
    (repo / ".gitattributes").write_text("other filter=touch\n")
    (repo / "other").write_text("x\n")
    # the clean filter runs while save/restore capture 'other'; it appends to f behind our back
    git(repo, "config", "filter.touch.clean", f"sh -c 'echo appended >> {repo}/f; cat'")
    res = ckpt(repo, "restore", "1", rc=5)
    assert "'f' changed" in res.err
    assert (repo / "f").read_text().startswith("newer work\n")
    git(repo, "config", "--unset", "filter.touch.clean")
    text = (repo / "f").read_text()
    if (repo / ".git/ckpt/RESTORE").exists():  # stopped inside the restore: --continue saves f first
        ckpt(repo, "restore", "--continue")
        saved = {git(repo, "show", f"{r}:f") for r in git(repo, "for-each-ref", "--format=%(refname)", "refs/ckpt/default/").decode().split()
                 if r.rsplit("/", 1)[1].isdigit()}
        assert text.encode() in saved
        assert (repo / "f").read_text() == "saved\n"
    else:  # stopped before anything: no pre-restore checkpoint, f untouched
        assert git(repo, "for-each-ref", "refs/ckpt/default/2") == b""
        ckpt(repo, "restore", "1")
        ckpt(repo, "undo")
        assert (repo / "f").read_text() == text
