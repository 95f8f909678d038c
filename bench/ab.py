#!/usr/bin/env python3
"""Commands timed in turn, with their CPU time: for A/B runs on a shared machine.

Usage: bench/ab.py RUNS PREPARE NAME=COMMAND [NAME=COMMAND ...]

Each round runs PREPARE (`sh -c`, untimed; "" for none) before each command,
then the command (`sh -c`), in turn — the order reversed every other round — so
that a change in the machine's load falls on every command alike. Prints, per
command, the median and least wall time and CPU time (user + system of the
command and its children, from wait4), and the load average at the end.

On two cores shared with other work, wall times mostly measure waiting for a
core; CPU times and ratios from the same run are what compare.
"""
import os
import statistics
import subprocess
import sys
import time


def run(command):
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.execvp("sh", ["sh", "-c", command])
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        print(f"failed ({status}): {command}", file=sys.stderr)
    return wall, usage.ru_utime, usage.ru_stime


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    runs, prepare = int(sys.argv[1]), sys.argv[2]
    commands = [a.split("=", 1) for a in sys.argv[3:]]
    results = {name: [] for name, _ in commands}
    for i in range(runs):
        for name, command in commands if i % 2 == 0 else commands[::-1]:
            if prepare:
                subprocess.run(["sh", "-c", prepare], check=True)
            results[name].append(run(command))
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    med = statistics.median
    for name, _ in commands:
        r = results[name]
        wall = [w * 1000 for w, _, _ in r]
        cpu = [(u + s) * 1000 for _, u, s in r]
        user = med(u * 1000 for _, u, _ in r)
        sys_ = med(s * 1000 for _, _, s in r)
        print(f"{name:28s} wall median {med(wall):8.1f} least {min(wall):8.1f} ms | "
              f"CPU median {med(cpu):7.1f} least {min(cpu):7.1f} ms (user {user:.1f}, sys {sys_:.1f})")


main()
