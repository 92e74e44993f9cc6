"""Scan what a push would expose for secrets, before it leaves the machine.

Only objects the remote does not have yet are scanned: ``git rev-list --objects TIPS --not
KNOWN`` lists them, where KNOWN are the commits the remote is known to hold (its advertised refs
we have locally, its remote-tracking refs).  Every new blob is scanned once, whatever its size,
name or encoding:

* its path is checked against the filename denylist (:data:`~git_ckpt.config.SECRET_PATTERNS`);
* **high-signal patterns** (:data:`HIGH_SIGNAL`: private-key headers, AWS/GitHub/GitLab/Slack/
  Google/Stripe keys) are searched in its raw bytes, in 4 MiB chunks with an overlap, text or
  binary, and again with NUL bytes removed (so UTF-16 and UTF-32 text is covered);
* text (UTF-8, or UTF-16/32 recognised by its byte-order mark or its NUL pattern and decoded)
  is scanned with the maintained ``detect-secrets`` library (its plugins but the noisy
  hex-entropy one; its filters, so ``# pragma: allowlist secret`` works as usual) over its first
  ``MAX_SCAN_BYTES`` (cut at a line end; detect-secrets reads about 10,000 lines a second, so
  beyond that only the high-signal patterns run).  The file is handed to it under a neutral name, so no file-name rule
  (lock files, "non-text" extensions) skips content we push.

An ``overlay.tar`` blob is opened (streamed) and each file in it is scanned under its own path.
Findings carry the path, the kind and the line, never the secret itself.
"""

from __future__ import annotations

import io
import os
import re
import tarfile
import tempfile
from dataclasses import dataclass, replace
from typing import Any, Iterator


from . import store
from .config import SecretNames
from .errors import CkptError
from .gitcore import OID_HEX, Repo
from .model import path_display

_CONTENT_SKIP = {"HexHighEntropyString"}
_OWN_SKIP = {"HexHighEntropyString", "Base64HighEntropyString"}

# Text is handed to detect-secrets in chunks of this size (cut at a line end); the high-signal
# patterns run over every byte of every blob in chunks of the same size, overlapping by OVERLAP.
MAX_SCAN_BYTES = 4 * 1024 * 1024
OVERLAP = 8192

