"""Hostile input (issue 10): every byte read from a checkpoint, a note, a ledger or a remote is
typed and checked before it is used.  Each numbered input of the issue is a test here, with its
siblings (other fields, depths, orders and commands breaking the same promise).

The repositories live inside a *sandbox* directory next to a sentinel tree (files, empty
directories, a linked worktree with uncommitted work); every hostile command is followed by a
byte-for-byte comparison of that sentinel tree.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import msgspec
import pytest

from conftest import blob, ckpt, git, init_repo, literal_tree, worktree_state

# ------------------------------------------------------------------------------ the sandbox


def make_world(tmp_path: Path) -> tuple[Path, Path]:
    """``(sandbox, repo)``: a repository with an overlay fixture and one checkpoint
    ``default/1``, inside a sandbox holding a sentinel tree the tests compare byte for byte."""
    sandbox = tmp_path / "sandbox"
    (sandbox / "victim").mkdir(parents=True)
    (sandbox / "victim" / "precious.txt").write_bytes(b"do not touch\n")
    (sandbox / "EMPTY" / "inner" / "x").mkdir(parents=True)
    (sandbox / "outside").mkdir()
    (sandbox / "outside" / "keep").write_bytes(b"keep\n")
    root = init_repo(sandbox / "repo")
    (root / ".gitignore").write_text("fixtures/\n")
    (root / ".ckpt.toml").write_text('[overlay]\ninclude = ["fixtures/"]\n')
    git(root, "add", ".gitignore", ".ckpt.toml")
    git(root, "commit", "-q", "-m", "config")
    (root / "fixtures").mkdir()
    (root / "fixtures" / "data.bin").write_bytes(b"\x00fixture\xff")
    (root / "a.txt").write_text("one\n")
    ckpt(root, "save", "-m", "one")
    return sandbox, root


def sentinel(sandbox: Path) -> dict:
    """Everything in the sandbox outside the repository's worktree (and its .git)."""
    state = worktree_state(sandbox, skip=(".git", "repo"))
    return state


def repo_state(root: Path) -> tuple:
    """The worktree, the index and every ref of ``root``."""
    return (worktree_state(root), git(root, "ls-files", "-s", "-z"),
            git(root, "for-each-ref", "--format=%(refname) %(objectname)"))


def manifest_of(root: Path, ref: str) -> dict:
    return json.loads(git(root, "show", f"{ref}^3:manifest.json"))


def forge(root: Path, *, source: str = "refs/ckpt/default/1", dest: str = "refs/ckpt-remotes/origin/default/1",
          edit=None, manifest: bytes | None = None, tree: str | None = None, index_tree: str | None = None,
          tar: bytes | None = None) -> str:
    """A copy of checkpoint ``source`` at ``dest`` with its manifest edited (``edit(dict)``) or
    replaced, its worktree tree, index tree or overlay tar replaced: the shape a hostile
    teammate can push (written with plumbing only).  Returns the new commit."""
    parents = git(root, "rev-list", "--parents", "-n1", source).decode().split()[1:]
    m = manifest_of(root, source)
    if tree is not None:
        m["tree"] = tree  # what a real attacker writes: a manifest naming the tree it ships
    if edit is not None:
        edit(m)
    data = manifest if manifest is not None else json.dumps(m).encode()
    entries = {}
    for rec in git(root, "ls-tree", "-z", parents[-1]).split(b"\0"):
        if rec:
            head, _, name = rec.partition(b"\t")
            entries[name] = head
    entries[b"manifest.json"] = b"100644 blob " + blob(root, data).encode()
    if tar is not None:
        entries[b"overlay.tar"] = b"100644 blob " + blob(root, tar).encode()
    meta_tree = git(root, "mktree", "-z", "--missing", input=b"".join(h + b"\t" + n + b"\0" for n, h in entries.items())).decode().strip()
    meta = git(root, "commit-tree", meta_tree, "-m", "meta").decode().strip()
    index_commit = parents[-2]
    if index_tree is not None:
        index_commit = git(root, "commit-tree", index_tree, "-m", "index").decode().strip()
    wtree = tree or git(root, "rev-parse", f"{source}^{{tree}}").decode().strip()
    args = [a for p in parents[:-2] + [index_commit, meta] for a in ("-p", p)]
    commit = git(root, "commit-tree", wtree, *args, "-m", "forged").decode().strip()
    git(root, "update-ref", dest, commit)
    return commit


def one_file_tar(name: str, data: bytes, *, kind=tarfile.REGTYPE, link: str = "") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo(name)
        info.type = kind
        info.mode = 0o644
        if kind == tarfile.SYMTYPE:
            info.linkname = link
            tar.addfile(info)
        else:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def tree_with(root: Path, base_tree: str, extra: list[tuple[bytes, bytes, str]]) -> str:
    """``base_tree`` with ``(mode, name, oid)`` entries added literally (names git refuses)."""
    entries = []
    for rec in git(root, "ls-tree", "-z", base_tree).split(b"\0"):
        if rec:
            head, _, name = rec.partition(b"\t")
            mode, _kind, oid = head.split(b" ")
            entries.append((mode, name, oid.decode()))
    names = {n for _m, n, _o in extra}
    entries = [e for e in entries if e[1] not in names] + extra
    entries.sort(key=lambda e: e[1] + (b"/" if e[0] == b"40000" else b""))
    return literal_tree(root, entries)


