#!/usr/bin/env python3
"""Interleaved A/B timing of two mgpu-replay builds on one trace.

Usage: python3 benchmarks/replay_ab.py [-n N] [--b-arg ARG]... [--allow-diff]
                                       OLD_REPLAY NEW_REPLAY TRACE [REPLAY ARGS...]

Runs OLD and NEW N times each (default 5) on TRACE, in pairs whose order
alternates (A B, B A, ...), and reports each run's CPU time (user + sys of the
child, from wait4), the ratio NEW / OLD of every pair, their median and the
ratio of the two minima. On a shared virtual machine whose speed drifts by up
to 2x between runs (the 2-core development VM), single runs of each build (as
`make bench` makes) cannot resolve a 10% change; the ratio within a pair,
whose two runs are seconds apart, can. Both builds write --stats; the JSON
files must be byte-identical (a speed change must not move results) unless
--allow-diff is given (or B gets its own arguments with --b-arg, e.g.
--b-arg=--set --b-arg=l2.size=4MiB, to time a parameter). Exit status: 0, 1
when the JSON differ (without --allow-diff) or a run fails, 2 on bad usage.
"""
import argparse
import filecmp
import os
import resource
import statistics
import subprocess
import sys
import tempfile


def timed(binary, args, trace, stats):
    """One replay; returns its CPU seconds (user + sys of the waited-for
    child, from getrusage(RUSAGE_CHILDREN): microseconds, where os.times()
    counts 10 ms clock ticks and a tiny trace's replay could read 0 s). Raises RuntimeError naming the binary when the
    replay fails."""
    cmd = [binary, "--quiet", "--stats", stats] + args + [trace]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.devnull, "wb") as null:
        p = subprocess.run(cmd, stdout=null, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        msg = p.stderr.decode(errors="replace").strip().splitlines()
        raise RuntimeError(f"{binary}: exit status {p.returncode}: {msg[-1] if msg else 'no message'}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser(description="Interleaved A/B timing of two mgpu-replay builds on one trace.")
    ap.add_argument("-n", type=int, default=5, help="runs of each build (default 5)")
    ap.add_argument("--b-arg", action="append", default=[], help="an argument for NEW only (repeatable)")
    ap.add_argument("--allow-diff", action="store_true", help="do not require identical stats JSON")
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("trace")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="arguments for both replays")
    a = ap.parse_args()
    if a.n < 1:
        ap.error("-n must be at least 1")
    for b in (a.old, a.new):
        if not os.access(b, os.X_OK):
            ap.error(f"{b}: not an executable")
    if not os.path.isfile(a.trace):
        ap.error(f"{a.trace}: no such trace")
    with tempfile.TemporaryDirectory(prefix="replay-ab.") as tmp:
        sa, sb = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
        ta, tb = [], []
        try:
            for i in range(a.n):
                order = ("a", "b") if i % 2 == 0 else ("b", "a")
                for which in order:
                    if which == "a":
                        ta.append(timed(a.old, a.args, a.trace, sa))
                    else:
                        tb.append(timed(a.new, a.args + a.b_arg, a.trace, sb))
                ratio = f"{tb[-1] / ta[-1]:.3f}" if ta[-1] > 0 else "n/a (old took no measurable time)"
                print(f"pair {i + 1}: old {ta[-1]:.3f} s, new {tb[-1]:.3f} s, new/old {ratio}", flush=True)
        except RuntimeError as e:
            print(f"replay_ab: {e}", file=sys.stderr)
            return 1
        ratios = [y / x for x, y in zip(ta, tb) if x > 0]
        print(f"old: min {min(ta):.3f} s, median {statistics.median(ta):.3f} s")
        print(f"new: min {min(tb):.3f} s, median {statistics.median(tb):.3f} s")
        if not ratios:
            print("new/old: no pair whose old run took measurable time")
        else:
            minima = f"{min(tb) / min(ta):.3f}" if min(ta) > 0 else "n/a"
            print(f"new/old: median of pairs {statistics.median(ratios):.3f} "
                  f"(range {min(ratios):.3f}-{max(ratios):.3f}), ratio of minima {minima}")
        same = filecmp.cmp(sa, sb, shallow=False)
        print("stats JSON: identical" if same else "stats JSON: differ")
        if not same and not a.allow_diff and not a.b_arg:
            print("replay_ab: the two builds' stats JSON differ (a speed change must not move results; "
                  "--allow-diff to time one that does)", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
