"""Scale: what must keep working, and stay truthful, when history or trees are large.

Real repositories, the real ``git ckpt`` entry point and the real ``git``; refs made in bulk with
``git update-ref --stdin``.  No timing is asserted: each test proves an outcome (exit code, refs
on both sides byte for byte, the ledger's words) at a size that used to break it.
"""

from __future__ import annotations

import json
import os

import pytest

from conftest import ckpt, git, index_state, init_repo, worktree_state

pytestmark = pytest.mark.once  # a volume/generator test: under the machine's git only (.ci/run)


def _refs(repo, *patterns: str) -> bytes:
    return git(repo, "for-each-ref", "--format=%(objectname) %(refname)", *patterns)


def _bulk_checkpoints(repo, task: str, first: int, last: int, commit: str) -> None:
    """Refs ``refs/ckpt/TASK/first..last`` pointing at ``commit`` (a real checkpoint), in one
    ``git update-ref --stdin`` transaction (loose refs, as git ckpt itself leaves them)."""
    data = "".join(f"create refs/ckpt/{task}/{n} {commit}\n" for n in range(first, last + 1))
    git(repo, "update-ref", "--stdin", input=data.encode())


def _event(repo, task: str, back: int = 0) -> dict:
    """The ledger event ``back`` entries before the newest, as stored."""
    return json.loads(git(repo, "cat-file", "blob", f"refs/ckpt/{task}/log{'~' * back}:event.json"))


def _hook(bare, name: str, body: str) -> None:
    path = bare / "hooks" / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def _many(tmp_path, count: int):
    """A repository whose task ``big`` holds ``count`` checkpoints (one real save, then refs to
    it), and an empty bare remote ``origin``."""
    repo = init_repo(tmp_path / "repo")
    ckpt(repo, "task", "start", "big")
    (repo / "README").write_text("changed\n")
    ckpt(repo, "save", "-m", "one", fsck=False)
    first = git(repo, "rev-parse", "refs/ckpt/big/1").decode().strip()
    _bulk_checkpoints(repo, "big", 2, count, first)
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    return repo, bare


@pytest.fixture
def many(tmp_path):
    """20,000 checkpoints: past the 2 MiB argument limit that one lease and one refspec per
    ref hit near 17,000."""
    return _many(tmp_path, 20_000)


@pytest.fixture
def several(tmp_path):
    """3,000 checkpoints: enough for the outcomes of a failed push to be told apart."""
    return _many(tmp_path, 3_000)


@pytest.mark.timeout(1200)  # 20,000 refs written three times over on a shared 2-core machine
def test_first_push_of_20000_checkpoints_and_fetching_them(many, tmp_path):
    """Issue 14 input 8: one ``--force-with-lease`` and one refspec per ref overflowed the 2 MiB
    argument limit near 17,000 refs (exit 70, a "pushed" event with nothing after it)."""
    repo, bare = many
    res = ckpt(repo, "push", fsck=False)
    assert res.err == ""
    lines = res.out.splitlines()
    assert lines[:2] == ["new        refs/ckpt/big/1", "new        refs/ckpt/big/2"]
    assert lines[10] == "...        (19981 more)"
    assert lines[-2:] == ["new        refs/ckpt/big/log", "pushed 20001 ref(s) to origin"]
    assert _refs(bare, "refs/ckpt") == _refs(repo, "refs/ckpt")
    assert len(_refs(bare, "refs/ckpt").splitlines()) == 20_001
    # the ledger says exactly what went, in a few bytes, and nothing failed after it
    ev = _event(repo, "big")
    assert ev["type"] == "push"
    assert ev["data"]["checkpoints"] == "1-20000" and ev["data"]["refs"] == ["refs/ckpt/big/log"]
    assert ev["data"]["remote"] == "origin"
    # the remote-tracking copies match, and no staging ref is left behind
    assert _refs(repo, "refs/ckpt-remotes/origin").replace(b"refs/ckpt-remotes/origin/", b"refs/ckpt/") == _refs(bare, "refs/ckpt")
    assert _refs(repo, "refs/ckpt-push") == b""
    assert ckpt(repo, "push", fsck=False).out == "everything up to date on origin\n"
    # a teammate fetches all of them; the fetch event stays small too
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(bare), str(bob))
    ckpt(bob, "task", "start", "mine")
    (bob / "README").write_text("bob\n")
    ckpt(bob, "save", fsck=False)
    out = ckpt(bob, "fetch", fsck=False).out
    assert out.startswith("new        refs/ckpt/big/1\n")
    assert out.splitlines()[10:12] == ["...        (19981 more)", "new        refs/ckpt/big/19992"]
    assert out.splitlines()[-1].startswith("fetched 20001 ref(s) from origin; checkpoints: origin:big/1, origin:big/2,")
    assert _refs(bob, "refs/ckpt-remotes/origin").replace(b"refs/ckpt-remotes/origin/", b"refs/ckpt/") == _refs(bare, "refs/ckpt")
    ev = _event(bob, "mine")
    assert ev["type"] == "fetch" and ev["data"]["tasks"] == {"big": {"checkpoints": "1-20000", "refs": ["refs/ckpt/big/log"]}}
    assert ckpt(bob, "show", "origin:big/19999", "--json", fsck=False).json()["result"]["commit"] == git(repo, "rev-parse", "refs/ckpt/big/1").decode().strip()
    git(bare, "fsck", "--strict", "--no-dangling")


