"""The second new-user walkthrough (issue 15, round 2): every difference it found is a test here,
checked across every command it applies to (real repositories, the real ``git ckpt``)."""

from __future__ import annotations

import json
import os

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


@pytest.mark.parametrize("how", ["verify", "verify-only", "attempt"])
def test_a_forced_promotion_its_verifiers_pass_later_is_recorded_as_earned(repo, how):
    """Walkthrough 28: after `promote --force`, a passing verify said "is already promoted" and
    the ledger kept only the forced promotion.  The promotion is logged again, not forced, once
    (by verify, the last missing verifier's verify --only, or attempt, whichever backs it first);
    after that it is already promoted."""
    from test_verify import verifier, write_config

    write_config(repo, verifier("t", ["true"]) + (verifier("u", ["true"]) if how == "verify-only" else ""))
    ckpt(repo, "save", "-m", "one")
    if how == "verify-only":
        assert "not promoted: required verifiers without a passing result: u" in ckpt(repo, "verify", "--only", "t", rc=None).out
    ckpt(repo, "promote", "--force")
    said = "promoted default/1 (its verifiers passed; it was promoted by force before)"
    if how == "attempt":
        assert said in ckpt(repo, "attempt", "--", "true").out.splitlines()
    elif how == "verify":
        assert ckpt(repo, "verify").out.splitlines()[-1] == said
    else:
        res = ckpt(repo, "verify", "--only", "u", "--json").json()["result"]
        assert (res["promoted"], res["already_promoted"], res["earned"]) == ("default/1", False, True), res
    promotes = [e for e in (json.loads(git(repo, "cat-file", "blob", f"refs/ckpt/default/log~{n}:event.json"))
                            for n in range(int(git(repo, "rev-list", "--count", "refs/ckpt/default/log")))) if e["type"] == "promote"]
    assert [(e["data"]["id"], e["data"]["forced"]) for e in promotes] == [("default/1", False), ("default/1", True)], promotes
    assert ckpt(repo, "verify").out.splitlines()[-1] == "default/1 is already promoted"
    assert ckpt(repo, "promote").out == "default/1 is already promoted\n"
    assert ckpt(repo, "log", "--verify").out.startswith("ledger of default: intact")


# ------------------------------------------------------------------ 3: hints name keys git config takes


def _git_config_hints(text: str) -> list[tuple[str, str]]:
    import re

    return re.findall(r"git config (ckpt\.[A-Za-z0-9.]+) (\S+?)\)?(?=[\s,;)]|$)", text)


def test_every_git_config_key_a_hint_can_name_is_valid_and_read(repo):
    """Every setting hints can name (config.GIT_KEYS, which config.setting uses): `git config`
    accepts the key (no underscore) and git ckpt reads it."""
    from git_ckpt import config as config_mod
    from git_ckpt.gitcore import Repo

    values = {"ckpt.overlay.include": "tmp/", "ckpt.overlay.exclude": "cache/", "ckpt.overlay.maxFileSize": "7MiB",
              "ckpt.overlay.allowSecrets": "true", "ckpt.retention.keep": "7", "ckpt.retention.olderThan": "9d",
              "ckpt.attempt.onFailure": "keep", "ckpt.gate.since": "HEAD", "ckpt.gate.isolated": "true"}
    assert set(values) == set(config_mod.GIT_KEYS.values())
    for key, value in values.items():
        assert "_" not in key
        git(repo, "config", key, value)  # git refuses an invalid key (exit 1)
    cfg = config_mod.load(Repo.discover(str(repo)))
    assert "tmp/" in cfg.overlay.include and "cache/" in cfg.overlay.exclude
    assert cfg.max_file_size == 7 * 1024 * 1024 and cfg.overlay.allow_secrets is True
    assert cfg.retention.keep == 7 and cfg.retention.older_than == "9d"
    assert cfg.attempt.on_failure == "keep" and cfg.gate.since == "HEAD" and cfg.gate.isolated is True
    # and no hint text in the code names a ckpt.* key outside that table (or with an underscore)
    import pathlib
    import re

    import git_ckpt

    named = set()
    for path in pathlib.Path(git_ckpt.__file__).parent.rglob("*.py"):
        named |= set(re.findall(r"git config (ckpt\.[A-Za-z_.]+[A-Za-z])", path.read_text()))
    allowed = set(values) | {"ckpt.gate", "ckpt.verifier.NAME.command", "ckpt.gate.since"}
    assert {k for k in named if not k.startswith("ckpt.verifier")} <= allowed, named


