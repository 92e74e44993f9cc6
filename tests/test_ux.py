"""A tool people enjoy (issue 15): group help, whole summaries, "did you mean", hints that name
the right command, one word per verifier outcome, usage errors exit 2."""

from __future__ import annotations

import re

import pytest

from conftest import ckpt, git, merge_stopped_on_conflict
from test_verify import verifier, write_config

GROUPS = ["", "task", "hooks", "agent"]


def _commands(repo, group: str = "") -> list[str]:
    """The subcommands ``git ckpt [GROUP] -h`` lists (parsed from its Commands: section)."""
    out = ckpt(repo, *([group] if group else []), "-h", fsck=False).out
    section = out.split("Commands:\n", 1)[1]
    return [m.group(1) for m in re.finditer(r"^  (\S+)", section, re.M)]


def _listing(out: str) -> dict[str, str]:
    """Commands: section of a help text → name → its summary, wrapped lines joined."""
    rows: dict[str, str] = {}
    name = None
    for line in out.split("Commands:\n", 1)[1].splitlines():
        m = re.match(r"^  (\S+)\s+(.*)$", line)
        if m:
            name = m.group(1)
            rows[name] = m.group(2)
        elif name and line.strip():
            rows[name] += " " + line.strip()
    return rows


@pytest.mark.parametrize("group", GROUPS)
def test_group_without_subcommand_prints_its_help(repo, group):
    """Input 1: `git ckpt`, `git ckpt task`, `hooks`, `agent` show the group's help (not one
    2,000-character error line), exit 0 (help asked for by naming the group, as `git help`)."""
    res = ckpt(repo, *([group] if group else []), rc=0, fsck=False)
    assert res.out.startswith(f"Usage: git ckpt{' ' + group if group else ''} [OPTIONS] COMMAND [ARGS]...\n")
    assert "error:" not in res.err and res.err == ""
    assert "\n" in res.out and max(len(line) for line in res.out.splitlines()) <= 100
    assert _listing(res.out) and set(_listing(res.out)) == set(_commands(repo, group))


@pytest.mark.parametrize("group", GROUPS)
def test_help_summaries_are_whole_sentences(repo, group):
    """Input 9: `-h` lists each command's whole first sentence, never cut with `...`."""
    from git_ckpt.cli import cli, summary

    listing = _listing(ckpt(repo, *([group] if group else []), "-h", fsck=False).out)
    import click

    parent = cli if not group else cli.get_command(click.Context(cli), group)
    for name, text in listing.items():
        cmd = parent.get_command(click.Context(parent), name)
        assert not text.endswith("..."), (name, text)
        assert "".join(text.split()) == "".join(summary(cmd.help).split()), (name, text)  # wrapped, not cut
        first = " ".join(cmd.help.split("\n\n")[0].split())
        assert first.startswith(summary(cmd.help)) and len(summary(cmd.help)) > 20, (name, text)


def test_every_command_gets_did_you_mean(repo):
    """Input 9: a mistyped command, top-level or in a group, is answered with "Did you mean"."""
    for group in GROUPS:
        for name in _commands(repo, group):
            typo = name[:-1] if len(name) > 3 else name + "x"
            res = ckpt(repo, *([group] if group else []), typo, rc=2, fsck=False)
            assert res.err.startswith(f"error: no such command '{typo}'\nhint: did you mean "), res
            assert f"'{name}'" in res.err.splitlines()[1], res
            assert res.err.count("\n") == 2 and res.err.splitlines()[1].endswith(" -h shows the usage"), res


@pytest.mark.parametrize("args,where", [
    (["save", "-m"], "git ckpt save"),
    (["task", "start", "--goal"], "git ckpt task start"),
    (["gc", "--keep"], "git ckpt gc"),
    (["list", "--task"], "git ckpt list"),
    (["save", "--bogus"], "git ckpt save"),
    (["agent", "install", "claude-code", "--bogus"], "git ckpt agent install"),
    (["hooks", "install", "--bogus"], "git ckpt hooks install"),
])
def test_usage_error_hint_names_the_subcommand(repo, args, where):
    """Input 9: `save -m` without text hints `git ckpt save -h`, not `git ckpt -h`."""
    res = ckpt(repo, *args, rc=2, fsck=False)
    assert res.err.splitlines()[-1] == f"hint: {where} -h shows the usage", res


