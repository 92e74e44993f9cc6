"""``git ckpt mcp``: the checkpoint operations as MCP tools over stdio.

Built on the official ``mcp`` Python SDK (the optional extra ``git-ckpt[mcp]``), imported only
here and only when the server starts, so no other command pays for it.  Every tool calls the
library functions directly (no subprocesses) in the repository the server was started in, and
returns one JSON object as text, the same data ``--json`` prints.  Restores are two calls: a plan
(``apply`` false) that returns ``plan_id``, then the restore with that ``plan_id``; a plan that
no longer matches the worktree is refused, so nothing is overwritten unseen.

Failures a user can cause come back as tool errors carrying the same ``error:``/``hint:`` text
the CLI prints; the server keeps running.  That includes text that is not valid UTF-8: a JSON
string holding a lone surrogate (``"\\ud800"``), which the SDK's own message parser would reject
without answering (the client would wait forever), is replaced on the way in by a marker that
the tool call refuses with a tool error naming the argument.  Every other line the SDK would drop
unanswered is answered on the way in (:func:`_screen_line`): one that is not JSON, is nested
deeper than 100 levels or is longer than :data:`MAX_LINE` (16 MiB) gets a JSON-RPC parse error
(-32700), JSON that is no object or no valid JSON-RPC request (no ``method``, an ``id`` that is
no string or integer, ``params`` neither an object nor an array) an invalid-request error
(-32600), ``params`` by position (an array) an invalid-params error (-32602).
"""

from __future__ import annotations

import builtins
import json
import os
import re
from typing import TYPE_CHECKING, Any, Callable, Iterator

from .errors import CkptError, UsageError
from .gitcore import Repo

if TYPE_CHECKING:
    from .model import Kind
    from .restore import Plan


def _content_identity(root: str | os.PathLike[str], plan: Plan) -> list[list[Any]]:
    """``[path, kind, mode, sha256]`` of every path ``plan`` writes or deletes (worktree,
    overlay, raw), as they are on disk now (``absent`` when missing): the content a plan id
    covers."""
    import hashlib
    import stat as st_

    from .model import path_to_str

    root_b = os.fsencode(root)
    out: list[list[Any]] = []
    for p in sorted(set(plan.write) | set(plan.delete) | set(plan.overlay_write) | set(plan.overlay_delete) | set(plan.raw_write)):
        full = os.path.join(root_b, p)
        try:
            info = os.lstat(full)
        except OSError:
            out.append([path_to_str(p), "absent", 0, ""])
            continue
        if st_.S_ISLNK(info.st_mode):
            out.append([path_to_str(p), "symlink", 0, hashlib.sha256(os.readlink(full)).hexdigest()])
        elif st_.S_ISREG(info.st_mode):
            h = hashlib.sha256()
            try:
                with open(full, "rb") as fh:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        h.update(chunk)
            except OSError:
                out.append([path_to_str(p), "unreadable", info.st_mode, ""])
                continue
            out.append([path_to_str(p), "file", info.st_mode & 0o7777, h.hexdigest()])
        else:
            out.append([path_to_str(p), "other", st_.S_IFMT(info.st_mode), ""])
    return out


def install_hint() -> str:
    """How to add the MCP SDK to the Python that runs git ckpt: the ``[mcp]`` extra is the one
    requirement ``mcp>=1.0`` (git-ckpt is not on a package index: from a checkout it is
    ``pip install '.[mcp]'``)."""
    import shlex
    import sys

    return f"{shlex.quote(sys.executable)} -m pip install 'mcp>=1.0' (or, in a git-ckpt checkout: pip install '.[mcp]')"


INSTRUCTIONS = """\
git ckpt checkpoints this repository's working tree (files, index, HEAD, an overlay of chosen
ignored files) into hidden git refs and restores it exactly.  Save before anything risky
(ckpt_save), restore with ckpt_restore (first without apply to see the plan, then with its
plan_id), verify with ckpt_verify, and read ckpt_handoff at the start of a session to learn the
goal, decisions, failed paths, touched files, last results and next step of the current task.
Record what you learn with ckpt_task_note."""


