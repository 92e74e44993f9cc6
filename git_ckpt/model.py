"""Every stored structure, as msgspec Structs with deterministic encoding.

Paths in stored JSON are strings: a path that is valid UTF-8 is stored as itself, any other byte
string as ``"\\u0000b64:" + base64`` (a NUL never occurs in a git path, so this cannot collide).
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import msgspec

SCHEMA = "ckpt/1"
KINDS = ("manual", "auto", "pre-restore")

def _plain(obj: Any) -> Any:
    """msgspec's hook for our ``str`` subclasses (:class:`git_ckpt.gitcore.Oid`, ``RefName``):
    encoded as the plain strings they are."""
    if isinstance(obj, str):
        return str(obj)
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


_encoder = msgspec.json.Encoder(order="deterministic", enc_hook=_plain)


def encode_json(obj: Any) -> bytes:
    """Deterministic JSON bytes of ``obj`` (sorted keys), no newline: what ``--json`` prints."""
    return _encoder.encode(obj)


def to_builtins(obj: Any) -> Any:
    """``msgspec.to_builtins`` that takes our ``str`` subclasses (``Oid``, ``RefName``): the
    Structs as plain dicts and lists, for JSON output."""
    return msgspec.to_builtins(obj, enc_hook=_plain)


def encode(obj: Any) -> bytes:
    """Deterministic JSON bytes of ``obj`` (sorted keys), newline-terminated."""
    return _encoder.encode(obj) + b"\n"


def digest(obj: Any) -> str:
    """sha256 hex of :func:`encode` (obj)."""
    return hashlib.sha256(_encoder.encode(obj)).hexdigest()


def path_to_str(path: bytes) -> str:
    """Encode a git path (bytes) for JSON; reversible with :func:`path_from_str`."""
    try:
        return path.decode("utf-8")
    except UnicodeDecodeError:
        return "\0b64:" + base64.b64encode(path).decode()


def path_from_str(text: str) -> bytes:
    """Inverse of :func:`path_to_str`."""
    if text.startswith("\0b64:"):
        return base64.b64decode(text[5:])
    return text.encode("utf-8")


def path_display(path: bytes) -> str:
    """A path for humans: UTF-8 where possible, ``\\xNN`` escapes elsewhere, control chars escaped."""
    text = path.decode("utf-8", "backslashreplace")
    if any(ord(c) < 32 or c == "\x7f" for c in text):
        text = text.encode("unicode_escape").decode("ascii")
    return text


class OverlayFile(msgspec.Struct, kw_only=True, frozen=True):
    """One overlay entry: ``kind`` is ``file`` or ``symlink``; ``sha256`` of the content or link target."""

    path: str
    kind: str
    mode: int
    size: int
    sha256: str
    mtime: int = 0


class OverlayInfo(msgspec.Struct, kw_only=True):
    """The overlay policy in force at save time and what it selected."""

    include: list[str] = []
    exclude: list[str] = []
    max_file_size: int = 0
    files: list[OverlayFile] = []
    digest: str = ""
    skipped: list[str] = []


class Manifest(msgspec.Struct, kw_only=True):
    """``manifest.json`` of a checkpoint (immutable once written)."""

    schema: str = SCHEMA
    id: str
    task: str
    number: int
    kind: str = "manual"
    base: str | None = None
    branch: str | None = None
    created_at: str
    author: str
    host: str
    message: str = ""
    tree: str
    index_tree: str
    intent_to_add: list[str] = []
    skip_worktree: list[str] = []
    skip_worktree_absent: list[str] = []
    assume_unchanged: list[str] = []
    worktree: str | None = None  # the worktree root it was saved in (shown when restored elsewhere)
    conflicts: list[str] = []
    merge_heads: list[str] = []
    raw: list[str] = []
    skipped: list[str] = []
    overlay: OverlayInfo = msgspec.field(default_factory=OverlayInfo)
    state: str = ""
    next: str | None = None
    hypothesis: str | None = None
    ledger_head: str | None = None
    agent: str | None = None  # the coding agent whose hook saved it (claude-code, codex, ...)
    agent_session: str | None = None  # that agent's session id, from the hook's input


class Evidence(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A pointer to what backs a card entry: a checkpoint id, a verifier result, a file, or text."""

    checkpoint: str | None = None
    result: str | None = None
    text: str | None = None
    commit: str | None = None  # the checkpoint commit id (so a pruned or renamed checkpoint is still named)
    verifier: str | None = None  # with ``result`` (its status): a verifier result on ``checkpoint``
    log: str | None = None  # blob id of that verifier run's output
    file: str | None = None  # a worktree path


class CardItem(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A card entry: text plus optional status (assumptions) and evidence."""

    text: str
    status: str | None = None
    reason: str | None = None
    evidence: list[Evidence] = []
    at: str | None = None


class Card(msgspec.Struct, kw_only=True):
    """The task card (``card.json`` in every ledger commit)."""

    schema: str = "ckpt-card/1"
    task: str
    goal: str = ""
    constraints: list[str] = []
    acceptance: list[str] = []
    reads: list[str] = []
    facts: list[CardItem] = []
    decisions: list[CardItem] = []
    failed: list[CardItem] = []
    questions: list[CardItem] = []
    assumptions: list[CardItem] = []
    next: str | None = None
    hypothesis: str | None = None
    done: bool = False


class Event(msgspec.Struct, kw_only=True):
    """``event.json`` of a ledger commit.  ``hash`` = sha256 of the event encoded with ``hash=""``;
    ``prev`` = the previous event's ``hash`` (None for the first)."""

    schema: str = SCHEMA
    seq: int
    type: str
    task: str
    at: str
    host: str
    user: str
    data: dict[str, Any] = {}
    prev: str | None = None
    hash: str = ""

    def compute_hash(self) -> str:
        """The hash this event must carry."""
        return digest(msgspec.structs.replace(self, hash=""))


def decode_manifest(data: bytes) -> Manifest:
    """Decode ``manifest.json``; raises ``msgspec.DecodeError``/``ValidationError`` on bad input."""
    return msgspec.json.decode(data, type=Manifest)
