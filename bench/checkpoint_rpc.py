#!/usr/bin/env python3
"""Checkpoint saves through a long-lived server (`safesh rpc`), issue 17.

Usage: bench/checkpoint_rpc.py SAFESH TREE CONFIG STATE [ROUNDS]

A server keeps a change journal per root (crates/checkpoint/src/journal.rs):
its first save walks TREE and watches every directory; each later save lists
only the directories where something changed. This times, in one server
process: the first `checkpoint.save` (fresh STATE), then ROUNDS times (default
10) one file of TREE changed (appended to) and `checkpoint.save` again. Prints
the first save, the later ones (min / median), their ratio, and what each
later save listed and read (from its result), so a save that fell back to a
full walk shows.
"""
import os
import shutil
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rpc_client import Rpc  # noqa: E402

safesh, tree, config, state = sys.argv[1:5]
rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 10
shutil.rmtree(state, ignore_errors=True)
env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "XDG_STATE_HOME": state, "LC_ALL": "C"}
rpc = Rpc([os.path.abspath(safesh), "--config", config, "rpc"], cwd=tree, env=env)
call = rpc.call


def timed_save(name):
    t = time.perf_counter()
    r = call("checkpoint.save", {"name": name})
    return time.perf_counter() - t, r


first, r0 = timed_save("base")
later, listed, read = [], set(), set()
target = os.path.join(tree, "d00", "f0000")
for i in range(rounds):
    with open(target, "a") as f:
        f.write(f"{time.time_ns()}\n")
    secs, r = timed_save("base")
    later.append(secs)
    listed.add(r["dirs_listed"])
    read.add(r["files_read"])
rpc.close()
med = statistics.median(later)
print(f"server: first save {first * 1000:.0f} ms ({r0['files']} files, {r0['dirs_listed']} dirs listed)")
print(f"server: save after one file changed: min {min(later) * 1000:.1f} ms, median {med * 1000:.1f} ms "
      f"= {100 * med / first:.1f} % of the first (goal <= 5 %); dirs listed {sorted(listed)}, files read {sorted(read)}")
