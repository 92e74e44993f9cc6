"""git ckpt verify-commit: was a commit's tree a verified checkpoint?  (pre-push, CI)"""

from __future__ import annotations

import sys

import click

from . import emit, json_option, open_repo, say, warn


@click.command("verify-commit")
@click.argument("revs", nargs=-1)
@click.option("--pre-push", "pre_push", default=None, metavar="REMOTE",
              help="pre-push hook mode: read the hook's ref lines on stdin and check every pushed commit.")
@json_option
def command(revs: tuple[str, ...], pre_push: str | None, as_json: bool) -> int:
    """Check that each REV's tree is the content of a checkpoint (local, or fetched with git ckpt
    fetch) whose required verifiers all passed, as .ckpt.toml defines them now.  Rebase,
    cherry-pick and --no-verify skip the pre-commit gate; this checks any commit afterwards.

    Exit 0 when every REV is verified, 1 when one is not, 4 for an unknown revision.  With
    --pre-push REMOTE (what the pre-push hook runs) it checks the commits being pushed to
    branches and follows [gate] pre_push in .ckpt.toml: "warn" (default) prints warnings and
    exits 0, "refuse" exits 1, "off" checks nothing; it does nothing unless ckpt.gate is true.

    Only results this repository's own git ckpt verify recorded count (a result fetched from a
    teammate is shown by list and show but is not evidence).  An untrusted .ckpt.toml (never
    trusted with verifiers, or changed or deleted since git ckpt trust) exits 9, in --pre-push
    mode too: neither its requirement nor its [gate] pre_push can be relied on.
    """
    from .. import config, trust
    from ..errors import UsageError
    from ..gate import enabled, pushed_commits, verify_commit

    repo = open_repo()
    cfg = config.load(repo)
    mode = "refuse"
    if pre_push is not None:
        if not enabled(repo):
            return 0
        # an untrusted .ckpt.toml decides neither the requirement nor [gate] pre_push
        trust.check(repo, cfg, doing="push refused: the pushed commits cannot be judged (git push --no-verify skips this check)")
        mode = cfg.gate.pre_push
        if mode == "off":
            return 0
        revs = tuple(pushed_commits(repo, sys.stdin.buffer.read(), pre_push or None))
    elif not revs:
        raise UsageError("name at least one commit", "git ckpt verify-commit HEAD")
    else:
        trust.check(repo, cfg, doing="no commit can be judged verified")
    verdicts = [verify_commit(repo, cfg, r) for r in revs]
    bad = [v for v in verdicts if not v.verified]

    def human() -> None:
        for v in verdicts:
            short = v.commit[:12]
            if v.verified:
                if pre_push is None:
                    say(f"{v.rev} ({short}): verified: tree of checkpoint {v.checkpoint}" + (" (promoted)" if v.promoted else ""))
            elif pre_push is not None:
                warn(f"pushing unverified commit {short}: {v.reason}")
            else:
                say(f"{v.rev} ({short}): not verified: {v.reason}")
        if pre_push is not None and bad:
            if mode == "refuse":
                click.echo(f"error: push refused: {len(bad)} commit(s) are not verified checkpoints ([gate] pre_push = \"refuse\")", err=True)
            click.echo("hint: git ckpt verify-commit REV explains each; verify the content with git ckpt save && git ckpt verify", err=True)

    emit("verify-commit", [v.to_json() for v in verdicts], as_json, human)
    if bad and (pre_push is None or mode == "refuse"):
        return 1
    return 0
