#!/usr/bin/env bash
# Start-up CPU of several shells, in interleaved rounds (the machine's drift
# hits all of them alike): `perf stat -r 500 -e task-clock CMD -c true` per
# round and shell, then the median and minimum of each.
#   bench/startup_rounds.sh ROUNDS SHELL...
#   LC_ALL=C bench/startup_rounds.sh 6 "$(bench/release_path.sh)" bash
# Run from /tmp or another directory without a safesh.toml. Needs perf.
set -euo pipefail
rounds="$1"
shift
for _ in $(seq "$rounds"); do
    for sh in "$@"; do
        v=$(perf stat -r 500 -e task-clock "$sh" -c true 2>&1 | awk '/task-clock/ {print $1}')
        echo "$sh $v"
    done
done | python3 -c '
import sys, statistics
runs = {}
for line in sys.stdin:
    sh, ms = line.split()
    runs.setdefault(sh, []).append(float(ms))
for sh, v in runs.items():
    print(f"{sh:50s} median {statistics.median(v):.3f} ms  min {min(v):.3f} ms  rounds {len(v)}")
'
