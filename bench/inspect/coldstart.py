#!/usr/bin/env python3
"""Cold start of several commands, measured round-robin so that a changing load hits all alike.

usage: coldstart.py [--rounds N] [--json] LABEL=COMMAND...

Each round runs every command once (stdout and stderr to /dev/null); prints, per command, the
median and the 10th/90th percentile of wall time and of user+sys CPU time, in milliseconds.
"""
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import time


def run_once(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    rc = subprocess.call(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if rc != 0:
        sys.exit(f"coldstart: {shlex.join(argv)} exited {rc}")
    return wall * 1000, cpu * 1000


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def main():
    args = sys.argv[1:]
    rounds, as_json = 200, False
    while args and args[0].startswith("--"):
        if args[0] == "--rounds":
            rounds = int(args[1])
            args = args[2:]
        elif args[0] == "--json":
            as_json = True
            args = args[1:]
        else:
            sys.exit(__doc__)
    cmds = [(a.split("=", 1)[0], shlex.split(a.split("=", 1)[1])) for a in args]
    if not cmds:
        sys.exit(__doc__)
    for _ in range(3):  # warm the page cache
        for _, argv in cmds:
            run_once(argv)
    walls = {label: [] for label, _ in cmds}
    cpus = {label: [] for label, _ in cmds}
    for _ in range(rounds):
        for label, argv in cmds:
            w, c = run_once(argv)
            walls[label].append(w)
            cpus[label].append(c)
    out = {
        label: {
            "wall_ms": statistics.median(walls[label]),
            "wall_p10": pct(walls[label], 0.1),
            "wall_p90": pct(walls[label], 0.9),
            "cpu_ms": statistics.median(cpus[label]),
        }
        for label, _ in cmds
    }
    if as_json:
        json.dump(out, sys.stdout)
        print()
        return
    print(f"{'command':<24} {'wall median':>12} {'p10..p90':>16} {'cpu median':>11}")
    for label, r in out.items():
        print(f"{label:<24} {r['wall_ms']:>9.2f} ms {r['wall_p10']:>6.2f}..{r['wall_p90']:<6.2f}ms {r['cpu_ms']:>8.2f} ms")


if __name__ == "__main__":
    main()
