"""git ckpt verify / promote / trust: evidence recorded as notes, promotion, trust, bisect exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import BIN, ckpt, git, worktree_state

PY = sys.executable


def write_config(repo: Path, text: str, *, trust: bool = True, commit: bool = True) -> None:
    """Write .ckpt.toml (and a .gitignore for caches), commit both, and trust the config."""
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\nfixtures/\n")
    (repo / ".ckpt.toml").write_text(text)
    if commit:
        git(repo, "add", ".gitignore", ".ckpt.toml")
        git(repo, "commit", "-q", "-m", "config")
    if trust:
        ckpt(repo, "trust")


def verifier(name: str, command, **extra) -> str:
    """A [[verifier]] TOML block."""
    cmd = json.dumps(command)
    lines = ["[[verifier]]", f"name = {json.dumps(name)}", f"command = {cmd}"]
    for k, v in extra.items():
        if isinstance(v, dict):
            val = "{" + ", ".join(f"{a} = {json.dumps(b)}" for a, b in v.items()) + "}"
        else:
            val = json.dumps(v)
        lines.append(f"{k} = {val}")
    return "\n".join(lines) + "\n\n"


def note_lines(repo: Path, ref: str) -> list[dict]:
    commit = git(repo, "rev-parse", ref).decode().strip()
    proc = subprocess.run(["git", "notes", "--ref=ckpt", "show", commit], cwd=repo, capture_output=True)
    if proc.returncode != 0:
        return []
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def promoted(repo: Path, task: str = "default") -> str | None:
    proc = subprocess.run(["git", "rev-parse", "-q", "--verify", f"refs/ckpt/{task}/promoted"], cwd=repo, capture_output=True)
    return proc.stdout.decode().strip() or None


def rev(repo: Path, name: str) -> str:
    return git(repo, "rev-parse", name).decode().strip()


def events(repo: Path, task: str = "default") -> list[dict]:
    out = []
    oid = rev(repo, f"refs/ckpt/{task}/log")
    while oid:
        out.append(json.loads(git(repo, "show", f"{oid}:event.json")))
        parents = git(repo, "rev-list", "--parents", "-n1", oid).decode().split()[1:]
        oid = parents[0] if parents else None
    return list(reversed(out))


# ---------------------------------------------------------------------------- evidence and promotion


def test_result_line_records_the_evidence_and_promotes(repo, tmp_path):
    write_config(repo, verifier("check", ["sh", "-c", "echo checking; cat README"], env={"MODE": "strict"}))
    ckpt(repo, "save", "-m", "one")
    res = ckpt(repo, "verify")
    assert res.out.splitlines()[0] == "checking"
    lines = res.out.splitlines()
    assert lines[2].startswith("verifier: check ...... passed (exit 0, ") and lines[2].endswith(" s)")
    assert lines[-1] == "promoted default/1"
    [line] = note_lines(repo, "refs/ckpt/default/1")
    cp_tree = rev(repo, "refs/ckpt/default/1^{tree}")
    assert set(line) == {"schema", "checkpoint", "verifier", "definition", "tree", "overlay", "status", "exit_code",
                         "duration", "started_at", "recorded_at", "host", "log", "reused", "required"}
    assert line["recorded_at"] >= line["started_at"]
    assert line["schema"] == "ckpt/1" and line["checkpoint"] == "default/1" and line["verifier"] == "check"
    assert line["tree"] == cp_tree and line["status"] == "passed" and line["exit_code"] == 0
    assert line["reused"] is False and line["required"] is True and len(line["definition"]) == 64
    assert line["started_at"].endswith("Z") and line["host"]
    assert git(repo, "cat-file", "blob", line["log"]) == b"checking\nreadme\n"
    assert promoted(repo) == rev(repo, "refs/ckpt/default/1")
    # the promoted ref keeps a reflog, and the ledger has the verify and promote events
    assert b"ckpt: promote default/1" in git(repo, "reflog", "show", "refs/ckpt/default/promoted")
    types = [e["type"] for e in events(repo)]
    assert types[-2:] == ["verify", "promote"]
    # git log --notes=ckpt shows the result
    assert b'"verifier":"check"' in git(repo, "log", "-1", "--notes=ckpt", "refs/ckpt/default/1")
    # list and status show verifier state and the promoted mark
    assert "* default/1" in ckpt(repo, "list").out and "[check:passed]" in ckpt(repo, "list").out
    assert "promoted:  default/1" in ckpt(repo, "status").out


def test_passing_result_is_reused_unless_rerun(repo, tmp_path):
    counter = tmp_path / "runs"
    write_config(repo, verifier("count", ["sh", "-c", f"echo run >> {counter}"]))
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "verify")
    assert counter.read_text() == "run\n"
    again = ckpt(repo, "verify")
    assert "verifier: count ...... passed (reused from default/1, exit 0, " in again.out
    assert "default/1 is already promoted" in again.out
    assert counter.read_text() == "run\n"
    assert len(note_lines(repo, "refs/ckpt/default/1")) == 1
    # identical content in another checkpoint: reused, and recorded there as reused
    ckpt(repo, "save", "--allow-empty", "-m", "same")
    res = ckpt(repo, "verify", "default/2")
    assert "passed (reused from default/1" in res.out and "promoted default/2" in res.out
    [line] = note_lines(repo, "refs/ckpt/default/2")
    assert line["reused"] is True and line["checkpoint"] == "default/2"
    assert line["log"] == note_lines(repo, "refs/ckpt/default/1")[0]["log"]
    assert counter.read_text() == "run\n"
    ckpt(repo, "verify", "--rerun")
    assert counter.read_text() == "run\nrun\n"
    # a changed definition (a trusted .ckpt.toml edit; a git config one is ignored) is not reused
    (repo / ".ckpt.toml").write_text(verifier("count", ["sh", "-c", f"echo other >> {counter}"]))
    ckpt(repo, "trust")
    ckpt(repo, "save", "-m", "new definition")
    res = ckpt(repo, "verify")
    assert "reused" not in res.out and counter.read_text() == "run\nrun\nother\n"


def test_only_and_optional_verifiers(repo):
    write_config(repo, verifier("a", ["true"]) + verifier("lint", ["false"], required=False) + verifier("b", ["true"]))
    ckpt(repo, "save")
    res = ckpt(repo, "verify", "--only", "a")
    assert [ln for ln in res.out.splitlines() if ln.startswith("verifier:")] == [res.out.splitlines()[0]]
    assert "not promoted: required verifiers without a passing result: b (no result)" in res.out
    assert promoted(repo) is None
    res = ckpt(repo, "verify")
    assert "verifier: lint ...... failed (exit 1, " in res.out and ", not required)" in res.out
    assert "promoted default/1" in res.out  # an optional verifier failing does not block promotion
    ckpt(repo, "verify", "--only", "lint", "--rerun", rc=1)  # but named explicitly, its failure counts
    res = ckpt(repo, "verify", "--only", "nope", rc=4)
    assert "no verifier named 'nope'" in res.err


def test_verify_refuses_a_changed_worktree_and_isolated_runs_the_checkpoint(repo, tmp_path):
    seen = tmp_path / "seen"
    write_config(repo, verifier("look", ["sh", "-c", f"cat README fixtures/data.txt > {seen}; git status --porcelain >> {seen}"]))
    (repo / ".ckpt.toml").write_text((repo / ".ckpt.toml").read_text() + '[overlay]\ninclude = ["fixtures/"]\nexclude = []\n')
    git(repo, "commit", "-qam", "overlay")
    ckpt(repo, "trust")
    (repo / "fixtures").mkdir()
    (repo / "fixtures" / "data.txt").write_text("fixture\n")
    ckpt(repo, "save", "-m", "with fixture")
    (repo / "README").write_text("changed on disk\n")
    (repo / "new.txt").write_text("new\n")
    before = worktree_state(repo)
    res = ckpt(repo, "verify", rc=2)
    assert "the worktree no longer matches default/1 (M README; A new.txt); nothing was run" in res.err
    assert "git ckpt verify default/1 --isolated" in res.err
    assert not seen.exists()
    res = ckpt(repo, "verify", "--isolated")
    assert "promoted default/1" in res.out
    assert seen.read_text() == "readme\nfixture\n"  # the checkpoint's content and overlay; a clean checkout
    assert worktree_state(repo) == before  # the real worktree was not touched
    assert git(repo, "worktree", "list", "--porcelain").count(b"worktree ") == 1
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob("ckpt-verify-*/default-1"))
    # the overlay changed on disk: not the checkpoint's content either
    (repo / "README").write_text("readme\n")
    (repo / "new.txt").unlink()
    (repo / "fixtures" / "data.txt").write_text("other\n")
    assert "overlay files differ" in ckpt(repo, "verify", rc=2).err


def test_verifier_that_edits_a_tracked_file_fails(repo):
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "a")
    write_config(repo, verifier("fmt", ["sh", "-c", "echo formatted >> a.txt; echo cache > out.log"]) + verifier("later", ["true"]))
    ckpt(repo, "save")
    res = ckpt(repo, "verify", rc=1)
    assert "verifier: fmt ...... changed-files (exit 0, " in res.out
    assert "  fmt changed: a.txt" in res.out  # out.log is new, so it does not count
    assert "not run (the worktree was changed by a verifier): later" in res.out
    [line] = note_lines(repo, "refs/ckpt/default/1")
    assert (line["status"], line["exit_code"]) == ("changed-files", 0)
    assert b"changed 1 checkpointed file(s): a.txt" in git(repo, "cat-file", "blob", line["log"])
    assert promoted(repo) is None
    # isolated: the edit happens in the temporary worktree, and still fails
    ckpt(repo, "restore", "default/1")
    res = ckpt(repo, "verify", "--isolated", rc=1)
    assert "verifier: fmt ...... changed-files" in res.out and "not run (the worktree was changed by a verifier): later" in res.out
    assert (repo / "a.txt").read_text() == "a\n"
    assert promoted(repo) is None


def test_timeout_kills_the_process_group(repo, tmp_path):
    pidfile = tmp_path / "pid"
    write_config(repo, verifier("slow", ["sh", "-c", f"sleep 60 & echo $! > {pidfile}; wait"], timeout=1))
    ckpt(repo, "save")
    res = ckpt(repo, "verify", rc=1)
    assert "verifier: slow ...... timeout (exit 124, " in res.out
    assert "timed out after 1 s; killed the process group" in res.out
    [line] = note_lines(repo, "refs/ckpt/default/1")
    assert (line["status"], line["exit_code"]) == ("timeout", 124)
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the verifier's background child survived the timeout")
    assert promoted(repo) is None


@pytest.mark.parametrize(
    "command,code,word",
    [
        (["/nonexistent/verifier"], 127, "could not run"),
        ("no-such-command-for-ckpt-tests", 127, "could not run"),
        (["sh", "-c", "exit 125"], 125, "undecided"),
    ],
)
def test_could_not_run_and_undecided_follow_bisect_codes(repo, command, code, word):
    write_config(repo, verifier("v", command))
    ckpt(repo, "save")
    res = ckpt(repo, "verify", rc=code)
    assert f"verifier: v ...... {word} (exit {code}, " in res.out
    [line] = note_lines(repo, "refs/ckpt/default/1")
    assert (line["status"], line["exit_code"]) == ("error", code)
    assert promoted(repo) is None


def test_not_executable_is_126(repo, tmp_path):
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)
    write_config(repo, verifier("v", [str(script)]))
    ckpt(repo, "save")
    assert "could not run (exit 126" in ckpt(repo, "verify", rc=126).out


def test_ctrl_c_records_interrupted(repo, tmp_path):
    started = tmp_path / "started"
    os.mkfifo(started)
    pidfile = tmp_path / "pid"
    write_config(repo, verifier("wait", ["sh", "-c", f"sleep 60 & echo $! > {pidfile}; echo ready > {started}; wait"]))
    ckpt(repo, "save")
    proc = subprocess.Popen([str(BIN / "git-ckpt"), "verify"], cwd=repo, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    assert started.read_text() == "ready\n"  # the handshake: blocks until the verifier runs
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert b"verifier: wait ...... interrupted (exit 130, " in out
    assert b"Traceback" not in err and err.endswith(
        b"error: interrupted\nhint: git ckpt status shows where this worktree stands (a restore cut short: "
        b"git ckpt restore --continue, or git ckpt undo)\n"), err  # one error line and its hint, as every error
    [line] = note_lines(repo, "refs/ckpt/default/1")
    assert (line["status"], line["exit_code"]) == ("interrupted", 130)
    assert events(repo)[-1]["data"]["status"] == "interrupted"
    with pytest.raises(ProcessLookupError):
        for _ in range(100):
            os.kill(int(pidfile.read_text()), 0)
            time.sleep(0.05)
    assert promoted(repo) is None


def test_two_concurrent_verify_runs_lose_no_note_line(repo):
    names = [f"v{i}" for i in range(8)]
    write_config(repo, "".join(verifier(n, ["true"]) for n in names))
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "save", "--allow-empty", "-m", "two")
    procs = [
        subprocess.Popen(["git", "ckpt", "verify", cp, "--rerun"], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for cp in ("default/1", "default/2")
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, (out, err)
    for cp in ("default/1", "default/2"):
        lines = note_lines(repo, f"refs/ckpt/{cp}")
        assert sorted(ln["verifier"] for ln in lines) == names
        assert all(ln["checkpoint"] == cp and ln["status"] == "passed" for ln in lines)
    assert [e["seq"] for e in events(repo)] == list(range(1, len(events(repo)) + 1))
    assert ckpt(repo, "log", "--verify").rc == 0


# ---------------------------------------------------------------------------- trust


def test_untrusted_or_changed_config_runs_nothing(repo, tmp_path):
    marker = tmp_path / "ran"
    write_config(repo, verifier("evil", ["touch", str(marker)]), trust=False)
    ckpt(repo, "save")
    res = ckpt(repo, "verify", rc=9)
    assert "error: .ckpt.toml is not trusted; no verifier was run" in res.err
    assert "hint: review what would run with git ckpt trust --show, then allow it with git ckpt trust" in res.err
    assert not marker.exists()
    res = ckpt(repo, "attempt", "--", "touch", str(tmp_path / "cmd-ran"), rc=9)
    assert not (tmp_path / "cmd-ran").exists() and not marker.exists()
    show = ckpt(repo, "trust", "--show")
    assert f"  evil: touch {marker}" in show.out
    assert "      required, timeout 600 s, from .ckpt.toml" in show.out
    assert ": not trusted" in show.out
    ckpt(repo, "verify", rc=9)  # --show recorded nothing
    trusted = ckpt(repo, "trust")
    assert trusted.out.startswith("trusted .ckpt.toml (sha256 ")
    ckpt(repo, "verify")
    assert marker.exists()
    marker.unlink()
    # any change to the bytes, even one that removes every verifier, must be trusted again
    (repo / ".ckpt.toml").write_text("# no verifiers any more\n")
    ckpt(repo, "save")
    res = ckpt(repo, "verify", rc=9)
    assert ".ckpt.toml is changed since you trusted it" in res.err
    assert promoted(repo) == rev(repo, "refs/ckpt/default/1")
    # the trust store lives in the per-user data directory, keyed by worktree path
    store = Path(os.environ["XDG_DATA_HOME"]) / "git-ckpt" / "trusted.json"
    assert str(repo) in json.loads(store.read_text())


def test_local_git_config_verifier_needs_no_trust(repo, tmp_path):
    marker = tmp_path / "ran"
    git(repo, "config", "ckpt.verifier.local.command", f"touch {marker}")
    ckpt(repo, "save")
    res = ckpt(repo, "verify")
    assert "verifier: local ...... passed" in res.out and marker.exists()
    assert "from git config" in ckpt(repo, "trust", "--show").out


def test_no_verifiers_promotes_on_the_empty_requirement(repo):
    ckpt(repo, "save")
    res = ckpt(repo, "verify")
    assert res.out == "no verifiers configured: promoting on the empty requirement\npromoted default/1\n"
    assert promoted(repo) == rev(repo, "refs/ckpt/default/1")


# ---------------------------------------------------------------------------- promote


def test_promote_requires_results_unless_forced(repo):
    write_config(repo, verifier("t", ["false"]))
    ckpt(repo, "save")
    res = ckpt(repo, "promote", "default/1", rc=1)
    assert "default/1 cannot be promoted: required verifier t has no passing result on this content" in res.err
    assert "git ckpt promote default/1 --force" in res.err
    assert promoted(repo) is None
    assert ckpt(repo, "promote", "default/1", "--force").out == "promoted default/1 (forced: required verifier t has no passing result on this content)\n"
    assert promoted(repo) == rev(repo, "refs/ckpt/default/1")
    ev = events(repo)[-1]
    assert ev["type"] == "promote" and ev["data"]["forced"] is True and ev["data"]["missing"] == {"t": "no result"}
    assert "promoted default/1 (forced)" in ckpt(repo, "log").out
    res = ckpt(repo, "promote", "default/1", "--json", "--force")
    assert res.json()["result"]["forced"] is True


def test_json_envelope(repo):
    write_config(repo, verifier("t", ["sh", "-c", "echo to-stderr-under-json"]))
    ckpt(repo, "save")
    res = ckpt(repo, "verify", "--json")
    data = res.json()
    assert data["schema"] == "ckpt/1" and data["command"] == "verify"
    assert data["result"]["promoted"] == "default/1" and data["result"]["results"][0]["status"] == "passed"
    assert "to-stderr-under-json" in res.err


def test_help_and_man_page_cover_the_commands():
    for cmd, words in {
        "verify": ["--only", "--isolated", "--rerun", "125", "127", "130"],
        "promote": ["--force"],
        "gate": ["GIT_INDEX_FILE", "ckpt.gate"],
        "verify-commit": ["--pre-push", "pre_push"],
        "hooks": ["install", "uninstall", "status"],
        "trust": ["--show"],
        "attempt": ["on_failure", "--message"],
    }.items():
        proc = subprocess.run(["git", "ckpt", cmd, "--help"], capture_output=True, text=True)
        assert proc.returncode == 0, proc
        text = " ".join(proc.stdout.split())
        for w in words:
            assert w in text, (cmd, w)
    man = (Path(__file__).parent.parent / "man" / "git-ckpt.1").read_text()
    for w in ["\\fBverify\\fR", "\\fBattempt\\fR", "\\fBpromote\\fR", "\\fBgate\\fR", "\\fBverify\\-commit\\fR",
              "\\fBhooks install\\fR", "\\fBtrust\\fR", "\\-\\-isolated", "\\-\\-rerun", "\\-\\-pre\\-push", ".B 125", ".B 127"]:
        assert w in man, w


def test_verifying_an_older_checkpoint_never_moves_promotion_back(repo):
    """verify of an older checkpoint records its results but leaves a newer promoted checkpoint
    promoted, and says how to move promotion back on purpose; a newer one still promotes."""
    write_config(repo, verifier("ok", ["true"]))
    (repo / "f").write_text("one\n")
    ckpt(repo, "save", "-m", "one")
    (repo / "f").write_text("two\n")
    ckpt(repo, "save", "-m", "two")
    ckpt(repo, "verify", "--isolated", "2")
    assert promoted(repo) == git(repo, "rev-parse", "refs/ckpt/default/2").decode().strip()
    res = ckpt(repo, "verify", "--isolated", "1")
    assert "not promoted: the newer default/2 stays promoted (git ckpt promote default/1 moves promotion back to it)" in res.out
    assert promoted(repo) == git(repo, "rev-parse", "refs/ckpt/default/2").decode().strip()
    assert ckpt(repo, "verify", "--isolated", "1", "--json").json()["result"]["newer_promoted"] == "default/2"
    ckpt(repo, "promote", "1")  # on purpose: allowed, its results passed
    assert promoted(repo) == git(repo, "rev-parse", "refs/ckpt/default/1").decode().strip()
    ckpt(repo, "verify", "--isolated", "2")  # a newer checkpoint promotes again
    assert promoted(repo) == git(repo, "rev-parse", "refs/ckpt/default/2").decode().strip()
