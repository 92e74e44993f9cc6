"""``git ckpt agent install|uninstall``: wire git ckpt into a coding agent's own hooks.

For Claude Code this merges three hooks into ``.claude/settings.json`` (or
``.claude/settings.local.json`` with ``local``), in Claude Code's format
``{"hooks": {"EVENT": [{"matcher": "", "hooks": [{"type": "command", "command": "…"}]}]}}``:

* ``PreCompact`` — save an ``auto`` checkpoint before the context is compacted;
* ``Stop`` — save an ``auto`` checkpoint at the end of every turn (nothing is saved when
  nothing changed);
* ``SessionStart`` — print the handoff receipt, which Claude Code adds to the new session's
  context.

Every command ends in ``|| true``: a hook must never block the agent (a ``Stop`` hook exiting 2
would keep it from stopping).  The settings file is merged, never overwritten: every existing key
and hook stays.  What was added, and the file's original bytes, are kept in
``$GIT_DIR/ckpt/agent-install.json``, so ``uninstall`` puts back the original bytes exactly when the
file was not changed since, and otherwise removes exactly the handlers it added.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
import shlex
import shutil
import stat
import sys
from pathlib import Path

from . import store
from .errors import CkptError, NotFoundError, UsageError
from .gitcore import Repo

RECORD = "agent-install.json"

_CD = 'cd "${CLAUDE_PROJECT_DIR:-.}" && '
# git-ckpt from the agent's PATH, else the one that wrote the hooks (a venv the agent's shell
# may not have on its PATH): an absolute path alone would not travel in a committed file.
_EXE = os.path.abspath(shutil.which("git-ckpt") or os.path.join(os.path.dirname(sys.executable), "git-ckpt"))
_CKPT = f'"$(command -v git-ckpt || echo {shlex.quote(_EXE)})"'
CLAUDE_HOOKS: dict[str, str] = {
    "PreCompact": _CD + _CKPT + ' save --kind auto -m "agent: before context compaction" >/dev/null || true',
    "Stop": _CD + _CKPT + ' save --kind auto -m "agent: end of turn" >/dev/null || true',
    "SessionStart": _CD + _CKPT + " handoff || true",
}
GENERIC = {
    "before context compaction": "git ckpt save --kind auto -m 'agent: before context compaction'",
    "end of each turn": "git ckpt save --kind auto -m 'agent: end of turn'",
    "session start (give the output to the agent)": "git ckpt handoff",
    "MCP server (stdio)": "git ckpt mcp",
}
AGENTS = ("claude-code", "generic")
HOOK_TIMEOUT = 120


def _group(command: str) -> dict:
    return {"matcher": "", "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT}]}


def snippet(agent: str) -> dict:
    """What ``install AGENT --print`` shows: the settings fragment (claude-code) or the commands
    to wire into any agent's hooks (generic).  :class:`UsageError` for an unknown agent."""
    if agent == "claude-code":
        return {"hooks": {event: [_group(cmd)] for event, cmd in CLAUDE_HOOKS.items()}}
    if agent == "generic":
        return dict(GENERIC)
    raise UsageError(f"unknown agent {agent!r}", f"known agents: {', '.join(AGENTS)}")


def settings_path(repo: Repo, local: bool = False) -> Path:
    """``.claude/settings.json`` (or ``settings.local.json``) at the worktree root."""
    return repo.workdir / ".claude" / ("settings.local.json" if local else "settings.json")


def _record_path(repo: Repo) -> Path:
    return repo.ckpt_dir() / RECORD


def _read_records(repo: Repo) -> dict:
    try:
        data = json.loads(_record_path(repo).read_bytes())
    except FileNotFoundError:
        return {}
    except ValueError:
        raise CkptError(f"{_record_path(repo)} is corrupt", "remove it; then check .claude/settings.json by hand") from None
    return data if isinstance(data, dict) else {}


def _write_records(repo: Repo, records: dict) -> None:
    path = _record_path(repo)
    if not records:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        return
    store.atomic_write(path, (json.dumps(records, indent=2, sort_keys=True) + "\n").encode())


def _load_settings(path: Path, data: bytes) -> dict:
    if not data.strip():
        return {}
    try:
        obj = json.loads(data)
    except ValueError as exc:
        raise CkptError(f"{path} is not valid JSON ({exc})", f"fix {path}, then run the command again") from None
    if not isinstance(obj, dict):
        raise CkptError(f"{path} does not hold a JSON object", f"fix {path}, then run the command again")
    return obj


