"""Marked blocks of ``$GIT_COMMON_DIR/info/exclude`` that git ckpt owns.

Files git ckpt writes into a worktree that are not meant to be committed (hook files under a
relative ``core.hooksPath``, an agent's local settings) are untracked: every save would capture
them and a restore of a checkpoint saved before they existed would delete them.  Listed in a
block of ``info/exclude`` (git's per-repository ignore file, never committed), they are ignored:
no save holds them, no restore touches them, ``git status`` does not list them.  Each owner has
its own block, between a begin and an end line; the rest of the file is never touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .gitcore import Repo


def pattern(rel: str) -> str:
    """``rel`` (a ``/``-separated path relative to a worktree root) as a gitignore pattern
    matching exactly it, anchored at the root: glob characters and a trailing space escaped.
    Raises :class:`ValueError` for a path holding a control character (a newline would end the
    pattern and start another rule)."""
    if any(ord(c) < 32 or ord(c) == 127 for c in rel):
        raise ValueError(f"{rel!r} holds a control character")
    out = "".join("\\" + c if c in "*?[\\" else c for c in rel)  # after "/": no leading # or ! to escape
    if out.endswith(" "):
        out = out[:-1] + "\\ "
    return "/" + out


EXCLUDE_MAX = 8 << 20  # bytes of info/exclude read


def read(repo: Repo) -> str:
    """The text of ``info/exclude`` ("" when absent), read as the user's file: a symlink is
    followed (a shared exclude file is a common set-up), but what it reaches must be a regular
    file of at most :data:`EXCLUDE_MAX` bytes (no FIFO waited on).  Raises :class:`CkptError`
    (exit 1) naming the file otherwise.  Call it before any other write, so a command that
    cannot update its block writes nothing."""
    from .errors import CkptError
    from .gitcore import read_state

    path = repo.common_dir / "info" / "exclude"
    try:
        return read_state(path, cap=EXCLUDE_MAX, follow=True).decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return ""
    except (CkptError, OSError):
        raise CkptError(f"{path} is not a regular file of at most {EXCLUDE_MAX} bytes, so git ckpt cannot add its lines to it",
                        f"make {path} a regular file (or remove it), then run the command again") from None


def set_block(repo: Repo, begin: str, end: str, patterns: list[str]) -> list[str]:
    """Make the block of ``info/exclude`` between the lines ``begin`` and ``end`` hold exactly
    ``patterns`` (in order), appended at the end when absent; ``patterns`` empty removes the
    block.  The file is rewritten atomically and only when it changes (with no block and none
    wanted it stays byte for byte); a symlink is written through (the file it names is
    replaced), so a shared exclude file stays shared.  Raises as :func:`read`.  Returns
    ``patterns``."""
    import os

    from .store import atomic_write

    path = repo.common_dir / "info" / "exclude"
    text = read(repo)
    lines = text.split("\n")  # git's lines: str.splitlines would also split (and rewrite) a user's line at \x85 or \u2028
    if lines[-1] == "":
        lines.pop()
    if begin in lines and end in lines[lines.index(begin):]:
        start = lines.index(begin)
        stop = lines.index(end, start)
        if lines[start + 1:stop] == patterns:
            return patterns  # already so
        lines = lines[:start] + lines[stop + 1:]
    elif not patterns:
        return patterns
    if patterns:
        lines += [begin, *patterns, end]
    new = "\n".join(lines) + ("\n" if lines else "")
    if new != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(os.path.realpath(path), new.encode("utf-8", "surrogateescape"))
    return patterns
