#!/usr/bin/env bash
# Runs the jq builtin × input matrix (crates/tools-jq/tests/data/builtin_matrix.txt)
# one case at a time, as `echo INPUT | jq -c FILTER`, through the real jq 1.6
# and through safesh's in-process jq, and prints every case whose stdout,
# stderr or exit status differ, then the count.
#
#   bench/jq_matrix.sh [SAFESH] [JQ]     (defaults: the debug build, /usr/bin/jq)
#   bench/jq_matrix.sh --cases FILE [SAFESH] [JQ]
#                                        re-run the cases listed in FILE, a
#                                        report of this script (DIFF lines)
#
# Output per difference (newlines shown as `~`, stdout then stderr):
#   DIFF [INPUT | FILTER]
#     jq:    ...rc=N~
#     ours:  ...rc=N~
# A case where jq 1.6 dies of a signal (an assertion) is listed as CRASH and
# counted apart. Filters marked `1.7:` in the matrix are skipped (jq 1.6
# lacks them).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cases_file=
if [ "${1:-}" = --cases ]; then
  cases_file=$2
  shift 2
fi
safesh=${1:-$root/target/$(rustc -vV | sed -n 's/^host: //p')/debug/safesh}
jq=${2:-/usr/bin/jq}
matrix=$root/crates/tools-jq/tests/data/builtin_matrix.txt
export LC_ALL=C

# The cases, as "INPUT<TAB>FILTER" lines.
cases=()
if [ -n "$cases_file" ]; then
  while IFS= read -r line; do
    case $line in
      'DIFF ['* | 'CRASH ['*)
        line=${line#* [}
        line=${line%]}
        cases+=("${line%% | *}"$'\t'"${line#* | }")
        ;;
    esac
  done <"$cases_file"
else
  inputs=()
  filters=()
  while IFS= read -r line; do
    case $line in
      '#'* | '') continue ;;
      '<'$'\t'*) inputs+=("${line#*$'\t'}") ;;
      *$'\t1.7:'*) ;;
      *) filters+=("${line%%$'\t'*}") ;;
    esac
  done <"$matrix"
  for f in "${filters[@]}"; do
    for i in "${inputs[@]}"; do
      cases+=("$i"$'\t'"$f")
    done
  done
fi

run() { # how input filter
  if [ "$1" = jq ]; then
    printf '%s\n' "$2" | "$jq" -c "$3" 2>&1
  else
    printf '%s\n' "$2" | "$safesh" -c 'jq -c "$1"' safesh "$3" 2>&1
  fi
  echo "rc=$?"
}

diffs=0
crashes=0
for c in "${cases[@]}"; do
  i=${c%%$'\t'*}
  f=${c#*$'\t'}
  a=$(run jq "$i" "$f" | tr '\n' '~')
  b=$(run ours "$i" "$f" | tr '\n' '~')
  if [ "$a" != "$b" ]; then
    rc=${a##*rc=}
    rc=${rc%\~}
    if [ "$rc" -ge 128 ]; then
      crashes=$((crashes + 1))
      kind=CRASH
    else
      diffs=$((diffs + 1))
      kind=DIFF
    fi
    printf '%s [%s | %s]\n  jq:    %s\n  ours:  %s\n' "$kind" "$i" "$f" "$a" "$b"
  fi
done
echo "$diffs differences, $crashes where jq 1.6 crashes, in ${#cases[@]} cases"