def hostile(root: Path, sandbox: Path, *args: str, rc, says: str | None = None):
    """Run ``git ckpt ARGS`` on hostile data: exit ``rc`` (a set or one code), never 70, one
    ``error:`` line when it fails, the sentinel tree unchanged, and (for a refusal) the
    repository unchanged too."""
    before_s, before_r = sentinel(sandbox), repo_state(root)
    res = ckpt(root, *args, rc=None, fsck=False)
    codes = rc if isinstance(rc, (set, tuple)) else {rc}
    assert res.rc in codes and res.rc != 70, res
    assert sentinel(sandbox) == before_s, res
    if res.rc not in (0, 1):
        lines = res.err.splitlines()
        assert lines and lines[0].startswith("error: "), res
        assert all(ln.startswith("hint: ") or ln.startswith("warning: ") for ln in lines[1:]), res
        assert repo_state(root) == before_r, res
    if says is not None:
        assert says in res.err + res.out, res
    return res


@pytest.fixture
def world(tmp_path):
    return make_world(tmp_path)


# ------------------------------------------------------------------- 1. paths named by a manifest


def test_1_isolated_verify_never_derives_a_path_from_the_manifest(world):
    sandbox, root = world
    (root / ".ckpt.toml").write_text('[overlay]\ninclude = ["fixtures/"]\n[[verifier]]\nname = "t"\ncommand = "true"\n')
    ckpt(root, "trust")
    victim_wt = sandbox / "review-7"
    git(root, "worktree", "add", "-q", "--detach", str(victim_wt))
    (victim_wt / "uncommitted.txt").write_text("my work\n")
    for task in (str(sandbox / "review"), "../../review", "review/../../x", "a\nb"):
        forge(root, edit=lambda m, t=task: m.update(task=t, number=7, id=f"{t}/7"))
        hostile(root, sandbox, "verify", "origin:default/1", "--isolated", rc=7, says="task")
    assert (victim_wt / "uncommitted.txt").read_text() == "my work\n"
    # a valid fetched checkpoint is verified in a worktree named by tempfile, removed afterwards
    forge(root, edit=lambda m: m.update(task="review", number=7, id="review/7"))
    hostile(root, sandbox, "verify", "origin:default/1", "--isolated", rc=0)
    assert (victim_wt / "uncommitted.txt").read_text() == "my work\n"
    listed = git(root, "worktree", "list", "--porcelain").decode()
    assert listed.count("worktree ") == 2 and "ckpt-verify-" not in listed


def test_1_number_and_id_grammar(world):
    sandbox, root = world
    for edit in ({"number": 0}, {"number": -1}, {"number": 10**12}, {"number": "7"}, {"id": "default/2"},
                 {"id": "x" * 1000}, {"task": "."}, {"task": "a.lock"}, {"task": "123"}, {"kind": "evil"},
                 {"schema": "ckpt/2"}, {"tree": "../../etc"}, {"base": "HEAD"}, {"ledger_head": "x"}):
        forge(root, edit=lambda m, e=edit: m.update(e))
        for cmd in (("restore", "origin:default/1"), ("show", "origin:default/1")):
            hostile(root, sandbox, *cmd, rc=7, says="manifest")


# --------------------------------------------------------------- 2. manifest path lists validated

BAD_PATHS = ["{abs}/new/pwned", ".git/index.lock", ".GIT/config", "a/.Git/x", "\u0000b64:YQBi", "../up", "a/../../up",
             "", "a//b", "./a", "/etc/passwd", "\u0000b64:!!!", "x" * 5000]
PATH_FIELDS = ["intent_to_add", "skip_worktree", "skip_worktree_absent", "conflicts", "raw", "skipped"]


def test_2_every_path_field_refuses_every_bad_path_at_decode(tmp_path):
    """The decode boundary, in-process: each path list of the manifest (and the overlay's) with
    each kind of bad path is a ValidationError naming the field."""
    from git_ckpt.model import decode_manifest

    good = {"schema": "ckpt/1", "id": "t/1", "task": "t", "number": 1, "created_at": "x", "author": "a", "host": "h",
            "tree": "0" * 40, "index_tree": "0" * 40}
    decode_manifest(json.dumps(good).encode())
    for field in PATH_FIELDS + ["overlay.skipped", "overlay.files"]:
        for bad in BAD_PATHS:
            bad = bad.replace("{abs}", str(tmp_path))
            m = json.loads(json.dumps(good))
            if field == "overlay.files":
                m["overlay"] = {"files": [{"path": bad, "kind": "file", "mode": 0o100644, "size": 1, "sha256": "0" * 64}]}
            elif field == "overlay.skipped":
                m["overlay"] = {"skipped": [bad]}
            else:
                m[field] = ["ok", bad]
            with pytest.raises(msgspec.ValidationError) as info:
                decode_manifest(json.dumps(m).encode())
            assert field.split(".")[-1] in str(info.value) or "path" in str(info.value), (field, bad, info.value)


@pytest.mark.parametrize("field", PATH_FIELDS + ["overlay.files"])
def test_2_restore_check_and_dry_run_refuse_bad_paths_changing_nothing(world, field):
    sandbox, root = world
    bads = [b.replace("{abs}", str(sandbox / "EMPTY" / "inner" / "x")) for b in BAD_PATHS]
    # one CLI round per field, each field with a different bad path (all are covered at decode)
    for bad in (bads[PATH_FIELDS.index(field) % len(bads)] if field in PATH_FIELDS else bads[0], bads[1], bads[4]):
        def edit(m, bad=bad):
            if field == "overlay.files":
                m["overlay"]["files"].append({"path": bad, "kind": "file", "mode": 0o100644, "size": 1, "sha256": "0" * 64})
            else:
                m[field] = [bad]
        forge(root, edit=edit)
        (root / "a.txt").write_text("changed\n")
        for args in (("restore", "origin:default/1"), ("restore", "--dry-run", "origin:default/1")):
            hostile(root, sandbox, *args, rc=7, says=field.split(".")[-1])
        hostile(root, sandbox, "check", "origin:default/1", rc={1, 7})
    assert not (root / ".git" / "index.lock").exists()


