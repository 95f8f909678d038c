#!/bin/sh
# Demo 02: platform commands against a GitHub API (a local fake that this
# script starts on 127.0.0.1), a spec whose steps are github:pr:list and a jq
# report, the token passed by name (token_env) and never printed.
. "$(dirname "$0")/../lib.sh"

command -v python3 >/dev/null || { echo "demo 02 needs python3" >&2; exit 2; }
# A fresh token each run, so finding it anywhere means safesh wrote it there.
export GH_DEMO_TOKEN="ghp_demo$(od -An -N12 -tx1 /dev/urandom | tr -d " \n")"
python3 fake_github.py "$GH_DEMO_TOKEN" > port.txt &
GH_PID=$!
trap 'kill $GH_PID 2>/dev/null; rm -rf "$SCRATCH"' EXIT
i=0
while [ ! -s port.txt ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
PORT="$(cat port.txt)"
[ -n "$PORT" ] || fail "the fake GitHub did not start"
rm -f port.txt

cat > safesh.toml <<TOML
[sandbox]
read = ["."]
write = ["."]
network = ["127.0.0.1"]

[platforms.github]
token_env = "GH_DEMO_TOKEN"
base_url = "http://127.0.0.1:$PORT"
default_owner = "octo"
TOML

say "safesh spec plan project.agsh.yaml"
"$SAFESH" --config safesh.toml spec plan project.agsh.yaml

say "safesh spec run project.agsh.yaml  (GitHub at 127.0.0.1:$PORT)"
"$SAFESH" --config safesh.toml spec run project.agsh.yaml || fail "the run did not pass"

say "report.md"
cat report.md
diff -u "$DEMO_SRC/expected-output/report.md" report.md || fail "report.md differs from expected-output/report.md"
if grep -rl "$GH_DEMO_TOKEN" . "$XDG_STATE_HOME" 2>/dev/null; then
    fail "the token was written somewhere"
fi
echo "demo 02 passed"
