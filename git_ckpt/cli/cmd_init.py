"""git ckpt init: write a starter .ckpt.toml."""

from __future__ import annotations

import os

import click

from . import emit, json_option, open_repo, say


@click.command("init")
@click.option("--force", is_flag=True, help="Overwrite an existing .ckpt.toml.")
@click.option("--hooks", "with_hooks", is_flag=True, help="Also install the commit gate hooks (git ckpt hooks install).")
@json_option
def command(force: bool, with_hooks: bool, as_json: bool) -> int:
    """Write a starter .ckpt.toml at the worktree root (never overwriting one without --force),
    and say the next step: name the verifiers in it, then git ckpt trust."""
    from ..config import CONFIG_FILE, STARTER
    from ..errors import UsageError
    from ..store import atomic_write

    repo = open_repo()
    path = repo.workdir / CONFIG_FILE
    if os.path.lexists(path) and not force:  # (a dangling symlink is one too)
        raise UsageError(f"{CONFIG_FILE} already exists",
                         "git ckpt hooks install installs the hooks alone" if with_hooks else "edit it, or pass --force to replace it")
    atomic_write(path, STARTER.encode())
    hooks = None
    if with_hooks:
        from ..hooks import install

        hooks = install(repo)
    def human() -> None:
        say(f"wrote {path}")
        if hooks is not None:
            from .cmd_hooks import say_installed

            say_installed(hooks)
        say(f"next: name your test commands as [[verifier]] entries in {CONFIG_FILE}, then git ckpt trust"
            " (verifiers run only from a .ckpt.toml you trusted, byte for byte)")

    emit("init", {"config": str(path), "hooks": hooks}, as_json, human)
    return 0