def test_the_overlay_hints_work_when_followed(repo):
    """The walkthrough's case: the secret and size warnings name a git config command; run
    exactly that with real git and the next save keeps the file."""
    (repo / ".gitignore").write_text(".env\nbig.bin\n")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = [".env", "big.bin"]\nmax_file_size = "1KiB"\n')
    git(repo, "add", ".gitignore", ".ckpt.toml")
    git(repo, "commit", "-q", "-m", "cfg")
    (repo / ".env").write_text("TOKEN=1\n")
    (repo / "big.bin").write_bytes(b"x" * 4096)
    res = ckpt(repo, "save", "-m", "one")
    hinted = _git_config_hints(res.err)
    assert [k for k, _v in hinted] == ["ckpt.overlay.allowSecrets", "ckpt.overlay.maxFileSize"], res.err
    for key, value in hinted:
        git(repo, "config", key, value)
    (repo / "work.txt").write_text("again\n")
    res = ckpt(repo, "save", "-m", "two")
    assert res.err == ""
    shown = ckpt(repo, "show", "--json").json()["result"]
    assert {".env", "big.bin"} <= {f["path"] for f in shown["overlay"]}, shown["overlay"]


def test_attempt_keep_message_names_a_working_key(repo):
    """`attempt` under on_failure = keep names the setting; the git config key it names works."""
    from test_verify import verifier, write_config

    write_config(repo, verifier("t", ["false"]))
    git(repo, "config", "ckpt.attempt.onFailure", "keep")
    res = ckpt(repo, "attempt", "-m", "try", "--", "sh", "-c", "echo x > f.txt", rc=1)
    assert "(on_failure = \"keep\" under [attempt] in .ckpt.toml, or git config ckpt.attempt.onFailure keep)" in res.out
    assert (repo / "f.txt").exists()  # kept, as the git config said


# ------------------------------------------------------------------ 4: hints name git ckpt's own commands


def test_check_hint_names_drop_and_drop_removes_damage(repo):
    """`check` on a damaged checkpoint hints `git ckpt drop T/N` (not git update-ref -d), and
    that command works on a checkpoint that cannot be read, recording a drop event."""
    ckpt(repo, "save", "-m", "one")
    (repo / "b.txt").write_text("b\n")
    ckpt(repo, "save", "-m", "two")
    bad_manifest = git(repo, "hash-object", "-w", "--stdin", input=b"{bad").decode().strip()
    meta = git(repo, "mktree", input=f"100644 blob {bad_manifest}\tmanifest.json\n".encode()).decode().strip()
    meta_commit = git(repo, "commit-tree", meta, "-m", "meta").decode().strip()
    c = git(repo, "rev-parse", "refs/ckpt/default/1").decode().strip()
    parents = git(repo, "rev-list", "--parents", "-n", "1", c).decode().split()[1:]
    forged = git(repo, "commit-tree", f"{c}^{{tree}}", "-p", parents[0], "-p", parents[1], "-p", meta_commit, "-m", "x").decode().strip()
    git(repo, "update-ref", "refs/ckpt/default/1", forged)
    res = ckpt(repo, "check", rc=1)
    assert res.err.endswith("hint: get a good copy from a teammate (git ckpt fetch REMOTE), or drop the damaged ones: git ckpt drop default/1\n"), res
    assert "update-ref" not in res.err
    out = ckpt(repo, "drop", "default/1").out
    assert out.startswith(f"dropped default/1 ({forged[:12]}) (damaged: it could not be read)\n")
    assert git(repo, "for-each-ref", "refs/ckpt/default/1") == b""
    assert "dropped default/1" in ckpt(repo, "log").out
    assert ckpt(repo, "check").out.startswith("ok       default/2")
    ckpt(repo, "log", "--verify")


