"""``.ckpt.toml`` (committed, shared) overridden by ``git config ckpt.*`` (local).

Decoded with msgspec into :class:`Config`; unknown keys and wrong types are errors that name the
key (and, for TOML syntax errors, the line).
"""

from __future__ import annotations

import functools
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from .errors import ConfigError, CorruptError
from .gitcore import read_state
from .model import MAX_JSON_DEPTH, escape, nested_deeper_than

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    import pathspec

    from .gitcore import Repo

CONFIG_FILE = ".ckpt.toml"
CONFIG_MAX = 1 << 20  # the largest .ckpt.toml read (1 MiB, as git caps a .git file)
DEFAULT_MAX_FILE_SIZE = 100 * 1024 * 1024

# Ignored paths that must never be archived and never be touched.
DEFAULT_EXCLUDE = ["node_modules/", ".venv/", "venv/", "__pycache__/", ".tox/", ".mypy_cache/", ".pytest_cache/"]

# Likely-secret files: left out of the overlay (with a warning naming them) unless
# [overlay] allow_secrets = true (git config ckpt.overlay.allowSecrets true).
SECRET_PATTERNS = [
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    "credentials",
    "credentials.json",
    "*.keystore",
    "*.jks",
]

STARTER = """\
# git ckpt configuration (man git-ckpt): committed and shared.
# Local overrides: git config ckpt.overlay.include PATTERN, ckpt.verifier.NAME.command CMD, ...

[overlay]
# Ignored paths worth keeping with each checkpoint (gitignore-style patterns).
include = []
exclude = ["node_modules/", ".venv/"]
max_file_size = "100MiB"

# [[verifier]]
# name = "tests"
# command = ["python", "-m", "pytest", "-q"]   # or a string, run by the shell
# required = true
# timeout = 600                                 # seconds

[retention]
keep = 50
older_than = "30d"
"""


#: The ``.ckpt.toml`` settings a local ``git config`` key overrides, and that key as ``git
#: config`` accepts it (a variable name has no underscore: ``max_file_size`` is
#: ``maxFileSize``).  :func:`_apply_git_config` reads exactly these (and ``verifier.NAME.*``);
#: every hint naming a setting goes through :func:`setting`, so it names a key that works.
GIT_KEYS = {
    ("overlay", "include"): "ckpt.overlay.include",
    ("overlay", "exclude"): "ckpt.overlay.exclude",
    ("overlay", "max_file_size"): "ckpt.overlay.maxFileSize",
    ("overlay", "allow_secrets"): "ckpt.overlay.allowSecrets",
    ("retention", "keep"): "ckpt.retention.keep",
    ("retention", "older_than"): "ckpt.retention.olderThan",
    ("attempt", "on_failure"): "ckpt.attempt.onFailure",
    ("gate", "since"): "ckpt.gate.since",
    ("gate", "isolated"): "ckpt.gate.isolated",
}


def setting(section: str, key: str, value: str) -> str:
    """How to set ``[section] key = value``, for a hint: in ``.ckpt.toml`` and, where a local
    override exists, the ``git config`` command that sets it (``git config
    ckpt.overlay.allowSecrets true``)."""
    toml_value = value if value in ("true", "false") or value.isdigit() else f'"{value}"'
    text = f"{key} = {toml_value} under [{section}] in .ckpt.toml"
    git_key = GIT_KEYS.get((section, key))
    return text if git_key is None else f"{text}, or git config {git_key} {value}"


class OverlayConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``[overlay]``: gitignore-style ``include``/``exclude`` patterns and a per-file size cap."""

    include: list[str] = []
    exclude: list[str] = msgspec.field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    max_file_size: int | str = "100MiB"
    allow_secrets: bool = False


class VerifierConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One ``[[verifier]]``: ``command`` is an argv list, or a string run by ``sh -c``."""

    name: str
    command: list[str] | str
    required: bool = True
    timeout: float = 600.0
    env: dict[str, str] = {}
    cwd: str | None = None


class RetentionConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``[retention]`` for ``git ckpt gc``."""

    keep: int = 50
    older_than: str = "30d"
    max_bytes: int | str | None = None


class AttemptConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``[attempt]``: what ``git ckpt attempt`` does when verification fails."""

    on_failure: str = "restore"


class GateConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``[gate]``: whether the pre-push hook refuses unverified commits (``pre_push``, default:
    warn); ``since``: the pre-push hook judges only commits that are not ancestors of this
    revision (``git config ckpt.gate.since``, which ``hooks install`` sets to HEAD, overrides
    it); ``isolated``: only results of ``verify --isolated`` count as evidence (a verifier run
    in place also sees ignored files no checkpoint holds)."""

    pre_push: str = "warn"
    since: str | None = None
    isolated: bool = False
    #: accept results for trees whose paths go through a content filter this repository defines
    #: itself (local/worktree config, info/attributes): see :func:`git_ckpt.gate.local_filters`
    allow_local_filters: bool = False


class Config(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The whole configuration.  ``source`` is the raw ``.ckpt.toml`` bytes (b"" when absent)."""

    overlay: OverlayConfig = msgspec.field(default_factory=OverlayConfig)
    verifier: list[VerifierConfig] = []
    retention: RetentionConfig = msgspec.field(default_factory=RetentionConfig)
    attempt: AttemptConfig = msgspec.field(default_factory=AttemptConfig)
    gate: GateConfig = msgspec.field(default_factory=GateConfig)
    source: bytes = b""
    #: git config settings that were not applied because they would loosen a verifier
    #: ``.ckpt.toml`` defines (``ckpt.verifier.NAME.command`` …): shown by ``trust --show``
    ignored: list[str] = []

    @property
    def max_file_size(self) -> int:
        """The overlay/untracked size cap in bytes."""
        return parse_size(self.overlay.max_file_size, "overlay.max_file_size")


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?\s*$", re.I | re.A)  # ASCII: \d takes "١" too
_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "ki": 1024, "m": 10**6, "mb": 10**6,
          "mib": 1024**2, "mi": 1024**2, "g": 10**9, "gb": 10**9, "gib": 1024**3, "gi": 1024**3,
          "t": 10**12, "tb": 10**12, "tib": 1024**4, "ti": 1024**4}


def parse_size(value: int | str, key: str) -> int:
    """``"100MiB"`` → 104857600; plain ints are bytes.  :class:`ConfigError` names ``key``."""
    if isinstance(value, int):
        if value < 0:
            raise ConfigError(f"{key} must not be negative")
        return value
    m = _SIZE.match(value)
    if not m or (m.group(2) or "").lower() not in _UNITS:
        raise ConfigError(f"{key}: cannot read size {value!r}", 'write it like "100MiB" or a number of bytes')
    return int(float(m.group(1)) * _UNITS[(m.group(2) or "").lower()])


_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$", re.A)


