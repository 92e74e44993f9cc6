"""What the thirteenth new-user walkthrough of the README met, each as its kind: a typo that
silently began a task, an identity that ignored git's environment, stats of a fetched task,
config errors that did not say where to fix them, hints that named a command that fails, a
merge message lost by a restore, a sparse plan of thousands of lines, and MCP list arguments.

Real repositories, real clones of a real bare repository, the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import os

import pytest

from conftest import ckpt, git, merge_stopped_on_conflict
from test_remote import _shared_task, _team


def _refs(repo) -> bytes:
    return git(repo, "for-each-ref", "--format=%(objectname) %(refname)", "refs/ckpt/")


# -- W1: a command that writes into a task it does not begin refuses an unknown one ---------------

@pytest.mark.parametrize("args", [
    ["save", "--task", "defualt", "-m", "x"],
    ["save", "--task", "brand-new", "-m", "x"],
    ["task", "note", "defualt", "--decided", "x"],
    ["task", "note", "brand-new", "--next", "y"],
])
def test_a_typo_in_a_task_name_begins_no_task(repo, args):
    (repo / "f.txt").write_text("1\n")
    ckpt(repo, "save", "-m", "one")
    (repo / "f.txt").write_text("2\n")
    before = _refs(repo)
    res = ckpt(repo, *args, rc=4)
    name = args[2]
    near = "did you mean default? " if name == "defualt" else "the tasks are default; "
    assert res.err == (f"error: no task {name}\nhint: {near}git ckpt task list shows every task; "
                       f"git ckpt task start {name} begins a task of that name\n")
    assert _refs(repo) == before
    assert ckpt(repo, "task", "list", "--json").json()["result"][0]["task"] == "default"
    assert [t["task"] for t in ckpt(repo, "task", "list", "--json").json()["result"]] == ["default"]
    # a task begun with task start takes saves and notes by name
    ckpt(repo, "task", "start", name)
    ckpt(repo, "task", "start", "default")
    ckpt(repo, *args)


def test_the_mcp_tools_refuse_an_unknown_task_as_the_cli_does(repo):
    from git_ckpt.errors import NotFoundError
    from git_ckpt.mcp_server import Tools

    tools = Tools(str(repo))
    (repo / "f.txt").write_text("1\n")
    tools.save("one")
    (repo / "f.txt").write_text("2\n")
    before = _refs(repo)
    for call in (lambda: tools.save("x", task="defualt"), lambda: tools.task_note("defualt", decided=["x"]),
                 lambda: tools.handoff("defualt")):
        with pytest.raises(NotFoundError) as exc:
            call()
        assert exc.value.message == "no task defualt" and "did you mean default?" in (exc.value.hint or "")
    assert _refs(repo) == before


# -- W2: the checkpoint identity is git's -----------------------------------------------------

@pytest.mark.parametrize("env", [
    {"GIT_AUTHOR_NAME": "Ann Agent", "GIT_AUTHOR_EMAIL": "ann@agents.example",
     "GIT_COMMITTER_NAME": "Cy Committer", "GIT_COMMITTER_EMAIL": "cy@example.org"},
    {"GIT_AUTHOR_NAME": "Only Name"},
    {"EMAIL": "from-email@example.net"},
    {},
])
def test_a_checkpoint_has_the_identity_git_commit_would_write(repo, env):
    """git resolves GIT_AUTHOR_*/GIT_COMMITTER_* first, then config (libgit2 alone read neither
    the environment nor GIT_CONFIG_GLOBAL): a checkpoint's commits and manifest say the same."""
    full = {**os.environ, **env}
    if "EMAIL" in env:  # EMAIL counts only where user.email is unset
        git(repo, "config", "--global", "--unset", "user.email", env=full)
    (repo / "f.txt").write_text("1\n")
    ckpt(repo, "save", "-m", "x", env=full)
    git(repo, "add", "f.txt")
    git(repo, "commit", "-qm", "c", env=full)
    fmt = "--format=%an <%ae>|%cn <%ce>"
    want = git(repo, "log", "-1", fmt, "HEAD", env=full).decode()
    for rev in ("refs/ckpt/default/1", "refs/ckpt/default/1^2", "refs/ckpt/default/1^3"):
        assert git(repo, "log", "-1", fmt, rev).decode() == want, rev
    author = want.split("|")[0]
    assert ckpt(repo, "show", "default/1", "--json").json()["result"]["manifest"]["author"] == author