def _load_sdk() -> tuple[Any, type[Exception]]:
    """The server class and its ToolError, from mcp 2.x (MCPServer) or 1.x (FastMCP).

    Raises :class:`UsageError` with the install hint when the SDK is missing.
    """
    try:
        from mcp.server.mcpserver import MCPServer as Server
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        try:
            # mcp 1.x; the installed SDK (2.x, typed) has neither name, so mypy cannot follow these
            from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef, attr-defined, unused-ignore]
            from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef, unused-ignore]
        except ImportError:
            raise UsageError("git ckpt mcp needs the MCP Python SDK, which is not installed", install_hint()) from None
    return Server, ToolError


class Tools:
    """The tool implementations, independent of the SDK: each takes plain arguments and returns
    JSON-ready data, raising :class:`CkptError` on bad input."""

    def __init__(self, root: str) -> None:
        self.root = root

    def repo(self) -> Repo:
        """Open the repository afresh for every call (another process may have changed it)."""
        return Repo.discover(self.root)

    def _task(self, repo: Repo, task: str | None, *, read: bool = False) -> str:
        """The task named, which must exist (``read``: a fetched ``REMOTE:T`` too, for read-only
        tools; else :func:`git_ckpt.store.writable_task`, whose refusal says how to begin one), or
        the current one.  The CLI's ``--task``/``NAME`` check the same way."""
        from . import store

        if not task:
            return store.current_task(repo)
        return store.existing_task(repo, task, fetched=True) if read else store.writable_task(repo, task)

    # -- checkpoints --------------------------------------------------------------------

    def save(self, message: str = "", next: str | None = None, hypothesis: str | None = None,
             kind: str = "manual", task: str | None = None) -> dict[str, Any]:
        from . import config
        from .snapshot import save

        if kind not in ("manual", "auto"):
            raise UsageError(f"kind must be manual or auto, not {kind!r}")
        save_kind: Kind = "manual" if kind == "manual" else "auto"
        repo = self.repo()
        cfg = config.load(repo)
        t = self._task(repo, task)
        res = save(repo, cfg, task=t, message=message, kind=save_kind, next=next, hypothesis=hypothesis)
        return {**res.to_json(), "text": res.text()}

    def list(self, task: str | None = None) -> dict[str, Any]:
        from . import views

        from .evidence import fetched_states

        from . import store

        repo = self.repo()
        t = self._task(repo, task, read=True)
        remote, bare = store.split_task(t)
        rows = views.rows(repo, bare, f"{store.REMOTE_PREFIX}{remote}/", f"{remote}:") if remote else views.rows(repo, t)
        states = fetched_states(repo, rows, None if remote else [t])  # as `git ckpt list`: fetched results marked
        out = []
        for r in rows:
            shown, fetched = states.get(r.commit, (r.verifiers, []))
            r.verifiers = shown
            out.append(dict(r.to_json(), fetched=fetched))
        return {"task": t, "checkpoints": out}

    def show(self, checkpoint: str = "@") -> dict[str, Any]:
        from . import store, views

        from .evidence import about, evidence_tasks, mark_local, overlay_digest

        repo = self.repo()
        cp = store.resolve(repo, checkpoint, store.current_task(repo))
        data = views.show(repo, cp)
        lines = [r for r in data["results"] if "verifier" in r]
        for r, own, ok in zip(lines, mark_local(repo, lines, evidence_tasks(repo, cp), tree=cp.tree, overlay=overlay_digest(cp)),
                              about(lines, cp.tree, overlay_digest(cp)), strict=True):
            r["about"] = ok
            r["local"] = own  # as `git ckpt show`: False for a fetched result (never evidence)
        return data

    def diff(self, checkpoint: str = "@", other: str | None = None, patch: bool = False) -> dict[str, Any]:
        from . import config, store
        from .diff import compare

        repo = self.repo()
        task = store.current_task(repo)
        old = store.resolve(repo, checkpoint, task)
        cmp = compare(repo, config.load(repo), old, store.resolve(repo, other, task) if other else None)
        out: dict[str, Any] = cmp.to_json()
        if patch:
            text = repo.git("diff", "--no-ext-diff", "--no-color", cmp.old_tree, cmp.new_tree).stdout
            out["patch"] = text.decode("utf-8", "replace")[:200_000]
        return out

    def restore(self, checkpoint: str, apply: bool = False, plan_id: str | None = None, paths: builtins.list[str] | str | None = None) -> dict[str, Any]:
        """Plan (``apply`` false) or apply a restore.  The ``plan_id`` covers the target, the
        plan, and the content of every path the plan writes or deletes (kind, mode, sha256 of
        the bytes or link target): a path edited after the plan makes the apply refuse."""
        from . import config, store
        from .model import digest
        from .restore import parse_paths, restore

        repo = self.repo()
        cfg = config.load(repo)
        task = store.current_task(repo)
        cp = store.resolve(repo, checkpoint, task)
        paths = _strs(paths)
        rel = parse_paths(repo, paths, str(repo.workdir)) if paths else None
        plan = restore(repo, cfg, cp, task=task, paths=rel or None, dry_run=True)
        pid = digest([cp.commit, plan.plan.to_json(), sorted(paths or []), _content_identity(repo.workdir, plan.plan)])[:16]
        if not apply:
            return {"applied": False, "target": cp.id, "plan": plan.plan.to_json(), "plan_id": pid,
                    "text": f"plan to restore {cp.id}; call ckpt_restore again with apply=true and plan_id={pid} to apply it"}
        if plan_id != pid:
            raise UsageError(
                "restore needs the plan_id of a current plan: " + ("none given" if not plan_id else "the worktree changed since that plan"),
                "call ckpt_restore without apply, review the plan, then apply with its plan_id")
        res = restore(repo, cfg, cp, task=task, paths=rel or None)
        return {"applied": True, **res.to_json(), "text": "\n".join(res.lines())}

    def undo(self) -> dict[str, Any]:
        from . import config, store
        from .restore import undo

        repo = self.repo()
        res = undo(repo, config.load(repo), task=store.current_task(repo))
        return {**res.to_json(), "text": "\n".join(res.lines())}

    def verify(self, checkpoint: str = "@", only: builtins.list[str] | str | None = None, isolated: bool = False) -> dict[str, Any]:
        from . import config, store
        from . import verify as vmod

        repo = self.repo()
        cp = store.resolve(repo, checkpoint, store.current_task(repo))
        report = vmod.verify(repo, config.load(repo), cp, only=_strs(only) or None, isolated=isolated)
        data = report.to_json()
        data["text"] = "\n".join([vmod.describe(o) for o in report.outcomes] + ([f"promoted {report.promoted}"] if report.promoted else []))
        return data

    # -- the task card -------------------------------------------------------------------

    def handoff(self, task: str | None = None) -> dict[str, Any]:
        from . import config, handoff

        repo = self.repo()
        r = handoff.receipt(repo, self._task(repo, task, read=True), config.load(repo))
        return {"receipt": r, "markdown": handoff.markdown(r)}

    def task_start(self, task: str, goal: str | None = None, constraints: builtins.list[str] | str | None = None,
                   acceptance: builtins.list[str] | str | None = None) -> dict[str, Any]:
        from . import task as task_mod

        card = task_mod.start(self.repo(), task, goal=goal, constraints=_strs(constraints), acceptance=_strs(acceptance))
        return task_mod.card_json(card)

    def task_show(self, task: str | None = None) -> dict[str, Any]:
        from . import ledger, task as task_mod

        repo = self.repo()
        return task_mod.card_json(ledger.card(repo, self._task(repo, task, read=True)))

    def task_note(self, task: str | None = None, read: builtins.list[str] | str | None = None, fact: str | None = None,
                  evidence: builtins.list[str] | str | None = None, decided: builtins.list[str] | str | None = None, failed: str | None = None,
                  reason: str | None = None, assume: builtins.list[str] | str | None = None, confirm: int | None = None,
                  refute: int | None = None, question: builtins.list[str] | str | None = None, next: str | None = None) -> dict[str, Any]:
        from . import card, task as task_mod

        repo = self.repo()
        edit = card.Edit(read=_strs(read), fact=fact, evidence=_strs(evidence), decided=_strs(decided), failed=failed,
                         reason=reason, assume=_strs(assume), confirm=confirm, refute=refute, question=_strs(question), next=next)
        rec = card.note(repo, self._task(repo, task), edit, cwd=str(repo.workdir))
        return task_mod.card_json(rec.card)


