"""git ckpt mcp: serve the checkpoint operations to an agent as MCP tools over stdio."""

from __future__ import annotations

import click

from . import open_repo


@click.command("mcp")
@click.option("--json", "as_json", is_flag=True,
              help="Errors (no MCP SDK, not a repository) as a JSON envelope; the server itself speaks JSON-RPC either way.")
def command(as_json: bool) -> int:
    """Serve save, list, show, diff, restore (plan, then apply), undo, verify, handoff and task-card
    edits as MCP tools over stdin/stdout, in the repository of the current directory.

    Needs the MCP Python SDK: pip install '.[mcp]' in the git-ckpt checkout (or pip install 'mcp>=1.0'
    into the Python that runs git ckpt).  Register it with an agent, e.g.
    claude mcp add git-ckpt -- git ckpt mcp
    """
    from .. import mcp_server

    repo = open_repo()
    mcp_server.serve(str(repo.workdir))
    return 0
