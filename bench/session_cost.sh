#!/usr/bin/env bash
# The isolation model's cost per call in a session: one `safesh rpc`, one
# `session.start`, then N `execute`s in that session (state kept across calls),
# with the session's interpreter in its own worker process (the default) vs in
# the server process (SAFESH_IN_PROCESS=1). Prints the median and p90 wall time
# of one call, back to back and after a 100 ms pause (as a model thinks).
#   bench/session_cost.sh [N]        (default 100; SAFESH=path to the binary)
set -euo pipefail
cd "$(dirname "$0")/.."
S="${SAFESH:-$(bench/release_path.sh)}"
N="${1:-100}"
B="${BENCH_DIR:-/tmp/safesh-bench}/session"
mkdir -p "$B/proj" "$B/home"
export LC_ALL=C XDG_STATE_HOME="$B/state" HOME="$B/home"
cd "$B/proj"
run() {
    python3 - "$S" "$1" "$N" "$2" <<'PY'
import json, os, subprocess, sys, time
safesh, mode, n, pause = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
env = dict(os.environ)
if mode == "in-process":
    env["SAFESH_IN_PROCESS"] = "1"
p = subprocess.Popen([safesh, "rpc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
def call(i, method, params):
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
    p.stdin.flush()
    return json.loads(p.stdout.readline())
sid = call(0, "session.start", {})["result"]["session"]
call(1, "execute", {"script": "n=0", "session": sid})
times = []
for i in range(n):
    time.sleep(pause)
    t = time.perf_counter()
    r = call(i + 2, "execute", {"script": "n=$((n+1)); echo $n | wc -c", "session": sid})
    times.append((time.perf_counter() - t) * 1000)
    assert r["result"]["exit_code"] == 0, r
p.stdin.close()
p.wait()
times.sort()
print(f"{mode:10} pause {pause*1000:4.0f} ms: median {times[len(times)//2]:.2f} ms, p90 {times[int(len(times)*0.9)]:.2f} ms per call ({n} calls)")
PY
}
for pause in 0 0.1; do
    run worker "$pause"
    run in-process "$pause"
done
