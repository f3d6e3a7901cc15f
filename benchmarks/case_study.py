#!/usr/bin/env python3
"""Case study (MGSim paper, Fig. 9): execution time of each workload on M-SGPU,
U-MGPU and D-MGPU with 4 GPUs, and on U-MGPU with unified-memory placement
(first-touch, access-counter), normalised to M-SGPU, next to the bytes that
cross the inter-GPU interconnect.

Input: the results of `make bench` (benchmarks/results/latest.json): for every
workload, the 4x problem (MGSim Table II, 4-GPU column) replayed on m-sgpu and
u-mgpu from a single-GPU trace and on d-mgpu from a trace of the program split
over four devices. Output:
  benchmarks/results/case-study.dat   the numbers, one row per workload (gnuplot input)
  docs/case-study.svg                 the plot (benchmarks/case-study.gp)
  docs/case-study.md                  the table between its "case-study table" markers
Stdlib only; gnuplot (Debian gnuplot-nox) draws the plot.
"""
import argparse
import json
import os
import subprocess
import sys

ORDER = ["aes", "bitonic", "fir", "gd", "km", "transpose", "conv", "vectoradd", "reduction"]
LABEL = {"aes": "AES", "bitonic": "BS", "fir": "FIR", "gd": "GD", "km": "KM", "transpose": "MT",
         "conv": "SC", "vectoradd": "VA", "reduction": "RD"}
PATTERN = {"aes": "partitioned", "bitonic": "irregular", "fir": "adjacent", "gd": "gather",
           "km": "partitioned", "transpose": "scatter", "conv": "adjacent", "vectoradd": "partitioned",
           "reduction": "partitioned"}
BEGIN = "<!-- case-study table begin (benchmarks/case-study.sh writes this part) -->"
END = "<!-- case-study table end -->"


def rows(res, mgmark_only):
    out = []
    for name in ORDER:
        w = res.get("workloads", {}).get(name)
        if not w or "error" in w:
            continue
        if mgmark_only and name in ("vectoradd", "reduction"):
            continue
        r = w.get("replay", {})
        m, u, d = r.get("m-sgpu"), r.get("u-mgpu"), r.get("d-mgpu")
        if not (m and u and d) or not m.get("simulated_us"):
            continue
        row = {
            "name": name, "label": LABEL[name], "pattern": PATTERN[name],
            "args": w["args"]["1gpu_4x"], "instr": m["wavefront_instructions"],
            "m_us": m["simulated_us"], "u_us": u["simulated_us"], "d_us": d["simulated_us"],
            "u_norm": u["simulated_us"] / m["simulated_us"], "d_norm": d["simulated_us"] / m["simulated_us"],
            "u_link": u["inter_gpu_bytes"], "d_link": d["inter_gpu_bytes"],
        }
        # U-MGPU with unified-memory placement (um.policy): first-touch, access-counter
        for tag, key in (("ft", "u-mgpu-ft"), ("ac", "u-mgpu-ac")):
            v = r.get(key) or {}
            ok = bool(v.get("simulated_us"))
            row[tag + "_us"] = v["simulated_us"] if ok else None
            row[tag + "_norm"] = v["simulated_us"] / m["simulated_us"] if ok else None
            row[tag + "_link"] = v.get("inter_gpu_bytes") if ok else None
            row[tag + "_moves"] = v.get("um_migrations") if ok else None
        out.append(row)
    return out


