"""Verifier results as notes on checkpoint commits in ``refs/notes/ckpt``.

A note is one JSON object per line, appended.  Appends build the notes commit themselves and
swap ``refs/notes/ckpt`` with compare-and-swap (``git notes add`` and pygit2's ``create_note``
overwrite blindly), retrying on the new value, so concurrent verifiers never lose a line.
The notes tree uses git's flat layout (one blob per annotated object, named by its id) and
reads fan-out layouts too, so ``git log --notes=ckpt`` and ``git notes merge`` work on it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Hashable, Literal, Sequence

import msgspec

from .gitcore import Repo
from .model import ObjectId, Short, decode_json, digest, escape
from .store import NOTES_REF

MAX_NOTE = 64 * 1024 * 1024  # bytes of one note read; the rest is ignored (and warned about)


def result_id(line: dict[str, Any]) -> str:
    """sha256 of a result line's deterministic encoding: what a ``verify`` ledger event records
    (``result``) to say this repository's own ``verify`` wrote that line."""
    return digest(line)


class ResultLine(msgspec.Struct, kw_only=True, frozen=True):
    """One verifier result line of a note, as validated at decode (the agreed shape written by
    :func:`git_ckpt.verify.result_line`).  Unknown keys are allowed (a newer writer); a line whose
    known keys have the wrong type or are out of range is skipped by :func:`parse_lines`."""

    schema: Literal["ckpt/1"] = "ckpt/1"
    checkpoint: Annotated[str, msgspec.Meta(max_length=300)] = ""
    verifier: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")]
    definition: Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$")] = "0" * 64
    tree: ObjectId | Literal[""] = ""
    overlay: Annotated[str, msgspec.Meta(pattern=r"^(?:[0-9a-f]{64})?$")] = ""
    status: Literal["passed", "failed", "timeout", "error", "interrupted", "changed-files"]
    exit_code: Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31)] = 0
    duration: Annotated[float, msgspec.Meta(ge=0, le=10**9)] = 0.0
    started_at: Short = ""
    recorded_at: Short = ""
    host: Short = ""
    log: ObjectId | Literal[""] | None = None
    reused: bool = False
    required: bool = True


def recorded_key(line: dict[str, Any]) -> str:
    """When a result line was recorded, as a sortable RFC 3339 UTC text: its ``recorded_at``
    (written by ``verify`` when it appends the line, also for a result reused from another
    checkpoint), else its ``started_at`` (lines written before ``recorded_at`` existed: a
    reused copy then carries the original run's start), else ""."""
    for key in ("recorded_at", "started_at"):
        value = line.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def verifier_name(line: dict[str, Any]) -> str | None:
    """The verifier a result line is about, or None when it names none (a string only)."""
    name = line.get("verifier")
    return name if isinstance(name, str) else None


def pick_latest(lines: Sequence[dict[str, Any]], key: Callable[[dict[str, Any]], Hashable | None] = verifier_name,
                *, current: Sequence[bool] | None = None, local: Sequence[bool] | None = None) -> dict[Any, int]:
    """The one rule every view and check uses to say which result line is "the" result of a
    verifier: per ``key`` (default: the verifier name; None skips a line), the index in
    ``lines`` of the line that ranks highest by, in order,

    1. applying to the content in question (``current[i]``: about that tree and overlay),
    2. being recorded by this repository's own ``verify`` (``local[i]``; fetched lines are
       shown only when there is no own one),
    3. when it was recorded (:func:`recorded_key`; a reused result counts from when it was
       reused, not from when its original run started),
    4. its position in ``lines`` (the later wins: callers list lines oldest first).

    ``current``/``local`` None: that criterion does not separate lines.  Raises nothing;
    a line without a usable ``key`` is left out."""
    best: dict[Any, tuple[tuple[bool, bool, str, int], int]] = {}
    for i, ln in enumerate(lines):
        k = key(ln)
        if k is None:
            continue
        rank = (bool(current[i]) if current is not None else False, bool(local[i]) if local is not None else False,
                recorded_key(ln), i)
        if k not in best or rank > best[k][0]:
            best[k] = (rank, i)
    return {k: i for k, (_rank, i) in best.items()}


_warned: set[str] = set()


def _warn_once(ref: str, target: str, n: int, why: str) -> None:
    """One ``warning:`` line per process and notes ref for skipped lines (stderr; JSON on stdout
    stays clean)."""
    if ref in _warned:
        return
    _warned.add(ref)
    print(f"warning: skipping malformed result line(s) in {ref} (first: the note on {target[:12]}, line {n}: {escape(why)[:200]})",
          file=sys.stderr)