HIGH_SIGNAL: list[tuple[str, re.Pattern[bytes]]] = [
    ("Private Key", re.compile(rb"-----BEGIN[ A-Z0-9]{0,40} PRIVATE KEY( BLOCK)?-----")),
    ("AWS Access Key", re.compile(rb"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])")),
    ("GitHub Token", re.compile(rb"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})")),
    ("GitLab Token", re.compile(rb"(?<![A-Za-z0-9_])glpat-[A-Za-z0-9_-]{20,}")),
    ("Slack Token", re.compile(rb"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("Google API Key", re.compile(rb"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}")),
    ("Stripe Access Key", re.compile(rb"(?<![A-Za-z0-9])(?:sk|rk)_live_[0-9A-Za-z]{24,}")),
]
# detect-secrets picks a parser by extension; these are kept, every other name becomes ".txt"
_PARSED_EXT = {".ini", ".cfg", ".conf", ".yaml", ".yml", ".json", ".toml", ".properties", ".env", ".py", ".js", ".ts", ".sh"}


def high_signal(data: bytes, base: int = 0) -> list[tuple[str, int]]:
    """``(kind, 1-based line)`` of every :data:`HIGH_SIGNAL` match in ``data`` and in ``data``
    with its NUL bytes removed (UTF-16/32 text of ASCII secrets); ``base`` lines precede it."""
    out = []
    for hay in (data, data.replace(b"\0", b"") if b"\0" in data else b""):
        for kind, rx in HIGH_SIGNAL:
            for m in rx.finditer(hay):
                hit = (kind, base + hay.count(b"\n", 0, m.start()) + 1)
                if hit not in out:
                    out.append(hit)
    return out


def decode_text(data: bytes) -> bytes | None:
    """``data`` as UTF-8 text to scan: itself when it has no NUL; UTF-16/32 (by byte-order mark,
    or by where its NUL bytes fall) transcoded; None for binary data."""
    if b"\0" not in data[:8000]:
        return data
    boms = ((b"\xff\xfe\0\0", "utf-32-le"), (b"\0\0\xfe\xff", "utf-32-be"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
    candidates = [enc for bom, enc in boms if data.startswith(bom)]
    head = data[:8000]
    if not candidates:
        if head[1::4].count(0) + head[2::4].count(0) + head[3::4].count(0) > 0.9 * 3 * len(head[::4]):
            candidates.append("utf-32-le")
        elif head[0::4].count(0) + head[1::4].count(0) + head[2::4].count(0) > 0.9 * 3 * len(head[::4]):
            candidates.append("utf-32-be")
        elif head[1::2].count(0) > 0.9 * len(head[1::2]):
            candidates.append("utf-16-le")
        elif head[0::2].count(0) > 0.9 * len(head[0::2]):
            candidates.append("utf-16-be")
    for enc in candidates:
        try:
            return data.decode(enc).lstrip("\ufeff").encode("utf-8")
        except UnicodeDecodeError:
            continue
    return None


def chunks(data: bytes, size: int = MAX_SCAN_BYTES) -> Iterator[tuple[int, bytes]]:
    """``(offset lines, chunk)`` pieces of ``data`` of about ``size`` bytes cut after a newline
    when there is one (a chunk never splits a line shorter than ``size``)."""
    pos, lines = 0, 0
    while pos < len(data):
        end = min(len(data), pos + size)
        if end < len(data):
            nl = data.rfind(b"\n", pos, end)
            if nl > pos:
                end = nl + 1
        piece = data[pos:end]
        yield lines, piece
        lines += piece.count(b"\n")
        pos = end


@dataclass(frozen=True)
class Finding:
    """A possible secret: ``path`` (display form), ``kind`` (e.g. ``AWS Access Key``), ``line``
    (1-based, 0 for a file name finding) and ``where`` (``worktree of T/N``, ``overlay of T/N``,
    ``history``, ...).  Never the secret value."""

    path: str
    kind: str
    line: int
    where: str

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"path": self.path, "kind": self.kind, "line": self.line, "where": self.where}

    def describe(self) -> str:
        """``path: kind (line N) [where]``."""
        at = f" (line {self.line})" if self.line else ""
        return f"{self.path}: {self.kind}{at} [{self.where}]"

    @property
    def checkpoints(self) -> list[str]:
        """The checkpoints holding it (``where`` is ``overlay of T/1, T/2``, ``worktree of …``);
        [] for one in the history, the ledger or the notes."""
        _what, sep, ids = self.where.partition(" of ")
        return ids.split(", ") if sep else []


def merged(findings: list[Finding]) -> list[Finding]:
    """``findings`` with those of one file (the same path, kind, line and place: ``overlay``,
    ``worktree``, …) in several checkpoints made one, naming every checkpoint holding it: an
    overlay file saved three times, in three different ``overlay.tar`` blobs, is one finding
    ``[overlay of T/1, T/2, T/3]``.  Order is kept (first appearance)."""
    out: dict[tuple[str, str, int, str], tuple[Finding, list[str]]] = {}
    for f in findings:
        what, sep, _ids = f.where.partition(" of ")
        key = (f.path, f.kind, f.line, what if sep else f.where)
        first, ids = out.setdefault(key, (f, []))
        ids += [i for i in f.checkpoints if i not in ids]
    return [replace(f, where=f"{key[3]} of {', '.join(ids)}") if ids else f for key, (f, ids) in out.items()]


def by_file(findings: list[Finding]) -> list[str]:
    """One line per file and place (``overlay``, ``worktree``, …): ``path: kind (line N), kind
    (lines N, M) [where of T/1, T/2]``, every detector that flagged the file named once with the
    lines it flagged in any version (a file three detectors flag is one line, not three), and
    every checkpoint holding a flagged version (its content may differ between them: each
    version was scanned).  Files in order of first appearance; detectors by name and
    checkpoints by task and number, whichever version was scanned first (CI found two orders)."""
    out: dict[tuple[str, str], tuple[dict[str, list[int]], list[str]]] = {}
    for f in findings:
        what, sep, _ids = f.where.partition(" of ")
        kinds, ids = out.setdefault((f.path, what if sep else f.where), ({}, []))
        ids += [i for i in f.checkpoints if i not in ids]
        lines = kinds.setdefault(f.kind, [])
        if f.line and f.line not in lines:
            lines.append(f.line)

    def kind(name: str, lines: list[int]) -> str:
        if not lines:
            return name
        return f"{name} (line{'s' if len(lines) > 1 else ''} {', '.join(map(str, sorted(lines)))})"

    def by_number(cid: str) -> tuple[str, int, str]:
        task, _, n = cid.rpartition("/")
        return (task, int(n) if n.isdigit() else -1, n)

    return [f"{path}: {', '.join(kind(k, kinds[k]) for k in sorted(kinds))} "
            f"[{place}{' of ' + ', '.join(sorted(ids, key=by_number)) if ids else ''}]"
            for (path, place), (kinds, ids) in out.items()]


def new_objects(repo: Repo, tips: list[str], known: list[str]) -> dict[str, bytes]:
    """Objects reachable from ``tips`` but not from ``known`` (``git rev-list
    --objects-edge-aggressive``, as a push computes what to pack):
    object id → the path git names it by (b"" for commits).  ``known`` ids missing locally are
    ignored.  Like git's own push negotiation this may list a few objects the remote has (never
    miss one it lacks): they are scanned needlessly, nothing more."""
    have = [k for k in dict.fromkeys(known) if repo.object_exists(k)]
    # rev-list marks only the trees of the negative tips themselves as known: add their parents
    # (a checkpoint's index and meta commits, a ledger's previous entry) so their trees count too.
    for k in list(have):
        if repo.object_type(k) == "commit":
            have += repo.read_commit(k).parents
    have = list(dict.fromkeys(have))
    data = "".join(f"{t}\n" for t in dict.fromkeys(tips)) + "".join(f"^{k}\n" for k in have)
    # --objects-edge-aggressive: the trees of every negative commit count as known (plain
    # --objects would list a blob again when it sits in a new tree of an unrelated commit).
    out = repo.git("rev-list", "--objects-edge-aggressive", "--stdin", input=data.encode()).stdout
    found: dict[str, bytes] = {}
    for line in out.split(b"\n"):
        if not line or line.startswith(b"-"):
            continue
        oid, _, name = line.partition(b" ")
        found.setdefault(oid.decode(), name)
    return found


class _Scanner:
    """detect-secrets over blobs, each written to a private temp file named like the original
    (detect-secrets picks transformers and filters by file name)."""

    def __init__(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="ckpt-scan-")
        self.n = 0
        self.names = SecretNames()

    def close(self) -> None:
        self.tmp.cleanup()

    def scan(self, path: bytes, data: bytes, where: str, *, ours: bool = False) -> list[Finding]:
        """Findings for one blob.  ``ours``: our own JSON (manifest, ledger, notes), full of
        hashes, is scanned without the entropy plugins (only free text can leak there)."""
        shown = path_display(path)
        found: list[Finding] = []
        if self.names.match_file(os.fsdecode(path)):
            found.append(Finding(shown, "file name on the secrets denylist", 0, where))
        seen_hs: set[tuple[str, int]] = set()
        for start in range(0, max(len(data), 1), MAX_SCAN_BYTES):  # raw bytes, overlapping windows
            window = data[max(0, start - OVERLAP): start + MAX_SCAN_BYTES]
            base = data.count(b"\n", 0, max(0, start - OVERLAP)) if start else 0
            for kind, line in high_signal(window, base):
                if (kind, line) not in seen_hs:
                    seen_hs.add((kind, line))
                    found.append(Finding(shown, kind, line, where))
        text = decode_text(data)
        if text is None or not text.strip():
            return found
        for base, piece in chunks(text):
            if base and piece is not None:
                break  # detect-secrets reads the first chunk; the high-signal patterns above read every byte
            for f in self._detect(path, piece, where, ours):
                f = Finding(f.path, f.kind, f.line + base, f.where)
                if f.kind in {k for k, _ in HIGH_SIGNAL} and any(k == f.kind and ln == f.line for k, ln in seen_hs):
                    continue
                if f not in found:
                    found.append(f)
        return found

    def _detect(self, path: bytes, data: bytes, where: str, ours: bool) -> list[Finding]:
        """detect-secrets over one piece of text, handed over under a neutral file name."""
        shown = path_display(path)
        found: list[Finding] = []
        from detect_secrets.core import scan as ds_scan
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.settings import transient_settings

        # Every plugin but the noisiest: hex strings are commit ids and digests in normal code.
        skip = _OWN_SKIP if ours else _CONTENT_SKIP
        mapping: dict[str, type] = get_mapping_from_secret_type_to_class()
        plugins = [{"name": plugin.__name__} for plugin in mapping.values() if plugin.__name__ not in skip]

        self.n += 1
        ext = os.path.splitext(os.fsdecode(path))[1].lower()
        base = "content" + (ext if ext in _PARSED_EXT else ".txt")
        d = os.path.join(self.tmp.name, str(self.n))
        os.mkdir(d, 0o700)
        full = os.path.join(d, base)
        fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        try:
            with transient_settings({"plugins_used": plugins}):
                seen = set()
                for s in ds_scan.scan_file(full):
                    key = (s.type, s.line_number)
                    if key not in seen:
                        seen.add(key)
                        found.append(Finding(shown, s.type, s.line_number, where))
        finally:
            os.unlink(full)
            os.rmdir(d)
        return found


def _tar_files(data: bytes) -> list[tuple[bytes, bytes]]:
    """The regular files of an overlay tar, read leniently and whole (scanning writes nothing,
    so even an archive the strict extractor would refuse is scanned); an unreadable tar is one
    blob."""
    out = []
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:", encoding="utf-8", errors="surrogateescape") as tar:
            for member in tar:
                if member.isreg():
                    fh = tar.extractfile(member)
                    out.append((os.fsencode(member.name), fh.read() if fh else b""))
    except tarfile.TarError:
        return [(b"overlay.tar", data)]
    return out


def _where(name: bytes) -> str:
    if name in (b"event.json", b"card.json"):
        return "ledger"
    if OID_HEX.fullmatch(name.replace(b"/", b"").decode("ascii", "replace")):
        return "notes"
    return "history"


def _holders(repo: Repo, checkpoints: list[store.Checkpoint], path: bytes, oid: str, *, index: bool) -> list[str]:
    """The ids of ``checkpoints`` whose worktree tree (``index``: index tree) holds blob ``oid``
    at ``path``, in order."""
    name = path.decode("utf-8", "surrogateescape")
    out = []
    for cp in checkpoints:
        try:
            e = repo.tree_entry(cp.index_tree if index else cp.tree, name)
        except CkptError:
            continue
        if e is not None and e.oid == oid:
            out.append(cp.id)
    return out


def scan_push(repo: Repo, *, tips: list[str], known: list[str], checkpoints: list[store.Checkpoint]) -> list[Finding]:
    """Scan everything pushing ``tips`` would send to a remote that holds ``known``.

    ``checkpoints`` are the checkpoints being pushed: their worktree, index and meta trees are
    walked so each new blob is named by its real path (overlay files by their path inside
    ``overlay.tar``).  Other new blobs (base history, ledger, notes) are named as ``git
    rev-list --objects`` names them.  Returns the findings (empty when clean); raises
    :class:`~git_ckpt.errors.CorruptError` for an unreadable overlay archive.
    """
    fresh = new_objects(repo, tips, known)
    if not fresh:
        return []
    labels: dict[str, tuple[bytes, str]] = {}
    tars: dict[str, list[str]] = {}  # overlay.tar blob → every pushed checkpoint holding it
    seen: set[str] = set()  # each distinct tree is walked once, whatever shares it
    seen_meta: set[str] = set()  # (meta trees apart: their paths mean overlay.tar, raw/, stages/)
    for cp in checkpoints:
        for tree, where in ((cp.tree, f"worktree of {cp.id}"), (cp.index_tree, f"index of {cp.id}")):
            for e in repo.tree_entries_once(tree, seen):
                if e.oid in fresh and e.mode != 0o160000:
                    labels.setdefault(e.oid, (e.path, where))
        for e in repo.tree_entries_once(cp.meta_tree, seen_meta):
            if e.oid not in fresh:
                continue
            if e.path == b"overlay.tar":
                tars.setdefault(e.oid, []).append(cp.id)
            elif e.path.startswith(b"raw/"):
                labels.setdefault(e.oid, (e.path[4:], f"raw bytes of {cp.id}"))
            elif e.path.startswith(b"stages/"):
                labels.setdefault(e.oid, (e.path.split(b"/", 2)[-1], f"conflict stage of {cp.id}"))
            else:
                labels.setdefault(e.oid, (e.path, f"metadata of {cp.id}"))
    scanner = _Scanner()
    findings: list[Finding] = []
    try:
        for oid, cpids in tars.items():
            for path, data in _tar_files(repo.read_blob(oid)):
                findings += scanner.scan(path, data, f"overlay of {', '.join(cpids)}")
        for oid, name in fresh.items():
            if oid in tars or not name and oid not in labels:
                continue  # commits (and trees, below) carry no file content of their own
            if repo.object_type(oid) != "blob":
                continue
            path, where = labels.get(oid, (name, _where(name)))
            found = scanner.scan(path, repo.read_blob(oid), where, ours=where in ("ledger", "notes") or where.startswith("metadata of"))
            if found and where.startswith(("worktree of ", "index of ")):
                # every pushed checkpoint holding this blob at this path, not only the first one
                # walked (the drop the hint asks for must be of all of them): named once, found
                held = _holders(repo, checkpoints, path, oid, index=where.startswith("index of "))
                found = [replace(f, where=f"{where.split(' of ')[0]} of {', '.join(held)}") for f in found] if held else found
            findings += found
    finally:
        scanner.close()
    return merged(findings)
