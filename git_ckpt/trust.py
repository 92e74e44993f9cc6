"""Trust the exact bytes of ``.ckpt.toml`` before running the verifier commands it names.

``.ckpt.toml`` is committed and shared, so a pull, a restore or an agent's edit can change the
commands ``git ckpt verify`` would run.  They run only when the sha256 of the file's exact bytes
is the one the user recorded with ``git ckpt trust`` for this worktree.  The record lives in the
per-user data directory (``platformdirs.user_data_dir("git-ckpt")/trusted.json``), never in the
repository, so nothing a repository contains can trust itself.

Rules (:func:`check`):

* a ``.ckpt.toml`` that defines ``[[verifier]]`` entries must be trusted;
* once a config has been trusted for a worktree, any change to it (removing verifiers or the
  file included) must be trusted again, so loosening the requirement is not silent;
* verifiers defined only in the local ``git config ckpt.verifier.*`` were written by the user
  and need no trust, as long as the ``.ckpt.toml`` beside them is acceptable.

The same rules decide whether the *required* verifiers of a config may be used to judge
evidence: ``promote`` (without ``--force``), the commit gate and ``verify-commit`` refuse an
untrusted config (exit 9) instead of trusting a requirement someone loosened or deleted.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, TYPE_CHECKING

from .errors import ConfigError, CorruptError, UntrustedError
from .gitcore import read_state
from .model import loads_json

if TYPE_CHECKING:
    from .config import Config, VerifierConfig
    from .gitcore import Repo

TRUST_FILE = "trusted.json"


def config_hash(source: bytes) -> str:
    """sha256 hex of the exact ``.ckpt.toml`` bytes (b"" when the file is absent)."""
    return hashlib.sha256(source).hexdigest()


def data_dir() -> Path:
    """The per-user data directory (``platformdirs.user_data_dir("git-ckpt")``)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("git-ckpt"))


def _key(repo: "Repo") -> str:
    return str(repo.workdir)


@contextlib.contextmanager
def _locked() -> Iterator[Path]:
    d = data_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd = os.open(d / (TRUST_FILE + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise ConfigError(f"cannot use the trust store in {d}: {exc.strerror}", "check the permissions of that directory") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield d / TRUST_FILE
    finally:
        os.close(fd)


def _read(path: Path) -> dict[str, dict[str, Any]]:
    """The trust store at ``path`` ({} when absent).  Raises :class:`ConfigError` (exit 6) when it
    is no regular file of at most :data:`git_ckpt.gitcore.STATE_MAX` bytes
    (:func:`git_ckpt.gitcore.read_state`), unreadable or not JSON."""
    try:
        data = loads_json(read_state(path))
    except FileNotFoundError:
        return {}
    except CorruptError as exc:
        raise ConfigError(f"the trust store {exc.message}", f"move {path} aside and run git ckpt trust again") from None
    except (ValueError, OSError):
        raise ConfigError(f"the trust store {path} is unreadable", f"remove {path} and run git ckpt trust again") from None
    return data if isinstance(data, dict) else {}


def trusted_hash(repo: "Repo") -> str | None:
    """The ``.ckpt.toml`` hash the user trusted for this worktree, or None."""
    path = data_dir() / TRUST_FILE
    entry = _read(path).get(_key(repo))
    return entry.get("sha256") if isinstance(entry, dict) else None


def record(repo: "Repo", source: bytes) -> str:
    """Trust ``source`` (the current ``.ckpt.toml`` bytes) for this worktree; returns its hash.

    Read-modify-write of ``trusted.json`` under an exclusive flock, written atomically.
    """
    from .store import atomic_write

    digest = config_hash(source)
    with _locked() as path:
        data = _read(path)
        data[_key(repo)] = {"sha256": digest}
        atomic_write(path, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode())
    return digest


def toml_verifiers(cfg: "Config") -> list[str]:
    """Names of the verifiers the ``.ckpt.toml`` bytes themselves define."""
    if not cfg.source:
        return []
    from .config import decode

    return [v.name for v in decode(cfg.source).verifier]


def origin(cfg: "Config", v: "VerifierConfig") -> str:
    """``".ckpt.toml"`` when ``v`` runs the command the shared file defines, else ``"git config"``."""
    if not cfg.source:
        return "git config"
    from .config import decode

    for t in decode(cfg.source).verifier:
        if t.name == v.name:
            same = (t.command, t.env, t.cwd) == (v.command, v.env, v.cwd)
            return ".ckpt.toml" if same else "git config"
    return "git config"


@dataclass
class TrustState:
    """Whether the verifiers may run: ``needed`` (trust matters here), ``trusted``, the current
    ``sha256`` and the ``recorded`` one (or None)."""

    needed: bool
    trusted: bool
    sha256: str
    recorded: str | None

    @property
    def ok(self) -> bool:
        """True when verifier commands may run."""
        return self.trusted or not self.needed


def state(repo: "Repo", cfg: "Config") -> TrustState:
    """Evaluate the rules in the module docstring for ``cfg`` in ``repo`` (nothing is written)."""
    current = config_hash(cfg.source)
    recorded = trusted_hash(repo)
    needed = bool(toml_verifiers(cfg)) or recorded is not None
    return TrustState(needed, recorded == current, current, recorded)


HINT = "review what would run with git ckpt trust --show, then allow it with git ckpt trust"


def untrusted_reason(st: TrustState) -> str:
    """``.ckpt.toml is not trusted`` / ``… is changed since you trusted it`` (or deleted)."""
    if st.recorded is None:
        return ".ckpt.toml is not trusted"
    if st.sha256 == config_hash(b""):
        return ".ckpt.toml is deleted or emptied since you trusted it"
    return ".ckpt.toml is changed since you trusted it"


def check(repo: "Repo", cfg: "Config", *, doing: str = "no verifier was run") -> TrustState:
    """Raise :class:`UntrustedError` (exit 9) unless ``cfg`` may be used: its verifiers run, and
    its required verifiers decide promotion, the gate and ``verify-commit``.  ``doing`` ends the
    message (what was not done)."""
    st = state(repo, cfg)
    if not st.ok:
        raise UntrustedError(f"{untrusted_reason(st)}; {doing}", HINT)
    return st


def describe(cfg: "Config") -> list[dict[str, Any]]:
    """What would run: one dict per verifier (name, command, required, timeout, env, cwd, origin)."""
    return [
        {
            "name": v.name,
            "command": v.command,
            "required": v.required,
            "timeout": v.timeout,
            "env": dict(v.env),
            "cwd": v.cwd,
            "origin": origin(cfg, v),
        }
        for v in cfg.verifier
    ]
