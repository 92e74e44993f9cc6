"""git ckpt help: the manual, or one command's help."""

from __future__ import annotations

import click


@click.command("help")
@click.argument("words", nargs=-1)
@click.pass_context
def command(ctx: click.Context, words: tuple[str, ...]) -> int:
    """Show the manual (the git-ckpt man page), or the help of COMMAND (git ckpt help task start).

    Without COMMAND this is what git help ckpt shows; it works after an editable install too
    (the page is shipped inside the package and rendered with man -l when man cannot find it).
    """
    from .. import manual
    from . import cli, warn

    if words:
        cmd: click.Command = cli
        sub_ctx = ctx.find_root()
        for w in words:
            sub = cmd.get_command(sub_ctx, w) if isinstance(cmd, click.Group) else None
            if sub is None:  # worded (and hinted) as every unknown command is
                raise click.exceptions.NoSuchCommand(
                    w, possibilities=cmd.list_commands(sub_ctx) if isinstance(cmd, click.Group) else None, ctx=sub_ctx)
            cmd = sub
            sub_ctx = click.Context(cmd, info_name=w, parent=sub_ctx)  # -h/--help as the parent says
        click.echo(cmd.get_help(sub_ctx))
        return 0
    rc = manual.show()
    if rc == 127:  # no man program: the group help, and where the page is
        click.echo(ctx.parent.get_help() if ctx.parent else "")
        warn("no man program found; the manual is git_ckpt/man/git-ckpt.1 (roff) in the installed package")
        return 0
    return rc