def table(rs, res):
    def f(v, fmt, scale=1.0):
        return "n/a" if v is None else format(v / scale, fmt)
    L = [BEGIN, "",
         f"Data: `make bench` of {res.get('date')} (commit `{res.get('commit')}`), "
         "4x problem sizes (MGSim Table II, 4-GPU column). Time = simulated time of the whole trace "
         "(every kernel, host copy and launch overhead, as timed by the host timeline); link = bytes over the inter-GPU "
         "interconnect. UM-FT and UM-AC: U-MGPU with unified-memory placement (`um.policy=first-touch` and "
         "`access-counter`, pages of 4 KiB starting interleaved) instead of fixed interleaving"
         + (f" (replayed by `bench.py --um-only` at commit `{res['um_commit']}`)" if res.get("um_commit") else "")
         + ".", "",
         "| workload | pattern | wavefront instr | M-SGPU us | U-MGPU us | D-MGPU us | UM-FT us | UM-AC us | "
         "U-MGPU / M-SGPU | D-MGPU / M-SGPU | UM-FT / M-SGPU | UM-AC / M-SGPU | U-MGPU link MB | D-MGPU link MB | "
         "UM-FT link MB | UM-AC link MB | UM-FT pages moved | UM-AC pages moved |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rs:
        L.append(f"| {r['label']} ({r['name']}) | {r['pattern']} | {r['instr']} | {r['m_us']:.1f} | "
                 f"{r['u_us']:.1f} | {r['d_us']:.1f} | {f(r['ft_us'], '.1f')} | {f(r['ac_us'], '.1f')} | "
                 f"{r['u_norm']:.2f} | {r['d_norm']:.2f} | {f(r['ft_norm'], '.2f')} | {f(r['ac_norm'], '.2f')} | "
                 f"{r['u_link'] / 1e6:.2f} | {r['d_link'] / 1e6:.2f} | {f(r['ft_link'], '.2f', 1e6)} | "
                 f"{f(r['ac_link'], '.2f', 1e6)} | {f(r['ft_moves'], '.0f')} | {f(r['ac_moves'], '.0f')} |")
    L += ["", END]
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default="benchmarks/results/latest.json")
    ap.add_argument("--dat", default="benchmarks/results/case-study.dat")
    ap.add_argument("--plot", default="docs/case-study.svg")
    ap.add_argument("--doc", default="docs/case-study.md")
    ap.add_argument("--gnuplot", default="benchmarks/case-study.gp")
    a = ap.parse_args()
    try:
        with open(a.results) as f:
            res = json.load(f)
    except (OSError, ValueError) as e:
        print(f"case-study: cannot read {a.results} ({e}); run `make bench` first", file=sys.stderr)
        return 2
    rs = rows(res, mgmark_only=False)
    if not rs:
        print(f"case-study: {a.results} has no workload with m-sgpu, u-mgpu and d-mgpu replays",
              file=sys.stderr)
        return 2
    os.makedirs(os.path.dirname(a.dat) or ".", exist_ok=True)
    with open(a.dat, "w") as f:
        f.write("# label u_norm d_norm u_link_MB d_link_MB m_us u_us d_us ft_norm ac_norm ft_link_MB ac_link_MB"
                " (from %s; NaN: not replayed)\n" % a.results)
        def g(v, scale=1.0):
            return "NaN" if v is None else f"{v / scale:.4f}"
        for r in rs:
            f.write(f"{r['label']} {r['u_norm']:.4f} {r['d_norm']:.4f} {r['u_link'] / 1e6:.4f} "
                    f"{r['d_link'] / 1e6:.4f} {r['m_us']:.3f} {r['u_us']:.3f} {r['d_us']:.3f} "
                    f"{g(r['ft_norm'])} {g(r['ac_norm'])} {g(r['ft_link'], 1e6)} {g(r['ac_link'], 1e6)}\n")
    st = subprocess.run(["gnuplot", "-e", f"datafile='{a.dat}'; outfile='{a.plot}'", a.gnuplot])
    if st.returncode != 0:
        print(f"case-study: gnuplot {a.gnuplot} failed (exit {st.returncode})", file=sys.stderr)
        return 1
    t = table(rs, res)
    try:
        with open(a.doc) as f:
            doc = f.read()
    except OSError:
        doc = f"# Case study\n\n{BEGIN}\n{END}\n"
    if BEGIN in doc and END in doc:
        doc = doc[:doc.index(BEGIN)] + t + doc[doc.index(END) + len(END):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + t + "\n"
    with open(a.doc, "w") as f:
        f.write(doc)
    print(t)
    print(f"case-study: wrote {a.dat}, {a.plot}, table in {a.doc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