def parse_duration(value: str, key: str) -> int:
    """``"14d"`` → seconds.  Units s, m, h, d, w.  :class:`ConfigError` names ``key``."""
    m = _DURATION.match(value)
    if not m:
        raise ConfigError(f"{key}: cannot read duration {value!r}", 'write it like "30d", "12h" or "90m"')
    return int(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[m.group(2)]


def decode(data: bytes, origin: str = CONFIG_FILE) -> Config:
    """Decode ``.ckpt.toml`` bytes.  Raises :class:`ConfigError` naming the line or key."""
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{origin} is not valid UTF-8", f"fix or remove {origin}") from None
    except tomllib.TOMLDecodeError as exc:
        import re

        # tomllib names a table as a Python tuple, ('overlay',): say [overlay], as the file does
        text = re.sub(r"\(((?:'[^']*',? ?)+)\)", lambda m: "[" + ".".join(re.findall(r"'([^']*)'", m.group(1))) + "]", str(exc))
        raise ConfigError(f"{origin}: {text}", f"fix the TOML syntax in {origin}") from None
    except RecursionError:
        raw = None
    if raw is None or nested_deeper_than(raw):
        raise ConfigError(f"{origin}: arrays or tables nested deeper than {MAX_JSON_DEPTH} levels",
                          f"fix the TOML syntax in {origin}")
    try:
        cfg = msgspec.convert(raw, type=Config)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{origin}: {exc}", f"fix that key in {origin}") from None
    cfg.source = data
    _validate(cfg, origin)
    return cfg


MAX_PATTERNS = 1000  # overlay.include + overlay.exclude patterns
MAX_PATTERN_TEXT = 64 * 1024  # characters of overlay.include + overlay.exclude patterns, in all
MAX_STAR_RUNS = 2  # '*' runs in one path component of a pattern (after collapsing consecutive ones)
MAX_GLOBSTARS = 2  # '**' components in one pattern


def normalized_pattern(pattern: str) -> str:
    """``pattern`` with consecutive asterisks collapsed as gitignore reads them: a component of
    asterisks only is ``**``, a run inside a component is one ``*`` ("other consecutive
    asterisks are considered regular asterisks").  pathspec compiles each ``*`` to its own
    ``[^/]*``, so ``****Z`` backtracked for minutes on a long name."""
    parts = pattern.split("/")
    return "/".join("**" if len(c) >= 2 and set(c) == {"*"} else re.sub(r"(?<!\\)\*{2,}", "*", c) for c in parts)


MAX_WILDCARDS = 3  # '*' (and '?' beside one) in a whole pattern, '**' components apart


# What a path is matched as: its bytes, one character each (Latin-1), so that ``?``, ``*`` and a
# bracket expression match bytes as git's wildmatch does (``??`` takes the two-byte ``é``, ``[é]``
# either of its bytes), any byte, UTF-8 or not, is text RE2 can match; and a newline as "\r" (the
# expressions pathspec writes match a newline with no "." outside DOTALL, so ".env" missed
# "a\nb/.env" that git matches): a control character no accepted pattern holds.
_MATCHABLE = {0x0A: "\r"}


def as_bytes_text(text: str) -> str:
    """``text`` (a path as :func:`os.fsdecode` gives it, or a pattern) as its bytes, one
    character each: what :class:`Patterns` matches, so a wildcard matches a byte, as in git."""
    return text.encode("utf-8", "surrogateescape").decode("latin-1")


class Patterns:
    """Compiled gitignore-style patterns (:func:`compile_patterns`)."""

    def __init__(self, spec: pathspec.GitIgnoreSpec) -> None:
        self._spec = spec

    def match_file(self, path: str) -> bool:
        """Whether the patterns take ``path`` (``/``-separated, relative to the worktree root,
        as ``os.fsdecode`` gives it: any bytes), as git's ignore rules would: byte by byte."""
        return bool(self._spec.match_file(as_bytes_text(path).translate(_MATCHABLE)))


def compile_patterns(patterns: Iterable[str], *, normalize: bool = True) -> Patterns:
    """gitignore-style ``patterns`` (in order; each :func:`normalized_pattern` first unless not
    ``normalize``) as one :class:`Patterns` whose ``match_file(path: str) -> bool`` is git's
    ignore match, for any path (a newline or bytes that are not UTF-8 in it included), byte by
    byte as git's wildmatch (both sides are matched as :func:`as_bytes_text`).
    Matched by RE2 (pathspec's ``re2`` backend, google-re2): time linear in the path's length for
    the whole set, never backtracking, so no pattern set a committed ``.ckpt.toml`` or a fetched
    manifest holds can make a match take minutes (Python's ``re`` took 3 minutes for one 4 KiB
    path against 990 patterns of three wildcards each).  Raises what pathspec and RE2 raise for
    a pattern they cannot compile (several types), and :class:`RepoError` (exit 3) when google-re2
    is not installed."""
    try:
        import re2  # noqa: F401 - pathspec's re2 backend imports it; a missing one is said here, not as a bad pattern
    except ImportError:
        import sys

        from .errors import RepoError

        raise RepoError(f"google-re2, which git ckpt matches overlay patterns with, is not installed for {sys.executable}",
                        "reinstall git-ckpt (pip install . in its checkout), or pip install 'google-re2>=1.1'") from None
    return _compiled(tuple(as_bytes_text(normalized_pattern(p) if normalize else p) for p in patterns))


@functools.lru_cache(maxsize=16)
def _compiled(lines: tuple[str, ...]) -> Patterns:
    """:func:`compile_patterns` of gitignore ``lines`` as given, cached: a command checks its
    configuration's patterns, then selects with them, and a verify or restore reads them again
    (800 patterns take RE2 1.4 s to compile).  A :class:`Patterns` is never changed."""
    import pathspec

    try:
        return Patterns(pathspec.GitIgnoreSpec.from_lines(list(lines), backend="re2"))
    except Exception:  # noqa: BLE001 - RE2 raises re2.error; which pattern, if any, is said below
        if len(lines) < 2:
            raise
        for line in lines:  # one that does not compile alone is the one to name
            pathspec.GitIgnoreSpec.from_lines([line], backend="re2")
    raise ConfigError(f"the {len(lines)} overlay patterns are too many or too complex to match together "
                      "(RE2's memory budget, 8 MiB, is exceeded)", "use fewer patterns, or fewer wildcards in them (overlay.include and overlay.exclude in .ckpt.toml, or git config ckpt.overlay.include)")


class SecretNames:
    """The file-name denylist (:data:`SECRET_PATTERNS`) as one matcher, for every caller (the
    overlay's capture and its single-path check, the push scan): matched without regard to
    ASCII case (``.ENV``, ``Server.PEM``, ``ID_RSA`` are the same secrets, and on a
    case-insensitive file system, or under ``core.ignoreCase``, the very same file)."""

    def __init__(self) -> None:
        self._spec = compile_patterns(SECRET_PATTERNS, normalize=False)

    def match_file(self, path: str) -> bool:
        """Whether ``path`` (``/``-separated, relative to the worktree root, as ``os.fsdecode``
        gives it) has a denylisted name, whatever the case of its ASCII letters."""
        return self._spec.match_file(path.translate(_ASCII_LOWER))


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}  # str.lower() would fold non-ASCII too


