"""Checkpoint numbers read from ref names and typed by the user: one parser
(:func:`git_ckpt.gitcore.ref_number`), ASCII digits without a leading zero.

A teammate's remote can carry ``refs/ckpt/T/²`` (a digit to ``str.isdigit`` that ``int`` refuses),
``refs/ckpt/T/１`` or ``refs/ckpt/T/٣`` (digits ``int`` reads as 1 and 3), ``refs/ckpt/T/1_0`` and
``refs/ckpt/T/007`` (``int`` reads 10 and 7).  None of them is a checkpoint: every command that
reads the fetched refs skips them, exits with a documented code and lists exactly the genuine
checkpoints.  A number the user types in such a form is a one-line error (exit 4).

Real clones of a real bare repository, the real ``git ckpt`` entry point.
"""

from __future__ import annotations

from conftest import ckpt, git
from test_remote import _team

# refs a crafted remote holds next to T/1 and T/2; each names T/1's commit
ODD = ["²", "１", "٣", "1_0", "007", "0", "+3", "7\u00a0", "1" * 10]


def _shared(tmp_path, odds: list[str]):
    """alice saved T/1 and T/2 and pushed them; the remote then got ``refs/ckpt/T/ODD`` for every
    one of ``odds`` (all at once: each is read on its own, and a command that took any one of them
    for a checkpoint would list it); alice and bob both fetched.  Returns (bare, alice, bob)."""
    bare, alice, bob = _team(tmp_path)
    ckpt(alice, "task", "start", "T")
    for i in (1, 2):
        (alice / "f.txt").write_text(f"work {i}\n")
        ckpt(alice, "save", "-m", f"w{i}")
    ckpt(alice, "push")
    one = git(bare, "rev-parse", "refs/ckpt/T/1").decode().strip()
    for odd in odds:
        git(bare, "update-ref", f"refs/ckpt/T/{odd}", one)
        assert git(bare, "for-each-ref", "--format=%(refname)", f"refs/ckpt/T/{odd}").decode() == f"refs/ckpt/T/{odd}\n"
    ckpt(alice, "fetch")
    ckpt(bob, "fetch")
    return bare, alice, bob


def _ids(res) -> list[str]:
    return [row["id"] for row in res.json()["result"]]


def test_fetched_refs_with_odd_numbers_are_no_checkpoints(tmp_path):
    bare, alice, bob = _shared(tmp_path, ODD)
    # the genuine checkpoints, exactly, on both sides
    assert _ids(ckpt(alice, "list", "--json")) == ["T/1", "T/2"]
    assert _ids(ckpt(alice, "list", "--remote", "origin", "--json")) == ["origin:T/1", "origin:T/2"]
    assert _ids(ckpt(bob, "list", "--remote", "origin", "--json")) == ["origin:T/1", "origin:T/2"]
    assert _ids(ckpt(bob, "list", "--remote", "origin", "--all", "--json")) == ["origin:T/1", "origin:T/2"]
    listed = ckpt(bob, "list", "--remote", "origin", "--all").out
    assert not [odd for odd in ODD if f"T/{odd}" in listed], listed
    # every reader of the fetched task: a documented exit code, no traceback, no internal error
    for who, args in [(alice, ["task", "start", "T"]), (alice, ["status"]), (alice, ["log"]), (alice, ["stats"]),
                      (alice, ["show", "T/2"]), (alice, ["show", "origin:T/2"]), (alice, ["gc", "--dry-run"]),
                      (alice, ["gc"]), (alice, ["push"]), (alice, ["push", "--json"]),
                      (bob, ["log", "--task", "origin:T"]), (bob, ["stats", "origin:T"]), (bob, ["show", "origin:T/@"]),
                      (bob, ["handoff", "origin:T"]), (bob, ["task", "list", "--json"]), (bob, ["check", "--all"]),
                      (bob, ["task", "start", "T"])]:
        res = ckpt(who, *args, rc=None)
        assert res.rc in (0, 1), (args, res)
        assert "internal error" not in res.err, (args, res)
    # a task of the same name as a teammate's is what task start warns about, the odd ref is not
    assert "already exists (fetched)" in ckpt(bob, "task", "start", "T").err + ckpt(bob, "task", "start", "T").out
    assert "already exists (fetched)" not in ckpt(alice, "task", "start", "T").err
    # restore of the genuine checkpoints still works
    ckpt(bob, "restore", "origin:T/2", "--worktree", str(tmp_path / "review"))
    assert (tmp_path / "review" / "f.txt").read_text() == "work 2\n"
    ckpt(alice, "restore", "T/1")
    assert (alice / "f.txt").read_text() == "work 1\n"
    # nothing was pushed under the odd name and the genuine ones stay
    assert _ids(ckpt(alice, "list", "--json"))[:2] == ["T/1", "T/2"]
    assert git(bare, "for-each-ref", "--format=%(refname)", "refs/ckpt/T/").decode().splitlines() == \
        sorted(["refs/ckpt/T/1", "refs/ckpt/T/2", *(f"refs/ckpt/T/{odd}" for odd in ODD), "refs/ckpt/T/log"])


