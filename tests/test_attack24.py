"""Attack 24: what a remote sends as notes, and names taken from a manifest.

- A fetched ``refs/notes/ckpt`` that is no commit (a tree, a blob) became our notes ref, and
  every later ``verify`` failed (exit 7); it is ignored with a warning, and nothing of ours moves.
- A notes history laid out so the merge saw lines the readers do not (a 1/39 split, a tree
  where a note belongs) was adopted as a fast-forward, hiding our own results: the merge now
  reads the notes tree as every reader does (``notes.note_map``).
- ``origin:T/promoted`` was named by its manifest's ``T/N`` though ``T/N`` holds another commit;
  a checkpoint whose manifest names another tree or base than its commit holds is damaged.
"""

from __future__ import annotations

import pytest

from conftest import ckpt, git, with_remote


def _pair(tmp_path):
    remote, vic = with_remote(tmp_path, "vic")
    att = tmp_path / "att"
    git(tmp_path, "clone", "-q", str(remote), str(att))
    git(vic, "config", "ckpt.verifier.tests.command", "true")
    ckpt(vic, "task", "start", "t")
    (vic / "a.txt").write_text("y\n")
    ckpt(vic, "save", "-m", "s")
    return remote, vic, att


@pytest.mark.parametrize("kind", ["tree", "blob"])
@pytest.mark.parametrize("have_notes", [False, True])
def test_notes_that_are_no_commit_are_ignored(tmp_path, kind, have_notes):
    _remote, vic, att = _pair(tmp_path)
    if have_notes:
        ckpt(vic, "verify")
    before = git(vic, "for-each-ref", "refs/notes/ckpt")
    obj = (git(att, "rev-parse", "HEAD^{tree}") if kind == "tree"
           else git(att, "hash-object", "-w", "--stdin", input=b"x\n")).decode().strip()
    git(att, "push", "-q", "origin", f"{obj}:refs/notes/ckpt")
    res = ckpt(vic, "fetch")
    assert f"warning: the notes origin sent are a {kind}, not a notes commit: ignored" in res.err.splitlines()
    assert git(vic, "for-each-ref", "refs/notes/ckpt") == before
    assert git(vic, "for-each-ref", "refs/notes/ckpt-remotes/") == b""  # said ignored: nothing of it kept
    (vic / "a.txt").write_text("z\n")
    ckpt(vic, "save", "-m", "s2")
    assert ckpt(vic, "verify").out.splitlines()[-1] == "promoted t/2"
    assert git(vic, "cat-file", "-t", "refs/notes/ckpt") == b"commit\n"
    # attack 25: every later push was refused whole (ours cannot fast-forward their blob); the
    # checkpoints go, the results stay, and the warning says why and who can mend it
    res = ckpt(vic, "push")
    assert (f"warning: the notes origin sent are a {kind}, not a notes commit: ignored; your verifier results were not "
            "pushed (a git admin of the remote can delete its refs/notes/ckpt: git update-ref -d refs/notes/ckpt)") in res.err.splitlines(), res
    refs = git(_remote, "for-each-ref", "--format=%(refname) %(objecttype)").decode().splitlines()
    assert [r for r in refs if "ckpt" in r] == ["refs/ckpt/t/1 commit", "refs/ckpt/t/2 commit", "refs/ckpt/t/log commit",
                                                "refs/ckpt/t/promoted commit", f"refs/notes/ckpt {kind}"], refs
    assert git(vic, "for-each-ref", "refs/notes/ckpt-remotes/") == b""


def test_a_notes_layout_no_reader_reads_is_not_adopted(tmp_path):
    _remote, vic, att = _pair(tmp_path)
    ckpt(vic, "verify")
    ckpt(vic, "push")
    c = git(vic, "rev-parse", "refs/ckpt/t/1").decode().strip()
    git(att, "fetch", "-q", "origin", "refs/notes/ckpt:refs/notes/ckpt")
    n = git(att, "rev-parse", "refs/notes/ckpt").decode().strip()
    note = git(att, "rev-parse", f"{n}:{c}").decode().strip()
    sub = git(att, "mktree", input=f"100644 blob {note}\t{c[1:]}\n".encode()).decode().strip()
    top = git(att, "mktree", input=f"040000 tree {sub}\t{c[0]}\n".encode()).decode().strip()
    forged = git(att, "commit-tree", top, "-p", n, input=b"n\n").decode().strip()
    git(att, "push", "-q", "origin", f"{forged}:refs/notes/ckpt")
    ckpt(vic, "fetch")
    assert "tests:passed" in ckpt(vic, "list").out
    assert any(ln.startswith("  tests") and "passed" in ln for ln in ckpt(vic, "show", "t/1").out.splitlines())
    git(vic, "add", "-A")
    git(vic, "commit", "-qm", "c")
    ckpt(vic, "verify-commit", "HEAD")


def test_a_forged_promoted_ref_is_not_named_by_its_manifest(tmp_path):
    remote, vic, att = _pair(tmp_path)
    ckpt(att, "task", "start", "feat")
    (att / "a.txt").write_text("good\n")
    ckpt(att, "save", "-m", "good")
    ckpt(att, "push")
    parents = git(att, "log", "-1", "--format=%P", "refs/ckpt/feat/1").decode().split()
    evil = git(att, "hash-object", "-w", "--stdin", input=b"EVIL\n").decode().strip()
    tree = git(att, "mktree", input=f"100644 blob {evil}\ta.txt\n".encode()).decode().strip()
    msg = git(att, "log", "-1", "--format=%B", "refs/ckpt/feat/1")
    args = [a for p in parents for a in ("-p", p)]
    forged = git(att, "commit-tree", tree, *args, input=msg).decode().strip()
    git(att, "push", "-q", "origin", f"{forged}:refs/ckpt/feat/promoted")
    ckpt(vic, "fetch")
    res = ckpt(vic, "show", "origin:feat/promoted", rc=7)
    assert res.err.startswith("error: origin:feat/promoted is damaged: its manifest names the tree ")
    res = ckpt(vic, "restore", "origin:feat/promoted", rc=7)
    assert (vic / "a.txt").read_text() == "y\n"
    # a promoted ref that names a real checkpoint of its task keeps that checkpoint's name;
    # one holding a commit its manifest's T/N does not hold is called T/promoted
    good = git(att, "rev-parse", "refs/ckpt/feat/1").decode().strip()
    git(att, "push", "-q", "-f", "origin", f"{good}:refs/ckpt/feat/promoted")
    ckpt(vic, "fetch")
    assert ckpt(vic, "show", "origin:feat/promoted", "--json").json()["result"]["id"] == "origin:feat/1"
