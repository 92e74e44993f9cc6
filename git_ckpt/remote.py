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
``refs/ckpt-remotes/R/*`` (fetch)      the remote's ``refs/ckpt/T/N|log|promoted`` (remote-tracking
                                       copies; other names under ``refs/ckpt/`` are not fetched)
``refs/notes/ckpt-remotes/R`` (fetch)  the remote's ``refs/notes/ckpt``, then merged into ours
=====================================  ====================================================

A push is all-or-nothing: any refused ref refuses the whole push before anything is sent, and
the push itself is ``--atomic`` (where the server supports it), so a race leaves the remote as
it was.  Nothing here ever runs a fetched checkpoint's verifiers or hooks.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from . import ledger, overlay, secretscan, store
from . import config
from .errors import CkptError, RemoteError, UsageError
from .gitcore import Repo, fault, ref_number
from .model import escape, task_name_problem
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
    ``fast-forward``, ``updated``, ``up-to-date``, ``refused``, ``replaced``; a fetch's
    ``removed`` for a remote-tracking ref it deleted, ``ref`` then named as here) and ``reason``."""

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
    """What :func:`fetch` did: remote-tracking refs that changed (``updates``, named as on the
    remote), the notes merge, the remote's refs under ``refs/ckpt/`` left alone because they
    name no checkpoint, ledger or promotion of a task (``ignored``, sorted), the remote-tracking
    refs deleted because they were in the way of fetched ones (``removed``, named as here,
    status ``removed``, the reason in ``reason``), and ``warnings`` (the fetch was done but
    could not be recorded in the ledger)."""

    remote: str
    updates: list[RefUpdate] = field(default_factory=list)
    notes: NotesMerge = field(default_factory=NotesMerge)
    ignored: list[str] = field(default_factory=list)
    removed: list[RefUpdate] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

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
                "checkpoints": self.checkpoints, "notes": self.notes.to_json(), "ignored": self.ignored,
                "removed": [u.to_json() for u in self.removed], "warnings": self.warnings}


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


GIT_MESSAGE_MAX = 2000  # characters of git's message an error (and a push-failed event) carries


def _git_message(proc: subprocess.CompletedProcess[bytes]) -> str:
    """git's whole message from the stderr of a failed ``proc``, as one line: from its first
    ``fatal:`` or ``error:`` line on (the lines before are a server's ``remote:`` chatter or
    progress), at most 20 lines, each without that prefix; a line that had one is a message
    of its own (joined with ``; ``), any other continues the one before (joined with a space).
    Cut at :data:`GIT_MESSAGE_MAX` characters (`` ...``), so it fits an error line and a ledger
    event whatever a remote sends; ``exit N`` when git said nothing."""
    lines = [ln for ln in proc.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    start = next((i for i, ln in enumerate(lines) if ln.startswith(("fatal:", "error:"))), 0)
    text = ""
    for ln in lines[start:start + 20]:
        own = ln.startswith(("fatal:", "error:"))
        part = ln.removeprefix("fatal:").removeprefix("error:").strip()
        text += ("; " if own and text else " " if text else "") + part
    if len(text) > GIT_MESSAGE_MAX:
        text = text[:GIT_MESSAGE_MAX] + " ..."
    return text or f"exit {proc.returncode}"


# What a failed network git command's own lines (not a server's ``remote:`` lines, which a
# remote writes as it likes) say went wrong, in order: the first match picks the hint.
_LOCAL_LOCK = ("unable to create", ".lock': file exists", "another git process")
_LOCAL_SPACE = ("no space left", "disk quota exceeded", "read-only file system")
_LOCAL_REFS = ("could not be updated", "cannot lock ref", "unable to update local ref", "exists; cannot create",
               "file name too long")
_NETWORK = ("could not read from remote", "does not appear to be a git repository", "could not resolve",
            "unable to access", "connection", "timed out", "authentication", "permission denied", "host key",
            "not found", "hung up", "early eof", "unable to connect", "ssl", "tls", "proxy", "http", "protocol",
            "unable to look up", "no such device or address", "could not read username", "terminal prompts disabled")


def failure_hint(proc: subprocess.CompletedProcess[bytes], remote: str) -> str:
    """The hint for a failed network ``git`` command (``ls-remote``, ``fetch``) run against
    ``remote``, by what git itself said (a server's ``remote:`` lines are not read): a lock
    another git holds, a full or read-only disk, a ref of this repository in the way (a ref
    and a directory of refs of the same name), or the remote's URL, the network and
    credentials; anything else points at git's message."""
    own = " ".join(ln.lower() for ln in proc.stderr.decode("utf-8", "replace").splitlines() if not ln.startswith("remote:"))
    if ".lock" in own and any(w in own for w in _LOCAL_LOCK):
        return "another git command holds a lock in this repository; when none is running, remove the .lock file git names and run it again"
    if any(w in own for w in _LOCAL_SPACE):
        return "free disk space (or make the repository writable) and run it again"
    if any(w in own for w in _LOCAL_REFS):
        prune = " (git remote prune, which git suggests, does not reach these refs)" if "remote prune" in own else ""
        return (f"a ref of this repository is in the way of one from {remote} (a ref and a directory of refs of the same name): "
                f"find it with git for-each-ref refs/ckpt-remotes/{remote}/ refs/notes/ckpt-remotes/, delete it with "
                f"git update-ref -d REF if you do not need it, and run it again{prune}")
    if any(w in own for w in _NETWORK):
        return "check the remote's URL, your network and credentials (git remote -v)"
    return f"that is git's own message about {remote}; fix what it names and run it again (git remote -v shows the URL)"


def _net(repo: Repo, remote: str, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run a network ``git`` command against ``remote``; a failure becomes :class:`RemoteError`
    with git's whole message and a hint that fits it (:func:`failure_hint`)."""
    proc = repo.git(*args, input=input, check=False)
    if proc.returncode != 0:
        raise RemoteError(f"git {args[0]} failed: {_git_message(proc)}", failure_hint(proc, remote))
    return proc


def ls_remote(repo: Repo, remote: str) -> dict[str, str]:
    """The remote's ``refs/ckpt/*`` and ``refs/notes/ckpt`` (``git ls-remote``): name → id; a
    name that is not UTF-8 is decoded as :meth:`~git_ckpt.gitcore.Repo.refs_under` decodes the
    same name once fetched (``surrogateescape``), so the two agree."""
    out = _net(repo, remote, "ls-remote", "--refs", remote, f"{PREFIX}*", NOTES_REF).stdout
    refs: dict[str, str] = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        oid, _, name = line.partition("\t")
        if name.startswith(PREFIX) or name == NOTES_REF:
            refs[name] = oid
    return refs


def _fetch_refs(repo: Repo, remote: str, specs: list[str]) -> None:
    """``git fetch REMOTE SPECS`` without tags, pruning, FETCH_HEAD or submodules; the
    refspecs are read from stdin (``--stdin``), so however many there are the command line
    stays short."""
    _net(repo, remote, "fetch", "--quiet", "--no-tags", "--no-prune", "--no-write-fetch-head", "--no-recurse-submodules",
         "--stdin", remote, input="".join(f"{spec}\n" for spec in specs).encode())



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


def ignored_line(remote: str, ignored: list[str]) -> str:
    """The line ``fetch`` prints for the remote's refs it left alone (:attr:`FetchResult.ignored`):
    how many, and the first three names, escaped and each cut to 80 characters (its start and
    its end, where names that differ mostly differ)."""
    from .words import counted

    names = [escape(n) for n in ignored[:3]]
    names = [n if len(n) <= 80 else f"{n[:41]}...{n[-36:]}" for n in names]
    more = f" and {len(ignored) - 3} more" if len(ignored) > 3 else ""
    return (f"not fetched: {counted(len(ignored), 'ref')} on {remote} naming no checkpoint, ledger or promotion "
            f"(refs/ckpt/T/N, T/log, T/promoted): {', '.join(names)}{more}")


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


MAX_EXCLUDED = 1000  # negative refspecs per fetch: git matches every advertised ref against each
MAX_EXPLICIT = 500  # refs fetched by name (git matches each refspec against every advertised ref)
LEDGER_TASKS = 50  # tasks a fetch event names (the rest are counted)
LEDGER_NAMES = 10  # ref names a ledger event lists (the rest are counted)
LEDGER_NAME_WIDTH = 256  # characters of each such name kept


def fetchable(ref: str) -> bool:
    """Whether ``fetch`` brings a remote's ``ref`` into ``refs/ckpt-remotes/REMOTE/``: a
    ``refs/ckpt/T/N``, ``T/log`` or ``T/promoted`` that :func:`git_ckpt.store.parse_ckpt_ref`
    accepts.  Nothing else under ``refs/ckpt/`` is anything git ckpt reads; a name with more
    levels (``T/2/x``) or fewer (``T``) would also clash with one of these as a directory of
    refs or a ref (git keeps no ``T/2`` beside ``T/2/x``).  Such names all have exactly two
    levels, so no two fetched names ever clash."""
    return ref.startswith(PREFIX) and store.parse_ckpt_ref(ref) is not None


_SAFE_SPEC = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*")


def _exclusion(ref: str) -> str | None:
    """A negative refspec (without its ``^``) that keeps ``git fetch`` from fetching the remote's
    ``ref`` (not :func:`fetchable`) and never a fetchable name: ``refs/ckpt/T/*`` for a task
    name that is none, ``refs/ckpt/T/N/*`` for names below ``T/N``, the name itself otherwise.
    None when that text is not plainly a ref name (a remote may advertise anything, and an
    invalid refspec would fail the whole fetch).  Every pattern that could cover a name
    clashing with a fetchable ``T/N`` (``refs/ckpt/T/N/*``, ``refs/ckpt/T``) is plain, since
    a fetchable name is."""
    parts = ref[len(PREFIX):].split("/")
    if len(parts) > 1 and task_name_problem(parts[0]):
        spec = f"{PREFIX}{parts[0]}/*"
    elif len(parts) > 2:
        spec = f"{PREFIX}{parts[0]}/{parts[1]}/*"
    else:
        spec = ref
    body = spec.removesuffix("/*")
    if not _SAFE_SPEC.fullmatch(body) or ".." in body or any(p.endswith((".", ".lock")) for p in body.split("/")):
        return None
    return spec


def _clashes(names: set[str], incoming: set[str]) -> dict[str, str]:
    """The ``names`` (full ref names) that are not in ``incoming`` but clash with one of them,
    each → the first incoming name it clashes with: a ref where an incoming name needs a
    directory (``…/T`` for ``…/T/1``), or a ref in a directory where an incoming name needs a
    ref (``…/T/2/x`` for ``…/T/2``).  git keeps no two such refs at once, so an incoming ref
    cannot be written while one of these exists."""
    dirs: dict[str, str] = {}
    for name in sorted(incoming):
        for i, ch in enumerate(name):
            if ch == "/":
                dirs.setdefault(name[:i], name)
    out = {}
    for name in names - incoming:
        if name in dirs:
            out[name] = dirs[name]
        elif (above := next((name[:i] for i, ch in enumerate(name) if ch == "/" and name[:i] in incoming), None)) is not None:
            out[name] = above
    return out


def _plan_fetch(adv: dict[str, str], held: dict[str, str], prefix: str) -> tuple[list[str], set[str]]:
    """The refspecs of one ``git fetch`` of the remote's refs under ``refs/ckpt/`` (advertised:
    ``adv``) into ``prefix`` (holding ``held``), and the names under ``refs/ckpt/`` it may
    write.  The fetchable names that are new or moved go by name while they are at most
    :data:`MAX_EXPLICIT` (none at all when nothing changed); more go by one wildcard refspec
    less negative refspecs (:func:`_exclusion`) for the other names, at most
    :data:`MAX_EXCLUDED` of them but always those whose names would clash with a fetchable
    ref already held; the names no negative refspec covers are among those it may write."""
    changed = sorted(name for name, oid in adv.items() if fetchable(name) and held.get(prefix + name[len(PREFIX):]) != oid)
    if len(changed) <= MAX_EXPLICIT:
        return [f"+{name}:{prefix}{name[len(PREFIX):]}" for name in changed], set(changed)
    others = {name: _exclusion(name) for name in adv if name.startswith(PREFIX) and not fetchable(name)}
    needed = set()
    for name in held:
        if fetchable(PREFIX + name[len(prefix):]):
            task, _, last = name[len(prefix):].partition("/")
            needed |= {f"{PREFIX}{task}/{last}/*", f"{PREFIX}{task}"}
    groups = sorted({x for x in others.values() if x}, key=lambda x: (x not in needed, x))
    chosen = set(groups[:max(MAX_EXCLUDED, sum(x in needed for x in groups))])
    writes = set(changed) | {name for name, x in others.items() if x not in chosen}
    return [f"+{PREFIX}*:{prefix}*", *(f"^{x}" for x in sorted(chosen))], writes


def fetch(repo: Repo, *, remote: str, task: str) -> FetchResult:
    """Bring ``remote``'s checkpoints into ``refs/ckpt-remotes/REMOTE/`` and its notes into
    ``refs/notes/ckpt-remotes/REMOTE``, then merge those notes into ``refs/notes/ckpt``.

    Only names :func:`fetchable` are fetched (``refs/ckpt/T/N``, ``T/log``, ``T/promoted``); the
    remote's other refs under ``refs/ckpt/`` are listed in :attr:`FetchResult.ignored`.  What
    the remote advertises (``git ls-remote``) decides the refspecs (:func:`_plan_fetch`: by
    name, or a wildcard less negative refspecs); a name that still arrives and is not
    fetchable (one no refspec can spell, or pushed meanwhile) is deleted again at once.
    Nothing is pruned: a checkpoint the remote no longer has stays fetched (``REMOTE:T/N``
    still shows and restores it), except a remote-tracking ref that clashes with a name the
    fetch writes (a ref where that name needs a directory, or the reverse; only a name no
    fetch keeps any longer, left by an older git ckpt or another tool, can): git could not
    write the new one, so it is deleted first and reported in :attr:`FetchResult.removed`.

    Local ``refs/ckpt/*`` are never written; nothing fetched is run.  A ``fetch`` event goes
    into the ledger of ``task`` when anything changed and that task has a ledger already
    (bounded: :func:`fetch_event`); an unreadable ledger is a warning, not a failed fetch.
    Raises :class:`RemoteError` (git's whole message, a hint that fits it) when git fails.
    """
    check_remote(repo, remote)
    adv = ls_remote(repo, remote)
    prefix = tracking_prefix(remote)
    held: dict[str, str] = dict(repo.refs_under(prefix))
    specs, writes = _plan_fetch(adv, held, prefix)
    removed = _remove_clashes(repo, remote, held, {prefix + name[len(PREFIX):] for name in writes}, adv)
    if NOTES_REF in adv and adv[NOTES_REF] != repo.read_ref(tracking_notes(remote)):
        specs.append(f"+{NOTES_REF}:{tracking_notes(remote)}")
    if specs:
        from . import progress

        shown = progress.meter(f"fetch: refs from {remote}", len(specs))  # a line when it took over a second
        _fetch_refs(repo, remote, specs)
        shown.done()
    fault("fetch.after-fetch")
    after = repo.refs_under(prefix)
    junk = {name: oid for name, oid in after.items() if name not in held and not fetchable(PREFIX + name[len(prefix):])}
    if junk:  # arrived though no checkpoint name: out again, so nothing reads it or stands in the way
        try:
            repo.update_refs([(name, None, oid) for name, oid in junk.items()], reason=f"ckpt: fetch from {remote}: not a checkpoint name")
        except CkptError:
            pass  # left as an older git ckpt left such names: read by nothing, removed when in the way
    updates = []
    for name, oid in sorted(after.items(), key=lambda kv: _ref_key(kv[0])):
        old = held.get(name)
        if old != oid and name not in junk and fetchable(PREFIX + name[len(prefix):]):
            ref = PREFIX + name[len(prefix):]
            updates.append(RefUpdate(ref, old, oid, fetch_status(repo, ref, old, oid)))
    ignored = sorted({name for name in adv if name.startswith(PREFIX) and not fetchable(name)}
                     | {PREFIX + name[len(prefix):] for name in junk})
    merged = _merge_fetched_notes(repo, remote)
    result = FetchResult(remote, updates, merged, ignored, removed)
    # Recorded in the current task's ledger when that task exists: a fetch alone never creates
    # a task (whose ledger a later push would send and collide on).
    if (updates or merged.added or removed) and repo.read_ref(store.log_ref(task)):
        problem = ledger.append_or_warn(repo, task, "fetch", fetch_event(result))
        if problem:
            result.warnings.append(problem)
    return result


def _merge_fetched_notes(repo: Repo, remote: str) -> NotesMerge:
    """:func:`merge_notes` of ``remote``'s notes as just fetched (``refs/notes/ckpt-remotes/R``).
    Notes that are no notes commit (a tree or blob a remote sent) are ignored, and their tracking
    ref is deleted: nothing that was said to be ignored is kept."""
    ref = tracking_notes(remote)
    theirs = repo.read_ref(ref)
    merged = merge_notes(repo, theirs, remote)
    if merged.problem and theirs:
        with contextlib.suppress(CkptError):  # only a tracking ref: the next fetch brings it again
            repo.update_refs([(ref, None, theirs)], reason=f"ckpt: {remote}'s notes are no notes commit")
    return merged


def _remove_clashes(repo: Repo, remote: str, held: dict[str, str], writes: set[str], adv: dict[str, str]) -> list[RefUpdate]:
    """Delete the remote-tracking refs (``held``, updated in place) that clash with a name the
    fetch may write (``writes``, tracking names; :func:`_clashes`), in one ref transaction
    compared with the values read, before ``git fetch`` (which fails on such a clash, and
    ``git remote prune`` does not reach these refs).  Returns them, each with its reason."""
    prefix = tracking_prefix(remote)
    drops = []
    for name, blocked in sorted(_clashes(set(held), writes).items()):
        gone = "" if PREFIX + name[len(prefix):] in adv else f"{remote} no longer has it, and "
        drops.append(RefUpdate(name, held[name], None, "removed",
                               f"{gone}{PREFIX}{blocked[len(prefix):]} from {remote} needs its place (a ref and a directory of refs cannot share a name)"))
    if drops:
        repo.update_refs([(u.ref, None, u.old) for u in drops], reason=f"ckpt: fetch from {remote}: remove clashing refs")
        for u in drops:
            del held[u.ref]
    return drops


def fetch_event(result: FetchResult) -> dict[str, Any]:
    """The data of the ``fetch`` ledger event for ``result``, bounded whatever the remote holds,
    so it always fits :data:`git_ckpt.model.MAX_EVENT`: ``remote``; ``tasks``, task → its refs
    that changed (:func:`ref_summary`), for the first :data:`LEDGER_TASKS` tasks by name, and
    ``tasks_omitted``, how many more; ``notes_added``; ``ignored``, how many of the remote's
    refs were not fetched (when any); ``removed``, the first :data:`LEDGER_NAMES` remote-tracking
    refs deleted (:func:`bounded_names`) and ``removed_count`` (when any).  Only names
    :func:`fetchable` accepts reach ``tasks`` (a task name is at most 100 characters)."""
    by_task: dict[str, list[str]] = {}
    for u in result.updates:
        by_task.setdefault(u.ref[len(PREFIX):].rpartition("/")[0], []).append(u.ref)
    names = sorted(by_task)
    data: dict[str, Any] = {
        "remote": result.remote,
        "tasks": {t: ref_summary(by_task[t], f"{PREFIX}{t}/") for t in names[:LEDGER_TASKS]},
    }
    if len(names) > LEDGER_TASKS:
        data["tasks_omitted"] = len(names) - LEDGER_TASKS
    data["notes_added"] = result.notes.added
    if result.ignored:
        data["ignored"] = len(result.ignored)
    if result.removed:
        data["removed"] = bounded_names([u.ref for u in result.removed])
        data["removed_count"] = len(result.removed)
    return data


def bounded_names(names: list[str], limit: int = LEDGER_NAMES, width: int = LEDGER_NAME_WIDTH) -> list[str]:
    """The first ``limit`` of ``names``, each cut to ``width`` characters (ending in ``...``
    when cut): how a ledger event lists names a remote or another tool chose, whose number and
    length nothing else bounds (the event counts them separately)."""
    out = []
    for n in names[:limit]:
        n = n.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")  # bytes that were not UTF-8: \xNN
        out.append(n if len(n) <= width else n[:width - 3] + "...")
    return out


# ---------------------------------------------------------------------------- push


LEDGER_SPANS = 100  # number ranges a ledger event lists per task (the rest are counted)


def ref_summary(refs: list[str], prefix: str) -> dict[str, Any]:
    """What a ledger event says about the refs of one task (``prefix`` = ``refs/ckpt/T/``) a push
    sent or a fetch brought: ``checkpoints``, their numbers as ranges (``"1-20000,20003"``), and
    ``refs``, the other refs by name, so an event stays small however many checkpoints went.
    Bounded however the numbers fall: at most :data:`LEDGER_SPANS` ranges (then
    ``checkpoints_omitted`` counts the checkpoints of the rest) and :data:`LEDGER_NAMES` other
    refs (:func:`bounded_names`; then ``refs_omitted`` counts the rest)."""
    numbered = {r: ref_number(r[len(prefix):]) if r.startswith(prefix) else None for r in refs}
    nums = sorted(n for n in numbered.values() if n is not None)
    others = [r for r, n in numbered.items() if n is None]
    spans: list[str] = []
    i = 0
    while i < len(nums) and len(spans) < LEDGER_SPANS:
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        spans.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    out: dict[str, Any] = {"checkpoints": ",".join(spans), "refs": bounded_names(others)}
    if i < len(nums):
        out["checkpoints_omitted"] = len(nums) - i
    if len(others) > LEDGER_NAMES:
        out["refs_omitted"] = len(others) - LEDGER_NAMES
    return out


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
        result.notes = _merge_fetched_notes(repo, remote)
    ours = repo.read_ref(NOTES_REF)
    notes_up = RefUpdate(NOTES_REF, theirs, ours, "new" if theirs is None else "fast-forward") if ours and ours != theirs else None
    if result.notes.problem:
        # their notes ref is no notes commit: ours cannot fast-forward it, and would be refused
        # with every checkpoint ref of this atomic push; the checkpoints go, the results stay
        notes_up = None
        result.notes.problem += ("; your verifier results were not pushed (a git admin of the remote can delete "
                                 f"its {NOTES_REF}: git update-ref -d {NOTES_REF})")
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
