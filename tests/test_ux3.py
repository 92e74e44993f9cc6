"""The fifth walkthrough's leftovers, each as its kind: a restore (or undo) that finds the
worktree holding its target already writes nothing and says it once, and ``undo`` passes over
it; ``@`` after restoring a checkpoint of another task of this repository is that checkpoint.

The real ``git ckpt`` entry point in real repositories.
"""

from __future__ import annotations

import re

import pytest

from conftest import ckpt, git, pushed_task, worktree_state


def _two(repo):
    ckpt(repo, "task", "start", "t")
    (repo / "f").write_text("1\n")
    ckpt(repo, "save", "-m", "one")
    (repo / "f").write_text("2\n")
    ckpt(repo, "save", "-m", "two")


def _checkpoint_refs(repo):
    """Every ref under refs/ckpt but the ledger (which the restore's event moves)."""
    return [ln for ln in git(repo, "for-each-ref", "refs/ckpt").decode().splitlines() if not ln.endswith("/log")]


def _events(repo):
    return [re.sub(r"^#\d+ +\S+ +", "", ln) for ln in ckpt(repo, "log").out.splitlines()]


@pytest.mark.parametrize("how", ["latest", "at-after-restore", "twice"])
def test_restore_to_the_state_held_already(repo, how):
    """Every way a restore can find the worktree holding its target already: the latest
    checkpoint, ``@`` after a restore, the same restore twice.  Nothing is written or saved, one
    line says so, the ledger and the graph say so, and undo goes back past it."""
    _two(repo)
    if how == "latest":
        target, before = "t/2", None
    else:
        assert ckpt(repo, "restore", "t/1").out == "current state matches t/2; not saved again\nrestored t/1\n"
        target, before = "t/1", "t/2"
    if how == "twice":
        ckpt(repo, "restore", "t/1")
    state = worktree_state(repo)
    refs = _checkpoint_refs(repo)
    assert ckpt(repo, "restore", target).out == f"the worktree already matches {target}; nothing to restore\n"
    assert worktree_state(repo) == state and _checkpoint_refs(repo) == refs
    assert _events(repo)[-1] == f"restored {target} (the worktree held it already)"
    assert ckpt(repo, "log", "--graph").out.splitlines()[-1].startswith(
        f"|=  restored {target}  (the worktree held it already)  ")
    assert ckpt(repo, "status", "--json").json()["result"]["worktree"]["checkpoint"] == target
    if before is None:
        res = ckpt(repo, "undo", rc=2)
        assert res.err == (f"error: nothing to undo: the worktree already matched {target} when it was restored, "
                           "and no earlier restore from this worktree changed the state\n"
                           "hint: git ckpt log shows the history of the task\n")
        assert worktree_state(repo) == state
    else:  # back to the state before the restore that changed it
        assert ckpt(repo, "undo").out == f"current state matches {target}; not saved again\nundo: restored {before}\n"
        assert (repo / "f").read_text() == "2\n"


@pytest.mark.parametrize("target", ["origin:t/1", "t2/1"])
def test_a_restore_held_already_under_another_name_is_passed_over_after_a_redo(tmp_path, target):
    """Walkthrough 28: restore a fetched origin:t/1, undo, undo again (a redo: the state is b/2,
    bob's own copy of origin:t/1), restore origin:t/1 again (nothing to restore) and undo: the
    undo took the no-op restore for the last jump (its "from" was b/2, not origin:t/1) and said
    "nothing to undo".  A restore that found nothing to write is logged as such (``unchanged``),
    whatever name the state left has, and undo goes back past it to the redo's state before."""
    _remote, _alice, bob = pushed_task(tmp_path, "t", {"f": "alice\n"})
    ckpt(bob, "fetch")
    ckpt(bob, "task", "start", "t2")
    (bob / "f").write_text("alice\n")
    ckpt(bob, "save", "-m", "t2's")
    ckpt(bob, "task", "start", "b")
    (bob / "f").write_text("bob\n")
    ckpt(bob, "save", "-m", "b1")
    ckpt(bob, "restore", target)
    ckpt(bob, "undo")
    ckpt(bob, "undo")  # the redo: the state is the target's again, saved as b/2
    assert (bob / "f").read_text() == "alice\n"
    assert ckpt(bob, "restore", target).out.splitlines()[-1] == f"the worktree already matches {target}; nothing to restore"
    assert _events(bob)[-1] == f"restored {target} (the worktree held it already)"
    assert ckpt(bob, "log", "--graph").out.splitlines()[-1].startswith(f"|=  restored {target}  (the worktree held it already)  ")
    assert ckpt(bob, "undo").out.splitlines()[-1] == "undo: restored b/1"
    assert (bob / "f").read_text() == "bob\n"
    assert ckpt(bob, "status").out.splitlines()[3] == "worktree:  matches b/1 (@)"


