"""A tool people enjoy (issue 15): group help, whole summaries, "did you mean", hints that name
the right command, one word per verifier outcome, usage errors exit 2."""

from __future__ import annotations

import re

import pytest

from conftest import ckpt, git
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
    2,000-character error line), exit 2 (usage)."""
    res = ckpt(repo, *([group] if group else []), rc=2, fsck=False)
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
            assert f"No such command '{typo}'" in res.err and "Did you mean" in res.err, res
            assert f"'{name}'" in res.err.splitlines()[0], res
            assert res.err.count("\n") == 2 and res.err.splitlines()[1].startswith("hint: git ckpt"), res


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
    assert lines[0] == f"error: {spec}: task default has only 1 checkpoint(s)", res
    assert lines[1] == "hint: @ is the latest, @~0 the oldest; git ckpt list --task default shows them", res


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
    ckpt(repo, "verify", rc=127)
    listed = ckpt(repo, "list").out
    assert "[lint:undecided tests:could not run]" in listed, listed
    shown = ckpt(repo, "show").out
    results = shown.split("results:\n", 1)[1].splitlines()
    assert sorted(results) == sorted([
        "  tests: could not run (exit 127, 0.0 s) (2 times)", "  lint: undecided (exit 125, 0.0 s) (2 times)"]) or \
        all("could not run" in r or "undecided" in r for r in results), shown
    assert len(results) == len(set(results)), shown
    log = ckpt(repo, "log").out
    assert "verifier: tests ...... could not run on default/1" in log, log
    assert "...... error" not in log + shown + listed + v1.out


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
    assert res.err == "error: no command 'tsk'\nhint: git ckpt -h lists the commands\n"


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
