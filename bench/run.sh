#!/usr/bin/env bash
# Benchmarks: safesh against bash + GNU tools on the same run (hyperfine).
#   bench/run.sh            all groups
#   bench/run.sh startup|corpus|labels|labels-callgrind|big|log3m|mcp-http|parse|checkpoint|context
#   bench/run.sh platform|runtime   (runtime: checkpoint, context and platform in one run)
#   bench/run.sh startup|corpus|labels|labels-callgrind|big|parse|code
# Needs: hyperfine (apt-get install hyperfine), a release build (built here).
# Big inputs are generated under $BENCH_DIR (default /tmp/safesh-bench), never in the repo.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p safesh
S="$(bench/release_path.sh)"
B="${BENCH_DIR:-/tmp/safesh-bench}"
mkdir -p "$B"
export LC_ALL=C
# A fresh state dir (label store, audit log): results do not depend on what earlier
# runs recorded. (With a populated label store every file read is also looked up
# there: docs/BENCHMARKS.md gives that cost separately.)
export XDG_STATE_HOME="$B/state"
rm -rf "$XDG_STATE_HOME"
what="${1:-all}"
runs="${RUNS:-10}"

startup() {
    hyperfine -N --warmup 20 --runs 300 --export-markdown "$B/startup.md" \
        "$S -c true" "bash -c true"
    # CPU and page faults, in turn (ROUNDS rounds of 200 starts each): the
    # goal is about CPU, which the machine's load moves less than wall time.
    if command -v perf >/dev/null; then
        for _ in $(seq "${ROUNDS:-5}"); do
            for c in "$S -c true" "bash -c true"; do
                perf stat -r 200 -x, -e task-clock,page-faults $c 2>&1 >/dev/null |
                    awk -F, -v c="${c##*/}" '/task-clock/ {t=$1} /page-faults/ {f=$1} END {printf "%-16s %.3f ms CPU, %d page faults\n", c, t, f}'
            done
        done
    fi
}

project() {
    # A small project tree like the one agents work in.
    local p="$B/project"
    rm -rf "$p"; mkdir -p "$p/src" "$p/logs" "$p/data"
    for i in $(seq 1 40); do
        printf 'pub fn f%d(x: i32) -> i32 {\n    // TODO: check %d\n    x + %d\n}\n' "$i" "$i" "$i" > "$p/src/mod$i.rs"
    done
    awk 'BEGIN { srand(1); for (i = 1; i <= 5000; i++) printf "2026-11-%02d 10:%02d:%02d %s request id=%d ms=%d\n", i % 28 + 1, i % 60, i % 60, (i % 7 == 0 ? "ERROR" : (i % 3 == 0 ? "WARN" : "INFO")), i, int(rand() * 900) }' > "$p/logs/app.log"
    awk 'BEGIN { srand(2); print "id,name,city,amount"; for (i = 1; i <= 3000; i++) printf "%d,user%d,city%d,%d\n", i, i % 97, i % 13, int(rand() * 1000) }' > "$p/data/sales.csv"
    printf '{"name":"demo","deps":{"a":"1.0","b":"2.1"},"items":[1,2,3,4,5]}\n' > "$p/data/config.json"
    echo "$p"
}

