"""git ckpt trust: allow this exact .ckpt.toml to run its verifier commands."""

from __future__ import annotations

import shlex

import click

from . import emit, json_option, open_repo, say


def _command_text(command: str | list[str]) -> str:
    return command if isinstance(command, str) else shlex.join(command)


@click.command("trust")
@click.option("--show", is_flag=True, help="Print what would run and whether it is trusted; change nothing.")
@json_option
def command(show: bool, as_json: bool) -> int:
    """Trust the exact bytes of .ckpt.toml: its sha256 is recorded for this worktree in the
    per-user data directory, and verifier commands run only while the file is unchanged.

    Verifiers defined only in the local git config (ckpt.verifier.NAME.command) need no trust.
    With --show, print every verifier that would run (name, command, required, timeout, env,
    cwd, where it is defined) and the trust state, and record nothing.
    """
    from .. import config, trust

    repo = open_repo()
    cfg = config.load(repo)
    st = trust.state(repo, cfg)
    verifiers = trust.describe(cfg)
    if not show:
        trust.record(repo, cfg.source)
        st = trust.state(repo, cfg)
    result = {"sha256": st.sha256, "trusted": st.trusted, "needed": st.needed, "recorded": st.recorded,
              "config": str(repo.workdir / config.CONFIG_FILE) if cfg.source else None, "verifiers": verifiers,
              "store": str(trust.data_dir() / trust.TRUST_FILE), "ignored": list(cfg.ignored)}

    def human() -> None:
        if show:
            if not verifiers:
                say("no verifiers configured: git ckpt verify would run nothing")
            else:
                say("git ckpt verify would run:")
            for v in verifiers:
                extra = []
                if v["env"]:
                    extra.append("env " + " ".join(f"{k}={shlex.quote(val)}" for k, val in sorted(v["env"].items())))
                if v["cwd"]:
                    extra.append(f"cwd {v['cwd']}")
                shell = " (run by /bin/sh -c)" if isinstance(v["command"], str) else ""
                say(f"  {v['name']}: {_command_text(v['command'])}{shell}")
                say(f"      {'required' if v['required'] else 'optional'}, timeout {v['timeout']:g} s, from {v['origin']}"
                    + ("".join(f", {e}" for e in extra)))
            for key in cfg.ignored:
                say(f"ignored: git config {key} (git config may add verifiers, never loosen one .ckpt.toml defines)")
            state = "trusted" if st.trusted else ("not trusted" if st.needed else "no trust needed")
            say(f".ckpt.toml sha256 {st.sha256}: {state}" if cfg.source
                else f"no .ckpt.toml: {state} (git config's verifiers are yours)" if state == "no trust needed" else f"no .ckpt.toml: {state}")
            if st.needed and not st.trusted:
                say("hint: git ckpt trust allows it")
        else:
            say(f"trusted .ckpt.toml (sha256 {st.sha256})" if cfg.source else "trusted: no .ckpt.toml (sha256 of empty content)")
            for v in verifiers:
                say(f"  {v['name']}: {_command_text(v['command'])}")

    emit("trust", result, as_json, human)
    return 0