def test_no_hint_names_raw_ref_surgery():
    """A sweep of every error hint in the code: none tells the user to delete refs/ckpt with
    git update-ref -d (git ckpt drop does that, with a ledger record)."""
    import pathlib
    import re

    import git_ckpt

    for path in pathlib.Path(git_ckpt.__file__).parent.rglob("*.py"):
        for m in re.finditer(r'"[^"\n]*update-ref -d[^"\n]*"', path.read_text()):
            assert "refs/ckpt" not in m.group(0) and "damaged" not in m.group(0), (path, m.group(0))


# ------------------------------------------------------------------ 5: unknown tasks


def test_unknown_task_gets_did_you_mean_everywhere(repo):
    """`restore nosuch/1` hinted `list --task nosuch`; now every command naming a task that
    does not exist says so (exit 4) and hints a close name, else the tasks there are, and
    `git ckpt list --all`."""
    ckpt(repo, "task", "start", "fix-auth")
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "task", "start", "docs")
    ckpt(repo, "save", "-m", "two")
    close = "hint: did you mean fix-auth? git ckpt task list shows every task\n"
    far = "hint: the tasks are docs, fix-auth; git ckpt task list shows every task\n"
    for args, msg in ((["restore", "fix-aut/1"], "no checkpoint fix-aut/1: there is no task fix-aut"),
                      (["show", "fix-aut/@"], "no task fix-aut"), (["diff", "fix-aut/promoted"], "no task fix-aut"),
                      (["verify", "fix-aut/1"], "no checkpoint fix-aut/1: there is no task fix-aut"),
                      (["list", "--task", "fix-aut"], "no task fix-aut"), (["log", "--task", "fix-aut"], "no task fix-aut"),
                      (["handoff", "fix-aut"], "no task fix-aut"), (["stats", "fix-aut"], "no task fix-aut"),
                      (["check", "--task", "fix-aut"], "no task fix-aut"), (["task", "show", "fix-aut"], "no task fix-aut"),
                      (["task", "done", "fix-aut"], "no task fix-aut"), (["gc", "--task", "fix-aut", "--dry-run"], "no task fix-aut"),
                      (["report", "--task", "fix-aut", "--html", "r.html"], "no task fix-aut")):
        res = ckpt(repo, *args, rc=4)
        assert res.err == f"error: {msg}\n{close}", (args, res)
    res = ckpt(repo, "restore", "nosuch/1", rc=4)
    assert res.err == f"error: no checkpoint nosuch/1: there is no task nosuch\n{far}"
    assert not (repo / "r.html").exists()
    # a known task without that number: its latest, as evidence suggests (eighth walkthrough)
    res = ckpt(repo, "restore", "docs/9", rc=4)
    assert res.err == ("error: no checkpoint docs/9\n"
                       "hint: did you mean docs/1 (the latest of docs)? git ckpt list --task docs shows its checkpoints\n")


# ------------------------------------------------------------------ 7 and 11: a ref git ckpt did not make


def test_non_checkpoint_under_refs_ckpt_is_corrupt_everywhere(repo):
    """A plain commit placed under refs/ckpt is corrupt stored data: exit 7 from every command
    that reads it, naming the ref as not made by git ckpt; `log --verify` says the same (not
    "ledger is broken"); a plain revision that is not a checkpoint stays unknown (exit 4)."""
    ckpt(repo, "save", "-m", "one")
    git(repo, "update-ref", "refs/ckpt/default/5", "HEAD")
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    msg = f"error: refs/ckpt/default/5 names {head[:12]}, which is not a checkpoint commit: the ref was not made by git ckpt\n"
    for args in (["show", "default/5"], ["show"], ["diff", "5"], ["restore", "default/5"], ["verify", "@"],
                 ["promote", "5"], ["restore", "--dry-run", "@"]):
        res = ckpt(repo, *args, rc=None)
        assert res.rc == 7 and res.err == msg + "hint: git ckpt drop default/5 removes the ref (the ledger records it)\n", (args, res)
    res = ckpt(repo, "check", "default/5", rc=1)  # check: damage found is its "no" (exit 1)
    assert res.out == "DAMAGED  default/5: " + msg[len("error: "):]
    listed = ckpt(repo, "list", "--json").json()["result"]
    assert listed[-1]["id"] == "default/5" and listed[-1]["kind"] == "corrupt"
    res = ckpt(repo, "log", "--verify", rc=1)
    assert res.err == (f"error: task default: refs/ckpt/default/5 names {head[:12]}, which is not a checkpoint commit: "
                       "the ref was not made by git ckpt\nhint: git ckpt drop default/5 removes it (the ledger records that)\n"), res
    res = ckpt(repo, "show", head, rc=4)
    assert res.err == f"error: {head} is not a checkpoint commit\nhint: git ckpt list shows the checkpoints\n"
    ckpt(repo, "drop", "default/5")
    ckpt(repo, "log", "--verify")


