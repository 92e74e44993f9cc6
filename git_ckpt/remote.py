"""Sharing checkpoints through any Git remote (DESIGN.md behaviour 6): ``push``, ``fetch``,
the notes merge, and restoring a fetched checkpoint into a new linked worktree.

Everything goes through the user's own ``git`` (credentials, ssh, ``insteadOf`` all work) with
explicit refspecs, so ``remote.*.push``/``remote.*.fetch`` and plain ``git push`` are never
changed or used.

=====================================  ====================================================
``refs/ckpt/T/N`` (push)               create-only: ``--force-with-lease=REF:`` (must not exist);
                                       a remote ref with another value is refused, never moved
``refs/ckpt/T/log`` (push)             fast-forward only; a diverged ledger is refused
``refs/ckpt/T/promoted`` (push)        moves only when the remote ledger is part of ours, with a
                                       lease pinned to the value the remote advertised
``refs/notes/ckpt`` (push)             fetched and merged first (``cat_sort_uniq``), so the push
                                       is a fast-forward; lease pinned to the fetched value
``refs/ckpt-remotes/R/*`` (fetch)      the remote's ``refs/ckpt/*`` (remote-tracking copies)
``refs/notes/ckpt-remotes/R`` (fetch)  the remote's ``refs/notes/ckpt``, then merged into ours
=====================================  ====================================================

A push is all-or-nothing: any refused ref refuses the whole push before anything is sent, and
the push itself is ``--atomic`` (where the server supports it), so a race leaves the remote as
it was.  Nothing here ever runs a fetched checkpoint's verifiers or hooks.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from . import ledger, overlay, secretscan, store
from . import config
from .errors import CkptError, RemoteError, UsageError
from .gitcore import Repo, fault, ref_number
from .model import escape
from .notes import NotesMerge, merge_notes
from .restore import RestoreResult, branch_note, mark_detached_by_ckpt, restore
from .store import NOTES_REF, PREFIX, REMOTE_PREFIX


NOTES_REMOTE_PREFIX = "refs/notes/ckpt-remotes/"
DEFAULT_REMOTE = "origin"


def tracking_prefix(remote: str) -> str:
    """``refs/ckpt-remotes/REMOTE/``: where a remote's checkpoints are kept after a fetch."""
    return f"{REMOTE_PREFIX}{remote}/"


def tracking_notes(remote: str) -> str:
    """``refs/notes/ckpt-remotes/REMOTE``: the remote's verifier results as last fetched."""
    return f"{NOTES_REMOTE_PREFIX}{remote}"


def _tracking_name(remote: str, ref: str) -> str:
    """``refs/ckpt/T/N`` → ``refs/ckpt-remotes/REMOTE/T/N``; the notes ref → its tracking ref."""
    if ref == NOTES_REF:
        return tracking_notes(remote)
    return tracking_prefix(remote) + ref[len(PREFIX):]


# ---------------------------------------------------------------------------- results


@dataclass
class RefUpdate:
    """One ref of a push or fetch: ``ref`` (the name on the remote), ``old`` (its value there
    before, None when absent), ``new`` (the value sent or fetched), ``status`` (``new``,
    ``fast-forward``, ``updated``, ``up-to-date``, ``refused``, ``replaced``) and ``reason``."""

    ref: str
    old: str | None
    new: str | None
    status: str
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"ref": self.ref, "old": self.old, "new": self.new, "status": self.status, "reason": self.reason}


@dataclass
class PushResult:
    """What :func:`push` did: every considered ref (``updates``), whether anything was ``sent``,
    the notes merge done first, and findings let through by ``--allow-secrets``."""

    remote: str
    tasks: list[str]
    updates: list[RefUpdate] = field(default_factory=list)
    notes: NotesMerge = field(default_factory=NotesMerge)
    sent: bool = False
    allowed_secrets: list[secretscan.Finding] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "remote": self.remote, "tasks": self.tasks, "sent": self.sent,
            "refs": [u.to_json() for u in self.updates], "notes": self.notes.to_json(),
            "allowed_secrets": [f.to_json() for f in self.allowed_secrets],
        }