def test_fresh_worktree_of_a_checkpoint_saved_without_changes(repo, tmp_path):
    """The third walkthrough: `restore --worktree` of a checkpoint equal to its base said
    `restored`, then `undo` said `undo: restored X` landing on X, and the graph `(left X)`."""
    ckpt(repo, "save", "-m", "clean", "--allow-empty")
    new = tmp_path / "wt"
    res = ckpt(repo, "restore", "1", "--worktree", str(new))
    assert res.out.splitlines()[-1] == "the worktree already matches default/1; nothing to restore"
    assert "saved current state" not in res.out
    res = ckpt(new, "undo", rc=2)
    assert res.err.startswith("error: nothing to undo: the worktree already matched default/1 when it was restored")
    assert "(left " not in ckpt(new, "log", "--graph").out


def test_restore_writing_nothing_saves_nothing_though_the_state_differs(repo):
    """The files and index hold the target's but the state is no checkpoint of the task (HEAD
    moved since): nothing will be written, so nothing is saved (the seventh walkthrough: the
    dry run said "nothing to change" and the real run saved a pre-restore checkpoint), and the
    dry run and the real run say the same."""
    _two(repo)
    ckpt(repo, "task", "start", "u")
    git(repo, "commit", "-q", "--allow-empty", "-m", "HEAD moves")
    state = worktree_state(repo)
    assert ckpt(repo, "restore", "t/2", "-n").out.splitlines()[0] == (
        "would restore t/2: nothing to change (the worktree already matches t/2)")
    assert ckpt(repo, "restore", "t/2").out == "the worktree already matches t/2; nothing to restore\n"
    assert worktree_state(repo) == state and _checkpoint_refs(repo)[-1].endswith("refs/ckpt/t/2")
    assert ckpt(repo, "show", "@", "--json").json()["result"]["id"] == "t/2"


def test_reset_head_says_which_branch_moved(repo):
    """Seventh walkthrough: the dry run of --reset-head named the branch it moves and the commits
    it leaves, the real run (and its undo) said nothing of it."""
    _two(repo)
    old = git(repo, "rev-parse", "HEAD").decode().strip()
    git(repo, "commit", "-q", "--allow-empty", "-m", "one more")
    new = git(repo, "rev-parse", "HEAD").decode().strip()
    branch = git(repo, "symbolic-ref", "--short", "HEAD").decode().strip()
    moved = f"branch {branch} moved from {new[:12]} to {old[:12]}; 1 commit(s) no longer reachable from it (undo moves it back)"
    res = ckpt(repo, "restore", "t/1", "--reset-head")
    assert moved in res.out.splitlines() and res.out.splitlines()[-1] == "restored t/1"
    assert git(repo, "rev-parse", "HEAD").decode().strip() == old
    assert f"branch {branch} moved from {old[:12]} to {new[:12]}" in ckpt(repo, "undo").out.splitlines()
    assert git(repo, "rev-parse", "HEAD").decode().strip() == new


def test_at_after_restoring_another_tasks_checkpoint(repo):
    """`@` is the checkpoint restored also when it belongs to another task of this repository
    (it was the task's latest, and status said `changed since`); `@~1` counts back through that
    task; a save makes the state a checkpoint of the current task."""
    _two(repo)
    ckpt(repo, "task", "start", "u")
    (repo / "f").write_text("mine\n")
    ckpt(repo, "save", "-m", "mine")
    assert ckpt(repo, "restore", "t/1").out == "current state matches u/1; not saved again\nrestored t/1\n"
    st = ckpt(repo, "status", "--json").json()["result"]
    assert (st["worktree"]["checkpoint"], st["worktree"]["exact"]) == ("t/1", True)
    assert "worktree:  matches t/1 (@)" in ckpt(repo, "status").out.splitlines()
    assert ckpt(repo, "show", "@", "--json").json()["result"]["id"] == "t/1"
    # the state t/1 is no checkpoint of u: it is saved first (t's retention may prune t/1)
    assert ckpt(repo, "restore", "t/2").out == "saved current state as u/2 (pre-restore)\nrestored t/2\n"
    assert ckpt(repo, "show", "@~1", "--json").json()["result"]["id"] == "t/1"
    assert ckpt(repo, "diff", "--json").json()["result"]["changes"] == []
    assert ckpt(repo, "save", "-m", "now mine").out == "checkpoint saved: u/3\n"
    assert ckpt(repo, "show", "@", "--json").json()["result"]["id"] == "u/3"


