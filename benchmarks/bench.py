#!/usr/bin/env python3
"""Performance harness behind `make bench` (benchmarks/run-bench.sh).

For every workload (the MGMark-style set, then vectoradd and reduction) at its
default size (MGSim Table II, 1 GPU) it measures
  emulation   gcn3-emu with 1 thread and with all threads (--threads), with and
              without --record: wavefront instructions, kernel seconds (the sum
              of gcn3-emu's per-kernel lines, host code excluded), program wall
              seconds, recording overhead (wall with --record / without, same
              thread count), peak resident memory (the program's ru_maxrss,
              through GNU time: see run());
  trace       bytes of the single-GPU trace with and without the data stream
              (`gcn3-trace info`) and per wavefront instruction;
  replay      mgpu-replay on each preset: r9nano on that single-GPU trace;
              m-sgpu and u-mgpu on a single-GPU trace of the 4x problem (Table II's
              4-GPU column: the program sees one GPU); d-mgpu on a trace recorded
              with `gcn3-emu --gpus 4 -- prog --gpus 4` (same 4x problem split over
              four devices). Per preset: wall seconds, M wavefront-instr/s,
              simulated cycles and time, DRAM and inter-GPU bytes, peak memory;
  parallel    mgpu-replay --threads T on the two 4-GPU presets (u-mgpu on the
              1gpu_4x trace, d-mgpu on the 4gpu trace) for T = 1, 2 and
              os.cpu_count() when that is larger: best wall seconds of
              --parallel-repeat runs per T (the first T=1 run is the replay
              of the table above, the others interleave T=2, T=1, T=2, ...),
              speedup best(T=1) / best(T), partitions, lookahead and
              synchronisation windows (the stats file's totals), and whether
              the --stats files of all runs are byte-identical (they must be:
              a difference is reported as a failure, exit status 1). Target
              (issue 8): >= 1.8x on 2 cores for the 4-GPU presets.
              --parallel-only measures this part alone (recording the two
              traces once, no emulation timings) into OUT/parallel.{json,md};
              --no-parallel skips it;
  sampled     r9nano on the 1gpu_4x trace in full and with --sample (issue 16):
              wall seconds, speedup, kernels sampled, error of the summed
              kernel time and of the worst kernel against the full replay,
              how many sampled kernels fell inside their bound, the data
              check; --no-sampled skips it.
Results go to OUT/latest.json (stable keys, schema below) and OUT/latest.md.
The previous latest.json becomes OUT/previous.json and the two are compared:
a change for the worse of more than 10% in a speed, size or memory figure is
flagged as a regression (listed in the Markdown and on stderr); changes of
simulated cycles are listed as model changes.

Timings are the best of --repeat runs (emulation, and the one-thread replays of
each preset: deterministic, but their wall time varies with machine load); the
sampled replays run once, the parallel replays are the best of --parallel-repeat
(default 2). Stdlib only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import sys
import threading
import time

# name -> (args at 1x, args at 4x on one GPU, args with --gpus 4, --small args)
# Sizes follow MGSim Table II (1 GPU / 4 GPUs); --gpus N scales the default.
SM = (["--small"], ["--small"], ["--small", "--gpus", "4"])
WORKLOADS = [
    ("aes",       [], ["--size", "1048576"], ["--gpus", "4"], SM),
    ("bitonic",   [], ["--size", "131072"],  ["--gpus", "4"], SM),
    ("fir",       [], ["--size", "262144"],  ["--gpus", "4"], SM),
    ("gd",        [], ["--size", "1048576"], ["--gpus", "4"], SM),
    ("km",        [], ["--size", "131072"],  ["--gpus", "4"], SM),
    ("transpose", [], ["--size", "4096"],    ["--gpus", "4"], SM),
    ("conv",      [], ["--size", "2048"],    ["--gpus", "4"], SM),
    # the first benchmark programs: positional N, every visible device
    ("vectoradd", [], ["4194304"],           ["4194304"], (["65536"], ["65536"], ["65536"])),
    ("reduction", [], ["4194304"],           ["4194304"], (["65536"], ["65536"], ["65536"])),
]
PRESETS = ["r9nano", "m-sgpu", "u-mgpu", "d-mgpu"]
# The sampled replay at a large size (issue 16: >= 10^8 wavefront instructions):
# (name, program, args); recorded with hashed loads (a smaller trace), replayed
# on r9nano in full and with --sample. conv at 5120 x 5120: 147 M wavefront
# instructions in 102,400 workgroups (160 rounds on r9nano: the workgroup
# level); km at the 4x size for 15 iterations: about 113 M in 45 launches
# (15 of each kernel: the kernel level).
SAMPLED_LARGE = [("conv --size 5120", "conv", ["--size", "5120"]),
                 ("km --size 131072 --iters 15", "km", ["--size", "131072", "--iters", "15"])]
TRACE_OF_PRESET = {"r9nano": "1gpu", "m-sgpu": "1gpu_4x", "u-mgpu": "1gpu_4x", "d-mgpu": "4gpu",
                   "r9nano-cut": "1gpu_4x", "m-sgpu-cut": "1gpu_4x", "d-mgpu-cut": "4gpu",
                   "u-mgpu-ft": "1gpu_4x", "u-mgpu-ac": "1gpu_4x"}
# "<preset>-cut": the preset with the cut inside each GPU (CUT_SETTINGS: sim.gpu_partitions,
# sim.dram_partition; docs/timing-model.md)
# U-MGPU with unified-memory placement (um.policy, docs/timing-model.md), replayed for the case
# study on the 1gpu_4x trace beside u-mgpu (its default placement: interleaved 4 KiB pages)
UM_VARIANTS = {"u-mgpu-ft": ("u-mgpu", "first-touch"), "u-mgpu-ac": ("u-mgpu", "access-counter")}
# the cut of the "-cut" presets: the memory side, 4 groups of shader arrays and the DRAM channels
# (6 partitions per GPU; docs/timing-model.md "The DRAM's own partition"); results measured before
# the settings were recorded in the JSON used sim.gpu_partitions=3
CUT_SETTINGS = ["sim.gpu_partitions=5", "sim.dram_partition=1"]
OLD_CUT_SETTINGS = ["sim.gpu_partitions=3"]
SCHEMA = 1
THRESHOLD = 0.10
# the presets replayed with mgpu-replay --threads T: u-mgpu and d-mgpu as they are (4 partitions:
# one per GPU), and r9nano, m-sgpu and d-mgpu with the cut inside each GPU (u-mgpu with it, 24
# partitions in 4 ns windows, stays slower than u-mgpu's own 4 partitions in 250 ns windows: gd 1x
# 3.1-3.3 s on one thread, 2.7-3.9 s on two, against 2.4 s and 1.8 s without the cut)
PARALLEL_PRESETS = ["u-mgpu", "d-mgpu", "r9nano-cut", "m-sgpu-cut", "d-mgpu-cut"]
PARALLEL_TARGET = 1.8  # issue 8: speedup at T=2 on 2 cores, 4-GPU presets

# metric path -> +1 if higher is better, -1 if lower is better (regression check)
def metric_dirs(w):
    d = {
        ("emu", "minstr_per_s_1thr"): +1,
        ("emu", "minstr_per_s_nthr"): +1,
        ("emu", "record_overhead"): -1,
        ("emu", "record_overhead_hash"): -1,
        ("emu", "record_overhead_lean"): -1,
        ("emu_O0", "record_overhead"): -1,
        ("emu_O0", "record_overhead_lean"): -1,
        ("emu", "peak_rss_mib"): -1,
        ("emu", "peak_rss_mib_record"): -1,
        ("trace", "bytes_per_instr"): -1,
        ("trace", "bytes_per_instr_no_data"): -1,
        ("trace", "record_bytes_per_instr"): -1,
    }
    for p in PRESETS:
        d[("replay", p, "minstr_per_s")] = +1
        d[("replay", p, "peak_rss_mib")] = -1
    for p, r in (w.get("parallel") or {}).items():
        for t in (r.get("speedup") or {}):
            d[("parallel", p, "speedup", t)] = +1
    return d


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class RunError(Exception):
    pass


# Peak memory is measured by GNU time (Debian package `time`, installed by make
# deps): a child of this process starts its ru_maxrss from the image it forks
# from (Linux keeps the larger of the two at exec), so wait4's ru_maxrss of a
# small program read this script's own size (37 MiB) instead of the program's.
# GNU time forks the program from its own small image and reports the
# program's ru_maxrss (%M, KiB).
GNU_TIME = "/usr/bin/time"


def run(cmd, out_path=None, err_path=None):
    """Run cmd; return (status, wall seconds, peak RSS MiB, stdout, stderr)."""
    if not os.access(GNU_TIME, os.X_OK):
        raise RunError(f"{GNU_TIME} (Debian package time) is missing: run make deps")
    fd, rss_path = tempfile.mkstemp(prefix="bench-rss-")
    os.close(fd)
    t0 = time.monotonic()
    p = subprocess.Popen([GNU_TIME, "-f", "%M", "-o", rss_path, "--"] + list(cmd),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # read both pipes, then wait4
    bufs = {}

    def reader(name, f):
        bufs[name] = f.read()
    ts = [threading.Thread(target=reader, args=("out", p.stdout)),
          threading.Thread(target=reader, args=("err", p.stderr))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    _, status, _ = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    try:
        with open(rss_path) as f:
            lines = f.read().split()
        rss_mib = int(lines[-1]) / 1024.0  # time writes "Command exited with non-zero status N" first
    except (OSError, ValueError, IndexError):
        rss_mib = -1.0
    finally:
        os.unlink(rss_path)
    out = bufs["out"].decode(errors="replace")
    err = bufs["err"].decode(errors="replace")
    if out_path:
        with open(out_path, "w") as f:
            f.write(out)
    if err_path:
        with open(err_path, "w") as f:
            f.write(err)
    return p.returncode, wall, rss_mib, out, err


KLINE = re.compile(r"(\d+) wavefront instructions, ([0-9.]+) ms")


def kernel_sums(err):
    n, ms = 0, 0.0
    for m in KLINE.finditer(err):
        n += int(m.group(1))
        ms += float(m.group(2))
    return n, ms / 1000.0


class Bench:
    def __init__(self, a):
        self.a = a
        self.build = a.build
        self.emu = os.path.join(a.build, "bin", "gcn3-emu")
        self.replay = os.path.join(a.build, "bin", "mgpu-replay")
        self.trace_tool = os.path.join(a.build, "bin", "gcn3-trace")
        self.work = os.path.join(a.build, "benchrun")
        os.makedirs(self.work, exist_ok=True)
        self.nthr = a.threads or len(os.sched_getaffinity(0))
        self.par_threads = parallel_threads(a.parallel_threads)
        self.failures = []  # parallel-replay failures (the workload's other results stay)

    def emu_run(self, prog, args, threads, record=None, gpus=1, tag="run", load_values=None, lds_values=None):
        cmd = [self.emu, "--threads", str(threads)]
        if gpus != 1:
            cmd += ["--gpus", str(gpus)]
        if record:
            cmd += ["--record", record]
        if load_values:
            cmd += ["--load-values", load_values]
        if lds_values:
            cmd += ["--lds-values", lds_values]
        cmd += ["--", os.path.join(self.build, "bench", prog)] + args
        base = os.path.join(self.work, f"{prog}-{tag}")
        st, wall, rss, out, err = run(cmd, base + ".out", base + ".err")
        if st != 0 or "PASS" not in out or "FAIL" in out:
            tail = " | ".join((err.strip().splitlines() + out.strip().splitlines())[-3:])
            raise RunError(f"{' '.join(cmd)}: exit {st}: {tail}")
        n, ksec = kernel_sums(err)
        return {"wall": wall, "rss": rss, "instr": n, "ksec": ksec, "out": out.strip()}

    def best(self, prog, args, threads, record=None, tag="run", load_values=None, lds_values=None):
        runs = [self.emu_run(prog, args, threads, record, tag=tag, load_values=load_values, lds_values=lds_values)
                for _ in range(self.a.repeat)]
        return {"wall": min(r["wall"] for r in runs), "ksec": min(r["ksec"] for r in runs),
                "rss": max(r["rss"] for r in runs), "instr": runs[-1]["instr"], "out": runs[-1]["out"]}

    def trace_info(self, path):
        """(file bytes, wave-record bytes, data-stream bytes) from `gcn3-trace info --json`."""
        st, _, _, out, err = run([self.trace_tool, "info", path, "--json"])
        if st != 0:
            raise RunError(f"gcn3-trace info {path} --json: exit {st}: {err.strip()[-200:]}")
        try:
            j = json.loads(out)
            return int(j["file_bytes"]), int(j["total"]["record_bytes"]), int(j["total"]["data_bytes"])
        except (ValueError, KeyError, TypeError) as e:
            raise RunError(f"gcn3-trace info {path} --json: no file_bytes/total.record_bytes/"
                           f"total.data_bytes ({e})")

    def replay_exec(self, preset, trace, stats, txt, threads=None):
        """One mgpu-replay run; (wall seconds, peak RSS MiB)."""
        cmd = [self.replay, "--quiet", "--topo", preset]
        if preset.endswith("-cut"):
            cmd = [self.replay, "--quiet", "--topo", preset[:-4]]
            for kv in CUT_SETTINGS:
                cmd += ["--set", kv]
        if preset in UM_VARIANTS:
            topo, pol = UM_VARIANTS[preset]
            cmd = [self.replay, "--quiet", "--topo", topo, "--set", f"um.policy={pol}"]
        if threads is not None:
            cmd += ["--threads", str(threads)]
        cmd += ["--stats", stats, trace]
        st, wall, rss, out, err = run(cmd, txt)
        if st != 0:
            tail = " | ".join((out.strip().splitlines() + err.strip().splitlines())[-3:])
            raise RunError(f"{' '.join(cmd)}: exit {st}: {tail}")
        return wall, rss

    def summarise(self, stats):
        # Stats files of many-kernel traces reach tens of MB: read them in a
        # child process, so this process stays small.
        st2, _, _, sj, serr = run([sys.executable, os.path.abspath(__file__), "--summarise-stats", stats])
        if st2 != 0:
            raise RunError(f"reading {stats}: {serr.strip()[-300:]}")
        return json.loads(sj)

    def replay_run(self, prog, preset, trace):
        return self.replay_sample(prog, preset, trace)[0]

    def replay_sample(self, prog, preset, trace):
        """The preset's replay (no --threads: one thread), the best of --repeat runs (one
        run's wall time on a shared VM moved 10-30% between two make bench runs of the same
        build, 2026-12-03); (result, wall s, stats path, summary)."""
        stats = os.path.join(self.work, f"{prog}-{preset}.json")
        runs = [self.replay_exec(preset, trace, stats, os.path.join(self.work, f"{prog}-{preset}.txt"))
                for _ in range(max(1, self.a.repeat))]
        wall, rss = min(w for w, _ in runs), max(r for _, r in runs)
        s = self.summarise(stats)
        n = s["wavefront_instructions"]
        res = {
            "trace": TRACE_OF_PRESET[preset],
            "gpus": s["gpus"],
            "wavefront_instructions": n,
            "kernels": s["kernels"],
            "wall_s": round(wall, 3),
            "minstr_per_s": round(n / wall / 1e6, 3) if wall > 0 else None,
            "simulated_us": round(s["simulated_ps"] / 1e6, 3),
            "cycles": s["cycles"],
            "dram_bytes": s["dram_bytes"],
            "inter_gpu_bytes": s["inter_gpu_bytes"],
            "peak_rss_mib": round(rss, 1),
            "data_check": "OK",
        }
        if preset in UM_VARIANTS:
            res.update({k: s[k] for k in ("um_faults", "um_migrations", "um_bytes")})
        return res, wall, stats, s

    def sampled(self, prog, trace, um=False, um_full=None, um_full_t=None):
        """r9nano in full and with --sample on one trace: wall seconds, the sampled kernels, the error of
        the kernel time against the full replay, and how many kernels fell inside their bound. um: also
        u-mgpu (a partition per GPU) sampled on one and on self.nthr threads, against its full replay
        (r["u-mgpu"]): um_full = (wall s, stats path) of the one already made on this trace (else made
        here), um_full_t its wall on self.nthr threads (else not reported)."""
        out = {}
        runs = [("full", []), ("sampled", ["--sample"])]
        if um:
            if um_full is None:
                runs.append(("um_full", ["--topo", "u-mgpu"]))
            runs.append(("um_sampled", ["--topo", "u-mgpu", "--sample"]))
            if self.nthr > 1:
                runs.append(("um_sampled_t", ["--topo", "u-mgpu", "--sample", "--threads", str(self.nthr)]))
        if self.nthr > 1:  # helpers decode and apply what is fast-forwarded: the same JSON, sooner
            runs.append(("sampled_t", ["--sample", "--threads", str(self.nthr)]))
            # the GPU cut into partitions (CUT_SETTINGS), which the threads run beside the helpers: a
            # model variant of its own (docs/timing-model.md "Sampled replay"), against its own full replay
            cut = [a for kv in CUT_SETTINGS for a in ("--set", kv)]
            runs.append(("full_cut_t", ["--threads", str(self.nthr)] + cut))
            runs.append(("sampled_cut_t", ["--sample", "--threads", str(self.nthr)] + cut))
        for tag, extra in runs:
            stats = os.path.join(self.work, f"{prog}-smp-{tag}.json")
            cmd = [self.replay, "--quiet", "--topo", "r9nano"] + extra + ["--stats", stats, trace]  # (a later --topo wins)
            st, wall, rss, o, err = run(cmd, os.path.join(self.work, f"{prog}-smp-{tag}.txt"))
            if st != 0:
                tail = " | ".join((o.strip().splitlines() + err.strip().splitlines())[-3:])
                raise RunError(f"{' '.join(cmd)}: exit {st}: {tail}")
            out[tag] = (round(wall, 3), stats)
        made = set(out)  # the stats files this call wrote (deleted at its end)
        if um and um_full is not None:
            out["um_full"] = (round(um_full[0], 3), um_full[1])
        st2, _, _, sj, serr = run([sys.executable, os.path.abspath(__file__), "--compare-sampled",
                                   out["full"][1], out["sampled"][1]])
        if st2 != 0:
            raise RunError(f"comparing {out['full'][1]} and {out['sampled'][1]}: {serr.strip()[-300:]}")
        r = json.loads(sj)
        r["wall_s_full"], r["wall_s_sampled"] = out["full"][0], out["sampled"][0]
        r["speedup"] = round(out["full"][0] / out["sampled"][0], 2) if out["sampled"][0] > 0 else None
        if "sampled_t" in out:
            with open(out["sampled"][1], "rb") as a, open(out["sampled_t"][1], "rb") as b:
                same = a.read() == b.read()
            if not same:
                raise RunError(f"--sample --threads {self.nthr}: {out['sampled_t'][1]} differs from the "
                               f"one-thread {out['sampled'][1]} (it must not)")
            r["threads"] = self.nthr
            r["wall_s_sampled_threads"] = out["sampled_t"][0]
            r["speedup_threads"] = (round(out["full"][0] / out["sampled_t"][0], 2)
                                    if out["sampled_t"][0] > 0 else None)
        if "sampled_cut_t" in out:
            r["wall_s_sampled_cut_threads"] = out["sampled_cut_t"][0]
            r["speedup_cut_threads"] = (round(out["full"][0] / out["sampled_cut_t"][0], 2)
                                        if out["sampled_cut_t"][0] > 0 else None)
            r["wall_s_full_cut_threads"] = out["full_cut_t"][0]
            st3, _, _, cj, cerr = run([sys.executable, os.path.abspath(__file__), "--compare-sampled",
                                       out["full_cut_t"][1], out["sampled_cut_t"][1]])
            if st3 != 0:
                raise RunError(f"comparing {out['full_cut_t'][1]} and {out['sampled_cut_t'][1]}: {cerr.strip()[-300:]}")
            c = json.loads(cj)
            r["cut"] = {k: c[k] for k in ("kernel_time_error_pct", "worst_kernel_error_pct", "inside_bound",
                                          "sampled_kernels", "skipped_instr_pct", "data_check")}
        if "um_sampled" in out:
            st4, _, _, uj, uerr = run([sys.executable, os.path.abspath(__file__), "--compare-sampled",
                                       out["um_full"][1], out["um_sampled"][1]])
            if st4 != 0:
                raise RunError(f"comparing {out['um_full'][1]} and {out['um_sampled'][1]}: {uerr.strip()[-300:]}")
            u = json.loads(uj)
            u = {k: u[k] for k in ("kernel_time_error_pct", "worst_kernel_error_pct", "inside_bound", "sampled_kernels",
                                   "kernels", "skipped_instr_pct", "data_check", "in_full_why")}
            u["wall_s_full"], u["wall_s_sampled"] = out["um_full"][0], out["um_sampled"][0]
            u["speedup"] = round(out["um_full"][0] / out["um_sampled"][0], 2) if out["um_sampled"][0] > 0 else None
            if "um_sampled_t" in out:
                with open(out["um_sampled"][1], "rb") as a, open(out["um_sampled_t"][1], "rb") as b:
                    if a.read() != b.read():
                        raise RunError(f"u-mgpu --sample --threads {self.nthr}: {out['um_sampled_t'][1]} differs "
                                       f"from the one-thread {out['um_sampled'][1]} (it must not)")
                u["threads"] = self.nthr
                u["wall_s_full_threads"], u["wall_s_sampled_threads"] = um_full_t, out["um_sampled_t"][0]
                u["speedup_threads"] = (round(out["um_full"][0] / out["um_sampled_t"][0], 2)
                                        if out["um_sampled_t"][0] > 0 else None)
            r["u-mgpu"] = u
        for tag in made:
            os.unlink(out[tag][1])
        return r

    def sampled_large(self, label, prog, args):
        """SAMPLED_LARGE: record prog args (hashed loads), then self.sampled on its trace."""
        tr = os.path.join(self.work, f"{prog}.large.gtrace")
        try:
            e = self.emu_run(prog, args, self.nthr, record=tr, tag="large", load_values="hash")
            r = self.sampled(f"{prog}-large", tr)
            r["wavefront_instructions"] = e["instr"]
            return r
        finally:
            if os.path.exists(tr):
                os.unlink(tr)

    def parallel(self, prog, preset, trace, first=None):
        """mgpu-replay --threads T for T in self.par_threads, best of --parallel-repeat
        runs each, interleaved; first = (wall s, stats path, summary) of a T=1 replay
        already made (it counts as the first T=1 run and is the reference stats file).
        Every stats file is compared byte for byte with the reference."""
        reps = self.a.parallel_repeat
        walls = {t: [] for t in self.par_threads}
        ref, summ = None, None
        if first is not None and 1 in walls:
            walls[1].append(first[0])
            ref, summ = first[1], first[2]
        mismatch = []
        load = os.getloadavg()[0]  # the machine is shared: the load says how far to trust the walls
        order = [(i, t) for i in range(reps) for t in self.par_threads]
        for i, t in order:
            if len(walls[t]) > i:
                continue  # the T=1 run reused from the main replay
            stats = os.path.join(self.work, f"{prog}-{preset}-t{t}-{i}.json")
            log(f"{prog}: parallel replay {preset} --threads {t} (run {i + 1} of {reps})")
            wall, _ = self.replay_exec(preset, trace, stats,
                                       os.path.join(self.work, f"{prog}-{preset}-t{t}-{i}.txt"), threads=t)
            walls[t].append(wall)
            if ref is None:
                ref = stats
                summ = self.summarise(stats)
                continue
            off = first_difference(ref, stats)
            if off is None:
                os.unlink(stats)
            else:
                mismatch.append({"threads": t, "run": i + 1, "file": stats, "reference": ref,
                                 "first_difference_byte": off})
                log(f"{prog}: PARALLEL REPLAY MISMATCH: {preset} --threads {t}: {stats} differs from "
                    f"{ref} at byte {off}")
        best = {t: min(v) for t, v in walls.items()}
        parts = summ.get("partitions")
        r = {
            "trace": TRACE_OF_PRESET[preset],
            "wavefront_instructions": summ["wavefront_instructions"],
            "partitions": parts,
            "lookahead_ps": summ.get("lookahead_ps"),
            "sync_windows": summ.get("sync_windows"),
            "repeat": reps,
            "wall_s": {str(t): round(v, 3) for t, v in best.items()},
            "wall_s_runs": {str(t): [round(x, 3) for x in v] for t, v in walls.items()},
            "loadavg_1min_before": round(load, 2),
            "threads_used": {str(t): min(t, parts) if isinstance(parts, int) else None for t in best},
            "speedup": {str(t): round(best[1] / v, 3) if 1 in best and v > 0 else None
                        for t, v in best.items() if t != 1},
            "identical_stats": not mismatch,
        }
        if mismatch:
            r["mismatch"] = mismatch
            self.failures.append(f"{prog} {preset}: stats files differ between thread counts")
        return r

    def parallel_part(self, prog, preset, trace, first=None):
        """self.parallel, its failure recorded (not raised): the other results stay."""
        try:
            return self.parallel(prog, preset, trace, first)
        except (RunError, OSError, KeyError, ValueError, TypeError) as e:
            if not isinstance(e, RunError):
                e = f"harness: {type(e).__name__}: {e}"
            log(f"{prog}: parallel replay {preset} FAILED: {e}")
            self.failures.append(f"{prog} {preset}: {e}")
            return {"trace": TRACE_OF_PRESET[preset], "error": str(e)}

    def record_o0(self, prog, a1):
        """Recording overhead of the -O0 build (issue 16: <= 1.5x at -O2 and -O0): the program's wall
        time with --record (and with --load-values hash --lds-values none) over the run without, n threads,
        best of --repeat; None when the -O0 program was not built."""
        p0 = f"{prog}-O0"
        if not os.access(os.path.join(self.build, "bench", p0), os.X_OK):
            log(f"{prog}: no {p0} (make programs): -O0 recording not measured")
            return None
        log(f"{p0}: emulation, {self.nthr} threads")
        en = self.best(p0, a1, self.nthr, tag=f"t{self.nthr}")
        t = os.path.join(self.work, f"{p0}.gtrace")
        log(f"{p0}: emulation, {self.nthr} threads, recording")
        er = self.best(p0, a1, self.nthr, record=t, tag="rec")
        size = self.trace_info(t)[0]
        log(f"{p0}: emulation, {self.nthr} threads, recording with --load-values hash --lds-values none")
        erl = self.best(p0, a1, self.nthr, record=t, tag="recl", load_values="hash", lds_values="none")
        size_l = self.trace_info(t)[0]
        os.unlink(t)
        return {"wavefront_instructions": en["instr"], "wall_s_nthr": round(en["wall"], 3),
                "wall_s_nthr_record": round(er["wall"], 3), "record_overhead": round(er["wall"] / en["wall"], 2),
                "wall_s_nthr_record_lean": round(erl["wall"], 3),
                "record_overhead_lean": round(erl["wall"] / en["wall"], 2),
                "bytes": size, "bytes_lean": size_l}

    def workload(self, prog, a1, a4, ad, small):
        binp = os.path.join(self.build, "bench", prog)
        if not os.access(binp, os.X_OK):
            raise RunError(f"{binp} missing (benchmarks/{prog}.hip; make BUILD={self.build} programs)")
        if self.a.small:
            a1, a4, ad = small
        r = {"args": {"1gpu": a1, "1gpu_4x": a4, "4gpu": ad}}
        log(f"{prog}: emulation, 1 thread")
        e1 = self.best(prog, a1, 1, tag="t1")
        log(f"{prog}: emulation, {self.nthr} threads")
        en = self.best(prog, a1, self.nthr, tag=f"t{self.nthr}")
        t1 = os.path.join(self.work, f"{prog}.1gpu.gtrace")
        log(f"{prog}: emulation, {self.nthr} threads, recording")
        er = self.best(prog, a1, self.nthr, record=t1, tag="rec")
        # the same with hashed plain-load values (gcn3-emu --load-values hash, trace 2.2)
        t1h = os.path.join(self.work, f"{prog}.1gpu-hash.gtrace")
        log(f"{prog}: emulation, {self.nthr} threads, recording with --load-values hash")
        erh = self.best(prog, a1, self.nthr, record=t1h, tag="rech", load_values="hash")
        size_h = self.trace_info(t1h)[0]
        os.unlink(t1h)
        # leanest: hashed loads and no LDS values (--lds-values none, trace 2.3)
        t1l = os.path.join(self.work, f"{prog}.1gpu-lean.gtrace")
        log(f"{prog}: emulation, {self.nthr} threads, recording with --load-values hash --lds-values none")
        erl = self.best(prog, a1, self.nthr, record=t1l, tag="recl", load_values="hash", lds_values="none")
        size_l = self.trace_info(t1l)[0]
        os.unlink(t1l)
        n = e1["instr"]
        r["output"] = e1["out"]
        r["wavefront_instructions"] = n
        r["emu"] = {
            "threads": self.nthr,
            "kernel_s_1thr": round(e1["ksec"], 4),
            "kernel_s_nthr": round(en["ksec"], 4),
            "minstr_per_s_1thr": round(n / e1["ksec"] / 1e6, 2) if e1["ksec"] > 0 else None,
            "minstr_per_s_nthr": round(n / en["ksec"] / 1e6, 2) if en["ksec"] > 0 else None,
            "scaling": round(e1["ksec"] / en["ksec"], 2) if en["ksec"] > 0 else None,
            "wall_s_1thr": round(e1["wall"], 3),
            "wall_s_nthr": round(en["wall"], 3),
            "wall_s_nthr_record": round(er["wall"], 3),
            "record_overhead": round(er["wall"] / en["wall"], 2),
            "wall_s_nthr_record_hash": round(erh["wall"], 3),
            "record_overhead_hash": round(erh["wall"] / en["wall"], 2),
            "wall_s_nthr_record_lean": round(erl["wall"], 3),
            "record_overhead_lean": round(erl["wall"] / en["wall"], 2),
            "peak_rss_mib": round(en["rss"], 1),
            "peak_rss_mib_record": round(er["rss"], 1),
        }
        size, rec, data = self.trace_info(t1)
        r["trace"] = {
            "bytes": size,
            "bytes_no_data": size - data,
            "record_bytes": rec,
            "data_bytes": data,
            "bytes_per_instr": round(size / n, 3) if n else None,
            "bytes_per_instr_no_data": round((size - data) / n, 3) if n else None,
            "record_bytes_per_instr": round(rec / n, 3) if n else None,
            "bytes_hash": size_h,
            "bytes_lean": size_l,
        }
        o0 = self.record_o0(prog, a1)
        if o0:
            r["emu_O0"] = o0
        if self.a.record_only:
            os.unlink(t1)
            return r
        r["replay"] = {}
        log(f"{prog}: replay r9nano ({n} wavefront instructions)")
        r["replay"]["r9nano"] = self.replay_run(prog, "r9nano", t1)
        os.unlink(t1)
        t4 = os.path.join(self.work, f"{prog}.1gpu_4x.gtrace")
        log(f"{prog}: recording the 4x problem on one GPU")
        e4 = self.emu_run(prog, a4, self.nthr, record=t4, tag="4x")
        r["output_4x"] = e4["out"]
        first = None  # u-mgpu's replay: (wall s, stats path, summary), reused by the parallel and sampled parts
        for p in ("m-sgpu", "u-mgpu"):
            log(f"{prog}: replay {p} ({e4['instr']} wavefront instructions)")
            r["replay"][p], *sample = self.replay_sample(prog, p, t4)
            if p == "u-mgpu":
                first = sample
        for p in UM_VARIANTS:
            log(f"{prog}: replay {p} (u-mgpu, um.policy={UM_VARIANTS[p][1]})")
            try:
                r["replay"][p] = self.replay_run(prog, p, t4)
            except RunError as e:
                r["replay"][p] = {"error": str(e)}
                self.failures.append(f"{prog} {p}: {e}")
                log(f"{prog}: replay {p} FAILED: {e}")
        if self.a.parallel:
            r["parallel"] = {"u-mgpu": self.parallel_part(prog, "u-mgpu", t4, first)}
            for p in PARALLEL_PRESETS:
                if p.endswith("-cut") and TRACE_OF_PRESET[p] == "1gpu_4x":
                    r["parallel"][p] = self.parallel_part(prog, p, t4)
        if self.a.sampled:
            log(f"{prog}: sampled replay r9nano against the full one (4x problem)")
            try:
                # u-mgpu's full replays were made above (one thread; --threads in the parallel table)
                pu = r.get("parallel", {}).get("u-mgpu", {})
                r["sampled"] = self.sampled(prog, t4, um=True, um_full=first[:2] if first else None,
                                            um_full_t=pu.get("wall_s", {}).get(str(self.nthr)))
            except RunError as e:
                r["sampled"] = {"error": str(e)}
                log(f"{prog}: sampled replay FAILED: {e}")
        os.unlink(t4)
        td = os.path.join(self.work, f"{prog}.4gpu.gtrace")
        log(f"{prog}: recording the 4x problem on four GPUs")
        ed = self.emu_run(prog, ad, self.nthr, record=td, gpus=4, tag="g4")
        if "devices=4" not in ed["out"] and "gpus=4" not in ed["out"] and "4 GPU" not in ed["out"]:
            log(f"{prog}: note: the --gpus 4 run does not say it used 4 devices: {ed['out']}")
        r["output_4gpu"] = ed["out"]
        log(f"{prog}: replay d-mgpu ({ed['instr']} wavefront instructions)")
        r["replay"]["d-mgpu"], *first = self.replay_sample(prog, "d-mgpu", td)
        if self.a.parallel:
            r["parallel"]["d-mgpu"] = self.parallel_part(prog, "d-mgpu", td, first)
            r["parallel"]["d-mgpu-cut"] = self.parallel_part(prog, "d-mgpu-cut", td)
        os.unlink(td)
        return r

    def workload_parallel(self, prog, a1, a4, ad, small):
        """--parallel-only: record the 1gpu_4x and 4gpu traces, replay them in parallel."""
        binp = os.path.join(self.build, "bench", prog)
        if not os.access(binp, os.X_OK):
            raise RunError(f"{binp} missing (benchmarks/{prog}.hip; make BUILD={self.build} programs)")
        if self.a.small:
            a1, a4, ad = small
        r = {"args": {"1gpu_4x": a4, "4gpu": ad}, "parallel": {}}
        for kind, args, gpus in (("1gpu_4x", a4, 1), ("4gpu", ad, 4)):
            tr = os.path.join(self.work, f"{prog}.{kind}.gtrace")
            log(f"{prog}: recording the {kind} trace")
            e = self.emu_run(prog, args, self.nthr, record=tr, gpus=gpus, tag=f"par-{kind}")
            r["output_" + kind] = e["out"]
            for preset in PARALLEL_PRESETS:
                if TRACE_OF_PRESET[preset] == kind:
                    r["parallel"][preset] = self.parallel_part(prog, preset, tr)
            os.unlink(tr)
        return r


def parallel_threads(spec):
    """Thread counts of the parallel replays: 1, 2 and os.cpu_count() unless spec
    (comma-separated) says otherwise; 1 is always included (the speedup's base)."""
    if spec:
        try:
            ts = {int(x) for x in spec.split(",") if x.strip()}
        except ValueError:
            raise SystemExit(f"bench: --parallel-threads '{spec}': expected numbers such as 1,2,4")
        if not ts or min(ts) < 1:
            raise SystemExit(f"bench: --parallel-threads '{spec}': expected numbers >= 1")
    else:
        ts = {2, os.cpu_count() or 1}
    return sorted(ts | {1})


def first_difference(a, b):
    """None if files a and b are byte-identical, else the offset of the first difference."""
    off = 0
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                n = min(len(x), len(y))
                i = next((k for k in range(n) if x[k] != y[k]), n)
                return off + i
            if not x:
                return None
            off += len(x)


def summarise_stats(path):
    """The few figures the harness needs from an mgpu-replay --stats file."""
    with open(path) as f:
        s = json.load(f)
    tot = s["totals"]
    freq = float(re.match(r"[0-9.]+", str(cfg(s, "gpu.freq"))).group(0))
    ps = tot["simulated_ps"]
    return {
        "gpus": int(cfg(s, "topo.gpus")),
        "kernels": len(s["kernels"]),
        "wavefront_instructions": tot["wavefront_instructions"],
        "simulated_ps": ps,
        "cycles": int(round(ps * freq / 1e12)),
        "dram_bytes": sum(k.get("dram_bytes", 0) for k in s["kernels"]),
        "inter_gpu_bytes": tot["counters"].get("link.bytes", 0),
        # unified memory (um.policy that moves pages; 0 otherwise)
        "um_faults": sum(v for k, v in tot["counters"].items() if k.endswith(".um.faults")),
        "um_migrations": sum(v for k, v in tot["counters"].items() if k.endswith(".um.migrations_in")),
        "um_bytes": sum(v for k, v in tot["counters"].items() if k.endswith(".um.bytes_in")),
        # the parallel replay's decomposition (absent in stats of older replays)
        "partitions": tot.get("partitions"),
        "lookahead_ps": tot.get("lookahead_ps"),
        "sync_windows": tot.get("sync_windows"),
    }


def cfg(stats, key):
    """A configuration value of a stats file: flat dotted keys or nested objects."""
    c = stats["config"]
    if key in c:
        return c[key]
    for k in key.split("."):
        c = c[k]
    return c


def get(d, path):
    for k in path:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def compare(prev, cur):
    """Regressions (>10% worse) and model changes (cycles differ >10%)."""
    regs, changes = [], []
    if not prev:
        return regs, changes
    for name, w in cur["workloads"].items():
        pw = prev.get("workloads", {}).get(name)
        if not pw or "error" in w or "error" in pw:
            continue
        if pw.get("args") != w.get("args"):
            changes.append(f"{name}: arguments changed ({pw.get('args')} -> {w.get('args')}); not compared")
            continue
        for path, sign in metric_dirs(w).items():
            a, b = get(pw, path), get(w, path)
            if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or a <= 0:
                continue
            rel = (b - a) / a
            if sign * rel < -THRESHOLD:
                regs.append({"workload": name, "metric": ".".join(path), "previous": a, "current": b,
                             "change_pct": round(rel * 100, 1)})
        for p in PRESETS:
            a, b = get(pw, ("replay", p, "cycles")), get(w, ("replay", p, "cycles"))
            if isinstance(a, int) and isinstance(b, int) and a > 0 and abs(b - a) / a > THRESHOLD:
                changes.append(f"{name} {p}: simulated cycles {a} -> {b} ({(b - a) / a * 100:+.1f}%)")
        a, b = get(pw, ("wavefront_instructions",)), get(w, ("wavefront_instructions",))
        if a and b and a != b:
            changes.append(f"{name}: wavefront instructions {a} -> {b}")
    return regs, changes


def fmt(v, f="{:.2f}"):
    if v is None:
        return "-"
    if isinstance(v, int):
        return str(v)
    return f.format(v)


def geomean(xs):
    xs = [x for x in xs if isinstance(x, (int, float)) and x > 0]
    if not xs:
        return None
    p = 1.0
    for x in xs:
        p *= x
    return p ** (1.0 / len(xs))


def parallel_summary(res):
    """The run's parallel-replay summary: per preset and thread count the geometric
    mean of the speedups over the workloads; whether every stats file matched."""
    ts = res.get("parallel", {}).get("threads") or []
    g, ok = {}, True
    for p in res.get("parallel", {}).get("presets") or PARALLEL_PRESETS:
        g[p] = {}
        for t in ts:
            if t == 1:
                continue
            v = geomean(get(w, ("parallel", p, "speedup", str(t))) for w in res["workloads"].values())
            g[p][str(t)] = round(v, 3) if v is not None else None
    for w in res["workloads"].values():
        for r in (w.get("parallel") or {}).values():
            if "error" in r or not r.get("identical_stats"):
                ok = False
    return g, ok


def markdown_parallel(res):
    """The "Parallel replay" section (empty for results without one)."""
    pr = res.get("parallel")
    if not pr:
        return []
    ts = pr["threads"]
    nts = [t for t in ts if t != 1]
    presets = pr.get("presets") or PARALLEL_PRESETS
    cut = pr.get("cut_settings") or OLD_CUT_SETTINGS
    cut_desc = ", ".join(cut)
    L = ["## Parallel replay (mgpu-replay --threads T)", ""]
    reused = "" if res.get("parallel_only") else " (the first T=1 run is the replay of the table above)"
    L.append(f"One trace replayed with T worker threads over the machine's partitions (one per GPU): u-mgpu "
             f"on the 1gpu_4x trace, d-mgpu on the 4gpu trace; '-cut': the preset (r9nano and m-sgpu "
             f"on the 1gpu_4x trace, d-mgpu on the 4gpu trace) with the cut inside each GPU ({cut_desc}: "
             f"docs/timing-model.md, 4 ns windows; a model variant of its own, so its T=1 run is its own, not "
             f"the replay above). Wall seconds: best of {pr['repeat']} runs per "
             f"T{reused}, on {res['host']['cpus']} CPUs; speedup = T=1 s / T=n s (at most the "
             f"partition count). Identical JSON: the --stats files of all runs and thread counts are "
             f"byte-identical (they must be). Windows: synchronisation windows of the lookahead (ns) over "
             f"the partitions.")
    L.append("")
    hdr = "| workload | preset | wavefront instr | T=1 s |"
    for t in nts:
        hdr += f" T={t} s | speedup T={t} |"
    hdr += " identical JSON | windows | partitions | lookahead ns |"
    L.append(hdr)
    L.append("|---" * (4 + 2 * len(nts) + 4) + "|")
    bad = []
    for name, w in res["workloads"].items():
        for p in presets:
            r = get(w, ("parallel", p))
            if not r:
                continue
            if "error" in r:
                L.append(f"| {name} | {p} | **FAIL**: {r['error'][:160]} |" + " |" * (2 * len(nts) + 5))
                bad.append(f"{name} {p}")
                continue
            row = f"| {name} | {p} | {r['wavefront_instructions']} | {fmt(r['wall_s'].get('1'), '{:.3f}')} |"
            for t in nts:
                sp = r["speedup"].get(str(t))
                row += f" {fmt(r['wall_s'].get(str(t)), '{:.3f}')} | {fmt(sp)}{'x' if sp is not None else ''} |"
            same = r["identical_stats"]
            if not same:
                bad.append(f"{name} {p}")
            la = r.get("lookahead_ps")
            row += (f" {'yes' if same else '**NO (FAIL)**'} | {fmt(r.get('sync_windows'))} | "
                    f"{fmt(r.get('partitions'))} | {fmt(la / 1e3 if isinstance(la, (int, float)) else None, '{:.1f}')} |")
            L.append(row)
    L.append("")
    g, _ = parallel_summary(res)
    for t in nts:
        parts = []
        for p in presets:
            v = g.get(p, {}).get(str(t))
            n = sum(1 for w in res["workloads"].values()
                    if isinstance(get(w, ("parallel", p, "speedup", str(t))), (int, float)))
            parts.append(f"{p} {fmt(v)}x ({n} workloads)" if v is not None else f"{p} -")
        line = f"Geometric-mean speedup at T={t}: " + ", ".join(parts) + "."
        if t == 2:
            vals = [g.get(p, {}).get("2") for p in presets]
            met = all(isinstance(v, (int, float)) and v >= PARALLEL_TARGET for v in vals)
            line += (f" Target (issues 8, 16): >= {PARALLEL_TARGET}x on 2 cores on every preset: "
                     f"{'met' if met else '**not met**'}.")
        L.append(line)
        L.append("")
    if bad:
        L.append(f"**FAILURE: {len(bad)} parallel replay(s) failed or wrote stats that differ between "
                 f"thread counts: {', '.join(bad)}.**")
        L.append("")
    return L


def markdown_o0(res):
    """The -O0 recording table (rows of workloads with an emu_O0 section)."""
    rows = [(n, w["emu_O0"]) for n, w in res["workloads"].items() if isinstance(w.get("emu_O0"), dict)]
    if not rows:
        return []
    L = ["## Recording at -O0", "",
         "The same programs built with `hipcc -O0` (`build/bench/*-O0`: every value spilled to private memory, "
         "most memory ops private): program wall time with `--record` / without, and with `--load-values hash "
         f"--lds-values none` (lean), {res['threads']} threads, best of {res['repeat']}. Private (scratch) data "
         "values are not recorded (the default: `gcn3-emu --scratch-data` records them).", "",
         "| workload | wavefront instr | wall s | wall s + record | record overhead | wall s + record lean | "
         "record overhead lean | trace MB | trace MB lean |",
         "|---|---|---|---|---|---|---|---|---|"]
    for n, o in rows:
        L.append(f"| {n} | {o['wavefront_instructions']} | {o['wall_s_nthr']:.3f} | {o['wall_s_nthr_record']:.3f} | "
                 f"{fmt(o['record_overhead'])}x | {o['wall_s_nthr_record_lean']:.3f} | "
                 f"{fmt(o['record_overhead_lean'])}x | {o['bytes'] / 1e6:.1f} | {o['bytes_lean'] / 1e6:.1f} |")
    L.append("")
    return L


def markdown(res, regs, changes, prev_name):
    h = res["host"]
    L = []
    if res.get("parallel_only"):
        L.append(f"# Parallel replay results ({res['date']}, {h['cpus']} CPUs: {h['cpu_model']})")
        L.append("")
        L.append(f"`benchmarks/bench.py --parallel-only`, build `{res['build']}`, commit `{res['commit']}`, "
                 f"{res['elapsed_s']:.0f} s in all. Sizes: the 4x problem (MGSim Table II's 4-GPU column).")
        L.append("")
        L += markdown_parallel(res)
        return "\n".join(L) + "\n"
    if res.get("record_only"):
        L.append(f"# Emulation and recording results ({res['date']}, {h['cpus']} CPUs: {h['cpu_model']})")
        L.append("")
        L.append(f"`benchmarks/bench.py --record-only`, build `{res['build']}`, commit `{res['commit']}`, "
                 f"{res['elapsed_s']:.0f} s in all. Timings are the best of {res['repeat']} runs; sizes: MGSim "
                 "Table II (1 GPU).")
        L.append("")
    else:
        L.append(f"# Benchmark results ({res['date']}, {h['cpus']} CPUs: {h['cpu_model']})")
        L.append("")
        L.append(f"`make bench` (benchmarks/bench.py), build `{res['build']}`, commit `{res['commit']}`, "
                 f"{res['elapsed_s']:.0f} s in all. Emulation timings and the one-thread replays per preset "
                 f"are the best of {res['repeat']} runs; sampled replays run once. Sizes: MGSim Table II (1 GPU) for the emulation rows and r9nano; "
                 "the 4x problem (Table II's 4-GPU column) for m-sgpu and u-mgpu (one-GPU trace) and "
                 "d-mgpu (trace of `gcn3-emu --gpus 4 -- prog --gpus 4`).")
        L.append("")
    L.append("## Emulation and trace")
    L.append("")
    L.append("Kernel seconds are summed over gcn3-emu's per-kernel lines (host code excluded); rates in "
             "M wavefront-instructions/s. Recording overhead = program wall time with `--record` / without "
             f"({res['threads']} threads; includes compressing and writing the trace); hashed: recorded with "
             "`--load-values hash` (a 64-bit hash per plain load instead of its values); lean: with "
             "`--load-values hash --lds-values none` (LDS accesses without values: no LDS check). Trace sizes from "
             "`gcn3-trace info --json`: B/instr = the whole file; no data = the file less the load/store "
             "data stream; wave records = the per-wavefront records alone (paths, EXEC, addresses). Peak "
             "memory: ru_maxrss of the emulated program (of mgpu-replay below), through GNU time (results "
             "before 2026-11-28 read about 37 MiB for every small program: the bench script's own size).")
    L.append("")
    L.append(f"| workload | wavefront instr | M instr/s 1 thr | M instr/s {res['threads']} thr | scaling | "
             f"wall s | wall s + record | record overhead | record overhead hashed | record overhead lean | trace MB | "
             "trace MB hashed | trace MB lean | B/instr | B/instr no data | B/instr wave records | peak MiB | "
             "peak MiB record |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, w in res["workloads"].items():
        if "error" in w:
            L.append(f"| {name} | error: {w['error'][:160]} |" + " |" * 16)
            continue
        e, t = w["emu"], w["trace"]
        th, tl = t.get("bytes_hash"), t.get("bytes_lean")
        L.append(f"| {name} | {w['wavefront_instructions']} | {fmt(e['minstr_per_s_1thr'], '{:.1f}')} | "
                 f"{fmt(e['minstr_per_s_nthr'], '{:.1f}')} | {fmt(e['scaling'])}x | {e['wall_s_nthr']:.3f} | "
                 f"{e['wall_s_nthr_record']:.3f} | {fmt(e['record_overhead'])}x | "
                 f"{fmt(e.get('record_overhead_hash'))}{'x' if e.get('record_overhead_hash') else ''} | "
                 f"{fmt(e.get('record_overhead_lean'))}{'x' if e.get('record_overhead_lean') else ''} | "
                 f"{t['bytes'] / 1e6:.1f} | "
                 f"{fmt(th / 1e6 if th is not None else None, '{:.1f}')} | "
                 f"{fmt(tl / 1e6 if tl is not None else None, '{:.1f}')} | "
                 f"{fmt(t['bytes_per_instr'])} | {fmt(t['bytes_per_instr_no_data'])} | "
                 f"{fmt(t['record_bytes_per_instr'], '{:.3f}')} | "
                 f"{e['peak_rss_mib']:.0f} | {e['peak_rss_mib_record']:.0f} |")
    L.append("")
    L += markdown_o0(res)
    if res.get("record_only"):
        return "\n".join(L) + "\n"
    L.append("## Replay")
    L.append("")
    L.append("Per preset: wavefront instructions replayed, wall seconds, rate (M wavefront-instr/s), simulated "
             "cycles (1 GHz), bytes over the inter-GPU link, peak memory of mgpu-replay (MiB). Every replay "
             "passed its data check.")
    L.append("")
    hdr = "| workload |"
    sep = "|---|"
    for p in PRESETS:
        hdr += f" {p} instr | s | M/s | cycles | link B | MiB |"
        sep += "---|---|---|---|---|---|"
    L.append(hdr)
    L.append(sep)
    for name, w in res["workloads"].items():
        if "error" in w:
            continue
        row = f"| {name} |"
        for p in PRESETS:
            r = w["replay"].get(p)
            if not r:
                row += " - | - | - | - | - | - |"
                continue
            row += (f" {r['wavefront_instructions']} | {r['wall_s']:.2f} | {fmt(r['minstr_per_s'])} | "
                    f"{r['cycles']} | {r['inter_gpu_bytes']} | {r['peak_rss_mib']:.0f} |")
        L.append(row)
    L.append("")
    L.append("## Multi-GPU comparison (4x problem, time normalised to m-sgpu)")
    L.append("")
    L.append("| workload | m-sgpu us | u-mgpu us | d-mgpu us | u-mgpu / m-sgpu | d-mgpu / m-sgpu | "
             "u-mgpu link MB | d-mgpu link MB |")
    L.append("|---|---|---|---|---|---|---|---|")
    for name, w in res["workloads"].items():
        if "error" in w:
            continue
        m, u, d = (w["replay"].get(p) for p in ("m-sgpu", "u-mgpu", "d-mgpu"))
        if not (m and u and d) or not m["simulated_us"]:
            continue
        L.append(f"| {name} | {m['simulated_us']:.1f} | {u['simulated_us']:.1f} | {d['simulated_us']:.1f} | "
                 f"{u['simulated_us'] / m['simulated_us']:.2f} | {d['simulated_us'] / m['simulated_us']:.2f} | "
                 f"{u['inter_gpu_bytes'] / 1e6:.2f} | {d['inter_gpu_bytes'] / 1e6:.2f} |")
    L.append("")
    L += markdown_parallel(res)
    rows = [(n, w["sampled"]) for n, w in res["workloads"].items() if "error" not in w and w.get("sampled")]
    large = [(f"{n} ({r['wavefront_instructions'] / 1e6:.0f} M instr)" if "wavefront_instructions" in r else n, r)
             for n, r in res.get("sampled_large", {}).items()]
    if rows or large:
        L.append("## Sampled replay (mgpu-replay --sample, r9nano, 4x problem and a large size)")
        L.append("")
        nt = next((r.get("threads") for _, r in rows + large if r.get("threads")), None)
        L.append("The one-GPU trace of the 4x problem replayed on r9nano in full and with `--sample` (one thread "
                 "each, run once); last, the large size (bench.py SAMPLED_LARGE, recorded with hashed loads). "
                 + (f"T thr: `--sample --threads {nt}` (its other threads decode and apply, by L2 bank, the fast-forwarded workgroups; "
                    "its JSON is identical to one thread's, checked), against the same full replay (r9nano is one "
                    "partition: --threads does not speed it). Cut, T thr: the same with the GPU cut into "
                    "partitions (" + ", ".join(CUT_SETTINGS) + "), which the threads replay (a model variant of its "
                    "own); speedup against the full replay on one partition; cut error: its kernel time against "
                    "the full replay of the same cut (`--threads` T), its worst kernel, and its sampled kernels "
                    "inside their bound. " if nt else "") +
                 "Kernel time: the sum of the kernels' times, sampled against full. Inside bound: "
                 "sampled kernels whose time is within their printed bound of the full replay's. Detailed after "
                 "skips: kernels replayed in detail after skipped work (no bound: the skips changed the machine "
                 "they ran in), and the worst of their errors. Instr skipped: the share of the trace's wavefront "
                 "instructions the sampled replay skipped (its `sampled` summary). In full, why: the kernels the sampled replay ran "
                 "in full, by mgpu-replay's reason (its stats file's `sampled.in_full`; each kernel's `replayed_in_full` says more: polls, grid barrier, CAS = compare-and-swaps, "
                 "few rounds for the workgroup level with the wave level unable to skip, rate unstable within "
                 "the tolerance, bound wide = a skip would have given the kernel a bound over sample.max_bound, "
                 "20% by default).")
        L.append("")
        L.append("| workload | full s | sampled s | speedup | sampled s, T thr | speedup, T thr | sampled s, cut, T thr | "
                 "speedup, cut, T thr | cut error | kernels sampled | "
                 "instr skipped | kernel time error | worst kernel | inside bound | detailed after skips | worst of those | "
                 "data check | in full, why |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for name, r in rows + large:
            if "error" in r:
                L.append(f"| {name} | error: {r['error'][:160]} |" + " |" * 16)
                continue
            cu = r.get("cut")
            cut_err = (f"{fmt(cu['kernel_time_error_pct'], '{:+.2f}')}%, worst {fmt(cu['worst_kernel_error_pct'])}%, "
                       f"{cu['inside_bound']} of {cu['sampled_kernels']} inside" if cu else "-")
            why = ", ".join(f"{v} {k}" for k, v in sorted(r.get("in_full_why", {}).items())) or "-"
            wt = r.get("wall_s_sampled_threads")
            wc = r.get("wall_s_sampled_cut_threads")
            L.append(f"| {name} | {r['wall_s_full']:.2f} | {r['wall_s_sampled']:.2f} | {fmt(r['speedup'])}x | "
                     f"{f'{wt:.2f}' if wt is not None else '-'} | "
                     f"{fmt(r.get('speedup_threads'))}{'x' if r.get('speedup_threads') else ''} | "
                     f"{f'{wc:.2f}' if wc is not None else '-'} | "
                     f"{fmt(r.get('speedup_cut_threads'))}{'x' if r.get('speedup_cut_threads') else ''} | {cut_err} | "
                     f"{r['sampled_kernels']} of {r['kernels']} | "
                     f"{fmt(r.get('skipped_instr_pct'))}{'%' if r.get('skipped_instr_pct') is not None else ''} | "
                     f"{fmt(r['kernel_time_error_pct'], '{:+.2f}')}% | "
                     f"{fmt(r['worst_kernel_error_pct'])}% | {r['inside_bound']} of {r['sampled_kernels']} | "
                     f"{r.get('detailed_after_skips', '-')} | {fmt(r.get('worst_detailed_after_skips_pct'))}% | "
                     f"{r['data_check']} | {why} |")
        L.append("")
    um = [(n, r["u-mgpu"]) for n, r in rows if "u-mgpu" in r]
    if um:
        nt = next((u.get("threads") for _, u in um if u.get("threads")), None)
        L.append("## Sampled replay on u-mgpu (4 GPUs, a partition per GPU)")
        L.append("")
        L.append("The same 4x trace on u-mgpu in full and with `--sample`, on one thread"
                 + (f" and on {nt} (the GPUs' partitions on the threads, fast-forwards into other GPUs' L2 banks "
                    "applied at the serial points; the JSON of both is identical, checked)" if nt else "")
                 + "; full: the u-mgpu replays of the tables above (T thr: the parallel table's best); speedups "
                 "against the full replay on one thread, errors as above against the full u-mgpu replay.")
        L.append("")
        L.append("| workload | full s | full s, T thr | sampled s | speedup | sampled s, T thr | speedup, T thr | "
                 "kernels sampled | instr skipped | kernel time error | worst kernel | inside bound | data check | "
                 "in full, why |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for name, u in um:
            why = ", ".join(f"{v} {k}" for k, v in sorted(u.get("in_full_why", {}).items())) or "-"
            ft, wt = u.get("wall_s_full_threads"), u.get("wall_s_sampled_threads")
            L.append(f"| {name} | {u['wall_s_full']:.2f} | {f'{ft:.2f}' if ft is not None else '-'} | "
                     f"{u['wall_s_sampled']:.2f} | {fmt(u['speedup'])}x | {f'{wt:.2f}' if wt is not None else '-'} | "
                     f"{fmt(u.get('speedup_threads'))}{'x' if u.get('speedup_threads') else ''} | "
                     f"{u['sampled_kernels']} of {u['kernels']} | "
                     f"{fmt(u.get('skipped_instr_pct'))}{'%' if u.get('skipped_instr_pct') is not None else ''} | "
                     f"{fmt(u['kernel_time_error_pct'], '{:+.2f}')}% | {fmt(u['worst_kernel_error_pct'])}% | "
                     f"{u['inside_bound']} of {u['sampled_kernels']} | {u['data_check']} | {why} |")
        L.append("")
    L.append(f"## Compared with {prev_name or 'the previous results'}")
    L.append("")
    if prev_name is None:
        L.append("No previous results file: nothing to compare.")
    else:
        if regs:
            L.append(f"**{len(regs)} regression(s) over {int(THRESHOLD * 100)}%:**")
            L.append("")
            L.append("| workload | metric | previous | current | change |")
            L.append("|---|---|---|---|---|")
            for g in regs:
                L.append(f"| {g['workload']} | {g['metric']} | {g['previous']} | {g['current']} | "
                         f"{g['change_pct']:+.1f}% |")
        else:
            L.append(f"No regression over {int(THRESHOLD * 100)}%.")
        L.append("")
        if changes:
            L.append("Model / workload changes (not regressions):")
            L.append("")
            for c in changes:
                L.append(f"- {c}")
        L.append("")
    return "\n".join(L) + "\n"


def result_stem(a):
    """Results file name without .json / .md."""
    if a.parallel_only:
        return "parallel-small" if a.small else "parallel"
    if getattr(a, "record_only", False):
        return "record-small" if a.small else "record"
    return "small" if a.small else "latest"


# mgpu-replay's reasons for a kernel replayed in full under --sample (the keys
# of its stats file's sampled.in_full: sample.c, rp_why_full_label): the label
# in the table
WHY_FULL = {"polls": "polls", "grid barrier": "grid barrier", "compare-and-swaps": "CAS",
            "too few rounds": "few rounds", "rate not stable": "rate unstable", "bound too wide": "bound wide"}


def compare_sampled(full_path, smp_path):
    """Kernel times of a sampled replay against the full one (same trace)."""
    with open(full_path) as f:
        fk = json.load(f)["kernels"]
    with open(smp_path) as f:
        s = json.load(f)
    sk = s["kernels"]
    if len(fk) != len(sk):
        raise ValueError(f"{len(fk)} kernels in the full replay, {len(sk)} in the sampled one")
    dur = lambda k: k["end_ps"] - k["start_ps"]
    tf, ts = sum(map(dur, fk)), sum(map(dur, sk))
    n = inside = n_after = 0
    worst = worst_after = 0.0
    for a, b in zip(fk, sk):
        if dur(a) <= 0:
            continue
        if "sampled" not in b:
            # replayed in detail, but after skipped work: the skips' effect
            # on the machine (caches, DRAM) is in its time, and no bound
            if b.get("after_skipped_work"):
                n_after += 1
                worst_after = max(worst_after, abs(dur(b) - dur(a)) / dur(a))
            continue
        n += 1
        e = abs(dur(b) - dur(a))
        inside += e <= b["sampled"]["bound_ps"]
        worst = max(worst, e / dur(a))
    c = s["check"]
    ss = s.get("sampled", {})  # mgpu-replay's summary of the run (absent in older stats files)
    # why the kernels replayed in full were, by reason (the summary's counts)
    why = {WHY_FULL.get(k, k): v for k, v in ss.get("in_full", {}).items() if v}
    skipped = (round(100.0 * ss["skipped_wavefront_instructions"] / ss["wavefront_instructions"], 1)
               if ss.get("wavefront_instructions") else None)
    return {"kernels": len(fk), "sampled_kernels": n, "inside_bound": inside, "in_full_why": why,
            "skipped_instr_pct": skipped,
            "kernel_time_error_pct": round(100.0 * (ts - tf) / tf, 3) if tf else None,
            "worst_kernel_error_pct": round(100.0 * worst, 3),
            "detailed_after_skips": n_after,
            "worst_detailed_after_skips_pct": round(100.0 * worst_after, 3),
            "data_check": "OK" if c["load_mismatches"] == 0 and c["d2h_mismatches"] == 0 else "MISMATCH"}


def um_only(a, b, only, commit):
    """--um-only: re-measure the UM_VARIANTS replays of every workload into OUT/latest.json."""
    latest = os.path.join(a.out, result_stem(a) + ".json")
    try:
        with open(latest) as f:
            res = json.load(f)
    except (OSError, ValueError) as e:
        print(f"bench: --um-only needs {latest} from a full run ({e})", file=sys.stderr)
        return 2
    failed = 0
    for prog, a1, a4, ad, small in WORKLOADS:
        w = res.get("workloads", {}).get(prog)
        if (only and prog not in only) or not w or "replay" not in w:
            continue
        if a.small:
            a4 = small[1]
        t4 = os.path.join(b.work, f"{prog}.1gpu_4x.gtrace")
        try:
            log(f"{prog}: recording the 4x problem on one GPU")
            b.emu_run(prog, a4, b.nthr, record=t4, tag="um4x")
            for p in UM_VARIANTS:
                log(f"{prog}: replay {p} (u-mgpu, um.policy={UM_VARIANTS[p][1]})")
                w["replay"][p] = b.replay_run(prog, p, t4)
        except (RunError, OSError, KeyError, ValueError, TypeError) as e:
            log(f"{prog}: unified-memory replays FAILED: {e}")
            failed += 1
        finally:
            if os.path.exists(t4):
                os.unlink(t4)
    res["um_commit"] = commit
    with open(latest, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    log(f"wrote the unified-memory replays into {latest} (commit {commit})")
    return 1 if failed else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--summarise-stats":
        json.dump(summarise_stats(sys.argv[2]), sys.stdout)
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "--compare-sampled":
        json.dump(compare_sampled(sys.argv[2], sys.argv[3]), sys.stdout)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.environ.get("BUILD", "build"))
    ap.add_argument("--out", default="benchmarks/results", help="results directory")
    ap.add_argument("--repeat", type=int, default=int(os.environ.get("BENCH_REPEAT", "3")))
    ap.add_argument("--threads", type=int, default=0, help="emulator threads for the n-thread runs")
    ap.add_argument("--only", default=os.environ.get("BENCH_ONLY", ""),
                    help="comma-separated workloads (default: all)")
    ap.add_argument("--small", action="store_true",
                    help="--small problem sizes everywhere (a harness check, not a benchmark)")
    ap.add_argument("--strict", action="store_true", default=os.environ.get("BENCH_STRICT") == "1",
                    help="exit 3 when a regression is flagged")
    ap.add_argument("--parallel-only", action="store_true",
                    help="only the parallel replays (mgpu-replay --threads T on u-mgpu and d-mgpu; records "
                    "the two traces, no emulation timings); writes OUT/parallel.{json,md}")
    ap.add_argument("--record-only", action="store_true",
                    help="only the emulation and recording rows (-O2 and -O0: speed, recording overhead, trace "
                    "size; no replay); writes OUT/record.{json,md}, compares nothing")
    ap.add_argument("--no-parallel", dest="parallel", action="store_false",
                    help="skip the parallel replays")
    ap.add_argument("--parallel-threads", default="",
                    help="comma-separated thread counts of the parallel replays (default: 1,2 and "
                    "os.cpu_count() when larger)")
    ap.add_argument("--parallel-repeat", type=int, default=2,
                    help="parallel replays: best of N runs per thread count (default 2)")
    ap.add_argument("--no-sampled", dest="sampled", action="store_false",
                    help="skip the sampled-replay comparison (r9nano, full and --sample, on the 4x trace)")
    ap.add_argument("--um-only", action="store_true",
                    help="only the case study's unified-memory replays (u-mgpu with um.policy first-touch and "
                    "access-counter on the 4x trace), written into the existing OUT/latest.json (its um_commit "
                    "says which commit measured them); nothing else is measured or compared")
    ap.add_argument("--render", action="store_true",
                    help="only rewrite OUT/latest.md from OUT/latest.json (no measurement)")
    a = ap.parse_args()
    if a.parallel_only and not a.parallel:
        ap.error("--parallel-only and --no-parallel exclude each other")
    if a.record_only and a.parallel_only:
        ap.error("--record-only and --parallel-only exclude each other")
    if a.record_only:
        a.parallel = a.sampled = False
    if a.parallel_repeat < 1:
        ap.error("--parallel-repeat: expected at least 1")
    if a.render:
        latest = os.path.join(a.out, result_stem(a) + ".json")
        with open(latest) as f:
            res = json.load(f)
        prevf = os.path.join(a.out, "small-previous.json" if a.small else "previous.json")
        prev_name = None
        if a.parallel_only or a.record_only:
            prevf = ""
        if os.path.exists(prevf):
            with open(prevf) as f:
                p = json.load(f)
            prev_name = f"{os.path.basename(prevf)} ({p.get('date')}, commit {p.get('commit')})"
        md = markdown(res, res.get("regressions", []), res.get("changes", []), prev_name)
        with open(latest[:-5] + ".md", "w") as f:
            f.write(md)
        return 0
    b = Bench(a)
    for tool in (b.emu, b.replay, b.trace_tool):
        if not os.access(tool, os.X_OK):
            print(f"bench: {tool} missing (make BUILD={a.build} all)", file=sys.stderr)
            return 2
    only = [x for x in a.only.split(",") if x]
    t0 = time.monotonic()
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip() or "unknown"
    except OSError:
        commit = "unknown"
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    if a.um_only:
        return um_only(a, b, only, commit)
    res = {"schema": SCHEMA, "date": time.strftime("%Y-%m-%d", time.gmtime()), "commit": commit,
           "build": a.build, "small": a.small, "repeat": a.repeat, "threads": b.nthr,
           "host": {"cpus": os.cpu_count(), "cpu_model": model}, "workloads": {}}
    if a.parallel_only:
        res["parallel_only"] = True
    if a.record_only:
        res["record_only"] = True
    if a.parallel:
        res["parallel"] = {"threads": b.par_threads, "repeat": a.parallel_repeat,
                           "presets": PARALLEL_PRESETS, "cut_settings": CUT_SETTINGS,
                           "target_speedup_2thr": PARALLEL_TARGET}
    failed = 0
    for prog, a1, a4, ad, small in WORKLOADS:
        if only and prog not in only:
            continue
        try:
            if a.parallel_only:
                res["workloads"][prog] = b.workload_parallel(prog, a1, a4, ad, small)
            else:
                res["workloads"][prog] = b.workload(prog, a1, a4, ad, small)
        except (RunError, OSError, KeyError, ValueError, TypeError, AttributeError) as e:
            if not isinstance(e, RunError):
                e = f"harness: {type(e).__name__}: {e}"
            log(f"{prog}: FAILED: {e}")
            res["workloads"][prog] = {"error": str(e)}
            failed += 1
    if a.sampled and not a.small and not a.parallel_only and not a.record_only and not only:
        res["sampled_large"] = {}
        for label, prog, args in SAMPLED_LARGE:
            log(f"{label}: sampled replay r9nano against the full one (large size)")
            try:
                res["sampled_large"][label] = b.sampled_large(label, prog, args)
            except (RunError, OSError, KeyError, ValueError, TypeError) as e:
                log(f"{label}: sampled replay FAILED: {e}")
                res["sampled_large"][label] = {"error": str(e)}
                failed += 1
    res["elapsed_s"] = round(time.monotonic() - t0, 1)
    if a.parallel:
        g, same = parallel_summary(res)
        res["parallel"]["geomean_speedup"] = g
        res["parallel"]["identical_stats"] = same

    os.makedirs(a.out, exist_ok=True)
    stem = result_stem(a)
    latest = os.path.join(a.out, f"{stem}.json")
    prevf = os.path.join(a.out, "previous.json" if not a.small else "small-previous.json")
    prev, prev_name = None, None
    if a.parallel_only or a.record_only:
        pass  # partial results: latest.json / previous.json are left alone, nothing compared
    elif os.path.exists(latest):
        try:
            with open(latest) as f:
                prev = json.load(f)
            if prev.get("schema") == SCHEMA:
                shutil.copyfile(latest, prevf)
                prev_name = f"{os.path.basename(prevf)} ({prev.get('date')}, commit {prev.get('commit')})"
            else:
                prev = None
        except (OSError, ValueError):
            prev = None
    elif os.path.exists(prevf):
        with open(prevf) as f:
            prev = json.load(f)
        prev_name = f"{os.path.basename(prevf)} ({prev.get('date')}, commit {prev.get('commit')})"
    regs, changes = compare(prev, res)
    res["regressions"] = regs
    res["changes"] = changes
    with open(latest, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    md = markdown(res, regs, changes, prev_name)
    with open(os.path.join(a.out, f"{stem}.md"), "w") as f:
        f.write(md)
    sys.stdout.write(md)
    for g in regs:
        log(f"REGRESSION {g['workload']} {g['metric']}: {g['previous']} -> {g['current']} "
            f"({g['change_pct']:+.1f}%)")
    log(f"done in {res['elapsed_s']:.0f} s: {latest}, {os.path.join(a.out, stem + '.md')}")
    for f in b.failures:
        log(f"PARALLEL REPLAY FAILURE: {f}")
    if failed or b.failures:
        if failed:
            log(f"{failed} workload(s) failed")
        if b.failures:
            log(f"{len(b.failures)} parallel replay(s) failed")
        return 1
    if regs and a.strict:
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