def wildcard_problem(pattern: str, *, compiled: bool = False) -> str | None:
    """Why ``pattern`` cannot be matched as git matches it within bounded time, or None.

    Patterns are matched by RE2 (:func:`compile_patterns`), in linear time; these limits, set
    when they were matched by backtracking expressions, keep patterns to what people write:
    more than :data:`MAX_STAR_RUNS` wildcards in one component, :data:`MAX_WILDCARDS` in all
    (``?`` counts beside a ``*``), :data:`MAX_GLOBSTARS` ``**`` components, or over 1 KiB (after
    :func:`normalized_pattern`).  So are bracket expressions pathspec reads otherwise than git
    (negated ``[!x]`` or ``[^x]``, which match ``/`` there; ranges; ``[:class:]``) and anything that
    does not compile (not tried when ``compiled``: the caller compiled a set holding it, as
    :func:`_check` does once for all, 4 ms a pattern alone)."""
    if len(pattern) > 1024:
        return "is longer than 1024 characters"
    comps = normalized_pattern(pattern).split("/")
    if sum(1 for c in comps if c == "**") > MAX_GLOBSTARS:
        return f"has more than {MAX_GLOBSTARS} '**' components"
    counts = []
    for c in comps:
        if c == "**":
            continue
        stars = len(re.findall(r"(?<!\\)\*", c))
        counts.append(stars + (len(re.findall(r"(?<!\\)\?", c)) if stars else 0))
    if any(n > MAX_STAR_RUNS for n in counts):
        return f"has more than {MAX_STAR_RUNS} wildcards in one path component"
    if sum(counts) > MAX_WILDCARDS:
        return f"has more than {MAX_WILDCARDS} wildcards"
    if re.search(r"(?<!\\)\[(?:[!^]|[^\]]*(?:-|\[:))", pattern):
        return "has a negated, range or [:class:] bracket expression (read otherwise than git reads it)"
    return None if compiled else _compile_problem([pattern])


def _compile_problem(patterns: list[str]) -> str | None:
    """``does not compile`` when ``patterns`` do not compile as one set without a warning, else
    None.  Raises :class:`CkptError` when the matcher is missing, :class:`ConfigError` when
    the set is beyond RE2's budget (:func:`compile_patterns`)."""
    import warnings

    from .errors import CkptError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            compile_patterns(patterns)
    except CkptError:
        raise  # the matcher is missing: no fault of the pattern
    except Exception:  # noqa: BLE001 - pathspec and re raise several types
        return "does not compile"
    return None


