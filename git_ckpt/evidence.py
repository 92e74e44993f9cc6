"""Which verifier results count: the evidence queries shared by verify, promote, the commit gate,
``handoff``, ``list``/``show``/``status`` and the MCP server.

A result is a JSON line in a checkpoint's note (``refs/notes/ckpt``).  Notes merge every
teammate's lines on ``fetch``, and anyone who can push can write any line, so a line is
*evidence* only when this repository's own ``verify`` recorded it: a ``verify`` event in a local
ledger (``refs/ckpt/T/log``, which fetch never writes) names its :func:`result_id`.  A line
counts for a checkpoint when it is about that checkpoint's tree and overlay digest and the
verifier's current :func:`definition_hash`; :func:`requirement` says whether every required
verifier has such a passing line (promotion, the gate, ``verify-commit``).

This module sits below :mod:`git_ckpt.verify` (which writes results) and
:mod:`git_ckpt.promote` (which acts on them); it imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import ledger, notes, store
from .notes import result_id as result_id
from .config import GIT_KEYS, Config, VerifierConfig
from .errors import CkptError
from .gitcore import Repo
from .model import digest
from .store import Checkpoint


def definition_hash(v: VerifierConfig) -> str:
    """sha256 of what decides a verifier's verdict: its command, environment and cwd."""
    return digest({"command": v.command, "env": dict(sorted(v.env.items())), "cwd": v.cwd})


def overlay_digest(cp: Checkpoint) -> str:
    """The overlay digest recorded in the checkpoint's manifest ("" when it has no overlay)."""
    return cp.manifest.overlay.digest if cp.manifest.overlay else ""


def latest_results(lines: list[dict[str, Any]], tree: str, overlay: str) -> dict[tuple[str, str], dict[str, Any]]:
    """The newest line per ``(verifier, definition)`` among ``lines`` about content
    ``(tree, overlay)``: newest by when it was recorded (:func:`git_ckpt.notes.pick_latest`,
    whatever order a notes merge left the lines in), file order breaking ties."""
    about_it = [ln for ln in lines if ln.get("tree") == tree and (ln.get("overlay") or "") == overlay]

    def key(ln: dict[str, Any]) -> tuple[str, str] | None:
        name, dh = ln.get("verifier"), ln.get("definition")
        return (name, dh) if isinstance(name, str) and isinstance(dh, str) else None

    return {k: about_it[i] for k, i in notes.pick_latest(about_it, key).items()}


def evidence_tasks(repo: Repo, cp: Checkpoint) -> list[str]:
    """The tasks whose ledgers hold the ``verify`` events of ``cp``'s results: its own task for a
    checkpoint of this repository, every local task for a fetched one (verified while some
    task was current)."""
    return [cp.manifest.task] if store.is_local(repo, cp) else store.tasks(repo)


def local_lines(repo: Repo, lines: list[dict[str, Any]], tasks: list[str], tree: str, overlay: str, *,
                isolated: bool = False) -> list[dict[str, Any]]:
    """The lines of ``lines`` about content ``(tree, overlay)`` that this repository's own
    ``verify`` recorded: a ``verify`` event in the ledger of one of ``tasks`` names their
    :func:`result_id`.  Lines merged in from a teammate's notes (``fetch``) are left out, and
    with ``isolated`` so are lines of runs in place (``[gate] isolated = true``)."""
    about = [ln for ln in lines if ln.get("tree") == tree and (ln.get("overlay") or "") == overlay]
    if not about:
        return []
    ids = [result_id(ln) for ln in about]
    known = ledger.result_ids(repo, tasks, set(ids), isolated=isolated)
    return [ln for ln, rid in zip(about, ids, strict=True) if rid in known]


