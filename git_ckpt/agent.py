"""``git ckpt agent install|uninstall|hook``: wire git ckpt into a coding agent's own hooks.

Five agents, one shape: save an ``auto`` checkpoint before the context is compacted and at the
end of every turn, and give a new session the handoff receipt.

=============  ===============================  ==============================================
agent          file (merged, every key kept)    events → what runs
=============  ===============================  ==============================================
claude-code    ``.claude/settings.json``         SessionStart → handoff, PreCompact → save,
               (``--local``: settings.local)     Stop → save
codex          ``.codex/hooks.json``             SessionStart, PreCompact, Stop (Claude's shape)
gemini         ``.gemini/settings.json``         SessionStart, PreCompress, AfterAgent; sets
                                                 ``hooksConfig.enabled`` when absent
cursor         ``.cursor/hooks.json``            sessionStart, preCompact, stop (``version: 1``)
copilot        ``.github/hooks/git-ckpt.json``   sessionStart, agentStop, sessionEnd
=============  ===============================  ==============================================

Every hook runs ``git-ckpt agent hook AGENT ACTION``, which reads the agent's JSON input on
stdin (the session id goes into the checkpoint's manifest, so ``list``/``show`` can say which
session made it), never prints progress, and always exits 0: a hook never blocks the agent.
The command finds ``git-ckpt`` on the agent's ``PATH``, else through a small shim
``$GIT_COMMON_DIR/ckpt/git-ckpt`` that install writes (it names this machine's executable, and
lives in ``.git``, so nothing machine-specific goes into a file meant to be committed).

Install merges, never overwrites: every existing key and hook stays.  What was added and the
file's original bytes and mode are kept in ``$GIT_DIR/ckpt/agent-install.json``, so
``uninstall`` puts back the original bytes exactly when the file was not changed since, and
otherwise removes exactly the handlers (and keys) it added.
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import store
from .errors import CkptError, UsageError
from .gitcore import Repo, read_state
from .model import TOO_DEEP, NestedTooDeep, loads_json

RECORD = "agent-install.json"
SHIM = "git-ckpt"
HOOK_TIMEOUT = 120  # seconds
MESSAGES = {
    "compact": "agent: before context compaction",
    "turn": "agent: end of turn",
    "end": "agent: end of session",
}


@dataclass(frozen=True)
class Spec:
    """How one agent takes hooks: its settings file, the entry shape and the events."""

    name: str
    path: str
    style: str  # "nested": {"matcher", "hooks": [{"type", "command", "timeout"}]}; "flat": {"command", "timeout"}; "copilot": {"type", "bash", "timeoutSec"}
    events: dict[str, str]  # agent event → action (start, compact, turn, end)
    cd: str = ""
    timeout: int = HOOK_TIMEOUT
    local_path: str | None = None
    defaults: dict[str, Any] = field(default_factory=dict)  # keys set when absent (dotted paths)
    note: str = ""
    off: tuple[tuple[str, Any], ...] = ()  # (dotted key, value) that switches every hook off: said, never changed
    user_path: str | None = None  # the user's own settings file (under HOME), read for ``off`` only


SPECS: dict[str, Spec] = {s.name: s for s in (
    Spec("claude-code", ".claude/settings.json", "nested", {"PreCompact": "compact", "Stop": "turn", "SessionStart": "start"},
         cd='cd "${CLAUDE_PROJECT_DIR:-.}" && ', local_path=".claude/settings.local.json", off=(("disableAllHooks", True),),
         user_path=".claude/settings.json"),
    Spec("codex", ".codex/hooks.json", "nested", {"SessionStart": "start", "PreCompact": "compact", "Stop": "turn"},
         note="Codex runs project hooks once hooks are enabled ([features] codex_hooks = true in ~/.codex/config.toml) "
              "and you trust this project's .codex/ when Codex asks"),
    Spec("gemini", ".gemini/settings.json", "nested", {"SessionStart": "start", "PreCompress": "compact", "AfterAgent": "turn"},
         cd='cd "${GEMINI_PROJECT_DIR:-.}" && ', timeout=HOOK_TIMEOUT * 1000, defaults={"hooksConfig.enabled": True},
         off=(("hooksConfig.enabled", False),), user_path=".gemini/settings.json"),
    Spec("cursor", ".cursor/hooks.json", "flat", {"sessionStart": "start", "preCompact": "compact", "stop": "turn"},
         defaults={"version": 1}),
    Spec("copilot", ".github/hooks/git-ckpt.json", "copilot", {"sessionStart": "start", "agentStop": "turn", "sessionEnd": "end"},
         defaults={"version": 1}),
)}
AGENTS = (*SPECS, "generic")
MAX_SETTINGS = 8 << 20  # bytes of a settings file read only to inform (hooks_off); a larger one is not read
GENERIC = {
    "before context compaction": "git ckpt save --kind auto -m 'agent: before context compaction'",
    "end of each turn": "git ckpt save --kind auto -m 'agent: end of turn'",
    "session start (give the output to the agent)": "git ckpt handoff",
    "MCP server (stdio)": "git ckpt mcp",
}


def hook_command(agent: str, action: str) -> str:
    """The shell command an agent's hook runs: ``git-ckpt agent hook AGENT ACTION`` through
    ``git-ckpt`` on PATH, else the shim in ``$GIT_COMMON_DIR/ckpt``; ``|| true`` so it never
    fails the agent.  No absolute path of this machine appears in it."""
    spec = SPECS[agent]
    find = 'G=$(command -v git-ckpt || echo "$(git rev-parse --git-common-dir)/ckpt/git-ckpt")'
    return f'{spec.cd}{find}; "$G" agent hook {agent} {action} || true'


def commands(agent: str) -> dict[str, str]:
    """Agent event → the command installed for it."""
    return {event: hook_command(agent, action) for event, action in SPECS[agent].events.items()}


CLAUDE_HOOKS: dict[str, str] = commands("claude-code")


def _entry(spec: Spec, command: str) -> dict[str, Any]:
    if spec.style == "nested":
        return {"matcher": "", "hooks": [{"type": "command", "command": command, "timeout": spec.timeout}]}
    if spec.style == "flat":
        return {"command": command, "timeout": spec.timeout}
    return {"type": "command", "bash": command, "timeoutSec": spec.timeout}


def _commands_in(entry: object) -> list[str]:
    """Every command string an event's list entry holds (any of the three shapes)."""
    if not isinstance(entry, dict):
        return []
    out = [entry[k] for k in ("command", "bash") if isinstance(entry.get(k), str)]
    for h in entry.get("hooks") or [] if isinstance(entry.get("hooks"), list) else []:
        if isinstance(h, dict) and isinstance(h.get("command"), str):
            out.append(h["command"])
    return out


