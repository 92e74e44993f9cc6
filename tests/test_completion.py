"""`git ckpt completion bash|zsh|fish` (issue 15, input 10), driven through the shells' own
completion machinery: bash through git's completion script (git calls `_git_ckpt`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from conftest import ckpt, git

VENDOR = Path("/work/shared/vendor/git-2.55.0.tar.gz")


def git_completion_script(tmp_path) -> Path | None:
    """git's contrib/completion/git-completion.bash: the machine's, else from git's source tarball."""
    for p in ("/usr/share/bash-completion/completions/git", "/etc/bash_completion.d/git"):
        if os.path.exists(p):
            return Path(p)
    if VENDOR.exists():
        with tarfile.open(VENDOR) as tf:
            member = next(m for m in tf.getmembers() if m.name.endswith("contrib/completion/git-completion.bash"))
            out = tmp_path / "git-completion.bash"
            out.write_bytes(tf.extractfile(member).read())
            return out
    return None


def complete_bash(repo, tmp_path, lines: list[str]) -> list[list[str]]:
    """For each command line (completed at its end), what bash offers, via git's completion
    (`__git_wrap__git_main`, what `complete -F` runs for `git`) or ours for `git-ckpt`."""
    script = git_completion_script(tmp_path)
    if script is None:
        pytest.skip("no git-completion.bash on this machine")
    ours = ckpt(repo, "completion", "bash", fsck=False).out
    (tmp_path / "ours.bash").write_text(ours)
    body = [f"source {script}", f"source {tmp_path / 'ours.bash'}"]
    for line in lines:
        # bash breaks words at ':' as well (COMP_WORDBREAKS): "origin:fix" is origin, :, fix
        words = [p for w in line.split(" ") for p in (re.split(r"(:)", w) if w else [w]) if p != "" or not w]
        fn = "__git_wrap__git_main" if words[0] == "git" else "_git_ckpt_standalone"
        arr = " ".join(f"'{w}'" for w in words)
        body += [f"COMP_WORDS=({arr}); COMP_CWORD={len(words) - 1}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}",
                 "COMPREPLY=()", fn, 'printf "%s\\n" "${COMPREPLY[@]}"', "echo ---END---"]
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", "\n".join(body)], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    chunks = proc.stdout.split("---END---\n")[:-1]
    return [[w.rstrip(" ") for w in c.splitlines() if w] for c in chunks]


def _commands(repo, group=""):
    import re

    out = ckpt(repo, *([group] if group else []), "-h", fsck=False).out
    return [m.group(1) for m in re.finditer(r"^  (\S+)", out.split("Commands:\n", 1)[1], re.M)]


def test_bash_completion_through_gits_completion(repo, tmp_path):
    """`git ckpt <TAB>` lists the commands; a prefix of each command completes to it (every
    command and every subcommand of task, hooks, agent); options, checkpoint and task names."""
    (repo / "f").write_text("f\n")
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "task", "start", "fix-auth")
    (repo / "f").write_text("g\n")
    ckpt(repo, "save", "-m", "two")
    top = _commands(repo)
    cases = ["git ckpt ", "git ckpt sa", "git ckpt task s", "git ckpt save --me", "git ckpt show ",
             "git ckpt restore fix", "git ckpt list --task ", "git ckpt completion ", "git-ckpt sa", "git-ckpt ag"]
    prefixes = [(f"git ckpt {name[:2]}", name) for name in top]
    for group in ("task", "hooks", "agent"):
        prefixes += [(f"git ckpt {group} {name[:2]}", name) for name in _commands(repo, group)]
    got = complete_bash(repo, tmp_path, cases + [p for p, _ in prefixes])
    fixed = dict(zip(cases, got))
    assert sorted(fixed["git ckpt "]) == sorted(top)
    assert fixed["git ckpt sa"] == ["save"]
    assert sorted(fixed["git ckpt task s"]) == ["show", "start"]
    assert fixed["git ckpt save --me"] == ["--message"]
    assert fixed["git ckpt show "][:3] == ["@", "@~1", "promoted"] and {"default/1", "fix-auth/1"} <= set(fixed["git ckpt show "])
    assert fixed["git ckpt restore fix"] == ["fix-auth/1"]
    assert sorted(fixed["git ckpt list --task "]) == ["default", "fix-auth"]
    assert fixed["git ckpt completion "] == ["bash", "fish", "zsh"]
    assert fixed["git-ckpt sa"] == ["save"] and fixed["git-ckpt ag"] == ["agent"]
    for (line, name), offered in zip(prefixes, got[len(cases):]):
        assert name in offered, (line, offered)


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts(repo, shell):
    """The zsh and fish scripts are printed; where the shell exists, it reads them without error
    and its completion function offers the commands."""
    script = ckpt(repo, "completion", shell, fsck=False).out
    assert "_GIT_CKPT_COMPLETE=" + ("zsh_complete" if shell == "zsh" else "fish_complete") in script
    exe = shutil.which(shell)
    if exe is None:
        pytest.skip(f"no {shell} on this machine")
    if shell == "fish":
        (repo / "f").write_text("f\n")
        ckpt(repo, "save", "-m", "one")
        proc = subprocess.run([exe, "-c", f"{script}\ncomplete -C 'git-ckpt sa'; echo ---; complete -C 'git ckpt sa'; "
                               "echo ---; complete -C 'git ckpt show def'; echo ---; complete -C 'git ckpt task s'"],
                              cwd=repo, capture_output=True, text=True)
        got = [[ln.split("\t")[0] for ln in part.splitlines() if ln] for part in proc.stdout.split("---\n")]
        assert proc.returncode == 0 and got == [["save"], ["save"], ["default/1"], ["show", "start"]], proc
    else:
        proc = subprocess.run([exe, "-f", "-c", f"autoload -U compinit; compinit -u; {script}\nwhence -w _git-ckpt"],
                              cwd=repo, capture_output=True, text=True)
        assert proc.returncode == 0 and "function" in proc.stdout, proc


