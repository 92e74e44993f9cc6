"""Directory walks that never recurse in Python.

A worktree, a checkpoint's tree or a scratch copy of one may nest directories deeper than
Python's recursion limit (git works below the worktree's root, so 1000 levels of ``a/`` are a
valid tree), and in Python 3.11 ``os.walk``, ``os.makedirs``, ``shutil.rmtree`` and
``tempfile.TemporaryDirectory``'s cleanup each recurse once per level.  These are their
replacements for every directory whose depth git ckpt does not choose: each keeps its own stack.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
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


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def rmtree(path: AnyStr) -> None:
    """``shutil.rmtree(path, ignore_errors=True)`` without recursion, at any depth and length:
    never follows a symlink (it is removed, not what it points to); what cannot be removed
    stays.  Raises nothing.

    Every directory is opened from its parent's descriptor with ``O_NOFOLLOW`` and every entry
    removed relative to it (``dir_fd``), as ``shutil.rmtree``'s safe variant does, so a path
    longer than ``PATH_MAX`` (a checkpoint may hold a file 4079 bytes below its root, and a
    scratch copy of it sits below ``/tmp/...``) is removed too, and a directory swapped for a
    symlink while the walk runs (by a verifier's leftover process in a scratch worktree) is
    removed as a link, never entered.  The walk holds one descriptor per level of the path it
    is in (raising the soft ``RLIMIT_NOFILE`` to the hard one for a deeper tree); a subtree
    deeper than that stays."""
    try:
        if os.path.islink(path) or not os.path.isdir(path):
            os.unlink(path)
            return
        root = os.open(path, _DIR_FLAGS)
    except OSError:
        return
    # the directories of the path the walk is in: (fd, entries not yet removed, name in parent)
    stack: list[tuple[int, list[tuple[str, bool]], str | None]] = [(root, _entries(root), None)]
    while stack:
        fd, entries, in_parent = stack[-1]
        if not entries:  # emptied (or what stays, stays): close it and remove it from its parent
            stack.pop()
            os.close(fd)
            with contextlib.suppress(OSError):
                if not stack:
                    os.rmdir(path)
                elif in_parent is not None:
                    try:
                        os.rmdir(in_parent, dir_fd=stack[-1][0])
                    except NotADirectoryError:  # swapped for a symlink or file meanwhile: that goes
                        os.unlink(in_parent, dir_fd=stack[-1][0])
            continue
        name, is_dir = entries.pop()
        if is_dir:
            sub = _open_dir(name, fd)
            if sub is not None:
                stack.append((sub, _entries(sub), name))
                continue
        with contextlib.suppress(OSError):  # a file, a symlink, or what replaced a directory
            os.unlink(name, dir_fd=fd)


def _entries(fd: int) -> list[tuple[str, bool]]:
    """The names in directory ``fd`` and whether each is a directory (not following symlinks)."""
    try:
        with os.scandir(fd) as it:
            return [(e.name, e.is_dir(follow_symlinks=False)) for e in it]
    except OSError:
        return []


def _open_dir(name: str, parent: int) -> int | None:
    """``name`` in directory ``parent`` opened as a directory, never through a symlink; None when
    it is no directory now (a symlink or file swapped in) or cannot be opened.  Out of
    descriptors, the soft limit is raised to the hard one once and the open tried again."""
    for attempt in (1, 2):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError as exc:
            if exc.errno != errno.EMFILE or attempt == 2 or not _more_descriptors():
                return None
    return None


def _more_descriptors() -> bool:
    """Raise this process's soft ``RLIMIT_NOFILE`` to its hard limit; whether it grew."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft >= hard:
        return False
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else soft * 4, hard))
    except (ValueError, OSError):
        return False
    return True


@contextlib.contextmanager
def temp_dir(prefix: str, dir: str | os.PathLike[str] | None = None) -> Iterator[str]:
    """``tempfile.TemporaryDirectory(prefix=prefix, dir=dir)`` whose cleanup (:func:`rmtree`)
    removes a tree of any depth.  Yields the directory's path."""
    path = tempfile.mkdtemp(prefix=prefix, dir=dir)
    try:
        yield path
    finally:
        rmtree(path)