def test_no_identity_git_would_accept_still_saves(repo):
    git(repo, "config", "user.useConfigOnly", "true")
    git(repo, "config", "--global", "--unset", "user.email")
    (repo / "f.txt").write_text("1\n")
    ckpt(repo, "save", "-m", "x")
    assert git(repo, "log", "-1", "--format=%an <%ae>", "refs/ckpt/default/1") == b"git-ckpt <git-ckpt@localhost>\n"


# -- W3 and C7: stats of a fetched task; runs counted as report counts them ------------------------

def test_stats_of_a_fetched_task_counts_no_commit_of_this_clone(tmp_path):
    _bare, alice, bob = _team(tmp_path)
    for i in range(3):  # Bob's own history, made before Alice's task reached him
        (bob / f"b{i}").write_text(f"{i}\n")
        git(bob, "add", f"b{i}")
        git(bob, "commit", "-qm", f"bob {i}")
    ckpt(alice, "task", "start", "t")
    (alice / "a").write_text("a\n")
    git(alice, "config", "ckpt.verifier.ok.command", "true")
    ckpt(alice, "save", "-m", "one")
    ckpt(alice, "verify")
    ckpt(alice, "push")
    ckpt(bob, "fetch")
    s = ckpt(bob, "stats", "origin:t", "--json").json()["result"]
    assert s["commits"] == {"fetched": True}
    assert (s["verifier_runs"], s["verifier_passed"], s["verifier_runs_elsewhere"]) == (1, 1, 0)
    out = ckpt(bob, "stats", "origin:t").out
    assert ("commits without a verified checkpoint: not counted for a fetched task (this branch's commits are this "
            "clone's own; git ckpt verify-commit COMMIT checks one)\n") in out
    # Alice's own stats count her branch as before
    assert ckpt(alice, "stats", "--json").json()["result"]["commits"]["checked"] == 0


def test_stats_counts_the_verifier_runs_report_draws(tmp_path):
    """A `verify origin:T/N` recorded in Bob's task is a run on another task's checkpoint: stats
    counts it apart, so its run count is the report's."""
    _bare, alice, bob = _shared_task(tmp_path)
    ckpt(bob, "task", "start", "mine")
    git(bob, "config", "ckpt.verifier.ok.command", "true")
    (bob / "m").write_text("m\n")
    ckpt(bob, "save", "-m", "mine")
    ckpt(bob, "verify")
    ckpt(bob, "verify", "origin:t/1", "--isolated")
    ckpt(bob, "verify", "origin:t/1", "--isolated")
    s = ckpt(bob, "stats", "--json").json()["result"]
    assert (s["verifier_runs"], s["verifier_passed"], s["verifier_runs_elsewhere"]) == (1, 1, 2)
    assert "verifier runs: 1, passed 1 (pass rate 100%; 0 reused; 2 more on other tasks' checkpoints)\n" in ckpt(bob, "stats").out
    page = ckpt(bob, "report", "--html", "-").out
    assert "1 verifier run(s)" in page


# -- C1 and C3: drop's words and check's hint for a protected checkpoint --------------------------

