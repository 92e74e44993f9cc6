"""Verifier results as notes on checkpoint commits in ``refs/notes/ckpt``.

A note is one JSON object per line, appended.  Appends build the notes commit themselves and
swap ``refs/notes/ckpt`` with compare-and-swap (``git notes add`` and pygit2's ``create_note``
overwrite blindly), retrying on the new value, so concurrent verifiers never lose a line.
The notes tree uses git's flat layout (one blob per annotated object, named by its id) and
reads fan-out layouts too, so ``git log --notes=ckpt`` and ``git notes merge`` work on it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .errors import CorruptError
from .gitcore import Repo
from .store import NOTES_REF


def _locate(repo: Repo, notes_commit: str | None, target: str) -> tuple[str | None, bytes]:
    """Where the note on ``target`` lives in the notes tree (flat or fanned out) and its bytes."""
    if not notes_commit:
        return None, b""
    tree = repo.tree_of(notes_commit)
    for name in (target, f"{target[:2]}/{target[2:]}", f"{target[:2]}/{target[2:4]}/{target[4:]}"):
        entry = repo.tree_entry(tree, name)
        if entry is None:
            continue
        return name, repo.read_blob(entry.oid)
    return None, b""


def _note_blob(repo: Repo, notes_commit: str | None, target: str) -> bytes:
    return _locate(repo, notes_commit, target)[1]


def read_lines(repo: Repo, target: str, ref: str = NOTES_REF) -> list[dict[str, Any]]:
    """The JSON result lines of the note on commit ``target`` (oldest first); [] when none.

    A line that is not a JSON object raises :class:`CorruptError`.
    """
    return parse_lines(_note_blob(repo, repo.read_ref(ref), target), target, ref)


def parse_lines(data: bytes, target: str, ref: str = NOTES_REF) -> list[dict[str, Any]]:
    """:func:`read_lines` of note bytes ``data`` already read (the note on ``target`` in ``ref``)."""
    out = []
    for n, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = msgspec.json.decode(line)
        except msgspec.DecodeError:
            raise CorruptError(f"the note on {target[:12]} in {ref} is corrupt at line {n}", "inspect it with git notes --ref=ckpt show " + target[:12]) from None
        if not isinstance(obj, dict):
            raise CorruptError(f"the note on {target[:12]} in {ref} is corrupt at line {n}")
        out.append(obj)
    return out


def note_blobs(repo: Repo, ref: str = NOTES_REF) -> dict[str, str]:
    """Every note in ``ref`` at once: annotated object id → note blob id (flat and fanned-out
    layouts, as :func:`read_lines` finds them; the first layout wins, as there).  One walk of
    the notes tree instead of a lookup per object (``git ckpt list``)."""
    notes_commit = repo.read_ref(ref)
    if not notes_commit:
        return {}
    found: dict[str, tuple[int, str]] = {}

    def walk(tree: str, prefix: str, depth: int) -> None:
        for entry in repo.tree_list(tree):
            part = entry.path.decode("utf-8", "replace")
            name = prefix + part
            if entry.is_tree:
                if depth < 2 and len(part) == 2:
                    walk(entry.oid, name, depth + 1)
            elif len(name) == repo.object_format.hexsz and depth < found.get(name, (3, ""))[0]:
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
