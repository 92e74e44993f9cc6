"""Pairs for issue 14 target 5: agents pay no start-up.

``ckpt_save`` through the resident MCP server (``git ckpt mcp``, started once, spoken to over its
stdin/stdout with JSON-RPC as an MCP client does) against the plain-git capture of pair 1, and the
Claude Code ``Stop`` hook (the command ``git ckpt agent install claude-code`` writes) with nothing
changed against the same interpreter's ``python -c pass``.
"""

from __future__ import annotations

import json
import select
import subprocess
import time
from pathlib import Path

from bench_inputs import BIN, BenchError, Tree, run, timed
from bench_scenarios import PLAIN_CAPTURE, Row, Settings, Variant, _row, measure


class McpClient:
    """The real ``git ckpt mcp`` server in ``root``, initialised; :meth:`call` one tool."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(["git", "ckpt", "mcp"], cwd=root, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "ckpt-bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        """Send one request and wait for its answer (notifications in between are skipped)."""
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            ready, _, _ = select.select([self.proc.stdout], [], [], 600)
            if not ready:
                raise BenchError(f"git ckpt mcp did not answer {method}")
            line = self.proc.stdout.readline()
            if not line:
                raise BenchError(f"git ckpt mcp exited (code {self.proc.wait()}) during {method}")
            msg = json.loads(line)
            if msg.get("id") == self.next_id:
                return msg

    def call(self, tool: str, arguments: dict) -> dict:
        """``tools/call`` of ``tool``; its JSON result (raises on a tool error)."""
        res = self.request("tools/call", {"name": tool, "arguments": arguments})
        result = res.get("result") or {}
        text = (result.get("content") or [{}])[0].get("text", "")
        if "error" in res or result.get("isError"):
            raise BenchError(f"{tool}: {res.get('error') or text}")
        return json.loads(text)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(60)


def pair_mcp_save(tree: Tree, s: Settings) -> list[Row]:
    """``ckpt_save`` through one resident server vs the plain-git capture (index copy) of the same
    change, alternated; each side gets the pair 1 change before it runs."""
    tree.reset_base()
    n = [0]
    client = McpClient(tree.root, tree.env)
    times: dict[str, list[float]] = {"mcp ckpt_save": [], "plain git capture (index copy)": []}
    try:
        for i in range(s.warmup + s.reps):
            order = list(times) if i % 2 == 0 else list(reversed(times))
            for name in order:
                n[0] += 1
                tree.apply_change(f"mcp{n[0]}")
                if name == "mcp ckpt_save":
                    start = time.perf_counter()
                    saved = client.call("ckpt_save", {"message": f"bench {n[0]}"})
                    elapsed = time.perf_counter() - start
                    if not saved.get("created"):
                        raise BenchError(f"ckpt_save created nothing: {saved}")
                else:
                    elapsed = timed(["bash", "-c", PLAIN_CAPTURE, "plain", "copy", f"m{n[0]}"], tree.root, tree.env)
                if i >= s.warmup:
                    times[name].append(elapsed)
    finally:
        client.close()
    tree.reset_base()
    return [_row("5 mcp save", tree, times, "mcp ckpt_save", "plain git capture (index copy)", 1.2, "one resident server")]


def pair_stop_hook(tmp: Path, env: dict[str, str], s: Settings) -> list[Row]:
    """The Claude Code ``Stop`` hook command, exactly as installed, with nothing changed since the
    last checkpoint, vs ``python -c pass`` of the same interpreter (a 10-file repository)."""
    from bench_history import _small_repo

    tree = _small_repo(tmp, env, "stop-hook", 10)
    run(["git", "ckpt", "agent", "install", "claude-code"], tree.root, env)
    settings = json.loads((tree.root / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    payload = tmp / "stop-hook.json"
    payload.write_text(json.dumps({"session_id": "0199a2b3-bench", "hook_event_name": "Stop", "stop_hook_active": False,
                                   "cwd": str(tree.root), "transcript_path": str(tmp / "none.jsonl")}))
    hook = ["bash", "-c", f"{command} < {payload}"]
    run(hook, tree.root, env)  # the first turn saves; after it nothing changes
    noop = lambda i: None  # noqa: E731
    variants = [Variant("Stop hook (nothing changed)", noop, lambda i: hook),
                Variant("python -c pass", noop, lambda i: [str(BIN / "python"), "-c", "pass"])]
    times, _ = measure(tree, variants, s, reps=max(s.reps, 5) if s.reps > 1 else s.reps)
    count = run(["git", "for-each-ref", "refs/ckpt/"], tree.root, env).stdout.count(b" commit\t")
    return [_row("5 stop hook", tree, times, "Stop hook (nothing changed)", "python -c pass", 3.0,
                 f"{count} checkpoint refs after {len(times['python -c pass']) + s.warmup} hook runs")]
