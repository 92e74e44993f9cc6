"""Attack 21: the caps a reader applies to an overlay archive are hard limits, the same ones a
save keeps to; the configuration's ``overlay.max_file_size`` is a save-time choice and never
makes a saved checkpoint unreadable.

* a restore brings a teammate's ``.ckpt.toml`` with a lower ``max_file_size``: ``undo`` still
  gives back the overlay file the restore deleted, byte for byte;
* the user lowers ``ckpt.overlay.maxFileSize`` after saving: the earlier checkpoint restores;
* over the entry-count / total-size limits (lowered for the test in the process that runs the
  real entry point), a save leaves files out with a warning and records them in ``skipped``,
  and the archive it wrote is read back by the same limits.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from conftest import ckpt, git


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def ref(repo: Path, name: str) -> str:
    return git(repo, "rev-parse", name).decode().strip()


def test_undo_after_restoring_a_lower_max_file_size_gives_the_file_back(repo):
    """The reproducer (/tmp/a21/repro/2-undo-cap.sh): the pre-restore save holds fx/big.bin
    (5000 bytes under the user's 100 MiB cap); the restored .ckpt.toml says 1 KiB; undo reads
    that save's archive all the same."""
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["fx/"]\n')
    (repo / ".gitignore").write_text("fx/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    ckpt(repo, "task", "start", "t")
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["fx/"]\nmax_file_size = "1KiB"\n')
    ckpt(repo, "save", "-m", "target")  # t/1: the teammate's lower cap
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["fx/"]\n')
    (repo / "fx").mkdir()
    big = os.urandom(5000)
    (repo / "fx/big.bin").write_bytes(big)
    want = hashlib.sha256(big).hexdigest()
    ckpt(repo, "restore", "t/1")  # the pre-restore save t/2 holds fx/big.bin; the restore deletes it
    assert not (repo / "fx/big.bin").exists()
    assert 'max_file_size = "1KiB"' in (repo / ".ckpt.toml").read_text()
    t2 = ref(repo, "refs/ckpt/t/2")
    ckpt(repo, "undo")
    assert sha(repo / "fx/big.bin") == want
    assert (repo / ".ckpt.toml").read_text() == '[overlay]\ninclude = ["fx/"]\n'
    # and t/2 itself restores by name too (it is unchanged: undo never rewrites it)
    (repo / "fx/big.bin").unlink()
    ckpt(repo, "restore", "--dry-run", "t/2")
    ckpt(repo, "restore", "t/2")
    assert sha(repo / "fx/big.bin") == want
    assert ref(repo, "refs/ckpt/t/2") == t2


def test_lowering_max_file_size_after_saving_keeps_the_checkpoint_restorable(repo):
    (repo / ".gitignore").write_text("fx/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "ignore fx")
    git(repo, "config", "ckpt.overlay.include", "fx/")
    (repo / "fx").mkdir()
    big = os.urandom(5000)
    (repo / "fx/big.bin").write_bytes(big)
    ckpt(repo, "save", "-m", "with big")  # default/1 holds 5000 bytes
    git(repo, "config", "ckpt.overlay.maxFileSize", "1KiB")
    (repo / "fx/big.bin").unlink()
    assert ckpt(repo, "check", "default/1").rc == 0
    ckpt(repo, "restore", "--dry-run", "default/1")
    ckpt(repo, "restore", "default/1")
    assert (repo / "fx/big.bin").read_bytes() == big
    # undo: the file is over the cap now, so no overlay holds it and it is left where it is
    ckpt(repo, "undo")
    assert (repo / "fx/big.bin").read_bytes() == big


# A wrapper running the real entry point with the overlay's hard limits lowered in its own process.
LOWERED = ("import sys\n"
           "from git_ckpt import overlay\n"
           "overlay.MAX_ENTRIES = int(sys.argv[1])\n"
           "overlay.MAX_TOTAL = int(sys.argv[2])\n"
           "from git_ckpt.cli import main\n"
           "main(sys.argv[3:])\n")


def lowered(repo: Path, entries: int, total: int, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", LOWERED, str(entries), str(total), *args], cwd=repo,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def overlay_repo(repo: Path, files: dict[str, bytes]) -> None:
    (repo / ".gitignore").write_text("fx/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "ignore fx")
    git(repo, "config", "ckpt.overlay.include", "fx/")
    (repo / "fx").mkdir()
    for name, data in files.items():
        (repo / "fx" / name).write_bytes(data)


def test_save_past_the_entry_limit_leaves_files_out_and_its_archive_reads_back(repo):
    files = {f"f{i}": f"file {i}\n".encode() for i in range(5)}
    overlay_repo(repo, files)
    res = lowered(repo, 3, 1 << 30, "save", "-m", "five")
    assert res.returncode == 0, res
    err = res.stderr.decode()
    assert "overlay: left out 2 files past the archive's hard limits (3 entries, 1073741824 bytes in all): fx/f3, fx/f4" in err, err
    info = ckpt(repo, "show", "--json", "default/1").json()["result"]["manifest"]["overlay"]
    assert [f["path"] for f in info["files"]] == ["fx/f0", "fx/f1", "fx/f2"]
    assert info["skipped"] == ["fx/f3", "fx/f4"]
    # read back under the same limits: dry run, check and restore succeed
    for name in files:
        (repo / "fx" / name).unlink()
    assert lowered(repo, 3, 1 << 30, "restore", "--dry-run", "default/1").returncode == 0
    assert lowered(repo, 3, 1 << 30, "check", "default/1").returncode == 0
    res = lowered(repo, 3, 1 << 30, "restore", "default/1")
    assert res.returncode == 0, res
    assert sorted(p.name for p in (repo / "fx").iterdir()) == ["f0", "f1", "f2"]
    assert all((repo / "fx" / n).read_bytes() == files[n] for n in ("f0", "f1", "f2"))


def test_save_past_the_total_limit_leaves_files_out_and_its_archive_reads_back(repo):
    files = {"a": b"a" * 60, "b": b"b" * 60, "c": b"c" * 30}
    overlay_repo(repo, files)
    res = lowered(repo, 1000, 100, "save", "-m", "150 bytes")
    assert res.returncode == 0, res
    assert "left out 1 file past the archive's hard limits (1000 entries, 100 bytes in all): fx/b" in res.stderr.decode(), res
    info = ckpt(repo, "show", "--json", "default/1").json()["result"]["manifest"]["overlay"]
    assert [f["path"] for f in info["files"]] == ["fx/a", "fx/c"]
    assert info["skipped"] == ["fx/b"]
    for name in files:
        (repo / "fx" / name).unlink()
    res = lowered(repo, 1000, 100, "restore", "default/1")
    assert res.returncode == 0, res
    assert {p.name: p.read_bytes() for p in (repo / "fx").iterdir()} == {"a": files["a"], "c": files["c"]}
