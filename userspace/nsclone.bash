# bash completion for nsclone. The options come from "nsclone --help", so
# that the flag table stays the only list of them.
_nsclone()
{
	local cur prev
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	case $prev in
	-s | --syscall)
		COMPREPLY=($(compgen -W "$(nsclone --help |
			sed -n 's/.*--syscall=<name> *\(.*\)/\1/p' |
			tr -d ',()' | sed 's/default//; s/ or / /')" -- "$cur"))
		return
		;;
	--share)
		COMPREPLY=($(compgen -W "$(nsclone --help |
			sed -n '/--share=/,/--root=/s/^ \{32\}\([a-z]*\) .*/\1/p')" -- "$cur"))
		return
		;;
	--root)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(nsclone --help |
			grep -oE -- '(^| )--?[A-Za-z][-A-Za-z]*' | tr -d ' ' | sort -u)" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -c -- "$cur"))
}
complete -F _nsclone nsclone