def _strs(value: builtins.list[str] | str | None) -> builtins.list[str]:
    """A list-of-text tool argument as a list: one text given alone (as agents often pass one
    ``evidence``) is a list of one; None is empty."""
    return [] if value is None else [value] if isinstance(value, str) else list(value)


INVALID_TEXT = "\x00git-ckpt:not-utf-8\x00"


def _invalid(value: Any) -> bool:
    """Whether ``value`` (a JSON value) holds text :func:`_screen_line` marked as not UTF-8."""
    if isinstance(value, str):
        return INVALID_TEXT in value
    if isinstance(value, list):
        return any(_invalid(v) for v in value)
    if isinstance(value, dict):
        return any(_invalid(k) or _invalid(v) for k, v in value.items())
    return False


def _wrap(fn: Callable[..., dict[str, Any]], tool_error: type[Exception]) -> Callable[..., str]:
    def call(**kwargs: Any) -> str:
        bad = sorted(k for k, v in kwargs.items() if _invalid(k) or _invalid(v))
        if bad:
            raise tool_error(f"error: argument {bad[0]} is not valid UTF-8 text (it holds a lone surrogate)\n"
                             "hint: git ckpt stores text as UTF-8: send valid Unicode text")
        try:
            return json.dumps(fn(**kwargs), sort_keys=True)
        except CkptError as exc:
            raise tool_error(f"error: {exc.message}" + (f"\nhint: {exc.hint}" if exc.hint else "")) from None
    return call


