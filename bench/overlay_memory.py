"""Peak memory of extracting a 1 GiB zero overlay (issue 10, "memory"): measured, not asserted.

    .venv/bin/python bench/overlay_memory.py [SIZE_MIB]

Builds, in a temporary directory, a repository whose checkpoint ``default/2`` carries an overlay
tar holding one file of SIZE_MIB (default 1024) MiB of zeros (the tar written to disk and stored
with ``git hash-object -w``, so building it needs no memory either), raises the local cap
(``git config ckpt.overlay.maxFileSize 2GiB``), then runs ``check``, ``restore --dry-run`` and
``restore`` under ``/usr/bin/time -v`` and prints each command's maximum resident set size and
wall time.  ``/usr/bin/time`` reports the largest process of the command (git-ckpt itself or one
of the git processes it runs).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path


def git(cwd: Path, *args: str, input: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, input=input, stdout=subprocess.PIPE, check=True).stdout


def main() -> None:
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    size = mib << 20
    with tempfile.TemporaryDirectory(prefix="ckpt-bench-ovl-") as tmp:
        root = Path(tmp) / "r"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "--allow-empty", "-m", "init")
        (root / ".gitignore").write_text("fixtures/\n")
        (root / ".ckpt.toml").write_text('[overlay]\ninclude = ["fixtures/"]\n')
        (root / "fixtures").mkdir()
        (root / "fixtures" / "small").write_text("small\n")
        subprocess.run(["git", "ckpt", "save", "-m", "small"], cwd=root, check=True, stdout=subprocess.DEVNULL)
        # the overlay tar, streamed to disk
        tar_path = Path(tmp) / "overlay.tar"
        zero = hashlib.sha256()
        chunk = b"\0" * (1 << 20)
        for _ in range(mib):
            zero.update(chunk)

        class Zeros:
            def __init__(self) -> None:
                self.left = size

            def read(self, n: int = -1) -> bytes:
                n = self.left if n < 0 else min(n, self.left)
                self.left -= n
                return b"\0" * n

        with tarfile.open(tar_path, "w", format=tarfile.PAX_FORMAT) as tar:
            info = tarfile.TarInfo("fixtures/zeros")
            info.size, info.mode, info.mtime = size, 0o644, 0
            tar.addfile(info, Zeros())
        tar_blob = git(root, "hash-object", "-w", str(tar_path)).decode().strip()
        tar_path.unlink()
        parents = git(root, "rev-list", "--parents", "-n1", "refs/ckpt/default/1").decode().split()[1:]
        m = json.loads(git(root, "show", "refs/ckpt/default/1^3:manifest.json"))
        m["id"], m["number"] = "default/2", 2
        m["overlay"]["files"] = [{"path": "fixtures/zeros", "kind": "file", "mode": 0o100644, "size": size,
                                  "sha256": zero.hexdigest(), "mtime": 0}]
        from git_ckpt.overlay import overlay_digest
        from git_ckpt.model import OverlayFile

        m["overlay"]["digest"] = overlay_digest([OverlayFile(**f) for f in m["overlay"]["files"]])
        manifest_blob = git(root, "hash-object", "-w", "--stdin", input=json.dumps(m).encode()).decode().strip()
        meta_tree = git(root, "mktree", input=f"100644 blob {manifest_blob}\tmanifest.json\n100644 blob {tar_blob}\toverlay.tar\n".encode()).decode().strip()
        meta = git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit-tree", meta_tree, "-m", "meta").decode().strip()
        wtree = git(root, "rev-parse", "refs/ckpt/default/1^{tree}").decode().strip()
        args = [a for p in parents[:-1] + [meta] for a in ("-p", p)]
        commit = git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit-tree", wtree, *args, "-m", "zeros").decode().strip()
        git(root, "update-ref", "refs/ckpt/default/2", commit)
        git(root, "config", "ckpt.overlay.maxFileSize", "2GiB")
        print(f"overlay: one file of {mib} MiB of zeros; overlay.tar blob {tar_blob[:12]}, "
              f"{int(git(root, 'count-objects', '-v').decode().split('size-pack: ')[1].split()[0]) + int(git(root, 'count-objects', '-v').decode().split('size: ')[1].split()[0])} KiB in the object store")
        for cmd in (["check", "default/2"], ["restore", "--dry-run", "default/2"], ["restore", "default/2"]):
            t0 = time.monotonic()
            proc = subprocess.run(["/usr/bin/time", "-v", "git", "ckpt", *cmd], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            wall = time.monotonic() - t0
            rss = int(re.search(rb"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))
            print(f"git ckpt {' '.join(cmd):<28} exit {proc.returncode}  max RSS {rss / 1024:7.1f} MiB  wall {wall:5.1f} s")
        assert os.path.getsize(root / "fixtures" / "zeros") == size


if __name__ == "__main__":
    main()