@pytest.mark.parametrize("args", [
    ["gc", "--older-than", "xx"], ["gc", "--older-than", "14"], ["gc", "--older-than", "-3d"],
    ["gc", "--max-bytes", "12Q"], ["gc", "--max-bytes", "lots"],
    # digits and spaces of other scripts, which Python's \d, \s, int() and float() take
    ["gc", "--older-than", "\u0663d"], ["gc", "--max-bytes", "\u0661\u0660MiB"], ["gc", "--older-than", "3\u2003d"],
])
def test_bad_duration_or_size_option_is_usage_exit_2(repo, args):
    """Input 9: a bad `--older-than` (or `--max-bytes`) is a usage error (2), not a config one (6),
    and nothing is pruned."""
    ckpt(repo, "save", "-m", "one")
    before = git(repo, "for-each-ref", "refs/ckpt")
    res = ckpt(repo, *args, rc=2)
    assert res.err.startswith(f"error: {args[1]}: cannot read ") and "\nhint: write it like" in res.err
    assert git(repo, "for-each-ref", "refs/ckpt") == before


@pytest.mark.parametrize("args", [["show"], ["diff"], ["restore", "--dry-run"], ["check"], ["promote"], ["verify"]])
@pytest.mark.parametrize("spec", ["@~9", "@~2", "default/@~5"])
def test_checkpoint_beyond_history_has_a_hint(repo, args, spec):
    """Input 9: `@~9` past the first checkpoint says how far back one can go, in every command."""
    ckpt(repo, "save", "-m", "one")
    res = ckpt(repo, *args[:1], spec, *args[1:], rc=4)
    lines = res.err.splitlines()
    assert lines[0].startswith(f"error: {spec}: task default has only 1 checkpoint(s)"), res
    assert lines[1].startswith("hint: @ is ") and lines[1].endswith("@~0 the oldest; git ckpt list --task default shows them"), res


def test_promote_defaults_to_latest_like_verify_and_show(repo):
    """Input 9: `promote --force` without CKPT promotes @, as `verify` and `show` default to @."""
    ckpt(repo, "save", "-m", "one")
    (repo / "f").write_text("x\n")
    ckpt(repo, "save", "-m", "two")
    res = ckpt(repo, "promote", "--force")
    assert res.out.startswith("promoted default/2")
    assert git(repo, "rev-parse", "refs/ckpt/default/promoted") == git(repo, "rev-parse", "refs/ckpt/default/2")


def test_a_verifier_that_cannot_start_is_could_not_run_everywhere(repo):
    """Input 9: the same words in verify, list, show and log; identical show lines once."""
    write_config(repo, verifier("tests", ["./no-such-program"]) + verifier("lint", ["sh", "-c", "exit 125"]))
    ckpt(repo, "save", "-m", "one")
    v1 = ckpt(repo, "verify", rc=127)
    assert "verifier: tests ...... could not run (exit 127" in v1.out
    assert "verifier: lint ...... undecided (exit 125" in v1.out
    listed = ckpt(repo, "list").out
    assert "[lint:undecided tests:could not run]" in listed, listed
    # the same result line twice in the note (a merge of two copies, say): shown once, counted
    commit = git(repo, "rev-parse", "refs/ckpt/default/1").decode().strip()
    note = git(repo, "notes", "--ref=ckpt", "show", commit)
    git(repo, "notes", "--ref=ckpt", "add", "-f", "-F", "-", commit, input=note + note)
    shown = ckpt(repo, "show").out
    results = shown.split("results:\n", 1)[1].splitlines()
    assert len(results) == 2, shown
    assert re.fullmatch(r"  tests: could not run \(exit 127, \d+\.\d s\) \(2 times\)", results[0]), shown
    assert re.fullmatch(r"  lint: undecided \(exit 125, \d+\.\d s\) \(2 times\)", results[1]), shown
    log = ckpt(repo, "log").out
    assert "verifier: tests ...... could not run on default/1" in log, log
    handoff = ckpt(repo, "handoff").out
    assert "- tests: could not run on default/1" in handoff, handoff
    graph = ckpt(repo, "log", "--graph").out
    assert "FAIL  tests could not run on default/1" in graph, graph
    assert "error" not in log + shown + listed + v1.out + handoff + graph


