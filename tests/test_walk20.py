"""What the twentieth new-user walkthrough of the README met, each as its kind: a hint naming
another command than the one typed (a path given where a checkpoint belongs), a refused restore
whose advice did not work, a merge in progress described as in no checkpoint (and planned as
ending a merge no restore brought back), a secret file repeated once per detector, and a hint
naming a command that lists less than it said.

Real repositories and the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import pytest

from conftest import ckpt, git, ignored_overlay, saved_clean_then_merging, worktree_state


# -- 1: a path where a checkpoint belongs: the hint fits the command typed ----------------------

def _one_saved_then_changed(repo):
    (repo / "a.py").write_text("a\n")
    ckpt(repo, "save", "-m", "one")
    (repo / "a.py").write_text("a\nb\n")


@pytest.mark.parametrize("args", [["diff", "default/1", "a.py"], ["diff", "a.py"], ["diff", "a.py", "default/1"]])
def test_a_path_given_to_diff_is_told_paths_go_after_dashdash(repo, args):
    _one_saved_then_changed(repo)
    res = ckpt(repo, *args, rc=4)
    assert res.err == ("error: unknown checkpoint 'a.py': it is a path\n"
                       "hint: paths go after --: git ckpt diff [CKPT] -- PATHS\n"), res.err
    # what the hint says works, with and without the checkpoint
    for cmd in (["diff", "default/1", "--", "a.py"], ["diff", "--", "a.py"]):
        out = ckpt(repo, *cmd).out
        assert out.startswith("diff --git a/a.py b/a.py\n") and out.endswith(" a\n+b\n"), out


@pytest.mark.parametrize("command", ["show", "verify", "drop", "promote", "check"])
def test_a_path_given_to_a_command_without_paths_is_told_it_takes_a_checkpoint(repo, command):
    _one_saved_then_changed(repo)
    res = ckpt(repo, command, "a.py", rc=4)
    assert res.err == ("error: unknown checkpoint 'a.py': it is a path\n"
                       f"hint: git ckpt {command} takes a checkpoint name (T/N, N, @, promoted), not a path: "
                       "git ckpt list shows the checkpoints\n"), res.err
    assert "default/1" in ckpt(repo, "list").out


def test_a_path_given_to_restore_is_still_told_the_checkpoint_comes_first(repo):
    _one_saved_then_changed(repo)
    res = ckpt(repo, "restore", "a.py", "default/1", rc=4)
    assert res.err == ("error: unknown checkpoint 'a.py': it is a path\n"
                       "hint: the checkpoint comes first: git ckpt restore CKPT -- PATHS\n"), res.err
    ckpt(repo, "restore", "default/1", "--", "a.py")
    assert (repo / "a.py").read_text() == "a\n"


# -- 2: a restore refused over an ignored file: what the pre-restore save holds may go ----------

def _build_output_ignored_since(repo, name="out.txt"):
    """default/1 (a.py), default/2 (build/NAME v1, untracked), default/3 (build/ ignored, NAME v2
    with mode 0600, so no checkpoint holds v2)."""
    (repo / "a.py").write_text("a\n")
    git(repo, "add", "a.py")
    git(repo, "commit", "-qm", "a")
    ckpt(repo, "save", "-m", "s1")
    (repo / "build").mkdir()
    (repo / "build" / name).write_text("v1\n")
    ckpt(repo, "save", "-m", "s2")
    (repo / ".gitignore").write_text("build/\n")
    (repo / "build" / name).write_text("v2\n")
    (repo / "build" / name).chmod(0o600)
    ckpt(repo, "save", "-m", "s3")
    return repo / "build" / name


def test_an_ignored_file_the_overlay_holds_is_replaced_by_a_restore_and_undo_brings_it_back(repo):
    out = _build_output_ignored_since(repo)
    before = worktree_state(repo)
    res = ckpt(repo, "restore", "@~1", rc=1)
    assert res.err == ("error: restoring default/2 would overwrite 1 ignored, skipped or unsaved path(s) whose current "
                       "content the pre-restore save would not hold: build/out.txt\n"
                       "hint: move them aside, or add them to overlay.include so the pre-restore save keeps them, "
                       "then restore again\n"), res.err
    assert worktree_state(repo) == before
    # what the hint says: with build/ in the overlay the pre-restore save keeps the file
    git(repo, "config", "ckpt.overlay.include", "build/")
    assert ckpt(repo, "restore", "default/2", "--dry-run").out == (
        "would restore default/2:\nwrite   build/out.txt\ndelete  .gitignore\nleave   2 other file(s)\n")
    res = ckpt(repo, "restore", "default/2")
    assert res.out == "saved current state as default/4 (pre-restore)\nrestored default/2\n", res
    assert out.read_text() == "v1\n"
    assert "  build/out.txt (file, 3 bytes)\n" in ckpt(repo, "show", "default/4").out
    # the plan of the way back writes the overlay file (it is not kept as it is: it is replaced)
    assert ckpt(repo, "undo", "--dry-run").out == (
        "would restore default/4:\nwrite   .gitignore\nwrite   build/out.txt (overlay)\nleave   2 other file(s)\n")
    ckpt(repo, "undo")
    assert worktree_state(repo) == before  # byte for byte, mode 0600 included
    assert out.stat().st_mode & 0o777 == 0o600


def test_moving_a_refused_file_aside_lets_the_restore_go_on(repo, tmp_path):
    out = _build_output_ignored_since(repo)
    ckpt(repo, "restore", "@~1", rc=1)
    out.rename(tmp_path / "out.txt.mine")
    ckpt(repo, "restore", "default/2")
    assert out.read_text() == "v1\n" and (tmp_path / "out.txt.mine").read_text() == "v2\n"


def test_a_likely_secret_the_overlay_leaves_out_is_named_with_what_keeps_it(repo):
    key = _build_output_ignored_since(repo, "server.key")
    git(repo, "config", "ckpt.overlay.include", "build/")
    before = worktree_state(repo)
    res = ckpt(repo, "restore", "default/2", rc=1)
    assert res.err.endswith(
        "error: restoring default/2 would overwrite 1 ignored, skipped or unsaved path(s) whose current "
        "content the pre-restore save would not hold: build/server.key\n"
        "hint: move them aside, then restore again (build/server.key looks like a secret, which the overlay "
        "leaves out unless overlay.allow_secrets is true)\n"), res.err
    assert worktree_state(repo) == before
    git(repo, "config", "ckpt.overlay.allowSecrets", "true")
    ckpt(repo, "restore", "default/2")
    assert key.read_text() == "v1\n"
    ckpt(repo, "undo")
    assert worktree_state(repo) == before


def test_a_file_a_restore_would_replace_is_judged_by_its_overlay_mode_too(repo, core):
    """The fingerprints compare an overlay file with what the capture archived: bytes and
    permission bits (a chmod between the capture and the write is a change, as an edit is)."""
    from git_ckpt import config
    from git_ckpt.restore import _content_matches
    from git_ckpt.snapshot import capture

    out = _build_output_ignored_since(repo)
    git(repo, "config", "ckpt.overlay.include", "build/")
    now = capture(core, config.load(core))
    assert _content_matches(core, now, b"build/out.txt")
    out.chmod(0o644)
    assert not _content_matches(core, now, b"build/out.txt")


# -- 3: a merge the user began: what a checkpoint keeps of it, and no plan line ending it -------

MERGE_REFUSED = ("a merge is in progress; restore would leave it half-done (a checkpoint keeps MERGE_HEAD and MERGE_MSG, "
                 "not the rest of git's merge state: MERGE_MODE, AUTO_MERGE, an autostash, rerere's records)")


def _saved_then_merging(repo):
    saved_clean_then_merging(repo, message="merge side")


def test_a_restore_during_a_merge_says_what_a_checkpoint_keeps_of_it(repo):
    _saved_then_merging(repo)
    res = ckpt(repo, "restore", "default/1", rc=5)
    assert res.err == f"error: {MERGE_REFUSED}\nhint: finish it or abort it first (git merge --abort), then restore\n", res.err
    # what it names: git wrote them, and a save mid-merge keeps MERGE_HEAD and MERGE_MSG only
    for name in ("MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE"):
        assert (repo / ".git" / name).exists(), name
    ckpt(repo, "save", "-m", "mid-merge")
    meta = git(repo, "rev-list", "--parents", "-n1", "refs/ckpt/default/2").decode().split()[-1]
    assert "MERGE_MSG" in git(repo, "ls-tree", "--name-only", meta).decode().split()
    assert "merge_heads" in git(repo, "cat-file", "-p", f"{meta}:manifest.json").decode()
    # the hint: abort, then restore works
    git(repo, "merge", "--abort")
    ckpt(repo, "restore", "default/1")


def test_a_dry_run_during_a_merge_the_user_began_plans_no_end_to_it(repo):
    _saved_then_merging(repo)
    res = ckpt(repo, "restore", "default/1", "--dry-run")
    assert "merge" not in res.out, res.out
    assert res.out.endswith("would restore default/1:\nwrite   f\nindex   set to the checkpoint's staged state\n"
                            "leave   1 other file(s)\n"), res.out
    assert res.err == f"warning: {MERGE_REFUSED}: finish it or abort it first (git merge --abort), then restore\n", res.err
    assert (repo / ".git/MERGE_HEAD").exists()


def test_a_dry_run_during_a_merge_a_restore_brought_back_still_plans_its_end(repo):
    _saved_then_merging(repo)
    ckpt(repo, "save", "-m", "mid-merge")
    git(repo, "merge", "--abort")
    ckpt(repo, "restore", "default/2")  # the merge comes back: a restore's, which a checkpoint holds
    assert (repo / ".git/MERGE_HEAD").exists()
    res = ckpt(repo, "restore", "default/1", "--dry-run")
    assert "merge   MERGE_HEAD removed (the merge an earlier restore brought back ends)\n" in res.out, res.out
    assert res.err == "", res.err
    ckpt(repo, "restore", "default/1")
    assert not (repo / ".git/MERGE_HEAD").exists()


# -- 4: a file several detectors flag is one line naming them all; the error counts files ------

CREDS = ("[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLQ\n"
         "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\npassword = \"hunter2hunter2\"\n")


def test_a_file_three_detectors_flag_is_one_line_and_one_file(tmp_path):
    from test_walk19 import alice_saved_secrets

    alice = alice_saved_secrets(tmp_path, {"fixtures/creds.ini": CREDS, "settings.ini": CREDS}, 2)  # overlay, worktree
    res = ckpt(alice, "push", rc=10)
    kinds = "AWS Access Key (lines 2, 3), Base64 High Entropy String (line 3), Secret Keyword (lines 3, 4)"
    assert res.err == (f"secret?  fixtures/creds.ini: {kinds} [overlay of default/1, default/2]\n"
                       f"secret?  settings.ini: {kinds} [worktree of default/1, default/2]\n"
                       "error: refusing to push to origin: possible secrets in 2 files, held by 2 checkpoints, that origin "
                       "does not have yet: fixtures/creds.ini, settings.ini; nothing was sent\n"
                       "hint: if these are not secrets, push again with --allow-secrets; otherwise remove them from the "
                       "worktree (or exclude them from the overlay) first, so that no save captures them again, then git "
                       "ckpt drop default/1 default/2 and git gc --prune=now\n"), res.err
    # --json carries every finding, one per detector and line (what tools read)
    env = ckpt(alice, "push", "--json", rc=10)
    assert env.err == "" and env.json()["error"]["message"] == res.err.splitlines()[2][len("error: "):]
    found = env.json()["error"]["details"]["findings"]
    assert len(found) == 10 and found[0] == {"path": "fixtures/creds.ini", "kind": "AWS Access Key", "line": 2,
                                             "where": "overlay of default/1, default/2"}, found
    res = ckpt(alice, "push", "--allow-secrets")
    assert res.err == (f"warning: pushed despite a possible secret: fixtures/creds.ini: {kinds} [overlay of default/1, default/2]\n"
                       f"warning: pushed despite a possible secret: settings.ini: {kinds} [worktree of default/1, default/2]\n"), res.err


# -- 5: a path in neither: the hint names a command that lists every file the checkpoint holds ----

def test_a_path_in_neither_is_told_how_to_list_every_file_the_checkpoint_holds(repo):
    (repo / "app").mkdir()
    (repo / "app/main.py").write_text("main\n")
    git(repo, "add", "app")  # committed with the .gitignore
    ignored_overlay(repo, "fixtures", {"db.json": "{}\n"})
    ckpt(repo, "task", "start", "fix-auth")
    (repo / "app/auth.py").write_text("auth\n")
    ckpt(repo, "save", "-m", "one")
    res = ckpt(repo, "restore", "fix-auth/1", "app/nope.py", rc=4)
    assert res.err == ("error: path 'app/nope.py' matches nothing in fix-auth/1 or in the worktree\n"
                       "hint: paths are literal and relative to the current directory; git ls-tree -r --name-only "
                       "refs/ckpt/fix-auth/1 lists the files fix-auth/1 holds, git ckpt show fix-auth/1 its overlay files\n"), res.err
    # the command named lists every file, not only those changed against the base (as show does)
    assert git(repo, "ls-tree", "-r", "--name-only", "refs/ckpt/fix-auth/1").decode() == (
        ".gitignore\nREADME\napp/auth.py\napp/main.py\n")
    shown = ckpt(repo, "show", "fix-auth/1").out
    assert "changed vs base (1):\n  A app/auth.py\n" in shown and "  fixtures/db.json (file, 3 bytes)\n" in shown, shown
    # relative to the current directory, as the path was
    res = ckpt(repo / "app", "restore", "fix-auth/1", "nope.py", rc=4)
    assert res.err.startswith("error: path 'app/nope.py' matches nothing in fix-auth/1 or in the worktree\n"), res.err
    assert git(repo / "app", "ls-tree", "-r", "--name-only", "refs/ckpt/fix-auth/1").decode() == "auth.py\nmain.py\n"
