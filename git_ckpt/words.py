"""One vocabulary for what the user reads: the word for a verifier result, a change summary, a count.

Every command that prints a verifier result (``verify``, ``list``, ``show``, ``log``,
``report``) goes through :func:`result_word`, so a verifier that could not start reads
``could not run`` everywhere, the way ``git bisect run`` names exit 126/127.
"""

from __future__ import annotations

from typing import Any


def result_word(status: Any, exit_code: Any = None) -> str:
    """The word for a stored result: ``passed``, ``failed``, ``changed-files``, ``interrupted``,
    ``could not run`` (status ``error`` with exit 126/127, or no exit code), ``undecided``
    (status ``error`` with any other exit code, 125 in particular).  Anything else is returned
    as text (it was written by someone else: callers escape it for display)."""
    word = str(status) if status is not None else "?"
    if word != "error":
        return word
    try:
        code = int(exit_code)
    except (TypeError, ValueError):
        return "could not run"
    return "could not run" if code in (126, 127) or code < 0 else "undecided"


def change_summary(changes: list[tuple[str, str]], *, limit: int = 3) -> str:
    """A one-line summary of ``(letter, path)`` changes, for a checkpoint saved without ``-m``:
    ``M calc.py, A tests/test_calc.py (+2 more)``, or ``no changes`` when empty."""
    if not changes:
        return "no changes"
    shown = ", ".join(f"{letter} {path}" for letter, path in changes[:limit])
    more = len(changes) - limit
    return shown + (f" (+{more} more)" if more > 0 else "")


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun`` in the right number: ``1 file``, ``0 files``, ``2 files``;
    ``plural`` for a noun that does not just take an ``s`` (``counted(2, "entry", "entries")``).
    Human output only: ``--json`` keeps its numbers."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"
