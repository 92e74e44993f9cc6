"""Progress on stderr for long operations, as git shows it (``Checking out files: 45% (9/20)``).

Off unless the CLI turned it on (:func:`enable`): only on a terminal, never under ``--json``,
never in the commands hooks run (``gate``, ``verify-commit``, ``agent hook`` never enable it).
A meter stays silent for its first second (``GIT_CKPT_PROGRESS_DELAY`` seconds), so short
operations print nothing; ``GIT_CKPT_PROGRESS=0`` turns progress off altogether.
"""

from __future__ import annotations

import os
import sys
import time

_on = False


def enable(on: bool) -> None:
    """Turn progress on for this process when ``on``, stderr is a terminal and
    ``GIT_CKPT_PROGRESS`` is not ``0``."""
    global _on
    _on = bool(on) and os.environ.get("GIT_CKPT_PROGRESS", "") != "0" and _isatty()


def _isatty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def active() -> bool:
    """Whether meters print (a caller may then split work into batches to report on)."""
    return _on


class Meter:
    """``title: 45% (9000/20000)`` rewritten in place; ``, done.`` and a newline at :meth:`done`
    when anything was shown."""

    def __init__(self, title: str, total: int) -> None:
        self.title = title
        self.total = total
        self.n = 0
        self.shown = False
        self._t0 = time.monotonic()
        self._last = 0.0
        try:
            self._delay = float(os.environ.get("GIT_CKPT_PROGRESS_DELAY", "1"))
        except ValueError:
            self._delay = 1.0

    def _line(self) -> str:
        pct = f"{100 * self.n // self.total}% " if self.total else ""
        return f"{self.title}: {pct}({self.n}/{self.total})"

    def update(self, n: int) -> None:
        """Set the count done to ``n``; repaint at most ten times a second after the delay."""
        self.n = n
        if not _on:
            return
        now = time.monotonic()
        if now - self._t0 < self._delay or (self.shown and now - self._last < 0.1 and n < self.total):
            return
        self._last = now
        self.shown = True
        sys.stderr.write("\r" + self._line())
        sys.stderr.flush()

    def advance(self, k: int = 1) -> None:
        """Add ``k`` to the count."""
        self.update(self.n + k)

    def done(self) -> None:
        """Finish the line (only when something was shown)."""
        if _on and not self.shown and time.monotonic() - self._t0 >= self._delay:
            self.shown = True
        if self.shown:
            self.n = self.total
            sys.stderr.write("\r" + self._line() + ", done.\n")
            sys.stderr.flush()


def meter(title: str, total: int) -> Meter:
    """A :class:`Meter` for ``total`` steps of ``title``."""
    return Meter(title, total)
