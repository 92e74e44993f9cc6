"""Directory walks that never recurse in Python.

A worktree, a checkpoint's tree or a scratch copy of one may nest directories deeper than
Python's recursion limit (git works below the worktree's root, so 1000 levels of ``a/`` are a
valid tree), and in Python 3.11 ``os.walk``, ``os.makedirs``, ``shutil.rmtree`` and
``tempfile.TemporaryDirectory``'s cleanup each recurse once per level.  These are their
replacements for every directory whose depth git ckpt does not choose: each keeps its own stack.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import AnyStr, Iterator


def walk(top: AnyStr, *, topdown: bool = True) -> Iterator[tuple[AnyStr, list[AnyStr], list[AnyStr]]]:
    """``os.walk(top, topdown=topdown)`` (symlinks never followed; a symlink to a directory is
    listed among the directories, as there; unreadable directories skipped) without recursion.
    Top-down, the caller may prune the directory list in place, as with ``os.walk``."""
    stack: list[AnyStr | tuple[AnyStr, list[AnyStr], list[AnyStr]]] = [top]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            yield item
            continue
        try:
            with os.scandir(item) as it:
                entries = list(it)
        except OSError:
            continue
        dirs: list[AnyStr] = []
        files: list[AnyStr] = []
        for e in entries:
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(e.name)
        if topdown:
            yield item, dirs, files
        else:
            stack.append((item, dirs, files))
        for d in reversed(dirs):
            path = os.path.join(item, d)
            if not os.path.islink(path):
                stack.append(path)


def makedirs(path: AnyStr) -> None:
    """``os.makedirs(path, exist_ok=True)`` without recursion: the missing directories are made
    top down.  Raises ``OSError`` as ``os.mkdir`` does (``FileExistsError`` when something
    other than a directory is in the way)."""
    missing = []
    cur = path
    while cur and not os.path.isdir(cur):
        missing.append(cur)
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except FileExistsError:
            if not os.path.isdir(d):
                raise


def rmtree(path: AnyStr) -> None:
    """``shutil.rmtree(path, ignore_errors=True)`` without recursion: never follows a symlink
    (it is removed, not what it points to); what cannot be removed stays.  Raises nothing."""
    try:
        if os.path.islink(path) or not os.path.isdir(path):
            os.unlink(path)
            return
    except OSError:
        return
    for top, dirs, files in walk(path, topdown=False):
        for name in files + dirs:
            full = os.path.join(top, name)
            with contextlib.suppress(OSError):
                if os.path.islink(full) or not os.path.isdir(full):
                    os.unlink(full)
                else:
                    os.rmdir(full)
    with contextlib.suppress(OSError):
        os.rmdir(path)


@contextlib.contextmanager
def temp_dir(prefix: str, dir: str | os.PathLike[str] | None = None) -> Iterator[str]:
    """``tempfile.TemporaryDirectory(prefix=prefix, dir=dir)`` whose cleanup (:func:`rmtree`)
    removes a tree of any depth.  Yields the directory's path."""
    path = tempfile.mkdtemp(prefix=prefix, dir=dir)
    try:
        yield path
    finally:
        rmtree(path)
