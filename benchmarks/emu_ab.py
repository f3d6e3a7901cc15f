#!/usr/bin/env python3
"""Interleaved A/B timing of two gcn3-emu runs of one program.

Usage: python3 benchmarks/emu_ab.py [-n N] [--emu GCN3EMU] [--b-emu GCN3EMU]
                                    [--a-env K=V]... [--b-env K=V]...
                                    [--a-arg ARG]... [--b-arg ARG]...
                                    -- PROG [PROG ARGS...]

Runs `GCN3EMU [A args] -- PROG ARGS` (A) and `GCN3EMU [B args] -- PROG ARGS`
(B) N times each (default 7), in pairs whose order alternates (A B, B A, ...),
with each side's extra environment (--a-env, --b-env), and reports each run's
wall time and CPU time (user + sys of the child, from getrusage), the ratio
B / A of every pair, their median and the ratio of the minima. The recording
overhead of a change, for example, is `--a-arg=--record --a-arg=a.gtrace`
against the same with a second build (--b-emu); a recording option against
none is `--b-arg=--record --b-arg=b.gtrace`. On the 2-core development VM a
program's wall time moves by up to 2x from one minute to the next, so single
runs (make bench's) cannot resolve a 10% change; the two runs of a pair,
seconds apart, can (as benchmarks/replay_ab.py does for mgpu-replay). A run
must exit 0 and not print FAIL (the bench programs print PASS or FAIL). Exit status: 0, 1 when a run fails, 2 on bad usage.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import time


def timed(cmd, env):
    """One run; (wall s, CPU s). Raises RuntimeError naming the command when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = p.stdout.decode(errors="replace")
    if p.returncode != 0 or "FAIL" in out:
        msg = (p.stderr.decode(errors="replace").strip().splitlines() or out.strip().splitlines() or ["no message"])
        raise RuntimeError(f"{' '.join(cmd)}: exit status {p.returncode}: {msg[-1]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def env_of(pairs, ap):
    env = dict(os.environ)
    for kv in pairs:
        if "=" not in kv:
            ap.error(f"{kv}: not K=V")
        k, v = kv.split("=", 1)
        env[k] = v
    return env


def summary(name, xs):
    return f"{name}: min {min(xs):.4f} s, median {statistics.median(xs):.4f} s"


def main():
    ap = argparse.ArgumentParser(description="Interleaved A/B timing of two gcn3-emu runs of one program.")
    ap.add_argument("-n", type=int, default=7, help="runs of each side (default 7)")
    ap.add_argument("--emu", default=os.path.join("build", "bin", "gcn3-emu"), help="gcn3-emu of A (and of B)")
    ap.add_argument("--b-emu", help="gcn3-emu of B (default: --emu)")
    ap.add_argument("--a-env", action="append", default=[], help="K=V in A's environment (repeatable)")
    ap.add_argument("--b-env", action="append", default=[], help="K=V in B's environment (repeatable)")
    ap.add_argument("--a-arg", action="append", default=[], help="a gcn3-emu option of A (repeatable)")
    ap.add_argument("--b-arg", action="append", default=[], help="a gcn3-emu option of B (repeatable)")
    ap.add_argument("prog", nargs=argparse.REMAINDER, help="-- PROG [ARGS...]")
    a = ap.parse_args()
    prog = a.prog[1:] if a.prog[:1] == ["--"] else a.prog
    if not prog:
        ap.error("no program (-- PROG [ARGS...])")
    if a.n < 1:
        ap.error("-n must be at least 1")
    emu_b = a.b_emu or a.emu
    for e in (a.emu, emu_b):
        if not os.access(e, os.X_OK):
            ap.error(f"{e}: not an executable")
    side = {"a": ([a.emu] + a.a_arg + ["--"] + prog, env_of(a.a_env, ap)),
            "b": ([emu_b] + a.b_arg + ["--"] + prog, env_of(a.b_env, ap))}
    w = {"a": [], "b": []}
    c = {"a": [], "b": []}
    try:
        for i in range(a.n):
            for s in (("a", "b") if i % 2 == 0 else ("b", "a")):
                wall, cpu = timed(*side[s])
                w[s].append(wall)
                c[s].append(cpu)
            print(f"pair {i + 1}: A {w['a'][-1]:.4f} s ({c['a'][-1]:.4f} CPU), "
                  f"B {w['b'][-1]:.4f} s ({c['b'][-1]:.4f} CPU), B/A {w['b'][-1] / w['a'][-1]:.3f}", flush=True)
    except RuntimeError as e:
        print(f"emu_ab: {e}", file=sys.stderr)
        return 1
    for name, xs in (("wall", w), ("CPU", c)):
        ratios = [y / x for x, y in zip(xs["a"], xs["b"]) if x > 0]
        print(summary(f"A {name}", xs["a"]))
        print(summary(f"B {name}", xs["b"]))
        if ratios:
            print(f"B/A {name}: median of pairs {statistics.median(ratios):.3f} "
                  f"(range {min(ratios):.3f}-{max(ratios):.3f}), ratio of minima "
                  f"{min(xs['b']) / min(xs['a']):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
