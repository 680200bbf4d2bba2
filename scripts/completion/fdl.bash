# bash completion for fdl: commands, each command's options, and branch and
# tag names (from `fdl branch ROOT` and `fdl tag ROOT`, once a ROOT is on the
# line, and after `ROOT@` in the word being typed). Everything is
# asked of fdl itself (`fdl help --commands`, `fdl CMD --help=options`), so
# it never drifts from the binary.
_fdl_refs()
{
	fdl branch "$1" 2>/dev/null | awk '{print ($1 == "*") ? $2 : $1}'
	fdl tag "$1" 2>/dev/null | awk '{print $1}'
}

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
	# ROOT@REF in one word: complete the REF after the last '@' (a URL's
	# user@host comes before the path, so a '@' after the last '/' is a ref)
	case $cur in
	*@*)
		local base=${cur%@*} part=${cur##*@}
		if [ -n "$base" ]; then
			local r
			COMPREPLY=()
			for r in $(_fdl_refs "$base") HEAD; do
				case $r in "$part"*) COMPREPLY+=("$base@$r") ;; esac
			done
			[ ${#COMPREPLY[@]} -gt 0 ] && return
		fi ;;
	esac
	local prev=${COMP_WORDS[COMP_CWORD-1]} root=
	# the first word after the command that is not an option is ROOT
	local i
	for ((i = 2; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in -*) ;; *) root=${COMP_WORDS[i]}; break ;; esac
	done
	case $cmd in
	log|show|diff|attach|branch|tag|withdraw|sign|checkout|run|query|export|clone)
		if [ -n "$root" ] && { [ "$prev" = --ref ] || [ "$prev" != "$root" ] || [ "$cmd" != checkout ]; }; then
			local names
			names=$(_fdl_refs "$root")
			COMPREPLY=($(compgen -W "$names HEAD" -- "$cur"))
			[ ${#COMPREPLY[@]} -gt 0 ] && return
		fi ;;
	esac
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _fdl fdl
