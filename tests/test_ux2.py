"""The second new-user walkthrough (issue 15, round 2): every difference it found is a test here,
checked across every command it applies to (real repositories, the real ``git ckpt``)."""

from __future__ import annotations

import json
import os
import subprocess

import click
import pytest

from conftest import ckpt, git

from git_ckpt.cli import cli


def _leaves(cmd: click.Command = cli, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every runnable command path (``("task", "start")``), from the click tree itself."""
    if not isinstance(cmd, click.Group):
        return [path]
    ctx = click.Context(cmd)
    out: list[tuple[str, ...]] = []
    for name in cmd.list_commands(ctx):
        sub = cmd.get_command(ctx, name)
        assert sub is not None
        out += _leaves(sub, path + (name,))
    return out


LEAVES = _leaves()
GROUPS = ["", "task", "hooks", "agent"]

# A bad input for each command that reaches past argument parsing: run outside any repository,
# these must fail with a domain error (not a repository, exit 3) ...
NOT_A_REPO = {
    ("attempt",): ["attempt", "--json", "--", "true"], ("drop",): ["drop", "1", "--json"],
    ("promote",): ["promote", "1", "--json"], ("report",): ["report", "--html", "x.html", "--json"],
    ("restore",): ["restore", "1", "--json"], ("task", "start"): ["task", "start", "x", "--json"],
    ("task", "note"): ["task", "note", "--next", "x", "--json"], ("verify-commit",): ["verify-commit", "HEAD", "--json"],
    ("agent", "install"): ["agent", "install", "codex", "--json"], ("agent", "uninstall"): ["agent", "uninstall", "codex", "--json"],
}
# ... and these have their own (they need no repository).
OWN_ERROR = {("completion",): (["completion", "tcsh", "--json"], 2, "usage"),
             ("help",): (["help", "nosuch", "--json"], 2, "usage")}


# ------------------------------------------------------------------ 13: a bare group is its help


@pytest.mark.parametrize("group", GROUPS)
def test_bare_group_prints_its_help_and_succeeds(repo, group):
    """`git ckpt`, `git ckpt task`, `hooks`, `agent`: the group's help on stdout, exit 0 (help
    asked for by naming only the group, as `git help`); `-h` prints the same."""
    words = [group] if group else []
    res = ckpt(repo, *words, rc=0, fsck=False)
    assert res.err == ""
    assert res.out == ckpt(repo, *words, "-h", fsck=False).out
    assert res.out.startswith(f"Usage: git ckpt{' ' + group if group else ''} [OPTIONS] COMMAND [ARGS]...\n")


# ------------------------------------------------------------------ 6: --json on every command


def test_every_command_has_json():
    """The README says every command has --json: each runnable command lists it in its -h."""
    assert len(LEAVES) > 30
    missing = [" ".join(p) for p in LEAVES
               if not any(isinstance(o, click.Option) and "--json" in o.opts for o in _cmd(p).params)]
    assert missing == []


def _cmd(path: tuple[str, ...]) -> click.Command:
    cmd: click.Command = cli
    for w in path:
        assert isinstance(cmd, click.Group)
        nxt = cmd.get_command(click.Context(cmd), w)
        assert nxt is not None
        cmd = nxt
    return cmd


def test_completion_and_help_json(repo):
    """The walkthrough's `git ckpt completion --json` (a usage error before) and `help --json`."""
    for shell in ("bash", "zsh", "fish"):
        env = ckpt(repo, "completion", shell, "--json", fsck=False).json()
        assert env["schema"] == "ckpt/1" and env["command"] == "completion"
        assert env["result"] == {"shell": shell, "script": ckpt(repo, "completion", shell, fsck=False).out}
    env = ckpt(repo, "help", "task", "start", "--json", fsck=False).json()
    assert env["result"]["command"] == "git ckpt task start"
    assert env["result"]["help"] + "\n" == ckpt(repo, "task", "start", "-h", fsck=False).out
    env = ckpt(repo, "help", "--json", fsck=False).json()
    assert env["result"]["manual_roff"].startswith(".TH") and "EXIT STATUS" in env["result"]["manual_roff"]


def test_global_json_position(repo):
    """`git ckpt --json CMD ...` is the command's own --json (one place for it, before the
    command, works for every command, groups' subcommands included)."""
    ckpt(repo, "save", "-m", "one")
    assert ckpt(repo, "--json", "list").out == ckpt(repo, "list", "--json").out
    assert ckpt(repo, "--json", "task", "list").out == ckpt(repo, "task", "list", "--json").out
    res = ckpt(repo, "--json", "show", "nosuch", rc=4)
    assert res.json()["error"]["code"] == "not-found" and res.err == ""


