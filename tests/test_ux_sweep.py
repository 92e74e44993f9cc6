"""What a new user following the README met (round 4): the README and help say what the
commands do, one wording for the same kind of message, completion in a fresh fish, idempotent
uninstall, notes first.  Real repositories, the real ``git ckpt``."""

from __future__ import annotations

import json

from pathlib import Path

from conftest import ckpt, git

ROOT = Path(__file__).parents[1]


def test_restore_removes_extra_overlay_files_as_the_readme_says(repo):
    """README "Overlay paths are restored exactly as saved": an ignored file inside an overlay
    path that the checkpoint lacks is deleted (the plan says so), a likely-secret one (no overlay
    holds it) stays, and undo brings the deleted one back from the pre-restore save."""
    (repo / ".gitignore").write_text("tmp/\n")
    git(repo, "config", "ckpt.overlay.include", "tmp/")
    (repo / "tmp").mkdir()
    (repo / "tmp/keep.txt").write_text("x\n")
    ckpt(repo, "save", "-m", "one")
    (repo / "tmp/f.txt").write_text("extra\n")
    (repo / "tmp/.env").write_text("K=1\n")
    plan = ckpt(repo, "restore", "default/1", "--dry-run")
    assert plan.out == "would restore default/1:\ndelete  tmp/f.txt (overlay)\nleave   2 other file(s)\n", plan
    res = ckpt(repo, "restore", "default/1")
    assert res.out == "saved current state as default/2 (pre-restore)\nrestored default/1\n", res
    assert sorted(p.name for p in (repo / "tmp").iterdir()) == [".env", "keep.txt"]
    ckpt(repo, "undo")
    assert (repo / "tmp/f.txt").read_text() == "extra\n"
    readme = (ROOT / "README.md").read_text()
    assert "**Overlay paths are restored exactly as saved.**" in readme
    assert "**Other ignored files are never deleted**" in readme


