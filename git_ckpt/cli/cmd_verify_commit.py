"""git ckpt verify-commit: was a commit's tree a verified checkpoint?  (pre-push, CI)"""

from __future__ import annotations

import sys

import click

from . import emit, json_option, open_repo, say, warn

#: How many unverified commits the pre-push hook names before it says "and N more".
SHOWN = 5


@click.command("verify-commit")
@click.argument("revs", nargs=-1)
@click.option("--pre-push", "pre_push", default=None, metavar="REMOTE",
              help="pre-push hook mode: read the hook's ref lines on stdin and check every pushed commit.")
@json_option
def command(revs: tuple[str, ...], pre_push: str | None, as_json: bool) -> int:
    """Check that each REV's tree is the content of a checkpoint (local, or fetched with git ckpt
    fetch) whose required verifiers all passed, as .ckpt.toml defines them now.  A REV may be a
    range (origin/main..HEAD, A...B, ^A B, A^!): every commit of it is checked.  Rebase,
    cherry-pick, revert and --no-verify skip the pre-commit gate; this checks any commit
    afterwards (in CI: git ckpt verify-commit origin/main..HEAD).

    Exit 0 when every commit is verified, 1 when one is not (each is named), 4 for an unknown
    revision.  With --pre-push REMOTE (what the pre-push hook runs) it reads the hook's lines on
    stdin (local ref, local object id, remote ref, remote object id: any refspec, HEAD, --all,
    --mirror, tags; deletions and refs/ckpt, refs/notes pushes are skipped) and checks
    git rev-list LOCAL --not --remotes=REMOTE REMOTE_OID SINCE, where SINCE is ckpt.gate.since
    (set by git ckpt hooks install: older history is exempt); it prints a count and the first
    few, and follows [gate] pre_push in .ckpt.toml: "warn" (default) exits 0, "refuse" exits 1,
    "off" checks nothing; it does nothing unless ckpt.gate is true.

    Only results this repository's own git ckpt verify recorded count (a result fetched from a
    teammate is shown by list and show but is not evidence).  An untrusted .ckpt.toml (never
    trusted with verifiers, or changed or deleted since git ckpt trust) exits 9, in --pre-push
    mode too (when the push sends history to judge: a push of only refs/ckpt and refs/notes, as
    git ckpt push, passes): neither its requirement nor its [gate] pre_push can be relied on.
    """
    from .. import config, store, trust
    from ..errors import UsageError
    from ..gate import Judge, commits_of, enabled, is_range, pushed_commits

    repo = open_repo()
    cfg = config.load(repo)
    mode = "refuse"
    if pre_push is not None:
        if not enabled(repo):
            return 0
        lines = sys.stdin.buffer.read()
        if not pushed_commits(repo, lines, pre_push or None):
            return 0  # no history to judge (refs/ckpt, refs/notes, deletions: git ckpt push): whatever the trust
        # an untrusted .ckpt.toml decides neither the requirement nor [gate] pre_push
        trust.check(repo, cfg, doing="push refused: the pushed commits cannot be judged (git push --no-verify skips this check)")
        mode = cfg.gate.pre_push
        if mode == "off":
            return 0
        pushed = pushed_commits(repo, lines, pre_push or None, cfg.gate.since)
        todo = [(c, c, repo.commit_tree_id(c) or "") for c in pushed]
    elif not revs:
        raise UsageError("name at least one commit or range", "git ckpt verify-commit HEAD, or git ckpt verify-commit origin/main..HEAD")
    else:
        trust.check(repo, cfg, doing="no commit can be judged verified")
        todo = commits_of(repo, list(revs))
    judge = Judge(repo, cfg)
    verdicts = [judge.commit(name, c, tree) for name, c, tree in todo]
    bad = [v for v in verdicts if not v.verified]
    ranged = any(is_range(r) for r in revs)

    def human() -> None:
        if pre_push is not None:
            if not bad:
                return
            warn(f"{len(bad)} of {len(verdicts)} pushed commit(s) are not verified checkpoints:")
            for v in bad[:SHOWN]:
                click.echo(f"  {v.commit[:12]}: {v.reason}", err=True)
            if len(bad) > SHOWN:
                click.echo(f"  ... and {len(bad) - SHOWN} more", err=True)
            if mode == "refuse":
                click.echo(f"error: push refused: {len(bad)} commit(s) are not verified checkpoints ([gate] pre_push = \"refuse\")", err=True)
            if len(bad) == 1:
                click.echo("hint: git ckpt verify-commit REV explains it; verify the content with git ckpt save && git ckpt verify", err=True)
            else:  # a save verifies the worktree: the tip's tree, not the commits before it
                click.echo("hint: each commit needs a verified checkpoint of its own tree, and git ckpt save && git ckpt verify "
                           "verifies the worktree's (the last commit's) only: squash them into one commit, then save and verify it "
                           f"(git reset --soft {pre_push or 'REMOTE'}/BRANCH && git commit), or git ckpt verify-commit REV explains each",
                           err=True)
            return
        for v in verdicts:
            short = v.commit[:12]
            label = short if v.rev == v.commit else f"{v.rev} ({short})"
            if v.verified:
                remote = store.split_task(v.checkpoint or "")[0]
                promoted = f" (promoted on {remote})" if remote else " (promoted)"
                say(f"{label}: verified: tree of checkpoint {v.checkpoint}" + (promoted if v.promoted else ""))
            else:
                say(f"{label}: not verified: {v.reason}")
        if ranged:
            say(f"{len(verdicts) - len(bad)} of {len(verdicts)} commit(s) verified")
        fixes = list(dict.fromkeys(v.fix for v in bad if v.fix))  # one per checkpoint, in the order named
        for fix in fixes[:SHOWN]:
            say(f"hint: {fix} records the missing result here")
        if len(fixes) > SHOWN:
            say(f"hint: ... and {len(fixes) - SHOWN} more checkpoint(s) to verify")

    emit("verify-commit", [v.to_json() for v in verdicts], as_json, human)
    if bad and (pre_push is None or mode == "refuse"):
        return 1
    return 0