def test_drop_force_and_check_hint_for_a_protected_checkpoint(repo):
    git(repo, "config", "ckpt.verifier.ok.command", "true")
    (repo / "f.txt").write_text("1\n")
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "verify")
    ckpt(repo, "promote")
    (repo / "f.txt").write_text("2\n")
    ckpt(repo, "save", "-m", "two")
    # damage the promoted one: its file's blob (written loose by save) goes from the object store
    blob = git(repo, "rev-parse", "refs/ckpt/default/1:f.txt").decode().strip()
    (repo / ".git/objects" / blob[:2] / blob[2:]).unlink()
    res = ckpt(repo, "check", "--all", rc=1, fsck=False)
    assert res.err.endswith("hint: get a good copy from a teammate (git ckpt fetch REMOTE), or drop the damaged ones: "
                            "git ckpt drop --force default/1\n"), res
    ckpt(repo, "drop", "default/1", rc=2, fsck=False)
    out = ckpt(repo, "drop", "--force", "default/1", fsck=False).out
    assert out.startswith("dropped default/1 (") and " although it was protected (promoted)\n" in out


# -- C2: a config error says where to fix it ------------------------------------------------------

@pytest.mark.parametrize("where,setup,message,hint", [
    ("git", [("ckpt.attempt.onFailure", "bogus")], 'git config: ckpt.attempt.onFailure must be "restore" or "keep"', "git"),
    ("git", [("ckpt.retention.olderThan", "3x")], "git config: ckpt.retention.olderThan: cannot read duration '3x'",
     'write it like "30d", "12h" or "90m"'),
    ("git", [("ckpt.overlay.maxFileSize", "lots")], "git config: ckpt.overlay.maxFileSize: cannot read size 'lots'",
     'write it like "100MiB" or a number of bytes'),
    ("git", [("ckpt.verifier.a b.command", "true")], "git config: verifier name 'a b' must be letters, digits, '.', '_' or '-'", "git"),
    ("toml", '[[verifier]]\nname = "t"\ncommand = "true"\n[[verifier]]\nname = "t"\ncommand = "x"\n',
     ".ckpt.toml: verifier 't' is defined twice", "fix that key in .ckpt.toml"),
    ("toml", '[[verifier]]\nname = "t"\ncommand = ""\n', ".ckpt.toml: verifier 't' has an empty command", "fix that key in .ckpt.toml"),
    ("toml", '[attempt]\non_failure = "x"\n', '.ckpt.toml: attempt.on_failure must be "restore" or "keep"', "fix that key in .ckpt.toml"),
    ("toml", '[retention]\nkeep = -1\n', ".ckpt.toml: retention.keep must not be negative", "fix that key in .ckpt.toml"),
])
def test_a_config_error_names_the_key_and_where_to_fix_it(repo, where, setup, message, hint):
    if where == "git":
        for key, value in setup:
            git(repo, "config", key, value)
    else:
        (repo / ".ckpt.toml").write_text(setup)
    if hint == "git":
        hint = "fix it with git config (git config --show-origin --get-regexp '^ckpt[.]' shows where each key is set)"
    (repo / "f.txt").write_text("1\n")
    res = ckpt(repo, "save", "-m", "x", rc=6)
    assert res.err == f"error: {message}\nhint: {hint}\n"
    assert _refs(repo) == b""


# -- C4: a restore of a checkpoint saved mid-merge brings back its merge message -----------------

def _mid_merge(repo):
    (repo / "f").write_text("base\n")
    git(repo, "add", "f")
    git(repo, "commit", "-qm", "base")
    merge_stopped_on_conflict(repo, message="merge side: keep both lines")


