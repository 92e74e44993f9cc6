"""State files an attacker or damage may have replaced: every file git ckpt reads under
``$GIT_DIR/ckpt/``, the worktree's ``.ckpt.toml`` and the per-user trust store is read only when
it is a regular file of bounded size (``gitcore.read_state``).

Each state file is planted as (a) a symlink to a regular file outside the repository holding
plausible content, (b) a FIFO (a plain ``open`` would block forever), (c) a directory and (d) a
file one byte over its cap, and the real ``git ckpt`` command that reads it is run.  State files
refuse with one exact error line and exit code and change nothing; the two caches (``warned-T``,
``kept-ignored``) count as none and the save goes on.  The subprocess timeout is only a safety
net for a hang (the process group is killed): the assertions are the exit code and stderr.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import Result, fsck_clean, git, merge_stopped_on_conflict

KINDS = ["symlink", "fifo", "directory", "oversize"]
STATE_MAX = 64 * 1024 * 1024
TASK_MAX = 4096
MARK_MAX = 1 << 20
CONFIG_MAX = 1 << 20
HANG = 90  # seconds: only a safety net; a run takes about a second


def run(cwd: Path, *args: str) -> Result:
    """``git ckpt ARGS`` in its own process group (killed whole if it hangs, which fails the test)."""
    proc = subprocess.Popen(["git", "ckpt", *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=HANG)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"git ckpt {' '.join(args)} hung (killed after {HANG} s)")
    res = Result(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    assert "Traceback" not in res.err, res
    return res


def plant(path: Path, kind: str, content: bytes, cap: int, outside: Path) -> None:
    """Put a ``kind`` at ``path``: a symlink to ``outside`` (holding ``content``), a FIFO, a
    directory (holding a file with ``content``), or ``content`` padded to ``cap + 1`` bytes
    (newlines when small, a sparse tail of NULs for the 64 MiB cap)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.is_file():
        path.unlink()
    if kind == "symlink":
        outside.parent.mkdir(parents=True, exist_ok=True)
        outside.write_bytes(content)
        os.symlink(outside, path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
        (path / "inside").write_bytes(content)
    else:
        with open(path, "wb") as fh:
            if cap < STATE_MAX:
                fh.write(content.ljust(cap + 1, b"\n"))
            else:
                fh.write(content)
                fh.truncate(cap + 1)


def files_of(root: Path) -> dict[str, tuple]:
    """Every path under ``root`` (``.git`` included): kind, mode and bytes of regular files, link
    targets; a FIFO or other special file is never opened."""
    out: dict[str, tuple] = {}
    for top, dirs, names in os.walk(root):
        for n in dirs + names:
            full = os.path.join(top, n)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(full))
            elif stat.S_ISREG(st.st_mode):
                with open(full, "rb") as fh:
                    out[rel] = ("file", st.st_mode & 0o777, hashlib.sha256(fh.read()).hexdigest())
            else:
                out[rel] = (stat.S_IFMT(st.st_mode),)
    return out


def world(repo: Path) -> tuple:
    """What a refusal must leave alone: refs, config, the index, every file of the worktree and
    of ``.git`` except the locks git ckpt takes and the objects a read may not write anyway."""
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    config = (repo / ".git" / "config").read_bytes()
    files = {k: v for k, v in files_of(repo).items() if not k.startswith(".git/objects") and not k.endswith(".lock")
             and k not in (".git/ckpt/lock", ".git/index")}
    return refs, config, git(repo, "ls-files", "-s", "-z"), files


def irregular(path: Path) -> str:
    return f"error: {path} is not a regular file git-ckpt wrote\nhint: move it aside\n"


def oversize(path: Path, cap: int) -> str:
    return f"error: {path} is larger than {cap} bytes\nhint: move it aside\n"


def expected_error(path: Path, kind: str, cap: int) -> str:
    return oversize(path, cap) if kind == "oversize" else irregular(path)


