"""Findings of the hostile-input review of 5a628f2 that still reproduced on main: one test (or
a Hypothesis family) per kind."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_ckpt.model import escape
from conftest import ckpt, forge_checkpoint, git, index_state, init_repo, worktree_state

# -- finding 4: names git unquotes on line-based stdin (a leading '"', backslash, newline ...)

AWKWARD = st.lists(st.sampled_from([b'"', b"\\", b"\n", b"\t", b" ", b"*", b":", b"\xff", b"a", b"\xc3\xa9", b"?", b"[x]"]),
                   min_size=1, max_size=5).map(b"".join).filter(lambda n: n.strip(b" ") not in (b"", b".", b"..") and b"/" not in n)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(AWKWARD, min_size=1, max_size=3, unique=True))
def test_awkward_names_save_restore_undo_and_by_path(names):
    with tempfile.TemporaryDirectory() as tmp:
        repo = init_repo(Path(tmp) / "r")
        rb = os.fsencode(repo)
        ckpt(repo, "save", "-m", "before")
        for n in names:
            with open(os.path.join(rb, n), "wb") as fh:
                fh.write(b"precious " + n + b"\n")
        git(repo, "add", "-A")
        with open(os.path.join(rb, names[0]), "ab") as fh:
            fh.write(b"unstaged\n")
        ckpt(repo, "save", "-m", "names")
        wt, idx = worktree_state(repo), index_state(repo)
        ckpt(repo, "restore", "default/1")
        assert not any(os.path.lexists(os.path.join(rb, n)) for n in names)
        ckpt(repo, "undo")
        assert (worktree_state(repo), index_state(repo)) == (wt, idx)
        ckpt(repo, "restore", "default/2")
        assert (worktree_state(repo), index_state(repo)) == (wt, idx)
        os.unlink(os.path.join(rb, names[0]))
        ckpt(repo, "restore", "default/2", "--", os.fsdecode(names[0]))
        assert worktree_state(repo) == wt


# -- finding 2: overlay patterns into .git, from every config source

@pytest.mark.parametrize("pattern", [".git/config", ".GIT/config", ".Git/**", "sub/.git/", "!.git"])
@pytest.mark.parametrize("source", ["toml", "config", "dash-c"])
def test_overlay_pattern_into_git_is_a_config_error(repo, pattern, source):
    args = ["save", "-m", "x"]
    if source == "toml":
        (repo / ".ckpt.toml").write_text(f'[overlay]\ninclude = ["{pattern}"]\n')
    elif source == "config":
        git(repo, "config", "ckpt.overlay.include", pattern)
    else:
        args = ["-c", f"ckpt.overlay.include={pattern}", "ckpt", *args]
    if source == "dash-c":
        r = subprocess.run(["git", *args], cwd=repo, capture_output=True)
        assert r.returncode == 6, r
        assert f"overlay.include pattern '{escape(pattern)}' points into .git" in r.stderr.decode()
        assert git(repo, "for-each-ref", "refs/ckpt/") == b""
    else:
        res = ckpt(repo, *args, rc=6)
        assert f"overlay.include pattern '{escape(pattern)}' points into .git" in res.err
        assert res.err.count("error:") == 1


def test_overlay_never_archives_git_even_through_a_wildcard(repo):
    (repo / ".gitignore").write_text("ign/\n")
    (repo / "ign").mkdir()
    (repo / "ign" / "f").write_text("f\n")
    git(repo, "config", "ckpt.overlay.include", "*")
    ckpt(repo, "save", "-m", "x")
    files = [f["path"] for f in ckpt(repo, "show", "default/1", "--json").json()["result"]["overlay"]]
    assert files == ["ign/f"]


def test_overlay_root_below_a_symlinked_directory_is_not_read(repo, tmp_path):
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "secretish").write_text("outside\n")
    (repo / ".gitignore").write_text("link\n")
    (repo / "link").symlink_to(outside)
    git(repo, "config", "ckpt.overlay.include", "link/sub/")
    ckpt(repo, "save", "-m", "x")
    assert ckpt(repo, "show", "default/1", "--json").json()["result"]["overlay"] == []


# -- finding 9: NUL bytes in a verifier

@pytest.mark.parametrize("body,key", [
    ('command = "true\\u0000x"', "command"),
    ('command = ["true", "a\\u0000b"]', "command"),
    ('command = "true"\nenv = { X = "a\\u0000b" }', "env.X"),
])
def test_verifier_nul_byte_is_a_config_error_at_load(repo, body, key):
    (repo / ".ckpt.toml").write_text(f'[[verifier]]\nname = "t"\n{body}\n')
    for args in (["trust", "--show"], ["verify"], ["trust"]):
        res = ckpt(repo, *args, rc=6)
        assert res.err.splitlines()[0] == f"error: .ckpt.toml: verifier 't': {key} contains a NUL byte"


# -- finding 10: a device / FIFO entry in overlay.tar

@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.FIFOTYPE])
def test_overlay_special_entry_refused_before_any_change(repo, kind):
    ckpt(repo, "save", "-m", "one")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        ti = tarfile.TarInfo("ign/dev")
        ti.type = kind
        ti.devmajor, ti.devminor = 1, 3
        tf.addfile(ti)
    forge_checkpoint(repo, blobs={"overlay.tar": buf.getvalue()})
    (repo / "README").write_text("changed\n")
    before, idx = worktree_state(repo), index_state(repo)
    res = ckpt(repo, "restore", "default/9", rc=7)
    assert res.err.splitlines()[0] == "error: overlay archive entry 'ign/dev' is a device, FIFO or other special file; refusing the archive"
    assert (worktree_state(repo), index_state(repo)) == (before, idx)


def test_overlay_entry_the_manifest_does_not_list_is_refused(repo):
    ckpt(repo, "save", "-m", "one")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        ti = tarfile.TarInfo("ign/extra")
        ti.size = 3
        tf.addfile(ti, io.BytesIO(b"pwn"))
    forge_checkpoint(repo, blobs={"overlay.tar": buf.getvalue()})
    before = worktree_state(repo)
    res = ckpt(repo, "restore", "default/9", rc=7)
    assert res.err.splitlines()[0] == "error: overlay of default/9 holds 'ign/extra', which its manifest does not list; refusing the checkpoint"
    assert worktree_state(repo) == before


# -- finding 1: a content filter this repository defines makes tested bytes differ from committed ones

def _filtered_repo(repo, extra_toml=""):
    (repo / "code.txt").write_text("good\n")
    (repo / ".ckpt.toml").write_text('[[verifier]]\nname = "tests"\ncommand = "grep -qx good code.txt"\n[gate]\nisolated = true\n' + extra_toml)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    ckpt(repo, "trust")
    ckpt(repo, "hooks", "install")
    git(repo, "config", "ckpt.gate", "true")


def _sneak(repo, where="info"):
    git(repo, "config", "filter.ev.clean", "sed s/^good$/bad/")
    git(repo, "config", "filter.ev.smudge", "sed s/^bad$/good/")
    if where == "info":
        (repo / ".git" / "info" / "attributes").write_text("code.txt filter=ev\n")
    else:
        (repo / ".gitattributes").write_text("code.txt filter=ev\n")
        git(repo, "add", ".gitattributes")
    os.utime(repo / "code.txt")
    ckpt(repo, "save", "-m", "sneaky")
    ckpt(repo, "verify", "--isolated")
    git(repo, "add", "code.txt")


REASON = ("'code.txt' goes through content filter 'ev', defined by this repository's own config or info/attributes "
          "rather than committed .gitattributes: the bytes verified are not the bytes committed")


@pytest.mark.parametrize("where", ["info", "committed-attributes-local-driver"])
def test_gate_refuses_a_tree_behind_a_locally_defined_filter(repo, where):
    _filtered_repo(repo)
    _sneak(repo, where)
    proc = subprocess.run(["git", "commit", "-qm", "sneaky"], cwd=repo, capture_output=True)
    assert proc.returncode == 1
    assert proc.stderr.decode().splitlines()[0] == f"error: commit refused by git ckpt gate: {REASON}"
    git(repo, "commit", "-qm", "sneaky", "--no-verify")
    assert git(repo, "show", "HEAD:code.txt") == b"bad\n"
    res = ckpt(repo, "verify-commit", "HEAD", rc=1)
    assert REASON in res.out


def test_filter_driver_from_global_config_and_committed_attributes_is_not_local(repo):
    _filtered_repo(repo)
    git(repo, "config", "--global", "filter.up.clean", "cat")
    git(repo, "config", "--global", "filter.up.smudge", "cat")
    (repo / ".gitattributes").write_text("code.txt filter=up\n")
    ckpt(repo, "save", "-m", "lfs-like")
    ckpt(repo, "verify", "--isolated")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "ok")
    ckpt(repo, "verify-commit", "HEAD")


def test_allow_local_filters_accepts_them(repo):
    _filtered_repo(repo, "allow_local_filters = true\n")
    _sneak(repo)
    git(repo, "commit", "-qm", "allowed")


# -- finding 5: a directory replaced by a symlink to outside the worktree

def test_restore_never_reads_or_writes_through_a_symlinked_parent(repo, tmp_path):
    outside = tmp_path / "out"
    outside.mkdir()
    (outside / "b.txt").write_text("outside\n")
    (repo / "d").mkdir()
    (repo / "d" / "b.txt").write_text("x\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "d")
    ckpt(repo, "save", "-m", "dir")
    saved = worktree_state(repo)
    (repo / "d" / "b.txt").unlink()
    (repo / "d").rmdir()
    (repo / "d").symlink_to(outside)
    linked = worktree_state(repo)
    out_before = worktree_state(outside)
    ckpt(repo, "restore", "default/1")
    assert worktree_state(repo) == saved
    assert worktree_state(outside) == out_before
    ckpt(repo, "undo")
    assert worktree_state(repo) == linked
    assert worktree_state(outside) == out_before
    # by path, the symlink is not among the paths restored: refused up front, nothing changed
    res = ckpt(repo, "restore", "default/1", "--", "d/b.txt", rc=1)
    assert res.err.splitlines()[0].endswith(": d")
    assert worktree_state(repo) == linked
    assert worktree_state(outside) == out_before


# -- finding 7: a copied "passed" line about another checkpoint's tree is not local evidence here

def test_copied_result_line_is_not_shown_as_local_on_another_tree(repo):
    (repo / ".ckpt.toml").write_text('[[verifier]]\nname = "tests"\ncommand = "true"\n')
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "cfg")
    ckpt(repo, "trust")
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "verify")
    (repo / "README").write_text("other\n")
    ckpt(repo, "save", "-m", "two")
    one = git(repo, "rev-parse", "refs/ckpt/default/1").decode().strip()
    two = git(repo, "rev-parse", "refs/ckpt/default/2").decode().strip()
    line = git(repo, "notes", "--ref", "ckpt", "show", one)
    git(repo, "notes", "--ref", "ckpt", "add", "-f", "-F", "-", two, input=line)
    shown = ckpt(repo, "show", "default/2").out
    assert "  tests: passed (exit 0, " in shown and shown.rstrip().endswith("[not about this checkpoint: not evidence]")
    rows = ckpt(repo, "show", "default/2", "--json").json()["result"]["results"]
    assert [(r["local"], r["about"]) for r in rows] == [(False, False)]
    assert ckpt(repo, "show", "default/1", "--json").json()["result"]["results"][0]["local"] is True
    listed = ckpt(repo, "list").out.splitlines()
    two_row = next(ln for ln in listed if "default/2" in ln)
    one_row = next(ln for ln in listed if "default/1" in ln)
    assert "[tests:passed]" in one_row and "[tests:passed]" not in two_row, listed
    assert "default/2" in two_row and "[tests:passed(fetched)]" in two_row
    assert ckpt(repo, "promote", "default/2", rc=None).rc != 0
    assert git(repo, "rev-parse", "refs/ckpt/default/promoted").decode().strip() != two


# -- finding 3: diff --stat / --name-status of a checkpoint holding a large blob reads no whole blob

def _peak_kib(repo, *args) -> int:
    """The peak RSS (KiB) of the largest process ``git ckpt ARGS`` ran (a fresh parent, so only its children count)."""
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    return int(subprocess.run([sys.executable, "-c", code, "git", "ckpt", *args], cwd=repo, capture_output=True, check=True).stdout)


@pytest.mark.parametrize("fmt", ["--stat", "--name-status"])
def test_diff_summary_of_a_large_blob_is_bounded(repo, fmt):
    ckpt(repo, "save", "-m", "small")
    with open(repo / "big", "wb") as fh:
        fh.truncate(80 << 20)
    ckpt(repo, "save", "-m", "big")
    assert "big" in ckpt(repo, "diff", fmt, "default/1", "default/2").out
    assert _peak_kib(repo, "diff", fmt, "default/1", "default/2") < 60 << 10
