"""What the fourteenth new-user walkthrough of the README met, each as its kind: a path restore
that claimed to stage HEAD's difference, a read-only listing refused as a write, names typed
wrong without a suggestion, and agent settings meant to stay local that checkpoints saved and
restores deleted.

Real repositories, real clones of a real bare repository, the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import pytest

from conftest import ckpt, git
from test_remote import _shared_task, _team


def _saved_then_head_moved(repo):
    (repo / "f.txt").write_text("1\n")
    (repo / "same.txt").write_text("s\n")
    git(repo, "add", "f.txt", "same.txt")
    git(repo, "commit", "-qm", "A")
    (repo / "f.txt").write_text("2\n")
    ckpt(repo, "save", "-m", "one")
    git(repo, "checkout", "-q", "f.txt")
    (repo / "g.txt").write_text("g\n")
    git(repo, "add", "g.txt")
    git(repo, "commit", "-qm", "B")


@pytest.mark.parametrize("flags", [[], ["--dry-run"], ["--json"], ["--dry-run", "--json"]])
def test_a_path_restore_onto_a_moved_head_says_nothing_of_staging(repo, flags):
    """A path restore writes the named paths as saved and leaves the rest of the index on HEAD:
    the whole-restore note ("the restored index stages the difference") is not true of it."""
    _saved_then_head_moved(repo)
    res = ckpt(repo, "restore", *flags, "default/1", "--", "f.txt")
    if "--json" in flags:
        assert res.json()["result"]["plan"]["base_differs"] is None
    else:
        assert "stages the difference" not in res.out and "note:" not in res.out, res.out
    if "--dry-run" not in flags:
        assert (repo / "f.txt").read_text() == "2\n"
        assert git(repo, "status", "--porcelain") == b" M f.txt\n"
    # nothing to restore: still no note
    res = ckpt(repo, "restore", "default/1", "--", "same.txt")
    assert res.out == "same.txt already matches default/1; nothing to restore\n"
    # the whole restore says it, as before
    assert "the restored index stages the difference" in ckpt(repo, "restore", "default/1", "--dry-run").out


@pytest.mark.parametrize("args", [
    ["--remote", "origin", "--task", "origin:t"],
    ["--task", "origin:t"],
    ["--remote", "origin", "--task", "t"],
])
def test_a_fetched_task_is_listed_however_it_is_named(tmp_path, args):
    _bare, _alice, bob = _shared_task(tmp_path)
    rows = ckpt(bob, "list", *args, "--json").json()["result"]
    assert [r["id"] for r in rows] == ["origin:t/1"]
    res = ckpt(bob, "list", "--remote", "upstream", "--task", "origin:t", rc=2)
    assert res.err == "error: --remote upstream and --task origin:t name two remotes\nhint: git ckpt list --task origin:t\n"


@pytest.mark.parametrize("args,rc,hint", [
    (["verify", "--only", "tset"], 4, "hint: did you mean 'tests'? git ckpt trust --show lists the verifiers\n"),
    (["verify", "--only", "lnt"], 4, "hint: did you mean 'lint'? git ckpt trust --show lists the verifiers\n"),
    (["verify", "--only", "zzzz"], 4, "hint: git ckpt trust --show lists the verifiers\n"),
    (["agent", "install", "claude", "--print"], 2, "hint: did you mean 'claude-code'? git ckpt agent install -h shows the usage\n"),
    (["agent", "install", "gemni", "--print"], 2, "hint: did you mean 'gemini' or 'generic'? git ckpt agent install -h shows the usage\n"),
    (["push", "--task", "dfault"], 4, "hint: did you mean default? git ckpt task list shows every task\n"),
])
def test_a_mistyped_name_gets_a_suggestion(repo, args, rc, hint):
    git(repo, "config", "ckpt.verifier.tests.command", "true")
    git(repo, "config", "ckpt.verifier.lint.command", "true")
    (repo / "f.txt").write_text("1\n")
    ckpt(repo, "save", "-m", "one")
    res = ckpt(repo, *args, rc=rc)
    assert res.err.endswith(hint) and res.err.count("\n") == 2, res.err


def test_agent_local_settings_are_kept_out_of_checkpoints_and_restores(repo):
    """`agent install claude-code --local`: the local settings file is ignored through git
    ckpt's block of info/exclude, so no checkpoint holds it, no restore deletes it and no gate
    asks for it; uninstall puts info/exclude back byte for byte."""
    exclude = repo / ".git/info/exclude"
    original = exclude.read_bytes()
    (repo / "f.txt").write_text("1\n")
    ckpt(repo, "save", "-m", "before")
    ckpt(repo, "agent", "install", "claude-code", "--local")
    settings = repo / ".claude/settings.local.json"
    written = settings.read_bytes()
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == b"?? f.txt\n"
    assert exclude.read_bytes() == original + (
        b"# >>> git-ckpt agent settings kept local (git ckpt agent uninstall removes this block)\n"
        b"/.claude/settings.local.json\n# <<< git-ckpt agent settings\n")
    (repo / "f.txt").write_text("2\n")
    ckpt(repo, "save", "-m", "after")
    assert b".claude" not in git(repo, "ls-tree", "-r", "--name-only", "refs/ckpt/default/2")
    assert b".claude" not in git(repo, "ls-tree", "-r", "--name-only", "refs/ckpt/default/2^3")
    assert ".claude" not in ckpt(repo, "restore", "default/1", "--dry-run").out
    ckpt(repo, "restore", "default/1")
    assert settings.read_bytes() == written
    rows = ckpt(repo, "agent", "status", "--json").json()["result"]
    assert [(r["path"], r["state"], r["local"]) for r in rows] == [(".claude/settings.local.json", "intact", True)]
    settings.unlink()
    assert ckpt(repo, "agent", "status").out == (
        "claude-code: .claude/settings.local.json (PreCompact, SessionStart, Stop) [gone: deleted since install; "
        "git ckpt agent install claude-code --local writes it again]\n")
    ckpt(repo, "agent", "install", "claude-code", "--local")
    ckpt(repo, "agent", "uninstall", "claude-code")
    assert exclude.read_bytes() == original
    assert not (repo / ".claude").exists()


@pytest.mark.parametrize("kind", ["symlink-to-dev-zero", "fifo", "directory", "too-large"])
def test_an_agent_settings_file_that_is_no_regular_file_is_refused_not_read(repo, kind):
    """A clone can commit .claude/settings.json as a symlink to /dev/zero (or leave a FIFO
    there): agent install, status and a cursor install (which looks for Claude Code's hooks)
    must neither hang nor read without bound; install refuses with one line, writing nothing."""
    import os

    settings = repo / ".claude/settings.json"
    settings.parent.mkdir()
    if kind == "symlink-to-dev-zero":
        settings.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(settings)
    elif kind == "directory":
        settings.mkdir()
    else:
        settings.write_bytes(b" " * ((8 << 20) + 1))
    before = sorted(p.name for p in repo.iterdir())
    res = ckpt(repo, "agent", "install", "claude-code", rc=1)
    assert res.err == (f"error: .claude/settings.json is not a regular file of at most {8 << 20} bytes (a symlink, a FIFO, "
                       "a directory or too large)\nhint: replace .claude/settings.json with a regular JSON file, then run "
                       "the command again\n")
    assert sorted(p.name for p in repo.iterdir()) == before and not (repo / ".cursor").exists()
    assert ckpt(repo, "agent", "status").out == "no agent hooks installed\n"
    ckpt(repo, "agent", "install", "cursor")  # reads Claude Code's settings to warn of double hooks: skipped
    assert (repo / ".cursor/hooks.json").is_file()


def test_log_graph_keeps_its_columns_for_long_fetched_ids(tmp_path):
    _bare, alice, bob = _team(tmp_path)
    ckpt(alice, "task", "start", "fix-auth-null")
    for i in range(1, 11):
        (alice / "a").write_text(f"{i}\n")
        ckpt(alice, "save", "-m", f"step {i}")
    ckpt(alice, "push")
    ckpt(bob, "fetch")
    saves = [ln for ln in ckpt(bob, "log", "--graph", "--task", "origin:fix-auth-null").out.splitlines() if ln.startswith("* ")]
    assert len(saves) == 10
    assert saves[0].startswith("* origin:fix-auth-null/1  manual      step 1  ")
    assert saves[9].startswith("* origin:fix-auth-null/10 manual      step 10  ")
    assert {ln.index("manual") for ln in saves} == {26}