def build_server(root: str) -> Any:
    """The MCP server object with every tool registered (not yet running).

    Raises :class:`UsageError` when the SDK is missing, :class:`RepoError` outside a repository.
    """
    Server, ToolError = _load_sdk()
    Repo.discover(root)  # fail now, not on the first call
    tools = Tools(root)
    server = Server("git-ckpt", instructions=INSTRUCTIONS)

    def reg(name: str, description: str) -> Callable[[Callable[..., str]], Callable[..., str]]:
        def deco(fn: Callable[..., str]) -> Callable[..., str]:
            wrapped = _wrap(getattr(tools, name.removeprefix("ckpt_")), ToolError)
            # The SDK builds the input schema from the signature and annotations of ``fn``.
            fn.__doc__ = description
            server.add_tool(_with_body(fn, wrapped), name=name, description=description)
            return fn
        return deco

    # Each tool below is a signature only (its body never runs): reg() registers _wrap's body under it.
    @reg("ckpt_save", "Save the working tree (tracked, untracked, index, overlay) as the next checkpoint of the current task. "
         "next/hypothesis update the task card. Returns the checkpoint id (T/N).")
    def ckpt_save(message: str = "", next: str | None = None, hypothesis: str | None = None, kind: str = "manual", task: str | None = None) -> str:
        raise NotImplementedError

    @reg("ckpt_list", "List the checkpoints of a task (default: current) with kind, message, promoted marker and verifier states.")
    def ckpt_list(task: str | None = None) -> str:
        raise NotImplementedError

    @reg("ckpt_show", "Show one checkpoint: manifest, files changed against its base, overlay files, verifier results.")
    def ckpt_show(checkpoint: str = "@") -> str:
        raise NotImplementedError

    @reg("ckpt_diff", "Changed paths between a checkpoint and the working tree (or another checkpoint); patch=true adds the patch.")
    def ckpt_diff(checkpoint: str = "@", other: str | None = None, patch: bool = False) -> str:
        raise NotImplementedError

    @reg("ckpt_restore", "Restore a checkpoint exactly. Call first without apply to get the plan and its plan_id; "
         "then call with apply=true and that plan_id. The current state is saved first (ckpt_undo returns to it).")
    def ckpt_restore(checkpoint: str, apply: bool = False, plan_id: str | None = None, paths: list[str] | str | None = None) -> str:
        raise NotImplementedError

    @reg("ckpt_undo", "Return to the state before the last restore (itself a restore, so undo twice goes back again).")
    def ckpt_undo() -> str:
        raise NotImplementedError

    @reg("ckpt_verify", "Run the configured verifiers on a checkpoint (default @: the latest, or after a restore the one restored), record the results as evidence, "
         "and promote it when every required verifier passed. Only a trusted .ckpt.toml runs.")
    def ckpt_verify(checkpoint: str = "@", only: list[str] | str | None = None, isolated: bool = False) -> str:
        raise NotImplementedError

    @reg("ckpt_handoff", "The resume receipt of a task: goal, decisions, touched files with line counts, next step, "
         "last verifier results, failed paths, open questions, unverified assumptions, and the commands to resume.")
    def ckpt_handoff(task: str | None = None) -> str:
        raise NotImplementedError

    @reg("ckpt_task_start", "Start (or switch to) a task and record its goal, constraints and acceptance criteria on its card.")
    def ckpt_task_start(task: str, goal: str | None = None, constraints: list[str] | str | None = None, acceptance: list[str] | str | None = None) -> str:
        raise NotImplementedError

    @reg("ckpt_task_show", "The task card: goal, constraints, acceptance, facts, decisions, failed paths, questions, assumptions, next step.")
    def ckpt_task_show(task: str | None = None) -> str:
        raise NotImplementedError

    @reg("ckpt_task_note", "Add to the task card in one ledger event: read (files), fact+evidence, decided, failed+reason+evidence "
         "(a checkpoint T/N or result T/N#VERIFIER), assume, confirm/refute (assumption number), question, next. "
         "evidence backs the note's fact, failed, confirm or refute, or else its one decided, assume or question.")
    def ckpt_task_note(task: str | None = None, read: list[str] | str | None = None, fact: str | None = None,
                       evidence: list[str] | str | None = None, decided: list[str] | str | None = None, failed: str | None = None,
                       reason: str | None = None, assume: list[str] | str | None = None, confirm: int | None = None,
                       refute: int | None = None, question: list[str] | str | None = None, next: str | None = None) -> str:
        raise NotImplementedError

    return server


