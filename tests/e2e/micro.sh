#!/usr/bin/env bash
# Calibration check: the replay (--topo r9nano) reproduces the MGSim paper's
# R9 Nano micro-benchmark figures (Sec. VI-B / VII-A, Fig. 6) within 5%:
# ALU slope and instruction-cache step, L1/L2/DRAM access latency.
# Needs $BUILD/micro/{alu,chase} (make programs) and gcn3-emu / mgpu-replay.
set -u
BUILD=${BUILD:-build}
for p in alu chase; do
  if [ ! -x "$BUILD/micro/$p" ]; then
    make -s BUILD="$BUILD" "$BUILD/micro/$p" >/dev/null || { echo "FAIL build micro/$p"; exit 1; }
  fi
done
out=$(BUILD="$BUILD" TOL=5 bash benchmarks/micro/run.sh 2>&1)
rc=$?
echo "$out"
# one ok/FAIL line per figure
echo "$out" | awk '/ (ok|FAIL)$/ { st = $NF; $NF = ""; print st " micro: " $0 }'
if [ $rc -ne 0 ]; then echo "FAIL micro: a figure is off by more than 5% (or the run failed)"; exit 1; fi
echo "ok micro"