# ------------------------------------------------------------------ 12: a refused merge says how to finish


def test_refused_merge_hint_says_to_finish_with_git_commit(tmp_path):
    """The gate's refusal during a merge (pre-merge-commit for `git merge`, pre-commit for the
    `git commit` that concludes it) names the fix and then `git commit`; following the hint
    to the letter concludes the merge.  Outside a merge the hint is unchanged."""
    from test_gate_history import _merge, gated, refused_by_gate, run

    repo, _remote = gated(tmp_path)
    finish = ", then finish the merge with git commit (it stays in progress until then)\n"
    proc = _merge(repo)
    refused_by_gate(proc)
    assert (repo / ".git" / "MERGE_HEAD").exists()
    hint = next(line for line in proc.stderr.splitlines(keepends=True) if line.startswith("hint: git ckpt"))
    assert hint == "hint: git ckpt save && git ckpt verify" + finish, proc.stderr
    proc = run(repo, "commit", "--no-edit")  # the concluding commit, before verifying: refused the same way
    refused_by_gate(proc)
    assert "hint: git ckpt save && git ckpt verify" + finish in proc.stderr, proc.stderr
    ckpt(repo, "save", "-m", "merge result")
    ckpt(repo, "verify")
    proc = run(repo, "commit", "--no-edit")
    assert proc.returncode == 0, proc
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert len(git(repo, "rev-list", "--parents", "-n1", "HEAD").split()) == 3
    # not in a merge: the hint is only the fix
    (repo / "late.txt").write_text("late\n")
    git(repo, "add", "late.txt")
    proc = run(repo, "commit", "-m", "late")
    refused_by_gate(proc)
    assert proc.stderr.endswith("hint: git ckpt save && git ckpt verify\n"), proc.stderr


# ------------------------------------------------------------------ 15: list --remote aligned


def _columns(out: str) -> set[int]:
    """Where the message column starts on each row (after id, age and kind)."""
    import re

    starts = set()
    for line in out.splitlines():
        m = re.match(r"^[* ] (\S+)( +)(\S+)  (\S+)( +)(msg-\d+)", line)
        assert m, line
        starts.add(m.start(6))
    return starts


def test_list_remote_columns_align_like_list(tmp_path):
    """`list --remote R` (ids `R:T/N`, longer than the 20 columns `list` reserves) and `list`
    of a long task name: every row's message starts in the same column."""
    from test_remote import _team

    _bare, alice, bob = _team(tmp_path)
    for task in ("a", "a-rather-long-task-name"):
        ckpt(alice, "task", "start", task)
        for i in range(1, 11):
            (alice / "f.txt").write_text(f"{task} {i}\n")
            ckpt(alice, "save", "-m", f"msg-{i}")
    ckpt(alice, "push", "--all")
    ckpt(bob, "fetch")
    out = ckpt(bob, "list", "--remote", "origin").out
    assert len(out.splitlines()) == 20 and "origin:a-rather-long-task-name/10" in out
    assert len(_columns(out)) == 1, out
    assert len(_columns(ckpt(alice, "list", "--all").out)) == 1
    short = ckpt(alice, "list", "--task", "a").out  # short ids keep the usual 20 columns
    assert _columns(short) == {2 + 20 + 1 + 4 + 2 + 11 + 1}, short


