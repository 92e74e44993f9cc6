"""``git ckpt attempt -- CMD``: the loop this tool exists for.

1. save a checkpoint of the worktree as it is (or reuse the latest when nothing changed);
2. run CMD (an agent, a script, an edit) with the terminal attached;
3. save the result as a checkpoint (nothing is lost, whatever happens next);
4. verify that checkpoint in place;
5. on pass it is promoted; on failure the worktree goes back to the checkpoint from step 1
   (``[attempt] on_failure = "restore"``, the default) or stays as CMD left it (``"keep"``),
   and the broken state stays available as a checkpoint.  With no required verifier, CMD's
   own exit is the judge: a CMD that exits non-zero or is killed fails the attempt (step 4 is
   skipped) instead of being promoted on the empty requirement.

Every step is reported through ``say`` as a terminal log line and recorded in the ledger
(``save``, ``verify``, ``promote``, ``restore`` events, and one ``attempt`` event at the end).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import ledger, store
from . import trust
from .restore import restore
from .snapshot import SaveResult, capture, save
from . import config
from .config import Config
from .errors import CkptError, UsageError
from .gitcore import Repo
from .promote import promoted_line
from .verify import Report, Sink, describe, verify


@dataclass
class AttemptResult:
    """What an attempt did: ``before``/``after`` checkpoint ids, CMD's ``cmd_exit``, the verify
    ``report``, the ``outcome`` (``promoted``, ``restored``, ``kept``, ``interrupted``), whether
    the worktree is ``clean`` (equal to the checkpoint it should be at), and ``exit_code``."""

    task: str
    command: list[str]
    before: str
    after: str | None = None
    cmd_exit: int | None = None
    report: Report | None = None
    outcome: str = ""
    restored_to: str | None = None
    clean: bool = False
    exit_code: int = 0
    log: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # of its saves and its restore, in order

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "task": self.task, "command": self.command, "before": self.before, "after": self.after,
            "cmd_exit": self.cmd_exit, "verify": self.report.to_json() if self.report else None,
            "outcome": self.outcome, "restored_to": self.restored_to, "clean": self.clean,
            "exit_code": self.exit_code, "log": self.log, "warnings": self.warnings,
        }


def _save(repo: Repo, cfg: Config, task: str, message: str) -> SaveResult:
    return save(repo, cfg, task=task, message=message)


def _matches(repo: Repo, cfg: Config, cp_id: str) -> bool:
    cp = store.resolve(repo, cp_id)
    return capture(repo, cfg).state() == cp.manifest.state


def attempt(
    repo: Repo,
    cfg: Config,
    command: list[str],
    *,
    task: str,
    message: str = "",
    cwd: str | Path | None = None,
    say: Callable[[str], None] = lambda s: None,
    warn: Callable[[str], None] = lambda s: None,
    sink: Sink = lambda b: None,
    cmd_stdout: int | None = None,
) -> AttemptResult:
    """Run one attempt (module docstring).  ``cwd`` is where CMD runs (default: the worktree
    root); ``cmd_stdout`` redirects CMD's stdout (a file descriptor; None: inherited).  ``say``
    gets each log line, ``warn`` each warning of its saves and restore (also kept in
    :attr:`AttemptResult.warnings`): a secret file left out is said whichever save meets it first.

    Raises :class:`UntrustedError` before anything runs when the verifiers are not trusted,
    :class:`UsageError` for an empty or unrunnable CMD.  Ctrl-C while CMD runs saves what CMD
    left as a checkpoint and re-raises :class:`KeyboardInterrupt`.
    """

    if not command:
        raise UsageError("attempt needs a command after --", "git ckpt attempt -- ./fix.sh")
    trust.check(repo, cfg)
    exe = command[0]
    found = os.access(exe, os.X_OK) if os.sep in exe else shutil.which(exe) is not None
    if not found:
        raise UsageError(f"cannot run {exe!r}: command not found or not executable", "check the command after --")
    shown = shlex.join(command)
    res = AttemptResult(task, list(command), before="")

    def log(line: str) -> None:
        res.log.append(line)
        say(line)

    def warned(warnings: list[str]) -> None:
        for w in warnings:
            res.warnings.append(w)
            warn(w)

    pre = _save(repo, cfg, task, f"before attempt: {message or shown}")
    res.before = pre.id
    warned(pre.warnings)
    log(f"checkpoint saved: {pre.id}" if pre.created else f"checkpoint: {pre.id} (no changes since it was saved)")
    interrupted = False
    try:
        proc = subprocess.Popen(command, cwd=cwd or repo.workdir, stdout=cmd_stdout)
    except OSError as exc:
        raise UsageError(f"cannot run {command[0]!r}: {exc.strerror}", "check the command after --") from None
    try:
        res.cmd_exit = proc.wait()
    except KeyboardInterrupt:
        interrupted = True
        try:
            res.cmd_exit = proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            res.cmd_exit = proc.wait()
    log(f"attempt: {shown} exited {res.cmd_exit}" if res.cmd_exit >= 0 else f"attempt: {shown} was killed by signal {-res.cmd_exit}")
    post = _save(repo, cfg, task, message or f"attempt: {shown}")
    res.after = post.id
    warned(post.warnings)
    log(f"checkpoint saved: {post.id}" if post.created else
        f"checkpoint: {post.id} ({shown} changed nothing)" if post.id == pre.id else
        f"checkpoint: {post.id} ({shown} left the worktree as {post.id} holds it already)")
    if interrupted:
        res.outcome = "interrupted"
        _event(repo, res)
        raise KeyboardInterrupt
    if not any(v.required for v in cfg.verifier) and res.cmd_exit != 0:
        # no required verifier judges the result: CMD's own failure is the only evidence that
        # counts, and the empty requirement must not promote what a crashed or failing CMD left
        none = "no verifiers configured" if not cfg.verifier else "no verifier is required"
        log(f"{none} and {shown} failed: not promoted on the empty requirement")
        res.exit_code = 1
        _failed(repo, cfg, res, pre.id, post.id, shown, log, warned, changed_nothing=(
            f"{shown} changed nothing: {post.id} is as it was before the command; nothing to restore"))
        return res
    after_cp = store.resolve(repo, post.id)
    try:
        report = verify(repo, cfg, after_cp, sink=sink, on_outcome=lambda o: log(describe(o)))
    except KeyboardInterrupt:
        res.outcome = "interrupted"
        _event(repo, res)
        raise
    res.report = report
    if report.promoted:
        if report.empty_requirement:
            log("no verifiers configured: promoted on the empty requirement")
        log(promoted_line(post.id, already=report.already_promoted, earned=report.earned))
        res.outcome = "promoted"
        res.exit_code = 0
        res.clean = _matches(repo, cfg, post.id)
        log("workspace status: clean" if res.clean else f"workspace status: changed since {post.id}")
        _event(repo, res)
        return res
    res.exit_code = report.exit_code or 1
    _failed(repo, cfg, res, pre.id, post.id, shown, log, warned, changed_nothing=(
        f"{shown} changed nothing: {post.id} failed as it was before the command; nothing to restore"))
    return res


def _failed(repo: Repo, cfg: Config, res: AttemptResult, pre: str, post: str, shown: str,
            log: Callable[[str], None], warned: Callable[[list[str]], None], *, changed_nothing: str) -> None:
    """The end of a failed attempt: restore ``pre`` (``on_failure = "restore"``) or keep ``post``
    in the worktree, log the next step and write the ``attempt`` event.  ``changed_nothing`` is
    the line logged when CMD changed nothing (``post == pre``: nothing to restore)."""
    if post == pre:  # the command changed nothing: nothing to restore
        res.outcome = "kept"
        res.clean = _matches(repo, cfg, post)
        log(changed_nothing)
        log("workspace status: clean" if res.clean else f"workspace status: changed since {post}")
        log("next: fix it and run git ckpt verify, or go back to an earlier checkpoint (git ckpt list)")
    elif cfg.attempt.on_failure == "restore":
        log(f"restoring {pre}")
        warned(restore(repo, cfg, store.resolve(repo, pre), task=res.task).warnings)
        res.outcome = "restored"
        res.restored_to = pre
        res.clean = _matches(repo, cfg, pre)
        log("workspace status: clean" if res.clean else f"workspace status: differs from {pre}")
        log(f"next: the failed state is kept as {post}; compare with git ckpt diff {pre} {post}, "
            f"or bring it back with git ckpt restore {post}")
    else:
        res.outcome = "kept"
        res.clean = _matches(repo, cfg, post)
        log(f"keeping the failed state {post} ({config.setting('attempt', 'on_failure', 'keep')})")
        log("workspace status: clean" if res.clean else f"workspace status: changed since {post}")
        log(f"next: fix and run git ckpt verify, or go back with git ckpt restore {pre}")
    _event(repo, res)


def _event(repo: Repo, res: AttemptResult) -> None:
    try:
        ledger.append(repo, res.task, "attempt", {
            "command": res.command, "before": res.before, "after": res.after, "cmd_exit": res.cmd_exit,
            "outcome": res.outcome, "restored_to": res.restored_to,
            "verifiers": {o.name: o.status for o in res.report.outcomes} if res.report else {},
        })
    except CkptError:
        pass