# ----------------------------------------------------------------------- 3. tree entries named ..

@pytest.mark.parametrize("name", [b"..", b".git", b".GIT", b".", b"a/../..", b"/abs"])
@pytest.mark.parametrize("where", ["tree", "index"])
def test_3_tree_entry_names_git_refuses(world, name, where):
    sandbox, root = world
    victim = blob(root, b"pwned\n")
    inner = literal_tree(root, [(b"100644", b"VICTIM", victim)])
    inner_dirs = literal_tree(root, [(b"100644", b"EMPTY", victim)])  # ../EMPTY is a tree of empty directories
    base = git(root, "rev-parse", "refs/ckpt/default/1^{tree}").decode().strip()
    bad = tree_with(root, base, [(b"40000", name, inner)])
    bad_empty = tree_with(root, base, [(b"40000", name, inner_dirs)]) if name == b".." else None
    for t in filter(None, (bad, bad_empty)):
        forge(root, **({"tree": t} if where == "tree" else {"index_tree": t}))
        (root / "a.txt").write_text("changed\n")
        for args in (("restore", "--dry-run", "origin:default/1"), ("restore", "origin:default/1")):
            res = hostile(root, sandbox, *args, rc=7)
            assert "VICTIM" not in res.out
        # a restore of other paths only may go ahead: nothing it writes is unsafe
        hostile(root, sandbox, "restore", "origin:default/1", "--", "a.txt", rc={0, 7})
        hostile(root, sandbox, "check", "origin:default/1", rc=1)
    assert not (sandbox / "VICTIM").exists() and (sandbox / "EMPTY" / "inner" / "x").is_dir()


# ------------------------------------------------------- 4. a refused archive still changed things


@pytest.mark.parametrize("link,below", [
    (b"fixtures", b"fixtures/data.bin"),          # symlink in the tree, overlay entry below it
    (b"deep/dir", b"deep/dir/sub/f.bin"),          # a deeper symlink, a deeper entry
    (b"fixtures", b"fixtures/new.bin"),            # an entry the current worktree does not have
])
@pytest.mark.parametrize("kind", ["symlink", "file"])
def test_4_nothing_is_written_below_a_symlink_or_file_of_the_tree(world, link, below, kind):
    sandbox, root = world
    target = os.path.relpath(sandbox / "outside", root / os.path.dirname(link.decode())).encode()
    data = b"through the link\n"
    entry_blob = blob(root, target if kind == "symlink" else b"plain file\n")
    mode = b"120000" if kind == "symlink" else b"100644"
    base = git(root, "rev-parse", "refs/ckpt/default/1^{tree}").decode().strip()
    if b"/" in link:
        top, leaf = link.split(b"/")
        sub = literal_tree(root, [(mode, leaf, entry_blob)])
        tree = tree_with(root, base, [(b"40000", top, sub)])
    else:
        tree = tree_with(root, base, [(mode, link, entry_blob)])
    import hashlib

    def edit(m):
        m["overlay"]["files"] = [{"path": below.decode(), "kind": "file", "mode": 0o100644, "size": len(data),
                                  "sha256": hashlib.sha256(data).hexdigest(), "mtime": 0}]
        m["tree"] = tree

    forge(root, edit=edit, tree=tree, tar=one_file_tar(below.decode(), data))
    import shutil

    shutil.rmtree(root / "fixtures")
    res = hostile(root, sandbox, "check", "origin:default/1", rc=1)
    assert "below" in res.out + res.err
    for args in (("restore", "--dry-run", "origin:default/1"), ("restore", "origin:default/1")):
        hostile(root, sandbox, *args, rc=7, says="below")
    assert not (root / ".git" / "ckpt" / "RESTORE").exists()
    assert sorted(os.listdir(sandbox / "outside")) == ["keep"]


def test_4_intent_to_add_below_a_tree_symlink(world):
    sandbox, root = world
    target = os.path.relpath(sandbox / "outside", root).encode()
    base = git(root, "rev-parse", "refs/ckpt/default/1^{tree}").decode().strip()
    tree = tree_with(root, base, [(b"120000", b"lnk", blob(root, target))])
    forge(root, edit=lambda m: m.update(tree=tree, intent_to_add=["lnk/new"]), tree=tree)
    hostile(root, sandbox, "restore", "origin:default/1", rc=7, says="below")
    assert sorted(os.listdir(sandbox / "outside")) == ["keep"]


# ------------------------------------------------------------------ 7. notes from a remote


def make_team(tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """A bare remote and two clones; bob verified checkpoint ``t/1`` (his own result line) and
    pushed it; alice fetched it.  Returns ``(bare, alice, bob, commit of t/1)``."""
    seed = init_repo(tmp_path / "seed")
    (seed / ".ckpt.toml").write_text('[[verifier]]\nname = "t"\ncommand = "true"\n')
    git(seed, "add", ".ckpt.toml")
    git(seed, "commit", "-q", "-m", "config")
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    alice, bob = tmp_path / "alice", tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(bare), str(alice))
    git(tmp_path, "clone", "-q", str(bare), str(bob))
    for who in (alice, bob):
        ckpt(who, "trust")
    git(bob, "config", "ckpt.gate", "true")
    ckpt(bob, "task", "start", "t")
    (bob / "work.txt").write_text("bob's work\n")
    git(bob, "add", "work.txt")
    ckpt(bob, "save", "-m", "work")
    ckpt(bob, "verify")
    ckpt(bob, "push")
    ckpt(alice, "fetch")
    commit = git(bob, "rev-parse", "refs/ckpt/t/1").decode().strip()
    return bare, alice, bob, commit


