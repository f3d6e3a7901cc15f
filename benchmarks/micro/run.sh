#!/usr/bin/env bash
# Micro-benchmark validation of the replay against the R9 Nano figures of the
# MGSim paper (Sun et al., Sec. VI-B and VII-A, Fig. 6), paper prose except
# the ALU pair, which comes from the hardware fit the prose rounds
# (../shared/hw-r9nano; the hardware probes themselves: hw-probes.sh):
#   ALU staircase: 5.9 cycles per v_add_f32 (slope) and an instruction-cache
#                  miss step of 331 cycles every 16 instructions (one 64-byte line)
#   L1 access:     ~150 cycles per load (the L1V is bypassed under ROCm)
#   L2 access:     140-150 cycles per load
#   DRAM access:   ~460 cycles per load
# Records each program with gcn3-emu, replays with --topo r9nano, takes the
# kernel cycles from the summary, prints measured vs paper with % error and
# exits 1 if any figure is off by more than TOL percent (default 5).
#   BUILD=build bash benchmarks/micro/run.sh [--docs [--table FILE]] [--set key=value ...]
# --docs also prints the Markdown table (and writes it to FILE) and writes
# docs/validation.svg (gnuplot).
set -u
BUILD=${BUILD:-build}
TOL=${TOL:-5}
DOCS=0
TABLE=
SETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --docs) DOCS=1 ;;
    --table) TABLE=$2; shift ;;
    --set) SETS+=(--set "$2"); shift ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
for f in "$EMU" "$REPLAY" "$BUILD/micro/alu" "$BUILD/micro/chase"; do
  [ -x "$f" ] || { echo "run.sh: $f missing (make BUILD=$BUILD all micro)" >&2; exit 2; }
done
TMP=$(mktemp -d /tmp/micro.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

for p in alu chase; do
  if ! "$EMU" --record "$TMP/$p.gtrace" -- "$BUILD/micro/$p" >"$TMP/$p.out" 2>"$TMP/$p.err"; then
    echo "FAIL record $p"; cat "$TMP/$p.err" >&2; exit 1
  fi
  if ! "$REPLAY" --topo r9nano "${SETS[@]}" "$TMP/$p.gtrace" >"$TMP/$p.replay" 2>&1; then
    echo "FAIL replay $p"; cat "$TMP/$p.replay" >&2; exit 1
  fi
done

python3 - "$TMP" "$TOL" "$DOCS" "$TABLE" <<'PY'
import re, statistics, sys, os
tmp, tol, docs, table_out = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]

def kernels(path):
    """(name, cycles, wf_instr) per kernel row of the replay summary."""
    rows = []
    for line in open(path):
        f = line.split()
        if len(f) >= 6 and f[0].isdigit() and f[1].startswith("_Z"):
            rows.append((f[1], int(f[3]), int(f[5])))
    return rows

def speed(path):
    m = re.search(r"replay: ([0-9.]+) s wall", open(path).read())
    return float(m.group(1)) if m else None

# ---- ALU staircase ----
alu = {}
for name, cyc, _ in kernels(f"{tmp}/alu.replay"):
    m = re.match(r"_Z3aluILi(\d+)EEvv", name)
    if m:
        alu[int(m.group(1))] = cyc
ns = sorted(n for n in alu if n <= 80)
# The block is 64-byte aligned and ends with s_endpgm: N = 16k - 1 fills k
# lines exactly, N = 16k needs line k + 1 for the s_endpgm.
# Slope: median of (T(n+2) - T(n)) / 2 within a line (two steps cancel the
# 2-cycle HBM clock quantisation; the median drops kernels hit by a DRAM
# refresh). Step: the average rise per 16 instructions over N = 512..1024
# (32 lines: averages the per-line DRAM latency spread) minus 16 x slope.
pairs = [(alu[n + 2] - alu[n]) / 2.0 for n in ns if n + 2 in alu and n % 16 <= 13]
slope = statistics.median(pairs)
avg = (alu[1024] - alu[512]) / 512.0
step = 16 * avg - 16 * slope
# ---- memory chases: kernel order = printed order of the program ----
kinds = [l.split() for l in open(f"{tmp}/chase.out") if len(l.split()) == 2 and l.split()[1].isdigit()]
rows = kernels(f"{tmp}/chase.replay")
if len(rows) != len(kinds):
    print(f"FAIL chase: {len(rows)} kernels replayed, {len(kinds)} launched"); sys.exit(1)
pts = {}
for (kind, k), (_, cyc, _) in zip(kinds, rows):
    pts.setdefault(kind, []).append((int(k), cyc))

