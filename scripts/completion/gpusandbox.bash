# SPDX-License-Identifier: MIT
# bash completion for gpusandbox(1).
#
# The option list is read from the program's own --help each time, so it
# cannot drift from the options the binary has. Installed by `make install`
# into $(PREFIX)/share/bash-completion/completions/gpusandbox.

# Prints "--option" or "--option VALUE" for each long option in --help.
_gpusandbox_options()
{
	"${1:-gpusandbox}" --help 2>/dev/null |
		sed -nE 's/^  (-h, )?(--[a-z][a-z0-9-]*)( [A-Z]+)?.*/\2\3/p'
}

_gpusandbox()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local prog=${COMP_WORDS[0]} opts with_value i w
	COMPREPLY=()
	opts=$(_gpusandbox_options "$prog")
	with_value=$(printf '%s\n' "$opts" | sed -nE 's/^(--[a-z0-9-]+) [A-Z]+$/\1/p')
	# Past "--" or the first non-option word: COMMAND and its arguments.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [ "$w" = -- ] || { [[ $w != -* ]] && [ "$w" != run ] &&
			! printf '%s\n' "$with_value" | grep -qx -- "${COMP_WORDS[i-1]}"; }; then
			if [ "$i" -eq $((COMP_CWORD - 1)) ] && [ "$w" = -- ]; then
				COMPREPLY=($(compgen -c -- "$cur"))
			else
				COMPREPLY=($(compgen -f -- "$cur"))
			fi
			return 0
		fi
	done
	case $prev in
	--policy | --audit-log | --learn | --trace-output)
		COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
	--managed)
		COMPREPLY=($(compgen -W "allow-unaccounted deny" -- "$cur")); return 0 ;;
	--sm-mode)
		COMPREPLY=($(compgen -W "cap guarantee" -- "$cur")); return 0 ;;
	--p2p-register)
		COMPREPLY=($(compgen -W "auto perform answer none" -- "$cur")); return 0 ;;
	--uvm-map)
		COMPREPLY=($(compgen -W "dup as-user" -- "$cur")); return 0 ;;
	--trace-time)
		COMPREPLY=($(compgen -W "clock epoch relative" -- "$cur")); return 0 ;;
	esac
	if printf '%s\n' "$with_value" | grep -qx -- "$prev"; then
		return 0 # a number or a list: nothing to offer
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(printf '%s\n' "$opts" | cut -d' ' -f1) --" -- "$cur"))
	elif [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "run list-groups audit" -- "$cur") $(compgen -c -- "$cur"))
	else
		COMPREPLY=($(compgen -c -- "$cur"))
	fi
	return 0
}
complete -F _gpusandbox gpusandbox