def test_a_refused_push_of_many_refs_sends_nothing_and_says_so(several):
    """An atomic push the remote refuses leaves it as it was; the ledger's push event is
    followed by push-failed naming nothing sent; the next push, once allowed, sends all."""
    repo, bare = several
    _hook(bare, "pre-receive", "echo 'no thanks' >&2\nexit 1\n")
    res = ckpt(repo, "push", rc=10, fsck=False)
    assert res.out == ""
    assert res.err.startswith("error: git push to origin failed: ")
    assert "hint: nothing was changed on the remote" in res.err
    assert _refs(bare) == b""
    assert _event(repo, "big", 1)["type"] == "push"
    failed = _event(repo, "big")
    assert failed["type"] == "push-failed"
    assert failed["data"]["sent"] == {"checkpoints": "", "refs": []}
    assert _refs(repo, "refs/ckpt-push") == b"" and _refs(repo, "refs/ckpt-remotes") == b""
    os.unlink(bare / "hooks" / "pre-receive")
    assert ckpt(repo, "push", fsck=False).out.endswith("pushed 3001 ref(s) to origin\n")
    assert _refs(bare, "refs/ckpt") == _refs(repo, "refs/ckpt")


def test_a_push_that_lands_in_part_records_exactly_what_landed(several):
    """A remote without atomic pushes whose ``update`` hook refuses some refs: the refs that
    did land are the ones the push-failed event names, and the tracking refs say the same."""
    repo, bare = several
    git(bare, "config", "receive.advertiseAtomic", "false")
    _hook(bare, "update", 'case "$1" in refs/ckpt/big/1[0-9][0-9][0-9]|refs/ckpt/big/log) exit 1;; esac\nexit 0\n')
    res = ckpt(repo, "push", rc=10, fsck=False)
    assert "error: git push to origin failed: refs/ckpt/big/1000 " in res.err
    assert "hint: 2000 of 3001 refs reached origin anyway" in res.err
    landed = _refs(bare, "refs/ckpt")
    assert len(landed.splitlines()) == 2_000
    failed = _event(repo, "big")
    assert failed["type"] == "push-failed"
    assert failed["data"]["sent"] == {"checkpoints": "1-999,2000-3000", "refs": []}
    assert _refs(repo, "refs/ckpt-remotes/origin").replace(b"refs/ckpt-remotes/origin/", b"refs/ckpt/") == landed
    # once the remote allows it, the next push sends only the rest
    os.unlink(bare / "hooks" / "update")
    out = ckpt(repo, "push", fsck=False).out
    assert out.endswith("pushed 1001 ref(s) to origin\n")
    assert _refs(bare, "refs/ckpt") == _refs(repo, "refs/ckpt")