@dataclass
class FetchResult:
    """What :func:`fetch` did: remote-tracking refs that changed and the notes merge."""

    remote: str
    updates: list[RefUpdate] = field(default_factory=list)
    notes: NotesMerge = field(default_factory=NotesMerge)

    @property
    def checkpoints(self) -> list[str]:
        """``REMOTE:T/N``, the ids this repository names them by, of the numbered checkpoints
        that arrived or changed, whose names git ckpt accepts (:func:`git_ckpt.store.parse_ckpt_ref`:
        a ref named ``$(…)`` is no checkpoint)."""
        return [f"{self.remote}:{c.id}" for u in self.updates
                if (c := store.parse_ckpt_ref(u.ref)) is not None and c.number is not None]

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"remote": self.remote, "refs": [u.to_json() for u in self.updates],
                "checkpoints": self.checkpoints, "notes": self.notes.to_json()}


class PushRefused(RemoteError):
    """The push would move refs the remote already has (``refused``: list of RefUpdate)."""

    def __init__(self, remote: str, refused: list[RefUpdate], others: list[str] | None = None) -> None:
        names = ", ".join(u.ref[len(PREFIX):] for u in refused[:4]) + (", ..." if len(refused) > 4 else "")
        rest = others or []  # the tasks of the push none of whose refs was refused
        one_by_one = (f"; your other tasks go without it, one at a time: git ckpt push {remote} --task {rest[0]}"
                      + (f" (and so for {', '.join(rest[1:4])}{', ...' if len(rest) > 4 else ''})" if len(rest) > 1 else "")) if rest else ""
        super().__init__(
            f"refusing to push to {remote}: {len(refused)} ref(s) there differ from yours and are never overwritten ({names}); nothing was sent",
            f"someone else pushed a task of the same name: see theirs with git ckpt fetch {remote} && git ckpt list --remote {remote} --all, "
            "then continue your work under another task name (git ckpt task start NEW-NAME, save, push)" + one_by_one,
        )
        self.refused = refused


class SecretsFound(RemoteError):
    """Possible secrets in what the push would send (``findings``)."""

    def __init__(self, remote: str, findings: list[secretscan.Finding]) -> None:
        from .words import counted

        files = list(dict.fromkeys(f.path for f in findings))
        shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        holders = list(dict.fromkeys(i for f in findings for i in f.checkpoints))
        held = f", held by {counted(len(holders), 'checkpoint')}," if holders else ""
        them = "it" if len(files) == 1 else "them"
        drop = f"git ckpt drop {' '.join(holders)}" if holders else "delete the checkpoints holding them (git ckpt drop T/N)"
        super().__init__(
            f"refusing to push to {remote}: possible secrets in {counted(len(files), 'file')}{held} that {remote} does not have yet: "
            f"{shown}; nothing was sent",
            f"if these are not secrets, push again with --allow-secrets; otherwise remove {them} from the worktree (or exclude "
            f"{them} from the overlay) first, so that no save captures {them} again, then {drop} and git gc --prune=now",
        )
        self.findings = findings
        self.details = {"findings": [f.to_json() for f in findings]}  # --json: one per detector and line


class _Race(Exception):
    """The remote changed between our look and our push; plan again."""


# ---------------------------------------------------------------------------- git transport


def check_remote(repo: Repo, remote: str) -> str:
    """Validate ``remote`` (a configured remote's name) and return its URL.

    Raises :class:`UsageError` (exit 2, :func:`store.remote_problem`) for a name no remote is
    configured under: a URL or path (add it with ``git remote add``) or an unknown name.
    """
    problem = store.remote_problem(repo, remote)
    if problem is not None:
        raise problem
    proc = repo.git("remote", "get-url", remote, check=False)
    return proc.stdout.decode("utf-8", "replace").strip()


