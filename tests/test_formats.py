"""Repository formats: the reftable ref backend, SHA-256 object ids, and repository extensions git
ckpt does not serve.  Every command either works exactly as in a files/SHA-1 repository or refuses
with one ``error:`` line naming the extension, a ``hint:`` naming what works, exit 3, and nothing
written.

Run the whole suite in another format with ``CKPT_TEST_REPO_FORMAT=reftable|sha256`` (git >= 2.45
first on PATH); ``.ci/run`` does.  The tests here pick their formats themselves.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import BIN, Result, ckpt, git, git_version, index_state, init_options, init_repo, run, worktree_state

NEW_GIT = git_version() >= (2, 45)
needs_new_git = pytest.mark.skipif(not NEW_GIT, reason="git >= 2.45 creates reftable repositories (.ci/run runs this with git 2.55)")

# Every command that opens the repository, with arguments that would succeed in a usable one.
REPO_COMMANDS = [
    ("save", "-m", "x"), ("list",), ("show",), ("diff",), ("restore", "@"), ("undo",), ("verify",),
    ("attempt", "--", "true"), ("promote", "@", "--force"), ("status",), ("log",), ("log", "--verify"),
    ("hooks", "install"), ("hooks", "status"), ("gate",), ("verify-commit", "HEAD"), ("trust", "--show"),
    ("push",), ("fetch",), ("gc", "--dry-run"), ("check", "--all"), ("handoff",), ("task", "start", "t"),
    ("task", "list"), ("stats",), ("init",),
]
SERVED = {"noop", "preciousobjects", "worktreeconfig", "relativeworktrees", "objectformat", "refstorage"}


def _set_extension(root: Path, name: str, value: str) -> None:
    """Declare ``extensions.NAME = VALUE`` (format version 1) by editing .git/config directly: git
    itself refuses to run ``git config`` in such a repository."""
    cfg = root / ".git" / "config"
    text = cfg.read_text().replace("repositoryformatversion = 0", "repositoryformatversion = 1")
    cfg.write_text(text + f"[extensions]\n\t{name} = {value}\n")


def _refused(res, *needles: str) -> None:
    """Exit 3, exactly one ``error:`` and one ``hint:`` line of ours (git's own dispatch may warn
    first), each containing its needle, and no traceback."""
    assert res.rc == 3, res
    ours = [ln for ln in res.err.splitlines() if ln.startswith(("error:", "hint:"))]
    assert [ln.split(":")[0] for ln in ours] == ["error", "hint"], res
    for needle in needles:
        assert needle in res.err, (needle, res)


def _unchanged(root: Path, before: dict, config: bytes) -> None:
    assert worktree_state(root) == before
    assert (root / ".git" / "config").read_bytes() == config
    assert not (root / ".git" / "ckpt").exists()
    assert not list((root / ".git" / "refs").rglob("ckpt*"))


# ------------------------------------------------------------------------- unsupported extensions

@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.from_regex(r"[a-z][a-z0-9]{0,11}", fullmatch=True).filter(lambda n: n not in SERVED and not n.startswith("noop")),
    value=st.sampled_from(["true", "origin", "x-1"]),
    command=st.sampled_from(REPO_COMMANDS),
)
def test_unknown_extension_is_named_by_every_command(name, value, command):
    with tempfile.TemporaryDirectory() as tmp:
        root = init_repo(Path(tmp) / "r", fmt="files")
        (root / "README").write_text("changed\n")
        _set_extension(root, name, value)
        before, config = worktree_state(root), (root / ".git/config").read_bytes()
        res = ckpt(root, *command, rc=None, fsck=False)
        _refused(res, f"error: this repository uses the repository extension extensions.{name} = {value}, "
                      "which git ckpt does not support", "hint: git ckpt supports the extensions ", "refstorage (files")
        _unchanged(root, before, config)


@pytest.mark.parametrize(("name", "value", "needle"), [
    ("compatobjectformat", "sha256", "extensions.compatobjectformat = sha256"),
    ("refstorage", "blob", "extensions.refstorage = blob, which git ckpt does not support"),
    ("partialclone", "origin", "extensions.partialclone = origin"),  # libgit2 does not know it
    ("worktreeConfig", "true", None),  # served: config names are case-insensitive
])
@pytest.mark.parametrize("where", ["top", "subdir", "linked-worktree"])
def test_extension_values_served_or_named(tmp_path, name, value, needle, where):
    root = init_repo(tmp_path / "r", fmt="files")
    (root / "sub").mkdir()
    (root / "sub/f").write_text("f\n")
    cwd = {"top": root, "subdir": root / "sub"}.get(where)
    if cwd is None:
        git(root, "worktree", "add", "-q", str(tmp_path / "wt"))
        cwd = tmp_path / "wt"
    _set_extension(root, name, value)
    before, config = worktree_state(root), (root / ".git/config").read_bytes()
    # the entry point itself (as agents' hooks run it): git's dispatcher may refuse a value
    # before git ckpt runs (git 2.55 rejects extensions.refstorage = blob)
    res = Result(run([str(BIN / "git-ckpt"), "save"], cwd, check=False))
    assert "Traceback" not in res.err, res
    if needle is None:
        assert res.rc == 0, res
        return
    _refused(res, needle)
    _unchanged(root, before, config)


def test_extensions_count_only_at_format_version_1(tmp_path):
    """Like git: at ``repositoryformatversion = 0`` an ``[extensions]`` section is ignored."""
    root = init_repo(tmp_path / "r", fmt="files")
    with (root / ".git/config").open("a") as fh:
        fh.write("[extensions]\n\tfoo = bar\n")
    (root / "README").write_text("changed\n")
    assert ckpt(root, "save").out == "checkpoint saved: default/1\n"


# ------------------------------------------------------------------------- the run's format

@pytest.mark.parametrize("command", REPO_COMMANDS, ids=lambda c: " ".join(c))
def test_run_format_is_served_or_refused(repo, repo_format, command):
    """The ``repo`` fixture in this run's format (``CKPT_TEST_REPO_FORMAT``, set by ``.ci/run``):
    in a SHA-1 repository (files or reftable) the command runs; in a SHA-256 one (either ref
    backend) it refuses with exit 3 naming the limit, and writes nothing."""
    (repo / "README").write_text("changed\n")
    before, config = worktree_state(repo), (repo / ".git/config").read_bytes()
    res = ckpt(repo, *command, rc=None, fsck=False)
    if "sha256" in repo_format:
        _refused(res, "error: this repository uses SHA-256 object ids, which libgit2",
                 "(extensions.objectformat = sha256)", "hint: git ckpt works in SHA-1 repositories")
        _unchanged(repo, before, config)
        assert git(repo, "for-each-ref", "refs/ckpt") == b""
    else:
        # ran: done, or nothing to act on (no checkpoint yet; no remote configured: exit 2)
        assert res.rc in (0, 1, 2, 4, 10), res
        assert "error: this repository" not in res.err, res


# ------------------------------------------------------------------------- SHA-256

@pytest.mark.parametrize("command", REPO_COMMANDS, ids=lambda c: " ".join(c))
def test_sha256_repository_every_command_refuses_naming_the_limit(tmp_path, command):
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main", "--object-format=sha256")
    (root / "a").write_text("one\n")
    git(root, "add", "a")
    git(root, "commit", "-q", "-m", "init")
    (root / "a").write_text("two\n")
    before, config = worktree_state(root), (root / ".git/config").read_bytes()
    res = ckpt(root, *command, rc=None, fsck=False)
    _refused(res, "error: this repository uses SHA-256 object ids, which libgit2",
             "(extensions.objectformat = sha256)", "hint: git ckpt works in SHA-1 repositories")
    _unchanged(root, before, config)
    assert git(root, "for-each-ref", "refs/ckpt") == b""


# ------------------------------------------------------------------------- reftable

def _ref_format(repo: Path) -> str:
    return git(repo, "rev-parse", "--show-ref-format").decode().strip()


def _rich_save(root: Path, task: str) -> str:
    """Give ``root`` every kind of state (modified, staged then changed, untracked, executable,
    symlink, empty file, overlay files), save it as ``task``/1 and return the commit id."""
    ckpt(root, "task", "start", task)
    (root / "README").write_text(f"changed by {task}\n")
    (root / "staged.txt").write_text("staged\n")
    git(root, "add", "staged.txt")
    (root / "staged.txt").write_text("staged, then changed\n")
    (root / "untracked.txt").write_text("untracked\n")
    (root / "empty").write_bytes(b"")
    (root / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "tool.sh").chmod(0o755)
    (root / "link").unlink(missing_ok=True)
    (root / "link").symlink_to("README")
    (root / "fixtures" / "deep").mkdir(parents=True, exist_ok=True)
    (root / "fixtures" / "data.bin").write_bytes(bytes(range(256)) * 3 + task.encode())
    (root / "fixtures" / "deep" / "notes.txt").write_text("fixture notes\n")
    assert ckpt(root, "save", "-m", f"from {task}").out == f"checkpoint saved: {task}/1\n"
    ckpt(root, "verify")
    return git(root, "rev-parse", f"refs/ckpt/{task}/1").decode().strip()


def _mess(root: Path) -> None:
    for name in ("README", "staged.txt", "untracked.txt", "empty", "tool.sh", "link"):
        (root / name).unlink(missing_ok=True)
    (root / "fixtures").mkdir(exist_ok=True)
    (root / "fixtures" / "data.bin").write_bytes(b"clobbered")
    (root / "stray.txt").write_text("residue\n")
    git(root, "reset", "-q")


@needs_new_git
@pytest.mark.parametrize(("src", "hub", "dst"), [
    ("reftable", "files", "reftable"), ("reftable", "files", "files"),
    ("files", "reftable", "files"), ("files", "reftable", "reftable"),
])
def test_checkpoint_crosses_ref_backends_byte_for_byte(tmp_path, src, hub, dst):
    """Saved in one ref backend, pushed to a bare repository of the other, fetched into a clone of
    either: restored byte for byte, index included, results and ledger along; then back again."""
    alice = init_repo(tmp_path / "alice", fmt=src)
    (alice / ".gitignore").write_text("fixtures/\n")
    (alice / ".ckpt.toml").write_text('[overlay]\ninclude = ["fixtures/"]\n')
    git(alice, "add", ".gitignore", ".ckpt.toml")
    git(alice, "commit", "-q", "-m", "config")
    git(alice, "config", "ckpt.verifier.ok.command", "true")
    bare = tmp_path / "hub.git"
    git(tmp_path, "init", "-q", "--bare", *init_options(hub), str(bare))
    git(alice, "remote", "add", "origin", str(bare))
    git(alice, "push", "-q", "origin", "main")
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", f"--ref-format={dst}", str(bare), str(bob))
    git(bob, "config", "ckpt.verifier.ok.command", "true")
    assert (_ref_format(alice), _ref_format(bare), _ref_format(bob)) == (src, hub, dst)

    for sender, receiver, task in ((alice, bob, "there"), (bob, alice, "back")):
        commit = _rich_save(sender, task)
        saved = worktree_state(sender), index_state(sender)
        ckpt(sender, "push")
        refs = f"refs/ckpt/{task}/"
        assert git(bare, "for-each-ref", refs) == git(sender, "for-each-ref", refs) != b""
        assert git(bare, "rev-parse", "refs/notes/ckpt") == git(sender, "rev-parse", "refs/notes/ckpt")
        _mess(receiver)
        res = ckpt(receiver, "fetch")
        assert f"origin:{task}/1" in res.out
        assert git(receiver, "rev-parse", f"refs/ckpt-remotes/origin/{task}/1").decode().strip() == commit
        assert (git(receiver, "notes", "--ref=ckpt", "show", commit)
                == git(sender, "notes", "--ref=ckpt", "show", commit) != b"")
        ckpt(receiver, "restore", f"origin:{task}/1")
        assert (worktree_state(receiver), index_state(receiver)) == saved
        ckpt(receiver, "check", "--all")
        assert ckpt(receiver, "log", "--verify").rc == 0


# ------------------------------------------------------------------------- object ids of any length

@pytest.mark.parametrize("fmt", ["sha1", "sha256"])
def test_object_format_constants_are_what_git_computes(tmp_path, fmt):
    from git_ckpt.gitcore import OBJECT_FORMATS, OID_HEX

    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", f"--object-format={fmt}")
    want = OBJECT_FORMATS[fmt]
    assert git(root, "rev-parse", "--show-object-format").decode().strip() == want.name
    assert git(root, "hash-object", "-t", "tree", "--stdin", input=b"").decode().strip() == want.empty_tree
    assert git(root, "hash-object", "--stdin", input=b"").decode().strip() == want.empty_blob
    assert want.zero == "0" * want.hexsz == "0" * len(want.empty_tree)
    assert OID_HEX.fullmatch(want.empty_tree) and OID_HEX.fullmatch(want.zero)
    assert not OID_HEX.fullmatch(want.empty_tree[:-1]) and not OID_HEX.fullmatch(want.empty_tree + "0")


def test_no_code_outside_gitcore_assumes_sha1_ids():
    """Object ids are 40 or 64 hex digits: stored records (manifest fields, note names, caches)
    and hooks never assume 40 alone, nor carry a literal SHA-1 id; gitcore's table per object
    format (``OBJECT_FORMATS``, ``Repo.zero_oid``/``empty_tree``/``empty_blob``) is the one place."""
    top = Path(__file__).resolve().parent.parent
    offenders = []
    for path in sorted([*(top / "git_ckpt").rglob("*.py"), *(p for p in (top / "hooks").iterdir() if p.is_file())]):
        if path.name == "gitcore.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#")[0] if path.suffix == ".py" else line
            sha1_only = re.search(r"\*\s*40\b|\{40\}|len\([^)]*\)\s*[!=]=\s*40\b|\[:40\]|\b40\s*\*", code) and not re.search(r"\b64\b", code)
            if sha1_only or re.search(r"(?<![0-9a-fA-F])[0-9a-f]{40}(?![0-9a-fA-F])", code):
                offenders.append(f"{path.relative_to(top)}:{n}: {line.strip()}")
    assert offenders == []


def _loose_ref_files(root: Path) -> list[str]:
    """Files under .git/refs and .git/logs other than the ``refs/heads`` stub git writes into a
    reftable repository: a loose ref written there would be invisible to git."""
    out = []
    for sub in ("refs", "logs"):
        base = root / ".git" / sub
        if base.exists():
            out += [str(p.relative_to(root / ".git")) for p in base.rglob("*") if p.is_file()]
    return sorted(set(out) - {"refs/heads"})


@needs_new_git
@pytest.mark.parametrize("fmt", ["files", "reftable"])
def test_every_command_works_the_same_in_both_ref_backends(tmp_path, fmt):
    """One workflow, every command, in a files and a reftable repository created by the same git:
    same outputs, same refs, hooks and gate included; nothing written where git would not look."""
    root = init_repo(tmp_path / "r", fmt=fmt)
    assert _ref_format(root) == fmt
    git(root, "config", "ckpt.verifier.ok.command", "true")
    ckpt(root, "hooks", "install")
    ckpt(root, "task", "start", "t", "--goal", "both backends")
    (root / "README").write_text("one\n")
    (root / "new.txt").write_text("new\n")
    assert ckpt(root, "save", "-m", "one").out == "checkpoint saved: t/1\n"
    saved = worktree_state(root), index_state(root)
    assert ckpt(root, "verify").out.endswith("promoted t/1\n")
    (root / "README").write_text("mess\n")
    (root / "new.txt").unlink()
    out = ckpt(root, "restore", "@").out
    assert out == "saved current state as t/2 (pre-restore)\nrestored t/1\n"
    assert (worktree_state(root), index_state(root)) == saved
    ckpt(root, "undo")
    assert (root / "README").read_text() == "mess\n"
    ckpt(root, "restore", "t/1")
    assert ckpt(root, "status", "--json").json()["result"]["promoted"] is not None
    # the gate: a commit of the promoted tree passes and carries the trailer; another is refused
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "gated")
    assert git(root, "log", "-1", "--format=%(trailers:key=Ckpt-Verified,valueonly)").decode().strip() == "t/1"
    ckpt(root, "verify-commit", "HEAD")
    (root / "README").write_text("unverified\n")
    git(root, "add", "README")
    assert subprocess.run(["git", "commit", "-q", "-m", "no"], cwd=root, capture_output=True).returncode != 0
    git(root, "reset", "-q", "--hard")
    # a cherry-pick stopped on a conflict is seen, as in a files repository (a pseudoref there)
    git(root, "checkout", "-q", "-b", "side", "HEAD~1")
    (root / "README").write_text("side\n")
    git(root, "commit", "-q", "-am", "side", "--no-verify")
    git(root, "checkout", "-q", "main")
    assert subprocess.run(["git", "cherry-pick", "side"], cwd=root, capture_output=True).returncode != 0
    res = ckpt(root, "restore", "t/1", rc=5, fsck=False)
    assert "a cherry-pick" in res.err
    git(root, "cherry-pick", "--abort")
    # a linked worktree: its own HEAD and task, the shared checkpoints
    wt = tmp_path / "wt"
    git(root, "worktree", "add", "-q", str(wt), "side")
    (wt / "wt.txt").write_text("in the worktree\n")
    ckpt(wt, "task", "start", "w")
    assert ckpt(wt, "save").out == "checkpoint saved: w/1\n"
    assert "w/1" in ckpt(root, "list", "--all").out
    (wt / "wt.txt").unlink()
    ckpt(wt, "restore", "w/1")
    assert (wt / "wt.txt").read_text() == "in the worktree\n"
    ckpt(root, "log", "--verify")
    ckpt(root, "check", "--all")
    ckpt(root, "handoff")
    ckpt(root, "stats")
    ckpt(root, "gc", "--keep", "1")
    refs = git(root, "for-each-ref", "--format=%(refname)", "refs/ckpt/").decode().split()
    assert refs == ["refs/ckpt/t/1", "refs/ckpt/t/2", "refs/ckpt/t/log", "refs/ckpt/t/promoted",
                    "refs/ckpt/w/1", "refs/ckpt/w/2", "refs/ckpt/w/log"]
    assert git(root, "reflog", "show", "--format=%gs", "refs/ckpt/t/promoted").decode().splitlines() == ["ckpt: promote t/1"]
    if fmt == "reftable":
        assert _loose_ref_files(root) == []


OLD_GIT = "/usr/bin/git"


@needs_new_git
@pytest.mark.skipif(not (Path(OLD_GIT).exists() and b"git version 2.3" in subprocess.run([OLD_GIT, "--version"], capture_output=True).stdout),
                    reason="needs a git older than 2.45 at /usr/bin/git (Debian 12's 2.39)")
@pytest.mark.parametrize("command", [("save",), ("list",), ("restore", "@"), ("gate",)], ids=lambda c: " ".join(c))
def test_reftable_repository_with_an_old_git_on_path_is_refused(tmp_path, command):
    """A reftable repository made by a new git, then git ckpt with a git that cannot read it on
    PATH: exit 3 naming the backend, the git found and the one needed; nothing written."""
    root = init_repo(tmp_path / "r", fmt="reftable")
    (root / "README").write_text("changed\n")
    before, config = worktree_state(root), (root / ".git/config").read_bytes()
    refs = git(root, "for-each-ref")
    env = {"PATH": f"{BIN}:{Path(OLD_GIT).parent}:/bin"}
    res = Result(run([str(BIN / "git-ckpt"), *command], root, env=env, check=False))
    _refused(res, "error: this repository uses the reftable ref backend (extensions.refstorage = reftable), "
                  "which the git on PATH (2.3", "hint: put git 2.45 or newer first on PATH")
    assert worktree_state(root) == before and (root / ".git/config").read_bytes() == config
    assert git(root, "for-each-ref") == refs and _loose_ref_files(root) == []