def test_status_after_committing_a_checkpoint_on_an_unborn_branch(tmp_path):
    """The first commit of a repository made from a checkpoint saved on the unborn branch is
    named as such, not as HEAD having moved."""
    from conftest import init_repo

    repo = init_repo(tmp_path / "r", commit=False)
    (repo / "a").write_text("a\n")
    git(repo, "add", "a")
    ckpt(repo, "save", "-m", "first")
    git(repo, "commit", "-q", "-m", "first")
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    out = ckpt(repo, "status").out.splitlines()
    assert out[3:5] == ["worktree:  matches default/1 (@)", f"HEAD:      {head[:12]} commits default/1 (the first commit)"]


@pytest.mark.parametrize("head", ["on-base", "elsewhere"])
def test_restore_onto_a_head_that_commits_the_checkpoint(repo, head):
    """Fifth walkthrough: Bob pulled the commit Alice made of her checkpoint, then restored the
    checkpoint; its index, staged against the old base, came back as staged changes reverting
    that commit (a plain commit would have undone it).  When HEAD commits exactly the
    checkpoint's files, the index is set to HEAD's tree: git status is clean, status says so,
    and --reset-head still restores the index exactly as saved on the base."""
    base = git(repo, "rev-parse", "HEAD").decode().strip()
    (repo / "README").write_text("changed, not staged\n")
    (repo / "helper.py").write_text("untracked\n")
    ckpt(repo, "save", "-m", "partly staged")
    saved_index = git(repo, "write-tree").decode().strip()
    if head == "elsewhere":  # the same files, committed on another parent (a rebase, a squash)
        git(repo, "commit", "-q", "--allow-empty", "-m", "unrelated")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the checkpoint's files")
    commit = git(repo, "rev-parse", "HEAD").decode().strip()
    (repo / "README").write_text("later work\n")
    ckpt(repo, "save", "-m", "later")
    note = (f"note: default/1 was saved on {base[:12]}; HEAD {commit[:12]} commits its files and stays: "
            "the index is set to HEAD's tree (nothing staged), not as it was staged on that base")
    assert ckpt(repo, "restore", "1", "--dry-run").out.splitlines()[0] == note
    res = ckpt(repo, "restore", "1")
    assert res.out.splitlines() == [note, "current state matches default/2; not saved again", "restored default/1"]
    assert git(repo, "status", "--porcelain") == b"" and (repo / "README").read_text() == "changed, not staged\n"
    status = ckpt(repo, "status").out.splitlines()
    assert "worktree:  matches default/1 (@)" in status
    assert (f"HEAD:      {commit[:12]} commits default/1 on its base {base[:12]}" if head == "on-base"
            else f"HEAD:      not where default/1 was saved (saved on {base[:12]}, HEAD is {commit[:12]})") in status
    # --reset-head: HEAD back on the base, the index exactly as staged there
    ckpt(repo, "restore", "1", "--reset-head")
    assert git(repo, "write-tree").decode().strip() == saved_index
    assert git(repo, "status", "--porcelain") == b" M README\n?? helper.py\n"