def _with_body(signature_fn: Callable[..., str], body: Callable[..., str]) -> Callable[..., str]:
    """A function with ``signature_fn``'s name, signature and annotations that runs ``body``."""
    import functools

    @functools.wraps(signature_fn)
    def tool(*args: Any, **kwargs: Any) -> str:
        if args:
            import inspect as _inspect

            names = list(_inspect.signature(signature_fn).parameters)
            kwargs.update(zip(names, args, strict=False))
        return body(**kwargs)

    return tool


def _scrub(value: Any) -> Any:
    """``value`` with every string holding a lone surrogate replaced by :data:`INVALID_TEXT`."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return INVALID_TEXT
        return value
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    return value


#: The longest message line the server reads (bytes, its newline excluded).  A longer line is
#: read past without being kept (memory stays bounded) and answered with a JSON-RPC parse error.
MAX_LINE = 16 << 20
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
# a request id written first (or right after "jsonrpc") in a line, so at the top level of its object
_LEADING_ID = re.compile(rb'[ \t\r]*\{[ \t\r]*(?:"jsonrpc"[ \t\r]*:[ \t\r]*"2\.0"[ \t\r]*,[ \t\r]*)?"id"[ \t\r]*:[ \t\r]*'
                         rb'(-?[0-9]{1,15}|"[ !#-\[\]-~]{0,256}")[ \t\r]*[,}]')


def _leading_id(line: bytes) -> int | str | None:
    """The request id a line names first thing (``{"id": 5, ...`` or ``{"jsonrpc": "2.0", "id":
    5, ...``), so a client gets its answer for a request that cannot be read; None otherwise."""
    m = _LEADING_ID.match(line)
    if m is None:
        return None
    value: int | str = json.loads(m.group(1))
    return value


def _error_line(code: int, message: str, request_id: int | str | None) -> bytes:
    """A JSON-RPC error response line."""
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}).encode() + b"\n"


def _answer_id(value: Any) -> int | str | None:
    """The id an answer to a request naming ``value`` carries: ``value`` when it is a string or
    an integer (a JSON-RPC id), else null (JSON-RPC: the id could not be determined)."""
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def _request_problem(obj: dict[str, Any]) -> tuple[int, str] | None:
    """Why the SDK would read the message object ``obj`` as no request it answers (it drops such
    a line, or reads a request whose id is no string or integer as a notification): ``(code,
    message)`` of the JSON-RPC error to answer with (-32600 Invalid Request: no ``method`` or
    not a string, ``jsonrpc`` not ``"2.0"``, an ``id`` that is no string or integer, ``params``
    neither an object nor an array; -32602 Invalid params: ``params`` by position, an array,
    which MCP's methods never take); None when it reads it.  A response (an ``id`` with
    ``result`` or ``error`` and no ``method``: the client answering the server) is left to the
    SDK, and never answered (JSON-RPC)."""
    if "method" not in obj and "id" in obj and ("result" in obj or "error" in obj):
        return None
    if not isinstance(obj.get("method"), str):
        return INVALID_REQUEST, 'Invalid Request: "method" must be a string' if "method" in obj else 'Invalid Request: no "method"'
    if obj.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"'
    if "id" in obj and _answer_id(obj["id"]) is None:
        return INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer'
    params = obj.get("params")
    if isinstance(params, list):
        return INVALID_PARAMS, 'Invalid params: "params" must be an object (by name), not an array'
    if params is not None and not isinstance(params, dict):
        return INVALID_REQUEST, 'Invalid Request: "params" must be an object or an array'
    return None


def _screen_line(line: bytes) -> tuple[bytes | None, bytes | None]:
    """One message line from the client (newline included or not): ``(line for the SDK, answer
    for the client)``, one of them None (both for a notification the SDK would drop: JSON-RPC
    answers none).

    A line that is not JSON (malformed, not UTF-8, nested deeper than
    :data:`git_ckpt.model.MAX_JSON_DEPTH`) is answered with a parse error, and one that is JSON
    but no object (a batch included: the SDK reads none) with an invalid-request error, as JSON-RPC says (the SDK would
    drop either unanswered); the id is the one the line names first thing, else null.  An
    object that is no request the SDK answers (:func:`_request_problem`) is answered with an
    invalid-request or invalid-params error, its id when that is a string or an integer, else
    null.  Strings
    that are not valid UTF-8 (lone surrogate escapes such as ``"\\ud800"``) are replaced by
    :data:`INVALID_TEXT`, which the tool call refuses naming the argument.  A blank line is
    passed on; any other line unchanged but for a UTF-8 byte order mark, which is dropped (the SDK
    reads none).  Raises nothing."""
    from .model import loads_json

    if not line.strip():
        return line, None
    line = line.removeprefix(b"\xef\xbb\xbf")  # read as loads_json reads it: the SDK drops a BOM line unanswered
    try:
        obj = loads_json(line)
    except ValueError as exc:
        return None, _error_line(PARSE_ERROR, f"Parse error: {exc}", _leading_id(line))
    if not isinstance(obj, dict):  # neither SDK reads a batch (a list)
        return None, _error_line(INVALID_REQUEST, "Invalid Request: not a JSON object", None)
    problem = _request_problem(obj)
    if problem is not None:
        code, message = problem
        if code == INVALID_PARAMS and "id" not in obj:
            return None, None  # a notification is never answered (JSON-RPC), and the SDK reads none with such params
        return None, _error_line(code, message, _answer_id(obj.get("id")))
    if not _SURROGATE_ESCAPE.search(line):
        return line, None
    scrubbed = _scrub(obj)
    if scrubbed == obj:
        return line, None  # only valid surrogate pairs
    return json.dumps(scrubbed).encode() + b"\n", None


def _lines(src: Any, limit: int = MAX_LINE) -> Iterator[bytes | None]:
    """The lines read from binary file ``src`` (each with its newline, the last maybe without),
    in time and memory linear in the input: a line longer than ``limit`` bytes is yielded as
    None once, its bytes read past and dropped.  Stops at end of input or a read error."""
    buf = bytearray()
    skipping = False
    while True:
        try:
            chunk = src.read(65536)
        except OSError:
            break
        if not chunk:
            break
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                break
            if skipping:
                skipping = False
            elif len(buf) + nl - start > limit:
                buf.clear()
                yield None
            else:
                buf += chunk[start:nl + 1]
                yield bytes(buf)
                buf.clear()
            start = nl + 1
        if not skipping:
            buf += chunk[start:]
            if len(buf) > limit:
                buf.clear()
                skipping = True
                yield None
    if buf and not skipping:
        yield bytes(buf)


_END = b"\0git-ckpt: end of output\0\n"


def _pipe_std(serve: Callable[[], None]) -> None:
    """Run ``serve`` (the SDK's stdio server) with fd 0 and fd 1 on pipes: a thread feeds it the
    real stdin line by line through :func:`_screen_line`, answering itself what the SDK would
    drop, and another copies its output to the real stdout line by line, so the two writers
    never interleave within a line.  Returns once the output is copied."""
    import threading

    wire_in, wire_out = os.dup(0), os.dup(1)
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    os.dup2(r_in, 0)
    os.dup2(w_out, 1)
    os.close(r_in)
    lock = threading.Lock()

    def send(data: bytes) -> bool:
        with lock:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(wire_out, view):]
            except OSError:  # the client went away
                return False
        return True

    def pump_in() -> None:
        with os.fdopen(wire_in, "rb", buffering=0) as src, os.fdopen(w_in, "wb", buffering=0) as dst:
            for line in _lines(src):
                if line is None:
                    if not send(_error_line(PARSE_ERROR, f"Parse error: a message line longer than {MAX_LINE} bytes", None)):
                        return
                    continue
                forward, answer = _screen_line(line)
                try:
                    if forward is not None:
                        dst.write(forward)
                except OSError:  # the server went away
                    return
                if answer is not None and not send(answer):
                    return

    def pump_out() -> None:
        with os.fdopen(r_out, "rb", buffering=0) as src:
            for line in _lines(src, limit=1 << 62):
                assert line is not None
                if line.endswith(_END):
                    if len(line) > len(_END):
                        send(line[:-len(_END)])
                    return
                send(line)

    threading.Thread(target=pump_in, name="git-ckpt-mcp-stdin", daemon=True).start()
    out = threading.Thread(target=pump_out, name="git-ckpt-mcp-stdout", daemon=True)
    out.start()
    try:
        serve()
    finally:
        os.write(w_out, _END)  # after everything the SDK wrote: the copy ends here
        out.join()


def serve(root: str | None = None) -> None:
    """Run the server on stdin/stdout until the client closes the connection."""
    server = build_server(root or os.getcwd())
    _pipe_std(lambda: server.run("stdio"))
