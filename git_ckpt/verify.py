"""Run verifiers on a checkpoint and record the evidence (``git ckpt verify``, DESIGN behaviour 4).

For each configured verifier:

* a passing result for identical content (checkpoint tree + overlay digest) and an identical
  definition (:func:`definition_hash`: command, environment, cwd) is reused and labelled as such,
  unless ``rerun``;
* otherwise the command runs (an argv list, or a string run by ``/bin/sh -c``) in its own process
  group, with its output streamed to the terminal and captured in full as a blob; a timeout kills
  the whole group; Ctrl-C kills it, records ``interrupted`` and re-raises;
* a verifier that changes files the checkpoint holds fails with ``changed-files``;
* one JSON result line is appended to the checkpoint's note (``refs/notes/ckpt``,
  compare-and-swap) and one ``verify`` event to the ledger naming that line (``result``: its
  :func:`result_id`).

Only lines a local ``verify`` event names are *evidence* (:func:`git_ckpt.evidence.local_lines`): notes merge
every teammate's lines on ``fetch``, so a line someone else wrote (or forged) is shown but never
reused, never promotes, and never satisfies the gate or ``verify-commit``.  A fetched checkpoint
(``REMOTE:T/N``) can be verified: its results go to the note and to the *current* task's
ledger, and it is never promoted (promotion is for this repository's own checkpoints).

Exit statuses follow ``git bisect run``: 0 passed, 1–124 failed, 125 undecided, 126/127 could
not run; a verifier killed by signal S counts as failed with 128+S.

In place (the default) the worktree must match the checkpoint; ``isolated`` materialises the
checkpoint (overlay and raw bytes included) in a temporary linked worktree and removes it after.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from . import fsutil, ledger, notes, store, trust
from . import overlay
from . import promote as promotion
from .config import Config, VerifierConfig
from .evidence import (  # the evidence queries, re-exported for callers of this module
    definition_hash as definition_hash,
    evidence as evidence,
    evidence_tasks as evidence_tasks,
    fetched_states as fetched_states,
    latest_results as latest_results,
    local_lines as local_lines,
    mark_local as mark_local,
    overlay_digest as overlay_digest,
    result_id as result_id,
    shown_states as shown_states,
)
from .errors import CkptError, NotFoundError, UsageError
from .gitcore import _LOCATION_VARS, Repo, fault
from .model import encode, path_display
from .snapshot import capture
from .store import Checkpoint

LOG_CAP = 64 * 1024 * 1024
KILL_GRACE = 2.0

Sink = Callable[[bytes], None]

FAILING = ("failed", "timeout", "changed-files")


# ------------------------------------------------------------------------------ running one command


@dataclass
class RunResult:
    """How one command run ended: ``status`` (passed, failed, timeout, error, interrupted),
    ``exit_code`` (bisect convention), ``duration`` seconds, ``output`` bytes, ``started_at``."""

    status: str
    exit_code: int
    duration: float
    output: bytes
    started_at: str


def status_for(returncode: int) -> tuple[str, int]:
    """Map a process return code to ``(status, exit code)`` with the git-bisect convention."""
    if returncode < 0:
        return "failed", 128 - returncode
    if returncode == 0:
        return "passed", 0
    if returncode in (125, 126, 127):
        return "error", returncode
    return "failed", returncode


@contextlib.contextmanager
def _deferred_sigint(pending: list[int]) -> Iterator[None]:
    """Within the block, SIGINT appends to ``pending`` instead of raising KeyboardInterrupt, so a
    Ctrl-C cannot land between starting a child and being ready to kill it.  The handler is only
    swapped in the main thread (Python delivers signals there); elsewhere this does nothing.  A
    child started inside gets SIGINT's default disposition back at exec, as for any caught signal.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: pending.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _kill_group(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    """Send ``sig`` to the verifier's whole process group, then SIGKILL after a grace period."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)
    try:
        proc.wait(KILL_GRACE)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(KILL_GRACE)