def test_push_of_many_tasks_at_once(tmp_path):
    """``push --all`` of 600 tasks: every ledger goes (one staging wildcard, not one lease per
    ledger on the command line); the remote then equals the local refs."""
    repo = init_repo(tmp_path / "repo")
    ckpt(repo, "save", "-m", "one", fsck=False)
    commit = git(repo, "rev-parse", "refs/ckpt/default/1").decode().strip()
    log = git(repo, "rev-parse", "refs/ckpt/default/log").decode().strip()
    name = "t" * 90
    data = "".join(f"create refs/ckpt/{name}{i}/1 {commit}\ncreate refs/ckpt/{name}{i}/log {log}\n" for i in range(600))
    git(repo, "update-ref", "--stdin", input=data.encode())
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    assert ckpt(repo, "push", "--all", fsck=False).out.endswith("pushed 1202 ref(s) to origin\n")
    assert _refs(bare, "refs/ckpt") == _refs(repo, "refs/ckpt")


def test_many_empty_files_and_an_intent_to_add_round_trip(repo):
    """Thousands of empty files (each an intent-to-add candidate) used to become one ``git
    ls-tree`` pathspec each: past the argument limit the listing is filtered in-process."""
    d = repo / ("d" * 100)
    d.mkdir()
    for i in range(12_500):  # 12,500 paths of 180 bytes: past the 2 MiB argument limit
        (d / f"empty-{i:05d}-{'x' * 67}").write_bytes(b"")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "empties")
    (repo / "new.txt").write_text("intent\n")
    git(repo, "add", "-N", "new.txt")
    (d / f"empty-00007-{'x' * 67}").write_text("now not empty\n")
    before = (worktree_state(repo), index_state(repo))
    ckpt(repo, "save", "-m", "many")
    (repo / "new.txt").unlink()
    git(repo, "reset", "-q", "--hard")
    ckpt(repo, "restore", "1")
    assert (worktree_state(repo), index_state(repo)) == before


def test_refs_under_reads_loose_and_packed_refs_alike(several):
    """``list``, ``save`` and ``status`` see the same checkpoints whether refs are loose,
    packed, or both with the loose one newer (git's precedence), with refs of other tasks
    and a symbolic ref around."""
    repo, _bare = several
    first = git(repo, "rev-parse", "refs/ckpt/big/1").decode().strip()
    other = git(repo, "rev-parse", "refs/ckpt/big/log").decode().strip()
    git(repo, "symbolic-ref", "refs/ckpt/big/sym", "refs/heads/main")
    loose = ckpt(repo, "list", "--task", "big", "--json", fsck=False).json()["result"]
    assert len(loose) == 3_000 and loose[-1]["id"] == "big/3000"
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "ckpt" / "big" / "3000").exists()
    assert ckpt(repo, "list", "--task", "big", "--json", fsck=False).json()["result"] == loose
    # a loose ref newer than its packed copy wins, as in git
    git(repo, "update-ref", "refs/ckpt/big/3000", other, first)
    assert (repo / ".git" / "refs" / "ckpt" / "big" / "3000").exists()
    res = ckpt(repo, "show", "big/@", rc=None, fsck=False)
    assert git(repo, "rev-parse", "refs/ckpt/big/3000").decode().strip() == other
    assert res.rc == 7 and f"refs/ckpt/big/3000 names {other[:12]}, which is not a checkpoint commit" in res.err
    git(repo, "update-ref", "refs/ckpt/big/3000", first, other)
    # saving numbers on from the highest, packed or loose
    (repo / "README").write_text("again\n")
    assert ckpt(repo, "save", fsck=False).out == "checkpoint saved: big/3001\n"


def test_save_packs_a_long_task_refs_and_reads_them_alike(repo):
    """After 300 loose checkpoint refs a save packs them (as ``git gc`` would); every command
    then sees the same checkpoints, and later saves number on."""
    ckpt(repo, "save", "-m", "one", fsck=False)
    first = git(repo, "rev-parse", "refs/ckpt/default/1").decode().strip()
    _bulk_checkpoints(repo, "default", 2, 300, first)
    listed = ckpt(repo, "list", "--json", fsck=False).json()["result"]
    loose = repo / ".git" / "refs" / "ckpt" / "default"
    assert len(os.listdir(loose)) == 301
    (repo / "README").write_text("changed\n")
    assert ckpt(repo, "save", fsck=False).out == "checkpoint saved: default/301\n"
    assert not loose.exists() or os.listdir(loose) == []
    assert b"refs/ckpt/default/300\n" in (repo / ".git" / "packed-refs").read_bytes()
    after = ckpt(repo, "list", "--json", fsck=False).json()["result"]
    assert after[:-1] == listed and after[-1]["id"] == "default/301"
    (repo / "README").write_text("again\n")
    assert ckpt(repo, "save").out == "checkpoint saved: default/302\n"
    assert ckpt(repo, "show", "300", "--json", fsck=False).json()["result"]["commit"] == first