def bob_still_trusts_his_result(bob: Path, commit: str, mine: bytes) -> None:
    note = git(bob, "notes", "--ref=ckpt", "show", commit)
    assert mine in note.splitlines(), note
    listed = ckpt(bob, "list")
    assert "t:passed" in listed.out and "t:passed(fetched)" not in listed.out, listed
    ckpt(bob, "gate")
    assert ckpt(bob, "verify-commit", "HEAD", rc=None).rc != 70


@pytest.mark.parametrize("how", ["remove", "rewrite-history", "tamper-line"])
def test_7_a_fetch_never_drops_a_local_result_line(tmp_path, how):
    bare, alice, bob, commit = make_team(tmp_path)
    mine = git(bob, "notes", "--ref=ckpt", "show", commit).splitlines()[0]
    if how == "remove":
        git(alice, "notes", "--ref=ckpt", "remove", commit)
        git(alice, "push", "-q", "origin", "refs/notes/ckpt")
    elif how == "rewrite-history":
        empty = git(alice, "mktree", input=b"").decode().strip()
        orphan = git(alice, "commit-tree", empty, "-m", "rewritten").decode().strip()
        git(alice, "push", "-q", "--force", "origin", f"{orphan}:refs/notes/ckpt")
    else:
        forged = mine.replace(b'"passed"', b'"failed"')
        git(alice, "notes", "--ref=ckpt", "add", "-f", "-m", forged.decode(), commit)
        git(alice, "push", "-q", "origin", "refs/notes/ckpt")
    res = ckpt(bob, "fetch")
    assert res.rc == 0
    bob_still_trusts_his_result(bob, commit, mine)
    # and bob's push puts his line back on the remote instead of adopting the removal
    ckpt(bob, "push")
    remote_note = git(bare, "notes", "--ref=ckpt", "show", commit)
    assert mine in remote_note.splitlines()
    assert git(bare, "rev-parse", "refs/notes/ckpt") == git(bob, "rev-parse", "refs/notes/ckpt")


MALFORMED = [b"[1]", b'"text"', b"{", b"null", b'{"verifier": 5, "tree": "x", "status": "passed"}',
             b'{"verifier": "t", "tree": "../../etc", "status": "passed"}',
             b'{"verifier": "t", "tree": "' + b"0" * 40 + b'", "status": "owned"}',
             b'{"verifier": "t", "tree": "' + b"0" * 40 + b'", "status": "passed", "exit_code": 99999999999999999999}',
             b'{"verifier": "t\\u001b]0;x\\u0007", "tree": "' + b"0" * 40 + b'", "status": "passed"}',
             b"\xff\xfe not utf-8"]


def test_7_malformed_lines_are_skipped_with_one_warning(tmp_path):
    bare, alice, bob, commit = make_team(tmp_path)
    mine = git(bob, "notes", "--ref=ckpt", "show", commit).splitlines()[0]
    note = git(alice, "notes", "--ref=ckpt", "show", commit)
    git(alice, "notes", "--ref=ckpt", "add", "-f", "-F", "-", commit, input=note + b"".join(b + b"\n" for b in MALFORMED))
    git(alice, "push", "-q", "origin", "refs/notes/ckpt")
    ckpt(bob, "fetch")
    bob_still_trusts_his_result(bob, commit, mine)
    for args in (("check", "t/1"), ("check", "--all"), ("list",), ("show", "t/1"), ("verify",), ("gate",), ("status",),
                 ("handoff",)):
        res = ckpt(bob, *args, rc=None)
        assert res.rc == 0, res
        warnings = [ln for ln in res.err.splitlines() if ln.startswith("warning: ")]
        assert len(warnings) <= 1 and "\x1b" not in res.err + res.out, res


# ------------------------------------------------------------------ 6. terminal injection

EVIL = "[tests:passed]\x1b]0;pwned\x07\r\x9b31m\x7f"
FAKE = "\nresults:\n  tests: passed (exit 0, 3.1 s)"


def no_controls(res) -> None:
    for text in (res.out, res.err):
        assert not any(ord(c) < 32 and c not in "\n\t" or 0x7f <= ord(c) <= 0x9f for c in text), res


def test_6_stored_text_is_escaped_in_every_human_rendering(world):
    sandbox, root = world
    ckpt(root, "task", "start", "evil", "--goal", "goal" + EVIL + FAKE)
    (root / "a.txt").write_text("two\n")
    ckpt(root, "save", "-m", EVIL + FAKE, "--next", "step" + FAKE + EVIL, "--hypothesis", "h" + FAKE + EVIL)
    ckpt(root, "task", "note", "--decided", "d" + FAKE + EVIL, "--assume", "a" + FAKE + EVIL)
    # a fetched copy whose free-text fields a teammate wrote
    forge(root, source="refs/ckpt/evil/1", dest="refs/ckpt-remotes/origin/evil/1",
          edit=lambda m: m.update(author="x" + FAKE + EVIL, host="h" + EVIL, branch="b" + EVIL, created_at="c" + EVIL + FAKE))
    for args in (("list",), ("list", "--all"), ("list", "--remote", "origin"), ("show", "evil/1"), ("show", "origin:evil/1"),
                 ("log",), ("handoff",), ("task", "show"), ("task", "list"), ("status",), ("diff", "evil/1", "origin:evil/1")):
        res = ckpt(root, *args, rc=None, fsck=False)
        assert res.rc in (0, 1), res
        no_controls(res)
        assert not any(ln.strip() == "results:" or ln.startswith("  tests: passed") for ln in res.out.splitlines()), res
    # JSON keeps the data exactly
    data = ckpt(root, "show", "evil/1", "--json").json()["result"]
    assert json.dumps(data).count("\\u001b]0;pwned") >= 1


