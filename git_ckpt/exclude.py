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


#: Appended to a block's end line when git ckpt added a line break to end the file's last line
#: before the block; removing the block then removes that break too (the file is as it was).
ADDED_BREAK = " (and the line break before it)"
BLOCK_BEGIN, BLOCK_END = "# >>> git-ckpt ", "# <<< git-ckpt "  # how every owner's begin and end lines start


def set_block(repo: Repo, begin: str, end: str, patterns: list[str]) -> list[str]:
    """Make the block of ``info/exclude`` between the lines ``begin`` and ``end`` hold exactly
    ``patterns`` (in order), appended at the end when absent; ``patterns`` empty removes the
    block.  The file is rewritten atomically and only when it changes; everything outside the
    block stays byte for byte, including whether the file ends in a line break: a block
    appended after a last line without one adds the break and marks its end line
    (:data:`ADDED_BREAK`), and its removal takes the break away again.  A symlink is written
    through (the file it names is replaced), so a shared exclude file stays shared.  Raises as
    :func:`read`.  Returns ``patterns``."""
    import os

    from .store import atomic_write

    path = repo.common_dir / "info" / "exclude"
    text = read(repo)
    lines = text.split("\n")  # git's lines: str.splitlines would also split (and rewrite) a user's line at \x85 or \u2028
    final_break = lines[-1] == ""
    if final_break:
        lines.pop()
    stop = next((i for i in range(lines.index(begin), len(lines)) if lines[i] in (end, end + ADDED_BREAK)), None) \
        if begin in lines else None
    if stop is not None:
        start = lines.index(begin)
        end_line = lines[stop]
        if lines[start + 1:stop] == patterns:
            return patterns  # already so
        after = lines[stop + 1:]
        if not patterns and end_line.endswith(ADDED_BREAK):
            if not after:
                final_break = False  # the block was last, after a line git ckpt ended: as before it came
            elif after[0].startswith(BLOCK_BEGIN) and after[-1].startswith(BLOCK_END) and not after[-1].endswith(ADDED_BREAK):
                after[-1] += ADDED_BREAK  # only other blocks follow: the last of them now owns the break
        lines = lines[:start] + ([begin, *patterns, end_line] if patterns else []) + after
    elif not patterns:
        return patterns
    else:
        lines += [begin, *patterns, end if final_break or not lines else end + ADDED_BREAK]
        final_break = True
    new = "\n".join(lines) + ("\n" if lines and final_break else "")
    if new != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(os.path.realpath(path), new.encode("utf-8", "surrogateescape"))
    return patterns
