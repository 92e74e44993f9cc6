"""What the twenty-second new-user walkthrough of the README met.

1. A checkpoint saved before the first commit (on an unborn branch) was restored with its index
   as staged then (nothing), so after ``git commit`` of its files the index staged the reverse
   of that commit, with no note, while ``status`` had said HEAD "commits" it.  A base that is
   an unborn branch is a base like any other: the committed-on-HEAD rule and the base note hold
   for it (both directions: saved unborn and restored on a commit, saved on a commit and
   restored on an unborn branch), and "an unborn branch" is never cut to 12 characters.
2. After ``gc`` (or ``drop``) of a task's first checkpoints, ``stats`` counted commits "since the
   task began" from the oldest surviving checkpoint, and the handoff's *Touched* began there:
   routine retention rewrote what the task did.  The task begins at its first save, whose
   checkpoint commit the ledger records (the object stays until ``git gc`` prunes it).

Real repositories and the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import json

import pytest

from git_ckpt.model import escape
from conftest import ckpt, git, init_repo


def _status(repo) -> str:
    return git(repo, "status", "--short", "--untracked-files=all").decode()


def test_a_checkpoint_saved_before_the_first_commit_restores_on_it_with_nothing_staged(tmp_path):
    repo = init_repo(tmp_path / "r", commit=False)
    (repo / "a").write_text("a\n")
    ckpt(repo, "save", "-m", "one")
    git(repo, "add", "a")
    git(repo, "commit", "-qm", "a")
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    assert f"HEAD:      {head[:12]} commits default/1 (the first commit)\n" in ckpt(repo, "status").out
    (repo / "a").write_text("b\n")
    note = (f"note: default/1 was saved on an unborn branch; HEAD {head[:12]} commits its files and stays: the index "
            "is set to HEAD's tree (nothing staged), not as it was staged on that base\n")
    assert ckpt(repo, "restore", "default/1", "--dry-run").out == note + "would restore default/1:\nwrite   a\nleave   0 other file(s)\n"
    plan = ckpt(repo, "restore", "default/1", "--dry-run", "--json").json()["result"]
    assert plan["plan"]["base_differs"] == {"saved_on": None, "note": note[len("note: "):-1]}
    res = ckpt(repo, "restore", "default/1")
    assert res.out == note + "saved current state as default/2 (pre-restore)\nrestored default/1\n", res
    assert _status(repo) == "" and (repo / "a").read_text() == "a\n"
    assert f"HEAD:      {head[:12]} commits default/1 (the first commit)\n" in ckpt(repo, "status").out
    ckpt(repo, "undo")
    assert (repo / "a").read_text() == "b\n" and _status(repo) == " M a\n"


@pytest.mark.parametrize("staged", [False, True])
def test_a_checkpoint_saved_unborn_restored_on_another_commit_says_the_index_stages_the_difference(tmp_path, staged):
    repo = init_repo(tmp_path / "r", commit=False)
    (repo / "a").write_text("a\n")
    if staged:
        git(repo, "add", "a")
    ckpt(repo, "save", "-m", "one")
    (repo / "a").unlink()
    git(repo, "rm", "-q", "--cached", "--ignore-unmatch", "a")
    (repo / "other").write_text("o\n")
    git(repo, "add", "other")
    git(repo, "commit", "-qm", "other")
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    note = (f"note: default/1 was saved on an unborn branch; HEAD is {head[:12]} and stays: the restored index stages "
            "the difference (git status shows it as staged changes)\n")  # no --reset-head: HEAD cannot go back to unborn
    res = ckpt(repo, "restore", "default/1")
    assert res.out.startswith(note), res
    # exact: the index as saved (nothing, or a staged), HEAD stays: its file shows as a staged deletion
    listing = git(repo, "ls-files", "--stage").decode()
    assert listing == (f"100644 {git(repo, 'hash-object', 'a').decode().strip()} 0\ta\n" if staged else "")
    assert (repo / "a").read_text() == "a\n"
    status = ckpt(repo, "status").out
    assert f"HEAD:      not where default/1 was saved (saved on an unborn branch, HEAD is {head[:12]})\n" in status, status
    assert json.loads(ckpt(repo, "--json", "restore", "default/2", "--dry-run").out)["result"]["plan"]["base_differs"] is None


def test_a_checkpoint_saved_on_a_commit_restored_on_an_unborn_branch_says_so(repo):
    (repo / "a").write_text("a\n")
    git(repo, "add", "a")  # staged on its base: the index differs from the unborn branch's (empty)
    ckpt(repo, "save", "-m", "one")
    base = git(repo, "rev-parse", "HEAD").decode().strip()
    git(repo, "checkout", "-q", "--orphan", "fresh")
    git(repo, "rm", "-q", "-r", "--cached", ".")
    res = ckpt(repo, "restore", "default/1")
    assert res.out == ("note: default/1 was saved on branch main (this worktree is on fresh)\n"
                       f"note: default/1 was saved on {base[:12]}; HEAD is an unborn branch and stays: the restored index "
                       "stages the difference (git status shows it as staged changes); git ckpt restore default/1 "
                       "--reset-head --force moves HEAD to that commit too (--force: it was saved on main, not fresh)\n"
                       "saved current state as default/2 (pre-restore)\nrestored default/1\n"), res.out
    assert git(repo, "ls-files").decode() == "README\na\n"
    status = ckpt(repo, "status").out
    assert f"HEAD:      not where default/1 was saved (saved on {base[:12]}, HEAD is an unborn branch)\n" in status, status


@pytest.mark.parametrize("how", ["gc", "drop"])
def test_pruning_the_first_checkpoints_does_not_move_where_the_task_began(tmp_path, how):
    repo = init_repo(tmp_path / "r")
    began = git(repo, "rev-parse", "HEAD").decode().strip()
    for i in (1, 2, 3):
        (repo / "f").write_text(f"{i}\n")
        ckpt(repo, "save", "-m", f"s{i}")
        git(repo, "add", "f")
        git(repo, "commit", "-qm", f"c{i}")
    (repo / "g").write_text("g\n")
    ckpt(repo, "save", "-m", "s4")

    def seen():
        commits = ckpt(repo, "stats", "--json").json()["result"]["commits"]
        receipt = ckpt(repo, "handoff", "--json").json()["result"]
        return commits["checked"], receipt["base"], [(t["path"], t["status"]) for t in receipt["touched"]]

    before = seen()
    assert before == (3, began, [("f", "A"), ("g", "A")])
    if how == "gc":
        assert ckpt(repo, "gc", "--keep", "1", "--older-than", "0s").out.count("pruned default/") == 3
    else:
        ckpt(repo, "drop", "default/1", "default/2")
    assert seen() == before
    assert f"## Touched (from {began[:12]} to default/4)\n" in ckpt(repo, "handoff").out


def test_init_with_hooks_says_it_turned_the_gate_on(repo):
    """3. ``init --hooks`` printed only ``wrote .ckpt.toml`` while it installed six hooks and
    turned the gate on: it says what ``hooks install`` says."""
    out = ckpt(repo, "init", "--hooks").out
    assert out.startswith(f"wrote {repo / '.ckpt.toml'}\ninstalled pre-commit, ") and "\ngate on: " in out, out
    ckpt(repo, "hooks", "uninstall")
    assert out == f"wrote {repo / '.ckpt.toml'}\n" + ckpt(repo, "hooks", "install").out + NEXT_AFTER_INIT


#: What init says after writing .ckpt.toml (walkthrough 24: it did not say the next step).
NEXT_AFTER_INIT = ("next: name your test commands as [[verifier]] entries in .ckpt.toml, then git ckpt trust"
                   " (verifiers run only from a .ckpt.toml you trusted, byte for byte)\n")


def test_an_isolated_verify_reuses_only_isolated_results(repo):
    """5. As README "Verify" now says: ``verify --isolated`` after an in-place pass runs again (the
    run in place may have read ignored files no checkpoint holds); an in-place verify reuses
    an isolated pass."""
    from test_verify import verifier, write_config

    write_config(repo, verifier("t", "true"))
    (repo / "f").write_text("x\n")
    ckpt(repo, "save", "-m", "a")
    runs = [ckpt(repo, "verify", *flags).out.splitlines()[0] for flags in ([], ["--isolated"], ["--isolated"], [])]
    assert [("reused from default/1" in r) for r in runs] == [False, False, True, True], runs


def test_a_save_equal_to_its_at_is_named_as_a_copy_of_it_not_no_changes(repo):
    """6. The first save of a task after restoring another task's checkpoint (and ``save
    --allow-empty``) was named "no changes": a checkpoint that was saved.  It is ``same as T/N``."""
    ckpt(repo, "task", "start", "a")
    (repo / "f").write_text("1\n")
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "task", "start", "b")
    (repo / "f").write_text("2\n")
    ckpt(repo, "restore", "a/1")
    assert ckpt(repo, "save").out == "checkpoint saved: b/2\n"
    ckpt(repo, "save", "--allow-empty")
    rows = ckpt(repo, "list", "--json").json()["result"]
    assert [(r["id"], r["message"]) for r in rows][-2:] == [("b/2", "same as a/1"), ("b/3", "same as b/2")]


def test_a_restore_that_brings_a_merge_back_says_so_in_place_and_in_a_new_worktree(repo, tmp_path):
    """8. ``restore --worktree`` (and a plain restore) of a checkpoint saved mid-merge left git
    merging without a word, though the dry run's plan names the merge line: the run says it too,
    and the restore that ends that merge again says so."""
    from conftest import saved_clean_then_merging

    side = saved_clean_then_merging(repo)
    ckpt(repo, "save", "-m", "mid-merge")
    merging = (f"merging again: MERGE_HEAD is {side[:12]}, as when default/2 was saved (git commit concludes the merge, "
               "git merge --abort ends it)\n")
    res = ckpt(repo, "restore", "default/2", "--worktree", str(tmp_path / "review"))
    assert res.out.endswith("restored default/2\n" + merging), res.out
    assert git(tmp_path / "review", "rev-parse", "MERGE_HEAD").decode().strip() == side
    git(repo, "merge", "--abort")
    assert ckpt(repo, "restore", "default/2").out.endswith("restored default/2\n" + merging)
    assert ckpt(repo, "restore", "default/1").out.endswith(
        "restored default/1\nMERGE_HEAD removed: the merge an earlier restore brought back ends\n")
    assert not (repo / ".git" / "MERGE_HEAD").exists()


def test_verify_commit_names_a_fetched_promoted_checkpoint_by_its_remote_id(tmp_path):
    """Walkthrough 23: a commit whose tree a teammate's promoted checkpoint holds was said to be
    verified by "fix/1" — a local id that does not exist here (or, after gc, a pruned one of
    one's own) — when the match came from ``refs/ckpt-remotes/origin/fix/promoted``.  A fetched
    checkpoint is always named ``REMOTE:T/N``."""
    from test_remote import _team

    _bare, alice, bob = _team(tmp_path)
    (alice / ".ckpt.toml").write_text('[overlay]\ninclude = ["fixtures/"]\n\n[[verifier]]\nname = "ok"\ncommand = "true"\n')
    git(alice, "commit", "-qam", "verifier")
    ckpt(alice, "trust")
    ckpt(alice, "task", "start", "fix")
    (alice / "a").write_text("a\n")
    ckpt(alice, "save", "-m", "one")
    ckpt(alice, "verify")
    git(alice, "add", "-A")
    git(alice, "commit", "-qm", "a")
    git(alice, "push", "-q", "origin", "HEAD")
    ckpt(alice, "push")
    git(bob, "pull", "-q")
    ckpt(bob, "trust")
    ckpt(bob, "fetch")
    ckpt(bob, "verify", "origin:fix/1", "--isolated")  # bob's own run: evidence here
    head = git(bob, "rev-parse", "HEAD").decode().strip()
    res = ckpt(bob, "verify-commit", "HEAD")
    assert res.out == f"HEAD ({head[:12]}): verified: tree of checkpoint origin:fix/1 (promoted on origin)\n", res.out
    assert ckpt(bob, "verify-commit", "HEAD", "--json").json()["result"][0]["checkpoint"] == "origin:fix/1"
    assert ckpt(bob, "show", "origin:fix/1").out.startswith("checkpoint origin:fix/1  (promoted on origin)\n")


@pytest.mark.parametrize("pattern,problem,escapes", [
    ("tmp/[!a]x", "has a negated, range or [:class:] bracket expression (read otherwise than git reads it)", False),
    ("tmp/*a*b*c", "has more than 2 wildcards in one path component", False),
    ("../home/", "contains '..'", True),
])
def test_a_refused_overlay_pattern_says_why_and_only_an_escape_says_patterns_stay_inside(repo, pattern, problem, escapes):
    """Walkthrough 23: a bracket or wildcard refusal ended "overlay patterns stay inside the
    worktree", which is the reason for a pattern that reaches out, not for these.  (And README
    now says what counts as a wildcard: ``*``, and ``?`` beside one; ``tmp/??????`` is fine.)"""
    import subprocess

    proc = subprocess.run(["git", "-c", f"ckpt.overlay.include={pattern}", "ckpt", "save"], cwd=repo, capture_output=True, text=True)
    tail = "; overlay patterns stay inside the worktree" if escapes else ""
    assert (proc.returncode, proc.stderr.splitlines()[0]) == (
        6, f"error: git config: ckpt.overlay.include pattern '{escape(pattern)}' {problem}{tail}"), proc
    ok = subprocess.run(["git", "-c", "ckpt.overlay.include=tmp/??????????", "ckpt", "save"], cwd=repo, capture_output=True)
    assert ok.returncode == 0, ok


@pytest.mark.parametrize("spelled", ["path", "relative path"])
def test_a_configured_remote_s_url_is_answered_with_its_name(tmp_path, spelled):
    """Walkthrough 23: ``git ckpt push /path/backup.git`` said "not a configured remote" though
    remote backup has that URL; the hint names it (push, fetch and list --remote share it)."""
    from conftest import init_repo

    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "backup.git"))
    repo = init_repo(tmp_path / "r")
    git(repo, "remote", "add", "backup", str(tmp_path / "backup.git"))
    url = str(tmp_path / "backup.git") if spelled == "path" else "../backup.git"
    for args in (["push", url], ["fetch", url], ["list", "--remote", url]):
        res = ckpt(repo, *args, rc=2)
        assert res.err == f"error: {url!r} is not a configured remote\nhint: that is the URL of remote backup; name the remote instead\n", res


def test_starting_a_task_marked_done_says_it_is_reopened(repo):
    """Walkthrough 23: ``task start`` of a task marked done silently dropped the mark (``save``
    into a done task warns); it says so, once, on stderr (and in ``--json`` warnings)."""
    ckpt(repo, "task", "start", "t")
    ckpt(repo, "task", "done")
    res = ckpt(repo, "task", "start", "t")
    assert res.err == "warning: task t was marked done; starting it again reopens it (git ckpt task done marks it again)\n", res
    assert ckpt(repo, "task", "start", "t").err == ""


def test_init_with_hooks_beside_an_existing_config_points_at_hooks_install(repo):
    """Walkthrough 24: ``init --hooks`` where ``.ckpt.toml`` exists refused with "pass --force to
    replace it", which would throw the verifiers away to get hooks; the hint names the command
    that installs the hooks alone."""
    (repo / ".ckpt.toml").write_text("# mine\n")
    res = ckpt(repo, "init", "--hooks", rc=2)
    assert res.err == "error: .ckpt.toml already exists\nhint: git ckpt hooks install installs the hooks alone\n", res
    assert (repo / ".ckpt.toml").read_text() == "# mine\n"
    assert ckpt(repo, "init", rc=2).err.endswith("hint: edit it, or pass --force to replace it\n")