def _locate(repo: Repo, notes_commit: str | None, target: str) -> tuple[str | None, bytes]:
    """Where the note on ``target`` lives in the notes tree and its bytes (b"" when there is
    none): the first of the flat, 2/38 and 2/2/36 layouts git itself reads that holds a blob,
    as :func:`note_map` finds it; a note larger than :data:`MAX_NOTE` is no note (warned)."""
    if not notes_commit:
        return None, b""
    tree = repo.tree_of(notes_commit)
    for name in (target, f"{target[:2]}/{target[2:]}", f"{target[:2]}/{target[2:4]}/{target[4:]}"):
        entry = repo.tree_entry(tree, name)
        if entry is None or entry.mode not in NOTE_MODES:
            continue
        return name, _read_note(repo, entry.oid, target)
    return None, b""


def _read_note(repo: Repo, blob: str, target: str, ref: str = NOTES_REF) -> bytes:
    """The bytes of note ``blob`` (on ``target``), or b"" (warned) when it is larger than
    :data:`MAX_NOTE`: never read into memory, and the same for every reader and the merge."""
    if repo.blob_size(blob) > MAX_NOTE:
        _warn_once(ref, target, 0, f"note larger than {MAX_NOTE} bytes; ignored")
        return b""
    return repo.read_blob(blob)


def _note_blob(repo: Repo, notes_commit: str | None, target: str) -> bytes:
    return _locate(repo, notes_commit, target)[1]


def read_lines(repo: Repo, target: str, ref: str = NOTES_REF) -> list[dict[str, Any]]:
    """The valid result lines of the note on commit ``target`` (oldest first); [] when none.

    A malformed line (not JSON, not an object, or not a :class:`ResultLine`) is skipped with one
    warning per process: a teammate's or a broken tool's line never makes ``check``, ``list``,
    ``verify`` or the gate fail."""
    return parse_lines(_note_blob(repo, repo.read_ref(ref), target), target, ref)