def snippet(agent: str) -> dict[str, Any]:
    """What ``install AGENT --print`` shows: the settings fragment, or (generic) the commands to
    wire into any agent's hooks.  :class:`UsageError` for an unknown agent."""
    if agent == "generic":
        return dict(GENERIC)
    if agent not in SPECS:
        raise UsageError(f"unknown agent {agent!r}", f"known agents: {', '.join(AGENTS)}")
    spec = SPECS[agent]
    out: dict[str, Any] = {}
    for key, value in spec.defaults.items():
        _set_dotted(out, key, value)
    out["hooks"] = {event: [_entry(spec, cmd)] for event, cmd in commands(agent).items()}
    return out


def _get_dotted(obj: dict[str, Any], key: str) -> Any:
    for part in key.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def _set_dotted(obj: dict[str, Any], key: str, value: Any) -> bool:
    """Set ``a.b`` = value when absent; False (nothing set) when present or blocked by a non-object."""
    parts = key.split(".")
    for part in parts[:-1]:
        nxt = obj.setdefault(part, {})
        if not isinstance(nxt, dict):
            return False
        obj = nxt
    if parts[-1] in obj:
        return False
    obj[parts[-1]] = value
    return True


def _del_dotted(obj: dict[str, Any], key: str) -> None:
    parts = key.split(".")
    chain = [obj]
    for part in parts[:-1]:
        nxt = chain[-1].get(part)
        if not isinstance(nxt, dict):
            return
        chain.append(nxt)
    chain[-1].pop(parts[-1], None)
    for i in range(len(parts) - 1, 0, -1):  # drop objects this left empty
        if not chain[i]:
            chain[i - 1].pop(parts[i - 1], None)