def test_undo_after_switching_task(repo):
    """Fifth walkthrough: after a restore, `task start other` made `undo` say "nothing to undo:
    no restore in task other".  undo returns to the state this worktree's last restore left,
    whichever task logged it; the state it leaves is saved in the current task."""
    _two(repo)
    ckpt(repo, "restore", "t/1")
    ckpt(repo, "task", "start", "other")
    assert ckpt(repo, "undo").out == "saved current state as other/1 (pre-restore)\nundo: restored t/2\n"
    assert (repo / "f").read_text() == "2\n"
    ckpt(repo, "task", "start", "t")  # and back: the newest jump is now other's undo
    assert ckpt(repo, "undo").out == "current state matches t/2; not saved again\nundo: restored other/1\n"
    assert (repo / "f").read_text() == "1\n"
    # a worktree whose last-jump record is no task name falls back on the current task's ledger
    gitdir = git(repo, "rev-parse", "--absolute-git-dir").decode().strip()
    for junk in (b"../../etc\n", b"\xff\n", b""):
        with open(f"{gitdir}/ckpt/last-jump", "wb") as fh:
            fh.write(junk)
        assert ckpt(repo, "undo", "--dry-run").out.splitlines()[0] == "would restore t/2:"


def test_a_task_without_checkpoints_shared_and_resumed(tmp_path):
    """Fifth walkthrough: a task with a card but no checkpoint.  Its owner pushing it and
    fetching it back is not a teammate's task (task start warned that a push would be refused,
    then the push worked); handoff's Resume names no restore or verify there is nothing for;
    restore of its @ says the ledger came without checkpoints instead of "fetch brings them"."""
    from test_remote import _team

    _bare, alice, bob = _team(tmp_path)
    ckpt(bob, "task", "start", "other", "--goal", "try it")
    ckpt(bob, "push")
    ckpt(bob, "fetch")
    assert git(bob, "for-each-ref", "--format=%(refname)", "refs/ckpt-remotes/").decode().split() == [
        "refs/ckpt-remotes/origin/other/log"]
    ckpt(bob, "task", "start", "default")
    res = ckpt(bob, "task", "start", "other")
    assert (res.out, res.err) == ("task other is now current: try it\n", "")
    assert ckpt(bob, "handoff").out.endswith("## Resume\n(none)\n")
    (bob / "b.py").write_text("b\n")
    ckpt(bob, "save", "-m", "bob's")
    ckpt(bob, "push")

    ckpt(alice, "fetch")
    ckpt(alice, "task", "start", "lonely", "--goal", "nothing saved")
    ckpt(alice, "push")
    ckpt(bob, "fetch")
    res = ckpt(bob, "handoff", "origin:lonely")
    resume = res.out.split("## Resume\n", 1)[1]
    assert "git ckpt task start lonely-2" in resume and "restore" not in resume and "verify" not in resume
    res = ckpt(bob, "restore", "origin:lonely/@", rc=4)
    assert res.err == ("error: task origin:lonely has no checkpoints\n"
                       "hint: its ledger was fetched without any: git ckpt task show origin:lonely shows its card "
                       "(git ckpt fetch origin brings checkpoints pushed since)\n")
    # Alice's task of Bob's name is a teammate's: warned, with no restore of an @ that is not there
    res = ckpt(bob, "task", "start", "lonely")
    assert res.err == ("warning: origin:lonely already exists (fetched); pushing a task of the same name would be refused "
                       "(checkpoints are never overwritten): to continue that work, start a task of your own (e.g. lonely-2) "
                       "(origin:lonely has no checkpoints; git ckpt task show origin:lonely shows its card)\n")
    # the name suggested is free, as handoff's Resume's is (eighth walkthrough: it named a taken one)
    ckpt(bob, "task", "start", "lonely-2")
    res = ckpt(bob, "task", "start", "lonely")
    assert "(e.g. lonely-3)" in res.err and "git ckpt task start lonely-3" in ckpt(bob, "handoff", "origin:lonely").out
    # Bob's own task with a checkpoint, pushed and fetched back, is still his
    res = ckpt(alice, "task", "start", "other")
    assert "warning: origin:other already exists" in res.err and "git ckpt restore origin:other/1" in res.err
    ckpt(bob, "task", "start", "default")
    assert ckpt(bob, "task", "start", "other").err == ""


