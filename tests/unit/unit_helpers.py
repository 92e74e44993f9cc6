"""Helpers of the in-process tier (``tests/unit``): git_ckpt's modules called directly on real
repositories (made with the real ``git``; the ``core`` fixture is their :class:`Repo`), no ``git
ckpt`` subprocess.  Runs in seconds: ``pytest tests/unit``."""

from __future__ import annotations

from pathlib import Path

from conftest import git


def rev(root: Path, name: str) -> str:
    return git(root, "rev-parse", name).decode().strip()