corpus() {
    local p; p=$(project)
    local args=()
    for f in bench/corpus/*.sh; do
        args+=("cd $p && $S $PWD/$f" "cd $p && bash $PWD/$f")
    done
    # One hyperfine per script so each ratio is reported on the same run.
    for f in bench/corpus/*.sh; do
        hyperfine -N --warmup 3 --runs "$runs" --export-markdown "$B/corpus-$(basename "$f" .sh).md" \
            -n "safesh $(basename "$f")" "sh -c 'cd $p && $S $PWD/$f >/dev/null'" \
            -n "bash $(basename "$f")" "sh -c 'cd $p && bash $PWD/$f >/dev/null'"
    done
}

labels() {
    # What label tracking costs: the same corpus with a build whose joins do nothing
    # (feature `untracked`, a separate target dir; never reachable from a config).
    CARGO_TARGET_DIR="$PWD/target/untracked" cargo build --release -q -p safesh --features untracked
    local U; U="$(CARGO_TARGET_DIR="$PWD/target/untracked" bench/release_path.sh)"
    local p; p=$(project)
    for f in bench/corpus/*.sh; do
        hyperfine -N --warmup 3 --runs "$runs" --export-markdown "$B/labels-$(basename "$f" .sh).md" \
            -n "tracked $(basename "$f")" "sh -c 'cd $p && $S $PWD/$f >/dev/null'" \
            -n "untracked $(basename "$f")" "sh -c 'cd $p && $U $PWD/$f >/dev/null'"
    done
}

labels_callgrind() {
    # The same comparison in instructions (valgrind --tool=callgrind): deterministic
    # up to thread interleaving, so each script runs $CG_RUNS times per build and
    # the smallest total is kept. Needs valgrind.
    CARGO_TARGET_DIR="$PWD/target/untracked" cargo build --release -q -p safesh --features untracked
    local U; U="$(CARGO_TARGET_DIR="$PWD/target/untracked" bench/release_path.sh)"
    local p; p=$(project)
    local out="$B/callgrind"; mkdir -p "$out"
    echo "| script | tracked (Ir) | untracked (Ir) | overhead |"
    echo "|---|---|---|---|"
    for f in bench/corpus/*.sh; do
        local n; n=$(basename "$f" .sh)
        local script="$PWD/$f" best=()
        for bin in "$S" "$U"; do
            local min=""
            for i in $(seq 1 "${CG_RUNS:-3}"); do
                (cd "$p" && valgrind --tool=callgrind --callgrind-out-file="$out/$n.cg" "$bin" "$script" >/dev/null 2>/dev/null) || true
                local ir; ir=$(awk '/^summary:/ {print $2}' "$out/$n.cg")
                if [ -z "$min" ] || [ "$ir" -lt "$min" ]; then min=$ir; fi
            done
            best+=("$min")
        done
        awk -v n="$n" -v t="${best[0]}" -v u="${best[1]}" \
            'BEGIN { printf "| %s | %d | %d | %+.1f%% |\n", n, t, u, (t / u - 1) * 100 }'
    done
}

big() {
    local f="$B/big.txt"
    if [ ! -s "$f" ]; then
        # ~200 MB: 4 million CSV-ish lines.
        awk 'BEGIN { srand(3); for (i = 1; i <= 4000000; i++) printf "%d,user%d,city%d,%d,some padding text to make lines longer %d\n", i, int(rand()*5000), int(rand()*300), int(rand()*100000), i % 977 }' > "$f"
    fi
    ls -la "$f"
    # From $B: safesh's default policy reads and writes only under the
    # directory it starts in (the repository's root would refuse $B).
    cd "$B"
    for pair in \
        "grep -c city12 $f" \
        "wc -l $f" \
        "sort $f" \
        "cut -d, -f3 $f | sort | uniq -c"; do
        # Output goes to a file, not /dev/null: GNU grep stops at the first match
        # when it sees its output is /dev/null, which would not measure the search.
        hyperfine --warmup 1 --runs "${BIG_RUNS:-3}" \
            -n "safesh: $pair" "$S -c '$pair > $B/out.txt'" \
            -n "bash+GNU: $pair" "bash -c '$pair > $B/out.txt'"
    done
    echo "peak memory (KiB), safesh -c 'cat big | grep -c x':"
    /usr/bin/time -f "%M" "$S" -c "cat $f | grep -c padding" 2>&1 | tail -1
}

log3m() {
    # The issue-21 speed goals, on a 3M-line log (`i,word,number,six words`,
    # ~160 MB): wc -l, wc -c, cat to a file, grep -c, keyed numeric and plain
    # sort, each with GNU in the same hyperfine run (ratios in the summary),
    # then peak memory (KiB) of both sorts. Output goes to a file (GNU grep
    # stops at the first match when its output is /dev/null).
    local f="$B/log3m.txt"
    if [ ! -s "$f" ]; then
        awk 'BEGIN { srand(7); split("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda omicron", w, " ");
            for (i = 1; i <= 3000000; i++)
                printf "%d,%s,%d,%s %s %s %s %s %s\n", i, w[int(rand()*12)+1], int(rand()*1000000),
                    w[int(rand()*12)+1], w[int(rand()*12)+1], w[int(rand()*12)+1],
                    w[int(rand()*12)+1], w[int(rand()*12)+1], w[int(rand()*12)+1] }' > "$f"
    fi
    ls -la "$f"
    # From $B: safesh's default policy reads and writes only under the
    # directory it starts in (the repository's root would refuse $B).
    cd "$B"
    for pair in \
        "wc -l $f" \
        "wc -c $f" \
        "cat $f" \
        "grep -c gamma $f" \
        "sort -t, -k3 -n $f" \
        "sort $f"; do
        hyperfine -N --warmup 1 --runs "${BIG_RUNS:-5}" --export-markdown "$B/log3m-${pair%% *}.md" \
            -n "safesh: $pair" "$S -c '$pair > $B/out.txt'" \
            -n "bash+GNU: $pair" "bash -c '$pair > $B/out.txt'"
    done
    for cmd in "sort -t, -k3 -n $f" "sort $f"; do
        printf 'peak memory (KiB) %s: safesh ' "$cmd"
        /usr/bin/time -f "%M" "$S" -c "$cmd > $B/out.txt" 2>&1 | tail -1
        printf '    GNU '
        /usr/bin/time -f "%M" bash -c "$cmd > $B/out.txt" 2>&1 | tail -1
    done
    cd - >/dev/null
}

mcp_http() {
    # 100 MCP sessions on keep-alive HTTP connections calling `exec` (bench/mcp_http.sh).
    bench/mcp_http.sh "$S" "${MCP_CLIENTS:-100}" "${MCP_SECONDS:-10}"
}

parse() {
    # Parse + deep check + pre-run pass of long scripts that never run (issue 15
    # item 8), 256 KiB / 1 MiB / 2 MiB each, with peak memory:
    #   if    `if false; then` N lines `fi`: one compound, one brush call
    #   lines `exit 0` then N top-level lines: parsed in pieces (split.rs)
    #   line  `exit 0` then one line of `echo a; `: no newline to cut at
    local kb
    for kb in 256 1024 2048; do
        local n=$((kb * 1024 / 7))
        awk -v n="$n" 'BEGIN { print "if false; then"; for (i = 0; i < n; i++) print "echo a"; print "fi" }' > "$B/parse-if-$kb.sh"
        awk -v n="$n" 'BEGIN { print "exit 0"; for (i = 0; i < n; i++) print "echo a" }' > "$B/parse-lines-$kb.sh"
        awk -v n="$((kb * 1024 / 8))" 'BEGIN { printf "exit 0\n"; for (i = 0; i < n; i++) printf "echo a; "; print "" }' > "$B/parse-line-$kb.sh"
    done
    for shape in if lines line; do
        local args=()
        for kb in 256 1024 2048; do
            args+=(-n "safesh $shape ${kb}K" "$S $B/parse-$shape-$kb.sh")
        done
        hyperfine -N --warmup 1 --runs "${PARSE_RUNS:-3}" --export-markdown "$B/parse-$shape.md" "${args[@]}"
        for kb in 256 1024 2048; do
            printf 'peak memory %s %sK: ' "$shape" "$kb"
            /usr/bin/time -f "%M KiB" "$S" "$B/parse-$shape-$kb.sh" 2>&1 | tail -1
        done
    done
    # bash for scale (it crashes on the 2 MiB `if`: SIGSEGV, a recursive parser).
    hyperfine -N -i --warmup 1 --runs "${PARSE_RUNS:-3}" -n "bash if 1024K" "bash $B/parse-if-1024.sh"
}

checkpoint() {
    # Issue 17: `safesh checkpoint save` of a 10,000-file / 200 MB tree against
    # `tar -cf` of the same tree (goal <= 1.0x), a second save with one file
    # changed (goal <= 5 % of the first), and restore into an emptied tree
    # against `tar -xf`. The tree is generated under $B, never in the repo; the
    # write root is the tree alone (the tar file and the state dir are outside).
    local t="$B/cp/tree" st="$B/cp/state" j="$B/cp/json"
    if [ ! -s "$B/cp/.done" ]; then
        rm -rf "$B/cp"; mkdir -p "$t"
        head -c 209715200 /dev/urandom > "$B/cp/blob"
        (cd "$t" && split -b 20972 -d -a 4 "$B/cp/blob" f)
        rm "$B/cp/blob"
        for p in $(seq -w 0 99); do mkdir "$t/d$p"; mv "$t"/f"$p"?? "$t/d$p/"; done
        touch "$B/cp/.done"
    fi
    mkdir -p "$j"
    printf '[sandbox]\nread = ["%s"]\nwrite = ["%s"]\n[checkpoints]\nmax_mb = 4096\n' "$t" "$t" > "$B/cp/config.toml"
    local cs="XDG_STATE_HOME=$st $S --config $B/cp/config.toml checkpoint"
    echo "tree: $(find "$t" -type f | wc -l) files, $(du -sh "$t" | cut -f1)"
    hyperfine -N --warmup 1 --runs "${CP_RUNS:-5}" --export-json "$j/save.json" \
        --prepare "rm -rf $st $B/cp/t.tar" \
        -n "safesh checkpoint save (first)" "sh -c 'cd $t && $cs save c1 >/dev/null'" \
        -n "tar -cf" "tar -cf $B/cp/t.tar -C $t ."
    # The second save: one file changed since the previous one.
    rm -rf "$st"; (cd "$t" && sh -c "$cs save base >/dev/null")
    hyperfine -N --warmup 1 --runs "${CP_RUNS:-5}" --export-json "$j/second.json" \
        --prepare "sh -c 'date +%N >> $t/d00/f0000'" \
        -n "safesh checkpoint save (one file changed)" "sh -c 'cd $t && $cs save base >/dev/null'"
    # Restore into the emptied tree against unpacking the tar there.
    (cd "$t" && sh -c "$cs save base >/dev/null")
    tar -cf "$B/cp/t.tar" -C "$t" .
    hyperfine -N --warmup 1 --runs "${CP_RUNS:-5}" --export-json "$j/restore.json" \
        --prepare "sh -c 'rm -rf $t/d*'" \
        -n "safesh checkpoint restore" "sh -c 'cd $t && $cs restore base >/dev/null'" \
        -n "tar -xf" "tar -xf $B/cp/t.tar -C $t"
    (cd "$t" && sh -c "$cs restore base >/dev/null")
    python3 - "$j" <<'PY'
import json, sys
d = sys.argv[1]
res = lambda f, i: json.load(open(f"{d}/{f}.json"))["results"][i]
mean = lambda f, i: res(f, i)["mean"]
# CPU: user + system (means), which a shared machine's load moves far less than wall time.
cpu = lambda f, i: res(f, i)["user"] + res(f, i)["system"]
save, tar_c, second = mean("save", 0), mean("save", 1), mean("second", 0)
restore, tar_x = mean("restore", 0), mean("restore", 1)
print(f"first save {save:.3f} s / tar -cf {tar_c:.3f} s = {save / tar_c:.2f}x (goal <= 1.0)")
print(f"second save {second * 1000:.0f} ms = {100 * second / save:.1f} % of the first (goal <= 5 %)")
print(f"restore {restore:.3f} s / tar -xf {tar_x:.3f} s = {restore / tar_x:.2f}x")
print(f"CPU: first save {cpu('save', 0) * 1000:.0f} ms / tar -cf {cpu('save', 1) * 1000:.0f} ms = "
      f"{cpu('save', 0) / cpu('save', 1):.2f}x; second save {cpu('second', 0) * 1000:.0f} ms = "
      f"{100 * cpu('second', 0) / cpu('save', 0):.1f} % of the first")
PY
    # A server's saves: its change journal lists only what changed.
    python3 bench/checkpoint_rpc.py "$S" "$t" "$B/cp/config.toml" "$B/cp/state-rpc" "${CP_RPC_ROUNDS:-10}"
    echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    du -sh "$st/safesh/checkpoints" 2>/dev/null || true
}

context() {
    # Issue 17: context.set + context.get round trips per second over JSON-RPC
    # (goal >= 10,000 pairs/s), three runs of one `safesh rpc` each.
    for i in 1 2 3; do python3 bench/context_rpc.py "$S" "${CONTEXT_N:-5000}"; done
}

platform() {
    # Issue 18: `fs:list` of a 10,000-entry directory vs `ls -la` (goal <= 1.0x)
    # and `commands.describe` latency over JSON-RPC (bench/platform.sh).
    SAFESH="$S" bench/platform.sh
}

code() {
    # Code mode (issue 20): start-up against safesh's own and node's, counting
    # TODOs over 2,000 files (TS stdlib vs the bash pipeline), and peak memory
    # streaming a 200 MB file through safesh/streams.
    local cmds=(-n "safesh code -e 1" "$S code -e 1" -n "safesh -c true" "$S -c true")
    if command -v node >/dev/null; then cmds+=(-n "node -e 1" "node -e 1"); fi
    hyperfine -N --warmup 10 --runs "${CODE_RUNS:-100}" --export-markdown "$B/code-startup.md" "${cmds[@]}"
    local p="$B/todo"
    if [ ! -d "$p" ]; then
        mkdir -p "$p"
        for d in $(seq 1 20); do
            mkdir -p "$p/src/d$d"
            for f in $(seq 1 100); do
                printf 'export function f%d() {\n  // TODO: item %d\n  return %d;\n}\n// TODO: more\n' "$f" "$f" "$f" > "$p/src/d$d/f$f.ts"
            done
        done
    fi
    echo 'console.log(await $("src/**/*.ts").grep(/TODO/).count());' > "$p/count.ts"
    echo 'shopt -s globstar; cat src/**/*.ts | grep -c TODO' > "$p/count.sh"
    hyperfine -N --warmup 2 --runs "$runs" --export-markdown "$B/code-todo.md" \
        -n "TS stdlib" "sh -c 'cd $p && $S code count.ts'" \
        -n "bash in safesh" "sh -c 'cd $p && $S count.sh'"
    # ~200 MB (4.7 M lines of ~43 bytes).
    if [ ! -f "$B/big200.log" ]; then
        awk 'BEGIN { for (i = 0; i < 4700000; i++) printf "2026-11-27 10:00:%02d %s request id=%d\n", i % 60, (i % 7 ? "INFO" : "ERROR"), i }' > "$B/big200.log"
    fi
    ( cd "$B" && /usr/bin/time -f "peak memory streaming $(du -m big200.log | cut -f1) MB: %M KiB, %e s" \
        "$S" code -e 'import { src, dest, filter } from "safesh/streams"; console.log(await src("big200.log").pipe(filter((l) => l.includes("ERROR"))).pipe(dest("errors.txt")))' )
}

case "$what" in
    startup) startup ;;
    code) code ;;
    corpus) corpus ;;
    labels) labels ;;
    labels-callgrind) labels_callgrind ;;
    big) big ;;
    log3m) log3m ;;
    mcp-http) mcp_http ;;
    parse) parse ;;
    checkpoint) checkpoint ;;
    context) context ;;
    platform) platform ;;
    runtime) checkpoint; context; platform ;;
    all) startup; corpus; big ;;
    *) echo "unknown group $what" >&2; exit 2 ;;
esac
