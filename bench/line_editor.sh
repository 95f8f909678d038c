#!/bin/sh
# The REPL's line editor, chosen by measurement (docs/ARCHITECTURE.md "The REPL"):
# a minimal program with a validator, a highlighter, a completer and a file history
# on rustyline and on reedline, and one with no line editor, each built clean in
# debug in its own target dir. Prints wall time, crates compiled and binary size.
# Usage: bench/line_editor.sh [WORKDIR]   (default: a temp dir, removed after)
set -eu
work=${1:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
cp -r "$here/line_editor/." "$work/"
for p in none rl reed; do
  cd "$work/$p"
  start=$(date +%s.%N)
  crates=$(CARGO_TARGET_DIR="$work/target-$p" cargo build --quiet --message-format=json 2>/dev/null \
    | grep -c '"reason":"compiler-artifact"' || true)
  end=$(date +%s.%N)
  bin="$work/target-$p/debug/$p"
  strip -o "$bin.stripped" "$bin"
  printf '%-5s build %6.1f s  crates %3s  binary %8s bytes (stripped %8s)\n' "$p" \
    "$(echo "$end - $start" | bc)" "$crates" "$(stat -c %s "$bin")" "$(stat -c %s "$bin.stripped")"
done
[ -n "${1:-}" ] || rm -rf "$work"
