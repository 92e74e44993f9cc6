"""Fast paths kept exact: list's age parsing and its one-walk notes read (flat and fanned out)."""

from __future__ import annotations

import calendar
import time

from conftest import REPO_FORMAT, ckpt, git
from test_verify import verifier, write_config

from git_ckpt.views import age


def test_age_matches_strptime():
    now = calendar.timegm((2026, 11, 30, 6, 0, 0, 0, 0, 0))

    def slow(c):
        try:
            t = calendar.timegm(time.strptime(c, "%Y-%m-%dT%H:%M:%SZ"))
        except ValueError:
            return "?"
        secs = max(0, int(now - t))
        for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
            if secs >= size:
                return f"{secs // size}{unit}"
        return f"{secs}s"

    for c in ["2026-11-30T05:59:01Z", "2026-11-30T05:00:00Z", "2026-11-29T06:00:00Z", "2026-02-30T05:00:00Z",
              "2024-02-29T23:59:60Z", "2026-1-3T5:0:0Z", "2026-11-30T05:00:00", "x", "", "0000-01-01T00:00:00Z",
              "2026-12-31T24:00:00Z", "2027-01-01T00:00:00Z", "2026-11-30T05:00:0\u0661Z"]:
        assert age(c, now) == slow(c), c


def test_list_reads_flat_and_fanned_out_notes(repo):
    write_config(repo, verifier("ok", ["true"]))
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "verify")
    before = ckpt(repo, "list", "--json").json()["result"]
    assert before[0]["verifiers"] == {"ok": "passed"}
    # rewrite the notes tree in git's fanned-out layout (xx/yyyy...), as git notes does for many notes
    notes = git(repo, "rev-parse", "refs/notes/ckpt").decode().strip()
    (entry,) = git(repo, "ls-tree", notes).decode().splitlines()
    mode_type_oid, name = entry.split("\t")
    oid = mode_type_oid.split()[2]
    sub = git(repo, "mktree", input=f"100644 blob {oid}\t{name[2:]}\n".encode()).decode().strip()
    top = git(repo, "mktree", input=f"040000 tree {sub}\t{name[:2]}\n".encode()).decode().strip()
    new = git(repo, "commit-tree", top, "-p", notes, "-m", "fan out").decode().strip()
    git(repo, "update-ref", "refs/notes/ckpt", new, notes)
    assert ckpt(repo, "list", "--json").json()["result"] == before
    assert "[ok:passed]" in ckpt(repo, "list").out


# ------------------------------------------------------------------ list from one for-each-ref


def _manifest(repo, ref):
    import json

    return json.loads(git(repo, "cat-file", "blob", f"{ref}^3:manifest.json" if _has_base(repo, ref) else f"{ref}^2:manifest.json"))


def _has_base(repo, ref):
    return len(git(repo, "rev-list", "--parents", "-n1", ref).split()) == 4


def _rewrite_message(repo, ref, message: bytes) -> str:
    """Replace the checkpoint commit at ``ref`` by one with the same tree and parents and
    ``message`` (bytes as stored); returns the new commit id."""
    parents = git(repo, "rev-list", "--parents", "-n1", ref).decode().split()[1:]
    tree = git(repo, "rev-parse", f"{ref}^{{tree}}").decode().strip()
    args = [a for p in parents for a in ("-p", p)]
    new = git(repo, "commit-tree", tree, *args, "-F", "-", input=message).decode().strip()
    git(repo, "update-ref", ref, new)
    return new


def test_list_rows_come_from_the_commit_and_match_the_manifest(repo):
    ckpt(repo, "save", "-m", "first line\nsecond line \u00e9\ttab")
    (repo / "a.txt").write_text("changed\n")
    ckpt(repo, "save")
    rows = ckpt(repo, "list", "--json").json()["result"]
    for row, n in zip(rows, (1, 2)):
        ref = f"refs/ckpt/default/{n}"
        last = git(repo, "cat-file", "commit", ref).rstrip(b"\n").rsplit(b"\n", 1)[1]
        assert last.startswith(b"Ckpt-Row: {")
        m = _manifest(repo, ref)
        assert (row["id"], row["kind"], row["created_at"], row["message"], row["agent"], row["agent_session"]) == \
            (m["id"], m["kind"], m["created_at"], m["message"], m.get("agent"), m.get("agent_session"))
    assert rows[0]["message"] == "first line\nsecond line \u00e9\ttab"
    lines = ckpt(repo, "list").out.splitlines()
    assert [p[:1] + p[2:] for p in map(str.split, lines)] == [["default/1", "manual", "first", "line", "…"], ["default/2", "manual", "A", "a.txt"]]


