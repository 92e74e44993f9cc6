"""Concurrency: 8 processes mixing save, restore/undo, verify and promote on one repository and two
linked worktrees of it.  Nothing is lost: every reported checkpoint exists with its own number and
exactly one save event, every verifier result line is in the note, every restore is logged, no
ref is torn, and the processes that waited or gave up say so (exit 5, one line)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from conftest import ckpt, fsck_clean, git, init_repo

WORKER = r"""
import json, subprocess, sys
cwd, out, cmds = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
results = []
for args in cmds:
    p = subprocess.run(["git", "ckpt", *args], cwd=cwd, capture_output=True)
    results.append({"args": args, "rc": p.returncode, "out": p.stdout.decode("utf-8", "replace"),
                    "err": p.stderr.decode("utf-8", "replace")})
open(out, "w").write(json.dumps(results))
"""


def run_workers(tmp: Path, plans: list[tuple[Path, list[list[str]]]]) -> list[dict]:
    """Start every plan at once (one process each, commands in sequence); return all results."""
    script = tmp / "worker.py"
    script.write_text(WORKER)
    procs = []
    for i, (cwd, cmds) in enumerate(plans):
        out = tmp / f"out{i}.json"
        procs.append((subprocess.Popen([sys.executable, str(script), str(cwd), str(out), json.dumps(cmds)]), out, i))
    results = []
    for proc, out, i in procs:
        assert proc.wait(timeout=240) == 0
        for r in json.loads(out.read_text()):
            r["worker"] = i
            results.append(r)
    return results


def test_eight_processes_lose_nothing(tmp_path):
    root = init_repo(tmp_path / "main")
    wt1, wt2 = tmp_path / "wt1", tmp_path / "wt2"
    git(root, "worktree", "add", "-q", "-b", "one", str(wt1))
    git(root, "worktree", "add", "-q", "-b", "two", str(wt2))
    git(root, "config", "ckpt.verifier.ok.command", "true")  # local config: no trust needed
    for w in (root, wt1, wt2):
        ckpt(w, "task", "start", "shared", fsck=False)
    (wt2 / "wt2.txt").write_text("base\n")
    ckpt(wt2, "save", "-m", "base", fsck=False)  # shared/1, the restore target
    (wt2 / "wt2.txt").write_text("changed\n")

    save = lambda tag, k: ["save", "--allow-empty", "-m", f"{tag}-{k}"]  # noqa: E731
    plans = [
        (root, [save("m0", k) for k in range(4)]),
        (root, [save("m1", k) for k in range(4)]),
        (wt1, [save("a0", k) for k in range(4)]),
        (wt1, [save("a1", k) for k in range(4)]),
        (wt2, [["restore", "shared/1"], ["undo"], ["restore", "shared/1"], ["undo"]]),
        (wt2, [save("b0", k) for k in range(3)]),
        (root, [["verify", "shared/1", "--isolated", "--rerun"] for _ in range(3)]),
        (wt1, [["verify", "shared/1", "--isolated", "--rerun"], ["promote", "shared/1", "--force"],
               ["verify", "shared/1", "--isolated", "--rerun"]]),
    ]
    results = run_workers(tmp_path, plans)

    for r in results:
        assert "Traceback" not in r["err"], r
        if r["rc"] == 5:  # waited too long for a lock: said so in one line
            lines = r["err"].splitlines()
            assert lines[0].startswith("error: ") and len(lines) <= 2, r
            assert any(w in lines[0] for w in ("another", "locked", "busy", "running")), r
        else:
            assert r["rc"] == 0, r
    ok = [r for r in results if r["rc"] == 0]
    print(Counter((r["args"][0], r["rc"]) for r in results))
    # the mix really ran: most commands succeeded, of every kind
    assert {r["args"][0] for r in ok} == {"save", "restore", "undo", "verify", "promote"}

    # every reported save exists, under its own number, exactly once
    saved_ids = [r["out"].split("checkpoint saved: ")[1].strip() for r in ok if r["args"][0] == "save"]
    assert len(saved_ids) == len(set(saved_ids))
    pre_restore = [line.split("saved current state as ")[1].split(" ")[0]
                   for r in ok if r["args"][0] in ("restore", "undo")
                   for line in r["out"].splitlines() if line.startswith("saved current state as ")]
    refs = dict(line.split(" ") for line in git(root, "for-each-ref", "--format=%(refname) %(objectname)", "refs/ckpt/shared").decode().splitlines())
    numbered = {name.rsplit("/", 1)[1] for name in refs if name.rsplit("/", 1)[1].isdigit()}
    for cid in saved_ids + pre_restore:
        assert f"refs/ckpt/{cid}" in refs, cid
    assert len(numbered) == 1 + len(saved_ids) + len(pre_restore)  # nothing else, nothing lost
    assert numbered == {str(n) for n in range(1, len(numbered) + 1)}  # no gaps, no torn numbers

    # the ledger holds one save event per checkpoint, and every restore/undo/verify
    events = ckpt(root, "log", "--json", "--task", "shared", fsck=False).json()["result"]
    save_events = Counter(e["data"]["id"] for e in events if e["type"] == "save")
    assert set(save_events) == {f"shared/{n}" for n in numbered} and set(save_events.values()) == {1}
    for kind in ("restore", "undo"):
        assert sum(e["type"] == kind for e in events) == sum(r["args"][0] == kind for r in ok)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    ckpt(root, "log", "--verify", "--task", "shared", fsck=False)

    # every verifier run left its result line in the note
    verify_runs = [r for r in ok if r["args"][0] == "verify"]
    target = refs["refs/ckpt/shared/1"]
    lines = [json.loads(x) for x in git(root, "notes", "--ref=ckpt", "show", target).decode().splitlines() if x.strip()]
    assert len(lines) == len(verify_runs) and all(x["status"] == "passed" for x in lines)
    if any(r["args"][0] == "promote" for r in ok) or verify_runs:
        assert refs.get("refs/ckpt/shared/promoted") == target

    # wt2's files are where the last of its restore/undo left them, and every checkpoint restores
    fsck_clean(root)
    ckpt(root, "check", "--all", fsck=False)
    for w in (root, wt1, wt2):
        assert not (Path(git(w, "rev-parse", "--git-dir").decode().strip()) / "ckpt" / "RESTORE").exists()


def test_a_held_lock_gives_a_clear_message(tmp_path):
    """A restore waiting on another restore's worktree lock gives up with exit 5 and one line."""
    import fcntl
    import os

    root = init_repo(tmp_path / "r")
    (root / "a.txt").write_text("one\n")
    ckpt(root, "save")
    (root / "a.txt").write_text("two\n")
    lock = root / ".git" / "ckpt" / "lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        res = ckpt(root, "restore", "1", rc=5, env={"GIT_CKPT_LOCK_TIMEOUT": "0.5"}, fsck=False)
    finally:
        os.close(fd)
    assert res.err.splitlines()[0] == "error: another git ckpt command (save, verify, restore or undo) is running in this worktree"
    assert (root / "a.txt").read_text() == "two\n"
    ckpt(root, "restore", "1")
    assert (root / "a.txt").read_text() == "one\n"