def test_6_errors_naming_stored_values_are_escaped(world):
    sandbox, root = world
    forge(root, edit=lambda m: m.update(intent_to_add=["x\x1b]0;pwned\x07/../../y"]))
    res = hostile(root, sandbox, "restore", "origin:default/1", rc=7)
    no_controls(res)


# ------------------------------------------------------------------ 5. caps and memory


def big_header_tar(name: str, claimed: int) -> bytes:
    """A tar whose one header claims ``claimed`` bytes of content it does not hold: a cap
    must refuse it from the header, before reading anything."""
    info = tarfile.TarInfo(name)
    info.size = claimed
    info.mode = 0o644
    return info.tobuf(format=tarfile.PAX_FORMAT) + b"\0" * 1024


def test_5_caps_are_hard_limits_never_the_manifest_nor_the_config(world):
    sandbox, root = world
    import hashlib

    from git_ckpt.overlay import MAX_TOTAL

    claimed = MAX_TOTAL + 1  # one header past the hard total limit: refused before any content is read

    def edit(m):
        m["overlay"]["max_file_size"] = 1 << 40  # the manifest asks for a huge cap: ignored
        m["overlay"]["files"] = [{"path": "fixtures/zeros", "kind": "file", "mode": 0o100644, "size": claimed,
                                  "sha256": hashlib.sha256(b"").hexdigest(), "mtime": 0}]
    forge(root, edit=edit, tar=big_header_tar("fixtures/zeros", claimed))
    for args in (("restore", "origin:default/1"), ("restore", "--dry-run", "origin:default/1")):
        hostile(root, sandbox, *args, rc=7, says="the total size limit")
    res = hostile(root, sandbox, "check", "origin:default/1", rc=1)
    assert f"the total size limit ({MAX_TOTAL} bytes)" in res.out, res
    # the configuration's cap is what a save captures, not what a read accepts: lowered below a
    # fixture, this repository's own checkpoint still restores it (attack 21)
    saved = (root / "fixtures" / "data.bin").read_bytes()
    git(root, "config", "ckpt.overlay.maxFileSize", "4")
    (root / "fixtures" / "data.bin").unlink()
    ckpt(root, "restore", "--dry-run", "default/1")
    ckpt(root, "restore", "default/1")
    assert (root / "fixtures" / "data.bin").read_bytes() == saved