def test_list_falls_back_to_the_manifest_when_the_commit_row_is_unusable(repo):
    ckpt(repo, "save", "-m", "one")
    (repo / "a.txt").write_text("two\n")
    ckpt(repo, "save", "-m", "two")
    ref = "refs/ckpt/default/2"
    good = ckpt(repo, "list", "--json").json()["result"]
    original = git(repo, "cat-file", "commit", ref).split(b"\n\n", 1)[1]
    other = git(repo, "cat-file", "commit", "refs/ckpt/default/1").split(b"\n\n", 1)[1]
    row_of_1 = other.rstrip(b"\n").rsplit(b"\n", 1)[1]
    head = original.rstrip(b"\n").rsplit(b"\n", 1)[0]
    for message in (
        b"ckpt default/2: two\n\nCkpt-Id: default/2\nCkpt-Kind: manual\n",  # saved by an older git ckpt
        head + b"\n" + row_of_1 + b"\n",  # another checkpoint's row
        head + b"\nCkpt-Row: {\"id\":\"default/2\",\"kind\":\"bogus\",\"created_at\":\"x\"}\n",
        head + b"\nCkpt-Row: {not json\n",
        head + b"\nCkpt-Row: {\"id\":\"default/2\",\"kind\":\"manual\",\"created_at\":" + b"\"" + b"x" * 2000 + b"\"}\n",
        original + b"trailing text\n",
    ):
        commit = _rewrite_message(repo, ref, message)
        rows = ckpt(repo, "list", "--json").json()["result"]
        assert rows[0] == good[0]
        assert rows[1] == dict(good[1], commit=commit), message
        assert ckpt(repo, "check", "2").rc == 0  # nothing list shows disagrees with the manifest
    # a well-formed row that disagrees with the manifest: list shows the row, check names it
    lie = original.replace(b'"message":"two"', b'"message":"lie"')
    assert lie != original
    commit = _rewrite_message(repo, ref, lie)
    assert ckpt(repo, "list", "--json").json()["result"][1] == dict(good[1], commit=commit, message="lie")
    res = ckpt(repo, "check", "2", rc=1)
    assert "the Ckpt-Row line of its commit message disagrees with its manifest (git ckpt list shows that line)" in res.out
    assert ckpt(repo, "show", "2", "--json").json()["result"]["manifest"]["message"] == "two"


def test_a_commit_message_cannot_forge_list_records(repo):
    ckpt(repo, "save", "-m", "one")
    ref = "refs/ckpt/default/1"
    commit = git(repo, "rev-parse", ref).decode().strip()
    row = git(repo, "cat-file", "commit", ref).rstrip(b"\n").rsplit(b"\n", 1)[1]
    # what a record of git ckpt's for-each-ref looks like, for a ref that does not exist
    fake = (f"\n{commit} commit refs/ckpt/default/7\nckpt default/7: x\n\n".encode() + row.replace(b"default/1", b"default/7")
            + b"\n" + f"{commit} commit refs/ckpt/default/1\n".encode())
    new = _rewrite_message(repo, ref, b"ckpt default/1: one\n" + fake + b"\n" + row + b"\n")
    rows = ckpt(repo, "list", "--json").json()["result"]
    assert [(r["id"], r["commit"], r["message"]) for r in rows] == [("default/1", new, "one")]


def test_list_without_notes_loads_no_libgit2(repo):
    ckpt(repo, "save", "-m", "one")
    res = ckpt(repo, "list", env={"PYTHONPROFILEIMPORTTIME": "1"})
    imported = [line.rsplit("|", 1)[1].strip() for line in res.err.splitlines() if line.startswith("import time:")]
    # a repository whose config declares an extension (reftable, SHA-256) is opened through
    # libgit2, which checks the extensions it can serve (Repo.discover)
    assert "git_ckpt.gitcore" in imported and ("pygit2" in imported) == (REPO_FORMAT != "files")
    assert [p[:1] + p[2:] for p in map(str.split, res.out.splitlines())] == [["default/1", "manual", "one"]]