def _git_message(proc: subprocess.CompletedProcess[bytes]) -> str:
    lines = [ln.strip() for ln in proc.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    first = next((ln for ln in lines if ln.startswith(("fatal:", "error:"))), lines[0] if lines else f"exit {proc.returncode}")
    return first.removeprefix("fatal: ").removeprefix("error: ")


def _net(repo: Repo, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run a network ``git`` command; a failure becomes :class:`RemoteError` with git's message."""
    proc = repo.git(*args, check=False)
    if proc.returncode != 0:
        raise RemoteError(f"git {args[0]} failed: {_git_message(proc)}", "check the remote's URL, your network and credentials (git remote -v)")
    return proc


def ls_remote(repo: Repo, remote: str) -> dict[str, str]:
    """The remote's ``refs/ckpt/*`` and ``refs/notes/ckpt`` (``git ls-remote``): name → id."""
    out = _net(repo, "ls-remote", "--refs", remote, f"{PREFIX}*", NOTES_REF).stdout
    refs: dict[str, str] = {}
    for line in out.decode("utf-8", "replace").splitlines():
        oid, _, name = line.partition("\t")
        if name.startswith(PREFIX) or name == NOTES_REF:
            refs[name] = oid
    return refs


def _fetch_refs(repo: Repo, remote: str, specs: list[str]) -> None:
    """``git fetch REMOTE SPECS`` without tags, pruning, FETCH_HEAD or submodules."""
    _net(repo, "fetch", "--quiet", "--no-tags", "--no-prune", "--no-write-fetch-head", "--no-recurse-submodules", remote, *specs)



# ---------------------------------------------------------------------------- words

# What push and fetch print for one ref, by RefUpdate.status: the same event has the same word
# both ways (a promoted ref moving to another checkpoint is ``moved``, routine, on either side).
LABELS = {"new": "new", "fast-forward": "updated", "updated": "moved", "up-to-date": "up to date", "replaced": "replaced"}


def ref_lines(updates: list[RefUpdate]) -> list[str]:
    """The per-ref lines ``push`` and ``fetch`` print (``LABEL      refs/ckpt/T/…``, the ref as
    named on the remote): every ref when at most 40, else the first and last 10 and a count
    (``--json`` lists them all).  ``up-to-date`` refs are left out."""
    shown = [u for u in updates if u.status != "up-to-date"]
    lines = [f"{LABELS.get(u.status, u.status):<10} {escape(u.ref)}" for u in shown]  # a remote names them
    if len(lines) > 40:
        lines = [*lines[:10], f"...        ({len(lines) - 20} more)", *lines[-10:]]
    return lines


def fetch_status(repo: Repo, ref: str, old: str | None, new: str) -> str:
    """How a fetched ``ref`` (``refs/ckpt/T/…`` as named on the remote) changed from ``old`` to
    ``new``, in push's words: ``new``; ``fast-forward``; ``updated`` for a promoted ref moved to
    another checkpoint (routine: a teammate promoted again); ``replaced`` for a checkpoint
    (never moved once written) or ledger rewritten on the remote, which ``fetch`` warns about."""
    if old is None:
        return "new"
    if repo.fast_forwards(new, old):
        return "fast-forward"
    return "updated" if ref.endswith("/promoted") else "replaced"


# ---------------------------------------------------------------------------- fetch


def fetch(repo: Repo, *, remote: str, task: str) -> FetchResult:
    """Bring ``remote``'s checkpoints into ``refs/ckpt-remotes/REMOTE/`` and its notes into
    ``refs/notes/ckpt-remotes/REMOTE``, then merge those notes into ``refs/notes/ckpt``.

    Like ``git fetch REMOTE +refs/ckpt/*:refs/ckpt-remotes/REMOTE/*``: local ``refs/ckpt/*`` are
    never written; nothing fetched is run.  A ``fetch`` event goes into the ledger of ``task``
    when anything changed and that task has a ledger already.  Raises :class:`RemoteError` (git's message) when git fails.
    """
    check_remote(repo, remote)
    adv = ls_remote(repo, remote)
    prefix = tracking_prefix(remote)
    before = repo.refs_under(prefix)
    specs = []
    if any(name.startswith(PREFIX) for name in adv):
        specs.append(f"+{PREFIX}*:{prefix}*")
    if NOTES_REF in adv:
        specs.append(f"+{NOTES_REF}:{tracking_notes(remote)}")
    if specs:
        from . import progress

        shown = progress.meter(f"fetch: refs from {remote}", len(specs))  # a line when it took over a second
        _fetch_refs(repo, remote, specs)
        shown.done()
    fault("fetch.after-fetch")
    after = repo.refs_under(prefix)
    updates = []
    for name, oid in sorted(after.items(), key=lambda kv: _ref_key(kv[0])):
        old = before.get(name)
        if old != oid:
            ref = PREFIX + name[len(prefix):]
            updates.append(RefUpdate(ref, old, oid, fetch_status(repo, ref, old, oid)))
    merged = merge_notes(repo, repo.read_ref(tracking_notes(remote)), remote)
    result = FetchResult(remote, updates, merged)
    # Recorded in the current task's ledger when that task exists: a fetch alone never creates
    # a task (whose ledger a later push would send and collide on).
    if (updates or merged.added) and repo.read_ref(store.log_ref(task)):
        by_task: dict[str, list[str]] = {}
        for u in updates:
            by_task.setdefault(u.ref[len(PREFIX):].rpartition("/")[0], []).append(u.ref)
        ledger.append(repo, task, "fetch", {
            "remote": remote, "tasks": {t: ref_summary(refs, f"{PREFIX}{t}/") for t, refs in sorted(by_task.items())},
            "notes_added": merged.added,
        })
    return result


# ---------------------------------------------------------------------------- push


def ref_summary(refs: list[str], prefix: str) -> dict[str, Any]:
    """What a ledger event says about the refs of one task (``prefix`` = ``refs/ckpt/T/``) a push
    sent: ``checkpoints``, their numbers as ranges (``"1-20000,20003"``), and ``refs``, the other
    refs by name, so an event stays small however many checkpoints went."""
    numbered = {r: ref_number(r[len(prefix):]) if r.startswith(prefix) else None for r in refs}
    nums = sorted(n for n in numbered.values() if n is not None)
    others = [r for r, n in numbered.items() if n is None]
    spans: list[str] = []
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        spans.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return {"checkpoints": ",".join(spans), "refs": others}


def _ref_key(name: str) -> tuple[str, int, int, str]:
    head, _, last = name.rpartition("/")
    n = ref_number(last)
    return (head, 0, n, "") if n is not None else (head, 1, 0, last)


def _plan(repo: Repo, tasks: list[str], adv: dict[str, str], remote: str) -> list[RefUpdate]:
    """Decide, per local ref of ``tasks``, what pushing it to a remote holding ``adv`` means."""
    ups: list[RefUpdate] = []
    for task in tasks:
        prefix = f"{PREFIX}{task}/"
        local = repo.refs_under(prefix)
        log = store.log_ref(task)
        ledger_ok = not store.push_refused(repo, "log", local.get(log), adv.get(log))
        for name in sorted(local, key=_ref_key):
            oid, rest, old = local[name], name[len(prefix):], adv.get(name)
            if old == oid:
                ups.append(RefUpdate(name, old, oid, "up-to-date"))
            elif ref_number(rest) is not None:
                if old is None or not store.push_refused(repo, rest, oid, old):
                    ups.append(RefUpdate(name, None, oid, "new"))
                else:
                    ups.append(RefUpdate(name, old, oid, "refused",
                                         f"{remote} already has a different checkpoint {task}/{rest} ({old[:12]}, yours is {oid[:12]}); checkpoints are never overwritten"))
            elif rest == "log":
                if old is None:
                    ups.append(RefUpdate(name, None, oid, "new"))
                elif ledger_ok:
                    ups.append(RefUpdate(name, old, oid, "fast-forward"))
                else:
                    ups.append(RefUpdate(name, old, oid, "refused",
                                         f"the ledger of task {task} on {remote} has diverged from yours (another line of work under the same task name)"))
            elif rest == "promoted":
                if old is None:
                    ups.append(RefUpdate(name, None, oid, "new"))
                elif ledger_ok:
                    ups.append(RefUpdate(name, old, oid, "fast-forward" if repo.fast_forwards(oid, old) else "updated"))
                else:
                    ups.append(RefUpdate(name, old, oid, "refused",
                                         f"task {task} on {remote} promoted another checkpoint and its ledger has diverged from yours"))
    return ups


def _parse_porcelain(out: bytes) -> dict[str, tuple[str, str]]:
    """``git push --porcelain`` lines → destination ref → (flag, summary)."""
    res = {}
    for line in out.decode("utf-8", "replace").splitlines():
        parts = line.split("\t")
        if len(parts) >= 2 and len(parts[0]) == 1:
            res[parts[1].rpartition(":")[2]] = (parts[0], parts[2] if len(parts) > 2 else "")
    return res


STAGE_PREFIX = "refs/ckpt-push/"


def _stage_name(stage: str, ref: str) -> str:
    """``refs/X`` → ``STAGE/X``: where a ref waits for one wildcard refspec to push it."""
    return stage + ref[len("refs/"):]


def _remove_stale_stages(repo: Repo) -> None:
    """Delete staging refs left by a push that was killed (their process is gone)."""
    stale = []
    for name, oid in repo.refs_under(STAGE_PREFIX).items():
        pid = ref_number(name[len(STAGE_PREFIX):].split("/", 1)[0].split("-", 1)[0])  # as _push names it: PID-TOKEN
        if pid is not None and not _alive(pid):
            stale.append((name, None, oid))
    if stale:
        try:
            repo.update_refs(stale, reason="ckpt: remove staging refs of a killed push")
        except CkptError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _send(repo: Repo, remote: str, sends: list[RefUpdate], went: list[RefUpdate]) -> subprocess.CompletedProcess[bytes]:
    """One ``git push --porcelain --atomic`` of ``sends`` whose command line does not grow with
    the number of refs: every ref that is created or fast-forwarded (checkpoints, ledgers,
    notes) is first written under a private staging prefix (``refs/ckpt-push/PID-N/``, one
    ``git update-ref --stdin`` transaction) and pushed by one wildcard refspec without force,
    so the remote creates it or fast-forwards it and refuses anything else; a ref that must
    move otherwise (a promoted ref ``updated``) is pushed by name with a lease on the value
    the remote advertised.  (One refspec and one lease per ref would hit the 2 MiB argument
    limit near 17,000 refs, and git matches explicit refspecs in quadratic time.)  The refs
    that reached the remote are appended to ``went``; the staging refs are deleted.
    Returns the ``git push`` run."""
    explicit = [u for u in sends if u.status == "updated"]
    staged = [u for u in sends if u.status != "updated"]
    stage = f"{STAGE_PREFIX}{os.getpid()}-{secrets_token()}/"
    leases = [f"--force-with-lease={u.ref}:{u.old or ''}" for u in explicit]
    specs = ([f"{stage}*:refs/*"] if staged else []) + [f"{u.new}:{u.ref}" for u in explicit]
    base = ["push", "--porcelain", "--recurse-submodules=no"]
    from . import progress

    repo.update_refs([(_stage_name(stage, u.ref), u.new, None) for u in staged], reason="ckpt: stage a push")
    shown = progress.meter(f"push: refs to {remote}", len(sends))  # a line when it took over a second
    try:
        proc = repo.git(*base, "--atomic", *leases, remote, *specs, check=False)
        if proc.returncode != 0 and b"does not support --atomic" in proc.stderr:
            proc = repo.git(*base, *leases, remote, *specs, check=False)
        if proc.returncode == 0:
            shown.done()
    except OSError as exc:  # E2BIG and the like: the push never started
        raise RemoteError(f"could not run git push: {exc.strerror or exc}", "run git ckpt push again; if it persists, report it") from None
    finally:
        try:
            repo.update_refs([(_stage_name(stage, u.ref), None, u.new) for u in staged], reason="ckpt: push staged")
        except CkptError:
            pass  # removed by the next push
    status = _parse_porcelain(proc.stdout)
    went += [u for u in sends if status.get(u.ref, ("!",))[0] != "!"]
    return proc


def secrets_token() -> str:
    """A short random name part (staging refs of two pushes of one process never collide)."""
    return os.urandom(4).hex()


def _track(repo: Repo, remote: str, went: list[RefUpdate]) -> None:
    """Record in ``refs/ckpt-remotes/REMOTE/`` (and the notes tracking ref) what reached the
    remote, in one ref transaction.  Only a cache of what the remote holds (the next fetch
    rewrites it), so a failure is ignored."""
    if not went:
        return
    current: dict[str, str | None] = dict(repo.refs_under(tracking_prefix(remote)))
    current[tracking_notes(remote)] = repo.read_ref(tracking_notes(remote))
    updates = [(t, u.new, current.get(t)) for u in went for t in [_tracking_name(remote, u.ref)] if current.get(t) != u.new]
    try:
        repo.update_refs(updates, reason=f"ckpt: push to {remote}")
    except CkptError:
        pass
    repo.pack_refs_if_many(len(updates))


def push(
    repo: Repo,
    *,
    remote: str,
    tasks: list[str] | None,
    allow_secrets: bool = False,
    log_task: str | None = None,
) -> PushResult:
    """Push the checkpoints, ledger and promoted ref of ``tasks`` (None: every task but those
    that only reviewed others' checkpoints, :func:`git_ckpt.ledger.only_reviews`; []: only the
    notes) and ``refs/notes/ckpt`` to ``remote`` through the user's ``git push``, with explicit refspecs.

    Order: read the remote's refs (``git ls-remote``); refuse the whole push, sending nothing,
    when a remote checkpoint of the same name differs or a ledger diverged (:class:`PushRefused`);
    fetch and merge the remote's notes (so no result line is lost and the notes push is a
    fast-forward); scan what the remote lacks for secrets (:class:`SecretsFound` unless
    ``allow_secrets``); record a ``push`` event in each pushed task's ledger (it travels with the
    push; ``log_task`` gets it when only notes change); push atomically with every ref leased
    on the value the remote advertised; update ``refs/ckpt-remotes/REMOTE/``.  A remote that
    changed meanwhile is re-read (three tries).  Other failures raise :class:`RemoteError` with
    git's message, after a ``push-failed`` ledger event.
    """
    check_remote(repo, remote)
    _remove_stale_stages(repo)
    if tasks is None:  # every task with work of its own: a reviewer's ledger stays home (README "Verify")
        tasks = [t for t in store.tasks(repo) if not ledger.only_reviews(repo, t)]
    recorded: set[str] = set()
    landed: list[str] = []
    try:
        for _attempt in range(3):
            try:
                return _push_once(repo, remote, tasks, allow_secrets, log_task, recorded, landed)
            except _Race:
                continue
        raise RemoteError(f"{remote} kept changing while we pushed; nothing more was sent", "run git ckpt push again")
    except (CkptError, KeyboardInterrupt) as exc:
        # the push event is already in the ledger: say it did not (all) go, and what did
        error = exc.message if isinstance(exc, CkptError) else "interrupted"
        for t in sorted(recorded):
            ledger.append(repo, t, "push-failed", {"remote": remote, "error": error,
                                                   "sent": ref_summary([r for r in landed if r.startswith(f"{PREFIX}{t}/")], f"{PREFIX}{t}/")})
        raise


def _push_once(repo: Repo, remote: str, tasks: list[str], allow_secrets: bool, log_task: str | None, recorded: set[str],
               landed: list[str]) -> PushResult:
    adv = ls_remote(repo, remote)
    ups = _plan(repo, tasks, adv, remote)
    refused = [u for u in ups if u.status == "refused"]
    if refused:
        blocked = {u.ref[len(PREFIX):].partition("/")[0] for u in refused if u.ref.startswith(PREFIX)}
        raise PushRefused(remote, refused, [t for t in tasks if t not in blocked])
    result = PushResult(remote, list(tasks), ups)
    theirs = adv.get(NOTES_REF)
    if theirs:
        _fetch_refs(repo, remote, [f"+{NOTES_REF}:{tracking_notes(remote)}"])
        theirs = repo.read_ref(tracking_notes(remote))
        result.notes = merge_notes(repo, theirs, remote)
    ours = repo.read_ref(NOTES_REF)
    notes_up = RefUpdate(NOTES_REF, theirs, ours, "new" if theirs is None else "fast-forward") if ours and ours != theirs else None
    sends = [u for u in ups if u.status in ("new", "fast-forward", "updated")]
    if not sends and not notes_up and not recorded:
        return result
    # secrets: everything the remote does not hold yet
    known = list(adv.values()) + list(repo.refs_under(tracking_prefix(remote)).values())
    known += list(repo.refs_under(f"refs/remotes/{remote}/").values())
    cps = []
    tips: list[str] = []
    for u in sends:
        assert u.new is not None  # every ref sent is the value of a local ref (_plan)
        tips.append(u.new)
        task, _, n = u.ref[len(PREFIX):].rpartition("/")
        if ref_number(n) is not None:
            cps.append(store.load(repo, u.new, id=f"{task}/{n}", ref=u.ref))
    if notes_up:
        assert notes_up.new is not None  # made only when our notes ref exists
        tips.append(notes_up.new)
    findings = secretscan.scan_push(repo, tips=tips, known=known, checkpoints=cps)
    if findings and not allow_secrets:
        raise SecretsFound(remote, findings)
    result.allowed_secrets = findings
    # the ledger records the push, and travels with it
    by_task = {t: [u.ref for u in sends if u.ref.startswith(f"{PREFIX}{t}/")] for t in tasks}
    event_tasks = [t for t in tasks if by_task[t]] or ([log_task] if notes_up and log_task in tasks else [])
    for t in event_tasks:
        if t in recorded:
            continue
        ledger.append(repo, t, "push", {"remote": remote, **ref_summary(by_task[t], f"{PREFIX}{t}/"), "notes": notes_up is not None,
                                        "secrets_allowed": len(findings)})
        recorded.add(t)
    for t in recorded:
        log = store.log_ref(t)
        new = repo.read_ref(log)
        entry = next((u for u in ups if u.ref == log), None)
        if entry is None:
            entry = RefUpdate(log, adv.get(log), new, "new")
            ups.append(entry)
        if entry.new != new or entry.status == "up-to-date":
            entry.new, entry.status = new, "new" if adv.get(log) is None else "fast-forward"
        if entry not in sends:
            sends.append(entry)
    if notes_up:
        sends.append(notes_up)
        ups.append(notes_up)
    fault("push.before-send")
    went: list[RefUpdate] = []
    try:
        proc = _send(repo, remote, sends, went)
    finally:
        landed += [u.ref for u in went]
        _track(repo, remote, went)
    fault("push.after-send")
    status = _parse_porcelain(proc.stdout)
    rejected = {ref: s for ref, s in status.items() if s[0] == "!"}
    if proc.returncode != 0 or rejected:
        racy = rejected and all(any(w in s[1] for w in ("stale info", "fetch first", "non-fast-forward", "atomic push failed")) for s in rejected.values())
        if racy and any("atomic push failed" not in s[1] for s in rejected.values()):
            raise _Race()
        detail = "; ".join(f"{ref} {s[1]}" for ref, s in list(rejected.items())[:4]) or _git_message(proc)
        if len(rejected) > 4:
            detail += f"; ... ({len(rejected)} refs)"
        if landed:
            hint = (f"{len(landed)} of {len(sends)} refs reached {remote} anyway (it does not support atomic pushes; "
                    "the ledger's push-failed event names them); check the remote and run git ckpt push again to send the rest")
        else:
            hint = "nothing was changed on the remote if it supports atomic pushes; check the remote and run git ckpt push again"
        raise RemoteError(f"git push to {remote} failed: {detail}", hint)
    result.updates = sorted(ups, key=lambda u: (u.ref != NOTES_REF, _ref_key(u.ref)))
    result.sent = True
    return result


# ---------------------------------------------------------------------------- restore elsewhere


def restore_into_worktree(repo: Repo, target: store.Checkpoint, path: Path) -> tuple[Repo, "RestoreResult"]:
    """Restore ``target`` (typically a teammate's ``REMOTE:T/N``) into a NEW linked worktree at
    ``path``, created with ``git worktree add --detach PATH BASE``, so foreign code stays apart
    from the current worktree.

    The new worktree starts at the checkpoint's base commit; then the usual restore makes it
    exactly the checkpoint (worktree, index, overlay through the strict extractor), under the
    new worktree's own current task (``default``).  Returns the new worktree's :class:`Repo` and
    the :class:`RestoreResult`.  The overlay archive is validated before the worktree is created;
    a restore that fails afterwards removes the new worktree again.  Raises :class:`UsageError`
    when ``path`` exists and is not an empty directory or the checkpoint has no base commit,
    or lies inside the current worktree (a nested repository its saves would record as a
    gitlink), :class:`~git_ckpt.errors.CorruptError` for a refused archive, git's failures as
    :class:`~git_ckpt.errors.CkptError`.
    """
    path = Path(os.path.abspath(path))
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise UsageError(f"{path} already exists", "give a new directory for the worktree")
    here = os.path.realpath(repo.workdir)
    there = os.path.join(os.path.realpath(path.parent), path.name)
    if there == here or there.startswith(here.rstrip("/") + "/"):
        # inside this worktree it is a nested repository: the next save records it as a gitlink
        raise UsageError(f"{path} is inside this worktree ({repo.workdir})",
                         f"give a directory outside it, e.g. {os.path.join(os.path.dirname(here), path.name)}")
    if not target.base:
        raise UsageError(f"{target.id} was saved on an unborn branch; it has no base commit for a new worktree",
                         "restore it into the current worktree instead")
    source = target.overlay_source()
    if source is not None:  # a refused archive must not even leave a worktree behind
        overlay.read_archive(source)
    repo.git("worktree", "add", "--detach", "--quiet", str(path), target.base)
    try:
        new = Repo.discover(path)
        mark_detached_by_ckpt(new)
        cp = store.load(new, target.commit, id=target.id, ref=target.ref)
        res = restore(new, config.load(new), cp, task=store.current_task(new))
        # this command detached the new worktree itself: that it is on no branch is no news
        res.plan.provenance = [n for n in res.plan.provenance if n != branch_note(cp, None)]
    except CkptError:
        # The worktree is ours, fresh, and holds nothing the checkpoint does not: take it away.
        repo.git("worktree", "remove", "--force", str(path), check=False)
        raise
    return new, res