def fit(p):
    xs, ys = [a for a, _ in p], [b for _, b in p]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)

figs = [
    ("ALU slope (cycles per v_add_f32)", slope, 5.9, "R9 Nano ALU probe inside one line (../shared/hw-r9nano; Sec. VII-A's prose rounds it to \"5 cycles\")", True),
    ("ALU step (cycles per L1I miss, every 16 instr)", step, 331.0, "R9 Nano ALU probe: 425 per line - 16 x 5.9 (Sec. VII-A: \"300+ cycles to service a cache miss\")", True),
    # not checked: the paper's L1 figure comes from the single-address hardware
    # probe that issue 21 keeps aside as a held-out check (not to be fitted to)
    ("L1 access (cycles per load, L1V bypassed)", fit(pts["l1"]), 150.0, "Sec. VII-A: \"each L1 hit takes around 150 cycles\" (held out: reported, not checked)", False),
    ("L2 access (cycles per load)", fit(pts["l2"]), 145.0, "Sec. VII-A: \"approximately 140 - 150 cycles\"", True),
    ("DRAM access (cycles per load)", fit(pts["dram"]), 460.0, "Sec. VII-A: \"approximately 460 cycles\"", True),
]
bad = 0
print(f"{'figure':50s} {'replay':>9s} {'paper':>7s} {'error':>8s}")
for name, got, want, _, checked in figs:
    err = 100.0 * (got - want) / want
    ok = abs(err) <= tol
    bad += checked and not ok
    print(f"{name:50s} {got:9.1f} {want:7.1f} {err:+7.1f}%  {('ok' if ok else 'FAIL') if checked else 'info'}")
across = [alu[n + 1] - alu[n] - slope for n in ns if n + 1 in alu and n % 16 == 15]
print(f"(ALU: long-run average {avg:.2f} cycles/instr; single steps at N = 16k: {', '.join('%.0f' % a for a in across)})")

instr = sum(r[2] for r in kernels(f"{tmp}/alu.replay")) + sum(r[2] for r in rows)
wall = (speed(f"{tmp}/alu.replay") or 0) + (speed(f"{tmp}/chase.replay") or 0)
if wall > 0:
    print(f"replay speed: {instr} wavefront instructions in {wall:.3f} s = {instr / wall / 1e6:.2f} M wavefront-instr/s")

if docs:
    with open(f"{tmp}/alu-data.txt", "w") as f:
        f.write("# N  replay_cycles  hardware_line (t0 + 5.9 N + 331 per started 16-instruction line)\n")
        t0 = alu[1] - 5.9 - 331
        for n in sorted(alu):
            paper = t0 + 5.9 * n + 331 * ((n + 16) // 16)
            f.write(f"{n} {alu[n]} {paper}\n")
    with open(f"{tmp}/table.md", "w") as f:
        f.write("| figure | replay | reference | error | source |\n|---|---:|---:|---:|---|\n")
        for name, got, want, src, _ in figs:
            f.write(f"| {name} | {got:.1f} | {want:.0f} | {100.0 * (got - want) / want:+.1f}% | {src} |\n")
        if wall > 0:
            f.write(f"\nReplay speed on these micro-benchmarks: {instr} wavefront instructions in {wall:.3f} s wall "
                    f"= {instr / wall / 1e6:.2f} M wavefront-instr/s (single-wavefront kernels: "
                    f"dominated by per-kernel setup, not by instruction throughput).\n")
    print(open(f"{tmp}/table.md").read())
    if table_out:
        import shutil
        shutil.copy(f"{tmp}/table.md", table_out)
sys.exit(1 if bad else 0)
PY
rc=$?
if [ "$DOCS" = 1 ] && [ $rc -eq 0 -o $rc -eq 1 ] && command -v gnuplot >/dev/null; then
  gnuplot -e "data='$TMP/alu-data.txt'" - <<'GP'
set terminal svg size 800,500 font "sans,12"
set output "docs/validation.svg"
set title "ALU micro-benchmark (MGSim Fig. 6a): one wavefront, N x v_add_f32"
set xlabel "v\\_add\\_f32 instructions (N)"
set ylabel "kernel time (cycles at 1 GHz)"
set key top left
set xrange [0:80]
plot data using 1:2 with linespoints pt 7 ps 0.5 title "mgpu-replay --topo r9nano", \
     data using 1:3 with steps dt 2 lw 2 title "R9 Nano fit: 5.9 cycles/instr + 331-cycle step per 16 instr"
GP
fi
exit $rc