@pytest.mark.parametrize("command", ["stats", "handoff"])
def test_task_views_take_task_as_an_option_too(repo, command):
    """Fifth walkthrough: `stats --task T` was "No such option" while list, log, check and
    report take --task.  Both spellings give the same document; two different tasks are a
    usage error; an unknown one is exit 4 either way."""
    _two(repo)
    ckpt(repo, "task", "start", "u")
    by_arg = ckpt(repo, command, "t", "--json").json()["result"]
    by_opt = ckpt(repo, command, "--task", "t", "--json").json()["result"]
    by_arg.pop("generated", None), by_opt.pop("generated", None)
    assert by_arg == by_opt and by_opt["task"] == "t"
    assert ckpt(repo, command, "t", "--task", "t", "--json").json()["result"]["task"] == "t"
    res = ckpt(repo, command, "t", "--task", "u", rc=2)
    assert res.err == "error: two tasks given: t and --task u\nhint: give the task once, as TASK or --task TASK\n"
    assert ckpt(repo, command, "--task", "nosuch", rc=4).err.startswith("error: no task nosuch\n")


def test_restore_by_path_says_which_paths(repo):
    """Fifth walkthrough: `restore T/N PATHS` printed `restored T/N` as if the whole checkpoint
    came back, and a dry run of a restore with nothing to change listed only `leave`.  A path
    restore names its paths; one with nothing to write saves, logs and changes nothing; the dry
    run says what the real run would."""
    _two(repo)
    (repo / "g").write_text("g\n")
    (repo / "f").write_text("edited\n")
    assert ckpt(repo, "restore", "t/1", "f", "--dry-run").out == "would restore f from t/1:\nwrite   f\n"
    assert ckpt(repo, "restore", "t/1", "f").out == "saved current state as t/3 (pre-restore)\nrestored f from t/1\n"
    events = len(ckpt(repo, "log").out.splitlines())
    refs = _checkpoint_refs(repo)
    assert ckpt(repo, "restore", "t/1", "f").out == "f already matches t/1; nothing to restore\n"
    assert ckpt(repo, "restore", "t/1", "f", "README").out == "f, README already match t/1; nothing to restore\n"
    assert ckpt(repo, "restore", "t/1", "f", "-n").out == (
        "would restore f from t/1: nothing to change (f already matches t/1)\nleave   1 file (already matches t/1)\n")
    assert len(ckpt(repo, "log").out.splitlines()) == events and _checkpoint_refs(repo) == refs
    ckpt(repo, "restore", "t/3")
    assert ckpt(repo, "restore", "t/3", "-n").out == (
        "would restore t/3: nothing to change (the worktree already matches t/3)\nleave   3 other file(s)\n")
    names = [f"d{i}" for i in range(7)]
    for n in names:
        (repo / n).write_text(n)
    ckpt(repo, "save", "-m", "seven")
    for n in names:
        (repo / n).write_text("x")
    assert ckpt(repo, "restore", "t/4", *names).out.splitlines()[-1] == "restored d0, d1, d2, d3, d4 and 2 more from t/4"


def test_default_message_says_what_changed_besides_files(repo):
    """Fifth walkthrough: a save whose files equal the latest checkpoint's but whose index
    stages something else got the message `no changes`.  The default message names what differs:
    the staged paths, or HEAD's move."""
    (repo / "f").write_text("f\n")
    ckpt(repo, "save", "-m", "f untracked")
    git(repo, "add", "f")
    ckpt(repo, "save")
    assert ckpt(repo, "show", "@", "--json").json()["result"]["manifest"]["message"] == "index: A f"
    git(repo, "commit", "-q", "-m", "f")
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    ckpt(repo, "save")
    # HEAD commits default/2 on its base (walkthrough 24: "HEAD moved" said less than that)
    assert ckpt(repo, "show", "@", "--json").json()["result"]["manifest"]["message"] == f"default/2 committed as {head[:12]}"


def test_a_no_op_restore_does_not_redirect_undo(repo):
    """Attack pass on the cross-task undo: a restore that changed nothing rewrote the record of
    the worktree's last jump, so undo went to an older state (or said nothing to undo)."""
    ckpt(repo, "task", "start", "A")
    for text in ("a1", "a2"):
        (repo / "f").write_text(text)
        ckpt(repo, "save")
    ckpt(repo, "restore", "A/1")
    ckpt(repo, "task", "start", "B")
    for text in ("b1", "b2"):
        (repo / "f").write_text(text)
        ckpt(repo, "save")
    ckpt(repo, "restore", "B/1")
    ckpt(repo, "task", "start", "A")
    assert ckpt(repo, "restore", "B/1").out == "the worktree already matches B/1; nothing to restore\n"
    ckpt(repo, "undo")
    assert (repo / "f").read_text() == "b2"  # the state before the last restore that changed it
    # and the other order: the no-op restore in the task switched to
    ckpt(repo, "restore", "A/1")
    ckpt(repo, "task", "start", "C")
    ckpt(repo, "restore", "A/1")
    ckpt(repo, "undo")
    assert (repo / "f").read_text() == "b2"