# ------------------------------------------------------------------ 8: report counts what exists


def test_report_and_graph_do_not_count_pruned_or_dropped(repo, tmp_path):
    """`report --html` (page, summary line, --json) and `log --graph` count only checkpoints
    that still exist; pruned (gc) and dropped ones stay on the timeline, marked as gone."""
    ckpt(repo, "task", "start", "t")
    for i in range(1, 6):
        (repo / "f").write_text(f"{i}\n")
        ckpt(repo, "save", "-m", f"save {i}")
    pruned = [p["id"] for p in ckpt(repo, "gc", "--keep", "2", "--older-than", "0d", "--json").json()["result"]["pruned"]]
    assert pruned == ["t/1", "t/2", "t/3"]
    ckpt(repo, "drop", "t/4")
    page = tmp_path / "r.html"
    res = ckpt(repo, "report", "--html", str(page))
    assert res.out == f"wrote {page}: task t, 1 checkpoint(s) (4 more pruned or dropped), 0 jump(s)\n"
    env = ckpt(repo, "report", "--html", str(page), "--json").json()["result"]
    assert env["checkpoints"] == 1 and env["pruned"] == 4
    text = page.read_text()
    assert '<p class="meta">1 checkpoint(s) (4 more pruned or dropped), 0 verifier run(s), 0 jump(s)' in text
    assert text.count(" gone\" id=") == 4 and text.count("(pruned or dropped: no longer a checkpoint here)") == 4
    graph = ckpt(repo, "log", "--graph").out
    assert sum("[pruned]" in ln for ln in graph.splitlines()) == 4 and "t/5" in graph
    assert not any("[pruned]" in ln for ln in graph.splitlines() if "t/5 " in ln)


# ------------------------------------------------------------------ 1: ignored in the state left


def test_file_ignored_only_by_the_rules_left_is_kept_said_and_stays_ignored(repo):
    """Restoring a checkpoint whose .gitignore lacks a rule the current one has: the files that
    rule ignores (a file and a whole directory) are kept, the plan (dry run and the real
    restore's report, text and --json) says so and why, and afterwards status, diff and the next
    save treat them as the ignored files they were (nothing shows as added, nothing is
    archived); `git add` takes one in as usual; undo brings back the rules that ignore them."""
    (repo / "a.txt").write_text("a\n")
    ckpt(repo, "save", "-m", "no rules")
    (repo / ".gitignore").write_text("build.log\ncache/\n")
    (repo / "build.log").write_text("log\n")
    (repo / "cache").mkdir()
    (repo / "cache" / "blob").write_text("c\n")
    ckpt(repo, "save", "-m", "with rules")
    keep = ["keep    build.log (ignored by the rules of the state left; still treated as ignored: git add it to track it)",
            "keep    cache/ (ignored by the rules of the state left; still treated as ignored: git add it to track it)"]
    dry = ckpt(repo, "restore", "--dry-run", "1").out.splitlines()
    assert dry[:4] == ["would restore default/1:", "delete  .gitignore", *keep] and dry[4].startswith("leave   "), dry
    plan = ckpt(repo, "restore", "--dry-run", "1", "--json").json()["result"]["plan"]
    assert plan["keep_ignored_left"] == ["build.log", "cache/"] and plan["delete"] == [".gitignore"]
    out = ckpt(repo, "restore", "1").out.splitlines()
    assert out == ["current state matches default/2; not saved again", "restored default/1", *keep], out
    assert (repo / "build.log").read_text() == "log\n" and (repo / "cache" / "blob").read_text() == "c\n"
    assert "worktree:  matches default/1 (@)\n" in ckpt(repo, "status").out
    assert ckpt(repo, "diff").out == ""
    assert ckpt(repo, "diff", "--json").json()["result"]["changes"] == []
    (repo / "a.txt").write_text("a2\n")
    ckpt(repo, "save", "-m", "after")
    saved = git(repo, "ls-tree", "-r", "--name-only", "refs/ckpt/default/3").decode().split()
    assert "a.txt" in saved and not {"build.log", "cache/blob", ".gitignore"} & set(saved), saved
    # a second restore keeps them (they are still not ignored by any rule on disk); the record
    # names the files kept, so the plan now names the file kept in cache/
    assert ckpt(repo, "restore", "--dry-run", "1").out.splitlines()[-3:-1] == [keep[0], keep[1].replace("cache/ ", "cache/blob ")]
    # git add: tracked now, captured like any other file
    git(repo, "add", "build.log")
    ckpt(repo, "save", "-m", "tracked")
    assert "build.log" in git(repo, "ls-tree", "-r", "--name-only", "refs/ckpt/default/4").decode().split()
    # a restore whose rules ignore them again ends the record
    ckpt(repo, "restore", "2")
    assert not (repo / ".git" / "ckpt" / "kept-ignored").exists()  # ignored by the restored rules again
    assert "build.log" in (repo / ".gitignore").read_text() and (repo / "cache" / "blob").exists()


