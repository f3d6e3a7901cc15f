#!/usr/bin/python3
"""Slopes of the R9 Nano hardware probes (../shared/hw-r9nano/README.md) from
the replay's statistics JSON, beside the hardware's, as text and Markdown.

  hw_fit.py DIR TABLE.md
DIR holds, per probe P in dram, l2, alu, empty: P.json (mgpu-replay --stats)
and P.list (the program's launch list: "probe N wavefronts workgroups" per
kernel, in launch order; empty: the launches of tests/programs/empty_kernel,
W = 1..7 then G = 128..1024 step 128). Prints one line per slope:
"ok|FAIL|info <name>: <ours> vs R9 Nano <hw> (<error>)" and exits 1 if a
checked slope is more than 5% off. Slopes are least squares over per-N
medians (the README's rule); for the ALU probe over the per-N minimum of its
launch shapes: every shape runs its own cold copy of the code, and a DRAM
refresh that lands on one of them only ever adds time (the hardware's median
over 100 runs of one configuration drops it the same way).
"""
import json
import statistics
import sys

TOL = 5.0

# (name, hardware slope in ns, checked): ../shared/hw-r9nano/README.md
HW = {
    "dram": ("dram_read, ns per access", 461.1, True),
    "l2": ("l2_read, ns per access", 140.4, True),
    "alu_lines": ("ALU, ns per v_add_f32 over whole 64-B lines (N = 32..128 step 16)", 26.6, True),
    "alu_inline": ("ALU, ns per v_add_f32 inside one line (N = 96..108)", 5.9, True),
    "alu_all": ("ALU, ns per v_add_f32 over all N (0..128)", 22.0, True),
}
EMPTY_HW = [3.99, 4.00, 4.01, 4.02, 5.02, 6.00, 7.01]  # ns per workgroup, W = 1..7


def fit(pts):
    xs = [a for a, _ in pts]
    ys = [b for _, b in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def per_n(d, probe, agg):
    ks = json.load(open(f"{d}/{probe}.json"))["kernels"]
    launches = [line.split() for line in open(f"{d}/{probe}.list") if line.startswith(probe + " ")]
    if len(ks) != len(launches):
        raise SystemExit(f"hw_fit: {probe}: {len(ks)} kernels replayed, {len(launches)} launched")
    by = {}
    for (_, n, _, _), k in zip(launches, ks):
        by.setdefault(int(n), []).append(k["time_ns"])
    return {n: agg(v) for n, v in by.items()}


def main():
    d, table = sys.argv[1], sys.argv[2]
    rows = []
    try:
        rows.append(("dram", fit(sorted(per_n(d, "dram", statistics.median).items()))))
    except FileNotFoundError:
        pass
    try:
        rows.append(("l2", fit(sorted(per_n(d, "l2", statistics.median).items()))))
    except FileNotFoundError:
        pass
    try:
        alu = per_n(d, "alu", min)
        rows.append(("alu_lines", fit([(n, t) for n, t in alu.items() if n >= 32 and n % 16 == 0])))
        rows.append(("alu_inline", fit([(n, t) for n, t in alu.items() if 96 <= n <= 108])))
        if 0 in alu and 4 in alu:
            rows.append(("alu_all", fit(sorted(alu.items()))))
    except FileNotFoundError:
        pass
    out = []
    for key, got in rows:
        name, hw, checked = HW[key]
        out.append((name, hw, got, checked))
    try:
        ks = json.load(open(f"{d}/empty.json"))["kernels"]
        for w in range(1, 8):
            pts = [(128 * (g + 1), ks[(w - 1) * 8 + g]["time_ns"]) for g in range(8)]
            out.append((f"empty kernel, {w} wavefront(s) per workgroup, ns per workgroup", EMPTY_HW[w - 1], fit(pts),
                        True))
    except FileNotFoundError:
        pass
    bad = 0
    with open(table, "w") as f:
        f.write("| probe (../shared/hw-r9nano) | R9 Nano | r9nano preset | error |\n|---|---:|---:|---:|\n")
        for name, hw, got, checked in out:
            err = 100.0 * (got / hw - 1)
            st = ("ok" if abs(err) <= TOL else "FAIL") if checked else "info"
            bad += st == "FAIL"
            print(f"{st} {name}: {got:.2f} vs R9 Nano {hw:.2f} ({err:+.1f}%)")
            f.write(f"| {name} | {hw:.2f} | {got:.2f} | {err:+.1f}%{'' if checked else ' (not met)'} |\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