def test_status_does_not_match_a_checkpoint_whose_staged_changes_are_gone(repo):
    """Attack pass: with HEAD where it was saved, an index reset to HEAD is no match for a
    checkpoint that staged something, even when its files equal HEAD's."""
    ckpt(repo, "task", "start", "S")
    head_bytes = (repo / "README").read_bytes()
    (repo / "README").write_text("staged\n")
    git(repo, "add", "README")
    (repo / "README").write_bytes(head_bytes)  # the file back as HEAD has it, the change staged
    ckpt(repo, "save", "-m", "x")
    git(repo, "reset", "-q")
    assert "worktree:  changed since S/1 (@)" in ckpt(repo, "status").out.splitlines()


def test_handoff_never_vouches_for_a_replaced_fetched_checkpoint(tmp_path):
    """Attack pass: after a teammate replaced refs/ckpt/t1/1 on the remote, the handoff still
    said the worktree matched origin:t1/1 and told the next session to restore it (now other
    content).  An id a ledger event names is trusted only while its ref holds that commit."""
    from test_remote import _team

    _bare, alice, bob = _team(tmp_path)
    ckpt(alice, "task", "start", "t1")
    (alice / "a.txt").write_text("good\n")
    ckpt(alice, "save", "-m", "good")
    ckpt(alice, "push")
    ckpt(bob, "fetch")
    ckpt(bob, "task", "start", "bob1")
    ckpt(bob, "restore", "origin:t1/1")
    assert "Checkpoint: origin:t1/1" in ckpt(bob, "handoff").out
    (alice / "a.txt").write_text("EVIL\n")
    ckpt(alice, "save", "-m", "evil")
    git(alice, "push", "-q", "-f", "origin", "refs/ckpt/t1/2:refs/ckpt/t1/1")
    ckpt(bob, "fetch")
    out = ckpt(bob, "handoff").out
    assert "origin:t1/1" not in out and "Checkpoint: bob1/1 of 1" in out
    assert "origin:t1/1" not in ckpt(bob, "handoff", "--check", rc=None).out


def test_every_error_has_a_hint_and_the_command_it_was(repo):
    """Sixth walkthrough: some usage errors had no `hint:` line, a number out of range was exit
    4 (unknown name), and `--json sav` named command "".  Every error raised without a hint gets
    the one for its kind."""
    res = ckpt(repo, "task", "note", "--fact", "bogus", rc=2)
    assert res.err.splitlines()[1] == "hint: git ckpt task note -h shows the usage"
    res = ckpt(repo, "gc", "--task", "x", "--all", rc=2)
    assert res.err == "error: give --task or --all, not both\nhint: git ckpt gc -h shows the usage\n"
    ckpt(repo, "task", "note", "--assume", "a")
    assert ckpt(repo, "task", "note", "--confirm", "5", rc=2).err.splitlines() == [
        "error: --confirm 5: task default has 1 assumption(s)", "hint: git ckpt task show default numbers them"]
    env = ckpt(repo, "--json", "sav", rc=2).json()
    assert (env["command"], env["error"]["hint"]) == ("sav", "did you mean 'save'? git ckpt -h shows the usage")


def test_judged_assumptions_and_the_hypothesis_reach_the_next_session(repo):
    """Sixth walkthrough: a confirmed or refuted assumption vanished from the handoff, and
    `task show` left out the hypothesis the handoff printed."""
    (repo / "f").write_text("1\n")
    ckpt(repo, "save", "-m", "one", "--hypothesis", "it is the cache")
    ckpt(repo, "task", "note", "--assume", "callers pass ints")
    ckpt(repo, "task", "note", "--assume", "None means logged out")
    ckpt(repo, "task", "note", "--refute", "1", "--evidence", "default/1")
    out = ckpt(repo, "handoff").out
    assert "## Unverified assumptions\n- 2. None means logged out\n" in out
    assert "## Confirmed or refuted assumptions\n- 1. callers pass ints: refuted (evidence: default/1)\n" in out
    judged = ckpt(repo, "handoff", "--json").json()["result"]["judged"]
    assert [(a["n"], a["status"]) for a in judged] == [(1, "refuted")]
    assert "hypothesis: it is the cache" in ckpt(repo, "task", "show").out.splitlines()


