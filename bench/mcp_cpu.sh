#!/usr/bin/env bash
# CPU per MCP `exec` call over HTTP, split by process: the server, its worker
# processes (both from /proc/PID/stat, before and after the run) and the load
# generator (/usr/bin/time). Closed load, as bench/mcp_http.sh without RATE.
#   bench/mcp_cpu.sh [SAFESH] [CLIENTS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
S="${1:-$(bench/release_path.sh)}"
clients="${2:-100}"
secs="${3:-5}"
B="${BENCH_DIR:-/tmp/safesh-bench}"
mkdir -p "$B"
load="$B/mcp_load"
if [ ! -x "$load" ] || [ bench/mcp_load.rs -nt "$load" ]; then
    rustc -O --edition 2021 bench/mcp_load.rs -o "$load"
fi
export XDG_STATE_HOME="$B/state-mcp-cpu"
rm -rf "$XDG_STATE_HOME"
tok="$B/mcp-cpu-token"
umask 077
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$tok"
port=$((20000 + RANDOM % 20000))
"$S" mcp --http "127.0.0.1:$port" --token-file "$tok" --max-sessions $((clients + 8)) 2>"$B/mcp-cpu-server.log" &
srv=$!
trap 'kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
tick=$(getconf CLK_TCK)
# utime + stime (fields 14 and 15) of the given pids, in clock ticks.
cpu_of() {
    local t=0 p f
    for p in "$@"; do
        [ -r "/proc/$p/stat" ] || continue
        read -r -a f < <(sed 's/.*) //' "/proc/$p/stat")
        t=$((t + f[11] + f[12]))
    done
    echo "$t"
}
all0=$(cpu_of "$srv" $(pgrep -P "$srv" || true)); srv0=$(cpu_of "$srv")
out=$({ /usr/bin/time -f "GEN %U %S" "$load" "127.0.0.1:$port" "$(cat "$tok")" "$clients" "$secs" true 1; } 2>&1)
all1=$(cpu_of "$srv" $(pgrep -P "$srv" || true)); srv1=$(cpu_of "$srv")
echo "$out" | grep -v '^GEN'
calls=$(echo "$out" | sed -n 's/.* calls \([0-9]*\) .*/\1/p')
gen=$(echo "$out" | awk '/^GEN/ {print $2 + $3}')
awk -v s=$((srv1 - srv0)) -v a=$((all1 - all0)) -v g="$gen" -v n="$calls" -v t="$tick" 'BEGIN {
    printf "CPU per call: server %.0f us, workers %.0f us, generator %.0f us\n",
        s * 1e6 / t / n, (a - s) * 1e6 / t / n, g * 1e6 / n }'