def refused(repo: Path, args: tuple[str, ...], rc: int, err: str, outside: Path) -> None:
    """``git ckpt ARGS`` exits ``rc`` with exactly ``err`` on stderr and changes nothing; the file
    outside the repository a symlink pointed at is untouched."""
    outside_before = outside.read_bytes() if outside.exists() else None
    before = world(repo)
    res = run(repo, *args)
    assert (res.rc, res.err) == (rc, err), res
    assert world(repo) == before
    assert (outside.read_bytes() if outside.exists() else None) == outside_before
    fsck_clean(repo)


def two_states(repo: Path) -> None:
    """default/1 holds f = "1", default/2 holds f = "2"."""
    (repo / "f").write_text("1\n")
    assert run(repo, "save", "-m", "one").rc == 0
    (repo / "f").write_text("2\n")
    assert run(repo, "save", "-m", "two").rc == 0


# ------------------------------------------------------------------ $GIT_DIR/ckpt/TASK


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("args", [("save", "-m", "x"), ("list",), ("status",)], ids=["save", "list", "status"])
def test_the_current_task_file(repo, tmp_path, kind, args):
    assert run(repo, "save", "-m", "first").rc == 0
    path = repo.resolve() / ".git" / "ckpt" / "TASK"
    outside = tmp_path / "elsewhere" / "TASK"
    plant(path, kind, b"other\n", TASK_MAX, outside)
    refused(repo, args, 7, expected_error(path, kind, TASK_MAX), outside)


# ------------------------------------------------------------------ $GIT_DIR/ckpt/RESTORE


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("args", [("undo",), ("restore", "--continue"), ("gc", "--dry-run")], ids=["undo", "continue", "gc"])
def test_the_restore_journal(repo, tmp_path, kind, args):
    two_states(repo)
    commit = {n: git(repo, "rev-parse", f"refs/ckpt/default/{n}").decode().strip() for n in (1, 2)}
    journal = json.dumps({"type": "restore", "task": "default", "target_commit": commit[1], "target_id": "default/1",
                          "from_commit": commit[2], "from_id": "default/2"}).encode()
    path = repo.resolve() / ".git" / "ckpt" / "RESTORE"
    outside = tmp_path / "elsewhere" / "RESTORE"
    plant(path, kind, journal, STATE_MAX, outside)
    refused(repo, args, 7, expected_error(path, kind, STATE_MAX), outside)


# ------------------------------------------------------------------ $GIT_DIR/ckpt/last-jump


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("args", [("undo",), ("undo", "--dry-run")], ids=["undo", "dry-run"])
def test_the_last_jump_record(repo, tmp_path, kind, args):
    two_states(repo)
    assert run(repo, "restore", "1").rc == 0
    path = repo.resolve() / ".git" / "ckpt" / "last-jump"
    assert path.read_bytes() == b"default\n"  # what restore wrote: the plausible content
    outside = tmp_path / "elsewhere" / "last-jump"
    plant(path, kind, b"default\n", MARK_MAX, outside)
    refused(repo, args, 7, expected_error(path, kind, MARK_MAX), outside)


# ------------------------------------------------------------------ $GIT_DIR/ckpt/MERGE_RESTORED


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory"])
def test_a_planted_merge_mark_vouches_for_no_merge(repo, tmp_path, kind):
    """The mark says "this MERGE_HEAD is one a restore brought back" (so restoring over the merge
    loses nothing).  One that is no regular file vouches for nothing: the merge in progress is
    the user's, and restore refuses (exit 5) as for any merge.  (Oversize is left out: a mark
    over the cap differs from any MERGE_HEAD, so it vouched for nothing before either.)"""
    (repo / "f").write_text("base\n")
    git(repo, "add", "f")
    git(repo, "commit", "-q", "-m", "base")
    assert run(repo, "save", "-m", "before the merge").rc == 0
    merge_stopped_on_conflict(repo)
    merge_head = (repo / ".git" / "MERGE_HEAD").read_bytes()
    path = repo.resolve() / ".git" / "ckpt" / "MERGE_RESTORED"
    outside = tmp_path / "elsewhere" / "MERGE_RESTORED"
    plant(path, kind, merge_head, MARK_MAX, outside)
    refused(repo, ("restore", "default/1"), 5,
            "error: a merge is in progress; restore would leave it half-done (a checkpoint keeps MERGE_HEAD and MERGE_MSG, not the rest of git's merge state: MERGE_MODE, AUTO_MERGE, an autostash, rerere's records)\n"
            "hint: finish it or abort it first (git merge --abort), then restore\n", outside)