def _man_env(prefix):
    """PATH with only ``prefix/bin`` (the install under test), git's and man's directories:
    no other git-ckpt (nor its man page) can be found."""
    import os
    import shutil

    dirs = [str(prefix / "bin"), os.path.dirname(shutil.which("git")), os.path.dirname(shutil.which("man")), "/usr/bin", "/bin"]
    return {"PATH": os.pathsep.join(dict.fromkeys(dirs)), "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "100"}


@pytest.mark.skipif(__import__("shutil").which("man") is None, reason="needs man")
def test_man_page_after_editable_install(tmp_path):
    """Input 2: after an editable install (which installs no data files), `git help ckpt` and
    `git ckpt --help` show the man page once any git ckpt command ran, and `git ckpt help` shows
    it at once, even when the prefix is read-only (man -l on the packaged page)."""
    import os
    import sys
    from pathlib import Path

    from conftest import init_repo, run

    prefix = tmp_path / "prefix"
    src = Path(__file__).resolve().parent.parent
    run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--ignore-installed",
         "--prefix", str(prefix), "-e", str(src)], tmp_path)
    page = prefix / "share/man/man1/git-ckpt.1"
    assert (prefix / "bin/git-ckpt").exists() and not page.exists()  # what an editable install leaves
    env = _man_env(prefix)
    repo = init_repo(tmp_path / "r")
    name_line = "git-ckpt - checkpoint a Git working tree into hidden refs and restore it exactly"
    # where the page cannot be written (share/ is a file here; root ignores read-only modes):
    # git ckpt help renders the packaged page
    (prefix / "share").write_bytes(b"")
    out = run(["git", "ckpt", "help"], repo, env=env).stdout.decode()
    assert name_line in out and "EXIT STATUS" in out
    assert (prefix / "share").read_bytes() == b""
    os.unlink(prefix / "share")
    run(["git", "ckpt", "list"], repo, env=env)  # any command puts the page in place
    assert page.read_bytes() == (src / "man/git-ckpt.1").read_bytes()
    for args in (["git", "ckpt", "--help"], ["git", "help", "ckpt"], ["git", "ckpt", "help"]):
        out = run(args, repo, env=env).stdout.decode()
        assert name_line in out and "EXIT STATUS" in out, args


def test_help_of_a_command(repo):
    """`git ckpt help task start` is `git ckpt task start -h`; an unknown one is exit 2."""
    assert ckpt(repo, "help", "task", "start", fsck=False).out.rstrip() == ckpt(repo, "task", "start", "-h", fsck=False).out.rstrip()
    res = ckpt(repo, "help", "tsk", rc=2, fsck=False)
    assert res.err == "error: no such command 'tsk'\nhint: did you mean 'task'? git ckpt -h shows the usage\n"


