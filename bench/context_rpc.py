#!/usr/bin/env python3
"""context.set + context.get round trips per second over JSON-RPC (issue 17).

Usage: bench/context_rpc.py [SAFESH] [N]
  SAFESH  the binary (default: the release build, bench/release_path.sh)
  N       set+get pairs (default: 5000)

Starts one `safesh rpc` in a fresh state dir (XDG_STATE_HOME in a temp dir) and
sends, strictly one after the other (each request waits for its response),
N `context.set` and N `context.get` on the project scope. Prints requests per
second and set+get pairs per second, then the CPU time the server used per
request (user + system, from wait4) and the client's, with the load average:
on a shared machine the rate moves with the load, the server's CPU much less.
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rpc_client import Rpc  # noqa: E402

safesh = sys.argv[1] if len(sys.argv) > 1 else subprocess.run(
    [os.path.join(os.path.dirname(os.path.abspath(__file__)), "release_path.sh")],
    capture_output=True, text=True, check=True).stdout.strip()
n = int(sys.argv[2]) if len(sys.argv) > 2 else 5000

with tempfile.TemporaryDirectory() as tmp:
    proj = os.path.join(tmp, "proj")
    os.mkdir(proj)
    env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "XDG_STATE_HOME": os.path.join(tmp, "state"), "LC_ALL": "C"}
    rpc = Rpc([os.path.abspath(safesh), "rpc"], cwd=proj, env=env)
    call = rpc.call

    call("context.set", {"scope": "project", "key": "warm", "value": 0})
    start = time.perf_counter()
    for i in range(n):
        key = f"k{i % 100}"
        call("context.set", {"scope": "project", "key": key, "value": {"i": i, "s": "value"}})
        got = call("context.get", {"scope": "project", "key": key})
        assert got["value"]["i"] == i, got
    secs = time.perf_counter() - start
    usage = rpc.close()
    print(f"{n} set+get pairs in {secs:.3f} s: {2 * n / secs:,.0f} requests/s, {n / secs:,.0f} pairs/s")
    server = (usage.ru_utime + usage.ru_stime) * 1e6 / (2 * n)
    me = os.times()
    print(f"  server CPU {server:.1f} us/request (user {usage.ru_utime:.3f} s, sys {usage.ru_stime:.3f} s, "
          f"start-up included); client CPU {me.user + me.system:.3f} s; load {os.getloadavg()[0]:.1f}")
