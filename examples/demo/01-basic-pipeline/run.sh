#!/bin/sh
# Demo 01: the simplest spec. Plan it, run it, look at the summary it wrote.
. "$(dirname "$0")/../lib.sh"

say "safesh spec plan project.agsh.yaml"
"$SAFESH" spec plan project.agsh.yaml

say "safesh spec run project.agsh.yaml"
"$SAFESH" spec run project.agsh.yaml || fail "the run did not pass"

say "summary.md"
cat summary.md
grep -qx '# Open items: TODO' summary.md || fail "summary.md has no title"
[ "$(grep -c 'TODO:' summary.md)" -eq 3 ] || fail "summary.md should list 3 items"

say "a param cannot inject: --param marker='x; rm -rf .' is one quoted word"
"$SAFESH" spec plan --param "marker=x; rm -rf ." project.agsh.yaml | grep -F "'x; rm -rf .'" \
    || fail "the param was not quoted"
echo "demo 01 passed"
