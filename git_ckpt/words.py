"""One vocabulary for what the user reads: the word for a verifier result, a change summary, a count.

Every command that prints a verifier result (``verify``, ``list``, ``show``, ``log``,
``report``) goes through :func:`result_word`, so a verifier that could not start reads
``could not run`` everywhere, the way ``git bisect run`` names exit 126/127.
"""

from __future__ import annotations

from collections.abc import Iterable
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


def listed(words: list[str], last: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c`` (``last`` "or": ``a, b or c``): a non-empty list of
    words as an English phrase, without the serial comma."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" {last} " + words[-1]


def short_base(oid: str | None) -> str:
    """A commit as the human output names it: its first 12 hex digits, or ``an unborn branch``
    for None (a HEAD with no commit yet), never that phrase cut to 12 characters."""
    return oid[:12] if oid else "an unborn branch"


def did_you_mean(possibilities: list[str]) -> str:
    """``did you mean 'save'?`` / ``did you mean 'restore' or 'report'?``: the one wording of
    every suggestion for a mistyped name (commands, options, choices, verifiers), closest first;
    it opens the hint line, as the suggestions for a mistyped task or checkpoint do."""
    return "did you mean " + listed([repr(p) for p in possibilities], "or") + "?"


def _edits(a: str, b: str) -> int:
    """How far the typed ``a`` is from the name ``b``, weighted as git's ``levenshtein()`` is
    for ``help.autocorrect``: a swap of two neighbours costs 0, a letter left out (to insert) 1,
    a wrong letter 2, an extra letter (to delete) 3 (optimal string alignment)."""
    swap, ins, sub, dele = 0, 1, 2, 3
    prev2: list[int] = []
    prev = [j * ins for j in range(len(b) + 1)]
    for i, ca in enumerate(a, 1):
        row = [i * dele] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(prev[j] + dele, row[j - 1] + ins, prev[j - 1] + (sub if ca != cb else 0))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb and ca != cb:
                row[j] = min(row[j], prev2[j - 2] + swap)
        prev2, prev = prev, row
    return prev[-1]


def suggestion(name: str, known: Iterable[str]) -> str | None:
    """:func:`did_you_mean` of the (at most three) names in ``known`` close to ``name``, closest
    first: ``difflib``'s ratio of at least 0.6, or :func:`_edits` of at most 2 (neighbours
    swapped, a letter or two left out, one wrong letter: ``tset`` for ``tests``), or None."""
    import difflib

    names = sorted(set(known))
    scored = sorted((d, n) for n in names
                    if (d := _edits(name, n)) <= 2 or difflib.SequenceMatcher(None, name, n).ratio() >= 0.6)
    close = [n for _d, n in scored[:3]]
    return did_you_mean(close) if close else None

