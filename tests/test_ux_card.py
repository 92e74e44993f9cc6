"""A new user's walk through the README: task card evidence shown and checked, a reused verifier
result named as reused in every view of the ledger, a fetched promoted checkpoint shown as
promoted, and counts in the right number.

Real repositories (and clones of a real bare repository), the real ``git ckpt`` entry point.
"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ckpt, forge_card, git
from test_fetched_tasks import _alice_task
from test_remote import _team
from test_verify import verifier, write_config

# ------------------------------------------------------------------------------ 1. evidence


def _events(repo: Path, task: str) -> list[str]:
    return git(repo, "rev-list", f"refs/ckpt/{task}/log").decode().split()


def _fix_div(repo: Path) -> None:
    """Task fix-div with a checkpoint fix-div/1 on which verifier ``tests`` failed."""
    write_config(repo, verifier("tests", ["sh", "-c", "exit 1"]))
    ckpt(repo, "task", "start", "fix-div", "--goal", "divide must not crash")
    (repo / "calc.py").write_text("def div(a, b):\n    return a / b\n")
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "verify", rc=1)


def test_task_show_prints_the_evidence_of_every_kind_of_item_as_handoff_does(repo):
    _fix_div(repo)
    for args in (["--fact", "calc.py is small", "--evidence", "file:calc.py"],
                 ["--decided", "return None", "--evidence", "fix-div/1"],
                 ["--failed", "raise ZeroDivisionError", "--reason", "callers crash", "--evidence", "fix-div/1#tests"],
                 ["--question", "warn?", "--evidence", "calc.py"],  # an existing path: file:
                 ["--assume", "callers check None", "--evidence", "text:grep shows it"],
                 ["--assume", "b"],
                 ["--confirm", "2", "--evidence", "fix-div/1"]):
        ckpt(repo, "task", "note", *args)
    assert ckpt(repo, "task", "show").out == (
        "task: fix-div\n"
        "goal: divide must not crash\n"
        "fact 1: calc.py is small (evidence: file calc.py)\n"
        "decided 1: return None (evidence: fix-div/1)\n"
        "failed 1: raise ZeroDivisionError (callers crash) (evidence: fix-div/1#tests: failed)\n"
        "question 1: warn? (evidence: file calc.py)\n"
        "assumption 1: callers check None [unverified] (evidence: grep shows it)\n"
        "assumption 2: b [confirmed] (evidence: fix-div/1)\n")
    commit = git(repo, "rev-parse", "refs/ckpt/fix-div/1").decode().strip()
    card = ckpt(repo, "task", "show", "--json").json()["result"]
    assert card["decisions"][0]["evidence"] == [{"checkpoint": "fix-div/1", "commit": commit}]
    assert card["questions"][0]["evidence"] == [{"file": "calc.py"}]
    assert card["assumptions"][0]["evidence"] == [{"text": "grep shows it"}]
    out = ckpt(repo, "handoff").out
    for line in ("- return None (evidence: fix-div/1)",
                 "- raise ZeroDivisionError: callers crash (evidence: fix-div/1#tests: failed)",
                 "- warn? (evidence: file calc.py)",
                 "- 1. callers check None (evidence: grep shows it)",
                 "- calc.py is small (evidence: file calc.py)"):
        assert line in out.splitlines(), (line, out)


def test_task_show_of_a_fetched_task_names_its_evidence_as_this_repository_does(tmp_path):
    _bare, alice, bob = _team(tmp_path)
    _alice_task(alice, bob)
    ckpt(alice, "task", "note", "--decided", "print b", "--evidence", "fix-echo/2")
    ckpt(alice, "push")
    ckpt(bob, "fetch")
    out = ckpt(bob, "task", "show", "origin:fix-echo").out.splitlines()
    assert "decided 2: print b (evidence: origin:fix-echo/2)" in out
    assert "- print b (evidence: origin:fix-echo/2)" in ckpt(bob, "handoff", "origin:fix-echo").out.splitlines()


def test_evidence_of_an_evidence_stored_text_cannot_forge_a_line(repo):
    ckpt(repo, "task", "start", "t")
    ckpt(repo, "task", "note", "--decided", "d", "--evidence", "text:a\nb \x1b[31m")
    assert ckpt(repo, "task", "show").out.splitlines()[-1] == "decided 1: d (evidence: a\\nb \\x1b[31m)"


def test_evidence_file_must_exist_in_the_worktree(repo):
    ckpt(repo, "task", "start", "t")
    (repo / "sub").mkdir()
    (repo / "sub" / "there.py").write_text("x\n")
    before = _events(repo, "t")
    res = ckpt(repo, "task", "note", "--fact", "z", "--evidence", "file:nonexist.py", rc=4)
    assert res.err == ("error: evidence 'file:nonexist.py': no file nonexist.py in the worktree\n"
                       "hint: file:PATH cites a file that exists (relative to the current directory); text:... records words\n")
    # relative to the current directory, named from the worktree root
    res = ckpt(repo / "sub", "task", "note", "--decided", "d", "--evidence", "file:gone.py", rc=4)
    assert res.err.startswith("error: evidence 'file:gone.py': no file sub/gone.py in the worktree\n")
    assert _events(repo, "t") == before
    ckpt(repo / "sub", "task", "note", "--fact", "z", "--evidence", "file:there.py")
    assert ckpt(repo, "task", "show", "--json").json()["result"]["facts"][0]["evidence"] == [{"file": "sub/there.py"}]
    # a bare word naming no file stays text, as the README says
    ckpt(repo, "task", "note", "--fact", "y", "--evidence", "nonexist.py")
    assert ckpt(repo, "task", "show", "--json").json()["result"]["facts"][1]["evidence"] == [{"text": "nonexist.py"}]


def test_handoff_check_finds_a_cited_file_gone(repo):
    (repo / ".gitignore").write_text("*.log\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore logs")
    ckpt(repo, "task", "start", "t")
    (repo / "f.txt").write_text("1\n")
    (repo / "run.log").write_text("ZeroDivisionError\n")
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "task", "note", "--fact", "it crashes", "--evidence", "file:run.log")
    ckpt(repo, "task", "note", "--failed", "retry", "--reason", "same crash", "--evidence", "t/1")
    assert ckpt(repo, "handoff", "--check").out.splitlines()[0] == "ok    files: all present"
    (repo / "run.log").unlink()  # ignored: the worktree still matches t/1
    res = ckpt(repo, "handoff", "--check", rc=1)
    assert res.out == ("DRIFT files: cited as evidence but missing: run.log\n"
                       "ok    worktree: matches t/1\n"
                       "handoff of t: 1 drift(s) found\n")
    data = ckpt(repo, "handoff", "--check", "--json", rc=1).json()["result"]
    assert data["drift"] == ["files named by the receipt: cited as evidence but missing: run.log"]


def test_handoff_check_looks_up_no_evidence_file_outside_the_worktree(tmp_path):
    """A teammate's ledger names evidence files outside any worktree: named as such, never probed."""
    _bare, alice, bob = _team(tmp_path)
    secret = tmp_path / "SECRET_EXISTS"
    secret.write_text("x")
    ckpt(alice, "task", "start", "evil")
    (alice / "f.txt").write_text("w\n")
    ckpt(alice, "save", "-m", "e")
    ckpt(alice, "task", "note", "--fact", "f", "--evidence", "file:f.txt")
    ledger = "refs/ckpt/evil/log"
    bad = [str(secret), "../SECRET_EXISTS", "a/../../x", ".git/config", "gone.txt"]
    forge_card(alice, "evil", lambda card: card["facts"][0].update(evidence=[{"file": p} for p in bad] + [{"file": "f.txt"}]))
    git(alice, "push", "-q", "-f", "origin", f"{ledger}:{ledger}", "refs/ckpt/evil/1:refs/ckpt/evil/1")
    ckpt(bob, "fetch")
    res = ckpt(bob, "handoff", "--check", "origin:evil", "--json", rc=1).json()["result"]
    [files] = [c for c in res["checks"] if c["check"] == "files"]
    # f.txt is not in bob's worktree (another task); the rest are not paths of a worktree at all
    assert files["detail"] == ("missing: f.txt; cited as evidence but missing: gone.txt; not a path of this worktree "
                               f"(not looked up): {secret}, ../SECRET_EXISTS, a/../../x, .git/config")


