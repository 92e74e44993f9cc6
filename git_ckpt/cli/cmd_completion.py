"""git ckpt completion: the shell completion script for bash, zsh or fish."""

from __future__ import annotations

import click

# bash: git's own completion (git-completion.bash) calls _git_ckpt for `git ckpt <TAB>`; the
# words after `git` are handed to git-ckpt, whose click layer answers (commands, options,
# checkpoint names).  `git-ckpt <TAB>` is completed too.
BASH = r'''# git ckpt completion for bash: eval "$(git ckpt completion bash)" (after git's completion)
_git_ckpt_words ()
{
	# $1: the words after "git" (ckpt ...), $2: the index of the word being completed
	local IFS=$'\n' line
	local -a out
	out=($(COMP_WORDS="$1" COMP_CWORD="$2" _GIT_CKPT_COMPLETE=bash_complete git-ckpt 2>/dev/null))
	_git_ckpt_reply=()
	_git_ckpt_files=
	for line in "${out[@]}"; do
		case "${line%%,*}" in
		plain) _git_ckpt_reply+=("${line#*,}") ;;
		file|dir) _git_ckpt_files=1 ;;
		esac
	done
}
_git_ckpt ()
{
	# called by git's completion with $words, $cword and $cur set
	local w="${words[*]:1}"
	_git_ckpt_words "$w" "$((cword - 1))"
	if [ -n "$_git_ckpt_files" ] && [ ${#_git_ckpt_reply[@]} -eq 0 ]; then
		return  # git's completion falls back on file names
	fi
	local IFS=$'\n'
	__gitcomp_nl "${_git_ckpt_reply[*]}"
}
_git_ckpt_standalone ()
{
	local w="ckpt ${COMP_WORDS[*]:1}"
	_git_ckpt_words "$w" "$COMP_CWORD"
	COMPREPLY=()
	local c
	for c in "${_git_ckpt_reply[@]}"; do COMPREPLY+=("$c"); done
	[ ${#COMPREPLY[@]} -eq 0 ] && [ -n "$_git_ckpt_files" ] && compopt -o default 2>/dev/null
	return 0
}
complete -F _git_ckpt_standalone git-ckpt
'''

# zsh: zsh's own _git completes user commands through `_git-NAME`, announced by the
# user-commands style.
ZSH = r'''# git ckpt completion for zsh: eval "$(git ckpt completion zsh)" (after compinit)
zstyle ':completion:*:*:git:*' user-commands ckpt:'checkpoint the working tree (git ckpt)'
_git-ckpt () {
	local -a lines described plain
	local kind value help i
	lines=("${(@f)$(COMP_WORDS="ckpt ${words[*]:1}" COMP_CWORD=$((CURRENT - 1)) _GIT_CKPT_COMPLETE=zsh_complete git-ckpt 2>/dev/null)}")
	for ((i = 1; i + 2 <= ${#lines}; i += 3)); do
		kind=${lines[i]} value=${lines[i+1]} help=${lines[i+2]}
		case $kind in
		plain) if [[ $help == _ ]]; then plain+=("$value"); else described+=("$value:$help"); fi ;;
		file|dir) _files; return ;;
		esac
	done
	(( ${#described} )) && _describe -t values 'git ckpt' described
	(( ${#plain} )) && compadd -U -V unsorted -a plain
	return 0
}
compdef _git-ckpt git-ckpt 2>/dev/null
'''

# fish: a completion for `git ckpt ...` and for `git-ckpt ...`.  It is installed into conf.d,
# which every fish sources at start-up: fish autoloads completions/NAME.fish by the command
# being completed, so a completions/git-ckpt.fish would be read only once something completed
# `git-ckpt` (fish 3.6's git.fish never dispatches `git ckpt` to it).  `complete -c git` here
# adds to fish's own git completions, which still autoload.
FISH = r'''# git ckpt completion for fish, sourced by every fish at start-up:
#   mkdir -p ~/.config/fish/conf.d && git ckpt completion fish > ~/.config/fish/conf.d/git-ckpt.fish
function __git_ckpt_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    if test "$words[1]" = git
        set words $words[2..-1]
    else
        set words ckpt $words[2..-1]
    end
    set -l out (env COMP_WORDS="$words $cur" COMP_CWORD="$cur" _GIT_CKPT_COMPLETE=fish_complete git-ckpt 2>/dev/null)
    for line in $out
        set -l kind (string split -m 1 , -- $line)
        switch $kind[1]
            case plain
                echo $kind[2]
            case file dir
                __fish_complete_path $cur
        end
    end
end
complete -c git -n '__fish_seen_subcommand_from ckpt' -f -a '(__git_ckpt_complete)'
complete -c git -n '__fish_use_subcommand' -f -a ckpt -d 'checkpoint the working tree'
complete -c git-ckpt -f -a '(__git_ckpt_complete)'
'''

SCRIPTS = {"bash": BASH, "zsh": ZSH, "fish": FISH}


@click.command("completion")
@click.argument("shell", type=click.Choice(sorted(SCRIPTS)))
def command(shell: str) -> int:
    """Print the shell completion script for SHELL (bash, zsh or fish): commands, options and checkpoint names for git ckpt <TAB>.

    bash: eval "$(git ckpt completion bash)" in ~/.bashrc, after git's own completion (it calls
    _git_ckpt).  zsh: eval "$(git ckpt completion zsh)" after compinit.  fish: git ckpt
    completion fish > ~/.config/fish/conf.d/git-ckpt.fish (conf.d, which every fish reads at
    start-up: a completions/ file would be read only after something completed git-ckpt).
    """
    click.echo(SCRIPTS[shell], nl=False)
    return 0
