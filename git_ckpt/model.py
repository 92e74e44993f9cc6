"""Every stored structure, as msgspec Structs with deterministic encoding.

Paths in stored JSON are strings: a path that is valid UTF-8 is stored as itself, any other byte
string as ``"\\u0000b64:" + base64`` (a NUL never occurs in a git path, so this cannot collide).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import itertools
import json
import re
from typing import Annotated, Any, Final, Literal, TypeVar, overload

import msgspec

SCHEMA: Final = "ckpt/1"
KINDS = ("manual", "auto", "pre-restore")
Kind = Literal["manual", "auto", "pre-restore"]

# ---------------------------------------------------------------------------- bounds of stored data
# Everything below is read back from objects a teammate (or a hostile tool) may have written, so
# each field is typed and bounded here, at decode time; the rest of the code receives valid values.
MAX_PATH = 4096  # bytes of one path (PATH_MAX)
MAX_TEXT = 64 * 1024  # characters of one free-text field (message, next, hypothesis, ...)
MAX_ITEMS = 1_000_000  # entries of one list
MAX_NUMBER = 10**9  # checkpoint numbers and ledger sequence numbers
MAX_SIZE = 1 << 40  # bytes a size field may claim

ObjectId = Annotated[str, msgspec.Meta(pattern=r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")]
Sha256 = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{64}$")]
TaskName = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")]
Number = Annotated[int, msgspec.Meta(ge=1, le=MAX_NUMBER)]
Text = Annotated[str, msgspec.Meta(max_length=MAX_TEXT)]
SHORT = 1024  # characters of a short free-text field (author, host, branch)
Short = Annotated[str, msgspec.Meta(max_length=SHORT)]
PathText = Annotated[str, msgspec.Meta(max_length=2 * MAX_PATH)]
PathList = Annotated[list[PathText], msgspec.Meta(max_length=MAX_ITEMS)]
_TASK_EXTRA = re.compile(r"^[0-9]+$|\.\.|\.lock$|\.$")


# ---------------------------------------------------------------------------- decoding bytes from outside
#: How deep JSON read from outside (a checkpoint, note, ledger, remote, state file, agent hook
#: input, MCP client) may nest: arrays and objects within each other.  What git ckpt writes nests
#: a few levels; deeper input is malformed, so that nothing walking a decoded value (escaping,
#: encoding, the parsers' own recursion) runs out of stack.
MAX_JSON_DEPTH: Final = 100
TOO_DEEP: Final = f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
_T = TypeVar("_T")
_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}


def nested_deeper_than(obj: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``obj`` (decoded builtins: what ``tomllib`` reads) holds dicts and lists nested
    more than ``limit`` deep; ``obj`` itself is level 1 when it is one.  Walks without recursion,
    in time linear in the containers' elements; raises nothing."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        item, depth = stack.pop()
        kids = item.values() if isinstance(item, dict) else item if isinstance(item, (list, tuple)) else None
        if kids is None:
            continue
        if depth > limit:
            return True
        stack.extend((k, depth + 1) for k in kids if isinstance(k, (dict, list, tuple)))
    return False


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # brackets inside strings are text
_OPEN_CLOSE = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[{]}")


def json_too_deep(data: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text ``data`` (UTF-8, already known to decode) nests arrays and objects
    more than ``limit`` deep, in what a typed decode keeps or skips alike.  Linear in ``data``,
    without recursion; raises nothing."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    steps = _JSON_STRING.sub(b"", data).translate(_OPEN_CLOSE, _NOT_BRACKETS)
    return max(itertools.accumulate(memoryview(steps).cast("b")), default=0) > limit


@overload
def decode_json(data: bytes) -> Any: ...
@overload
def decode_json(data: bytes, type: type[_T]) -> _T: ...
def decode_json(data: bytes, type: Any = Any) -> Any:
    """``msgspec.json.decode(data, type=type)`` for bytes from outside, the one way such bytes are
    decoded.  Raises ``msgspec.DecodeError`` for malformed JSON, JSON nested deeper than
    :data:`MAX_JSON_DEPTH` (or than the decoder's recursion goes: never ``RecursionError``) and
    ``msgspec.ValidationError`` for JSON not of ``type``; callers map both to their error."""
    decoder = _decoders.get(type)
    if decoder is None:
        decoder = _decoders.setdefault(type, msgspec.json.Decoder(type))
    try:
        obj = decoder.decode(data)
    except RecursionError:
        raise msgspec.DecodeError(TOO_DEEP) from None
    if json_too_deep(data):
        raise msgspec.DecodeError(TOO_DEEP)
    return obj


class NestedTooDeep(ValueError):
    """JSON nested deeper than :data:`MAX_JSON_DEPTH` (:func:`loads_json`)."""


def loads_json(data: bytes) -> Any:
    """``json.loads(data)`` for bytes from outside where the standard library's reading is wanted
    (lone surrogates and non-finite numbers are read, not refused: state files and settings
    written by ``json.dumps``), as UTF-8 with or without a byte order mark.  Raises
    ``ValueError``: ``json.JSONDecodeError`` for malformed JSON, :class:`NestedTooDeep` for JSON
    nested deeper than :data:`MAX_JSON_DEPTH` (never ``RecursionError``),
    ``UnicodeDecodeError`` for bytes that are not UTF-8."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        obj = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise NestedTooDeep(TOO_DEEP) from None
    if json_too_deep(data):
        raise NestedTooDeep(TOO_DEEP)
    return obj


def task_name_problem(name: str) -> str | None:
    """Why ``name`` is not a task name (git's ref-name rules on top of the pattern), or None."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", name) or _TASK_EXTRA.search(name):
        return f"invalid task name {name!r}"
    return None


def path_problem(text: str) -> str | None:
    """Why the stored path ``text`` may not name a worktree path, or None when it may: it must
    decode (:func:`path_from_str`), be non-empty, at most ``MAX_PATH`` bytes, relative, in normal
    form (no empty, ``.`` or ``..`` component), contain no NUL and no ``.git`` component in any
    letter case (``.GIT`` is ``.git`` on case-insensitive file systems).  These are the rules of
    git's own ``verify_path`` for index entries."""
    try:
        raw = path_from_str(text, strict=True)
    except ValueError:
        return "is not a valid encoded path"
    return raw_path_problem(raw)


def raw_path_problem(raw: bytes) -> str | None:
    """:func:`path_problem` of a path already in bytes (a tree entry's path, say)."""
    if not raw:
        return "is empty"
    if len(raw) > MAX_PATH:
        return f"is longer than {MAX_PATH} bytes"
    if b"\0" in raw:
        return "contains a NUL byte"
    if raw.startswith(b"/"):
        return "is absolute"
    parts = raw.split(b"/")
    if any(p in (b"", b".") for p in parts):
        return "is not in normal form"
    if any(p == b".." for p in parts):
        return "contains '..'"
    if any(p.lower() == b".git" for p in parts):
        return "points into .git"
    return None


def _check_paths(field: str, items: list[str]) -> None:
    for i, text in enumerate(items):
        problem = path_problem(text)
        if problem:
            raise ValueError(f"{field}[{i}] {_shown(text)} {problem}")


def _shown(text: str) -> str:
    return repr(escape(text[:120]))


# what a terminal must not be handed raw from stored text: C0, DEL and C1 controls, and the
# invisible format characters that reorder or hide what is shown (bidi embeddings, overrides and
# isolates, zero-width characters, the line and paragraph separators, the BOM), the
# "Trojan Source" set (CVE-2021-42574)
_INVISIBLE = ("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f"
              "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e007f"  # (+ soft hyphen, fillers, variation selectors, tags)
              "\ud800-\udfff")  # and lone surrogates: a byte that was not UTF-8 (os.fsdecode), shown as \udcff, never written raw
_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_INVISIBLE}]")