def test_every_kind_of_item_takes_evidence_and_only_one_item_per_note(repo):
    _fix_div(repo)
    ckpt(repo, "task", "note", "--decided", "x", "--evidence", "fix-div/1")
    ckpt(repo, "task", "note", "--assume", "y", "--evidence", "fix-div/1#tests")
    ckpt(repo, "task", "note", "--question", "z", "--evidence", "text:why")
    card = ckpt(repo, "task", "show", "--json").json()["result"]
    assert [d["evidence"][0].get("checkpoint") for d in card["decisions"]] == ["fix-div/1"]
    assert card["assumptions"][0]["evidence"][0]["result"] == "failed"
    before = _events(repo, "fix-div")
    # validated as for a fact: a checkpoint that is not there is exit 4
    res = ckpt(repo, "task", "note", "--decided", "x", "--evidence", "fix-div/9", rc=4)
    assert res.err.startswith("error: evidence 'fix-div/9': no checkpoint fix-div/9\nhint: did you mean fix-div/1")
    res = ckpt(repo, "task", "note", "--decided", "a", "--decided", "b", "--evidence", "fix-div/1", rc=2)
    assert res.err == ("error: --evidence with 2 items in one note (--decided, --decided): which one it backs would be ambiguous\n"
                       "hint: run git ckpt task note once for each item\n")
    res = ckpt(repo, "task", "note", "--decided", "a", "--question", "q", "--evidence", "fix-div/1", rc=2)
    assert res.err.startswith("error: --evidence with 2 items in one note (--decided, --question): ")
    res = ckpt(repo, "task", "note", "--next", "n", "--read", "calc.py", "--evidence", "fix-div/1", rc=2)
    assert res.err == ("error: --evidence needs an item to attach to: "
                       "--fact, --decided, --failed, --assume, --confirm, --refute or --question\n"
                       "hint: git ckpt task note -h shows the usage\n")
    assert _events(repo, "fix-div") == before
    # several items without evidence are one note, as before; with a fact, failed path or judged
    # assumption, the evidence backs that one (as before), not the other items of the note
    ckpt(repo, "task", "note", "--decided", "a", "--decided", "b", "--question", "q")
    ckpt(repo, "task", "note", "--fact", "f", "--decided", "c", "--question", "r", "--evidence", "fix-div/1")
    card = ckpt(repo, "task", "show", "--json").json()["result"]
    assert card["facts"][-1]["evidence"][0]["checkpoint"] == "fix-div/1"
    assert "evidence" not in card["decisions"][-1] and "evidence" not in card["questions"][-1]


