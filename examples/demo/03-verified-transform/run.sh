#!/bin/sh
# Demo 03: a transform whose success criteria fail (must_have defaults to alan,
# who is not in the data): the run fails and the write roots are rolled back
# (out/ is gone). Then the same spec with must_have=ada passes and keeps
# out/people.json.
. "$(dirname "$0")/../lib.sh"

say "safesh spec run project.agsh.yaml  (must_have=alan: must fail and roll back)"
if "$SAFESH" spec run project.agsh.yaml; then
    fail "the run passed, but alan is not in the data"
fi
[ ! -e out/people.json ] || fail "out/people.json survived the rollback"
echo "rolled back: out/people.json is not there"

say "safesh spec run --param must_have=ada project.agsh.yaml  (must pass)"
"$SAFESH" spec run --param must_have=ada project.agsh.yaml || fail "the run did not pass"
[ -s out/people.json ] || fail "out/people.json missing"
"$SAFESH" -c 'jq length out/people.json' | grep -qx 3 || fail "out/people.json should hold 3 rows"
cat out/people.json
echo "demo 03 passed"