def test_completion_of_an_unknown_shell_is_usage(repo):
    res = ckpt(repo, "completion", "tcsh", rc=2, fsck=False)
    assert res.err.startswith("error: invalid value for '{bash|fish|zsh}': 'tcsh' is not one of ")


# zsh: a real interactive zsh in a pseudo-terminal (zsh/zpty) with compinit, git's own _git
# completion and our script; TAB is bound to complete-word, and compadd is wrapped so that the
# matches zsh would offer are printed between two marker lines (compprefuncs/comppostfuncs).
ZSH_SETUP = r"""PROMPT='' RPROMPT=''
autoload -U compinit && compinit -u -d "$ZC_DUMP"
bindkey '^M' undefined
bindkey '^J' undefined
bindkey '^I' complete-word
zstyle ':completion:*' list-grouped false
zstyle ':completion:*' insert-tab false
compadd () {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
    builtin compadd "$@"
    return $?
  fi
  typeset -a __hits
  builtin compadd -A __hits "$@"
  (( $#__hits )) || return 1
  local h
  for h in $__hits; do print -r -- "MATCH:${(Q)h}"; done
}
zc-mark () { print -r -- "@@MARK@@" }
compprefuncs=( zc-mark )
comppostfuncs=( zc-mark exit )
source "$ZC_SCRIPT"
"""

ZSH_DRIVE = r"""zmodload zsh/zpty || exit 3
zpty z zsh -f -i
zpty -w z "source ${(q)ZC_SETUP}"
zpty -w -n z "$1"$'\t'
integer tog=0
local line
while zpty -r z line; do
  if [[ $line == *@@MARK@@* ]]; then
    (( tog++ )) && break || continue
  fi
  (( tog )) && [[ $line == *MATCH:* ]] && print -r -- "${line#*MATCH:}"
done
zpty -d z
"""


