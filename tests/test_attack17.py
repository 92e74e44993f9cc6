"""What the attack pass on the sixteenth walkthrough's changes found, each as its kind: a
fetched manifest's state digest trusted (the pre-restore save skipped: a fixture lost, undo
refused), overlay patterns whose matching backtracks without bound (a fetched manifest's or a
restored .ckpt.toml's: restore, diff, status and save hung), and agent settings reached through a
symlinked directory a restore planted (install and uninstall wrote and deleted outside).

Real clones of a real bare repository, crafted objects written with plumbing, the real
``git ckpt`` entry point (a subprocess timeout is only a safety net against a hang).
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from git_ckpt.model import escape
from conftest import ckpt, forge_checkpoint, git
from test_remote import _team

HANG = 120  # seconds: a safety net only; each command takes about a second


def _craft(repo, source: str, dest: str, edit) -> None:
    meta = git(repo, "rev-parse", f"{source}^3").decode().strip()
    manifest = json.loads(git(repo, "cat-file", "blob", f"{meta}:manifest.json"))
    edit(manifest)
    forge_checkpoint(repo, source=source, dest=dest, blobs={"manifest.json": json.dumps(manifest).encode()})


def _renumber(n: int, task: str = "t"):
    def edit(m):
        m["id"], m["number"] = f"{task}/{n}", n
    return edit


def _push_forged(alice, bob, forge, fixture: str, data: str) -> None:
    """Alice pushes t/1 and t/2, a copy of t/1 with its manifest edited by ``forge``; Bob holds
    ``fixtures/FIXTURE``, starts his own task and fetches."""
    _craft(alice, "refs/ckpt/t/1", "refs/ckpt/t/2", forge)
    git(alice, "push", "-q", "origin", "refs/ckpt/t/1:refs/ckpt/t/1", "refs/ckpt/t/2:refs/ckpt/t/2")
    (bob / "fixtures").mkdir()
    (bob / "fixtures" / fixture).write_text(data)
    ckpt(bob, "task", "start", "mine")
    ckpt(bob, "fetch")


def test_a_fetched_state_digest_never_skips_the_pre_restore_save(tmp_path):
    _bare, alice, bob = _team(tmp_path)
    ckpt(alice, "task", "start", "t")
    (alice / "app.py").write_text("2\n")
    ckpt(alice, "save", "-m", "x")
    # Alice learns the state digest of a clean clone holding the shared fixture
    git(alice, "checkout", "-q", "--", ".")
    (alice / "app.py").unlink()
    ckpt(alice, "task", "start", "probe")
    (alice / "fixtures").mkdir()
    (alice / "fixtures/data.json").write_text("shared fixture v1\n")
    ckpt(alice, "save", "-m", "probe")
    state = json.loads(git(alice, "cat-file", "blob", "refs/ckpt/probe/1^3:manifest.json"))["state"]

    def forge(m):
        _renumber(2)(m)
        m["state"] = state
    _push_forged(alice, bob, forge, "data.json", "shared fixture v1\n")
    res = ckpt(bob, "restore", "origin:t/2", fsck=False)
    assert "saved current state as mine/1 (pre-restore)" in res.out, res.out
    ckpt(bob, "undo", fsck=False)
    assert (bob / "fixtures/data.json").read_text() == "shared fixture v1\n"


def _run(cwd, *args):
    proc = subprocess.run(["git", "ckpt", *args], cwd=cwd, capture_output=True, timeout=HANG)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.mark.parametrize("pattern", ["*" * 40 + "Z", "*a*a*a*a*a*a*a*a*a*Z", "**/**/**/**/**/**/Z"])
def test_a_fetched_overlay_pattern_cannot_make_a_restore_backtrack(tmp_path, pattern):
    _bare, alice, bob = _team(tmp_path)
    ckpt(alice, "task", "start", "t")
    (alice / "app.py").write_text("2\n")
    ckpt(alice, "save", "-m", "x")

    def forge(m):
        _renumber(2)(m)
        m["overlay"]["include"] = [pattern]
    _push_forged(alice, bob, forge, "customer_accounts_sample_aaaaaaaaaaaaaaaa.json", "data\n")
    for args in (["restore", "origin:t/2", "--dry-run"], ["diff", "origin:t/2"], ["status"]):
        rc, out, err = _run(bob, *args)
        assert rc == 0 and "Traceback" not in err, (args, rc, err)
    rc, out, err = _run(bob, "restore", "origin:t/2")
    assert rc == 0, err
    assert (bob / "fixtures/customer_accounts_sample_aaaaaaaaaaaaaaaa.json").read_text() == "data\n"


@pytest.mark.parametrize("pattern,problem", [
    ("*a*b*c", "has more than 2 wildcards in one path component"),
    ("a/**/b/**/c/**/d", "has more than 2 '**' components"),
    ("x" * 1100, "is longer than 1024 characters"),
])
def test_a_config_overlay_pattern_that_could_backtrack_is_refused(repo, pattern, problem):
    (repo / ".ckpt.toml").write_text(f'[overlay]\ninclude = ["{pattern}"]\n')
    (repo / "f.txt").write_text("1\n")
    rc, out, err = _run(repo, "save", "-m", "x")
    assert rc == 6 and err.startswith(f"error: .ckpt.toml: overlay.include pattern '{escape(pattern)}' {problem}\n"), err


@pytest.mark.parametrize("pattern", ["***.db", "data/****/x", "a**b"])
def test_consecutive_asterisks_match_as_gitignore_reads_them(repo, pattern):
    """Collapsed before compiling (a component of asterisks is **, a run inside one is *): the
    files selected are the ones git ignores for the same pattern."""
    (repo / ".gitignore").write_text(pattern + "\n")
    names = {"***.db": ["x.db", "d/y.db"], "data/****/x": ["data/x", "data/a/x", "data/a/b/x"], "a**b": ["ab", "aXYb"]}[pattern]
    for n in names:
        (repo / n).parent.mkdir(parents=True, exist_ok=True)
        (repo / n).write_text(n)
    (repo / ".ckpt.toml").write_text(f'[overlay]\ninclude = ["{pattern}"]\n')
    ckpt(repo, "save", "-m", "x")
    ignored = set(git(repo, "ls-files", "-o", "-i", "--exclude-standard").decode().split())
    held = {f["path"] for f in ckpt(repo, "show", "--json").json()["result"]["manifest"]["overlay"]["files"]}
    assert held == ignored & set(names), (held, ignored)


@pytest.mark.parametrize("args", [["agent", "install", "claude-code"], ["agent", "install", "claude-code", "--local"]])
def test_agent_settings_through_a_symlinked_directory_are_refused(repo, tmp_path, args):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "settings.json").write_text('{"theme": "dark"}\n')
    os.symlink(victim, repo / ".claude")
    rc, out, err = _run(repo, *args)
    rel = ".claude/settings.local.json" if "--local" in args else ".claude/settings.json"
    assert rc == 1 and err == (f"error: {rel} is reached through the symlink .claude: git ckpt reads and writes agent settings "
                               "only inside the worktree\nhint: replace the symlink .claude with a directory, then run the "
                               "command again\n"), err
    assert sorted(os.listdir(victim)) == ["settings.json"] and (victim / "settings.json").read_text() == '{"theme": "dark"}\n'


def test_hooks_are_not_installed_through_a_symlinked_hooks_directory(repo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, repo / ".githooks")
    git(repo, "config", "core.hooksPath", ".githooks")
    rc, out, err = _run(repo, "hooks", "install")
    assert rc == 1 and "reached through the symlink" in err, err
    assert os.listdir(elsewhere) == []