def test_fish_completion_in_a_fresh_shell_with_the_readme_install_line(repo, hermetic):
    """The README's fish line, run as written (HOME and XDG_CONFIG_HOME are the sealed ones),
    makes `git ckpt <TAB>` work in a NEW fish, with nothing having completed `git-ckpt` first;
    fish's own git completions still answer (`git chec` -> checkout)."""
    import shutil
    import subprocess

    import pytest

    fish = shutil.which("fish")
    if fish is None:
        pytest.skip("no fish on this machine")
    line = next(ln for ln in (ROOT / "README.md").read_text().splitlines() if "completion fish" in ln)
    subprocess.run(["bash", "-c", line], cwd=repo, check=True)
    assert (hermetic / ".config/fish/conf.d/git-ckpt.fish").exists()
    (repo / "f").write_text("f\n")
    ckpt(repo, "save", "-m", "one")
    cases = ["git ckpt res", "git ckpt show def", "git ckpt task s", "git-ckpt sa", "git chec", "git ck"]
    got = []
    for case in cases:  # each in a new fish: nothing loaded by an earlier completion
        proc = subprocess.run([fish, "-c", f"complete -C '{case}'"], cwd=repo, capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stderr == "", proc
        got.append([ln.split("\t")[0] for ln in proc.stdout.splitlines()])
    assert got[:4] == [["restore"], ["default/1"], ["show", "start"], ["save"]], got
    assert "checkout" in got[4] and "ckpt" in got[5], got


def test_help_says_at_is_the_restored_checkpoint_after_a_restore(repo):
    """`diff`, `promote`, `verify` default to @, which after a restore is the checkpoint restored
    (not the latest, the pre-restore save): their -h says so, and diff does what it says."""
    (repo / "f").write_text("one\n")
    ckpt(repo, "save", "-m", "one")
    (repo / "f").write_text("two\n")
    ckpt(repo, "save", "-m", "two")
    ckpt(repo, "restore", "default/1")
    (repo / "g").write_text("new\n")
    assert ckpt(repo, "diff", "--name-status").out == "A\tg\n"  # against default/1, not default/2
    for cmd in ("diff", "promote", "verify"):
        text = " ".join(ckpt(repo, cmd, "-h", fsck=False).out.split())
        assert "after a restore" in text and "the one restored" in text, (cmd, text)
        assert "latest checkpoint with" not in text and "default @, the latest" not in text, (cmd, text)


def test_uninstall_of_what_is_not_installed_is_idempotent(repo):
    """Uninstalling what is not installed succeeds (exit 0) with one line saying there was
    nothing to remove: every agent, before and after an install/uninstall round, and hooks."""

    from git_ckpt.agent import SPECS

    for agent in sorted(SPECS):
        files = " or ".join(sorted({SPECS[agent].path, *([SPECS[agent].local_path] if SPECS[agent].local_path else [])}))
        want = f"nothing to remove: no git ckpt hooks for {agent} are installed in {files}\n"
        res = ckpt(repo, "agent", "uninstall", agent)
        assert (res.out, res.err) == (want, ""), res
        ckpt(repo, "agent", "install", agent)
        ckpt(repo, "agent", "uninstall", agent)
        assert ckpt(repo, "agent", "uninstall", agent).out == want
        assert json.loads(ckpt(repo, "agent", "uninstall", agent, "--json").out)["result"] == []
    res = ckpt(repo, "agent", "uninstall", "generic")
    assert res.out == "nothing to remove: git ckpt never installs generic hooks (remove the commands you wired in by hand)\n", res
    hooks_dir = git(repo, "rev-parse", "--git-path", "hooks").decode().strip()
    want = f"nothing to remove: no git ckpt hooks in {(repo / hooks_dir).resolve()}, and the gate is off\n"
    res = ckpt(repo, "hooks", "uninstall")
    assert (res.out, res.err) == (want, ""), res
    ckpt(repo, "hooks", "install")
    assert ckpt(repo, "hooks", "uninstall").out.startswith("removed pre-commit, ")
    assert ckpt(repo, "hooks", "uninstall").out == want
    assert json.loads(ckpt(repo, "hooks", "uninstall", "--json").out)["result"]["changed"] is False


def test_click_messages_are_one_line_without_escaped_tabs(repo):
    """Click's "Choose from:" layout (newlines and tabs) is flattened to spaces, not shown as
    literal \\t, for every missing choice argument."""
    for args, choices in ((["completion"], "bash, fish, zsh"),
                          (["agent", "install"], "claude-code, codex, gemini, cursor, copilot, generic"),
                          (["agent", "uninstall"], "claude-code, codex, gemini, cursor, copilot, generic")):
        res = ckpt(repo, *args, rc=2, fsck=False)
        metavar = "{" + choices.replace(", ", "|") + "}"
        assert res.err == (f"error: missing argument '{metavar}'; choose from: {choices}\n"
                           f"hint: git ckpt {' '.join(args)} -h shows the usage\n"), res
        assert "\\t" not in res.err and "\t" not in res.err


def test_did_you_mean_has_one_wording(repo):
    """Every unknown command (top level, task/agent/hooks, `help NAME`) and option gets the same
    sentence and the same hint, whether one or several names are close."""
    cases = [
        (["sav"], "no such command 'sav'", "did you mean 'save'? ", "git ckpt"),
        (["restor"], "no such command 'restor'", "did you mean 'restore' or 'report'? ", "git ckpt"),
        (["help", "restor"], "no such command 'restor'", "did you mean 'restore' or 'report'? ", "git ckpt"),
        (["help", "nosuch"], "no such command 'nosuch'", "", "git ckpt"),
        (["task", "strt"], "no such command 'strt'", "did you mean 'start'? ", "git ckpt task"),
        (["help", "task", "strt"], "no such command 'strt'", "did you mean 'start'? ", "git ckpt task"),
        (["agent", "instal"], "no such command 'instal'", "did you mean 'install' or 'uninstall'? ", "git ckpt agent"),
        (["hooks", "statu"], "no such command 'statu'", "did you mean 'status'? ", "git ckpt hooks"),
        (["save", "--mesage"], "no such option '--mesage'", "did you mean '--message'? ", "git ckpt save"),
        (["task", "start", "--gaol"], "no such option '--gaol'", "did you mean '--goal'? ", "git ckpt task start"),
        (["save", "-M", "x"], "no such option '-M'", "did you mean '-m'? ", "git ckpt save"),  # case of a short option
        (["log", "-N", "2"], "no such option '-N'", "did you mean '-n'? ", "git ckpt log"),
        (["save", "-x", "x"], "no such option '-x'", "", "git ckpt save"),  # no other letter is guessed
        (["--jsn", "list"], "no such option '--jsn'", "did you mean '--json'? ", "git ckpt"),  # taken before click
        (["--hepl"], "no such option '--hepl'", "did you mean '--help'? ", "git ckpt"),
    ]
    for args, message, suggestion, where in cases:
        res = ckpt(repo, *args, rc=2, fsck=False)
        assert res.err == f"error: {message}\nhint: {suggestion}{where} -h shows the usage\n", (args, res)


def test_click_errors_read_as_every_other_error(repo):
    """Tenth-walkthrough leftover: click's own messages kept click's style (`error: No such option
    '--task'.`, capitalised, a full stop, the suggestion in the error line).  Every usage error
    click raises reads as git ckpt's own: lower case, no full stop, one line, exit 2, the hint
    naming the command's usage; --json carries the same words."""
    cases = [
        (["save", "-m"], "option '-m' requires an argument", "git ckpt save"),
        (["restore", "--worktree"], "option '--worktree' requires an argument", "git ckpt restore"),
        (["list", "--limit", "3"], "no such option '--limit'", "git ckpt list"),
        (["list", "extra"], "got unexpected extra argument (extra)", "git ckpt list"),  # (save: test_walk21)
        (["log", "-n", "abc"], "invalid value for '-n' / '--max-count': 'abc' is not a valid integer range", "git ckpt log"),
        (["completion", "tcsh"], "invalid value for '{bash|fish|zsh}': 'tcsh' is not one of 'bash', 'fish', 'zsh'", "git ckpt completion"),
    ]
    for args, message, where in cases:
        res = ckpt(repo, *args, rc=2, fsck=False)
        assert res.err == f"error: {message}\nhint: {where} -h shows the usage\n", (args, res)
        err = json.loads(ckpt(repo, "--json", *args, rc=2, fsck=False).out)["error"]
        assert (err["message"], err["code"], err["exit_code"]) == (message, "usage", 2), (args, err)


def test_restore_into_a_new_worktree_prints_notes_first(repo, tmp_path):
    """`restore --worktree`: the provenance note comes before anything else (as README's example
    shows), and no branch note for the detached worktree the command created itself; a restore
    onto a detached HEAD the user made still says so, without nested parentheses."""
    import re

    ckpt(repo, "task", "start", "fix-echo")
    (repo / "f").write_text("f\n")
    ckpt(repo, "save", "-m", "one")
    base = git(repo, "rev-parse", "HEAD").decode().strip()
    wt = tmp_path / "review"
    res = ckpt(repo, "restore", "fix-echo/1", "--worktree", str(wt))
    assert res.out.splitlines() == [
        f"note: fix-echo/1 was saved in worktree {repo} (this is {wt})",
        f"created worktree {wt} at {base[:12]}",
        "saved current state as default/1 (pre-restore)",
        "restored fix-echo/1",
    ], res
    assert (wt / "f").read_text() == "f\n"
    assert [n for n in ckpt(repo, "restore", "fix-echo/1", "--worktree", str(tmp_path / "w2"), "--json").json()["result"]["plan"]["provenance"]
            if "branch" in n] == []
    git(repo, "checkout", "-q", "--detach")
    out = ckpt(repo, "restore", "fix-echo/1", "--dry-run").out
    assert out.splitlines()[0] == "note: fix-echo/1 was saved on branch main (this worktree is on a detached HEAD)", out
    readme = (ROOT / "README.md").read_text()
    block = readme.split("$ git ckpt restore origin:fix-auth-null/1 --worktree ../review-auth\n", 1)[1].split("```", 1)[0]
    assert [re.sub(r"\S+$", "", ln.split(" (")[0]).split(" ")[0] for ln in block.splitlines()] == ["note:", "created", "saved", "restored"]


def test_every_card_note_kind_shows_its_text_in_the_graph_the_log_and_the_report(repo, tmp_path):
    """`log --graph`, `log` and the `report --html` events list show the text of every kind of
    `task note` (never a bare "task card updated"); the report's card table lists reads and
    assumptions too."""
    import html

    ckpt(repo, "task", "start", "t", "--goal", "g")
    (repo / "f").write_text("f\n")
    (repo / "src").mkdir()
    (repo / "src" / "auth.py").write_text("a\n")
    ckpt(repo, "save", "-m", "one")
    notes = [
        (["--read", "src/auth.py", "--read", "f"], "read: src/auth.py, f"),
        (["--fact", "callers never pass a string", "--evidence", "f"], "fact: callers never pass a string"),
        (["--decided", "guard inside login()"], "decided: guard inside login()"),
        (["--failed", "a decorator", "--reason", "hides the traceback", "--evidence", "t/1"], "ruled out: a decorator (hides the traceback)"),
        (["--assume", "None means logged out"], "assumed: None means logged out"),
        (["--assume", "tokens expire"], "assumed: tokens expire"),
        (["--confirm", "1", "--evidence", "t/1"], "confirmed assumption 1: None means logged out"),
        (["--refute", "2", "--evidence", "t/1"], "refuted assumption 2: tokens expire"),
        (["--question", "should a None user warn?"], "question: should a None user warn?"),
        (["--next", "add a test"], "next action: add a test"),
    ]
    for args, _text in notes:
        ckpt(repo, "task", "note", *args)
    graph = ckpt(repo, "log", "--graph").out.splitlines()[-len(notes):]
    assert [ln.rsplit("  ", 1)[0] for ln in graph] == [f"|   {text}" for _a, text in notes], graph
    assert "task card updated" not in ckpt(repo, "log").out
    assert [ln.split("Z  ", 1)[1] for ln in ckpt(repo, "log").out.splitlines()[-len(notes):]] == [t for _a, t in notes]
    page = tmp_path / "r.html"
    ckpt(repo, "report", "--html", str(page))
    text = html.unescape(page.read_text())
    for _args, shown in notes:
        assert f"</code> {shown}</li>" in text, shown
    for row in ("<th>read</th><td>src/auth.py</td>", "<th>assumed</th><td>None means logged out (confirmed) (evidence: t/1)</td>",
                "<th>assumed</th><td>tokens expire (refuted) (evidence: t/1)</td>", "<th>question</th><td>should a None user warn?</td>"):
        assert row in text, row


def test_group_summaries_name_every_subcommand(repo):
    """`git ckpt -h` and `git ckpt GROUP -h` summarise task, agent and hooks with every one of
    their subcommands (filled in from the group, never a hand-kept list)."""
    import click

    from git_ckpt.cli import cli

    top = " ".join(ckpt(repo, "-h", fsck=False).out.split())
    for group in ("task", "agent", "hooks"):
        grp = cli.get_command(click.Context(cli), group)
        names = list(grp.commands)
        own = " ".join(ckpt(repo, group, "-h", fsck=False).out.split())
        assert f"({', '.join(names)})" in own and f"({', '.join(names)})" in top.replace("- ", "-"), (group, names)
    assert "(start, show, list, done, note)" in top


def test_task_list_counts_in_words_without_trailing_spaces(repo):
    (repo / "f").write_text("f\n")
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "task", "start", "fix-auth", "--goal", "no crash")
    for text in ("a\n", "b\n"):
        (repo / "f").write_text(text)
        ckpt(repo, "save", "-m", text.strip())
    out = ckpt(repo, "task", "list").out
    assert out == ("  default                     1 checkpoint\n"
                   "* fix-auth                    2 checkpoints  no crash\n"), out


