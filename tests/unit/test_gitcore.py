"""gitcore in process: the Oid/RefName boundary types, the one retry primitive (Repo.swap), tree
building and reading, config entries, compared with what the git binary says."""

from __future__ import annotations

import os
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import git
from git_ckpt.errors import BusyError, ConfigError, CorruptError
from git_ckpt.gitcore import Oid, RefConflict, RefName, TreeEntry
from unit_helpers import rev

HEX = "0123456789abcdef"
fixture_ok = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# ------------------------------------------------------------------------------ Oid, RefName


@given(st.text(HEX, min_size=40, max_size=40) | st.text(HEX, min_size=64, max_size=64))
def test_an_oid_is_40_or_64_lowercase_hex_digits(text):
    assert Oid(text) == text and isinstance(Oid(text), str)


@given(st.text(max_size=70).filter(lambda t: not (len(t) in (40, 64) and set(t) <= set(HEX))))
def test_anything_else_is_not_an_oid(text):
    with pytest.raises(ValueError):
        Oid(text)


REF_NAMES = [
    "refs/ckpt/fix-auth/1", "refs/ckpt/a.b/promoted", "refs/notes/ckpt", "refs/heads/x@y", "refs/ckpt/t/log",
    "refs/ckpt/a..b/1", "refs/ckpt/.hidden/1", "refs/ckpt/a/1.lock", "refs/ckpt/a/", "refs/ckpt/a b/1",
    "refs/ckpt/a~1", "refs/ckpt/a^", "refs/ckpt/a:b", "refs/ckpt/a?", "refs/ckpt/a*", "refs/ckpt/a[",
    "refs/ckpt/a\\b", "refs/ckpt/a@{1}", "refs/ckpt//a", "refs/ckpt/a.", "refs/ckpt/\x01", "refs/ckpt/a.lock/b",
]


@pytest.mark.parametrize("name", REF_NAMES)
def test_a_ref_name_is_what_git_check_ref_format_accepts(name, tmp_path):
    ok = subprocess.run(["git", "check-ref-format", name], cwd=tmp_path).returncode == 0
    if ok:
        assert RefName(name) == name
    else:
        with pytest.raises(ValueError):
            RefName(name)


def test_head_is_a_ref_name_and_a_branch_name_alone_is_not():
    assert RefName("HEAD") == "HEAD"
    with pytest.raises(ValueError):
        RefName("main")


# ------------------------------------------------------------------------------ swap


def test_swap_creates_moves_and_deletes_with_a_reflog_reason(core, repo):
    one = rev(repo, "HEAD")
    assert core.swap("refs/ckpt/t/1", lambda old: (one, old), reason="ckpt: test create", reflog=True) is None
    assert rev(repo, "refs/ckpt/t/1") == one
    two = git(repo, "commit-tree", rev(repo, "HEAD^{tree}"), "-p", one, "-m", "two").decode().strip()
    assert core.swap("refs/ckpt/t/1", lambda old: (two, old), reason="ckpt: test move", reflog=True) == one
    assert git(repo, "reflog", "show", "--format=%gs", "refs/ckpt/t/1").decode().split("\n")[:2] == ["ckpt: test move", "ckpt: test create"]
    assert core.swap("refs/ckpt/t/1", lambda old: (None, old), reason="ckpt: test delete") == two
    assert core.read_ref("refs/ckpt/t/1") is None


def test_swap_with_nothing_to_change_writes_nothing(core, repo):
    one = rev(repo, "HEAD")
    calls = []
    assert core.swap("refs/ckpt/t/1", lambda old: (old, "same"), reason="x", before_write=lambda o, n: calls.append(o)) == "same"
    assert core.read_ref("refs/ckpt/t/1") is None and calls == []
    core.swap("refs/ckpt/t/1", lambda old: (one, None), reason="x")
    assert core.swap("refs/ckpt/t/1", lambda old: (one, "kept"), reason="x") == "kept"


def test_a_lost_race_rebuilds_on_the_new_value_and_runs_before_write_once(core, repo):
    """Another writer moves the ref between swap's read and its write (done here by the build
    itself, the first time): the build runs again on the new value; the once-only side effect
    ran once, before the first write."""
    one = rev(repo, "HEAD")
    other = git(repo, "commit-tree", rev(repo, "HEAD^{tree}"), "-m", "other").decode().strip()
    seen, effects = [], []

    def build(old):
        seen.append(old)
        if len(seen) == 1:
            git(repo, "update-ref", "refs/ckpt/t/promoted", other)  # the concurrent writer
        return one, old

    previous = core.swap("refs/ckpt/t/promoted", build, reason="x", before_write=lambda o, n: effects.append((o, n)))
    assert seen == [None, other] and previous == other
    assert effects == [(None, one)]
    assert rev(repo, "refs/ckpt/t/promoted") == one


