"""git ckpt completion: the shell completion script for bash, zsh or fish."""

from __future__ import annotations

import click

from . import emit, json_option

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
_git_ckpt_strip ()
{
	# bash breaks words at ':' (COMP_WORDBREAKS): the word it replaces is what follows the
	# last ':' of $1, so a reply such as origin:fix/1 must lose the "origin:" (as git's own
	# completion of a refspec does)
	local pfx= i
	case "$COMP_WORDBREAKS" in *:*) case "$1" in *:*) pfx="${1%:*}:" ;; esac ;; esac
	for i in "${!_git_ckpt_reply[@]}"; do
		_git_ckpt_reply[i]="${_git_ckpt_reply[i]#"$pfx"}"
	done
	_git_ckpt_cur="${1#"$pfx"}"
}
_git_ckpt ()
{
	# called by git's completion with $words, $cword and $cur set (words rejoined at ':')
	local w="${words[*]:1}"
	_git_ckpt_words "$w" "$((cword - 1))"
	if [ -n "$_git_ckpt_files" ] && [ ${#_git_ckpt_reply[@]} -eq 0 ]; then
		return  # git's completion falls back on file names
	fi
	_git_ckpt_strip "$cur"
	local IFS=$'\n'
	__gitcomp_nl "${_git_ckpt_reply[*]}" "" "$_git_ckpt_cur"
}
_git_ckpt_standalone ()
{
	# the words up to the cursor, rejoined where bash broke them at ':'
	local -a ws=()
	local i w
	for ((i = 1; i <= COMP_CWORD; i++)); do
		w="${COMP_WORDS[i]}"
		if [ ${#ws[@]} -gt 0 ] && { [ "$w" = : ] || [ "${COMP_WORDS[i-1]}" = : ]; }; then
			ws[${#ws[@]}-1]+="$w"
		else
			ws+=("$w")
		fi
	done
	[ ${#ws[@]} -gt 0 ] || ws=("")
	_git_ckpt_words "ckpt ${ws[*]}" "${#ws[@]}"
	_git_ckpt_strip "${ws[${#ws[@]}-1]}"
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
		plain) if [[ $help == _ ]]; then plain+=("$value"); else described+=("${value//:/\\:}:$help"); fi ;;
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
@json_option
def command(shell: str, as_json: bool) -> int:
    """Print the shell completion script for SHELL (bash, zsh or fish): commands, options and checkpoint names for git ckpt <TAB>.

    bash: eval "$(git ckpt completion bash)" in ~/.bashrc, after git's own completion (it calls
    _git_ckpt).  zsh: eval "$(git ckpt completion zsh)" after compinit.  fish: git ckpt
    completion fish > ~/.config/fish/conf.d/git-ckpt.fish (conf.d, which every fish reads at
    start-up: a completions/ file would be read only after something completed git-ckpt).
    """
    emit("completion", {"shell": shell, "script": SCRIPTS[shell]}, as_json, lambda: click.echo(SCRIPTS[shell], nl=False))
    return 0
