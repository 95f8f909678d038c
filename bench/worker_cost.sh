#!/usr/bin/env bash
# The isolation model's cost per call: N sessionless JSON-RPC `execute`s of a
# trivial script through one `safesh rpc`, each in a worker process (the
# default) vs in the server process (SAFESH_IN_PROCESS=1), with hyperfine.
#   bench/worker_cost.sh [N]        (default 100; SAFESH=path to the binary)
# Per call = (time of the run) / N; the difference is what a worker costs.
set -euo pipefail
cd "$(dirname "$0")/.."
S="${SAFESH:-$(bench/release_path.sh)}"
N="${1:-100}"
B="${BENCH_DIR:-/tmp/safesh-bench}/worker"
mkdir -p "$B/proj"
export LC_ALL=C XDG_STATE_HOME="$B/state" HOME="$B/home"
mkdir -p "$HOME"
req="$B/requests.jsonl"
: > "$req"
for i in $(seq 1 "$N"); do
    printf '{"jsonrpc":"2.0","id":%d,"method":"execute","params":{"script":"echo hi | wc -c"}}\n' "$i" >> "$req"
done
cd "$B/proj"
hyperfine -N --warmup 2 --runs "${RUNS:-10}" --export-markdown "$B/worker_cost.md" \
    -n "worker ($N calls)" "sh -c '$S rpc < $req > /dev/null'" \
    -n "in-process ($N calls)" "sh -c 'SAFESH_IN_PROCESS=1 $S rpc < $req > /dev/null'"

# Latency as an agent sees it (a pause between calls, as a model thinks): the
# median wall time of one `execute`, worker vs in-process.
latency() {
    python3 - "$S" "$1" <<'PY'
import json, os, subprocess, sys, time
safesh, mode = sys.argv[1], sys.argv[2]
env = dict(os.environ)
if mode == "in-process":
    env["SAFESH_IN_PROCESS"] = "1"
p = subprocess.Popen([safesh, "rpc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
times = []
for i in range(40):
    time.sleep(0.1)
    t = time.perf_counter()
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": "execute", "params": {"script": "echo hi | wc -c"}}) + "\n").encode())
    p.stdin.flush()
    p.stdout.readline()
    times.append((time.perf_counter() - t) * 1000)
p.stdin.close()
p.wait()
times.sort()
print(f"{mode}: median {times[len(times)//2]:.1f} ms, p90 {times[int(len(times)*0.9)]:.1f} ms per call")
PY
}
latency worker
latency in-process
