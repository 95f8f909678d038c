#!/usr/bin/env bash
# Runs the jq builtin × input matrix (crates/tools-jq/tests/data/builtin_matrix.txt)
# one case at a time, as `echo INPUT | jq -c FILTER`, through the real jq 1.6
# and through safesh's in-process jq, and prints every case whose stdout,
# stderr or exit status differ, then the count.
#
#   bench/jq_matrix.sh [SAFESH] [JQ]     (defaults: target/debug/safesh, /usr/bin/jq)
#
# Output per difference (newlines shown as `~`, stdout then stderr):
#   DIFF [INPUT | FILTER]
#     jq:    ...rc=N~
#     ours:  ...rc=N~
# Filters marked `1.7:` in the matrix are skipped (jq 1.6 lacks them).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
safesh=${1:-$root/target/debug/safesh}
jq=${2:-/usr/bin/jq}
matrix=$root/crates/tools-jq/tests/data/builtin_matrix.txt
export LC_ALL=C

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

run() { # how input filter
  if [ "$1" = jq ]; then
    printf '%s\n' "$2" | "$jq" -c "$3" 2>&1
  else
    printf '%s\n' "$2" | "$safesh" -c 'jq -c "$1"' safesh "$3" 2>&1
  fi
  echo "rc=$?"
}

diffs=0
cases=0
for f in "${filters[@]}"; do
  for i in "${inputs[@]}"; do
    cases=$((cases + 1))
    a=$(run jq "$i" "$f" | tr '\n' '~')
    b=$(run ours "$i" "$f" | tr '\n' '~')
    if [ "$a" != "$b" ]; then
      diffs=$((diffs + 1))
      printf 'DIFF [%s | %s]\n  jq:    %s\n  ours:  %s\n' "$i" "$f" "$a" "$b"
    fi
  done
done
echo "$diffs differences in $cases cases (${#filters[@]} filters x ${#inputs[@]} inputs)"
