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
