"""The man page: shipped inside the package, put where ``man`` looks, shown by ``git ckpt help``.

``git ckpt --help`` is turned by git itself into ``git help ckpt``, which runs ``man git-ckpt``;
man-db finds pages in ``PREFIX/share/man`` for every ``PREFIX/bin`` on ``PATH``.  A plain install
puts the page there (a wheel data file); an editable install does not install data files, so
:func:`ensure_installed` copies the packaged page there the first time any ``git ckpt`` command
runs from that prefix.  ``git ckpt help`` never depends on that: when ``man`` cannot find the page
it renders the packaged file with ``man -l``.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator

PAGE = "git-ckpt.1"


@contextmanager
def page_file() -> Iterator[str]:
    """The packaged man page as a file on disk (``git_ckpt.man/git-ckpt.1``)."""
    from importlib import resources

    with resources.as_file(resources.files("git_ckpt.man").joinpath(PAGE)) as path:
        yield str(path)


def man_dir_for(script: str) -> str | None:
    """``PREFIX/share/man/man1`` for a console script at ``PREFIX/bin/git-ckpt`` (the directory
    man-db searches when ``PREFIX/bin`` is on ``PATH``), or None for any other layout."""
    bindir = os.path.dirname(os.path.abspath(script))
    if os.path.basename(script) != "git-ckpt" or os.path.basename(bindir) != "bin":
        return None
    return os.path.join(os.path.dirname(bindir), "share", "man", "man1")


def ensure_installed(script: str) -> str | None:
    """Copy the packaged page to :func:`man_dir_for` ``(script)`` when it is missing there.
    Best effort: a read-only prefix is left alone.  Costs one ``stat`` when the page is already
    in place (a plain install or upgrade writes it itself).  Returns the path written, or None."""
    target_dir = man_dir_for(script)
    if target_dir is None:
        return None
    target = os.path.join(target_dir, PAGE)
    if os.path.exists(target):
        return None
    import shutil

    try:
        with page_file() as src:
            os.makedirs(target_dir, exist_ok=True)
            tmp = f"{target}.{os.getpid()}.tmp"
            shutil.copyfile(src, tmp)
            os.replace(tmp, target)
            return target
    except (OSError, ModuleNotFoundError):
        return None


def show() -> int:
    """Open the man page like ``git help ckpt``: ``man git-ckpt`` when man finds it, else
    ``man -l`` on the packaged file.  Returns man's exit code, or 127 when there is no ``man``."""
    import shutil
    import subprocess

    man = shutil.which("man")
    if man is None:
        return 127
    found = subprocess.run([man, "-w", "git-ckpt"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    if found:
        return subprocess.run([man, "git-ckpt"]).returncode
    with page_file() as path:
        return subprocess.run([man, "-l", path]).returncode


def text() -> str:
    """The page's source (roff), for when no ``man`` program exists."""
    with page_file() as path, open(path, encoding="utf-8") as fh:
        return fh.read()
