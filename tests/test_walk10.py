"""What the tenth new-user walkthrough of the README met, each as its kind: warnings of a save
that a restore or an attempt made, commands given no checkpoint on a task without any, verify
with nothing to run on a worktree that moved, the evidence a --failed note takes, the
--reset-head command a hint names, settings that switch an agent's hooks off, the trust of a
repository without .ckpt.toml, and fetched task names in the "no task" hint.

Real repositories (and a real bare remote), the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import json

import pytest

from conftest import ckpt, git, ignored_overlay
from test_remote import _team

KEEP = "(to keep them: allow_secrets = true under [overlay] in .ckpt.toml, or git config ckpt.overlay.allowSecrets true)"


def _overlay(repo):
    ignored_overlay(repo, "tmp", {"f": "f\n"})
    ckpt(repo, "save", "-m", "one")


@pytest.mark.parametrize("secret", ["server.pem", ".env", "id_rsa"])
def test_a_secret_first_met_by_a_pre_restore_save_is_warned_about(repo, secret):
    """The secret-file warning is given once per path per task, by the first save that meets
    it: when that save is a restore's pre-restore save, the restore says it (it was lost: the
    pre-restore save's warnings were dropped, and the later save saw it already left out)."""
    _overlay(repo)
    (repo / "tmp" / secret).write_text("k\n")
    (repo / "tmp/g").write_text("g\n")
    res = ckpt(repo, "restore", "1")
    assert res.out.startswith("saved current state as default/2 (pre-restore)\nrestored default/1\n"), res.out
    assert res.err == f"warning: overlay: left out likely-secret files: tmp/{secret} {KEEP}\n", res.err
    assert (repo / "tmp" / secret).read_text() == "k\n"  # left where it is, never deleted
    (repo / "tmp/h").write_text("h\n")
    assert ckpt(repo, "save", "-m", "two").err == ""  # said once for the task
    res = ckpt(repo, "restore", "1", "--json")
    assert json.loads(res.out)["result"]["warnings"] == [] and res.err == ""
    (repo / "tmp/sub").mkdir()
    (repo / "tmp/sub" / secret).write_text("k\n")
    (repo / "tmp/i").write_text("i\n")  # new work: the restore saves first
    res = ckpt(repo, "restore", "3", "--json")
    assert json.loads(res.out)["result"]["warnings"] == [f"overlay: left out likely-secret files: tmp/sub/{secret} {KEEP}"]


def test_an_attempt_says_what_its_saves_left_out(repo):
    """attempt's own saves warn like save (they were silent), on stderr, and under --json in
    ``result.warnings``."""
    _overlay(repo)
    (repo / "tmp/.env").write_text("SECRET=1\n")
    (repo / "work.txt").write_text("w\n")  # so the attempt's first save is a checkpoint
    res = ckpt(repo, "attempt", "--", "sh", "-c", "echo x > tmp/y.pem; echo x > more.txt")
    assert res.err == (f"warning: overlay: left out likely-secret files: tmp/.env {KEEP}\n"
                       f"warning: overlay: left out likely-secret files: tmp/y.pem {KEEP}\n"), res.err
    (repo / "tmp/z.key").write_text("k\n")
    (repo / "work.txt").write_text("w2\n")
    res = ckpt(repo, "attempt", "--json", "--", "true")
    assert res.json()["result"]["warnings"] == [f"overlay: left out likely-secret files: tmp/z.key {KEEP}"]


@pytest.mark.parametrize("command", [["show"], ["diff"], ["verify"], ["promote"], ["promote", "--force"]])
def test_no_checkpoint_given_on_a_task_without_any_is_usage(repo, command):
    """A command given no checkpoint on a task that has none has nothing to act on: exit 2 (as
    undo with nothing to undo), and so has `@` of it typed (the eleventh walkthrough found
    `show` exit 2 but `show @` exit 4); exit 4 stays for a name that names nothing."""
    res = ckpt(repo, *command, rc=2)
    assert res.err == "error: task default has no checkpoints yet: nothing to act on\nhint: git ckpt save makes one\n"
    env = ckpt(repo, *command, "--json", rc=2).json()["error"]
    assert (env["code"], env["exit_code"]) == ("usage", 2)
    assert ckpt(repo, command[0], "@", *command[1:], rc=2).err.startswith("error: task default has no checkpoints yet: nothing to act on\n")
    assert ckpt(repo, command[0], "default/1", *command[1:], rc=4).err.startswith("error: no checkpoint default/1")


