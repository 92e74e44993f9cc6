"""Read-only views of checkpoints: ``list``, ``show``, ``status`` data as plain structures."""

from __future__ import annotations

from typing import Any

import calendar
import time
from dataclasses import dataclass, field


from . import notes, store
from .errors import CkptError
from .gitcore import Repo, ref_number
from .model import path_display, path_from_str, task_name_problem
from .store import Checkpoint


def age(created_at: str, now: float | None = None) -> str:
    """``3m``, ``2h``, ``5d`` since an RFC 3339 UTC time (``2026-11-30T05:00:00Z``; "?" when
    unreadable).  The usual zero-padded form is read by slicing; anything else goes through
    ``time.strptime`` (ten times slower: ``list`` calls this once a row)."""
    c = created_at
    try:
        if len(c) == 20 and c[4] + c[7] + c[10] + c[13] + c[16] + c[19] == "--T::Z" and (c[:4] + c[5:7] + c[8:10] + c[11:13] + c[14:16] + c[17:19]).isdecimal() and c.isascii():
            y, mo, d, h, mi, s = int(c[:4]), int(c[5:7]), int(c[8:10]), int(c[11:13]), int(c[14:16]), int(c[17:19])
            if not (1 <= mo <= 12 and 1 <= d <= calendar.monthrange(y, mo)[1] and h <= 23 and mi <= 59 and s <= 61):
                raise ValueError(c)
            t = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))
        else:
            t = calendar.timegm(time.strptime(created_at, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return "?"
    secs = max(0, int((now or time.time()) - t))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= size:
            return f"{secs // size}{unit}"
    return f"{secs}s"


def verifier_state(results: list[dict[str, Any]]) -> dict[str, str]:
    """Latest status per verifier name from a note's result lines (the newest recorded, as
    :func:`git_ckpt.notes.pick_latest` orders them; later lines win ties), in the words of
    :func:`git_ckpt.words.result_word` (``could not run``, not ``error``)."""
    from .words import result_word

    return {name: result_word(results[i].get("status", "?"), results[i].get("exit_code"))
            for name, i in sorted(notes.pick_latest(results).items(), key=lambda kv: kv[1])}


@dataclass
class Row:
    """One line of ``git ckpt list``."""

    id: str
    commit: str
    kind: str
    created_at: str
    message: str
    promoted: bool
    verifiers: dict[str, str] = field(default_factory=dict)
    agent: str | None = None
    agent_session: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id, "commit": self.commit, "kind": self.kind, "created_at": self.created_at,
            "message": self.message, "promoted": self.promoted, "verifiers": self.verifiers,
            "agent": self.agent, "agent_session": self.agent_session,
        }

    def made_by(self) -> str:
        """``codex 0199a2b3`` (the agent and the start of its session id), or ""."""
        return agent_label(self.agent, self.agent_session)


def agent_label(agent: str | None, session: str | None) -> str:
    """How list and show name the agent session that saved a checkpoint (stored text: control
    characters escaped)."""
    if not agent:
        return ""
    from .model import path_display

    text = f"{agent} {session[:8]}" if session else agent
    return path_display(text.encode("utf-8", "surrogateescape"))


def rows(repo: Repo, task: str, prefix: str = store.PREFIX, shown: str = "") -> list[Row]:
    """Every checkpoint of ``task`` (under ``prefix``), ascending by number
    (:func:`listing` of that one task)."""
    return listing(repo, [task], prefix, shown)[1]


def listing(repo: Repo, tasks: list[str] | None, prefix: str = store.PREFIX, shown: str = "") -> tuple[list[str], list[Row]]:
    """``(task names, rows)``: every checkpoint of ``tasks`` (None: of every task with a ref under
    ``prefix``, names sorted), by task in the order given, ascending by number; ids are
    ``{shown}T/N``.

    One ``git for-each-ref`` lists every ref under the tasks' prefixes and the notes ref with
    each object's type and size, and one ``git cat-file --batch`` streams the checkpoint commits
    (each distinct commit once, none over ``MAX_ROW_COMMIT`` bytes held: a crafted message of
    any size costs a read, not memory); a row comes from the ``Ckpt-Row`` line a save wrote at
    the end of the checkpoint commit's message (:func:`git_ckpt.model.row_from_message`),
    checked against the ref's ``T/N``.  A checkpoint without a usable one (saved by an older git
    ckpt, a commit made by another tool, one too large) is read from its manifest as before;
    one that cannot be read is a ``corrupt`` row carrying the error.  A task name that is not
    one (:func:`git_ckpt.model.task_name_problem`) is left out.  The notes tree is read once
    (:func:`git_ckpt.notes.note_blobs`), and only when ``refs/notes/ckpt`` exists.  Raises
    :class:`CkptError` when git fails."""
    from .model import MAX_ROW_COMMIT, row_from_message

    patterns = [prefix] if tasks is None else [f"{prefix}{t}/" for t in tasks]
    out = repo.git("for-each-ref", "--format=%(objectname) %(objecttype) %(objectsize) %(refname)",
                   *patterns, store.NOTES_REF).stdout
    listed: dict[str, dict[str, tuple[str, str]]] = {}  # task -> last ref component -> (oid, type)
    notes_commit = None
    wanted: dict[str, None] = {}  # commits to read, each once, in first-seen order
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        fields = line.split(" ", 3)  # a ref name holds no space (git check-ref-format)
        if len(fields) != 4:
            continue
        oid, kind, size, ref = fields
        if ref == store.NOTES_REF:
            notes_commit = oid
            continue
        task, sep, last = ref[len(prefix):].partition("/") if ref.startswith(prefix) else ("", "", "")
        if sep:
            listed.setdefault(task, {})[last] = (oid, kind)
            if kind == "commit" and size.isascii() and size.isdigit() and int(size) <= MAX_ROW_COMMIT and ref_number(last) is not None:
                wanted[oid] = None
    messages: dict[str, bytes] = {}
    for oid, kind, content in repo.iter_objects(list(wanted), MAX_ROW_COMMIT):
        if kind == "commit" and content is not None:
            _headers, _, message = content.partition(b"\n\n")
            messages[oid] = message
    found = {task: {last: (oid, kind, messages.get(oid, b"")) for last, (oid, kind) in refs.items()}
             for task, refs in listed.items()}
    names = sorted(t for t in found if not task_name_problem(t)) if tasks is None else tasks
    note_of: dict[str, str] = {}
    notes_error: Exception | None = None
    if notes_commit is not None:
        try:
            note_of = notes.note_blobs(repo)
        except (CkptError, KeyError, ValueError) as exc:  # an unreadable notes tree: say so per row
            notes_error = exc
    out_rows = []
    for task in names:
        refs = found.get(task, {})
        promoted = refs.get("promoted", ("", "", b""))[0]
        numbered = sorted((n, v) for last, v in refs.items() if (n := ref_number(last)) is not None)
        for n, (oid, kind, message) in numbered:
            cid = f"{task}/{n}"
            rec = row_from_message(message, cid) if kind == "commit" and message else None
            if rec is not None:
                row = Row(f"{shown}{cid}", oid, rec.kind, rec.created_at, rec.message, oid == promoted, {}, rec.agent, rec.agent_session)
            else:
                try:
                    cp = store.load(repo, oid, id=f"{shown}{cid}", ref=f"{prefix}{cid}")
                except CkptError as exc:
                    out_rows.append(Row(f"{shown}{cid}", oid, "corrupt", "", exc.message, False))
                    continue
                m = cp.manifest
                row = Row(cp.id, oid, m.kind, m.created_at, m.message, oid == promoted, {},
                          m.agent if isinstance(m.agent, str) else None, m.agent_session if isinstance(m.agent_session, str) else None)
            if shown:  # a teammate's message names their ids (T/1): here that is REMOTE:T/1
                row.message = store.shown_ids(f"{shown}{task}", row.message)
            if notes_commit is not None:
                try:
                    if notes_error is not None:
                        results = notes.read_lines(repo, oid)
                    else:
                        blob = note_of.get(oid)
                        results = notes.parse_lines(repo.read_blob(blob), oid) if blob else []
                except CkptError:
                    results = [{"verifier": "?", "status": "corrupt-note"}]
                row.verifiers = verifier_state(results)
            out_rows.append(row)
    return names, out_rows


def changed_files(repo: Repo, cp: Checkpoint) -> list[tuple[str, str]]:
    """``(status letter, path)`` of files the checkpoint's worktree changes relative to its base."""
    base_tree = repo.tree_of(cp.base) if cp.base else repo.empty_tree
    out = []
    for c in repo.diff_trees(base_tree, cp.tree):
        out.append((c.status, path_display(c.path)))
    return out


def show(repo: Repo, cp: Checkpoint) -> dict[str, Any]:
    """Everything ``git ckpt show`` prints, as JSON-ready data."""
    from .model import to_builtins

    m = cp.manifest
    try:
        results = notes.read_lines(repo, cp.commit)
    except CkptError as exc:
        results = [{"error": exc.message}]
    # a fetched checkpoint is promoted when its remote task's promoted ref names it, as list --remote shows
    promoted = repo.read_ref(store.promoted_ref(store.checkpoint_task(cp))) == cp.commit
    return {
        "id": cp.id,
        "commit": cp.commit,
        "manifest": to_builtins(m),
        "promoted": promoted,
        "changed": [{"status": s, "path": p} for s, p in changed_files(repo, cp)],
        "overlay": [{"path": path_display(path_from_str(f.path)), "kind": f.kind, "size": f.size} for f in m.overlay.files],
        "results": results,
    }