@functools.lru_cache(maxsize=4096)  # a pure function of the text: each origin's check and each manifest read ask again
def overlay_pattern_problem(pattern: str, *, compiled: bool = False) -> str | None:
    """Why an ``overlay.include``/``exclude`` pattern could reach outside the worktree, or None.

    Patterns are gitignore patterns relative to the worktree root (a leading ``/`` anchors at the
    root, as in ``.gitignore``); a ``..`` component, a home-directory ``~`` prefix, a backslash
    path or a Windows drive, a NUL or another control character is refused; and so is what
    :func:`wildcard_problem` refuses (``compiled``: passed on to it)."""
    p = pattern.strip()
    if p.startswith("!"):
        p = p[1:]
    if any(ord(c) < 32 or ord(c) == 127 for c in pattern):
        return "contains a control character"
    if p.startswith("~") or "\\" in p or re.match(r"[A-Za-z]:", p):
        return "is not a path inside the worktree"
    if any(part == ".." for part in p.split("/")):
        return "contains '..'"
    if any(part.lower() == ".git" for part in p.split("/")):
        return "points into .git"
    if p.startswith("//"):
        return "is an absolute path"
    return wildcard_problem(p, compiled=compiled)


#: the ``git config`` name of each ``.ckpt.toml`` key that git config may set (:func:`load`)
_GIT_KEYS = {"overlay.include": "ckpt.overlay.include", "overlay.exclude": "ckpt.overlay.exclude",
             "overlay.max_file_size": "ckpt.overlay.maxFileSize", "retention.keep": "ckpt.retention.keep",
             "retention.older_than": "ckpt.retention.olderThan", "attempt.on_failure": "ckpt.attempt.onFailure"}
GIT_ORIGIN = "git config"


def _validate(cfg: Config, origin: str) -> None:
    """Refuse a value no command could use, naming the key as its source spells it (``origin``:
    the ``.ckpt.toml`` path, or :data:`GIT_ORIGIN` for ``git config ckpt.*``) with a hint that
    says where to fix it: :class:`ConfigError` (exit 6)."""
    try:
        _check(cfg, origin, (lambda k: _GIT_KEYS.get(k, f"ckpt.{k}")) if origin == GIT_ORIGIN else (lambda k: k))
    except ConfigError as exc:
        if exc.hint is None:
            exc.hint = (f"fix that key in {origin}" if origin != GIT_ORIGIN else
                        "fix it with git config (git config --show-origin --get-regexp '^ckpt[.]' shows where each key is set)")
        raise


def patterns_too_many(include: list[str], exclude: list[str]) -> str | None:
    """Why the overlay patterns ``include`` + ``exclude`` are beyond what people write (more than
    :data:`MAX_PATTERNS` of them, or :data:`MAX_PATTERN_TEXT` characters in all: RE2 took 8 s
    to give up on 1000 patterns of 1 KiB), or None; each pattern's own limits are
    :func:`overlay_pattern_problem`'s."""
    if len(include) + len(exclude) > MAX_PATTERNS:
        return f"more than {MAX_PATTERNS} overlay patterns"
    if sum(map(len, [*include, *exclude])) > MAX_PATTERN_TEXT:
        return f"overlay patterns of more than {MAX_PATTERN_TEXT // 1024} KiB in all"
    return None


