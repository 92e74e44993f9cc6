"""What the nineteenth new-user walkthrough of the README met, each as its kind: a dropped
checkpoint something still named (the promotion: status, show, the gate and push kept it),
a drop of several checkpoints that failed partway, git's ``@~`` shorthand, a garbled restore
plan line, swapped restore arguments without a hint, a secret counted once per checkpoint with
a hint that left it in the worktree, and ``handoff --check`` not saying it recorded results.

Real repositories and the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import pytest

from conftest import ckpt, git, saved_clean_then_merging


def _rev(repo, ref):
    return git(repo, "rev-parse", ref).decode().strip()


def _refs(repo):
    return git(repo, "for-each-ref", "--format=%(refname)", "refs/ckpt/").decode().split()


def _promoted_then_two_more(repo):
    for i in (1, 2, 3):
        (repo / "f").write_text(f"{i}\n")
        ckpt(repo, "save", "-m", f"s{i}")
        if i == 1:
            ckpt(repo, "verify")  # no verifiers: promotes default/1 on the empty requirement


# -- 1: dropping the promoted checkpoint ends the promotion --------------------------------------

def test_dropping_the_promoted_checkpoint_ends_its_promotion_everywhere(repo):
    git(repo, "config", "ckpt.gate", "true")
    _promoted_then_two_more(repo)
    one = _rev(repo, "refs/ckpt/default/1")
    out = ckpt(repo, "drop", "--force", "default/1").out
    assert out == (f"dropped default/1 ({one[:12]}) although it was protected (promoted)\n"
                   "task default has no promoted checkpoint now (refs/ckpt/default/promoted was deleted): "
                   "git ckpt verify promotes another\n"
                   "its objects are freed by git gc once nothing else reaches them\n"), out
    assert "refs/ckpt/default/promoted" not in _refs(repo)
    assert "promoted:  (none)\n" in ckpt(repo, "status").out
    assert ckpt(repo, "show", "promoted", rc=4).err.startswith("error: task default has no promoted checkpoint\n")
    git(repo, "checkout", "-q", one, "--", "f")  # the dropped checkpoint's tree, staged
    assert ckpt(repo, "gate", rc=1).err.startswith("error: commit refused by git ckpt gate: task default has no promoted checkpoint\n")
    assert "dropped default/1 (forced), and with it the promotion\n" in ckpt(repo, "log").out
    ckpt(repo, "log", "--verify")


def test_a_promotion_left_naming_a_dropped_checkpoint_is_named_refused_and_dropped(repo):
    _promoted_then_two_more(repo)
    one = _rev(repo, "refs/ckpt/default/1")
    git(repo, "update-ref", "-d", "refs/ckpt/default/1", one)  # what an older drop --force left behind
    git(repo, "config", "ckpt.gate", "true")
    assert "promoted:  default/1 (dropped since: git ckpt drop --force promoted ends the promotion)\n" in ckpt(repo, "status").out
    git(repo, "checkout", "-q", one, "--", "f")
    res = ckpt(repo, "gate", rc=1)
    assert res.err == ("error: commit refused by git ckpt gate: the promoted checkpoint default/1 of task default was dropped\n"
                       "hint: git ckpt drop --force promoted ends that promotion; git ckpt save && git ckpt verify promotes another\n"), res.err
    assert ckpt(repo, "drop", "promoted", rc=2).err == (
        "error: default/1 is protected (promoted); not dropped\n"
        "hint: git ckpt drop --force promoted drops it anyway (the ledger records that)\n")
    out = ckpt(repo, "drop", "--force", "promoted").out
    assert out.startswith(f"dropped default/1 ({one[:12]}) although it was protected (promoted)\n"
                          "task default has no promoted checkpoint now"), out
    assert _refs(repo) == ["refs/ckpt/default/2", "refs/ckpt/default/3", "refs/ckpt/default/log"]


def test_drop_promoted_drops_the_promoted_checkpoint(repo):
    _promoted_then_two_more(repo)
    assert ckpt(repo, "drop", "--force", "promoted").out.startswith("dropped default/1 (")
    assert _refs(repo) == ["refs/ckpt/default/2", "refs/ckpt/default/3", "refs/ckpt/default/log"]


def test_a_secret_only_in_a_dropped_promoted_checkpoint_no_longer_blocks_push(tmp_path):
    from test_remote import _team

    _bare, alice, _bob = _team(tmp_path)
    (alice / "fixtures").mkdir()
    (alice / "fixtures/aws.ini").write_text("[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLQ\n")
    ckpt(alice, "save", "-m", "with the key")
    ckpt(alice, "verify")
    (alice / "fixtures/aws.ini").unlink()
    (alice / "a").write_text("a\n")
    ckpt(alice, "save", "-m", "without")
    ckpt(alice, "push", rc=10)
    ckpt(alice, "drop", "--force", "default/1")
    out = ckpt(alice, "push").out
    assert "promoted" not in out and out.endswith("pushed 2 ref(s) to origin\n"), out


# -- 2: drop of several checkpoints is all or nothing ---------------------------------------------

def test_drop_of_several_drops_none_when_one_is_protected(repo):
    _promoted_then_two_more(repo)
    before = _refs(repo)
    res = ckpt(repo, "drop", "default/3", "1", "default/2", rc=2)
    assert res.err == ("error: default/1 is protected (promoted); nothing was dropped\n"
                       "hint: git ckpt drop --force default/3 1 default/2 drops them all anyway (the ledger records that), "
                       "or leave default/1 out\n"), res.err
    assert _refs(repo) == before and res.out == ""
    ckpt(repo, "restore", "default/2")  # default/2 and default/3: both sides of the last restore
    res = ckpt(repo, "drop", "default/3", "default/2", "default/1", rc=2)
    assert res.err.startswith("error: default/3 (the state the last restore left) and default/2 (target of the last restore) "
                              "and default/1 (promoted) are protected; nothing was dropped\n"), res.err
    assert _refs(repo) == before


def test_drop_of_several_drops_none_when_one_is_unknown(repo):
    _promoted_then_two_more(repo)
    ckpt(repo, "drop", "default/2")
    before = _refs(repo)
    res = ckpt(repo, "drop", "--force", "default/3", "default/2", rc=4)
    assert res.err.startswith("error: no checkpoint default/2: it was dropped (numbers are never given again); nothing was dropped\n"), res.err
    assert _refs(repo) == before
    out = ckpt(repo, "drop", "--force", "default/3", "3", "@").out  # one checkpoint named three ways: dropped once
    assert out.count("dropped default/3 (") == 1 and out.endswith("its objects are freed by git gc once nothing else reaches them\n"), out


# -- 3: git's @~ shorthands ------------------------------------------------------------------------

@pytest.mark.parametrize("name,n", [("@~", 3), ("@~~", 2), ("@~2~", 1), ("@~~1", 2), ("default/@~", 3), ("@~0~", 3)])
def test_git_s_tilde_shorthands_count_back_from_at(repo, name, n):
    for i in (1, 2, 3, 4):
        (repo / "f").write_text(f"{i}\n")
        ckpt(repo, "save", "-m", f"s{i}")
    assert ckpt(repo, "show", name).out.startswith(f"checkpoint default/{n}\n")
    assert ckpt(repo, "diff", "--stat", name, "@").rc == 0
    ckpt(repo, "task", "note", "--fact", "seen", "--evidence", name)


def test_too_many_tilde_steps_say_how_many_there_are(repo):
    (repo / "f").write_text("1\n")
    ckpt(repo, "save", "-m", "s1")
    assert ckpt(repo, "show", "@~~", rc=4).err == ("error: @~~: task default has only 1 checkpoint(s) up to default/1\n"
                                                   "hint: @ is default/1, @~0 the oldest; git ckpt list --task default shows them\n")


# -- 4: the restore plan's merge lines read plainly -----------------------------------------------

def test_the_merge_lines_of_a_restore_plan_say_what_happens_to_merge_head(repo):
    side = saved_clean_then_merging(repo)
    ckpt(repo, "save", "-m", "mid-merge")
    git(repo, "merge", "--abort")
    plan = ckpt(repo, "restore", "default/2", "--dry-run").out.splitlines()
    assert plan[-2:] == [f"merge   MERGE_HEAD set to {side[:12]} (the merge in progress when it was saved)",
                         "leave   1 other file(s)"], plan
    ckpt(repo, "restore", "default/2")
    plan = ckpt(repo, "restore", "default/1", "--dry-run").out.splitlines()
    assert plan[-2:] == ["merge   MERGE_HEAD removed (the merge an earlier restore brought back ends)",
                         "leave   1 other file(s)"], plan


# -- 5: a task or checkpoint given where a path goes ----------------------------------------------

@pytest.mark.parametrize("args,err", [
    (["restore", "2", "fix-div"], "error: path 'fix-div' matches nothing in other/2 or in the worktree: it is a task\n"
                                  "hint: its checkpoints are fix-div/N, and the checkpoint comes first: git ckpt restore fix-div/2\n"),
    (["restore", "2", "lone"], "error: path 'lone' matches nothing in other/2 or in the worktree: it is a task\n"
                               "hint: its checkpoints are lone/N, and the checkpoint comes first: git ckpt list --task lone shows them\n"),
    (["restore", "2", "fix-div/1"], "error: path 'fix-div/1' matches nothing in other/2 or in the worktree: it is a checkpoint\n"
                                    "hint: the checkpoint comes first: git ckpt restore fix-div/1 -- PATHS\n"),
    (["restore", "2", "nothere"], "error: path 'nothere' matches nothing in other/2 or in the worktree\n"
                                  "hint: paths are literal and relative to the current directory; git ls-tree -r --name-only "
                                  "refs/ckpt/other/2 lists the files other/2 holds, git ckpt show other/2 its overlay files\n"),
])
def test_a_task_or_checkpoint_given_as_a_path_says_what_it_is(repo, args, err):
    for task in ("lone", "fix-div", "other"):
        ckpt(repo, "task", "start", task)
        for i in (1, 2) if task != "lone" else (1,):
            (repo / "f").write_text(f"{task} {i}\n")
            ckpt(repo, "save", "-m", f"{task} {i}")
    assert ckpt(repo, *args, rc=4).err == err


# -- 6: a secret is counted once per file, its checkpoints named, the hint removes it first -------

def alice_saved_secrets(tmp_path, files: dict[str, str], saves: int):
    """Alice of :func:`test_remote._team` with ``files`` written, then ``saves`` checkpoints
    each changing the overlay file ``fixtures/n`` (so each has its own overlay.tar blob)."""
    from test_remote import _team

    _bare, alice, _bob = _team(tmp_path)
    (alice / "fixtures").mkdir()
    for name, text in files.items():
        (alice / name).write_text(text)
    for i in range(1, saves + 1):
        (alice / "fixtures/n").write_text(f"{i}\n")
        ckpt(alice, "save", "-m", f"s{i}")
    return alice


def test_a_secret_in_three_overlays_is_one_file_naming_its_three_checkpoints(tmp_path):
    alice = alice_saved_secrets(tmp_path, {"fixtures/aws.ini": "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLQ\n"}, 3)
    res = ckpt(alice, "push", rc=10)
    found = "fixtures/aws.ini: AWS Access Key (line 2) [overlay of default/1, default/2, default/3]"
    assert res.err == (f"secret?  {found}\n"
                       f"error: refusing to push to origin: possible secrets in 1 file, held by 3 checkpoints, that origin does "
                       f"not have yet: fixtures/aws.ini; nothing was sent\n"
                       "hint: if these are not secrets, push again with --allow-secrets; otherwise remove it from the worktree "
                       "(or exclude it from the overlay) first, so that no save captures it again, then git ckpt drop "
                       "default/1 default/2 default/3 and git gc --prune=now\n"), res.err
    (alice / "fixtures/aws.ini").unlink()
    ckpt(alice, "save", "-m", "without")
    ckpt(alice, "drop", "default/1", "default/2", "default/3")
    git(alice, "gc", "-q", "--prune=now")
    assert ckpt(alice, "push").out.endswith("pushed 2 ref(s) to origin\n")


# -- 7: handoff --check says that the results of its re-run are recorded ---------------------------

def test_handoff_check_says_the_results_it_re_ran_are_recorded(repo):
    (repo / ".ckpt.toml").write_text('[[verifier]]\nname = "tests"\ncommand = "true"\nrequired = true\n')
    ckpt(repo, "trust")
    ckpt(repo, "save", "-m", "one")
    assert "ok    verifier tests: re-run: passed (recorded), nothing recorded before\n" in ckpt(repo, "handoff", "--check").out
    assert "verifier: tests ...... passed" in ckpt(repo, "log").out  # recorded indeed
    assert "ok    verifier tests: re-run: passed (recorded), before: passed\n" in ckpt(repo, "handoff", "--check").out


def test_a_push_of_every_task_refused_for_one_names_how_the_others_go(tmp_path):
    """Bob's task `fix` met Alice's on the remote: `push --all` is refused (atomic: nothing is
    sent) for as long as his `fix` exists, and the hint said only to continue under another name,
    which he had.  It now names the command that pushes each of his other tasks."""
    from test_remote import _shared_task

    _bare, alice, bob = _shared_task(tmp_path, "fix")
    for task in ("fix", "fix-bob", "other"):
        ckpt(bob, "task", "start", task)
        (bob / "b").write_text(f"{task}\n")
        ckpt(bob, "save", "-m", task)
    res = ckpt(bob, "push", "--all", rc=10)
    assert res.err.splitlines()[-1] == (
        "hint: someone else pushed a task of the same name: see theirs with git ckpt fetch origin && git ckpt list --remote origin "
        "--all, then continue your work under another task name (git ckpt task start NEW-NAME, save, push); your other tasks go "
        "without it, one at a time: git ckpt push origin --task fix-bob (and so for other)"), res
    assert "pushed" in ckpt(bob, "push", "origin", "--task", "fix-bob").out
    assert ckpt(bob, "push", "--task", "fix", rc=10).err.splitlines()[-1].endswith("(git ckpt task start NEW-NAME, save, push)")