def test_a_restore_that_changed_nothing_is_no_jump_and_no_rollback(repo):
    """Sixth walkthrough: `report` counted a restore that found its target in place as a jump,
    and `stats` as a restore."""
    _two(repo)
    ckpt(repo, "restore", "t/2")  # held already
    s = ckpt(repo, "stats", "--json").json()["result"]
    assert (s["restores"], s["undos"], s["rolled_back_to"]) == (0, 0, 0)
    report = ckpt(repo, "report", "--html", str(repo / "r.html"), "--json").json()["result"]
    assert (report["jumps"], report["checkpoints"]) == (0, 2)
    ckpt(repo, "restore", "t/1")
    assert ckpt(repo, "report", "--html", str(repo / "r.html"), "--json").json()["result"]["jumps"] == 1


def test_verify_reuses_the_result_of_the_fetched_checkpoint_saved_as_ones_own(tmp_path):
    """Seventh walkthrough: Bob followed the handoff's Resume (task start, restore origin:T/N,
    verify), then saved the state as his own checkpoint: verify ran the tests again.  A result
    his own verify recorded on identical content (same tree, overlay and verifier definition)
    is reused, and names where it came from; a teammate's result never is."""
    from test_fetched_tasks import _fix_auth

    _bare, _alice, bob = _fix_auth(tmp_path)
    ckpt(bob, "task", "start", "fix-auth-bob")
    ckpt(bob, "restore", "origin:fix-auth/3")
    assert ckpt(bob, "verify").out.startswith("verifier: tests ...... passed (exit 0")
    # the receipt checked right after its own Resume finds no drift (the worktree is on Bob's task)
    res = ckpt(bob, "handoff", "--check", "origin:fix-auth")
    assert res.out.splitlines()[-1] == "handoff of origin:fix-auth: no drift"
    assert "ok    worktree: matches origin:fix-auth/3" in res.out
    ckpt(bob, "save", "-m", "mine")
    res = ckpt(bob, "verify")
    assert res.out.splitlines()[0].startswith("verifier: tests ...... passed (reused from origin:fix-auth/3, exit 0")
    assert res.out.splitlines()[-1] == "promoted fix-auth-bob/2"  # /1: the pre-restore save
    # a checkpoint of other content gets no reuse
    (bob / "app.py").write_text("v3 and more\n")
    ckpt(bob, "save", "-m", "more")
    assert "reused" not in ckpt(bob, "verify", rc=None).out


def test_read_names_a_file_that_exists(repo):
    """Seventh walkthrough: `task note --read nonexist.py` was accepted, and surfaced later as
    drift in every `handoff --check`.  Like file: evidence, what was read must exist."""
    res = ckpt(repo, "task", "note", "--read", "nonexist.py", rc=4)
    assert res.err.splitlines()[0] == "error: --read 'nonexist.py': no file or directory nonexist.py in the worktree"
    assert ckpt(repo, "task", "show", "--json").json()["result"]["reads"] == []
    ckpt(repo, "task", "note", "--read", "README")
    assert ckpt(repo, "task", "show", "--json").json()["result"]["reads"] == ["README"]


def test_the_report_card_shows_evidence_and_the_hypothesis(repo):
    """Seventh walkthrough: the HTML report's task card dropped the evidence task show and the
    handoff print."""
    (repo / "f").write_text("1\n")
    ckpt(repo, "save", "-m", "one", "--hypothesis", "it is the cache")
    ckpt(repo, "task", "note", "--fact", "callers never pass a string", "--evidence", "default/1")
    page = ckpt(repo, "report", "--html", "-").out
    assert "<tr><th>fact</th><td>callers never pass a string (evidence: default/1)</td></tr>" in page
    assert "<tr><th>hypothesis</th><td>it is the cache</td></tr>" in page


