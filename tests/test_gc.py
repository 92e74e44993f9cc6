"""Retention (``git ckpt gc``): count, age and size rules; never the latest, the promoted, a handoff
point or either side of the last restore/undo; a prune event records every id and commit first."""

from __future__ import annotations

import os
import time

import pytest

from conftest import ckpt, git, init_repo, worktree_state


def numbered(root) -> list[int]:
    out = git(root, "for-each-ref", "--format=%(refname)", "refs/ckpt/default").decode().split()
    return sorted(int(r.rsplit("/", 1)[1]) for r in out if r.rsplit("/", 1)[1].isdigit())


@pytest.fixture
def seven(tmp_path):
    root = init_repo(tmp_path / "r")
    for i in range(1, 8):
        (root / "f.txt").write_text(f"{i}\n")
        ckpt(root, "save", "-m", str(i), fsck=False)
    return root


def handoff(root, cid: str) -> None:
    """The event another command (handoff) writes to mark a resume point."""
    from git_ckpt import ledger
    from git_ckpt.gitcore import Repo

    ledger.append(Repo.discover(root), "default", "handoff", {"id": cid})


def test_gc_never_prunes_what_is_relied_on(seven):
    root = seven
    ckpt(root, "promote", "2", "--force", fsck=False)
    handoff(root, "default/3")
    ckpt(root, "restore", "4", fsck=False)  # from default/7 (the state was already saved), target 4
    before = worktree_state(root)
    dry = ckpt(root, "gc", "--keep", "1", "--dry-run", "--json").json()["result"]
    assert [p["id"] for p in dry["pruned"]] == ["default/1", "default/5", "default/6"]
    assert numbered(root) == list(range(1, 8))  # dry run: nothing changed
    res = ckpt(root, "gc", "--keep", "1")
    assert res.out.splitlines()[:3] == [f"pruned default/{n} ({c[:12]})" for n, c in
                                         [(p["id"].split("/")[1], p["commit"]) for p in dry["pruned"]]]
    assert numbered(root) == [2, 3, 4, 7]
    reasons = {p["id"]: p["reason"] for p in dry["protected"]}
    assert reasons == {"default/2": "promoted", "default/3": "handoff point", "default/4": "target of the last restore",
                       "default/7": "latest"}
    events = ckpt(root, "log", "--json", fsck=False).json()["result"]
    prune = [e for e in events if e["type"] == "prune"]
    assert len(prune) == 1 and prune[0]["data"]["pruned"] == ["default/1", "default/5", "default/6"]
    assert prune[0]["data"]["commits"] == {p["id"]: p["commit"] for p in dry["pruned"]}
    assert worktree_state(root) == before  # gc never touches files
    ckpt(root, "log", "--verify", fsck=False)
    ckpt(root, "check", "--all")
    ckpt(root, "undo")  # the way back survived
    assert (root / "f.txt").read_text() == "7\n"
    # a pruned checkpoint comes back from the commit the event recorded
    git(root, "update-ref", "refs/ckpt/default/5", prune[0]["data"]["commits"]["default/5"])
    ckpt(root, "restore", "5")
    assert (root / "f.txt").read_text() == "5\n"


def test_gc_age_rule_and_config_defaults(seven):
    from git_ckpt import config, retention
    from git_ckpt.gitcore import Repo

    root = seven
    ckpt(root, "gc", "--older-than", "1d")  # everything is younger: nothing goes
    assert numbered(root) == list(range(1, 8))
    (root / ".ckpt.toml").write_text('[retention]\nkeep = 3\nolder_than = "2d"\n')
    repo = Repo.discover(root)
    cfg = config.load(repo)
    pol = retention.policy(cfg, keep=None, older_than=None, max_bytes=None)
    assert (pol.keep, pol.older_than) == (3, 2 * 86400)
    res = retention.gc(repo, cfg, tasks=["default"], pol=pol, now=time.time() + 86400)  # a day later: too young
    assert res.pruned == []
    res = retention.gc(repo, cfg, tasks=["default"], pol=pol, now=time.time() + 3 * 86400)
    assert [cid for cid, _c in res.pruned] == ["default/1", "default/2", "default/3", "default/4"]
    assert numbered(root) == [5, 6, 7]


def test_gc_size_budget(tmp_path):
    root = init_repo(tmp_path / "r")
    for i in range(4):
        (root / "big.bin").write_bytes(os.urandom(64 * 1024))
        ckpt(root, "save", "-m", str(i), fsck=False)
    ckpt(root, "gc", "--max-bytes", "10GiB", "--older-than", "9999d")
    assert numbered(root) == [1, 2, 3, 4]
    res = ckpt(root, "gc", "--max-bytes", "100KiB", "--older-than", "9999d", "--json").json()["result"]
    assert [p["id"] for p in res["pruned"]] == ["default/1", "default/2", "default/3"]
    assert numbered(root) == [4]  # the latest is kept even over budget