_CONTROL_NET = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_INVISIBLE}]")


def fit(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters (its end replaced by ``…``): for a field
    whose reader enforces that bound, written from something unbounded (a git identity)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def escape_controls(text: str) -> str:
    """:func:`escape` but keeping newlines and tabs: for whole blocks of human output."""
    if not _CONTROL_NET.search(text):
        return text
    return _CONTROL_NET.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def escape(text: str) -> str:
    """``text`` safe to print on a terminal: every control character (C0, DEL, C1; ESC
    included) shown as a visible escape (``\\n``, ``\\x1b``, ``\\u0085``).  Every string that
    came from stored data or a remote goes through this in human output; JSON keeps the data."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)



def _plain(obj: Any) -> Any:
    """msgspec's hook for our ``str`` subclasses (:class:`git_ckpt.gitcore.Oid`, ``RefName``):
    encoded as the plain strings they are."""
    if isinstance(obj, str):
        return str(obj)
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


_encoder = msgspec.json.Encoder(order="deterministic", enc_hook=_plain)


def encode_json(obj: Any) -> bytes:
    """Deterministic JSON bytes of ``obj`` (sorted keys), no newline: what ``--json`` prints.
    A string holding lone surrogates (bytes that were not UTF-8, decoded with
    ``surrogateescape``: a ref name or path someone else made) is written with each such byte
    as the text ``\\xNN``, as :func:`escape` shows it, instead of failing."""
    try:
        return _encoder.encode(obj)
    except UnicodeEncodeError:
        return _encoder.encode(_no_surrogates(to_builtins(obj)))


def _no_surrogates(obj: Any) -> Any:
    """``obj`` (JSON-ready builtins) with every lone surrogate in keys and strings replaced by
    ``\\xNN`` of the byte ``surrogateescape`` made it from (or ``\\uDXXX`` for any other)."""
    if isinstance(obj, str):
        if not any(0xD800 <= ord(c) <= 0xDFFF for c in obj):
            return obj
        return "".join(
            (f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else f"\\u{ord(c):04x}") if 0xD800 <= ord(c) <= 0xDFFF else c
            for c in obj)
    if isinstance(obj, dict):
        return {_no_surrogates(k): _no_surrogates(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_no_surrogates(v) for v in obj]
    return obj


def to_builtins(obj: Any) -> Any:
    """``msgspec.to_builtins`` that takes our ``str`` subclasses (``Oid``, ``RefName``): the
    Structs as plain dicts and lists, for JSON output."""
    return msgspec.to_builtins(obj, enc_hook=_plain)


def encode(obj: Any) -> bytes:
    """Deterministic JSON bytes of ``obj`` (sorted keys), newline-terminated: what is stored
    (events, cards, result lines).  Strict: a lone surrogate raises :class:`UnicodeEncodeError`
    rather than being stored altered."""
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


def path_from_str(text: str, strict: bool = False) -> bytes:
    """Inverse of :func:`path_to_str`.  ``strict`` raises ``ValueError`` for bad base64 and for
    text that is not valid UTF-8 (lone surrogates); records are validated with it at decode."""
    if text.startswith("\0b64:"):
        try:
            return base64.b64decode(text[5:], validate=True)
        except (binascii.Error, ValueError):
            if strict:
                raise ValueError("bad base64") from None
            return b""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        if strict:
            raise ValueError("not UTF-8") from None
        return text.encode("utf-8", "surrogateescape")


def path_display(path: bytes) -> str:
    """A path for humans: UTF-8 where possible, ``\\xNN`` escapes elsewhere, control chars escaped."""
    text = path.decode("utf-8", "backslashreplace")
    if any(ord(c) < 32 or 0x7f <= ord(c) <= 0x9f for c in text):
        text = text.encode("unicode_escape").decode("ascii")
    return text


class OverlayFile(msgspec.Struct, kw_only=True, frozen=True):
    """One overlay entry: ``kind`` is ``file`` or ``symlink``; ``sha256`` of the content or link target."""

    path: PathText
    kind: Literal["file", "symlink"]
    mode: Annotated[int, msgspec.Meta(ge=0, le=0o177777)]
    size: Annotated[int, msgspec.Meta(ge=0, le=MAX_SIZE)]
    sha256: Sha256
    mtime: Annotated[int, msgspec.Meta(ge=-(2**34), le=2**34)] = 0

    def __post_init__(self) -> None:
        _check_paths("path", [self.path])
        if self.kind == "symlink" and self.mode != 0o120000:
            raise ValueError(f"mode {self.mode:o} of symlink {_shown(self.path)} is not 120000")
        if self.kind == "file" and self.mode & ~0o7777 != 0o100000:
            raise ValueError(f"mode {self.mode:o} of file {_shown(self.path)} is not a regular file's")


class OverlayInfo(msgspec.Struct, kw_only=True):
    """The overlay policy in force at save time and what it selected."""

    include: Annotated[list[Short], msgspec.Meta(max_length=10_000)] = []
    exclude: Annotated[list[Short], msgspec.Meta(max_length=10_000)] = []
    max_file_size: Annotated[int, msgspec.Meta(ge=0, le=MAX_SIZE)] = 0  # informative only: caps are local
    files: Annotated[list[OverlayFile], msgspec.Meta(max_length=MAX_ITEMS)] = []
    digest: Annotated[str, msgspec.Meta(pattern=r"^(?:[0-9a-f]{64})?$")] = ""
    skipped: PathList = []

    def __post_init__(self) -> None:
        _check_paths("skipped", self.skipped)


class Manifest(msgspec.Struct, kw_only=True):
    """``manifest.json`` of a checkpoint (immutable once written)."""

    schema: Literal["ckpt/1"] = SCHEMA
    id: Annotated[str, msgspec.Meta(max_length=200)]
    task: TaskName
    number: Number
    kind: Kind = "manual"
    base: ObjectId | None = None
    branch: Short | None = None
    created_at: Short
    author: Short
    host: Short
    message: Text = ""
    tree: ObjectId
    index_tree: ObjectId
    intent_to_add: PathList = []
    skip_worktree: PathList = []
    skip_worktree_absent: PathList = []
    assume_unchanged: PathList = []
    worktree: Text | None = None  # the worktree root it was saved in (shown when restored elsewhere)
    conflicts: PathList = []
    merge_heads: Annotated[list[ObjectId], msgspec.Meta(max_length=1000)] = []
    raw: PathList = []
    skipped: PathList = []
    overlay: OverlayInfo = msgspec.field(default_factory=OverlayInfo)
    state: Annotated[str, msgspec.Meta(pattern=r"^(?:[0-9a-f]{64})?$")] = ""
    next: Text | None = None
    hypothesis: Text | None = None
    ledger_head: ObjectId | None = None
    agent: Short | None = None  # the coding agent whose hook saved it (claude-code, codex, ...)
    agent_session: Short | None = None  # that agent's session id, from the hook's input

    def __post_init__(self) -> None:
        problem = task_name_problem(self.task)
        if problem:
            raise ValueError(f"task: {problem}")
        if self.id != f"{self.task}/{self.number}":
            raise ValueError(f"id {_shown(self.id)} is not task/number ({self.task}/{self.number})")
        for name in ("intent_to_add", "skip_worktree", "skip_worktree_absent", "assume_unchanged", "conflicts", "raw", "skipped"):
            _check_paths(name, getattr(self, name))


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


MAX_MANIFEST = 64 * 1024 * 1024
#: The largest ``event.json`` and ``card.json`` of a ledger entry (bytes): a fetched ledger is
#: someone else's, and one blob can be shared by any number of its commits.
MAX_EVENT = 1 << 20
MAX_CARD = 8 << 20


def decode_manifest(data: bytes) -> Manifest:
    """Decode and validate ``manifest.json`` (every field typed and bounded, every path list
    checked by :func:`path_problem`); raises ``msgspec.DecodeError``/``ValidationError`` whose
    message names the field (``... - at `$.intent_to_add```), ``DecodeError`` for one nested too
    deeply (:func:`decode_json`)."""
    if len(data) > MAX_MANIFEST:
        raise msgspec.ValidationError(f"manifest.json is larger than {MAX_MANIFEST} bytes")
    return decode_json(data, Manifest)


# ---------------------------------------------------------------------------- the list row of a commit

ROW_KEY: Final = "Ckpt-Row"
MAX_ROW_LINE = 1024 * 1024  # bytes of the Ckpt-Row line read back (a 64 KiB message, escaped)
MAX_ROW_COMMIT = 2 * MAX_ROW_LINE  # bytes of a checkpoint commit list reads its row from (else the manifest)


class ListRow(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """What ``git ckpt list`` shows of a checkpoint, copied from its manifest into the last line
    of the checkpoint commit's message (``Ckpt-Row: {json}``, one line: JSON escapes newlines), so
    one ``git for-each-ref --format=%(contents)`` serves a listing without reading the meta commit,
    its tree and the manifest of each checkpoint.  The manifest stays the truth: a row that is
    missing, malformed or names another checkpoint is not used (:func:`row_from_message`).
    Unknown keys are allowed (a newer writer); the known ones are typed and bounded like the
    manifest's fields."""

    id: Annotated[str, msgspec.Meta(max_length=200)]
    kind: Kind
    created_at: Short
    message: Text = ""
    agent: Short | None = None
    agent_session: Short | None = None


def list_row(m: Manifest) -> ListRow:
    """The :class:`ListRow` of a checkpoint with manifest ``m``: its id, kind, created_at,
    message, agent and agent_session."""
    return ListRow(id=m.id, kind=m.kind, created_at=m.created_at, message=m.message, agent=m.agent,
                   agent_session=m.agent_session)


def row_line(m: Manifest) -> str:
    """The ``Ckpt-Row: {json}`` line for a checkpoint with manifest ``m`` (no newline):
    :func:`list_row` as deterministic JSON (defaults left out)."""
    return f"{ROW_KEY}: " + _encoder.encode(list_row(m)).decode("utf-8")


def row_from_message(message: bytes, expected_id: str) -> ListRow | None:
    """The :class:`ListRow` recorded in a checkpoint commit's ``message`` (bytes as stored), or
    None when there is none to trust: the last line is not ``Ckpt-Row: `` followed by valid JSON
    of that shape, it is longer than ``MAX_ROW_LINE``, or its id is not ``expected_id`` (the
    ``T/N`` of the ref it was reached by).  The caller then reads the manifest.  Never raises."""
    body = message[:-1] if message.endswith(b"\n") else message
    line = body.rpartition(b"\n")[2]
    head = ROW_KEY.encode() + b": "
    if not line.startswith(head) or len(line) > MAX_ROW_LINE:
        return None
    try:
        row = decode_json(line[len(head):], ListRow)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return row if row.id == expected_id else None
