#!/usr/bin/env bash
# make bench: emulation speed (1 and all threads, with and without recording),
# trace size, replay speed and simulated cycles on every preset, peak memory,
# for every workload in benchmarks/ (MGSim Table II sizes; see
# benchmarks/bench.py for what is measured and how). Writes
# benchmarks/results/latest.json and latest.md, keeps the previous run as
# previous.json and flags regressions over 10%; appends the R9 Nano
# hardware-probe table (benchmarks/micro/hw-probes.sh --full) to latest.md;
# then redraws the case study (docs/case-study.svg and its table).
#   BENCH_ONLY=km,conv   only these workloads (no case study)
#   BENCH_REPEAT=3       emulation timings: best of N
#   BENCH_STRICT=1       exit 3 when a regression is flagged
#   extra arguments go to benchmarks/bench.py (--help)
# Run on an otherwise idle machine: about 15 minutes on 2 cores.
set -euo pipefail
BUILD=${BUILD:-build}
python3 benchmarks/bench.py --build "$BUILD" "$@"
if [ -z "${BENCH_ONLY:-}" ] && [ $# = 0 ]; then
  # the R9 Nano hardware probes (docs/validation.md), full N sets: a table in
  # latest.md; a slope more than 5% off is flagged, as a regression is
  hw=0
  BUILD=$BUILD bash benchmarks/micro/hw-probes.sh --full --out "$BUILD/hw-probes" >"$BUILD/hw-probes.txt" 2>&1 || hw=$?
  { echo; echo "## R9 Nano hardware probes (benchmarks/micro/hw-probes.sh --full)"; echo
    if [ -s "$BUILD/hw-probes/table.md" ] && [ $hw -le 1 ]; then cat "$BUILD/hw-probes/table.md"
    else echo "not measured: $(tail -n 2 "$BUILD/hw-probes.txt" | tr '\n' ' ')"; fi; } >>benchmarks/results/latest.md
  [ $hw = 0 ] || echo "[bench] REGRESSION R9 Nano hardware probes: $(grep -v '^ok' "$BUILD/hw-probes.txt" | tr '\n' ' ')" >&2
fi
if [ -z "${BENCH_ONLY:-}" ] && [ $# = 0 ]; then
  if command -v gnuplot >/dev/null; then python3 benchmarks/case_study.py
  else echo "run-bench: gnuplot missing (make deps): case study not redrawn" >&2; fi
fi