def test_gc_refuses_with_a_corrupt_ledger(seven):
    root = seven
    bad = git(root, "hash-object", "-w", "--stdin", input=b"garbage").decode().strip()
    tree = git(root, "mktree", input=f"100644 blob {bad}\tcard.json\n100644 blob {bad}\tevent.json\n".encode()).decode().strip()
    old = git(root, "rev-parse", "refs/ckpt/default/log").decode().strip()
    git(root, "update-ref", "refs/ckpt/default/log", git(root, "commit-tree", tree, "-p", old, "-m", "x").decode().strip())
    res = ckpt(root, "gc", "--keep", "1", rc=7)
    assert res.err.startswith("error: ledger of task default is corrupt")
    assert numbered(root) == list(range(1, 8))


def test_gc_usage_errors(seven):
    assert ckpt(seven, "gc", "--older-than", "soon", rc=2).err.startswith("error: --older-than: cannot read duration")
    assert ckpt(seven, "gc", "--max-bytes", "lots", rc=2).err.startswith("error: --max-bytes: cannot read size")
    ckpt(seven, "gc", "--keep", "-1", rc=2)
    ckpt(seven, "gc", "--task", "default", "--all", rc=2)


def test_gc_keeps_both_sides_of_the_last_restore(tmp_path):
    root = init_repo(tmp_path / "r")
    for i in range(1, 4):
        (root / "f.txt").write_text(f"{i}\n")
        ckpt(root, "save", fsck=False)
    (root / "f.txt").write_text("unsaved\n")
    ckpt(root, "restore", "1", fsck=False)  # saves default/4 (pre-restore)
    (root / "f.txt").write_text("later\n")
    ckpt(root, "save", fsck=False)  # default/5, the latest
    res = ckpt(root, "gc", "--keep", "1", "--json").json()["result"]
    assert [p["id"] for p in res["pruned"]] == ["default/2", "default/3"]
    assert {p["id"]: p["reason"] for p in res["protected"]} == {
        "default/1": "target of the last restore", "default/4": "the state the last restore left", "default/5": "latest"}
    ckpt(root, "undo")
    assert (root / "f.txt").read_text() == "unsaved\n"


def test_handoff_marks_a_point_gc_keeps(seven):
    """`git ckpt handoff` records where the receipt was handed over; gc never prunes it."""
    root = seven
    ckpt(root, "restore", "3", fsck=False)
    assert ckpt(root, "handoff", "--json", fsck=False).json()["result"]["current"] == "default/3"
    ckpt(root, "handoff", fsck=False)  # a second receipt at the same point adds no event
    events = [e for e in ckpt(root, "log", "--json", fsck=False).json()["result"] if e["type"] == "handoff"]
    assert [e["data"] for e in events] == [{"id": "default/3"}]
    ckpt(root, "restore", "5", fsck=False)
    ckpt(root, "restore", "6", fsck=False)
    dry = ckpt(root, "gc", "--keep", "1", "--dry-run", "--json").json()["result"]
    assert [p["id"] for p in dry["pruned"]] == ["default/1", "default/2", "default/4"]
    assert {p["id"]: p["reason"] for p in dry["protected"]}["default/3"] == "handoff point"


def test_gc_keeps_the_evidence_of_unpushed_commits(tmp_path):
    """A checkpoint whose tree an unpushed commit has is what verify-commit (pre-push) finds that
    commit's evidence by: gc keeps it until the commit is on a remote-tracking branch, then may prune it."""
    from test_verify import verifier, write_config

    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    root = init_repo(tmp_path / "r")
    write_config(root, verifier("ok", "true"))
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "-q", "origin", "HEAD:refs/heads/main")
    git(root, "fetch", "-q", "origin")
    ckpt(root, "hooks", "install")
    commits = []
    for i in (1, 2):
        (root / "f.txt").write_text(f"{i}\n")
        ckpt(root, "save", "-m", f"work {i}")
        ckpt(root, "verify")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"work {i}")
        commits.append(git(root, "rev-parse", "HEAD").decode().strip())
    (root / "f.txt").write_text("3\n")
    ckpt(root, "save", "-m", "later")
    dry = ckpt(root, "gc", "--keep", "1", "--dry-run", "--json").json()["result"]
    assert {p["id"]: p["reason"] for p in dry["protected"]} == {
        "default/1": f"backs unpushed commit {commits[0][:12]} (verify-commit finds it by its tree)",
        "default/2": "promoted", "default/3": "latest"}
    assert dry["pruned"] == []
    ckpt(root, "gc", "--keep", "1")
    git(root, "push", "-q", "origin", "HEAD:refs/heads/main")  # pre-push: verify-commit of both commits
    git(root, "fetch", "-q", "origin")
    res = ckpt(root, "gc", "--keep", "1", "--json").json()["result"]
    assert [p["id"] for p in res["pruned"]] == ["default/1"]
    assert numbered(root) == [2, 3]
    assert ckpt(root, "verify-commit", commits[1]).out.startswith(f"{commits[1][:12]}")