def evidence(repo: Repo, cp: Checkpoint, lines: list[dict[str, Any]] | None = None, *,
             isolated: bool = False) -> list[dict[str, Any]]:
    """:func:`local_lines` of ``cp``'s note (read when ``lines`` is None) about its own content
    (with ``isolated``: of ``verify --isolated`` runs only).  Raises :class:`CorruptError` for a
    corrupt note."""
    if lines is None:
        lines = notes.read_lines(repo, cp.commit)
    return local_lines(repo, lines, evidence_tasks(repo, cp), cp.tree, overlay_digest(cp), isolated=isolated)


def about(lines: list[dict[str, Any]], tree: str, overlay: str | None) -> list[bool]:
    """Whether each line is about content ``(tree, overlay)`` (``overlay`` None: tree only)."""
    return [ln.get("tree") == tree and (overlay is None or (ln.get("overlay") or "") == overlay) for ln in lines]


def mark_local(repo: Repo, lines: list[dict[str, Any]], tasks: list[str], known: set[str] | None = None, *,
               tree: str, overlay: str | None = None) -> list[bool]:
    """For display (``show``, ``list``): whether each line is about this checkpoint's content
    (``tree`` and, when given, ``overlay`` digest) AND was recorded by this repository's own
    ``verify`` (False: fetched from a teammate, or a line copied onto this note from another
    checkpoint: shown marked, never evidence).  ``known`` is a set of result ids already
    collected (:func:`git_ckpt.ledger.result_ids` with ``want`` None)."""
    if not lines:
        return []
    ids = [result_id(ln) for ln in lines]
    if known is None:
        known = ledger.result_ids(repo, tasks, set(ids))
    return [ok and rid in known for rid, ok in zip(ids, about(lines, tree, overlay), strict=True)]


def shown_states(lines: list[dict[str, Any]], local: list[bool],
                 current: list[bool] | None = None) -> tuple[dict[str, str], list[str]]:
    """What ``list`` shows per verifier: the line :func:`git_ckpt.notes.pick_latest` picks (one
    about this checkpoint's content, ``current``, before one that is not; this repository's own,
    ``local``, before a fetched one; then the newest recorded), in the words of
    :func:`git_ckpt.words.result_word`; and the names shown from fetched results."""
    from .words import result_word

    picked = notes.pick_latest(lines, current=current, local=local)
    shown = {name: result_word(lines[i].get("status", "?"), lines[i].get("exit_code")) for name, i in picked.items()}
    return shown, sorted(name for name, i in picked.items() if not local[i])


def fetched_states(repo: Repo, rows: list[Any], tasks: list[str] | None) -> dict[str, tuple[dict[str, str], list[str]]]:
    """For ``list``: checkpoint commit → :func:`shown_states`, for rows (``.commit``,
    ``.verifiers``) that show a verifier state.  ``tasks`` are the ledgers holding the rows'
    results (None: every local task, for fetched checkpoints).  The ledgers are read once, and
    only when some row has a result."""
    out: dict[str, tuple[dict[str, str], list[str]]] = {}
    todo = [r for r in rows if r.verifiers]
    if not todo:
        return out
    known = ledger.result_ids(repo, store.tasks(repo) if tasks is None else tasks, None)
    for r in todo:
        try:
            lines = notes.read_lines(repo, r.commit)
            cp = store.load(repo, r.commit)
        except (CkptError, KeyError, ValueError):
            continue
        ovl = overlay_digest(cp)
        out[r.commit] = shown_states(lines, mark_local(repo, lines, [], known, tree=cp.tree, overlay=ovl), about(lines, cp.tree, ovl))
    return out


@dataclass
class Requirement:
    """Whether a checkpoint's content meets the required verifiers of a config.

    ``required`` names every required verifier; ``passed`` maps those with a passing result on
    this content and definition to that result line; ``missing`` maps the others to their latest
    status (``"no result"`` when none); ``foreign`` names the missing ones for which only a line
    this repository did not record (fetched from a teammate) says ``passed``."""

    required: list[str]
    passed: dict[str, dict[str, Any]] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    foreign: list[str] = field(default_factory=list)
    #: missing ones that passed only in place while ``[gate] isolated = true`` asks for isolated runs
    in_place: list[str] = field(default_factory=list)

    @property
    def satisfied(self) -> bool:
        """True when every required verifier passed (also when none is required)."""
        return not self.missing


