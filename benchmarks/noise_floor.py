#!/usr/bin/env python3
"""The timing model's noise floor on one trace: how far kernel times move
when one latency is made 1 ps longer.

Usage: python3 benchmarks/noise_floor.py [--replay BIN] [--param KEY]...
                                         TRACE [REPLAY ARGS...]

Replays TRACE once as given and once per parameter KEY (default: noc.latency,
l2.latency, l1s.latency, dispatcher.latency) with that latency 1 ps longer
than in the first run's configuration (its stats file's "config"). 1 ps is
nothing a real GPU could show: the components are clocked, so a message 1 ps
late waits for the next cycle of its receiver, and events that fell on the
same picosecond now fall apart (which wave's request an L2 bank takes first,
which GPU touches a page first). What moves then is the model's tie-breaking,
not the machine, and a difference between two configurations of the same
order is not a finding. Prints, per perturbation, the change of the summed
kernel time and the worst kernel's, then the largest of each (the noise
floor). Exit status: 0, 1 when a replay fails or a data check reports
mismatches, 2 on bad usage.

Measured on the 1x bench traces (r9nano, 2026-12-03, b511593): summed kernel
time moves up to 5.1% (conv, l1s.latency), a single kernel up to 5.3% (gd's
backward); aes, bitonic and fir within 0.2% (docs/validation.md "Noise
floor").
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

DEFAULT_PARAMS = ["noc.latency", "l2.latency", "l1s.latency", "dispatcher.latency"]


def replay(binary, trace, args, stats):
    """One replay writing its stats to `stats`; returns the parsed JSON.
    Raises RuntimeError naming the run when it fails."""
    cmd = [binary, "--quiet", "--stats", stats] + args + [trace]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        msg = p.stderr.decode(errors="replace").strip().splitlines()
        raise RuntimeError(f"{' '.join(args) or 'baseline'}: exit status {p.returncode}: "
                           f"{msg[-1] if msg else 'no message'}")
    with open(stats) as f:
        return json.load(f)


def latency_ps(value, freq_hz):
    """A latency as the stats' config writes it ('4cycles', '288ns', '500ps')
    in ps; ValueError when it is none of these."""
    m = re.fullmatch(r"([0-9.]+)(cycles|ns|ps|us)", value)
    if not m:
        raise ValueError(f"not a latency: {value!r}")
    v, unit = float(m.group(1)), m.group(2)
    if unit == "cycles":
        return round(v * 1e12 / freq_hz)
    return round(v * {"ps": 1, "ns": 1e3, "us": 1e6}[unit])


def kernel_times(stats):
    return [k["end_ps"] - k["start_ps"] for k in stats["kernels"]]


def clean(stats):
    c = stats.get("check", {})
    return not (c.get("load_mismatches") or c.get("d2h_mismatches") or c.get("lds_mismatches"))


def main():
    ap = argparse.ArgumentParser(description="The timing model's noise floor: kernel times with one latency 1 ps longer.")
    ap.add_argument("--replay", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "mgpu-replay"),
                    help="the mgpu-replay binary (default: build/bin/mgpu-replay)")
    ap.add_argument("--param", action="append", default=[], help="a latency key to perturb (repeatable)")
    ap.add_argument("trace")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="arguments for every replay (e.g. --topo u-mgpu)")
    a = ap.parse_args()
    if not os.access(a.replay, os.X_OK):
        ap.error(f"{a.replay}: not an executable (make first, or --replay)")
    if not os.path.isfile(a.trace):
        ap.error(f"{a.trace}: no such trace")
    params = a.param or DEFAULT_PARAMS
    with tempfile.TemporaryDirectory(prefix="noise-floor-") as tmp:
        try:
            base = replay(a.replay, a.trace, a.args, os.path.join(tmp, "base.json"))
        except RuntimeError as e:
            print(f"noise_floor: {e}", file=sys.stderr)
            return 1
        cfg = base["config"]
        freq = float(re.sub(r"Hz$", "", cfg.get("gpu.freq", "1000000000Hz")))
        tb = kernel_times(base)
        if not tb or sum(tb) <= 0:
            print("noise_floor: the trace has no kernel with a time", file=sys.stderr)
            return 1
        rc = 0 if clean(base) else 1
        worst_total = worst_kernel = 0.0
        print(f"{a.trace}: {len(tb)} kernels, {sum(tb) / 1e6:.3f} us of kernel time")
        for key in params:
            if key not in cfg:
                print(f"noise_floor: {key}: no such parameter in this configuration", file=sys.stderr)
                return 2
            try:
                ps = latency_ps(cfg[key], freq) + 1
            except ValueError as e:
                print(f"noise_floor: {key}: {e}", file=sys.stderr)
                return 2
            try:
                run = replay(a.replay, a.trace, a.args + ["--set", f"{key}={ps}ps"], os.path.join(tmp, f"{key}.json"))
            except RuntimeError as e:
                print(f"noise_floor: {e}", file=sys.stderr)
                return 1
            if not clean(run):
                print(f"noise_floor: {key} + 1 ps: the data check reports mismatches", file=sys.stderr)
                rc = 1
            tr = kernel_times(run)
            if len(tr) != len(tb):
                print(f"noise_floor: {key} + 1 ps: {len(tr)} kernels against {len(tb)}", file=sys.stderr)
                return 1
            total = (sum(tr) - sum(tb)) / sum(tb)
            per = [abs(x - y) / y for x, y in zip(tr, tb) if y > 0]
            wk = max(per) if per else 0.0
            wi = per.index(wk) if per else 0
            print(f"  {key} = {cfg[key]} + 1 ps: kernel time {100 * total:+.2f}%, "
                  f"worst kernel {100 * wk:.2f}% (kernel {wi}, {base['kernels'][wi]['name']})")
            worst_total = max(worst_total, abs(total))
            worst_kernel = max(worst_kernel, wk)
        print(f"noise floor: kernel time {100 * worst_total:.2f}%, a single kernel {100 * worst_kernel:.2f}%")
    return rc


if __name__ == "__main__":
    sys.exit(main())