def _pip_installs() -> list[tuple[str, str]]:
    """Every ``pip install ...`` a user is told to run: README, man page parts, command help and
    hints in the code.  ``(where, the arguments after install)``."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    found = []
    for path in [root / "README.md", *sorted((root / "man/parts").glob("*.roff")), *sorted((root / "git_ckpt").rglob("*.py"))]:
        text = path.read_text().replace("\\-", "-").replace("\\fB", "").replace("\\fR", "")
        for m in re.finditer(r"pip install ([^\n`;)&|]*)", text):
            found.append((f"{path.name}", m.group(1).split(" #", 1)[0].strip()))
    return found


def test_every_install_instruction_works_from_a_checkout():
    """Input 3: git-ckpt is not on a package index, so every `pip install` we print installs
    the checkout (`.`, `'.[EXTRA]'` with an extra pyproject defines) or a plain requirement of
    git-ckpt itself (`'mcp>=1.0'`), never `git-ckpt[...]` from an index."""
    import tomllib
    from pathlib import Path

    meta = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
    extras = meta["optional-dependencies"]
    reqs = {r for group in extras.values() for r in group} | set(meta["dependencies"])
    seen = _pip_installs()
    assert any(w == "README.md" for w, _ in seen) and any(w.endswith(".roff") for w, _ in seen)
    for where, args in seen:
        if where in ("bench_scenarios.py", "run.py") or "stepback" in args:
            continue
        targets = [a.strip("'\"") for a in args.split() if not a.startswith("-")][:1]  # the target; prose after it
        assert targets, (where, args)
        for t in targets:
            m = re.fullmatch(r"\.(?:\[([a-z,]+)\])?", t)
            if m:
                assert all(e in extras for e in (m.group(1) or "").split(",") if e), (where, t)
            else:
                assert t in reqs and not t.startswith("git-ckpt"), (where, t)


def test_mcp_install_hint_runs(repo, tmp_path):
    """Input 3: the hint `git ckpt mcp` prints without the SDK is a command that works here (run
    offline: the SDK is already present in the test venv, so pip has nothing to fetch)."""
    import shlex
    import subprocess

    from conftest import run

    fake = tmp_path / "fake"
    (fake / "mcp").mkdir(parents=True)
    (fake / "mcp" / "__init__.py").write_text("raise ImportError('no mcp here')\n")
    res = run(["git", "ckpt", "mcp"], repo, env={"PYTHONPATH": str(fake)}, check=False)
    hint = res.stderr.decode().splitlines()[1]
    cmd = shlex.split(hint.removeprefix("hint: ").split(" (or,", 1)[0])
    proc = subprocess.run([*cmd, "--no-index", "-q"], cwd=repo, capture_output=True)
    assert proc.returncode == 0, proc


def _two_people(tmp_path):
    """A bare remote; alice pushed task `share` (1 checkpoint); bob cloned and fetched."""
    from conftest import init_repo

    remote = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    alice = init_repo(tmp_path / "alice")
    git(alice, "remote", "add", "origin", str(remote))
    git(alice, "push", "-q", "origin", "main")
    ckpt(alice, "task", "start", "share", "--goal", "alice's goal")
    (alice / "a.txt").write_text("alice\n")
    ckpt(alice, "save", "-m", "alice one")
    ckpt(alice, "push")
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(remote), str(bob))
    res = ckpt(bob, "fetch")
    assert "origin:share/1" in res.out
    return alice, bob


def test_list_remote_shows_every_fetched_task(tmp_path):
    """Input 5: right after fetch, `list --remote origin` shows the teammate's tasks (their
    names are not yours); `list` of an empty own task points at them; --task narrows."""
    _alice, bob = _two_people(tmp_path)
    out = ckpt(bob, "list", "--remote", "origin").out
    assert re.fullmatch(r"  origin:share/1 +\S+ +manual +alice one\n", out), out
    def same(text):
        return re.sub(r" +\d+[smhd] ", " AGE ", text)

    assert same(ckpt(bob, "list", "--remote", "origin", "--task", "share").out) == same(out)
    assert same(ckpt(bob, "list", "--remote", "origin", "--all").out) == same(out)
    assert ckpt(bob, "list", "--remote", "origin", "--task", "other", rc=4).err == \
        "error: no task origin:other\nhint: the tasks are origin:share; git ckpt list --remote origin shows every checkpoint\n"
    # an unconfigured remote: the error push and fetch give, with a hint that works
    assert ckpt(bob, "list", "--remote", "upstream", rc=2).err == (
        "error: 'upstream' is not a configured remote\nhint: git remote add upstream URL adds it (git remote -v lists the remotes)\n")
    assert ckpt(bob, "list").out == "no checkpoints in task default\nfetched tasks: origin:share (git ckpt list --remote origin)\n"
    js = ckpt(bob, "list", "--remote", "origin", "--json").json()["result"]
    assert [r["id"] for r in js] == ["origin:share/1"]


def test_task_start_warns_on_a_fetched_name_and_a_replaced_goal(tmp_path):
    """Input 6: `task start NAME` when origin:NAME was fetched warns (a later push would be
    refused); starting an existing task says so, and a different --goal says what it replaced."""
    _alice, bob = _two_people(tmp_path)
    res = ckpt(bob, "task", "start", "share")
    assert res.err.startswith("warning: origin:share already exists (fetched); pushing a task of the same name would be refused")
    assert "git ckpt restore origin:share/1" in res.err and res.err.count("\n") == 1
    assert res.out == "task share is now current\n"
    fresh = ckpt(bob, "task", "start", "mine", "--goal", "first goal")
    assert fresh.err == "" and fresh.out == "task mine is now current: first goal\n"
    (bob / "b.txt").write_text("b\n")
    ckpt(bob, "save", "-m", "one")
    again = ckpt(bob, "task", "start", "mine")
    assert again.err == "" and again.out == "task mine is now current (existing: 1 checkpoint(s)): first goal\n"
    same = ckpt(bob, "task", "start", "mine", "--goal", "first goal")
    assert same.err == ""
    changed = ckpt(bob, "task", "start", "mine", "--goal", "second goal")
    assert changed.err == "warning: task mine already exists (1 checkpoint(s)); its goal 'first goal' is replaced by 'second goal'\n"
    assert ckpt(bob, "task", "show", "--json").json()["result"]["goal"] == "second goal"
    js = ckpt(bob, "task", "start", "share", "--json")
    assert js.err == "" and "already exists (fetched)" in js.json()["result"]["warnings"][0]


def test_overlay_warnings_once_per_path_per_task(repo):
    """Input 7: the `.env` and size-cap warnings come once per path per task, not on every save
    (every agent turn); a new path warns again, and so does another task."""
    (repo / ".gitignore").write_text(".env\nbig.bin\nsecrets/\n")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = [".env", "big.bin", "secrets/"]\nmax_file_size = "1KiB"\n')
    git(repo, "add", ".gitignore", ".ckpt.toml")
    git(repo, "commit", "-q", "-m", "cfg")
    (repo / ".env").write_text("TOKEN=1\n")
    (repo / "big.bin").write_bytes(b"x" * 4096)
    first = ckpt(repo, "save", "-m", "one")
    assert first.err == ("warning: overlay: left out likely-secret files: .env (to keep them: allow_secrets = true under [overlay] in .ckpt.toml, or git config ckpt.overlay.allowSecrets true)\n"
                         "warning: skipped files over the size limit: big.bin (to keep them, raise the limit: max_file_size = \"500MiB\" under [overlay] in .ckpt.toml, or git config ckpt.overlay.maxFileSize 500MiB)\n")
    for i in range(3):  # every agent turn
        (repo / "work.txt").write_text(f"turn {i}\n")
        res = ckpt(repo, "save", "--kind", "auto", "-m", f"turn {i}")
        assert res.err == "" and res.out.startswith("checkpoint saved:"), res
    (repo / "secrets").mkdir()
    (repo / "secrets" / "id_rsa").write_text("key\n")
    (repo / "work.txt").write_text("more\n")
    res = ckpt(repo, "save", "-m", "new secret")
    assert res.err == "warning: overlay: left out likely-secret files: secrets/id_rsa (to keep them: allow_secrets = true under [overlay] in .ckpt.toml, or git config ckpt.overlay.allowSecrets true)\n"
    ckpt(repo, "task", "start", "other")
    other = ckpt(repo, "save", "-m", "x")
    assert ".env" in other.err and "big.bin" in other.err and "secrets/id_rsa" in other.err


def test_save_without_message_stores_a_change_summary(repo):
    """Input 7: `save` without -m stores a summary of the changes since `@` (the latest here;
    since HEAD for the first), which list and show print."""
    (repo / "README").write_text("changed\n")
    (repo / "new.py").write_text("x\n")
    ckpt(repo, "save")
    for i in range(5):
        (repo / f"f{i}.txt").write_text("f\n")
    git(repo, "rm", "-q", "--cached", "README")
    ckpt(repo, "save")
    (repo / "f0.txt").write_text("g\n")
    ckpt(repo, "save", "-m", "explicit")
    msgs = [r["message"] for r in ckpt(repo, "list", "--json").json()["result"]]
    assert msgs == ["M README, A new.py", "A f0.txt, A f1.txt, A f2.txt (+2 more)", "explicit"]
    assert "message:  M README, A new.py\n" in ckpt(repo, "show", "1").out
    listed = ckpt(repo, "list").out.splitlines()
    assert listed[0].endswith("manual      M README, A new.py")


def _on_a_terminal(repo, *args, env=None, input=None):
    """Run `git ckpt ARGS` with stderr on a pseudo-terminal (and ``input`` bytes on stdin);
    returns (rc, stdout, stderr text)."""
    import os
    import pty
    import subprocess

    master, slave = pty.openpty()
    full = dict(os.environ, **(env or {}))
    proc = subprocess.Popen(["git", "ckpt", *args], cwd=repo, stdout=subprocess.PIPE, stderr=slave, env=full,
                            stdin=subprocess.PIPE if input is not None else None)
    if input is not None:
        proc.stdin.write(input)
        proc.stdin.close()
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    out = proc.stdout.read()
    rc = proc.wait()
    os.close(master)
    return rc, out.decode(), b"".join(chunks).decode().replace("\r\n", "\n")


def _many_files(repo, n=2100):
    for i in range(n):
        d = repo / f"d{i % 30}"
        d.mkdir(exist_ok=True)
        (d / f"f{i}.txt").write_text(f"{i}\n")


def test_progress_only_on_a_terminal_and_never_under_json(repo):
    """Input 8: a restore of many files shows `restore: writing files: N% (k/n)` on a terminal
    (the one-second delay set to 0 here, instead of a slow machine), ending `, done.`; nothing
    when stderr is a pipe, under --json, or with GIT_CKPT_PROGRESS=0."""
    _many_files(repo)
    ckpt(repo, "save", "-m", "many")
    now = {"GIT_CKPT_PROGRESS_DELAY": "0"}
    git(repo, "rm", "-q", "-r", "--cached", ".")
    for d in repo.glob("d*"):
        import shutil

        shutil.rmtree(d)
    rc, out, err = _on_a_terminal(repo, "restore", "@", env=now)
    assert rc == 0 and "restored default/1" in out, (out, err)
    assert "\rrestore: writing files: 100% (2100/2100), done.\n" in err, err
    assert "restore: writing files: 95% (2000/2100)" in err, err
    assert (repo / "d0" / "f0.txt").read_text() == "0\n"
    rc, out, err = _on_a_terminal(repo, "check", "--all", env=now)
    assert rc == 0 and "check: checkpoints: 100% (" in err and err.endswith(", done.\n"), err
    for quiet in (["check", "--all", "--json"],):
        rc, out, err = _on_a_terminal(repo, *quiet, env=now)
        assert rc == 0 and "check:" not in err and '"schema"' in out, err
    rc, out, err = _on_a_terminal(repo, "check", "--all", env=dict(now, GIT_CKPT_PROGRESS="0"))
    assert rc == 0 and err == "", err
    piped = ckpt(repo, "check", "--all", env=now)
    assert "check:" not in piped.err and "%" not in piped.err
    rc, out, err = _on_a_terminal(repo, "check", "--all")  # the default one-second delay: a quick check is silent
    assert rc == 0 and ("check:" not in err or err.endswith(", done.\n")), err


def test_no_progress_in_hooks(repo):
    """Input 8: the commands hooks run never print progress, even on a terminal."""
    ckpt(repo, "agent", "install", "codex")
    (repo / "x").write_text("x\n")
    rc, out, err = _on_a_terminal(repo, "agent", "hook", "codex", "turn", env={"GIT_CKPT_PROGRESS_DELAY": "0"},
                                  input=b'{"session_id": "0199a2b3", "hook_event_name": "Stop"}')
    assert rc == 0 and err == "" and out == ""
    rc, out, err = _on_a_terminal(repo, "verify-commit", "HEAD", env={"GIT_CKPT_PROGRESS_DELAY": "0"})
    assert "%" not in err and "done." not in err


def _conflicted(repo):
    """A merge of `other` into main stopped on a conflict in README."""
    return merge_stopped_on_conflict(repo, "README", branch="other")


def test_restore_brings_back_merge_head_and_undo_removes_it(repo):
    """Input 11: a checkpoint saved mid-merge restores the conflict stages *and* MERGE_HEAD, so
    `git commit` records the merge; undo goes back to no merge; a second undo to the merge
    again; a merge of the user's own is still refused (exit 5)."""
    from conftest import index_state

    theirs = _conflicted(repo)
    (repo / "README").write_text("resolved halfway\n")
    ckpt(repo, "save", "-m", "mid-merge")
    mid_index = index_state(repo)
    res = ckpt(repo, "restore", "@", rc=5)  # the user's own merge in progress
    assert "a merge is in progress" in res.err
    git(repo, "merge", "--abort")
    assert not (repo / ".git/MERGE_HEAD").exists()
    out = ckpt(repo, "restore", "@")
    assert out.err == ""
    assert (repo / ".git/MERGE_HEAD").read_text() == theirs + "\n"
    assert (repo / ".git/MERGE_MSG").read_text().startswith("Merge ")
    assert index_state(repo) == mid_index and (repo / "README").read_text() == "resolved halfway\n"
    undone = ckpt(repo, "undo")
    assert "restored default/2" in undone.out or "default/" in undone.out
    assert not (repo / ".git/MERGE_HEAD").exists() and not (repo / ".git/MERGE_MSG").exists()
    ckpt(repo, "undo")
    assert (repo / ".git/MERGE_HEAD").read_text() == theirs + "\n"
    git(repo, "add", "README")
    git(repo, "commit", "-q", "--no-edit")
    parents = git(repo, "rev-list", "--parents", "-n1", "HEAD").decode().split()
    assert parents[2] == theirs and not (repo / ".git/MERGE_HEAD").exists()