@pytest.mark.parametrize("leave", ["abort", "commit", "reset"])
def test_a_mid_merge_checkpoint_restores_its_merge_message(repo, leave):
    _mid_merge(repo)
    msg = (repo / ".git/MERGE_MSG").read_bytes()
    assert msg.startswith(b"merge side: keep both lines\n")
    ckpt(repo, "save", "-m", "mid-merge")
    if leave == "abort":
        git(repo, "merge", "--abort")
    elif leave == "commit":
        (repo / "f").write_text("resolved\n")
        git(repo, "commit", "-qam", "resolved")
        git(repo, "reset", "-q", "--hard", "HEAD^")
    else:
        git(repo, "reset", "-q", "--hard")
    ckpt(repo, "restore", "default/1")
    assert (repo / ".git/MERGE_MSG").read_bytes() == msg
    (repo / "f").write_text("resolved\n")
    git(repo, "add", "f")
    env = {**os.environ, "GIT_EDITOR": "true"}
    git(repo, "commit", "-q", "--no-edit", env=env)
    assert git(repo, "log", "-1", "--format=%s", "HEAD") == b"merge side: keep both lines\n"
    assert len(git(repo, "log", "-1", "--format=%P", "HEAD").split()) == 2


def test_a_merge_message_being_edited_is_kept_and_a_foreign_oversized_one_is_not_used(repo):
    _mid_merge(repo)
    ckpt(repo, "save", "-m", "mid-merge")
    git(repo, "merge", "--abort")
    (repo / ".git/MERGE_MSG").write_text("my own words\n")  # left by something else: not the restore's to replace
    ckpt(repo, "restore", "default/1")
    assert (repo / ".git/MERGE_MSG").read_text() == "my own words\n"


# -- C5: outside the sparse cone, only index changes are named ----------------------------------

def test_a_sparse_plan_names_index_changes_and_counts_the_rest(repo):
    for d in ("a", "b"):
        (repo / d).mkdir()
        for i in range(40):
            (repo / d / f"{i}.txt").write_text(f"{i}\n")
    git(repo, "add", "a", "b")
    git(repo, "commit", "-qm", "tree")
    (repo / "b/7.txt").write_text("staged\n")
    git(repo, "add", "b/7.txt")
    ckpt(repo, "save", "-m", "full")
    git(repo, "reset", "-q", "--hard")
    git(repo, "sparse-checkout", "set", "a")
    (repo / "a/1.txt").write_text("edited\n")
    out = ckpt(repo, "restore", "default/1", "--dry-run").out
    assert out == ("would restore default/1:\n"
                   "write   a/1.txt\n"
                   "skip    b/7.txt (outside the sparse cone: index only; git sparse-checkout add widens it)\n"
                   "skip    39 files outside the sparse cone, unchanged in the index (off the disk; git sparse-checkout add widens the cone)\n"
                   "index   set to the checkpoint's staged state\n"
                   "leave   80 other file(s)\n"), out
    plan = ckpt(repo, "restore", "default/1", "--dry-run", "--json").json()["result"]["plan"]
    assert len(plan["outside_sparse_cone"]) == 40 and plan["outside_sparse_cone_index_changes"] == ["b/7.txt"]
    ckpt(repo, "restore", "default/1")
    assert git(repo, "ls-files", "-s", "b/7.txt").split()[1] == git(repo, "rev-parse", "refs/ckpt/default/1^2:b/7.txt").strip()
    assert not (repo / "b").exists()


# -- C6: an MCP list argument given as one text ----------------------------------------------------

def test_mcp_list_arguments_take_one_text(repo):
    from git_ckpt.mcp_server import Tools

    tools = Tools(str(repo))
    (repo / "f.txt").write_text("1\n")
    tools.save("one")
    tools.task_note(question="why?", assume="it works", read="f.txt")
    card = tools.task_note(decided="use a list", evidence="default/1")
    assert [d["text"] for d in card["decisions"]] == ["use a list"]
    assert card["decisions"][0]["evidence"] == [{"checkpoint": "default/1", "commit": git(repo, "rev-parse", "refs/ckpt/default/1").decode().strip()}]
    assert [q["text"] for q in card["questions"]] == ["why?"]
    assert [a["text"] for a in card["assumptions"]] == ["it works"]
    assert card["reads"] == ["f.txt"]
    card = tools.task_start("default", constraints="no network", acceptance="tests pass")
    assert (card["constraints"], card["acceptance"]) == (["no network"], ["tests pass"])
