"""Fast paths kept exact: list's age parsing and its one-walk notes read (flat and fanned out)."""

from __future__ import annotations

import calendar
import time

from conftest import ckpt, git
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