def _check(cfg: Config, origin: str, k: Callable[[str], str]) -> None:
    too_many = patterns_too_many(cfg.overlay.include, cfg.overlay.exclude)
    if too_many:
        raise ConfigError(f"{origin}: {too_many}")
    for key, patterns in (("overlay.include", cfg.overlay.include), ("overlay.exclude", cfg.overlay.exclude)):
        # one set compiled for all (as overlay.select compiles them; cached): each alone only to
        # find the one that does not compile
        compiled = not any(overlay_pattern_problem(p, compiled=True) for p in patterns) and _compile_problem(list(patterns)) is None
        for pat in patterns:
            problem = overlay_pattern_problem(pat, compiled=compiled)
            if problem:
                escapes = problem != wildcard_problem(pat.strip().removeprefix("!"), compiled=compiled)  # not a matter of wildcards
                raise ConfigError(f"{origin}: {k(key)} pattern '{escape(pat)}' {problem}"
                                  + ("; overlay patterns stay inside the worktree" if escapes else ""),
                                  f"fix {k(key)} (patterns are relative to the worktree root)")
    parse_size(cfg.overlay.max_file_size, f"{origin}: {k('overlay.max_file_size')}")
    parse_duration(cfg.retention.older_than, f"{origin}: {k('retention.older_than')}")
    if cfg.retention.max_bytes is not None:
        parse_size(cfg.retention.max_bytes, f"{origin}: {k('retention.max_bytes')}")
    if cfg.retention.keep < 0:
        raise ConfigError(f"{origin}: {k('retention.keep')} must not be negative")
    seen: set[str] = set()
    for v in cfg.verifier:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", v.name):
            raise ConfigError(f"{origin}: verifier name {v.name!r} must be letters, digits, '.', '_' or '-'")
        if v.name in seen:
            raise ConfigError(f"{origin}: verifier {v.name!r} is defined twice")
        seen.add(v.name)
        if not v.command or (isinstance(v.command, list) and not all(v.command)):
            raise ConfigError(f"{origin}: verifier {v.name!r} has an empty command")
        if v.timeout <= 0:
            raise ConfigError(f"{origin}: verifier {v.name!r}: timeout must be positive")
        # a NUL cannot reach exec(2) (argv, environment and paths are C strings): refused at load,
        # naming the key, not left to fail when the verifier runs
        fields = [("command", c) for c in ([v.command] if isinstance(v.command, str) else v.command)]
        fields += [(f"env.{e}", val) for e, val in v.env.items()] + ([("cwd", v.cwd)] if v.cwd is not None else [])
        for key, text in fields:
            if "\0" in text:
                raise ConfigError(f"{origin}: verifier {v.name!r}: {key} contains a NUL byte", f"remove the NUL from verifier {v.name!r} {key}")
        for e in v.env:
            if not e or "=" in e or "\0" in e:
                raise ConfigError(f"{origin}: verifier {v.name!r}: env name {e!r} is not a valid environment variable name",
                                  f"fix the env table of verifier {v.name!r}")
    if cfg.attempt.on_failure not in ("restore", "keep"):
        raise ConfigError(f"{origin}: {k('attempt.on_failure')} must be \"restore\" or \"keep\"")
    if cfg.gate.pre_push not in ("warn", "refuse", "off"):
        raise ConfigError(f"{origin}: {k('gate.pre_push')} must be \"warn\", \"refuse\" or \"off\"")


def load(repo: "Repo") -> Config:
    """Read ``.ckpt.toml`` from the worktree root and apply ``git config ckpt.*`` overrides.

    Overrides: ``ckpt.overlay.include`` / ``ckpt.overlay.exclude`` (multi-valued, appended),
    ``ckpt.overlay.maxFileSize``, ``ckpt.retention.keep``, ``ckpt.retention.olderThan``,
    ``ckpt.attempt.onFailure``, ``ckpt.gate.since``, ``ckpt.gate.isolated`` (may only turn it
    on), and ``ckpt.verifier.NAME.command|required|timeout``, which adds verifier NAME.

    Git config may add verifiers but never loosens one ``.ckpt.toml`` defines: for such a
    verifier only ``required = true`` is applied (a tightening); a command, ``required =
    false`` or a timeout from git config is left out and named in ``cfg.ignored``.  (``.ckpt.toml``
    is what the user trusted byte for byte; git config is writable by any process running as
    the user, ``git -c`` included, and is not part of that trust.)

    Raises :class:`ConfigError` (exit 6) when ``.ckpt.toml`` is malformed, or is no regular file
    of at most :data:`CONFIG_MAX` bytes (a symlink, directory or FIFO is not followed or opened:
    :func:`git_ckpt.gitcore.read_state`).
    """
    path = Path(repo.workdir) / CONFIG_FILE
    try:
        data = read_state(path, CONFIG_MAX)
    except FileNotFoundError:
        data = b""
    except CorruptError:  # a symlink, directory, FIFO, device, or more than CONFIG_MAX bytes
        raise ConfigError(f"{CONFIG_FILE} is not a regular file of at most {CONFIG_MAX} bytes", "remove it or move it aside") from None
    cfg = decode(data) if data else Config()
    _apply_git_config(repo, cfg)
    return cfg