def peak_rss_kib(root: Path, *args: str) -> tuple[int, int]:
    """Run ``git ckpt ARGS`` from a fresh wrapper process; return (exit code, the largest
    resident set of any process it ran, in KiB: ``getrusage(RUSAGE_CHILDREN).ru_maxrss``)."""
    import subprocess
    import sys

    code = ("import resource, subprocess, sys\n"
            "rc = subprocess.run(['git', 'ckpt', *sys.argv[1:]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode\n"
            "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=root, stdout=subprocess.PIPE, check=True).stdout.split()
    return int(out[0]), int(out[1])


def test_5_extraction_streams_with_bounded_memory(tmp_path):
    """A 96 MiB zero overlay file (allowed by the local cap) is checked, planned and restored
    without ever being held in memory: no process of the command grows by the file's size."""
    root = init_repo(tmp_path / "r")
    (root / ".gitignore").write_text("fixtures/\n")
    (root / ".ckpt.toml").write_text('[overlay]\ninclude = ["fixtures/"]\nmax_file_size = "200MiB"\n')
    (root / "fixtures").mkdir()
    size = 96 << 20
    with open(root / "fixtures" / "zeros", "wb") as fh:
        fh.truncate(size)
    ckpt(root, "save", "-m", "zeros")
    (root / "fixtures" / "zeros").unlink()
    for args in (("check", "1"), ("restore", "--dry-run", "1"), ("restore", "1")):
        rc, peak = peak_rss_kib(root, *args)
        assert rc == 0 and peak * 1024 < size, (args, rc, peak)
    assert os.path.getsize(root / "fixtures" / "zeros") == size


# ------------------------------------------------------------------ 8. overlay patterns confined

OUTSIDE_PATTERNS = ["../home/", "../home/*", "fixtures/../../home/", "!../home/", "..", "~/secrets/", "C:/x", "a\\..\\b",
                    "fix\x00tures/"]


@pytest.mark.parametrize("pattern", OUTSIDE_PATTERNS)
@pytest.mark.parametrize("where", ["toml-include", "toml-exclude", "git-config"])
def test_8_overlay_patterns_stay_inside_the_worktree(world, pattern, where):
    sandbox, root = world
    (sandbox / "home").mkdir()
    (sandbox / "home" / "history.txt").write_text("secret history\n")
    if where == "git-config":
        if "\x00" in pattern:
            pytest.skip("git config cannot hold a NUL")
        git(root, "config", "--add", "ckpt.overlay.include", pattern)
    else:
        key = "include" if where == "toml-include" else "exclude"
        other = ', include = ["fixtures/"]' if key == "exclude" else ""
        (root / ".ckpt.toml").write_text(f"[overlay]\n{key} = {json.dumps(['fixtures/', pattern] if key == 'include' else [pattern])}\n"
                                         + ("include = [\"fixtures/\"]\n" if other else ""))
    (root / "a.txt").write_text("changed\n")
    hostile(root, sandbox, "save", "-m", "x", rc=6, says="overlay")
    if where == "git-config":  # no checkpoint holds git config: a restore refuses it as well
        hostile(root, sandbox, "restore", "--dry-run", "1", rc=6, says="overlay")
    else:  # a .ckpt.toml that cannot be used never keeps the user from going back: said, and left out
        res = hostile(root, sandbox, "restore", "--dry-run", "1", rc=0, says="overlay")
        assert res.err.startswith("warning: .ckpt.toml: overlay.") or res.err.startswith("warning: .ckpt.toml"), res
        assert res.err.endswith("; going on without it (git config ckpt.* alone: no overlay of its own)\n"), res
    objects = git(root, "rev-list", "--all", "--objects")
    assert blob(root, b"secret history\n") not in objects.decode()


# ------------------------------------------------------------------ 10. ledger truncation


def ledger_world(tmp_path: Path) -> Path:
    """Task t: checkpoint t/1 verified (passed), t/2 verified (failed)."""
    root = init_repo(tmp_path / "r")
    (root / ".ckpt.toml").write_text('[[verifier]]\nname = "tests"\ncommand = "test ! -e broken"\n')
    ckpt(root, "trust")
    ckpt(root, "task", "start", "t")
    (root / "a.txt").write_text("one\n")
    ckpt(root, "save", "-m", "one")
    ckpt(root, "verify")
    (root / "broken").write_text("x\n")
    ckpt(root, "save", "-m", "two")
    ckpt(root, "verify", rc=1)
    res = ckpt(root, "log", "--verify")
    assert "intact" in res.out
    return root


@pytest.mark.parametrize("how", ["back-1", "back-3", "back-1-reflog-deleted", "back-3-reflog-deleted", "reset-to-first"])
def test_10_a_ledger_moved_backwards_is_caught(tmp_path, how):
    root = ledger_world(tmp_path)
    steps = {"back-1": 1, "back-3": 3, "back-1-reflog-deleted": 1, "back-3-reflog-deleted": 3, "reset-to-first": None}[how]
    target = (git(root, "rev-list", "--max-parents=0", "refs/ckpt/t/log") if steps is None
              else git(root, "rev-parse", f"refs/ckpt/t/log~{steps}")).decode().strip()
    git(root, "update-ref", "refs/ckpt/t/log", target)
    if how.endswith("reflog-deleted"):
        # every entry of the ledger ref's reflog expired, on either ref backend
        git(root, "reflog", "expire", "--expire=all", "--expire-unreachable=all", "refs/ckpt/t/log")
        assert git(root, "reflog", "show", "--format=%H", "refs/ckpt/t/log", check=False).strip() == b""
    res = ckpt(root, "log", "--verify", rc=1)
    assert "intact" not in res.out
    assert "events dropped" in res.out + res.err or "history rewritten" in res.out + res.err, res


def test_10_an_untouched_ledger_stays_intact(tmp_path):
    root = ledger_world(tmp_path)
    ckpt(root, "restore", "1")
    ckpt(root, "undo")
    (root / "broken").unlink()
    ckpt(root, "save", "-m", "three")
    ckpt(root, "verify")
    res = ckpt(root, "log", "--verify")
    assert "intact" in res.out, res


# ------------------------------------------------------------------ 9. secret scan gaps

AWS = "AKIAZ7Q4XN2RWJ5KLM3P"
PEM = b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n"
LINE = f"aws_access_key_id = {AWS}\n"
SECRET_FILES = {
    "plain": ("creds.ini", LINE.encode()),
    "padded-past-5MB": ("creds.txt", (b"# " + b"padding " * 12 + b"\n") * 52_000 + LINE.encode()),
    "utf-16": ("creds.txt", LINE.encode("utf-16")),
    "utf-16-be-no-bom": ("creds.txt", LINE.encode("utf-16-be")),
    "utf-32": ("creds.txt", LINE.encode("utf-32")),
    "lock-file-name": ("poetry.lock", LINE.encode()),
    "non-text-name": ("logo.png", LINE.encode()),
    "key-at-top-of-5MB-dump": ("dump.bin", PEM + bytes(range(256)) * 20_000),
    "key-inside-binary": ("blob.bin", b"\0\1\2" * 1000 + AWS.encode() + b"\0" * 1000),
    "key-across-a-chunk-boundary": ("edge.bin", b"\0" * (4 * 1024 * 1024 - 9) + AWS.encode() + b"\0" * 100),
}


@pytest.mark.parametrize("variant", sorted(SECRET_FILES))
@pytest.mark.parametrize("where", ["overlay", "worktree"])
def test_9_the_secret_scan_covers_sizes_encodings_names_and_binaries(tmp_path, variant, where):
    if variant == "padded-past-5MB" and where == "worktree":
        pytest.skip("the same scan as the overlay case; detect-secrets over 4 MiB is slow on 2 cores")
    root = init_repo(tmp_path / "r")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(root, "remote", "add", "origin", str(bare))
    (root / ".gitignore").write_text("fixtures/\n")
    (root / ".ckpt.toml").write_text('[overlay]\ninclude = ["fixtures/"]\n')
    name, data = SECRET_FILES[variant]
    target = root / "fixtures" / name if where == "overlay" else root / name
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(data)
    ckpt(root, "save", "-m", "x")
    res = ckpt(root, "push", rc=10)
    assert "secret?" in res.err and name in res.err, res
    assert AWS not in res.out + res.err and "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" not in res.err
    assert git(bare, "for-each-ref") == b""


# ------------------------------------------------------------------ fuzz: every field, every command

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

HOSTILE_VALUES = st.one_of(
    st.sampled_from([None, True, 0, -1, 2**63, 10**30, 1.5, [], {}, ["x"], {"a": 1}]),
    st.sampled_from(["", "..", "../../victim/precious.txt", "/etc/passwd", ".git/index.lock", ".GIT", "\u0000b64:YQBi",
                     "\x1b]0;pwned\x07", "a\nresults:\n  tests: passed", "x" * 70_000, "default/1", "0" * 40, "ckpt/1",
                     "file", "symlink", "manual"]),
    st.text(max_size=20),
)
MANIFEST_FIELDS = ["id", "task", "number", "kind", "base", "branch", "created_at", "author", "host", "message", "tree",
                   "index_tree", "intent_to_add", "skip_worktree", "skip_worktree_absent", "conflicts", "merge_heads", "raw",
                   "skipped", "state", "next", "hypothesis", "ledger_head", "schema", "overlay", "overlay.include",
                   "overlay.max_file_size", "overlay.digest", "overlay.files", "overlay.files.path", "overlay.files.kind",
                   "overlay.files.mode", "overlay.files.size", "overlay.files.sha256", "overlay.files.mtime"]
RESULT_FIELDS = ["schema", "checkpoint", "verifier", "definition", "tree", "overlay", "status", "exit_code", "duration",
                 "started_at", "host", "log", "reused", "required"]
EVENT_FIELDS = ["seq", "type", "task", "at", "host", "user", "data", "prev", "hash", "data.id", "data.commit", "data.target",
                "data.from_commit", "data.paths", "data.worktree", "data.result"]
_TEMPLATE: dict = {}


def _append_event(root: Path, field: str, value) -> None:
    """A ledger commit on top of ``refs/ckpt/default/log`` whose event has ``field`` replaced."""
    head = git(root, "rev-parse", "refs/ckpt/default/log").decode().strip()
    ev = json.loads(git(root, "show", f"{head}:event.json"))
    if field.startswith("data."):
        ev.setdefault("data", {})[field[5:]] = value
    else:
        ev[field] = value
    card = git(root, "rev-parse", f"{head}:card.json").decode().strip()
    tree = git(root, "mktree", input=f"100644 blob {card}\tcard.json\n100644 blob {blob(root, json.dumps(ev).encode())}\tevent.json\n".encode()).decode().strip()
    new = git(root, "commit-tree", tree, "-p", head, "-m", "forged event").decode().strip()
    git(root, "update-ref", "refs/ckpt/default/log", new)


def _template(tmp_path_factory) -> Path:
    if "dir" not in _TEMPLATE:
        base = tmp_path_factory.mktemp("fuzz-template")
        sandbox, root = make_world(base)
        (root / ".ckpt.toml").write_text('[overlay]\ninclude = ["fixtures/"]\n[[verifier]]\nname = "tests"\ncommand = "true"\n')
        ckpt(root, "trust")
        ckpt(root, "verify", "--isolated", "1")
        (root / "a.txt").write_text("now\n")
        _TEMPLATE["dir"] = base
    return _TEMPLATE["dir"]


def _mutate(m: dict, field: str, value) -> None:
    if field.startswith("overlay.files."):
        files = m["overlay"]["files"]
        if files:
            files[0][field.rsplit(".", 1)[1]] = value
    elif field.startswith("overlay."):
        m["overlay"][field.split(".", 1)[1]] = value
    else:
        m[field] = value


@pytest.mark.once
@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(MANIFEST_FIELDS), value=HOSTILE_VALUES, rfield=st.sampled_from(RESULT_FIELDS), rvalue=HOSTILE_VALUES,
       efield=st.sampled_from(EVENT_FIELDS), evalue=HOSTILE_VALUES)
