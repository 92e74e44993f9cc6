"""Fixtures and helpers of the in-process tier: git_ckpt's modules called directly on real
real ``git``), no ``git ckpt`` subprocess.  Runs in seconds: ``pytest tests/unit``."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git, init_repo
from git_ckpt.gitcore import Repo


@pytest.fixture
def root(tmp_path) -> Path:
    """A repository with one commit (README)."""
    return init_repo(tmp_path / "r")


@pytest.fixture
def repo(root) -> Repo:
    """The :class:`Repo` of ``root``."""
    return Repo.discover(root)


def rev(root: Path, name: str) -> str:
    return git(root, "rev-parse", name).decode().strip()