def load_without_file(repo: "Repo") -> Config:
    """The defaults with ``git config ckpt.*`` over them, as :func:`load` without ``.ckpt.toml``:
    for ``restore`` and ``undo`` when the worktree's ``.ckpt.toml`` cannot be read (a restore
    brought a broken one, or an edit broke it), so a broken file never keeps the user from going
    back.  Not the target's ``.ckpt.toml``: a fetched checkpoint's overlay patterns must not decide
    what the user's own state is (``include = ["*"]`` made every ignored file overlay, deleted).
    Raises :class:`ConfigError` only for ``git config``."""
    cfg = Config()
    _apply_git_config(repo, cfg)
    return cfg


def _apply_git_config(repo: "Repo", cfg: Config) -> None:
    entries = repo.config_entries("ckpt.")
    verifiers: dict[str, dict[str, object]] = {}
    for name, value in entries:
        key = name[len("ckpt."):]
        low = key.lower()
        if low == "overlay.include":
            cfg.overlay.include.append(value)
        elif low == "overlay.exclude":
            cfg.overlay.exclude.append(value)
        elif low == "overlay.maxfilesize":
            cfg.overlay.max_file_size = value
        elif low == "overlay.allowsecrets":
            cfg.overlay.allow_secrets = str(value).lower() in ("true", "yes", "on", "1")
        elif low == "retention.keep":
            try:
                cfg.retention.keep = int(value)
            except ValueError:
                raise ConfigError(f"git config ckpt.retention.keep: {value!r} is not a number") from None
        elif low == "retention.olderthan":
            cfg.retention.older_than = value
        elif low == "attempt.onfailure":
            cfg.attempt.on_failure = value
        elif low == "gate.since":
            cfg.gate.since = value or None
        elif low == "gate.isolated":
            # may tighten a .ckpt.toml, never loosen it
            cfg.gate.isolated = cfg.gate.isolated or str(value).lower() in ("true", "yes", "on", "1")
        elif low.startswith("verifier.") and low.count(".") >= 2:
            vname, _, field = key[len("verifier."):].rpartition(".")
            verifiers.setdefault(vname, {})[field.lower()] = value
    shared = {v.name for v in decode(cfg.source).verifier} if cfg.source else set()
    ignored: list[str] = []
    for vname, fields in verifiers.items():
        existing = next((v for v in cfg.verifier if v.name == vname), None)
        if existing is not None and vname in shared:
            for f in sorted(fields):
                tighten = f == "required" and str(fields[f]).lower() in ("true", "yes", "on", "1")
                if tighten:
                    existing.required = True
                else:
                    ignored.append(f"ckpt.verifier.{vname}.{f}")
            continue
        spec: dict[str, object] = {"name": vname}
        if existing is not None:
            spec.update(msgspec.structs.asdict(existing))
        if "command" in fields:
            spec["command"] = fields["command"]
        if "required" in fields:
            spec["required"] = str(fields["required"]).lower() in ("true", "yes", "on", "1")
        if "timeout" in fields:
            try:
                spec["timeout"] = float(str(fields["timeout"]))
            except ValueError:
                raise ConfigError(f"git config ckpt.verifier.{vname}.timeout is not a number") from None
        if "command" not in spec:
            raise ConfigError(f"git config ckpt.verifier.{vname} has no command", f"git config ckpt.verifier.{vname}.command CMD")
        try:
            new = msgspec.convert(spec, type=VerifierConfig)
        except msgspec.ValidationError as exc:
            raise ConfigError(f"git config ckpt.verifier.{vname}: {exc}") from None
        cfg.verifier = [v for v in cfg.verifier if v.name != vname] + [new]
    cfg.ignored = ignored
    _validate(cfg, GIT_ORIGIN)
