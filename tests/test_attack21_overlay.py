"""What the twenty-first attack pass found in the overlay, each as its kind.

- Permission bits lost: save recorded all twelve bits of an overlay file (``mode & 0o7777``) but
  the archive reader kept nine, so setuid, setgid and sticky never came back on restore and
  ``git ckpt diff`` showed the file modified forever.  The README says overlay files keep all
  their permission bits.

Real repositories, the real ``git`` and ``git ckpt``.
"""

from __future__ import annotations

import os
import shutil
import stat

from conftest import ckpt, git

MODES = {"tool-setuid": 0o4755, "tool-setgid": 0o2755, "sticky": 0o1777, "key": 0o600, "plain": 0o644}


def _overlay_repo(repo):
    (repo / ".ckpt.toml").write_text('[overlay]\ninclude = ["fx/"]\n')
    (repo / ".gitignore").write_text("fx/\n")
    git(repo, "add", ".ckpt.toml", ".gitignore")
    git(repo, "commit", "-qm", "overlay")
    (repo / "fx").mkdir()
    for name, mode in MODES.items():
        path = repo / "fx" / name
        path.write_bytes(f"#!/bin/sh\necho {name}\n".encode())
        os.chmod(path, mode)


def _state(repo) -> dict[str, tuple[bytes, int]]:
    return {name: ((repo / "fx" / name).read_bytes(), stat.S_IMODE(os.lstat(repo / "fx" / name).st_mode))
            for name in sorted(os.listdir(repo / "fx"))}


def _clean(repo) -> None:
    res = ckpt(repo, "diff")
    assert res.out == "" and res.rc == 0, res


def test_overlay_permission_bits_survive_restore_and_undo(repo):
    _overlay_repo(repo)
    saved = _state(repo)
    assert {n: m for n, (_b, m) in saved.items()} == MODES  # (the system kept what the test set)
    ckpt(repo, "save", "-m", "modes")
    _clean(repo)

    # deleted, then restored: every file byte- and mode-exact, nothing left to diff
    shutil.rmtree(repo / "fx")
    res = ckpt(repo, "restore", "default/1")
    assert "warning" not in res.err, res
    assert _state(repo) == saved
    _clean(repo)

    # undo: back to the deletion; undo again: back to the restored files, exact
    ckpt(repo, "undo")
    assert not (repo / "fx").exists() or not os.listdir(repo / "fx")
    ckpt(repo, "undo")
    assert _state(repo) == saved
    _clean(repo)

    # replaced (other bytes, other bits): restored exact; undo brings the replaced ones back exact
    for name in MODES:
        path = repo / "fx" / name
        path.write_bytes(b"changed\n")
        os.chmod(path, 0o640)
    changed = _state(repo)
    ckpt(repo, "restore", "default/1")
    assert _state(repo) == saved
    _clean(repo)
    ckpt(repo, "undo")
    assert _state(repo) == changed
    ckpt(repo, "undo")
    assert _state(repo) == saved
    _clean(repo)