# ------------------------------------------------------------------ 14: one JSON document per error


def _one_error(res, rc: int, code: str, command: str) -> None:
    assert res.rc == rc, res
    assert res.err == "", res  # nothing repeated as human text
    assert res.out.count("\n") == 1, res  # exactly one document
    env = json.loads(res.out)
    assert set(env) == {"schema", "command", "error"} and env["schema"] == "ckpt/1", env
    assert env["command"] == command, env
    err = env["error"]
    assert set(err) == {"code", "message", "hint", "exit_code"} and err["exit_code"] == rc and err["code"] == code, env
    assert err["message"] and err["hint"], env


@pytest.mark.parametrize("path", LEAVES, ids=" ".join)
def test_json_errors_are_one_document_and_nothing_on_stderr(repo, tmp_path, path):
    """Under --json every command's failure is exactly one JSON document on stdout
    (``{"schema", "command", "error": {"code", "message", "hint", "exit_code"}}``), the same
    command name its result envelope uses, and stderr stays empty: a usage error (an unknown
    option) for every command, and a domain error (outside a repository) for every command
    that needs one."""
    name = " ".join(path)
    _one_error(ckpt(repo, *path, "--no-such-option", "--json", rc=None, fsck=False), 2, "usage", name)
    if path == ("agent", "hook"):
        return  # a hook never fails (exit 0 whatever happens: see the agent tests)
    if path in OWN_ERROR:
        args, rc, code = OWN_ERROR[path]
        _one_error(ckpt(repo, *args, rc=None, fsck=False), rc, code, name)
        return
    outside = tmp_path / "outside"
    outside.mkdir()
    args = NOT_A_REPO.get(path, [*path, "--json"])
    _one_error(ckpt(outside, *args, rc=None, fsck=False, env={"GIT_CEILING_DIRECTORIES": str(tmp_path)}), 3, "repository", name)


def test_json_domain_errors_in_a_repository(repo):
    """Errors of a real repository too: unknown checkpoint (4), malformed config (6)."""
    ckpt(repo, "save", "-m", "one")
    for args in (["show", "nosuch"], ["restore", "nosuch/1"], ["diff", "9"], ["verify", "nosuch"], ["drop", "7"]):
        _one_error(ckpt(repo, *args, "--json", rc=None), 4, "not-found", args[0])
    (repo / ".ckpt.toml").write_text("[overlay\n")
    _one_error(ckpt(repo, "save", "--json", rc=None), 6, "config", "save")


# ------------------------------------------------------------------ 2: promote --force says why


def test_promote_force_names_the_real_reason(repo):
    """`promote --force` under an untrusted .ckpt.toml says that is why it was forced (not
    "required verifiers have not passed" when they have); both reasons when both hold; the
    refusal without --force names the trust problem too."""
    from test_verify import verifier, write_config

    write_config(repo, verifier("t", ["true"]))
    ckpt(repo, "save", "-m", "one")
    assert ckpt(repo, "verify").out.endswith("promoted default/1\n")
    (repo / ".ckpt.toml").write_text(verifier("t", ["true"]) + "# edited\n")  # untrusted now
    res = ckpt(repo, "promote", "default/1", rc=9)
    assert res.err.startswith("error: .ckpt.toml is changed since you trusted it; default/1 was not promoted")
    out = ckpt(repo, "promote", "default/1", "--force").out
    assert out == ("promoted default/1 (forced: .ckpt.toml is changed since you trusted it, "
                   "so its required verifiers cannot be judged)\n")
    (repo / "new.txt").write_text("new\n")
    ckpt(repo, "save", "-m", "two")
    env = ckpt(repo, "promote", "--force", "--json").json()["result"]
    assert env["forced"] is True and env["why_forced"] == [
        ".ckpt.toml is changed since you trusted it, so its required verifiers cannot be judged",
        "required verifier t has no passing result on this content"]
    ckpt(repo, "trust")
    (repo / "new.txt").write_text("newer\n")
    ckpt(repo, "save", "-m", "three")
    assert ckpt(repo, "promote", "--force").out == "promoted default/3 (forced: required verifier t has no passing result on this content)\n"
