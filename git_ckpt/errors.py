"""One exception tree and the exit codes the CLI maps it to.

Every failure a user can cause (bad input, a repository in the wrong state, corrupt data) is a
:class:`CkptError` subclass carrying a one-line ``message``, an optional ``hint`` (the one command
or step that fixes it) and a documented ``exit_code``.  The CLI prints ``error: …`` / ``hint: …``
on stderr and exits with that code; anything else is a bug and exits with :data:`EXIT_INTERNAL`.

Exit codes (also listed in ``man git-ckpt``):

====  ==========================================================================
0     success (also ``git ckpt`` or a group alone, which prints the group's help)
1     a check said no: a verifier failed, the gate refused, ``check``/``log --verify`` found damage
2     usage error (bad option or argument), nothing to act on included (``undo`` with no restore to
      undo, ``restore --continue`` with none interrupted: an error of the request, like ``git stash
      pop`` with no stash)
3     not a usable repository (outside a repository, bare repository, unsupported format)
4     unknown checkpoint, task or verifier; a revision the user named that is not a checkpoint:
      only for an id or name the user typed (evidence specs included), never for "nothing to do"
5     the repository is busy or mid-operation (merge/rebase in progress, ``index.lock`` held,
      an interrupted restore, a lock another ``git ckpt`` holds)
6     malformed ``.ckpt.toml`` (or one that is no regular file of at most 1 MiB), ``git config
      ckpt.*``, or the trust store
7     corrupt checkpoint data (manifest, overlay tar, note, ledger; a ref under refs/ckpt/ naming
      a commit git ckpt did not make); a state file under ``$GIT_DIR/ckpt/`` that is no regular
      file (a symlink, directory, FIFO) or is over its size cap
8     an I/O failure writing files or objects (disk full, read-only file system)
9     the ``.ckpt.toml`` verifiers are not trusted (see ``git ckpt trust``)
10    a remote operation failed or was refused
70    internal error (a bug: please report it with the log file named)
130   interrupted (Ctrl-C)
====  ==========================================================================
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_REPO = 3
EXIT_NOT_FOUND = 4
EXIT_BUSY = 5
EXIT_CONFIG = 6
EXIT_CORRUPT = 7
EXIT_IO = 8
EXIT_UNTRUSTED = 9
EXIT_REMOTE = 10
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


class CkptError(Exception):
    """Base of every expected failure: ``message`` (one line), ``hint`` (or None), ``exit_code``;
    ``details``: more the ``--json`` error envelope carries (its ``details``), such as a refused
    push's findings, which the terminal shows on lines of their own."""

    exit_code = EXIT_FAILED
    code = "failed"
    details: dict[str, object] | None = None

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = " ".join(message.split("\n"))
        self.hint = hint


class UsageError(CkptError):
    """The arguments are wrong (exit 2)."""

    exit_code = EXIT_USAGE
    code = "usage"


class RepoError(CkptError):
    """Not a repository, a bare repository, or an unsupported repository format (exit 3)."""

    exit_code = EXIT_REPO
    code = "repository"


class NotFoundError(CkptError):
    """An unknown checkpoint, task or verifier the user named (exit 4); nothing to act on is a
    :class:`UsageError`."""

    exit_code = EXIT_NOT_FOUND
    code = "not-found"


class BusyError(CkptError):
    """The repository is mid-operation or locked (exit 5)."""

    exit_code = EXIT_BUSY
    code = "busy"


class ConfigError(CkptError):
    """Malformed ``.ckpt.toml``, ``ckpt.*`` git config or trust store (exit 6)."""

    exit_code = EXIT_CONFIG
    code = "config"


class CorruptError(CkptError):
    """Checkpoint data that cannot be trusted: manifest, tar, note or ledger, or a state file under
    ``$GIT_DIR/ckpt/`` that is no regular file or too large (exit 7)."""

    exit_code = EXIT_CORRUPT
    code = "corrupt"


class IOFailure(CkptError):
    """Writing files or objects failed: disk full, read-only file system (exit 8)."""

    exit_code = EXIT_IO
    code = "io"


class UntrustedError(CkptError):
    """Verifier commands from a ``.ckpt.toml`` the user has not trusted (exit 9)."""

    exit_code = EXIT_UNTRUSTED
    code = "untrusted"


class RemoteError(CkptError):
    """A push or fetch failed or was refused (exit 10)."""

    exit_code = EXIT_REMOTE
    code = "remote"


class CheckFailed(CkptError):
    """A check said no (exit 1): a verifier failed, the gate refused, damage was found."""

    exit_code = EXIT_FAILED
    code = "check-failed"