def test_log_newest_n_and_a_reader_that_leaves_early(repo):
    """``log -n N`` prints exactly the last N lines of the whole log; ``log | head`` prints its
    first lines and exits 0 with nothing on stderr, however long the ledger."""
    for i in range(70):  # past one 64-line block of output
        (repo / "README").write_text(f"v{i}\n")
        ckpt(repo, "save", "-m", f"s{i}", fsck=False)
    whole = ckpt(repo, "log", fsck=False).out.splitlines()
    assert len(whole) == 70
    for n in (0, 1, 20, 64, 65, 70, 500):
        assert ckpt(repo, "log", "-n", str(n), fsck=False).out.splitlines() == whole[len(whole) - min(n, 70):]
    assert ckpt(repo, "log", "-n", "5", "--json", fsck=False).json()["result"] == ckpt(repo, "log", "--json", fsck=False).json()["result"][-5:]
    ckpt(repo, "log", "-n", "-1", rc=2, fsck=False)
    import subprocess

    proc = subprocess.run("git ckpt log | head -3", shell=True, cwd=repo, capture_output=True)
    assert proc.returncode == 0 and proc.stderr == b""
    assert proc.stdout.decode().splitlines() == whole[:3]


def test_handoff_of_a_long_task_reads_results_like_a_short_one(repo):
    """Past 64 checkpoints the handoff reads the notes tree once instead of one lookup per
    checkpoint: the newest result per verifier and where it ran are the same."""
    from test_verify import verifier, write_config

    write_config(repo, verifier("ok", ["true"]))
    (repo / "README").write_text("v1\n")
    ckpt(repo, "save", "-m", "one", fsck=False)
    ckpt(repo, "verify", fsck=False)
    short = ckpt(repo, "handoff", "--format", "json", fsck=False).json()["result"]["results"]
    assert [(r["verifier"], r["checkpoint"], r["status"]) for r in short] == [("ok", "default/1", "passed")]
    first = git(repo, "rev-parse", "refs/ckpt/default/1").decode().strip()
    _bulk_checkpoints(repo, "default", 2, 70, first)  # the same commit: its note counts for each
    long = ckpt(repo, "handoff", "--format", "json", fsck=False).json()["result"]["results"]
    assert [(r["verifier"], r["checkpoint"], r["status"], r["commit"]) for r in long] == [("ok", "default/70", "passed", first)]
    assert {k: v for k, v in long[0].items() if k not in ("checkpoint", "current")} == {k: v for k, v in short[0].items() if k not in ("checkpoint", "current")}


@pytest.mark.parametrize("layout", ["loose", "packed", "mixed"])
def test_latest_checkpoint_is_the_highest_number_however_refs_are_stored(repo, layout):
    """``save`` numbers on from, and ``status``/``show @`` name, the highest N of the task,
    read from loose refs, ``packed-refs`` or both, never confused by other tasks (``long`` vs
    ``long2``), leading zeros, non-numbered refs or a higher number in another prefix."""
    ckpt(repo, "task", "start", "long", fsck=False)
    ckpt(repo, "save", "-m", "one", fsck=False)
    first = git(repo, "rev-parse", "refs/ckpt/long/1").decode().strip()
    _bulk_checkpoints(repo, "long", 2, 40, first)
    _bulk_checkpoints(repo, "long2", 1, 900, first)
    git(repo, "update-ref", "refs/ckpt/long/0900", first)
    git(repo, "update-ref", "refs/ckpt-remotes/origin/long/5000", first)
    if layout == "packed":
        git(repo, "pack-refs", "--all")
    elif layout == "mixed":
        git(repo, "pack-refs", "--all")
        _bulk_checkpoints(repo, "long", 41, 45, first)
    top = 40 if layout != "mixed" else 45
    assert ckpt(repo, "show", "@", "--json", fsck=False).json()["result"]["id"] == f"long/{top}"
    (repo / "README").write_text("changed\n")
    assert ckpt(repo, "save", fsck=False).out == f"checkpoint saved: long/{top + 1}\n"
    assert ckpt(repo, "status", "--json", fsck=False).json()["result"]["latest"] == f"long/{top + 1}"