def settings_path(repo: Repo, agent: str = "claude-code", local: bool = False) -> Path:
    """The settings file ``agent``'s hooks go into, at the worktree root."""
    spec = SPECS[agent]
    rel = spec.local_path if local else spec.path
    if rel is None:
        raise UsageError(f"{agent} has no local settings file", f"install into {spec.path} and add it to .git/info/exclude to keep it uncommitted")
    return repo.workdir / rel


def _record_path(repo: Repo) -> Path:
    return repo.ckpt_dir() / RECORD


def shim_path(repo: Repo) -> Path:
    """``$GIT_COMMON_DIR/ckpt/git-ckpt``: the fallback the hook commands run."""
    return repo.common_dir / "ckpt" / SHIM


def _executable() -> str:
    """The git-ckpt executable of this installation (the one on PATH, else beside this Python)."""
    return os.path.abspath(shutil.which("git-ckpt") or os.path.join(os.path.dirname(sys.executable), "git-ckpt"))


def _write_shim(repo: Repo) -> None:
    data = f"#!/bin/sh\n# written by git ckpt agent install: the git-ckpt of this machine, for agent hooks\nexec {shlex.quote(_executable())} \"$@\"\n"
    store.atomic_write(shim_path(repo), data.encode(), 0o755)


def _read_records(repo: Repo) -> dict[str, Any]:
    """What ``install`` recorded in this worktree (``$GIT_DIR/ckpt/agent-install.json``), {} when absent.
    Raises :class:`CorruptError` when it is no regular file (:func:`git_ckpt.gitcore.read_state`),
    :class:`CkptError` when it is not JSON."""
    try:
        data = loads_json(read_state(_record_path(repo)))
    except FileNotFoundError:
        return {}
    except ValueError:
        raise CkptError(f"{_record_path(repo)} is corrupt", "remove it; then check the agent settings files by hand") from None
    return data if isinstance(data, dict) else {}


def _write_records(repo: Repo, records: dict[str, Any]) -> None:
    path = _record_path(repo)
    if not records:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        return
    store.atomic_write(path, (json.dumps(records, indent=2, sort_keys=True) + "\n").encode())


def _load_settings(path: Path, data: bytes) -> dict[str, Any]:
    if not data.strip():
        return {}
    try:
        obj = loads_json(data)
    except NestedTooDeep:
        raise CkptError(f"{path} is nested too deeply to read ({TOO_DEEP})", f"fix {path}, then run the command again") from None
    except ValueError as exc:
        raise CkptError(f"{path} is not valid JSON ({exc})", f"fix {path}, then run the command again") from None
    if not isinstance(obj, dict):
        raise CkptError(f"{path} does not hold a JSON object", f"fix {path}, then run the command again")
    return obj


def settings_bytes(repo: Repo, path: Path) -> bytes | None:
    """The bytes of the agent settings file ``path`` (in the worktree: a clone's committed file,
    attacker-shaped), or None when absent.  Read as a state file (:func:`git_ckpt.gitcore.read_state`:
    no symlink followed, no FIFO waited on, at most :data:`MAX_SETTINGS` bytes); anything else is
    :class:`CkptError` (exit 1) naming the file, and nothing is written."""
    link = store.link_on_the_way(repo.workdir, path)
    if link is not None:
        rel, shown = path.relative_to(repo.workdir), link.relative_to(repo.workdir)
        raise CkptError(f"{rel} is reached through the symlink {shown}: git ckpt reads and writes agent settings only inside the worktree",
                        f"replace the symlink {shown} with a directory, then run the command again")
    try:
        return read_state(path, cap=MAX_SETTINGS)
    except FileNotFoundError:
        return None
    except (CkptError, OSError):
        rel = path.relative_to(repo.workdir) if path.is_relative_to(repo.workdir) else path
        raise CkptError(f"{rel} is not a regular file of at most {MAX_SETTINGS} bytes (a symlink, a FIFO, a directory or too large)",
                        f"replace {rel} with a regular JSON file, then run the command again") from None