def test_verify_with_nothing_to_run_still_checks_the_worktree(repo):
    """verify with no verifiers promoted @ while the worktree had moved on; in place it now
    refuses as it does with verifiers (exit 2, nothing promoted); --isolated and a matching
    worktree still promote on the empty requirement."""
    (repo / "f").write_text("1\n")
    ckpt(repo, "save", "-m", "one")
    (repo / "f").write_text("2\n")
    res = ckpt(repo, "verify", rc=2)
    assert res.err == ("error: the worktree no longer matches default/1 (M f); nothing was run\n"
                       "hint: git ckpt save, then git ckpt verify (verifies what is on disk), or git ckpt verify default/1 --isolated\n")
    assert git(repo, "for-each-ref", "refs/ckpt/default/promoted") == b""
    assert ckpt(repo, "verify", "--isolated").out.endswith("promoted default/1\n")
    ckpt(repo, "save", "-m", "two")
    assert ckpt(repo, "verify").out == "no verifiers configured: promoting on the empty requirement\npromoted default/2\n"


def test_the_evidence_a_failed_note_asks_for_is_what_it_takes(repo):
    """`--failed` without evidence named "a file or text", which --failed then refuses."""
    ckpt(repo, "save", "--allow-empty")
    res = ckpt(repo, "task", "note", "--failed", "x", "--reason", "y", rc=2)
    assert res.err.splitlines()[0] == "error: --failed needs --evidence (a checkpoint T/N or a result T/N#VERIFIER)"
    res = ckpt(repo, "task", "note", "--fact", "x", rc=2)
    assert res.err.splitlines()[0] == "error: --fact needs --evidence (a checkpoint T/N, a result T/N#VERIFIER, a file or text)"