def complete_zsh(repo, tmp_path, line: str) -> list[str]:
    """What zsh offers for ``line<TAB>``, driven through its line editor."""
    exe = shutil.which("zsh")
    if exe is None:
        pytest.skip("no zsh on this machine")
    (tmp_path / "ours.zsh").write_text(ckpt(repo, "completion", "zsh", fsck=False).out)
    (tmp_path / "setup.zsh").write_text(ZSH_SETUP)
    (tmp_path / "drive.zsh").write_text(ZSH_DRIVE)
    env = dict(os.environ, ZC_DUMP=str(tmp_path / "zcompdump"), ZC_SETUP=str(tmp_path / "setup.zsh"),
               ZC_SCRIPT=str(tmp_path / "ours.zsh"))
    proc = subprocess.run([exe, "-f", str(tmp_path / "drive.zsh"), line], cwd=repo, capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 0, proc
    return [w.strip("\r\n") for w in proc.stdout.splitlines() if w.strip("\r\n")]


def test_zsh_completion_driven(repo, tmp_path):
    """`git ckpt <TAB>` in a real zsh (git's _git calls our _git-ckpt through the user-commands
    style) offers every command; `git ckpt restore <TAB>` the checkpoint names; a prefix
    narrows; `git-ckpt <TAB>` works too."""
    (repo / "f").write_text("f\n")
    ckpt(repo, "save", "-m", "one")
    ckpt(repo, "task", "start", "fix-auth")
    (repo / "f").write_text("g\n")
    ckpt(repo, "save", "-m", "two")
    assert sorted(complete_zsh(repo, tmp_path, "git ckpt ")) == sorted(_commands(repo))
    assert complete_zsh(repo, tmp_path, "git ckpt restore ") == ["@", "@~1", "promoted", "default/1", "fix-auth/1"]
    assert complete_zsh(repo, tmp_path, "git ckpt restore fix") == ["fix-auth/1"]
    assert sorted(complete_zsh(repo, tmp_path, "git ckpt task s")) == ["show", "start"]
    assert complete_zsh(repo, tmp_path, "git-ckpt sa") == ["save"]


def test_fetched_tasks_are_completed_where_they_are_read(tmp_path):
    """Fourth walkthrough: `list --task`, `handoff`, `log --task`, `task show` did not offer a
    teammate's fetched task (REMOTE:T).  Every command that reads one offers it, in bash (through
    git's completion and alone, with bash breaking the word at ':'), zsh and fish; commands that
    write a task (save, task done, gc) offer only this repository's tasks."""
    from test_fetched_tasks import _alice_task
    from test_remote import _team

    _bare, alice, bob = _team(tmp_path)
    _alice_task(alice, bob)
    ours = ["default"]
    everyone = ["default", "origin:fix-echo"]
    cases = {
        "git ckpt list --task ": everyone, "git ckpt log --task ": everyone, "git ckpt handoff ": everyone,
        "git ckpt task show ": everyone, "git ckpt stats ": everyone, "git ckpt report --task ": everyone,
        "git ckpt check --task ": everyone,
        "git ckpt handoff orig": ["origin:fix-echo"],
        "git ckpt list --task origin:f": ["fix-echo"],  # bash replaces what follows the ':'
        "git ckpt log --task origin:": ["fix-echo"],
        "git ckpt restore origin:fix-echo/": ["fix-echo/1", "fix-echo/2"],
        "git-ckpt task show origin:": ["fix-echo"],
        "git-ckpt restore origin:fix-echo/2": ["fix-echo/2"],
        "git ckpt save --task ": ours, "git ckpt task done ": ours, "git ckpt gc --task ": ours,
        "git ckpt push --task ": ours,
    }
    got = complete_bash(bob, tmp_path, list(cases))
    assert dict(zip(cases, got)) == cases
    if shutil.which("zsh"):
        assert complete_zsh(bob, tmp_path, "git ckpt task show ") == everyone
        assert complete_zsh(bob, tmp_path, "git ckpt list --task origin:") == ["origin:fix-echo"]
        assert complete_zsh(bob, tmp_path, "git ckpt task done ") == ours
    if exe := shutil.which("fish"):
        script = ckpt(bob, "completion", "fish", fsck=False).out
        proc = subprocess.run([exe, "-c", f"{script}\ncomplete -C 'git ckpt handoff '; echo ---; "
                               "complete -C 'git-ckpt log --task origin:'"], cwd=bob, capture_output=True, text=True)
        assert proc.returncode == 0, proc
        assert [[ln.split("\t")[0] for ln in part.splitlines() if ln] for part in proc.stdout.split("---\n")] == [
            everyone, ["origin:fix-echo"]]


def test_refs_named_like_shell_code_are_never_offered(repo, tmp_path):
    """A fetched ref is named by the remote, and `$(...)` is a valid ref name: completion offers
    only names that are valid task and remote names (bash's compgen -W expands its word list),
    for checkpoints and tasks alike, and nothing runs."""
    (repo / "f").write_text("f\n")
    ckpt(repo, "save", "-m", "one")
    commit = git(repo, "rev-parse", "refs/ckpt/default/1").decode().strip()
    for ref in ("refs/ckpt-remotes/origin/$(touch${IFS}pwned)/1", "refs/ckpt-remotes/$(touch${IFS}pwned)/t/1",
                "refs/ckpt/$(touch${IFS}pwned)/1", "refs/ckpt-remotes/origin/ok/1"):
        git(repo, "update-ref", ref, commit)
    got = complete_bash(repo, tmp_path, ["git ckpt restore ", "git ckpt list --task ", "git-ckpt show "])
    assert got[0] == ["@", "@~1", "promoted", "default/1", "origin:ok/1"]
    assert got[1] == ["default", "origin:ok"]
    assert got[2] == got[0]
    assert not (repo / "pwned").exists() and not (tmp_path / "pwned").exists()
