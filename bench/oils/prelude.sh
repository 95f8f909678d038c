argv.py() { local __o='[' __s='' __a; for __a in "$@"; do __a=${__a//\\/\\\\}; __a=${__a//\'/\\\'}; __o+="$__s'$__a'"; __s=', '; done; printf '%s]\n' "$__o"; }
printenv.py() { local __v; for __v in "$@"; do printenv "$__v" || echo None; done; }
read_from_fd.py() { local __fd __l; for __fd in "$@"; do if [ "$__fd" = 0 ]; then read -r __l; else eval 'read -r __l <&'"$__fd"; fi; echo "$__fd: $__l"; done; }
stdout_stderr.py() { echo STDOUT; echo STDERR >&2; }