def _dump(obj: dict) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def install(repo: Repo, agent: str, *, local: bool = False) -> dict:
    """Merge the hooks of ``agent`` into its settings file; returns ``{"path", "added": [events],
    "already": [events], "created": bool}``.  Idempotent: hooks already present are not added twice.

    Raises :class:`UsageError` for an agent that can only be printed, :class:`CkptError` when the
    settings file is not a JSON object (nothing is written then).
    """
    if agent != "claude-code":
        snippet(agent)  # unknown agent → UsageError
        raise UsageError(f"{agent}: nothing to install automatically", f"git ckpt agent install {agent} --print shows the commands to wire in")
    path = settings_path(repo, local)
    rel = str(path.relative_to(repo.workdir))
    records = _read_records(repo)
    existed = path.exists()
    original = path.read_bytes() if existed else b""
    mode = stat.S_IMODE(path.stat().st_mode) if existed else None
    settings = _load_settings(path, original)
    hooks = settings.get("hooks")
    if hooks is None:
        hooks = {}
    elif not isinstance(hooks, dict):
        raise CkptError(f"{path}: \"hooks\" is not an object", f"fix {path}, then run the command again")
    new = copy.deepcopy(settings)
    new_hooks = copy.deepcopy(hooks)
    added, already = [], []
    for event, command in CLAUDE_HOOKS.items():
        groups = new_hooks.get(event, [])
        if not isinstance(groups, list):
            raise CkptError(f"{path}: hooks.{event} is not a list", f"fix {path}, then run the command again")
        present = any(isinstance(g, dict) and any(isinstance(h, dict) and h.get("command") == command for h in g.get("hooks") or [])
                      for g in groups)
        if present:
            already.append(event)
            continue
        new_hooks[event] = groups + [_group(command)]
        added.append(event)
    result = {"path": rel, "added": added, "already": already, "created": not existed}
    if not added:
        return result
    new["hooks"] = new_hooks
    data = _dump(new)
    created_dir = not path.parent.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    rec = records.get(rel)
    if rec is None:  # first install: remember the bytes to put back
        rec = {"agent": agent, "existed": existed, "original": base64.b64encode(original).decode(), "mode": mode,
               "created_dir": created_dir, "hooks_key_existed": "hooks" in settings, "events_existed": [], "added": []}
    rec["events_existed"] = sorted(set(rec["events_existed"]) | {e for e in added if e in hooks})
    rec["added"] = rec["added"] + [{"event": e, "group": _group(CLAUDE_HOOKS[e])} for e in added]
    rec["written_sha256"] = hashlib.sha256(data).hexdigest()
    records[rel] = rec
    _write_records(repo, records)  # the record first: a crash leaves something uninstall can use
    store.atomic_write(path, data, mode)  # the file keeps its permissions
    return result


def uninstall(repo: Repo, agent: str, *, local: bool = False) -> dict:
    """Remove what :func:`install` added.  When the file is byte-for-byte what install wrote, the
    original bytes and permission bits are put back (the file and ``.claude/`` are removed if install created them);
    otherwise exactly the added handlers are removed and the rest is kept.  Returns
    ``{"path", "restored": "original"|"removed-file"|"edited"|"gone", "removed": [events]}``.

    Raises :class:`NotFoundError` when nothing was installed for that file.
    """
    if agent not in AGENTS:
        snippet(agent)
    path = settings_path(repo, local)
    rel = str(path.relative_to(repo.workdir))
    records = _read_records(repo)
    rec = records.get(rel)
    if rec is None or rec.get("agent") != agent:
        raise NotFoundError(f"git ckpt did not install {agent} hooks into {rel}", "git ckpt agent install claude-code adds them")
    removed = sorted({a["event"] for a in rec["added"]})
    if not path.exists():
        how = "gone"
    else:
        current = path.read_bytes()
        mode = stat.S_IMODE(path.stat().st_mode)
        if hashlib.sha256(current).hexdigest() == rec.get("written_sha256"):
            if rec["existed"]:
                original_mode = rec.get("mode")
                store.atomic_write(path, base64.b64decode(rec["original"]),
                                   original_mode if isinstance(original_mode, int) else mode)
                how = "original"
            else:
                path.unlink()
                how = "removed-file"
                if rec.get("created_dir"):
                    try:
                        path.parent.rmdir()
                    except OSError:
                        pass
        else:
            how = "edited"
            settings = _load_settings(path, current)
            hooks = settings.get("hooks")
            if isinstance(hooks, dict):
                for a in rec["added"]:
                    ev, group = a["event"], a["group"]
                    groups = hooks.get(ev)
                    if not isinstance(groups, list):
                        continue
                    command = group["hooks"][0]["command"]
                    kept = []
                    for g in groups:
                        if g == group:
                            continue
                        if isinstance(g, dict) and isinstance(g.get("hooks"), list):
                            inner = [h for h in g["hooks"] if not (isinstance(h, dict) and h.get("command") == command)]
                            if not inner and g["hooks"]:
                                continue
                            if len(inner) != len(g["hooks"]):
                                g = dict(g, hooks=inner)
                        kept.append(g)
                    if kept or ev in rec.get("events_existed", []):
                        hooks[ev] = kept
                    else:
                        del hooks[ev]
                if not hooks and not rec.get("hooks_key_existed"):
                    del settings["hooks"]
            store.atomic_write(path, _dump(settings), mode)
    del records[rel]
    _write_records(repo, records)
    return {"path": rel, "restored": how, "removed": removed}


def status(repo: Repo) -> list[dict]:
    """What ``install`` recorded in this worktree: one row per settings file."""
    return [{"path": rel, "agent": rec.get("agent"), "events": sorted({a["event"] for a in rec.get("added", [])}),
             "intact": (repo.workdir / rel).exists() and hashlib.sha256((repo.workdir / rel).read_bytes()).hexdigest() == rec.get("written_sha256")}
            for rel, rec in sorted(_read_records(repo).items())]