def _on_another_branch(repo):
    (repo / "b.txt").write_text("b\n")
    ckpt(repo, "save", "-m", "one")
    git(repo, "checkout", "-qb", "feature")
    (repo / "feat.txt").write_text("f\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "feat")


def test_the_reset_head_command_a_note_names_works(repo):
    """The dry run's note named `--reset-head`, which then refused (saved on main, HEAD on
    feature): every command a note or warning names for moving HEAD is one that runs, with
    --force when the branch differs; a path restore names none, and --reset-head with PATHS
    is refused (it moved main 3 commits back for a path restore)."""
    _on_another_branch(repo)
    dry = ckpt(repo, "restore", "1", "--dry-run").out
    assert ("git ckpt restore default/1 --reset-head --force moves HEAD to that commit too "
            "(--force: it was saved on main, not feature)") in dry, dry
    note = ckpt(repo, "restore", "1", "--dry-run", "--json").json()["result"]["plan"]["base_differs"]["note"]
    assert "--reset-head --force moves HEAD" in note
    head = git(repo, "rev-parse", "HEAD")
    res = ckpt(repo, "restore", "1", "b.txt", "--dry-run")
    # (and no note on HEAD at all: a path restore stages nothing of HEAD's difference)
    assert "--reset-head" not in res.out and "HEAD is " not in res.out, res.out
    res = ckpt(repo, "restore", "1", "b.txt", "--reset-head", rc=2)
    assert res.err == ("error: --reset-head moves HEAD for a whole restore; it takes no PATHS\n"
                       "hint: git ckpt restore default/1 --reset-head --force restores all of default/1; "
                       "git ckpt restore default/1 PATH... restores paths and leaves HEAD\n")
    assert git(repo, "rev-parse", "HEAD") == head
    ckpt(repo, "restore", "1", "--reset-head", "--force")  # what the note said runs
    assert git(repo, "rev-parse", "HEAD") == git(repo, "rev-parse", "main")
    git(repo, "checkout", "-q", "main")
    (repo / "c.txt").write_text("c\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "c")
    dry = ckpt(repo, "restore", "1", "--dry-run").out  # same branch: no --force
    assert "git ckpt restore default/1 --reset-head moves HEAD to that commit too\n" in dry, dry


@pytest.mark.parametrize("agent, path, settings, key", [
    ("gemini", ".gemini/settings.json", {"hooksConfig": {"enabled": False}, "theme": "x"}, "hooksConfig.enabled to false"),
    ("claude-code", ".claude/settings.json", {"disableAllHooks": True}, "disableAllHooks to true"),
])
def test_install_says_when_the_agents_settings_switch_hooks_off(repo, agent, path, settings, key):
    """A setting of the user's that switches every hook off is left as it is, and install says
    the hooks will not run (codex's note said so; gemini's and Claude Code's said nothing)."""
    (repo / path).parent.mkdir(parents=True)
    original = json.dumps(settings).encode()
    (repo / path).write_bytes(original)
    res = ckpt(repo, "agent", "install", agent)
    assert res.out.splitlines()[1] == (f"note: {path} sets {key}, which switches every hook off: the agent will not run "
                                       "these until you change it (git ckpt leaves your setting as it is)")
    now = json.loads((repo / path).read_text())
    assert {k: now[k] for k in settings} == settings
    ckpt(repo, "agent", "uninstall", agent)
    assert (repo / path).read_bytes() == original
    (repo / path).write_text(json.dumps({"hooksConfig": {"enabled": True}, "disableAllHooks": False}))
    assert "note:" not in ckpt(repo, "agent", "install", agent).out


def test_trust_show_without_ckpt_toml_names_no_hash(repo):
    """`trust --show` without a .ckpt.toml printed the sha256 of empty content as if of a file."""
    git(repo, "config", "ckpt.verifier.quick.command", "true")
    out = ckpt(repo, "trust", "--show").out
    assert out.endswith("no .ckpt.toml: no trust needed (git config's verifiers are yours)\n"), out
    assert "sha256" not in out


def test_the_no_task_hint_of_a_view_names_fetched_tasks(tmp_path):
    """The views that read fetched tasks name them in the "no task" hint too (handoff listed
    only local ones while list --remote listed both)."""
    _bare, alice, bob = _team(tmp_path)
    ckpt(alice, "task", "start", "fix-add")
    (alice / "a.py").write_text("a\n")
    ckpt(alice, "save", "-m", "a")
    ckpt(alice, "push")
    ckpt(bob, "fetch")
    ckpt(bob, "task", "start", "mine")
    ckpt(bob, "save", "--allow-empty")
    for view in (["handoff", "nosuchtask"], ["log", "--task", "nosuchtask"], ["task", "show", "nosuchtask"]):
        res = ckpt(bob, *view, rc=4)
        assert res.err == ("error: no task nosuchtask\nhint: the tasks are mine, origin:fix-add; "
                           "git ckpt task list shows every task\n"), (view, res.err)
    for typo in (["handoff", "fix-ad"], ["list", "--task", "fix-ad"], ["show", "fix-ad/1"]):  # ids and list too
        res = ckpt(bob, *typo, rc=4)
        assert res.err.splitlines()[1] == "hint: did you mean origin:fix-add? git ckpt task list shows every task", (typo, res.err)
    res = ckpt(bob, "gc", "--task", "nosuchtask", rc=4)  # a command that writes: only local tasks
    assert res.err.splitlines()[1] == "hint: the tasks are mine; git ckpt task list shows every task"


@pytest.mark.parametrize("how", ["save", "agent"])
def test_a_left_out_file_is_warned_about_once_even_when_nothing_is_saved(repo, how):
    """Issue 15 input 7's kind, in the branch that saves nothing: a secret file appearing with no
    other change left the state equal to the latest checkpoint, so no checkpoint recorded it as
    left out and every save (every agent turn) warned again.  Once per path per task, whether
    or not a checkpoint is written; a new path is said again; another task says it once too."""
    _overlay(repo)
    (repo / "tmp/.env").write_text("SECRET=1\n")

    def save():
        if how == "agent":
            return ckpt(repo, "agent", "hook", "claude-code", "turn", input=b'{"session_id": "s1"}')
        return ckpt(repo, "save")

    first = save()
    assert first.err == f"warning: overlay: left out likely-secret files: tmp/.env {KEEP}\n", first.err
    for _ in range(2):
        assert save().err == ""
    (repo / "tmp/b.pem").write_text("k\n")
    assert save().err == f"warning: overlay: left out likely-secret files: tmp/b.pem {KEEP}\n"
    assert save().err == ""
    ckpt(repo, "task", "start", "other")
    assert save().err == f"warning: overlay: left out likely-secret files: tmp/.env, tmp/b.pem {KEEP}\n"
    assert save().err == ""


@pytest.mark.parametrize("command", [["show"], ["promote"], ["promote", "--force"], ["verify"], ["diff"]])
def test_an_empty_checkpoint_argument_is_no_default(repo, command):
    """Attack pass: `promote ""` (a script's unset variable) promoted @ once "no argument" was
    told by truthiness; an empty name is an invalid name for every command, exit 4."""
    ckpt(repo, "save", "--allow-empty")
    res = ckpt(repo, command[0], "", *command[1:], rc=4)
    assert res.err.startswith("error: invalid checkpoint name ''\n"), res.err
    assert git(repo, "for-each-ref", "refs/ckpt/default/promoted") == b""


def test_a_warning_is_remembered_only_once_it_was_given(repo):
    """Attack pass: the path was marked warned before the save succeeded; a save refused
    (a ref lock held) swallowed the warning for good.  Remembered only after success."""
    _overlay(repo)
    (repo / "tmp/.env").write_text("SECRET=1\n")
    (repo / "work.txt").write_text("w\n")
    lock = repo / ".git/refs/ckpt/default/2.lock"
    lock.write_text("")
    ckpt(repo, "save", "-m", "two", rc=5)
    lock.unlink()
    assert ckpt(repo, "save", "-m", "two").err == f"warning: overlay: left out likely-secret files: tmp/.env {KEEP}\n"


@pytest.mark.parametrize("where", ["shared", "user"])
def test_hooks_switched_off_in_another_file_the_agent_reads(repo, tmp_path, where):
    """Attack pass: the note looked only at the file being written; `install claude-code
    --local` said nothing while the shared settings (or the user's ~/.claude/settings.json)
    switched every hook off."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    if where == "shared":
        (repo / ".claude").mkdir()
        (repo / ".claude/settings.json").write_text('{"disableAllHooks": true}')
        shown = ".claude/settings.json"
    else:
        (home / ".claude/settings.json").write_text('{"disableAllHooks": true}')
        shown = "~/.claude/settings.json"
    env = {"HOME": str(home)}
    res = ckpt(repo, "agent", "install", "claude-code", "--local", env=env)
    assert res.out.splitlines()[1] == (f"note: {shown} sets disableAllHooks to true, which switches every hook off: the agent "
                                       "will not run these until you change it (git ckpt leaves your setting as it is)"), res.out


def test_a_settings_file_nested_too_deeply_is_one_error(repo):
    """Attack pass: a committed settings file nested 200,000 deep crashed install (exit 70)."""
    (repo / ".claude").mkdir()
    (repo / ".claude/settings.json").write_text('{"a":' + "[" * 200000 + "]" * 200000 + "}")
    res = ckpt(repo, "agent", "install", "claude-code", rc=1)
    assert res.err.startswith("error: ") and "nested too deeply" in res.err and "Traceback" not in res.err
    assert (repo / ".claude/settings.json").read_text().startswith('{"a":[[[')