def run_command(
    command: list[str] | str,
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    sink: Sink,
) -> RunResult:
    """Run ``command`` in a new session (its own process group), streaming stdout+stderr to
    ``sink`` while capturing it (up to 64 MiB), with stdin closed.

    A timeout or Ctrl-C kills the whole group (SIGTERM, then SIGKILL); Ctrl-C is reported as
    status ``interrupted`` (the caller re-raises).  A command that cannot be started is status
    ``error`` with exit code 127 (126 when it exists but is not executable).
    """
    started = ledger.now_iso()
    t0 = time.monotonic()
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    chunks: list[bytes] = []
    size = [0]

    def pump() -> None:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            with contextlib.suppress(Exception):
                sink(data)
            if size[0] < LOG_CAP:
                chunks.append(data[: LOG_CAP - size[0]])
                size[0] += len(data)

    # Ctrl-C between the start of the command and the wait below must still be recorded as
    # ``interrupted`` with the group killed: until the wait is reached, SIGINT only sets a flag.
    pending: list[int] = []
    with _deferred_sigint(pending):
        try:
            proc = subprocess.Popen(
                argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, start_new_session=True,
            )
        except OSError as exc:
            code = 126 if isinstance(exc, PermissionError) else 127
            msg = f"git ckpt: cannot run {argv[0]!r}: {exc.strerror}\n".encode()
            sink(msg)
            if pending:
                raise KeyboardInterrupt from None
            return RunResult("error", code, time.monotonic() - t0, msg, started)
        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
    status: str | None = None
    code = 0
    try:
        if pending:
            raise KeyboardInterrupt
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        status, code = "timeout", 124
    except KeyboardInterrupt:
        _kill_group(proc, signal.SIGINT)
        status, code = "interrupted", 130
    reader.join(KILL_GRACE)
    if reader.is_alive():
        # Something the verifier started still holds the pipe open: end the group.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        reader.join(KILL_GRACE)
    with contextlib.suppress(Exception):
        proc.stdout.close()  # type: ignore[union-attr]
    duration = time.monotonic() - t0
    output = b"".join(chunks)
    if size[0] > LOG_CAP:
        output += b"\n[git ckpt: log truncated at 64 MiB]\n"
    if status is None:
        status, code = status_for(proc.returncode)
    elif status == "timeout":
        note = f"\ngit ckpt: timed out after {timeout:g} s; killed the process group\n".encode()
        sink(note)
        output += note
    return RunResult(status, code, duration, output, started)


def verifier_env(cp: Checkpoint, v: VerifierConfig) -> dict[str, str]:
    """The environment a verifier runs with: ours without git's location variables (so ``git``
    inside a verifier finds the worktree it runs in), plus ``GIT_CKPT_CHECKPOINT``,
    ``GIT_CKPT_VERIFIER`` and the verifier's own ``env``."""
    env = {k: v2 for k, v2 in os.environ.items() if k not in _LOCATION_VARS}
    env["GIT_CKPT_CHECKPOINT"] = cp.id
    env["GIT_CKPT_VERIFIER"] = v.name
    env.update(v.env)
    return env


def verifier_cwd(root: Path, v: VerifierConfig) -> Path:
    """``root``/``v.cwd``; :class:`UsageError` when ``cwd`` leaves the worktree or is missing."""
    if not v.cwd:
        return root
    rel = os.path.normpath(v.cwd)
    if os.path.isabs(rel) or rel == ".." or rel.startswith("../"):
        raise UsageError(f"verifier {v.name}: cwd {v.cwd!r} must be a path inside the worktree")
    path = root / rel
    if not path.is_dir():
        raise UsageError(f"verifier {v.name}: cwd {v.cwd!r} is not a directory in the checkpoint")
    return path


# ------------------------------------------------------------------------------ results


@dataclass
class Outcome:
    """One verifier's result in this run: the note ``line`` written (or reused), plus how it was
    obtained (``reused_from`` a checkpoint id) and ``changed`` paths for ``changed-files``."""

    name: str
    status: str
    exit_code: int
    duration: float
    required: bool
    reused: bool
    log: str
    line: dict[str, Any]
    reused_from: str | None = None
    changed: list[str] = field(default_factory=list)
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "verifier": self.name, "status": self.status, "exit_code": self.exit_code,
            "duration": round(self.duration, 3), "required": self.required, "reused": self.reused,
            "reused_from": self.reused_from, "log": self.log, "changed": self.changed, "message": self.message,
        }