def test_a_file_created_later_in_a_kept_directory_is_saved(repo):
    """The record of what a restore kept as ignored names the files kept, not their directory: a
    file written into that directory afterwards is new work, and the next save holds it."""
    (repo / "a").write_text("a\n")
    (repo / ".gitignore").write_text("")
    ckpt(repo, "save", "-m", "rules without out/")
    (repo / ".gitignore").write_text("out/\n")
    ckpt(repo, "save", "-m", "rules with out/")
    (repo / "out" / "sub").mkdir(parents=True)
    (repo / "out" / "cache.bin").write_text("c\n")
    (repo / "out" / "sub" / "deep.bin").write_text("d\n")
    os.symlink("sub", repo / "out" / "link")
    out = ckpt(repo, "restore", "default/1").out
    assert "keep    out/ (ignored by the rules of the state left" in out
    assert sorted((repo / ".git" / "ckpt" / "kept-ignored").read_bytes().split(b"\0")) == \
        [b"", b"out/cache.bin", b"out/link", b"out/sub/deep.bin"]
    (repo / "out" / "real_work.py").write_text("REAL WORK\n")
    (repo / "out" / "sub" / "more.py").write_text("more\n")
    assert ckpt(repo, "status", "--json").json()["result"]["matches"] is None  # the new files are changes
    ckpt(repo, "save", "-m", "after")
    saved = git(repo, "ls-tree", "-r", "--name-only", "refs/ckpt/default/3").decode().split()
    assert saved == [".gitignore", "README", "a", "out/real_work.py", "out/sub/more.py"], saved


@pytest.mark.parametrize("args", [("log", "--task", ""), ("gc", "--task", "", "--keep", "0"), ("check", "--task", ""),
                                  ("list", "--task", ""), ("push", "--task", ""), ("report", "--html", "r.html", "--task", ""),
                                  ("save", "--task", ""), ("handoff", ""), ("stats", ""), ("task", "show", ""),
                                  ("log", "--graph", "--task", "")])
def test_an_empty_task_name_is_a_usage_error_not_the_current_task(repo, args):
    """Walkthrough 29: ``list --remote ''`` listed the local checkpoints (an empty name read as
    none given); its kind: ``--task "$TASK"`` with TASK unset made ``gc`` prune the current task.
    An empty task name is exit 2, one line, nothing changed."""
    ckpt(repo, "save", "-m", "one")
    refs = git(repo, "for-each-ref")
    res = ckpt(repo, *args, rc=2)
    assert res.err.splitlines()[0].startswith("error: invalid value for ") and res.err.splitlines()[0].endswith(": must not be empty"), res
    assert git(repo, "for-each-ref") == refs and res.out == ""


def test_an_empty_remote_name_is_no_configured_remote(repo):
    ckpt(repo, "save", "-m", "one")
    for args in (("list", "--remote", ""), ("push", ""), ("fetch", "")):
        res = ckpt(repo, *args, rc=2)
        assert res.err.splitlines()[0] == "error: '' is not a configured remote", (args, res)