def test_fuzz_every_field_every_command(tmp_path_factory, field, value, rfield, rvalue, efield, evalue):
    """A real checkpoint (with a real result line) fetched as ``origin:default/1``, one manifest
    field, one result-line field and one field of a new ledger event replaced by a hostile
    value, then every reader of them runs:
    never exit 70 or a traceback, and the sentinel tree around the worktree stays byte for byte."""
    import shutil
    import uuid

    work = tmp_path_factory.getbasetemp() / f"fuzz-{uuid.uuid4().hex[:8]}"
    shutil.copytree(_template(tmp_path_factory), work, symlinks=True)
    sandbox, root = work / "sandbox", work / "sandbox" / "repo"
    commit = forge(root, edit=lambda m: _mutate(m, field, value))
    line = json.loads(git(root, "notes", "--ref=ckpt", "show", "refs/ckpt/default/1").splitlines()[0])
    line[rfield] = rvalue
    git(root, "notes", "--ref=ckpt", "add", "-f", "-m", json.dumps(line), commit)
    _append_event(root, efield, evalue)
    before = sentinel(sandbox)
    for args in (("log",), ("log", "--verify"), ("status",), ("restore", "--dry-run", "origin:default/1"), ("check", "origin:default/1"), ("show", "origin:default/1"),
                 ("list", "--remote", "origin"), ("handoff",), ("verify", "--isolated", "origin:default/1"),
                 ("restore", "origin:default/1")):
        res = ckpt(root, *args, rc=None, fsck=False)
        assert res.rc != 70, (field, value, rfield, rvalue, res)
        assert sentinel(sandbox) == before, (field, value, args)
        assert "\x1b" not in res.out + res.err, res
    shutil.rmtree(work)