def parse_lines(data: bytes, target: str, ref: str = NOTES_REF) -> list[dict[str, Any]]:
    """:func:`read_lines` of note bytes ``data`` already read (the note on ``target`` in ``ref``).

    Each returned dict is a line exactly as stored (so its result id, a hash of it, is stable)
    whose known keys passed :class:`ResultLine`."""
    out: list[dict[str, Any]] = []
    if len(data) > MAX_NOTE:
        _warn_once(ref, target, 0, f"note larger than {MAX_NOTE} bytes; ignored")
        return out
    for n, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            decode_json(line, ResultLine)
            obj = decode_json(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            _warn_once(ref, target, n, str(exc))
            continue
        if not isinstance(obj, dict):
            _warn_once(ref, target, n, "not a JSON object")
            continue
        out.append(obj)
    return out


def note_blobs(repo: Repo, ref: str = NOTES_REF) -> dict[str, str]:
    """Every note in ``ref`` at once: :func:`note_map` of its commit (``git ckpt list``)."""
    return note_map(repo, repo.read_ref(ref))


def note_map(repo: Repo, notes_commit: str | None) -> dict[str, str]:
    """Annotated object id → note blob id of a notes commit, exactly as :func:`read_lines`
    finds each note: a blob entry (``NOTE_MODES``) whose path is a lowercase hex object id of
    this repository's format in the flat, 2/38 or 2/2/36 layout, the shallowest winning.  Any
    other entry (a tree where a note should be, a 1/39 or 3/37 split, an upper-case name) is
    no note for anyone: the merge of a fetched notes ref sees what every reader sees.  One
    walk instead of a lookup per object."""
    if not notes_commit:
        return {}
    found: dict[str, tuple[int, str]] = {}
    hexsz = repo.object_format.hexsz

    def walk(tree: str, prefix: str, depth: int) -> None:
        for entry in repo.tree_list(tree):
            part = entry.path.decode("ascii", "replace")
            name = prefix + part
            if entry.is_tree:
                if depth < 2 and len(part) == 2 and _HEX.fullmatch(part):
                    walk(entry.oid, name, depth + 1)
            elif (entry.mode in NOTE_MODES and len(name) == hexsz and _HEX.fullmatch(part)
                  and depth < found.get(name, (3, ""))[0]):
                found[name] = (depth, entry.oid)

    walk(repo.tree_of(notes_commit), "", 0)
    return {k: v for k, (_d, v) in found.items()}


def append_line(repo: Repo, target: str, line: bytes, ref: str = NOTES_REF) -> str:
    """Append one line (no newline inside) to the note on ``target``; returns the notes commit.

    Compare-and-swap on ``ref``, rebuilt on the new value when another process wrote first.
    """
    assert b"\n" not in line

    def build(old: str | None) -> tuple[str, str]:
        where, existing = _locate(repo, old, target)
        if existing and not existing.endswith(b"\n"):
            existing += b"\n"
        blob = repo.blob(existing + line + b"\n")
        tree = repo.tree_with(old, where or target, 0o100644, blob)
        commit = repo.commit(tree, [old] if old else [], "Notes added by 'git ckpt'\n")
        return commit, commit

    return repo.swap(ref, build, reason="ckpt: add result", step="notes.before-ref")


# ------------------------------------------------------------------------------ notes merge
# (``git ckpt fetch`` merges a remote's notes into ``refs/notes/ckpt`` so no line of either side
# is lost; :mod:`git_ckpt.remote` calls :func:`merge_notes`.)

_HEX = re.compile(r"[0-9a-f]+")
NOTE_MODES = (0o100644, 0o100755)  # a note is a blob; any other entry is none


@dataclass
class NotesMerge:
    """What merging a remote's notes did: ``kind`` (``none``, ``fast-forward``, ``merge``),
    ``commit`` (our notes commit afterwards), ``added`` (result lines new to us)."""

    kind: str = "none"
    commit: str | None = None
    added: int = 0
    problem: str | None = None  # why the remote's notes were not merged (said as a warning)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"kind": self.kind, "commit": self.commit, "added": self.added, "problem": self.problem}




def _lines(repo: Repo, blob: str | None, target: str = "") -> set[bytes]:
    if not blob:
        return set()
    return {ln for ln in _read_note(repo, blob, target).split(b"\n") if ln.strip()}


def _line_key(line: bytes) -> tuple[str, bytes]:
    try:
        obj = decode_json(line)
    except msgspec.DecodeError:
        return ("", line)
    return (recorded_key(obj) if isinstance(obj, dict) else "", line)


def cat_sort_uniq(*notes: bytes) -> bytes:
    """Git's ``cat_sort_uniq`` notes merge over our JSON lines: the union of the lines, each once,
    empty lines dropped, newline-terminated, sorted.  The sort key is when the result was
    recorded (:func:`recorded_key`) and then the bytes (git sorts by bytes only), so both sides converge on the
    same bytes and the newest result stays last, as readers of the note expect."""
    lines = {ln for note in notes for ln in note.split(b"\n") if ln.strip()}
    return b"".join(ln + b"\n" for ln in sorted(lines, key=_line_key))


def _merge_commit(repo: Repo, ours: str, theirs: str, remote: str) -> str:
    a, b = note_map(repo, ours), note_map(repo, theirs)
    entries: list[tuple[int, str, bytes]] = []
    for target in sorted(a.keys() | b.keys()):
        x, y = a.get(target), b.get(target)
        if x == y or y is None or repo.blob_size(y) > MAX_NOTE:  # (a note no reader reads is none)
            blob = x
        elif x is None:
            blob = y
        else:
            blob = repo.blob(cat_sort_uniq(_read_note(repo, x, target), _read_note(repo, y, target)))
        if blob is None:
            continue
        entries.append((0o100644, blob, target.encode()))
    tree = repo.mktree(entries)
    return repo.commit(tree, [ours, theirs], f"Notes merged by 'git ckpt' from {remote} (cat_sort_uniq)\n")


def _keeps_every_line(repo: Repo, ours: str, theirs: str) -> bool:
    """Whether notes commit ``theirs`` still holds every line of every note of ``ours``."""
    a, b = note_map(repo, ours), note_map(repo, theirs)
    return all(x == b.get(t) or _lines(repo, x, t) <= _lines(repo, b.get(t), t) for t, x in a.items())


def merge_notes(repo: Repo, theirs: str | None, remote: str) -> NotesMerge:
    """Merge the notes commit ``theirs`` into ``refs/notes/ckpt`` so no line of either side is
    lost: a fast-forward when one side contains the other, otherwise a merge commit (parents
    ours, theirs) whose notes are :func:`cat_sort_uniq` of both, as ``git notes merge -s
    cat_sort_uniq`` would build.  Compare-and-swap on the ref, rebuilt when another process
    (a verifier appending a result) wrote first.
    """
    if theirs and (kind := repo.object_type(theirs)) != "commit":
        # a notes ref is a commit (git notes writes nothing else): a tree or blob a remote sent
        # would become our notes ref and every later result write would fail on it
        return NotesMerge("none", repo.read_ref(NOTES_REF), 0,
                          problem=f"the notes {remote} sent are a {kind or 'missing object'}, not a notes commit: ignored")

    def build(ours: str | None) -> tuple[str | None, NotesMerge]:
        if not theirs or theirs == ours or (ours and repo.fast_forwards(ours, theirs)):
            return ours, NotesMerge("none", ours, 0)
        if ours is None or (repo.fast_forwards(theirs, ours) and _keeps_every_line(repo, ours, theirs)):
            new, kind = theirs, "fast-forward"
        else:
            # Their history may have removed or rewritten lines (``git notes remove``, a rewritten
            # notes ref): never adopt it; merge, so every local line stays.
            new, kind = _merge_commit(repo, ours, theirs, remote), "merge"
        mine, merged = note_map(repo, ours), note_map(repo, new)
        added = sum(len(_lines(repo, blob, t) - _lines(repo, mine.get(t), t)) for t, blob in merged.items() if blob != mine.get(t))
        return new, NotesMerge(kind, new, added)

    return repo.swap(NOTES_REF, build, reason=f"ckpt: merge notes from {remote}", step="notes-merge.before-ref")