def test_a_build_that_refuses_a_value_gets_another_attempt_on_the_next_name(core, repo):
    one = rev(repo, "HEAD")
    git(repo, "update-ref", "refs/ckpt/t/1", one)
    number = 1

    def build(old):
        nonlocal number
        if old is not None:
            number += 1
            raise RefConflict(f"refs/ckpt/t/{number - 1}", None, old)
        return one, number

    assert core.swap(lambda: f"refs/ckpt/t/{number}", build, reason=lambda ref: f"save {ref}") == 2
    assert git(repo, "reflog", "show", "--format=%gs", "refs/ckpt/t/2").decode().strip() in ("", "save refs/ckpt/t/2")


def test_a_ref_that_keeps_changing_gives_up_with_busy(core, repo):
    one = rev(repo, "HEAD")
    other = git(repo, "commit-tree", rev(repo, "HEAD^{tree}"), "-m", "other").decode().strip()
    mine = git(repo, "commit-tree", rev(repo, "HEAD^{tree}"), "-m", "mine").decode().strip()
    flip = [one, other]

    def build(old):  # a racer that always writes first
        core.update_ref("refs/ckpt/t/x", flip[0], expected_old=old, reason="racer")
        flip.reverse()
        return mine, None

    with pytest.raises(BusyError, match="kept changing"):
        core.swap("refs/ckpt/t/x", build, reason="x", attempts=3)


def test_update_ref_refuses_an_unexpected_old_value(core, repo):
    one = rev(repo, "HEAD")
    with pytest.raises(RefConflict) as info:
        core.update_ref("refs/ckpt/t/1", one, expected_old=one, reason="x")
    assert (info.value.expected, info.value.actual) == (one, None)
    assert core.read_ref("refs/ckpt/t/1") is None


# ------------------------------------------------------------------------------ trees and commits


PART = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x2FF, blacklist_characters="/\\"), min_size=1, max_size=8).filter(
    lambda p: p not in (".", "..", ".git") and not p.startswith(".git"))
PATHS = st.lists(st.lists(PART, min_size=1, max_size=3).map("/".join), min_size=1, max_size=6, unique=True).filter(
    lambda ps: not any(a != b and (b.startswith(a + "/")) for a in ps for b in ps))


@fixture_ok
@given(paths=PATHS)
def test_tree_with_builds_what_git_lists(core, repo, paths):
    tree = None
    want = {}
    for i, p in enumerate(paths):
        oid = core.blob(f"{i}\n".encode())
        mode = 0o100755 if i % 2 else 0o100644
        tree = core.tree_with(tree, p, mode, oid)
        want[p.encode()] = (mode, oid)
    listed = {e.path: (e.mode, e.oid) for e in core.ls_tree(tree)}
    assert listed == want
    for p, (mode, oid) in want.items():
        assert core.tree_entry(tree, p.decode()) == TreeEntry(p, mode, oid)


@fixture_ok
@given(names=st.lists(PART, min_size=1, max_size=8, unique=True))
def test_mktree_in_process_equals_git_mktree(core, repo, names):
    entries = [(0o100644, core.blob(n.encode()), n.encode()) for n in names]
    text = b"".join(b"100644 blob %s\t%s\0" % (oid.encode(), name) for _m, oid, name in entries)
    assert core.mktree(entries) == git(repo, "mktree", "-z", input=text).decode().strip()
    assert sorted(e.path for e in core.tree_list(core.mktree(entries))) == sorted(n.encode() for n in names)


def test_read_commit_and_tree_of(core, repo):
    head = rev(repo, "HEAD")
    c = core.read_commit(head)
    assert (c.id, c.tree, c.parents) == (head, rev(repo, "HEAD^{tree}"), ())
    assert core.tree_of(head) == core.tree_of(c.tree) == c.tree
    assert core.object_type(head) == "commit" and core.object_type(c.tree) == "tree"
    missing = "0" * 39 + "1"
    assert core.object_type(missing) is None and core.object_type("nonsense") is None
    with pytest.raises(CorruptError, match="missing"):
        core.read_commit(missing)
    with pytest.raises(CorruptError, match="not a commit"):
        core.read_commit(c.tree)
    readme = core.tree_entry(c.tree, "README")
    with pytest.raises(CorruptError, match="not a tree"):
        core.tree_of(readme.oid)