@dataclass
class Report:
    """What :func:`verify` did: ``outcomes`` in order, ``skipped`` verifier names (not run after
    one changed the worktree), the promotion (``promoted`` id or None, ``already_promoted``,
    ``empty_requirement``), what blocks promotion (``missing``), the bisect ``exit_code``, and
    whether the checkpoint was ``fetched`` (not this repository's: never promoted; ``hint`` then
    says how to make it one, :func:`git_ckpt.promote.make_local_hint`)."""

    checkpoint: str
    commit: str
    isolated: bool
    outcomes: list[Outcome] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    promoted: str | None = None
    already_promoted: bool = False
    earned: bool = False  # promoted by force before, by its verifiers now
    empty_requirement: bool = False
    missing: dict[str, str] = field(default_factory=dict)
    exit_code: int = 0
    fetched: bool = False
    newer_promoted: str | None = None  # a newer checkpoint of the task stays promoted
    hint: str | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "checkpoint": self.checkpoint, "commit": self.commit, "isolated": self.isolated,
            "results": [o.to_json() for o in self.outcomes], "skipped": self.skipped,
            "promoted": self.promoted, "already_promoted": self.already_promoted, "earned": self.earned,
            "empty_requirement": self.empty_requirement, "missing": self.missing, "exit_code": self.exit_code,
            "fetched": self.fetched, "newer_promoted": self.newer_promoted, "hint": self.hint,
        }


def result_line(cp: Checkpoint, v: VerifierConfig, *, status: str, exit_code: int, duration: float,
                started_at: str, host: str, log: str, reused: bool, recorded_at: str | None = None) -> dict[str, Any]:
    """The agreed note line (schema ``ckpt/1``) for a result of ``v`` on ``cp``; ``recorded_at``
    (default: now) is when it is appended, which decides which result is the latest
    (:func:`git_ckpt.notes.pick_latest`)."""
    return {
        "schema": "ckpt/1", "checkpoint": cp.id, "verifier": v.name, "definition": definition_hash(v),
        "tree": cp.tree, "overlay": overlay_digest(cp), "status": status, "exit_code": exit_code,
        "duration": round(duration, 3), "started_at": started_at, "recorded_at": recorded_at or ledger.now_iso(),
        "host": host, "log": log,
        "reused": reused, "required": v.required,
    }


def _encode_line(line: dict[str, Any]) -> bytes:
    return encode(line).rstrip(b"\n")


def ledger_task(repo: Repo, cp: Checkpoint) -> str:
    """The ledger a ``verify`` of ``cp`` is recorded in: its own task's for a checkpoint of this
    repository; the current task's for a fetched one (a fetch never creates a local ledger for
    someone else's task, whose ref a later push would collide on)."""
    return cp.manifest.task if store.is_local(repo, cp) else store.current_task(repo)


def find_reusable(repo: Repo, cp: Checkpoint, v: VerifierConfig, *, isolated: bool = False) -> tuple[dict[str, Any], str, bool] | None:
    """A passing result of ``v`` (same definition) on the same content, on ``cp`` itself, on
    another checkpoint of its task with the same tree, or on one its task's ledger records a
    verify of (:func:`_reusable_from_ledger`), that this repository's own ``verify``
    recorded (:func:`local_lines`; a fetched line is never reused; with ``isolated``, only a
    result of a ``verify --isolated`` run, so an isolated run never passes off an in-place
    verdict as its own).  Returns ``(line, checkpoint id, on cp itself)`` or None."""
    dh = definition_hash(v)
    ovl = overlay_digest(cp)
    tasks = evidence_tasks(repo, cp)
    own = latest_results(local_lines(repo, notes.read_lines(repo, cp.commit), tasks, cp.tree, ovl, isolated=isolated),
                         cp.tree, ovl).get((v.name, dh))
    if own is not None:
        return (own, cp.id, True) if own.get("status") == "passed" else None
    if not store.is_local(repo, cp):
        return None
    for n, oid in reversed(store.numbered(repo, cp.manifest.task)):
        if oid == cp.commit:
            continue
        try:
            if repo.tree_of(oid) != cp.tree:
                continue
        except (CkptError, KeyError, ValueError):
            continue
        ln = _passing_line(repo, oid, cp.manifest.task, cp.tree, ovl, (v.name, dh), isolated)
        if ln is not None:
            return ln, f"{cp.manifest.task}/{n}", False
    return _reusable_from_ledger(repo, cp, v.name, dh, ovl, isolated)


def _passing_line(repo: Repo, commit: str, task: str, tree: str, ovl: str, key: tuple[str, str],
                  isolated: bool) -> dict[str, Any] | None:
    """The latest of this repository's own lines (:func:`local_lines`, recorded by ``task``'s
    verify; with ``isolated``, of an isolated run) for ``key`` (verifier, definition hash) on
    content ``tree``/``ovl`` in the notes of checkpoint commit ``commit``, when it passed; None
    when it failed, there is none, or the notes cannot be read."""
    try:
        ln = latest_results(local_lines(repo, notes.read_lines(repo, commit), [task], tree, ovl, isolated=isolated),
                            tree, ovl).get(key)
    except (CkptError, KeyError, ValueError):
        return None
    return ln if ln is not None and ln.get("status") == "passed" else None