def test_completion_lists_fetched_ids_in_numeric_order(repo, tmp_path):
    """Checkpoint ids are offered sorted by task and number, fetched ones too (10 after 9)."""
    import os
    import subprocess

    remote = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    ckpt(repo, "task", "start", "fix-echo")
    for i in range(11):
        (repo / "f").write_text(f"{i}\n")
        ckpt(repo, "save", "-m", str(i), fsck=False)
    ckpt(repo, "push", fsck=False)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    ckpt(other, "fetch", fsck=False)
    for where, prefix, want in ((repo, "fix", [f"fix-echo/{n}" for n in range(1, 12)]),
                                (other, "origin:", [f"origin:fix-echo/{n}" for n in range(1, 12)])):
        env = dict(os.environ, COMP_WORDS=f"git-ckpt show {prefix}", COMP_CWORD="2", _GIT_CKPT_COMPLETE="bash_complete")
        out = subprocess.run(["git-ckpt"], cwd=where, env=env, capture_output=True, text=True).stdout
        assert [ln.split(",", 1)[1] for ln in out.splitlines()] == want, out


def test_json_first_is_the_commands_own_option(repo):
    """`git ckpt --json CMD ...` hands --json to CMD right after its name: appended at the end,
    `--json save -m` saved a checkpoint with the message "--json" and printed text.  `--json`
    with no command (or only a group) is one JSON usage error, exit 2."""
    refs = git(repo, "for-each-ref", "refs/ckpt")
    env = json.loads(ckpt(repo, "--json", "save", "-m", rc=2, fsck=False).out)
    assert env["error"]["message"] == "option '-m' requires an argument" and git(repo, "for-each-ref", "refs/ckpt") == refs
    env = json.loads(ckpt(repo, "--json", "save", "-m", "x y").out)
    assert env["command"] == "save" and env["result"]["id"] == "default/1"
    assert ckpt(repo, "list", "--json").json()["result"][0]["message"] == "x y"
    for args, where in (([], "git ckpt"), (["task"], "git ckpt task"), (["agent"], "git ckpt agent")):
        for argv in (["--json", *args], [*args, "--json"]):
            res = ckpt(repo, *argv, rc=2, fsck=False)
            assert res.err == "" and json.loads(res.out)["error"] == {
                "code": "usage", "exit_code": 2, "message": f"{where} needs a command", "hint": f"{where} -h lists them"}, argv
    env = json.loads(ckpt(repo, "--json", "sav", "-m", "x", rc=2, fsck=False).out)
    assert (env["command"], env["error"]["message"]) == ("sav", "no such command 'sav'")
