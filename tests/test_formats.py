"""Repository formats: the reftable ref backend, SHA-256 object ids, and repository extensions git
ckpt does not serve.  Every command either works exactly as in a files/SHA-1 repository or refuses
with one ``error:`` line naming the extension, a ``hint:`` naming what works, exit 3, and nothing
written.

Run the whole suite in another format with ``CKPT_TEST_REPO_FORMAT=reftable|sha256`` (git >= 2.45
first on PATH); ``.ci/run`` does.  The tests here pick their formats themselves.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ckpt, git, git_version, init_repo, worktree_state

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
    res = ckpt(cwd, "save", rc=None, fsck=False)
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