def test_readme_and_help_name_the_notes_that_take_evidence(repo):
    rule = "--fact, --failed, --confirm or --refute, or else its one --decided, --assume or --question"
    help_text = " ".join(ckpt(repo, "task", "note", "-h").out.split())
    assert f"What backs the note's {rule}" in help_text
    readme = " ".join((Path(__file__).parent.parent / "README.md").read_text().split())
    assert ("Every kind of note that records an item takes `--evidence`, stored on that item: it backs the note's "
            "`--fact`, `--failed`, `--confirm` or `--refute`") in readme


# ------------------------------------------------------------------------------ 2. reused results


def test_a_reused_result_is_named_reused_in_log_graph_and_report(repo, tmp_path):
    write_config(repo, verifier("tests", ["true"]))
    ckpt(repo, "task", "start", "fix-div")
    (repo / "calc.py").write_text("1\n")
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "verify")
    ckpt(repo, "save", "--allow-empty", "-m", "same")
    assert "verifier: tests ...... passed (reused from fix-div/1, exit 0, " in ckpt(repo, "verify").out
    lines = [re.sub(r"^#\d+\s+\S+\s+", "", ln) for ln in ckpt(repo, "log").out.splitlines()]
    assert [ln for ln in lines if ln.startswith("verifier:")] == [
        "verifier: tests ...... passed on fix-div/1",
        "verifier: tests ...... passed on fix-div/2 (reused from fix-div/1)"]
    graph = [ln.rsplit("  ", 1)[0] for ln in ckpt(repo, "log", "--graph").out.splitlines() if ln.startswith("|   pass")]
    assert graph == ["|   pass  tests passed on fix-div/1", "|   pass  tests passed on fix-div/2 (reused from fix-div/1)"]
    ckpt(repo, "report", "--html", str(tmp_path / "r.html"))
    page = (tmp_path / "r.html").read_text()
    assert "tests passed on fix-div/2 (reused from fix-div/1)</li>" in page
    assert "<title>tests: passed (reused)</title>" in page
    assert "; 1 reused)" in ckpt(repo, "stats").out