def test_a_dry_run_reads_beside_a_running_verify_and_waits_only_for_a_restore(tmp_path):
    """Walkthrough 30: ``restore --dry-run`` waited while a ``verify`` ran (it took the lock a
    restore takes).  It reads, as save and verify do: a shared hold passes it, an exclusive one
    (a restore running) still makes it wait, then exit 5."""
    import fcntl
    import os

    root = init_repo(tmp_path / "r")
    (root / "a.txt").write_text("one\n")
    ckpt(root, "save")
    (root / "a.txt").write_text("two\n")
    fd = os.open(root / ".git" / "ckpt" / "lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)  # what a running verify holds
        res = ckpt(root, "restore", "--dry-run", "1", env={"GIT_CKPT_LOCK_TIMEOUT": "0"}, fsck=False)
        assert res.out.splitlines()[:2] == ["would restore default/1:", "write   a.txt"] and res.err == "", res
        fcntl.flock(fd, fcntl.LOCK_EX)  # what a running restore holds
        res = ckpt(root, "restore", "--dry-run", "1", rc=5, env={"GIT_CKPT_LOCK_TIMEOUT": "0"}, fsck=False)
        assert res.err.splitlines()[0] == "error: a git ckpt restore or undo is running in this worktree", res
    finally:
        os.close(fd)
    assert (root / "a.txt").read_text() == "two\n"