@pytest.mark.parametrize("what", ["tree", "blob", "plain commit", "bad manifest"])
@pytest.mark.parametrize("which", ["latest", "promoted"])
def test_status_names_a_damaged_latest_or_promoted_checkpoint(repo, what, which):
    """Attack pass: a latest ref naming a tree made status say ``latest: (none)`` while list
    and check named it, and a damaged promoted ref was shown as a bare object id.  Either is
    named, said damaged with the reason check gives, and the gate state says commits are refused."""
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "promote", "--force", "default/1")
    ckpt(repo, "save", "--allow-empty", "-m", "two")
    ref = {"latest": "refs/ckpt/default/2", "promoted": "refs/ckpt/default/promoted"}[which]
    name = {"latest": "default/2", "promoted": "default/promoted"}[which]
    if what == "bad manifest":
        target = forge(repo, source=ref, dest="refs/forged", manifest=b"{not json")
        why = "manifest"
    else:
        target = {"tree": "HEAD^{tree}", "blob": "HEAD:README", "plain commit": "HEAD"}[what]
        target = git(repo, "rev-parse", target).decode().strip()
        why = {"tree": f"{name} does not point at a commit", "blob": f"{name} does not point at a commit",
               "plain commit": name}[what]
    git(repo, "update-ref", ref, target)
    git(repo, "config", "ckpt.gate", "true")
    ckpt(repo, "hooks", "install")
    st = ckpt(repo, "status", "--json").json()["result"]
    assert (st["latest"], st["promoted"]) == ("default/2", "default/promoted" if which == "promoted" else "default/1"), st
    assert list(st["damaged"]) == [which] and why in st["damaged"][which], st
    lines = ckpt(repo, "status").out.splitlines()
    assert lines[1 if which == "latest" else 2].startswith(f"{which}:".ljust(11) + f"{name if which == 'promoted' else 'default/2'} (damaged: "), lines
    assert lines[1 if which == "latest" else 2].endswith("; git ckpt check --all)"), lines
    if which == "latest":
        assert lines[3] == "worktree:  not compared: default/2 is damaged", lines
    else:
        assert lines[-1] == "gate:      on (the promoted checkpoint is damaged: commits will be refused)", lines
        (repo / "x").write_text("x\n")
        git(repo, "add", "x")
        assert git(repo, "commit", "-qm", "x", check=False) == b""
        assert git(repo, "rev-list", "--count", "HEAD").strip() == b"1"  # refused


def test_a_damaged_fetched_checkpoint_is_damaged_in_every_view_and_check_all_names_it(tmp_path):
    """Attack 25: a teammate's refs/ckpt/t/1 re-pointed at a tree showed as "[pruned]" in
    log --graph and "pruned or dropped" in the report, and every error's hint, check --all,
    skipped fetched tasks and said ok.  It is damaged everywhere, and check --all names it."""
    from conftest import pushed_task

    remote, _alice, bob = pushed_task(tmp_path, "t", {"f": "x\n"})
    git(remote, "update-ref", "refs/ckpt/t/1", git(remote, "rev-parse", "main^{tree}").decode().strip())
    ckpt(bob, "fetch")
    graph = ckpt(bob, "log", "--graph", "--task", "origin:t").out
    assert "[damaged]" in graph and "[pruned]" not in graph, graph
    data = ckpt(bob, "report", "--html", str(tmp_path / "r.html"), "--task", "origin:t", "--json").json()["result"]
    assert (data["checkpoints"], data["pruned"], data["damaged"]) == (0, 0, 1), data
    page = ckpt(bob, "report", "--html", "-", "--task", "origin:t").out
    assert "(1 damaged: git ckpt check --task origin:t says how)" in page and "pruned or dropped" not in page
    res = ckpt(bob, "show", "origin:t/1", rc=7)
    assert res.err.splitlines()[-1].startswith("hint: git ckpt check --all names every damaged checkpoint"), res
    res = ckpt(bob, "check", "--all", rc=1)
    assert [ln for ln in res.out.splitlines() if ln.startswith("DAMAGED")] == [
        "DAMAGED  origin:t/1: refs/ckpt-remotes/origin/t/1 points at a tree, not a checkpoint commit"], res


@pytest.mark.parametrize("what", ["number ref", "promoted to a tree", "promoted to a plain commit"])
def test_a_damaged_promotion_is_named_as_damage_with_a_fix_that_works(repo, what):
    """Attack 25: with refs/ckpt/T/N of the promoted checkpoint re-pointed, status and the gate
    called it dropped and hinted drop --force; a promoted ref naming a tree sent every commit's
    refusal to check --all, which said ok; one naming a plain commit hinted a drop that exits 4."""
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "promote", "--force", "default/1")
    git(repo, "config", "ckpt.gate", "true")
    ckpt(repo, "hooks", "install")
    tree = git(repo, "rev-parse", "HEAD^{tree}").decode().strip()
    ref, target = {"number ref": ("refs/ckpt/default/1", tree), "promoted to a tree": ("refs/ckpt/default/promoted", tree),
                   "promoted to a plain commit": ("refs/ckpt/default/promoted", "HEAD")}[what]
    git(repo, "update-ref", ref, target)
    status = ckpt(repo, "status").out.splitlines()
    assert "(damaged: " in status[2] and "dropped" not in status[2], status
    assert status[-1] == "gate:      on (the promoted checkpoint is damaged: commits will be refused)", status
    res = ckpt(repo, "gate", "--hook", rc=None)
    assert res.rc in (1, 7) and "dropped" not in res.err and "drop --force" not in res.err, res
    checked = ckpt(repo, "check", "--all", rc=1).out.splitlines()
    if what == "number ref":
        assert "is damaged: refs/ckpt/default/1 names" in res.err and "git ckpt check --all" in res.err, res
        assert checked == ["DAMAGED  default/1: refs/ckpt/default/1 points at a tree, not a checkpoint commit",
                           "ok       default/promoted  (1 file, 0 overlay files)"], checked  # the promoted commit itself is sound
    else:
        assert checked[0] == "ok       default/1  (1 file, 0 overlay files)" and checked[1].startswith("DAMAGED  default/promoted: "), checked
        assert ckpt(repo, "check", "--all", rc=1).err.splitlines()[-1].endswith(
            "; end a damaged promotion with git update-ref -d refs/ckpt/default/promoted")
    if what == "promoted to a plain commit":
        hint = res.err.splitlines()[-1]
        assert hint == ("hint: git update-ref -d refs/ckpt/default/promoted ends the promotion "
                        "(then git ckpt verify promotes a checkpoint again)"), res
        git(repo, *hint[len("hint: "):].split(" ends")[0].split()[1:])  # the hint's command works
        assert git(repo, "for-each-ref", "refs/ckpt/default/promoted") == b""
