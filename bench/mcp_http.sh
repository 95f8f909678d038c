#!/usr/bin/env bash
# MCP over streamable HTTP under load: CLIENTS clients, each with its own
# session on one keep-alive connection, call `exec` with a trivial script for
# SECONDS seconds (bench/mcp_load.rs, built here with a bare `rustc -O`).
#   bench/mcp_http.sh [SAFESH] [CLIENTS] [SECONDS] [SCRIPT]
# SAFESH defaults to the release build (bench/release_path.sh) (build it first: bench/run.sh does).
# Prints calls/s and latency percentiles (p50/p90/p99/max).
# Environment: RATE=N offers N calls/s in all (open load, latency counted from
# each call's scheduled time; without it each client waits for its answer:
# closed load); WARMUP=N untimed calls per client before the clock (default 1:
# the steady state; 0 measures each client's cold start too); LOAD_CPUS /
# SERVER_CPUS pin the load generator / the server (and its workers) to CPUs
# with taskset (e.g. LOAD_CPUS=1 SERVER_CPUS=0: the generator competes for
# the same two cores otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
S="${1:-$(bench/release_path.sh)}"
clients="${2:-100}"
seconds="${3:-10}"
script="${4:-true}"
B="${BENCH_DIR:-/tmp/safesh-bench}"
mkdir -p "$B"
load="$B/mcp_load"
if [ ! -x "$load" ] || [ bench/mcp_load.rs -nt "$load" ]; then
    rustc -O --edition 2021 bench/mcp_load.rs -o "$load"
fi
export XDG_STATE_HOME="$B/state-mcp"
rm -rf "$XDG_STATE_HOME"
token_file="$B/mcp-token"
rm -f "$token_file"
umask 077
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$token_file"
port=$((20000 + RANDOM % 20000))
server_pin=()
[ -z "${SERVER_CPUS:-}" ] || server_pin=(taskset -c "$SERVER_CPUS")
load_pin=()
[ -z "${LOAD_CPUS:-}" ] || load_pin=(taskset -c "$LOAD_CPUS")
"${server_pin[@]}" "$S" mcp --http "127.0.0.1:$port" --token-file "$token_file" --max-sessions "$((clients + 8))" \
    2>"$B/mcp-server.log" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    sleep 0.1
done
"${load_pin[@]}" "$load" "127.0.0.1:$port" "$(cat "$token_file")" "$clients" "$seconds" "$script" \
    "${WARMUP:-1}"