def test_restore_and_check_of_large_files_write_exact_bytes_and_modes(repo):
    """A 40 MB file held in raw/ (CRLF bytes that eol=lf would not give back) and a 40 MB
    executable tracked file: restore writes both back byte for byte with their modes (raw bytes
    are streamed from git, compared by git hash-object, never read whole), and check agrees."""
    (repo / ".gitattributes").write_text("*.dat text eol=lf\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "attributes")
    crlf = b"".join(b"line %07d of a large text file\r\n" % i for i in range(1_250_000))  # 40 MB
    binary = bytes(range(256)) * (160 * 1024) + os.urandom(4096)  # 40 MB
    (repo / "big.dat").write_bytes(crlf)
    (repo / "tool.bin").write_bytes(binary)
    (repo / "tool.bin").chmod(0o755)
    assert ckpt(repo, "save", "-m", "large").out == "checkpoint saved: default/1\n"
    raw = git(repo, "ls-tree", "-r", "--name-only", "refs/ckpt/default/1^3", "raw/").decode().split()
    assert raw == ["raw/big.dat"]
    (repo / "big.dat").write_bytes(b"small\n")
    (repo / "tool.bin").write_bytes(b"x")
    (repo / "tool.bin").chmod(0o644)
    ckpt(repo, "restore", "1")
    assert (repo / "big.dat").read_bytes() == crlf and (repo / "tool.bin").read_bytes() == binary
    assert (repo / "tool.bin").stat().st_mode & 0o777 == 0o755 and (repo / "big.dat").stat().st_mode & 0o777 == 0o644
    assert ckpt(repo, "check", "1").rc == 0
    # a second restore finds the raw file already right (git hash-object), and keeps it
    ckpt(repo, "restore", "1")
    assert (repo / "big.dat").read_bytes() == crlf


@pytest.mark.once
def test_gc_pruning_thousands_of_checkpoints_of_a_long_task_name_logs_them_in_bounded_events(tmp_path):
    """Attack pass: gc writes one ``prune`` event naming every checkpoint it prunes; past ~3,500
    checkpoints of a 100-character task (~17,000 of a short one) it exceeded the ledger's 1 MiB
    event bound and gc failed with "shorten the note".  Events of at most 2,000 checkpoints each:
    every pruned one is named once, in order, and the ledger verifies."""
    repo = init_repo(tmp_path / "repo")
    task = "t" * 100
    ckpt(repo, "task", "start", task)
    (repo / "README").write_text("changed\n")
    ckpt(repo, "save", "-m", "one", fsck=False)
    first = git(repo, "rev-parse", f"refs/ckpt/{task}/1").decode().strip()
    _bulk_checkpoints(repo, task, 2, 4501, first)
    res = ckpt(repo, "gc", "--keep", "1", fsck=False)
    assert "Traceback" not in res.err and res.rc == 0, res
    assert _refs(repo, f"refs/ckpt/{task}/[0-9]*").decode().split() == [first, f"refs/ckpt/{task}/4501"]
    events = [_event(repo, task, back) for back in (2, 1, 0)]
    assert [e["type"] for e in events] == ["prune"] * 3
    assert [len(e["data"]["pruned"]) for e in events] == [2000, 2000, 500]
    assert sum((e["data"]["pruned"] for e in events), []) == [f"{task}/{n}" for n in range(1, 4501)]
    assert all(len(json.dumps(e)) < 1 << 20 for e in events)
    assert ckpt(repo, "log", "--verify", "--task", task, fsck=False).rc == 0