def _has_hooks(repo: Repo, records: dict[str, Any], agent: str) -> bool:
    """Whether ``agent``'s git ckpt hooks are here: installed from this clone (``records``) or in
    its settings file (a teammate's committed one included)."""
    if any(r.get("agent") == agent for r in records.values()):
        return True
    wanted = set(commands(agent).values())
    for rel in settings_files(repo, agent):
        try:
            hooks = loads_json(settings_bytes(repo, repo.workdir / rel) or b"{}").get("hooks")
        except (CkptError, ValueError, AttributeError):
            continue
        if isinstance(hooks, dict) and any(c in wanted for entries in hooks.values() if isinstance(entries, list)
                                           for e in entries for c in _commands_in(e)):
            return True
    return False


def _dump(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def install(repo: Repo, agent: str, *, local: bool = False) -> dict[str, Any]:
    """Merge the hooks of ``agent`` into its settings file; returns ``{"path", "added": [events],
    "already": [events], "created": bool, "note"}``.  Idempotent: hooks already present are not
    added twice.  Writes the shim the hook commands fall back on.

    Raises :class:`UsageError` for ``generic`` (print only) or an unknown agent,
    :class:`CkptError` when the settings file is not a JSON object (nothing is written then).
    """
    if agent not in SPECS:
        snippet(agent)  # unknown agent → UsageError
        raise UsageError(f"{agent}: nothing to install automatically", f"git ckpt agent install {agent} --print shows the commands to wire in")
    spec = SPECS[agent]
    path = settings_path(repo, agent, local)
    rel = str(path.relative_to(repo.workdir))
    records = _read_records(repo)
    if local:
        from . import exclude

        exclude.read(repo)  # the block goes in last: an info/exclude that cannot take it refuses first
    current = settings_bytes(repo, path)
    existed = current is not None
    original = current or b""
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
    for event, command in commands(agent).items():
        entries = new_hooks.get(event, [])
        if not isinstance(entries, list):
            raise CkptError(f"{path}: hooks.{event} is not a list", f"fix {path}, then run the command again")
        if any(command in _commands_in(e) for e in entries):
            already.append(event)
            continue
        new_hooks[event] = entries + [_entry(spec, command)]
        added.append(event)
    note = spec.note
    if agent == "cursor" and _has_hooks(repo, records, "claude-code"):
        note = "Claude Code hooks are installed here too, and Cursor runs them as well: the receipt will be given twice (git ckpt agent uninstall claude-code)"
    other = [r for r in settings_files(repo, agent) if r != rel and r in records and records[r].get("agent") == agent]
    if other:  # the shared and the local file: the agent reads both, so every hook runs twice
        note = (f"{agent} hooks are installed in {other[0]} too, and {agent} reads both files: every hook runs twice "
                f"(git ckpt agent uninstall {agent} {'--shared' if local else '--local'} removes the other)")
    off = hooks_off(repo, agent, {rel: settings})
    if off:
        note = off
    result = {"path": rel, "added": added, "already": already, "created": not existed, "note": note}
    _write_shim(repo)
    if not added:
        return result
    new["hooks"] = new_hooks
    set_keys = [k for k, v in spec.defaults.items() if _set_dotted(new, k, v)]
    data = _dump(new)
    created_dirs = []
    d = path.parent
    while not d.exists() and d != repo.workdir:
        created_dirs.append(str(d.relative_to(repo.workdir)))
        d = d.parent
    path.parent.mkdir(parents=True, exist_ok=True)
    rec = records.get(rel)
    if rec is None:  # first install: remember the bytes to put back
        rec = {"agent": agent, "existed": existed, "original": base64.b64encode(original).decode(), "mode": mode,
               "created_dirs": created_dirs, "hooks_key_existed": "hooks" in settings, "events_existed": [], "added": [],
               "set_keys": []}
    rec["events_existed"] = sorted(set(rec["events_existed"]) | {e for e in added if e in hooks})
    rec["added"] = rec["added"] + [{"event": e, "group": _entry(spec, commands(agent)[e])} for e in added]
    rec["set_keys"] = sorted(set(rec.get("set_keys", [])) | set(set_keys))
    rec["written_sha256"] = hashlib.sha256(data).hexdigest()
    records[rel] = rec
    _exclude_local(repo, records)  # first: an info/exclude that cannot take its block refuses before anything is written
    _write_records(repo, records)  # the record next: a crash leaves something uninstall can use
    store.atomic_write(path, data, mode)  # the file keeps its permissions
    return result


LOCAL_BEGIN = "# >>> git-ckpt agent settings kept local (git ckpt agent uninstall removes this block)"
LOCAL_END = "# <<< git-ckpt agent settings"


def _exclude_local(repo: Repo, records: dict[str, Any]) -> list[str]:
    """Keep the local settings files hooks are installed into (``--local``: Claude Code's
    ``.claude/settings.local.json``, which the agent itself keeps out of git) ignored through
    git ckpt's block of ``info/exclude`` (:mod:`git_ckpt.exclude`): untracked, every checkpoint
    held them and a restore of one saved before the install deleted them, silently switching
    the agent's hooks off.  The block lists the local files of ``records``, and keeps listing
    one it listed while that file exists: uninstall keeps a local file the user edited since
    (their settings), which must not become an untracked file that checkpoints hold, push
    sends and a restore deletes."""
    from .exclude import pattern, read, set_block

    lines = read(repo).split("\n")
    listed = lines[lines.index(LOCAL_BEGIN) + 1:] if LOCAL_BEGIN in lines else []
    listed = listed[:next((i for i, ln in enumerate(listed) if ln.startswith(LOCAL_END)), 0)]
    local = {rel for rel, rec in records.items() if rec.get("agent") in SPECS and SPECS[rec["agent"]].local_path == rel}
    local |= {spec.local_path for spec in SPECS.values()
              if spec.local_path and pattern(spec.local_path) in listed and os.path.lexists(repo.workdir / spec.local_path)}
    return set_block(repo, LOCAL_BEGIN, LOCAL_END, [pattern(rel) for rel in sorted(local)])


def hooks_off(repo: Repo, agent: str, known: dict[str, Any] | None = None) -> str | None:
    """What says that a setting of ``agent``'s switches every hook off (``disableAllHooks``,
    Gemini's ``hooksConfig.enabled`` false) in one of the files it reads: the project's shared
    and local settings and the user's own (``~/...``); None when none does.  ``known`` maps a
    relative path to settings already read.  Unreadable or malformed files count as silent:
    this only informs, it never changes or refuses anything."""
    spec = SPECS[agent]
    places = [(rel, repo.workdir / rel) for rel in settings_files(repo, agent)]
    if spec.user_path:
        places.append((f"~/{spec.user_path}", Path.home() / spec.user_path))
    for shown, path in places:
        obj = (known or {}).get(shown)
        if obj is None:
            try:  # the worktree's files as state files; the user's own (~/...) may be a symlink (dotfiles)
                if not shown.startswith("~/") and store.link_on_the_way(repo.workdir, path) is not None:
                    continue
                obj = loads_json(read_state(path, cap=MAX_SETTINGS, follow=shown.startswith("~/")))
            except (OSError, CkptError, ValueError):
                continue
        for key, value in spec.off:
            got = _get_dotted(obj, key) if isinstance(obj, dict) else None
            if got == value and type(got) is type(value):
                return (f"{shown} sets {key} to {json.dumps(value)}, which switches every hook off: the agent will not run these "
                        "until you change it (git ckpt leaves your setting as it is)")
    return None


def settings_files(repo: Repo, agent: str, local: bool | None = None) -> list[str]:
    """The settings files (relative paths) :func:`uninstall` looks at for ``agent``: both the
    shared and the local one (``local`` None), or only one of them; none for ``generic``."""
    if agent not in SPECS:
        return []
    spec = SPECS[agent]
    if local is not None:
        return [str(settings_path(repo, agent, local).relative_to(repo.workdir))]
    return sorted({spec.path, *([spec.local_path] if spec.local_path else [])})


def uninstall(repo: Repo, agent: str, *, local: bool | None = None) -> list[dict[str, Any]]:
    """Remove what :func:`install` added for ``agent``: from every file it was installed into
    (``local`` None), or only the local (True) or shared (False) settings file.  When a file is
    byte-for-byte what install wrote, the original bytes and permission bits are put back (the
    file and the directories install created are removed if install created them); otherwise
    exactly the added handlers and keys are removed and the rest is kept.  Returns one
    ``{"path", "restored": "original"|"removed-file"|"edited"|"gone", "removed": [events]}``
    per file; none when nothing was installed for that agent (and file): uninstalling twice is
    not an error (``generic`` is never installed, so it always returns none).
    """
    if agent not in SPECS:
        snippet(agent)  # an unknown agent is still a usage error
        return []
    spec = SPECS[agent]
    records = _read_records(repo)
    from . import exclude

    exclude.read(repo)  # its block is updated last: one that cannot be is refused before anything is removed
    wanted = set(settings_files(repo, agent, local))
    rels = sorted(rel for rel, rec in records.items() if rec.get("agent") == agent and rel in wanted)
    if not rels:
        return []
    # the file whose install created the directories last, so they are empty when it goes
    # (install --local after install made .claude/ once: the first file's record owns it)
    order = sorted(rels, key=lambda r: (bool(records[r].get("created_dirs") or records[r].get("created_dir")), r))
    done = {rel: _uninstall_one(repo, spec, rel, records[rel]) for rel in order}
    out = [done[rel] for rel in rels]
    for rel in rels:
        rec = records.pop(rel)
        # a directory its install created that another installed file still fills: that file's
        # uninstall removes it once empty (else install --local, uninstall --shared, install,
        # uninstall left .claude/ behind)
        for d in rec.get("created_dirs", []):
            if (repo.workdir / d).is_dir():
                heir = next((r for r in sorted(records) if r.startswith(d + "/")), None)
                if heir is not None:
                    dirs = set(records[heir].get("created_dirs", [])) | {d}
                    records[heir]["created_dirs"] = sorted(dirs, key=lambda x: (-x.count("/"), x))
    _write_records(repo, records)
    _exclude_local(repo, records)
    if not records:
        try:
            shim_path(repo).unlink()
        except FileNotFoundError:
            pass
    return out


def _uninstall_one(repo: Repo, spec: Spec, rel: str, rec: dict[str, Any]) -> dict[str, Any]:
    path = repo.workdir / rel
    removed = sorted({a["event"] for a in rec["added"]})
    current = settings_bytes(repo, path)
    if current is None:
        return {"path": rel, "restored": "gone", "removed": removed}
    mode = stat.S_IMODE(path.stat().st_mode)
    if hashlib.sha256(current).hexdigest() == rec.get("written_sha256"):
        if rec["existed"]:
            original_mode = rec.get("mode")
            store.atomic_write(path, base64.b64decode(rec["original"]), original_mode if isinstance(original_mode, int) else mode)
            return {"path": rel, "restored": "original", "removed": removed}
        path.unlink()
        for d in rec.get("created_dirs", [".claude"] if rec.get("created_dir") else []):
            try:
                (repo.workdir / d).rmdir()
            except OSError:
                break
        return {"path": rel, "restored": "removed-file", "removed": removed}
    settings = _load_settings(path, current)
    kept = _without_ours(copy.deepcopy(settings), spec, rec)
    if kept == settings:  # reverted, or our handlers removed by hand: nothing to take out, nothing rewritten
        return {"path": rel, "restored": "absent", "removed": []}
    store.atomic_write(path, _dump(kept), mode)
    return {"path": rel, "restored": "edited", "removed": removed}


def _without_ours(settings: dict[str, Any], spec: Spec, rec: dict[str, Any]) -> dict[str, Any]:
    """``settings`` (changed in place, and returned) without the handlers and keys install
    added, as its record ``rec`` names them; everything else kept."""
    hooks = settings.get("hooks")
    if isinstance(hooks, dict):
        for a in rec["added"]:
            ev, group = a["event"], a["group"]
            entries = hooks.get(ev)
            if not isinstance(entries, list):
                continue
            command = _commands_in(group)[0]
            kept = []
            for e in entries:
                if e == group:
                    continue
                if isinstance(e, dict) and isinstance(e.get("hooks"), list):
                    inner = [h for h in e["hooks"] if not (isinstance(h, dict) and h.get("command") == command)]
                    if not inner and e["hooks"]:
                        continue
                    if len(inner) != len(e["hooks"]):
                        e = dict(e, hooks=inner)
                elif command in _commands_in(e):
                    continue
                kept.append(e)
            if kept or ev in rec.get("events_existed", []):
                hooks[ev] = kept
            else:
                del hooks[ev]
        if not hooks and not rec.get("hooks_key_existed"):
            del settings["hooks"]
    for key in rec.get("set_keys", []):
        if _get_dotted(settings, key) == spec.defaults.get(key):
            _del_dotted(settings, key)
    return settings


def status(repo: Repo) -> list[dict[str, Any]]:
    """What ``install`` recorded in this worktree: one row per settings file, ``{"path",
    "agent", "events", "state": "intact" (the bytes install wrote) | "edited" (our hooks still
    in it) | "absent" (none of them is: the file was reverted, or they were removed by hand) |
    "gone" (deleted since), "intact": bool, "local": bool}``, ordered by path."""
    rows = []
    for rel, rec in sorted(_read_records(repo).items()):
        path = repo.workdir / rel
        try:
            data = settings_bytes(repo, path)
        except CkptError:
            data = b""  # not a file install wrote: edited
        spec = SPECS.get(str(rec.get("agent")))
        state = ("gone" if data is None else
                 "intact" if hashlib.sha256(data).hexdigest() == rec.get("written_sha256") else "edited")
        if state == "edited" and spec is not None and data:
            try:
                settings = _load_settings(path, data)
                if _without_ours(copy.deepcopy(settings), spec, rec) == settings:
                    state = "absent"
            except (CkptError, ValueError):
                pass  # unreadable: edited
        rows.append({"path": rel, "agent": rec.get("agent"), "events": sorted({a["event"] for a in rec.get("added", [])}),
                     "state": state, "intact": state == "intact", "local": spec is not None and spec.local_path == rel})
    return rows


# ------------------------------------------------------------------------------ the hook itself

MAX_INPUT = 1 << 20


def session_of(payload: bytes) -> dict[str, Any]:
    """The fields git ckpt uses from an agent hook's JSON input (attacker-shaped: anything the
    agent or a tool put there): ``session`` (``session_id``, ``sessionId`` or Cursor's
    ``conversation_id``; printable, at most 128 characters) and ``event``.  Unreadable input
    gives ``{}``."""
    try:
        obj = loads_json(payload[:MAX_INPUT]) if payload.strip() else {}
    except ValueError:  # UnicodeDecodeError and NestedTooDeep included
        return {}
    if not isinstance(obj, dict):
        return {}
    out = {}
    for key in ("session_id", "sessionId", "conversation_id"):
        v = obj.get(key)
        if isinstance(v, (str, int)) and not isinstance(v, bool):
            v = str(v)
            if 0 < len(v) <= 128 and v.isprintable():
                out["session"] = v
                break
    ev = obj.get("hook_event_name") or obj.get("hookEventName")
    if isinstance(ev, str) and len(ev) <= 64 and ev.isprintable():
        out["event"] = ev
    return out


def input_problem(payload: bytes | None) -> str | None:
    """Why a hook's stdin is not the JSON object every agent sends, or None.  ``payload`` is
    None when stdin is a terminal (the hook run by hand: nothing to read, not a problem); empty
    input is one (every agent sends a JSON object: the hook is wired to something else)."""
    if payload is None:
        return None
    if not payload.strip():
        return "the input on stdin is empty (the agent sends a JSON object)"
    try:
        obj = loads_json(payload)
    except ValueError:  # UnicodeDecodeError and NestedTooDeep included
        return "the input on stdin is not JSON"
    if not isinstance(obj, dict):
        return "the input on stdin is not a JSON object"
    return None


def start_output(agent: str, text: str) -> str:
    """What a session-start hook prints so the agent adds ``text`` (the handoff receipt) to the
    new session's context: plain text for Claude Code, Codex and Copilot; the JSON Gemini CLI
    (which reads stdout as JSON only) and Cursor expect."""
    if agent == "gemini":
        return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}) + "\n"
    if agent == "cursor":
        return json.dumps({"additional_context": text}) + "\n"
    return text


def quiet_output(agent: str) -> str:
    """What a save hook prints on stdout: nothing, or ``{}`` where stdout must be JSON."""
    return "{}\n" if agent in ("gemini", "cursor") else ""
