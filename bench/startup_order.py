#!/usr/bin/env python3
"""Writes crates/safesh/startup.order: the functions `safesh` runs while it
starts and runs small scripts, which the linker (rust-lld) then places first
and together (crates/safesh/build.rs passes the file with
--symbol-ordering-file).

Why: the binary is ~27 MB of code and a start touched a little of it in ~75
places, each a page fault (the kernel maps 64 KiB around a fault); packed
together, the same code costs a handful.

Usage: bench/startup_order.py
Relinks the release binary with a link map (SAFESH_LINK_MAP=1), runs each
start-up command under callgrind, maps every address it ran in the binary to
its function (the map's `.text.<symbol>` input sections) and writes them in
the order first run.
Names that go stale after code changes match nothing and cost nothing; run it
again now and then, then `cargo build --release` links with the new order.
"""
import bisect
import glob
import os
import re
import subprocess
import sys
import tempfile

root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
env = dict(os.environ, SAFESH_LINK_MAP="1")
subprocess.run(["cargo", "build", "--release", "-p", "safesh"], cwd=root, env=env, check=True)
safesh = subprocess.run([os.path.join(root, "bench", "release_path.sh")], capture_output=True,
                        text=True, check=True).stdout.strip()
maps = glob.glob(os.path.join(os.path.dirname(safesh), "build", "safesh-*", "out", "safesh.map"))
link_map = max(maps, key=os.path.getmtime)

# Input sections of the code: (start, end, name), from lld's map lines
# `VMA LMA SIZE ALIGN file:(.text.<symbol>)` (function sections: one each).
# C code linked from archives (glibc's libc.a in the static build) has plain
# `.text` (or `.text.<variant>`: `.text.evex`) sections, a function or a few
# each: those are named by the first symbol the map lists in them.
sections = []
line_re = re.compile(r"^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+(.*):\((\.text(?:\.[^)]+)?)\)\s*$")
symbol_re = re.compile(r"^\s*[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+\d+\s+(\S+)\s*$")
pending = None  # (start, end) of a section waiting for its first symbol's name
with open(link_map, errors="replace") as f:
    for line in f:
        m = line_re.match(line)
        if not m:
            if pending:
                s = symbol_re.match(line)
                if s:
                    sections.append((*pending, s.group(1)))
                pending = None
            continue
        pending = None
        start, size, obj, name = int(m.group(1), 16), int(m.group(2), 16), m.group(3), m.group(4)
        if not size:
            continue
        if name == ".text" or (obj.endswith(".o)") and ".rlib(" not in obj):
            pending = (start, start + size)
            continue
        for prefix in (".text.unlikely.", ".text.hot.", ".text.startup.", ".text.split.", ".text."):
            if name.startswith(prefix):
                name = name[len(prefix):]
                break
        if name:
            sections.append((start, start + size, name))
sections.sort()
starts = [s[0] for s in sections]


def section_of(addr):
    i = bisect.bisect_right(starts, addr) - 1
    if i >= 0 and sections[i][0] <= addr < sections[i][1]:
        return sections[i][2]
    return None


scripts = [
    ["-c", "true"],
    ["-c", "echo hi | cat; x=$((1+2)); [ -n \"$x\" ] && printf '%s\\n' \"$x\""],
    ["-c", "for f in a b; do case $f in a) echo A;; *) echo other;; esac; done"],
    ["-c", "ls / > /dev/null; wc -l < /dev/null; grep -c x /dev/null; sed -n 1p /dev/null"],
    ["--version"],
]
order, seen = [], set()
with tempfile.TemporaryDirectory() as tmp:
    # A start takes different paths in different settings (a home with or
    # without ~/.ssh, a state dir new or with a history to append to, the
    # locale): each script runs in each of them, the first runs twice (its
    # second run finds the state the first made). A function missed here is
    # placed far away and costs a page fault at every start that runs it.
    fresh_home = os.path.join(tmp, "home")
    os.mkdir(fresh_home)
    settings = [
        dict(os.environ, XDG_STATE_HOME=os.path.join(tmp, "state-a"), HOME=fresh_home),
        dict(os.environ, XDG_STATE_HOME=os.path.join(tmp, "state-b")),
        dict(os.environ, XDG_STATE_HOME=os.path.join(tmp, "state-b"), LC_ALL="C"),
    ]
    runs = [(args, env) for args in scripts for env in settings]
    runs.insert(1, runs[0])
    for i, (args, run_env) in enumerate(runs):
        cg = os.path.join(tmp, f"cg.{i}")
        subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes", "--compress-strings=no",
                        "--compress-pos=no", f"--callgrind-out-file={cg}", safesh, *args],
                       cwd=tmp, env=run_env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        # Every instruction that ran (`--dump-instr`), not only the functions
        # callgrind saw called: a function reached by a tail jump runs under
        # its caller's name and would be missed.
        ob = ""
        with open(cg, errors="replace") as f:
            for line in f:
                if line.startswith("ob="):
                    ob = line[3:].strip()
                elif line.startswith("0x") and os.path.basename(ob) == "safesh":
                    name = section_of(int(line.split(None, 1)[0], 16))
                    if name and name not in seen:
                        seen.add(name)
                        order.append(name)
out_path = os.path.join(root, "crates", "safesh", "startup.order")
with open(out_path, "w") as f:
    f.write("".join(f"{name}\n" for name in order))
print(f"{len(order)} of {len(sections)} code sections -> {os.path.relpath(out_path, root)}", file=sys.stderr)
