# bash completion for fdl: commands, each command's options, and branch
# names (from `fdl branch ROOT`, once a ROOT is on the line). Everything is
# asked of fdl itself (`fdl help --commands`, `fdl CMD --help=options`), so
# it never drifts from the binary.
_fdl()
{
	local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$(fdl help --commands 2>/dev/null) help" -- "$cur"))
		return
	fi
	if [ "$cmd" = help ]; then
		COMPREPLY=($(compgen -W "$(fdl help --commands 2>/dev/null)" -- "$cur"))
		return
	fi
	case $cur in
	-*)
		COMPREPLY=($(compgen -W "$(fdl "$cmd" --help=options 2>/dev/null) --help" -- "$cur"))
		return ;;
	esac
	local prev=${COMP_WORDS[COMP_CWORD-1]} root=
	# the first word after the command that is not an option is ROOT
	local i
	for ((i = 2; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in -*) ;; *) root=${COMP_WORDS[i]}; break ;; esac
	done
	case $cmd in
	log|show|diff|attach|branch|withdraw|sign|checkout|run)
		if [ -n "$root" ] && { [ "$prev" = --ref ] || [ "$prev" != "$root" ] || [ "$cmd" != checkout ]; }; then
			local names
			names=$(fdl branch "$root" 2>/dev/null | awk '{print ($1 == "*") ? $2 : $1}')
			COMPREPLY=($(compgen -W "$names HEAD" -- "$cur"))
			[ ${#COMPREPLY[@]} -gt 0 ] && return
		fi ;;
	esac
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _fdl fdl
