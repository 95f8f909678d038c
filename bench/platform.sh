#!/usr/bin/env bash
# Platform commands (issue 18):
#  1. `fs:list` of a 10,000-entry directory (whole process, JSON to /dev/null)
#     vs GNU `ls -la` of the same directory, and vs safesh's own `ls -la`.
#  2. `commands.describe` latency over one `safesh rpc` (p50, p95 and p99 of
#     1,000 calls, each after the previous answer), and `commands.list`.
#   bench/platform.sh            (SAFESH=path to the binary, default the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
S="${SAFESH:-$(bench/release_path.sh)}"
B="${BENCH_DIR:-/tmp/safesh-bench}/platform"
rm -rf "$B" && mkdir -p "$B/proj/big" "$B/home" "$B/state"
export LC_ALL=C XDG_STATE_HOME="$B/state" HOME="$B/home"
cd "$B/proj"
python3 - <<'PY'
import os
for i in range(10000):
    with open(f"big/f{i:05d}.txt", "w") as f:
        f.write("x" * (i % 100))
PY
"$S" -c 'fs:list big | jq ".entries | length"'
hyperfine -N --warmup 3 --runs "${RUNS:-20}" --export-json "$B/fs_list.json" \
    -n "ls -la (GNU)" "sh -c 'ls -la big > /dev/null'" \
    -n "safesh fs:list" "sh -c '$S -c \"fs:list big\" > /dev/null'" \
    -n "safesh ls -la" "sh -c '$S -c \"ls -la big\" > /dev/null'"
python3 - "$B/fs_list.json" <<'PY'
import json, sys
r = {x["command"]: x["mean"] for x in json.load(open(sys.argv[1]))["results"]}
ls, fs = r["ls -la (GNU)"], r["safesh fs:list"]
print(f"fs:list {fs * 1000:.1f} ms / ls -la {ls * 1000:.1f} ms = {fs / ls:.2f}x (goal <= 1.0)")
PY

python3 - "$S" <<'PY'
import json, subprocess, sys, time
safesh = sys.argv[1]
p = subprocess.Popen([safesh, "rpc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def call(i, method, params):
    t = time.perf_counter()
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
    p.stdin.flush()
    line = p.stdout.readline()
    dt = time.perf_counter() - t
    assert b'"result"' in line, line[:200]
    return dt
for method, params in [("commands.describe", {"name": "github:pr:list"}),
                       ("commands.describe", {"name": "grep"}),
                       ("commands.list", {})]:
    for i in range(20):
        call(i, method, params)
    n = 1000 if method == "commands.describe" else 200
    times = sorted(call(i, method, params) for i in range(n))
    p50, p95, p99 = (times[int(len(times) * q)] for q in (0.5, 0.95, 0.99))
    print(f"{method} {json.dumps(params)}: p50 {p50*1e6:.0f} µs, p95 {p95*1e6:.0f} µs, p99 {p99*1e6:.0f} µs ({n} calls)")
p.stdin.close()
p.wait()
PY