def _reusable_from_ledger(repo: Repo, cp: Checkpoint, name: str, dh: str, ovl: str,
                          isolated: bool) -> tuple[dict[str, Any], str, bool] | None:
    """A passing result of verifier ``name`` (definition ``dh``) that a ``verify`` event of
    ``cp``'s task records on another checkpoint with ``cp``'s tree (a fetched ``REMOTE:T/N`` or
    another task's checkpoint verified after restoring it, then saved as this one), looking
    back 500 events; the line itself is read from that checkpoint's notes and must be this
    repository's own (:func:`local_lines`)."""
    task = cp.manifest.task
    try:
        recent = list(ledger.iter_records(repo, task, newest=500))
    except CkptError:
        return None
    seen: set[str] = set()
    for rec in reversed(recent):
        d = rec.event.data
        commit = d.get("commit")
        if (rec.event.type != "verify" or d.get("tree") != cp.tree or d.get("verifier") != name or d.get("status") != "passed"
                or not isinstance(commit, str) or commit == cp.commit or commit in seen):
            continue
        seen.add(commit)
        ln = _passing_line(repo, commit, task, cp.tree, ovl, (name, dh), isolated)
        if ln is not None:
            return ln, str(d.get("id") or commit[:12]), False
    return None


# ------------------------------------------------------------------------------ isolation


def changed_paths(repo: Repo, cfg: Config, cp: Checkpoint) -> list[str]:
    """Paths the checkpoint holds whose content, mode or presence now differs in ``repo``'s
    worktree (new files do not count: a verifier may write caches and reports)."""
    snap = capture(repo, cfg)
    if snap.tree == cp.tree:
        return []
    return [path_display(a.path) for a, _b in repo.diff_trees(cp.tree, snap.tree) if a is not None]


def worktree_mismatch(repo: Repo, cfg: Config, cp: Checkpoint) -> list[str]:
    """Why the worktree is not the checkpoint's content: changed paths (all of them, with
    ``A``/``D``/``M``) and ``overlay`` when the overlay differs; [] when it matches."""
    snap = capture(repo, cfg)
    out = []
    if snap.tree != cp.tree:
        for c in repo.diff_trees(cp.tree, snap.tree):
            out.append(f"{c.status} {path_display(c.path)}")
    now_ovl = snap.overlay_info.digest if snap.overlay_info else ""
    if now_ovl != overlay_digest(cp):
        out.append("overlay files differ")
    return out


@contextlib.contextmanager
def materialise(repo: Repo, cfg: Config, cp: Checkpoint) -> Iterator[Path]:
    """A temporary linked worktree (``git worktree add --detach``) holding exactly the
    checkpoint: its tree checked out through the smudge side, the ``raw/`` bytes, and the overlay
    extracted by the strict extractor.  Removed (``git worktree remove --force``) afterwards."""
    # The directory name comes from tempfile alone: nothing in the (possibly fetched) manifest
    # names a path on this machine, and clean-up removes only the worktree this call created.
    tmp = Path(tempfile.mkdtemp(prefix="ckpt-verify-"))
    wt = tmp / "worktree"
    created = False
    try:
        repo.git("worktree", "add", "--detach", "--quiet", str(wt), cp.commit)
        created = True
        for path, e in cp.raw_entries().items():  # validated: safe paths of files of the tree
            overlay.write_entry(wt, overlay.Entry(path, "file", 0o755 if e.mode == 0o100755 else 0o644, 0, repo.read_blob(e.oid)))
        source = cp.overlay_source()
        if source is not None:
            overlay.extract(wt, source)
        yield wt
    finally:
        if created:
            repo.git("worktree", "remove", "--force", "--force", str(wt), check=False)
        fsutil.rmtree(str(tmp))
        repo.git("worktree", "prune", check=False)


# ------------------------------------------------------------------------------ verify


def select(cfg: Config, only: list[str] | None) -> list[VerifierConfig]:
    """The verifiers to run: all configured ones, or those named in ``only`` (in config order).
    :class:`NotFoundError` for a name that is not configured."""
    if not only:
        return list(cfg.verifier)
    names = {v.name for v in cfg.verifier}
    for n in only:
        if n not in names:
            from .words import suggestion

            known = ", ".join(sorted(names)) or "none"
            near = suggestion(n, names)
            raise NotFoundError(f"no verifier named {n!r} (configured: {known})",
                                f"{near} git ckpt trust --show lists the verifiers" if near else "git ckpt trust --show lists the verifiers")
    return [v for v in cfg.verifier if v.name in only]