# ------------------------------------------------------------------ $GIT_DIR/ckpt/agent-install.json

AGENT_RECORD = json.dumps({".claude/settings.json": {"agent": "claude-code", "added": [], "existed": False,
                                                     "written_sha256": "0" * 64}}).encode()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("args", [("agent", "status"), ("agent", "install", "claude-code"), ("agent", "uninstall", "claude-code")],
                         ids=["status", "install", "uninstall"])
def test_the_agent_install_record(repo, tmp_path, kind, args):
    path = repo.resolve() / ".git" / "ckpt" / "agent-install.json"
    outside = tmp_path / "elsewhere" / "agent-install.json"
    plant(path, kind, AGENT_RECORD, STATE_MAX, outside)
    refused(repo, args, 7, expected_error(path, kind, STATE_MAX), outside)
    assert not (repo / ".claude").exists()


# ------------------------------------------------------------------ $GIT_COMMON_DIR/ckpt/hooks.json


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("args", [("hooks", "install"), ("hooks", "uninstall")], ids=["install", "uninstall"])
def test_the_hooks_record(repo, tmp_path, kind, args):
    path = repo.resolve() / ".git" / "ckpt" / "hooks.json"
    outside = tmp_path / "elsewhere" / "hooks.json"
    record = json.dumps({"dirs": {str(repo.resolve() / ".git" / "hooks"): False}}).encode()
    plant(path, kind, record, STATE_MAX, outside)
    refused(repo, args, 7, expected_error(path, kind, STATE_MAX), outside)


# ------------------------------------------------------------------ the per-user trust store

VERIFIER = b'[[verifier]]\nname = "t"\ncommand = ["sh", "-c", "echo ran >> \\"$HOME/verifier-ran\\""]\n'


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("args", [("trust",), ("trust", "--show"), ("verify",)], ids=["trust", "show", "verify"])
def test_the_trust_store(repo, tmp_path, hermetic, kind, args):
    """A planted store that trusts this worktree's .ckpt.toml would let its verifier run: it
    is refused (exit 6, a config error) and the verifier does not run."""
    (repo / ".ckpt.toml").write_bytes(VERIFIER)
    assert run(repo, "save", "-m", "one").rc == 0
    path = hermetic / ".local" / "share" / "git-ckpt" / "trusted.json"
    outside = tmp_path / "elsewhere" / "trusted.json"
    store = json.dumps({str(repo.resolve()): {"sha256": hashlib.sha256(VERIFIER).hexdigest()}}).encode()
    plant(path, kind, store, STATE_MAX, outside)
    what = f"{path} is larger than {STATE_MAX} bytes" if kind == "oversize" else f"{path} is not a regular file git-ckpt wrote"
    refused(repo, args, 6, f"error: the trust store {what}\nhint: move {path} aside and run git ckpt trust again\n", outside)
    assert not (hermetic / "verifier-ran").exists()


# ------------------------------------------------------------------ .ckpt.toml

CONFIG = b'[overlay]\ninclude = ["fixtures/"]\n'


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("args", [("save", "-m", "x"), ("gc", "--dry-run"), ("verify",)], ids=["save", "gc", "verify"])
def test_the_config_file(repo, tmp_path, kind, args):
    assert run(repo, "save", "-m", "one").rc == 0
    path = repo / ".ckpt.toml"
    outside = tmp_path / "elsewhere" / "ckpt.toml"
    plant(path, kind, CONFIG, CONFIG_MAX, outside)
    refused(repo, args, 6, "error: .ckpt.toml is not a regular file of at most 1048576 bytes\n"
                           "hint: remove it or move it aside\n", outside)


