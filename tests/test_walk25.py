"""What the twenty-fifth new-user walkthrough of the README met (two people, a bare remote, agents).

1. ``restore T/1 -- f`` when only ``f`` differed left the worktree exactly ``T/1``, but ``@``
   stayed the pre-restore save (the broken state): ``status`` said "changed since T/2 (@)" and
   ``verify``'s hint, followed, promoted the state just thrown away.  A restore of paths after
   which the worktree is the target whole records so, and ``@`` names the target.
2. A reviewer with no task of their own (``verify origin:T/N --isolated``) pushed a ``default``
   ledger, and a second reviewer's push was refused whole.  ``push`` leaves home the ledger of a
   task that has no checkpoint and records only verifies, fetches and handoffs.
3. ``agent status`` and ``uninstall`` after the settings file was reverted said the hooks were
   there ("edited since install") and uninstall rewrote the committed file.
4. ``fetch --json`` named fetched checkpoints ``T/N`` (your own ids), not ``REMOTE:T/N``.
5. Uninstalling from an edited ``settings.local.json`` kept the file but dropped its
   ``info/exclude`` line: checkpoints then held it, push sent it, a restore deleted it.
6. ``list`` cut a multi-line message at its first line without a mark.
7. ``@^`` (git's first parent, ``@~1`` on a line) was read as git's ``HEAD^``.
8. Small words: ``show T/0``; ``show origin:T`` (a task, hinted with a made-up id);
   ``fetch origin/main`` (a branch of remote ``origin``).

Real repositories, a bare remote and the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import json

import pytest

from conftest import ckpt, commit_config, git, pushed_task, reviewer_clones, with_remote


def test_a_path_restore_that_leaves_the_target_whole_makes_it_at(repo):
    ckpt(repo, "task", "start", "t")
    (repo / "f").write_text("good\n")
    ckpt(repo, "save", "-m", "good")
    (repo / "f").write_text("broken\n")
    ckpt(repo, "restore", "t/1", "--", "f")
    assert "worktree:  matches t/1 (@)\n" in ckpt(repo, "status").out
    assert ckpt(repo, "show", "--json").json()["result"]["id"] == "t/1"
    res = ckpt(repo, "verify")
    assert res.out.splitlines()[-1] == "promoted t/1"
    assert git(repo, "rev-parse", "refs/ckpt/t/promoted") == git(repo, "rev-parse", "refs/ckpt/t/1")
    # a path restore that leaves other differences is no whole restore: @ stays the latest
    (repo / "f").write_text("broken again\n")
    (repo / "g").write_text("other\n")
    ckpt(repo, "restore", "t/1", "--", "f")  # saves t/3 first
    assert "worktree:  changed since t/3 (@)\n" in ckpt(repo, "status").out


def _reviewed(tmp_path, reviewers=("rev1", "rev2")):
    remote, a = with_remote(tmp_path, "a")
    commit_config(a, '[[verifier]]\nname = "tests"\ncommand = "true"\n')
    ckpt(a, "task", "start", "work")
    (a / "g").write_text("y\n")
    ckpt(a, "save", "-m", "s")
    ckpt(a, "push")
    return remote, a, reviewer_clones(tmp_path, remote, "origin:work/1", reviewers)


def test_reviewers_push_only_their_results(tmp_path):
    remote, _a, (one, two) = _reviewed(tmp_path)
    for r in (one, two):
        res = ckpt(r, "push")
        assert "refs/ckpt/default/log" not in res.out and "refs/notes/ckpt" in res.out, res.out
    assert git(remote, "for-each-ref", "--format=%(refname)", "refs/ckpt/").decode().split() == [
        "refs/ckpt/work/1", "refs/ckpt/work/log"]
    notes = git(remote, "notes", "--ref=ckpt", "show", "refs/ckpt/work/1").decode().splitlines()
    assert len(notes) == 2  # both reviewers' results, merged
    # the result still counts as evidence for the reviewer who recorded it
    assert ckpt(one, "show", "origin:work/1", "--json").json()["result"]["results"][0]["local"] is True
    # a reviewer's task that has a card of its own is pushed as before
    ckpt(one, "task", "note", "default", "--next", "write it up")
    assert "new        refs/ckpt/default/log" in ckpt(one, "push").out


def test_agent_status_and_uninstall_of_a_reverted_settings_file(repo):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text('{"model": "opus"}\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "settings")
    ckpt(repo, "agent", "install", "claude-code")
    git(repo, "checkout", "-q", ".claude/settings.json")
    assert ckpt(repo, "agent", "status").out == (
        "claude-code: .claude/settings.json (PreCompact, SessionStart, Stop) [hooks no longer in it: reverted or removed "
        "since install; git ckpt agent install claude-code adds them again]\n")
    assert ckpt(repo, "agent", "status", "--json").json()["result"][0]["state"] == "absent"
    res = ckpt(repo, "agent", "uninstall", "claude-code")
    assert res.out == ("nothing to remove from .claude/settings.json: the git ckpt hooks are no longer in it (reverted, or "
                       "removed by hand); left it as it is and forgot the install record\n")
    assert (repo / ".claude" / "settings.json").read_bytes() == b'{"model": "opus"}\n'
    assert git(repo, "status", "--porcelain") == b""
    assert ckpt(repo, "agent", "status").out == "no agent hooks installed\n"


def test_fetch_json_names_fetched_checkpoints_by_their_remote(tmp_path):
    _remote, _a, b = pushed_task(tmp_path, "fix", {"g": "a\n"}, message="alice's", who="a", clone="b")
    ckpt(b, "task", "start", "fix")
    (b / "h").write_text("b\n")
    ckpt(b, "save", "-m", "bob's own")
    res = ckpt(b, "fetch", "--json").json()["result"]
    assert res["checkpoints"] == ["origin:fix/1"]
    assert ckpt(b, "show", res["checkpoints"][0], "--json").json()["result"]["manifest"]["message"] == "alice's"


def test_an_edited_local_settings_file_stays_excluded_after_uninstall(repo):
    ckpt(repo, "save", "-m", "before")
    ckpt(repo, "agent", "install", "claude-code", "--local")
    path = repo / ".claude" / "settings.local.json"
    path.write_text(json.dumps(dict(json.loads(path.read_text()), model="opus")))
    assert ckpt(repo, "agent", "uninstall", "claude-code").out.startswith("removed the git ckpt hooks from .claude/settings.local.json")
    assert json.loads(path.read_text()) == {"model": "opus"}
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == b""
    assert ckpt(repo, "restore", "default/1", "--dry-run").out.startswith("would restore default/1: nothing to change")
    # once the file is gone, the next install or uninstall drops its line
    path.unlink()
    ckpt(repo, "agent", "install", "claude-code")
    ckpt(repo, "agent", "uninstall", "claude-code")
    assert "settings.local.json" not in (repo / ".git" / "info" / "exclude").read_text()


def test_list_marks_a_message_of_more_lines(repo):
    (repo / "f").write_text("f\n")
    ckpt(repo, "save", "-m", "first\nsecond")
    assert ckpt(repo, "list").out.rstrip("\n").endswith("manual      first …")
    assert ckpt(repo, "list", "--json").json()["result"][0]["message"] == "first\nsecond"


@pytest.mark.parametrize("name,steps", [("@^", 1), ("@^^", 2), ("@^1", 1), ("@~^", 2), ("@^~2", 3)])
def test_caret_counts_back_as_in_git(repo, name, steps):
    for i in range(4):
        (repo / "f").write_text(f"{i}\n")
        ckpt(repo, "save", "-m", f"s{i}")
    assert ckpt(repo, "show", name, "--json").json()["result"]["id"] == f"default/{4 - steps}"


def test_small_words(tmp_path):
    remote, a = with_remote(tmp_path, "a")
    ckpt(a, "task", "start", "fix-div")
    (a / "g").write_text("a\n")
    ckpt(a, "save", "-m", "s")
    ckpt(a, "push")
    ckpt(a, "fetch")
    assert ckpt(a, "show", "fix-div/0", rc=4).err.startswith(
        "error: no checkpoint fix-div/0: a checkpoint number is a positive whole number in ASCII digits")
    assert ckpt(a, "show", "origin:fix-div", rc=4).err == (
        "error: origin:fix-div is a task, not one of its checkpoints\n"
        "hint: origin:fix-div/@ names its latest; git ckpt list --remote origin --task fix-div shows them\n")
    assert ckpt(a, "show", "origin:nosuch", rc=4).err == "error: no checkpoint origin:nosuch\nhint: use REMOTE:T/N, e.g. origin:fix-div/1\n"
    assert ckpt(a, "fetch", "origin/main", rc=2).err == (
        "error: 'origin/main' is not a configured remote\nhint: did you mean origin? (origin/main names a branch of it; "
        "checkpoints are pushed and fetched for a whole remote)\n")


AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLF"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYX"


def test_a_file_in_two_versions_is_one_finding(tmp_path):
    """9. Two versions of one secret file in two checkpoints were two ``secret?`` lines (one
    flagged by a detector the other was not) while the error counted one file."""
    bare, w = with_remote(tmp_path, "w")
    key = f"aws_secret_access_key = {AWS_SECRET}"
    (w / "aws.ini").write_text(f"[default]\naws_access_key_id = {AWS_KEY_ID}\n{key}\nx\n")
    ckpt(w, "save", "-m", "one")
    (w / "aws.ini").write_text(f"[default]\naws_access_key_id = {AWS_KEY_ID}\n{key}\n")
    ckpt(w, "save", "-m", "two")
    res = ckpt(w, "push", rc=10)
    lines = [ln for ln in res.err.splitlines() if ln.startswith("secret?  ")]
    assert lines == ["secret?  aws.ini: AWS Access Key (line 2), Base64 High Entropy String (line 3), Secret Keyword (line 3) "
                     "[worktree of default/1, default/2]"], lines
    assert AWS_SECRET not in res.err + res.out
    assert git(bare, "for-each-ref", "refs/ckpt").decode() == ""