def test_restore_mid_merge_checkpoint_after_head_moved_says_why_not(repo):
    """Input 11 (sibling): HEAD moved since the save: the stages come back, MERGE_HEAD does not,
    and a warning says why and what brings it back (--reset-head)."""
    theirs = _conflicted(repo)
    ckpt(repo, "save", "-m", "mid-merge")
    git(repo, "merge", "--abort")
    (repo / "new").write_text("n\n")
    git(repo, "add", "new")
    git(repo, "commit", "-q", "-m", "moved on")
    res = ckpt(repo, "restore", "1")
    assert "MERGE_HEAD is not brought back because HEAD moved since (git ckpt restore default/1 --reset-head" in res.err
    assert not (repo / ".git/MERGE_HEAD").exists()
    ckpt(repo, "undo")
    ckpt(repo, "restore", "1", "--reset-head")
    assert (repo / ".git/MERGE_HEAD").read_text() == theirs + "\n"


@pytest.mark.parametrize("jump", ["undo", "restore", "undo twice"])
def test_save_without_message_summarises_what_diff_shows(repo, jump):
    """Walkthrough 19: after a restore or undo, `@` is the checkpoint jumped to, not the latest;
    the summary of `save` without -m was against the latest (`M a.py, D junk.py, A t.py` where
    `git ckpt diff` showed `a.py` alone).  It is against `@`, the checkpoint diff compares with."""
    (repo / "a.py").write_text("a\n")
    (repo / "t.py").write_text("t\n")
    ckpt(repo, "save", "-m", "good")
    (repo / "t.py").unlink()
    (repo / "junk.py").write_text("junk\n")
    if jump == "restore":
        ckpt(repo, "save", "-m", "broken")
        ckpt(repo, "restore", "1")
    else:
        ckpt(repo, "restore", "@")
        ckpt(repo, "undo")
        if jump == "undo twice":
            ckpt(repo, "undo")
    (repo / "a.py").write_text("a3\n")
    changed = ckpt(repo, "diff", "--name-status").out
    summary = ckpt(repo, "save").out
    cid = summary.split(": ")[1].strip()
    message = ckpt(repo, "show", cid, "--json").json()["result"]["manifest"]["message"]
    assert (changed, message) == ("M\ta.py\n", "M a.py")