@pytest.mark.parametrize("kind", ["symlink", "fifo", "oversize"])
def test_status_with_an_unusable_config_file_says_unknown(repo, tmp_path, kind):
    """status shows what it can without a usable configuration (as with a malformed one): the
    worktree's state is unknown, nothing hangs, nothing changes.  (A directory is left out: it
    was already a config error status got past.)"""
    assert run(repo, "save", "-m", "one").rc == 0
    plant(repo / ".ckpt.toml", kind, CONFIG, CONFIG_MAX, tmp_path / "elsewhere" / "ckpt.toml")
    before = world(repo)
    res = run(repo, "status")
    assert res.rc == 0 and res.err == "", res
    assert ("worktree:  unknown (.ckpt.toml is not a regular file of at most 1048576 bytes); latest is default/1\n"
            in res.out), res
    assert world(repo) == before


# ------------------------------------------------------------------ the caches: warned-T, kept-ignored

NESTED_WARNING = "warning: left out nested repositories with no commit (git cannot record them): sub\n"


@pytest.mark.parametrize("kind", ["symlink", "fifo", "oversize"])
def test_the_warned_cache_counts_as_none(repo, tmp_path, kind):
    """A warned-T that is no regular file remembers nothing: the save warns (again) and succeeds,
    and the file a symlink pointed at is not written through.  (A directory is left out: an
    unreadable cache already counted as none.)"""
    (repo / "sub").mkdir()
    git(repo / "sub", "init", "-q")  # a nested repository with no commit: the save warns about it
    path = repo.resolve() / ".git" / "ckpt" / "warned-default"
    outside = tmp_path / "elsewhere" / "warned-default"
    plant(path, kind, b"sub\0", STATE_MAX, outside)
    res = run(repo, "save", "-m", "x")
    assert (res.rc, res.out, res.err) == (0, "checkpoint saved: default/1\n", NESTED_WARNING), res
    if kind == "symlink":
        assert outside.read_bytes() == b"sub\0" and path.read_bytes() == b"sub\0" and not path.is_symlink()
    fsck_clean(repo)


@pytest.mark.parametrize("kind", KINDS)
def test_the_kept_ignored_cache_counts_as_none(repo, tmp_path, kind):
    """A kept-ignored record that is no regular file keeps nothing out of a save: the untracked
    file it names is saved, and the save succeeds."""
    (repo / "notes.txt").write_text("my notes\n")
    path = repo.resolve() / ".git" / "ckpt" / "kept-ignored"
    outside = tmp_path / "elsewhere" / "kept-ignored"
    plant(path, kind, b"notes.txt\0", STATE_MAX, outside)
    res = run(repo, "save", "-m", "x")
    assert (res.rc, res.out, res.err) == (0, "checkpoint saved: default/1\n", ""), res
    assert git(repo, "cat-file", "blob", "refs/ckpt/default/1:notes.txt") == b"my notes\n"
    if kind == "symlink":
        assert outside.read_bytes() == b"notes.txt\0"
    fsck_clean(repo)


@pytest.mark.parametrize("args", [["list"], ["save", "-m", "x"], ["status"], ["undo"], ["task", "list"]])
def test_a_file_where_the_ckpt_directory_goes_is_damage_not_a_crash(repo, args):
    """``$GIT_DIR/ckpt`` a regular file: every read below it met ENOTDIR (exit 70, internal
    error).  It is named as what it is, exit 7, and nothing is written."""
    (repo / "f.txt").write_text("1\n")
    (repo / ".git/ckpt").write_bytes(b"not a directory\n")
    res = run(repo, *args)
    assert (res.rc, res.err) == (7, f"error: {repo / '.git/ckpt'} is not a directory git-ckpt made\nhint: move it aside\n")
    assert (repo / ".git/ckpt").read_bytes() == b"not a directory\n"
    assert git(repo, "for-each-ref", "refs/ckpt/") == b""