def requirement(repo: Repo, cfg: Config, cp: Checkpoint) -> Requirement:
    """Evaluate the required verifiers of ``cfg`` against the results on ``cp``'s note: a result
    counts when this repository's own ``verify`` recorded it (:func:`evidence`),
    it is about ``cp``'s tree and overlay digest and the verifier's current definition, and the
    newest such line says ``passed``.  ``cfg`` is taken as given: callers check it is trusted
    (:func:`git_ckpt.trust.check`).  With ``[gate] isolated = true`` only lines of ``verify
    --isolated`` runs count (in place, ignored files no checkpoint holds can decide a verdict).
    Raises :class:`CorruptError` for a corrupt note."""
    req = Requirement([v.name for v in cfg.verifier if v.required])
    if not req.required:
        return req
    lines = notes.read_lines(repo, cp.commit)
    latest = latest_results(evidence(repo, cp, lines, isolated=cfg.gate.isolated), cp.tree, overlay_digest(cp))
    anywhere = latest_results(evidence(repo, cp, lines), cp.tree, overlay_digest(cp)) if cfg.gate.isolated else latest
    every = None
    for v in cfg.verifier:
        if not v.required:
            continue
        line = latest.get((v.name, definition_hash(v)))
        if line is not None and line.get("status") == "passed":
            req.passed[v.name] = line
        else:
            from .words import result_word

            req.missing[v.name] = result_word(line.get("status"), line.get("exit_code")) if line else "no result"
            here = anywhere.get((v.name, definition_hash(v)))
            if here is not None and here is not line and here.get("status") == "passed":
                req.in_place.append(v.name)
                continue
            if every is None:
                every = latest_results(lines, cp.tree, overlay_digest(cp))
            other = every.get((v.name, definition_hash(v)))
            if other is not None and other.get("status") == "passed":
                req.foreign.append(v.name)
    return req


def missing_text(req: Requirement) -> tuple[str, str]:
    """The first missing verifier and a phrase for it: ``no passing result`` / ``status S``,
    plus why a passing result there is does not count (:func:`not_counted`)."""
    name, status = next(iter(req.missing.items()))
    return name, ("no passing result" if status == "no result" else "status " + status) + not_counted(req, name)


def why_missing(req: Requirement) -> str:
    """``required verifier NAME has no result`` / ``… has status S`` for the first missing
    verifier of ``req``, plus why a passing result there is does not count (:func:`not_counted`):
    the reason the gate and ``verify-commit`` give."""
    name, status = next(iter(req.missing.items()))
    return (f"required verifier {name} has {'no result' if status == 'no result' else 'status ' + status}"
            + not_counted(req, name))


def not_counted(req: Requirement, name: str) -> str:
    """Why a passing result of verifier ``name`` does not count for ``req``, as a parenthesis
    with a leading space: only a fetched one passed (:data:`FETCHED`), only a run in place
    (:data:`IN_PLACE`); empty otherwise."""
    return FETCHED if name in req.foreign else IN_PLACE if name in req.in_place else ""


#: Why a result recorded elsewhere (fetched in a note) is not counted.
FETCHED = " (only a fetched result says passed: results recorded elsewhere are not evidence here)"


#: Why a result that passed in place is not counted.
IN_PLACE = (" (only a run in place passed: with [gate] isolated = true, or git config "
            + GIT_KEYS["gate", "isolated"] + " true, only git ckpt verify --isolated counts)")


def was_forced(repo: Repo, task: str, commit: str) -> bool:
    """Whether the newest ``promote`` event of ``task`` for ``commit`` was forced."""
    rec = ledger.find_last(repo, task, lambda ev: ev.type == "promote" and ev.data.get("commit") == commit)
    return bool(rec and rec.event.data.get("forced") is True)
