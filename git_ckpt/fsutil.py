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
from typing import Any, AnyStr, Iterator


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


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_ANCHOR = 2048  # bytes of a path relative to an open directory before the next one is opened


def rmtree(path: AnyStr) -> None:
    """``shutil.rmtree(path, ignore_errors=True)`` without recursion, and at any length: never
    follows a symlink (it is removed, not what it points to); what cannot be removed stays.
    Raises nothing.

    Every removal is relative to an open directory (``dir_fd``), never a path from ``/``, so a
    tree whose paths pass ``PATH_MAX`` (4096 bytes on Linux: a checkpoint may hold a file 4079
    bytes below its root, and a scratch copy of it sits below ``/tmp/...``) is removed too.  A
    directory is opened (``O_NOFOLLOW``) only where the path relative to the nearest open one
    would pass 2048 bytes, and only while its subtree is removed: the descriptors held at once
    are the tree's path length / 2048, whatever its depth or width."""
    try:
        if os.path.islink(path) or not os.path.isdir(path):
            os.unlink(path)
            return
        root = os.open(path, _DIR_FLAGS)
    except OSError:
        return
    # A frame: [directory fd, path relative to it, that path needs an fd of its own, listed].
    stack: list[list[Any]] = [[root, ".", False, False]]
    opened: dict[int, tuple[int, str]] = {}  # an fd this walk opened -> (its frame's fd and path)
    while stack:
        frame = stack[-1]
        fd, rel, needs_fd, listed = frame
        if listed:  # what is below it is gone (or stays): remove it
            stack.pop()
            if rel == ".":  # a directory this walk opened: close it, then remove it from its parent
                os.close(fd)
                if fd == root:
                    with contextlib.suppress(OSError):
                        os.rmdir(path)
                    continue
                fd, rel = opened.pop(fd)
            with contextlib.suppress(OSError):
                os.rmdir(rel, dir_fd=fd)
            continue
        frame[3] = True
        try:
            if needs_fd:
                sub = os.open(rel, _DIR_FLAGS, dir_fd=fd)
                opened[sub] = (fd, rel)
                frame[0], frame[1] = fd, rel = sub, "."
            listing = fd if rel == "." else os.open(rel, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            continue
        try:
            with os.scandir(listing) as it:
                entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        except OSError:
            entries = []
        finally:
            if listing != fd:
                os.close(listing)
        for name, is_dir in entries:
            child = name if rel == "." else os.path.join(rel, name)
            if is_dir:
                stack.append([fd, child, len(os.fsencode(child)) > _ANCHOR, False])
            else:
                with contextlib.suppress(OSError):
                    os.unlink(child, dir_fd=fd)


@contextlib.contextmanager
def temp_dir(prefix: str, dir: str | os.PathLike[str] | None = None) -> Iterator[str]:
    """``tempfile.TemporaryDirectory(prefix=prefix, dir=dir)`` whose cleanup (:func:`rmtree`)
    removes a tree of any depth.  Yields the directory's path."""
    path = tempfile.mkdtemp(prefix=prefix, dir=dir)
    try:
        yield path
    finally:
        rmtree(path)