def _record(repo: Repo, cp: Checkpoint, line: dict[str, Any], *, isolated: bool, reused_from: str | None = None) -> None:
    notes.append_line(repo, cp.commit, _encode_line(line))
    fault("verify.after-note")
    ledger.append(repo, ledger_task(repo, cp), "verify", {
        "id": cp.id, "commit": cp.commit, "verifier": line["verifier"], "status": line["status"],
        "exit_code": line["exit_code"], "duration": line["duration"], "reused": line["reused"],
        "reused_from": reused_from, "log": line["log"], "isolated": isolated, "tree": cp.tree,
        "result": result_id(line),
    })


def exit_code_for(outcomes: list[Outcome], explicit: bool) -> int:
    """The bisect-style exit code of a run: 1 if a counted verifier failed, else 127/126 if one
    could not run, else 125 if one was undecided, else 0.  Only required verifiers count,
    unless they were named explicitly (``explicit``)."""
    counted = [o for o in outcomes if o.required or explicit]
    if any(o.status in FAILING for o in counted):
        return 1
    errors = [o.exit_code for o in counted if o.status == "error"]
    for code in (127, 126, 125):
        if code in errors:
            return code
    if errors:
        return 125
    return 0


def verify(
    repo: Repo,
    cfg: Config,
    cp: Checkpoint,
    *,
    only: list[str] | None = None,
    isolated: bool = False,
    rerun: bool = False,
    promote: bool = True,
    sink: Sink = lambda b: None,
    on_outcome: Callable[[Outcome], None] = lambda o: None,
) -> Report:
    """Run the verifiers of ``cfg`` (or ``only`` those) on checkpoint ``cp`` and record results.

    ``sink`` receives the verifiers' output as it arrives; ``on_outcome`` is called after each
    verifier.  When every required verifier has a passing result on this content afterwards,
    and ``promote``, the checkpoint is promoted (:func:`git_ckpt.promote.promote`); with no
    verifiers configured it is promoted on the empty requirement.  A fetched checkpoint
    (``report.fetched``) is verified but never promoted.

    Raises :class:`UntrustedError` (nothing runs) for an untrusted ``.ckpt.toml``,
    :class:`NotFoundError` for an unknown ``only`` name, :class:`UsageError` when (in place) the
    worktree does not match the checkpoint, and re-raises :class:`KeyboardInterrupt` after
    recording ``interrupted``.
    """
    chosen = select(cfg, only)
    trust.check(repo, cfg)
    isolated = isolated or cfg.gate.isolated  # [gate] isolated = true: only isolated runs count
    report = Report(cp.id, cp.commit, isolated)
    report.fetched = not store.is_local(repo, cp)
    if report.fetched:
        from .promote import make_local_hint

        report.hint = make_local_hint(repo, cp)
    if chosen:
        with contextlib.ExitStack() as stack:
            if isolated:
                root = stack.enter_context(materialise(repo, cfg, cp))
                run_repo = Repo.discover(root)
            else:
                stack.enter_context(repo.worktree_lock(exclusive=False))
                _refuse_mismatch(repo, cfg, cp)
                root = repo.workdir
                run_repo = repo
            for i, v in enumerate(chosen):
                out = _run_one(repo, run_repo, cfg, cp, v, root=root, rerun=rerun, isolated=isolated, sink=sink)
                report.outcomes.append(out)
                on_outcome(out)
                if out.status == "interrupted":
                    raise KeyboardInterrupt
                if out.status == "changed-files":
                    report.skipped = [w.name for w in chosen[i + 1:]]
                    break
    elif not isolated:  # nothing to run: in place, it still verifies what the worktree holds
        _refuse_mismatch(repo, cfg, cp)
    report.exit_code = exit_code_for(report.outcomes, bool(only))
    req = promotion.requirement(repo, cfg, cp)
    report.missing = req.missing
    report.empty_requirement = not cfg.verifier
    newer = _newer_promoted(repo, cp) if promote and req.satisfied and not report.fetched else None
    if newer is not None:
        report.newer_promoted = newer  # verifying an older checkpoint never moves promotion back
    elif promote and req.satisfied and not report.skipped and not report.fetched:
        res = promotion.promote(repo, cfg, cp, reason="verify")
        report.promoted = cp.id
        report.already_promoted = not (res.changed or res.earned)
        report.earned = res.earned
    return report