# ------------------------------------------------------------------------------ 3. fetched promoted


def test_show_marks_a_fetched_promoted_checkpoint_as_list_does(tmp_path):
    _bare, alice, bob = _team(tmp_path)
    _alice_task(alice, bob)  # alice promoted fix-echo/2
    listed = ckpt(bob, "list", "--remote", "origin").out.splitlines()
    assert [ln.split()[:2] for ln in listed if "fix-echo/2" in ln] == [["*", "origin:fix-echo/2"]]
    assert ckpt(bob, "show", "origin:fix-echo/2").out.splitlines()[0] == "checkpoint origin:fix-echo/2  (promoted on origin)"
    assert ckpt(bob, "show", "origin:fix-echo/promoted").out.splitlines()[0] == "checkpoint origin:fix-echo/2  (promoted on origin)"
    assert ckpt(bob, "show", "origin:fix-echo/1").out.splitlines()[0] == "checkpoint origin:fix-echo/1"
    assert ckpt(bob, "show", "origin:fix-echo/2", "--json").json()["result"]["promoted"] is True
    assert ckpt(bob, "show", "origin:fix-echo/1", "--json").json()["result"]["promoted"] is False
    # in alice's own clone, her local promoted ref decides, as before
    assert ckpt(alice, "show", "fix-echo/2").out.splitlines()[0] == "checkpoint fix-echo/2  (promoted)"


# ------------------------------------------------------------------------------ 4. plurals


def test_counts_take_the_right_number(repo):
    (repo / ".gitignore").write_text("state/\n")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["state/"]\n')
    git(repo, "add", ".gitignore", ".ckpt.toml")
    git(repo, "commit", "-q", "-m", "config")
    (repo / "state").mkdir()
    (repo / "state" / "one").write_text("x")
    ckpt(repo, "save", "-m", "one")
    out = ckpt(repo, "show").out
    assert "overlay (1 entry):\n  state/one (file, 1 byte)\n" in out
    assert ckpt(repo, "show", "--json").json()["result"]["overlay"] == [{"path": "state/one", "kind": "file", "size": 1}]
    assert ckpt(repo, "check").out.splitlines()[0] == "ok       default/1  (3 files, 1 overlay file)"
    (repo / "state" / "two").write_text("yy")
    ckpt(repo, "save", "-m", "two")
    assert "overlay (2 entries):\n  state/one (file, 1 byte)\n  state/two (file, 2 bytes)\n" in ckpt(repo, "show").out
    assert ckpt(repo, "check").out.splitlines()[1] == "ok       default/2  (3 files, 2 overlay files)"
    assert ckpt(repo, "log", "--verify").out == "ledger of default: intact (2 events)\n"
    assert ckpt(repo, "stats").out.startswith("task: default (2 events)\n")
    ckpt(repo, "gc", "--keep", "1")
    log = ckpt(repo, "log").out.splitlines()
    assert log[-1].endswith("  pruned 1 checkpoint"), log