def test_handoff_after_committing_the_checkpoint_is_clean(repo):
    """Eighth walkthrough: after the README's gated-commit flow (save, verify, git add -A,
    commit), handoff said `Workspace: changed` and --check found drift (exit 1) while status
    said the worktree matched.  HEAD moved only by committing the checkpoint's files: clean."""
    (repo / "README").write_text("changed\n")
    (repo / "new.py").write_text("n\n")
    ckpt(repo, "save", "-m", "work")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the checkpoint's files")
    out = ckpt(repo, "handoff").out
    assert "Workspace: matches default/1; HEAD commits it on its base" in out.splitlines()
    res = ckpt(repo, "handoff", "--check")
    assert res.out.splitlines()[-1] == "handoff of default: no drift"
    # a change after the commit is drift again
    (repo / "new.py").write_text("m\n")
    assert ("Workspace: changed since default/1 (files differ; HEAD commits default/1 on its base)"
            in ckpt(repo, "handoff").out.splitlines())
    assert ckpt(repo, "handoff", "--check", rc=1).out.splitlines()[-1] == "handoff of default: 1 drift(s) found"


def test_status_says_the_gate_refuses_while_the_config_is_untrusted(repo):
    """Eighth walkthrough: with .ckpt.toml changed since it was trusted, status said `gate: on (a
    promoted checkpoint exists)` while every commit was refused (exit 9)."""
    from test_verify import verifier, write_config

    write_config(repo, verifier("ok", ["true"]))
    ckpt(repo, "trust")
    ckpt(repo, "hooks", "install")
    ckpt(repo, "save")
    ckpt(repo, "verify")
    assert "gate:      on (a promoted checkpoint exists)" in ckpt(repo, "status").out.splitlines()
    with open(repo / ".ckpt.toml", "a") as fh:
        fh.write("\n# edited\n")
    assert ("gate:      on (commits will be refused: .ckpt.toml is changed since you trusted it (git ckpt trust))"
            in ckpt(repo, "status").out.splitlines())


def test_a_toml_error_names_the_table_as_the_file_does(repo):
    """Eighth walkthrough: a table declared twice leaked Python's tuple ('overlay',)."""
    (repo / ".ckpt.toml").write_text("[overlay]\ninclude = []\n[overlay]\n")
    res = ckpt(repo, "save", rc=6)
    assert res.err.splitlines()[0] == "error: .ckpt.toml: Cannot declare [overlay] twice (at line 3, column 9)"


def test_a_commit_that_leaves_out_a_file_of_the_checkpoint_does_not_commit_it(repo):
    """Ninth walkthrough: status said `HEAD C commits T/N on its base` for a commit that left out
    a file the checkpoint holds (untracked), which verify-commit and pre-push called unverified;
    the handoff then called the worktree clean."""
    (repo / "README").write_text("changed\n")
    (repo / "local.json").write_text("{}\n")  # untracked: the checkpoint holds it
    ckpt(repo, "save", "-m", "work")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-m", "README only")
    st = ckpt(repo, "status", "--json").json()["result"]["worktree"]
    assert (st["files_match"], st["head_moved"], st["head_commits"]) == (True, True, False)
    assert not any(ln.startswith("HEAD:") and "commits" in ln for ln in ckpt(repo, "status").out.splitlines())
    # as status says it: the files match, HEAD moved (and does not commit them)
    assert ("Workspace: matches default/1; HEAD moved since (git ckpt restore default/1 --reset-head brings it back)"
            in ckpt(repo, "handoff").out.splitlines())
    git(repo, "add", "local.json")
    git(repo, "commit", "-q", "--amend", "-m", "all of it")
    assert ckpt(repo, "status", "--json").json()["result"]["worktree"]["head_commits"] is True


def test_gc_keeps_a_checkpoint_the_task_card_cites(repo):
    """Ninth walkthrough: gc pruned a checkpoint the card cited as evidence of a failed path;
    the handoff went on citing it.  A checkpoint cited on the card is never pruned."""
    ckpt(repo, "task", "start", "t")
    for i in range(4):
        (repo / "f").write_text(f"{i}\n")
        ckpt(repo, "save", "-m", f"s{i}")
    ckpt(repo, "task", "note", "--failed", "a decorator", "--reason", "hides it", "--evidence", "t/1")
    res = ckpt(repo, "gc", "--keep", "1", "--json").json()["result"]
    assert {"id": "t/1", "reason": "evidence on the task card"} in res["protected"]
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/ckpt/t/").decode().split() == [
        "refs/ckpt/t/1", "refs/ckpt/t/4", "refs/ckpt/t/log"]