def _refuse_mismatch(repo: Repo, cfg: Config, cp: Checkpoint) -> None:
    """Raise :class:`UsageError` when the worktree no longer holds ``cp`` (an in-place verify
    would verify other content), naming up to five differences."""
    mismatch = worktree_mismatch(repo, cfg, cp)
    if mismatch:
        shown = "; ".join(mismatch[:5]) + (f"; and {len(mismatch) - 5} more" if len(mismatch) > 5 else "")
        if not store.is_local(repo, cp):  # a teammate's: perhaps never restored here, and no save makes it so
            raise UsageError(f"the worktree does not match {cp.id} ({shown}); nothing was run",
                             f"git ckpt verify {cp.id} --isolated (in a temporary worktree), or git ckpt restore {cp.id} first")
        raise UsageError(
            f"the worktree no longer matches {cp.id} ({shown}); nothing was run",
            f"git ckpt save, then git ckpt verify (verifies what is on disk), or git ckpt verify {cp.id} --isolated",
        )


def _newer_promoted(repo: Repo, cp: Checkpoint) -> str | None:
    """The id of the promoted checkpoint of ``cp``'s task when it is newer (a higher number)
    than ``cp``: then ``verify`` leaves it promoted (``git ckpt promote`` moves it back on
    purpose).  None when there is none, it is ``cp``, or it is older."""
    oid = repo.read_ref(store.promoted_ref(cp.manifest.task))
    if oid is None or oid == cp.commit:
        return None
    try:
        current = store.load(repo, oid, ref=store.promoted_ref(cp.manifest.task))
    except CkptError:
        return None
    return current.id if current.manifest.number > cp.manifest.number else None


def _run_one(repo: Repo, run_repo: Repo, cfg: Config, cp: Checkpoint, v: VerifierConfig, *, root: Path,
             rerun: bool, isolated: bool, sink: Sink) -> Outcome:
    if not rerun:
        found = find_reusable(repo, cp, v, isolated=isolated)
        if found is not None:
            line, from_id, same = found
            if not same:
                # recorded now: the copy is the latest result of this checkpoint, whenever the run was
                line = dict(line, checkpoint=cp.id, reused=True, required=v.required, recorded_at=ledger.now_iso())
                _record(repo, cp, line, isolated=isolated, reused_from=from_id)
            else:
                ledger.append(repo, ledger_task(repo, cp), "verify", {
                    "id": cp.id, "commit": cp.commit, "verifier": v.name, "status": "passed",
                    "exit_code": line.get("exit_code", 0), "reused": True, "reused_from": from_id,
                    "log": line.get("log"), "isolated": isolated, "tree": cp.tree,
                    "result": result_id(line),
                })
            return Outcome(v.name, "passed", int(line.get("exit_code", 0)), float(line.get("duration", 0.0)),
                           v.required, True, str(line.get("log", "")), line, reused_from=from_id)
    cwd = verifier_cwd(root, v)
    res = run_command(v.command, cwd=cwd, env=verifier_env(cp, v), timeout=v.timeout, sink=sink)
    status = res.status
    changed: list[str] = []
    message = ""
    if status not in ("interrupted", "error") or res.exit_code == 125:
        changed = changed_paths(run_repo, cfg, cp)
        if changed:
            status = "changed-files"
            message = f"changed {len(changed)} checkpointed file(s): " + ", ".join(changed[:20])
            note = f"\ngit ckpt: {v.name} {message}\n".encode()
            sink(note)
            res.output += note
    if res.status == "error" and res.exit_code in (126, 127):
        message = "could not run"
    elif res.status == "error":
        message = "undecided"
    log = repo.blob(res.output)
    line = result_line(cp, v, status=status, exit_code=res.exit_code, duration=res.duration,
                       started_at=res.started_at, host=ledger.HOST, log=log, reused=False)
    _record(repo, cp, line, isolated=isolated)
    return Outcome(v.name, status, res.exit_code, res.duration, v.required, False, log, line,
                   changed=changed, message=message)


def describe(o: Outcome) -> str:
    """The terminal line for one outcome: ``verifier: NAME ...... passed (exit 0, 0.4 s)``."""
    detail = f"exit {o.exit_code}, {o.duration:.1f} s"
    if o.reused:
        detail = f"reused from {o.reused_from}, " + detail
    if not o.required:
        detail += ", not required"
    from .words import result_word

    words = result_word(o.status, o.exit_code)
    return f"verifier: {o.name} ...... {words} ({detail})"