# what a user can type with a number that is not the number save writes
TYPED = ["T/007", "T/01", "T/0", "T/²", "T/１", "T/٣", "origin:T/01", "origin:T/１", "origin:T/0", "01", "１", "@~²", "@~１", "@~٣"]


def test_a_typed_number_in_another_form_is_a_one_line_error(tmp_path):
    bare, alice, bob = _shared(tmp_path, ["007"])
    for spec in TYPED:
        for args in (["show", spec], ["diff", spec], ["restore", spec]):
            res = ckpt(alice, *args, rc=4)
            lines = res.err.splitlines()
            assert lines and lines[0].startswith("error: "), (args, res)
            assert len([ln for ln in lines if ln.startswith("error: ")]) == 1, (args, res)
        assert (alice / "f.txt").read_text() == "work 2\n"  # nothing restored


def test_the_canonical_numbers_still_resolve(tmp_path):
    bare, alice, bob = _shared(tmp_path, ["007"])
    assert ckpt(alice, "show", "T/1", "--json").json()["result"]["id"] == "T/1"
    assert ckpt(alice, "show", "2", "--json").json()["result"]["id"] == "T/2"
    assert ckpt(alice, "show", "@~1", "--json").json()["result"]["id"] == "T/1"
    assert ckpt(alice, "show", "@~0", "--json").json()["result"]["id"] == "T/2"
    assert ckpt(alice, "show", "origin:T/2", "--json").json()["result"]["id"] == "origin:T/2"
    assert ckpt(bob, "show", "origin:T/@~1", "--json").json()["result"]["id"] == "origin:T/1"


OWNERS = ["²", "١", "１", "007", "1_0"]


def test_staging_refs_with_odd_owners_are_left_alone_by_push(tmp_path):
    """``refs/ckpt-push/PID-TOKEN/…`` of a killed push are removed by the next push; a name whose
    PID is not ASCII digits is no staging ref of git ckpt's and is left alone (it once reached
    ``int()``)."""
    import subprocess

    bare, alice, bob = _team(tmp_path)
    (alice / "f.txt").write_text("w\n")
    ckpt(alice, "save", "-m", "w")
    one = git(alice, "rev-parse", "refs/ckpt/default/1").decode().strip()
    gone = subprocess.Popen(["true"])
    gone.wait()  # a process that has exited: its staging refs are stale
    for owner in OWNERS:
        git(alice, "update-ref", f"refs/ckpt-push/{owner}-abc/ckpt/default/1", one)
    git(alice, "update-ref", f"refs/ckpt-push/{gone.pid}-abc/ckpt/default/1", one)
    res = ckpt(alice, "push")
    assert "pushed" in res.out
    left = git(alice, "for-each-ref", "--format=%(refname)", "refs/ckpt-push/").decode().splitlines()
    assert left == sorted(f"refs/ckpt-push/{owner}-abc/ckpt/default/1" for owner in OWNERS)