def test_resolve_commit_and_descends(core, repo):
    head = rev(repo, "HEAD")
    (repo / "f").write_text("f\n")
    git(repo, "add", "f")
    git(repo, "commit", "-q", "-m", "second")
    second = rev(repo, "HEAD")
    assert core.resolve_commit("HEAD") == second and core.resolve_commit("HEAD~1") == head
    assert core.resolve_commit("HEAD^{tree}") is None and core.resolve_commit("no-such") is None
    assert core.descends(second, head) and not core.descends(head, second) and not core.descends(head, "0" * 40)


# ------------------------------------------------------------------------------ config


def test_config_entries_reads_files_and_git_c_alike(core, repo, monkeypatch):
    git(repo, "config", "--add", "ckpt.overlay.include", "a/")
    git(repo, "config", "--add", "ckpt.overlay.include", "b/")
    git(repo, "config", "ckpt.verifier.Lint.command", "ruff check")
    from_files = core.config_entries("ckpt.")
    assert from_files == [("ckpt.overlay.include", "a/"), ("ckpt.overlay.include", "b/"), ("ckpt.verifier.Lint.command", "ruff check")]
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "ckpt.overlay.include")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "c/")
    assert core.config_entries("ckpt.") == from_files[:2] + [from_files[2], ("ckpt.overlay.include", "c/")]
    assert core.config_get("ckpt.overlay.include") == "c/"
    assert core.config_entries("nothing.") == []


def test_a_broken_config_file_is_a_config_error(core, repo, monkeypatch):
    with open(repo / ".git" / "config", "a") as fh:
        fh.write("[ckpt\n")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'ckpt.x=1'")
    with pytest.raises(ConfigError, match="cannot read git config"):
        core.config_entries("ckpt.")


def test_diff_trees_names_each_change_once_with_its_letter(core, repo):
    one = rev(repo, "HEAD^{tree}")
    (repo / "README").write_text("changed\n")
    (repo / "new").write_text("n\n")
    git(repo, "add", "-A")
    git(repo, "rm", "-q", "--cached", "README")
    two = git(repo, "write-tree").decode().strip()
    changes = core.diff_trees(one, two)
    assert [(c.status, c.path) for c in changes] == [("D", b"README"), ("A", b"new")]
    (old, new) = changes[1]  # still unpacks as (old, new)
    assert old is None and new.oid == rev(repo, ":new")


@pytest.mark.parametrize("name", [b":x", b':"q', b"\xff\xfe.bin", b":\xff", b"sub/:y"])
def test_ignore_rules_judge_names_git_would_read_as_pathspec_magic(core, repo, name):
    """``git check-ignore`` takes no ``literal`` magic and reads a leading ``:`` as magic:
    names that start with ``:``, and names that are not UTF-8 (asked of git, not libgit2),
    are still judged by the rules, in the worktree and under a tree's ``.gitignore``."""
    (repo / ".gitignore").write_bytes(b":*\n*.bin\n:\xff\n")
    (repo / "sub").mkdir()
    (repo / "sub" / ".gitignore").write_bytes(b":y\n")
    git(repo, "add", ".gitignore", "sub/.gitignore")
    git(repo, "commit", "-q", "-m", "rules")
    tree = rev(repo, "HEAD^{tree}")
    assert core.ignored_under_tree(tree, [name, b"plain.txt"]) == {name}
    assert core.is_ignored(os.fsdecode(name)) is True
    assert core.is_ignored("plain.txt") is False


# ------------------------------------------------------------------------------ 20k-path lookups


@pytest.mark.parametrize("name", [b"dir%d/file-%05d.txt", b"dir%d/\xff-%05d.bin"], ids=["utf8", "not-utf8"])
def test_lookups_of_20k_paths_are_linear(repo, core, name):
    """So many paths that they do not fit a command line (``ls_tree`` filters the whole listing,
    ``paths_in_tree`` looks non-UTF-8 names up through it): each set is built once, not once per
    entry listed (20k x 20k: minutes; bench/ pair 2, restore on a 100k-file tree, measures the
    speed side by side with git stash).  The answers stay exact."""
    paths = [name % (i % 7, i) for i in range(20000)]
    blob = git(repo, "hash-object", "-w", "--stdin", input=b"x\n").decode().strip()
    env = {"GIT_INDEX_FILE": str(repo / ".git" / "big-index")}
    git(repo, "update-index", "-z", "--index-info", input=b"".join(b"100644 %s\t%s\0" % (blob.encode(), p) for p in paths), env=env)
    tree = git(repo, "write-tree", env=env).decode().strip()
    asked = paths + [b"dir9/none", b"dir1"]  # over the command-line budget: the whole listing, filtered
    listed = core.ls_tree(tree, *asked)
    found = core.paths_in_tree(tree, asked)
    assert sorted(e.path for e in listed) == sorted(paths)
    assert found == set(paths) | {b"dir1"}
