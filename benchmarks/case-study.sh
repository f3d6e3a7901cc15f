#!/usr/bin/env bash
# Case study (MGSim paper Fig. 9): plot and table of the simulated execution
# time on M-SGPU, U-MGPU and D-MGPU (4 GPUs, 4x problem) next to the inter-GPU
# bytes, from the results of `make bench` (benchmarks/results/latest.json).
#   benchmarks/case-study.sh            use the existing results
#   benchmarks/case-study.sh --run      first run `make bench`'s measurements
#                                       (BENCH_REPEAT=1: timings are not needed here)
# Writes benchmarks/results/case-study.dat, docs/case-study.svg and the table
# in docs/case-study.md. Needs gnuplot (Debian gnuplot-nox, in `make deps`).
set -euo pipefail
BUILD=${BUILD:-build}
if [ "${1:-}" = --run ]; then
  BENCH_REPEAT=${BENCH_REPEAT:-1} python3 benchmarks/bench.py --build "$BUILD"
fi
command -v gnuplot >/dev/null || { echo "case-study: gnuplot missing (make deps installs gnuplot-nox)" >&2; exit 2; }
exec python3 benchmarks/case_study.py
