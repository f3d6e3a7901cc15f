#!/usr/bin/env bash
# End-to-end test of configuration sweeps (docs/sweeps.md): a vectoradd trace
# recorded by gcn3-emu, a 6-point sweep (cross product of a list and a
# geometric range) replayed with 1 and 2 jobs (byte-identical CSV), resume
# (a deleted and a truncated point JSON are rerun, the others reused), bad
# sweep files (one-line errors naming file, line and key), a multi-topology
# GPU-count sweep (cross product) plotted by tools/sweep-plot.sh, and the same
# sweep over 2 MPI ranks (same CSV; skipped with a message without mpirun).
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
T=$(mktemp -d /tmp/sweep-e2e.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }

prog=$BUILD/bench/vectoradd
[ -x "$prog" ] || prog=build/bench/vectoradd
[ -x "$prog" ] || { echo "  FAIL no vectoradd program ($BUILD/bench/vectoradd or build/bench/vectoradd): make programs"; exit 1; }

echo "== sweeps"
# 256 workgroups: a quick replay, still enough to fill 64 CUs.
if "$EMU" --quiet --record "$T/va.gtrace" -- "$prog" 65536 >"$T/rec.out" 2>&1 && grep -q PASS "$T/rec.out"; then
  ok "record vectoradd"
else
  bad "record vectoradd: $(tail -n 3 "$T/rec.out" | tr '\n' ' ')"; echo "sweep: $pass passed, $fail failed"; exit 1
fi

cat >"$T/s.ini" <<'EOF'
; 2 x 3 = 6 points
[sweep]
base = r9nano
[params]
gpu.cus_per_sa = 2,4
l2.size = 1MiB..4MiB*2
EOF

# J=1 and J=2: same CSV, byte for byte.
"$REPLAY" --sweep "$T/s.ini" --jobs 1 --out "$T/j1" "$T/va.gtrace" 2>"$T/j1.err"; rc1=$?
"$REPLAY" --sweep "$T/s.ini" --jobs 2 --out "$T/j2" "$T/va.gtrace" 2>"$T/j2.err"; rc2=$?
if [ $rc1 = 0 ] && [ $rc2 = 0 ]; then ok "sweep runs with 1 and 2 jobs"
else bad "sweep exit $rc1/$rc2: $(tail -n 2 "$T/j1.err" "$T/j2.err" | tr '\n' ' ')"; fi
csv=$T/j1/results.csv
if [ -f "$csv" ] && [ "$(head -n1 "$csv" | cut -d, -f1-6)" = "index,topo,gpus,gpu.cus_per_sa,l2.size,status" ] &&
   [ "$(wc -l <"$csv")" = 7 ] && [ "$(cut -d, -f1 "$csv" | tail -n +2 | tr '\n' ' ')" = "0 1 2 3 4 5 " ] &&
   [ "$(cut -d, -f5 "$csv" | tail -n +2 | tr '\n' ' ')" = "1MiB 2MiB 4MiB 1MiB 2MiB 4MiB " ] &&
   [ "$(cut -d, -f6 "$csv" | tail -n +2 | sort -u)" = ok ] &&
   awk -F, 'NR > 1 && ($8 <= 0 || $12 <= 0 || $18 != 0) { exit 1 }' "$csv"; then
  ok "CSV: 6 rows in index order, data check OK, cycles and instructions > 0"
else bad "CSV content: $(head -n 3 "$csv" 2>/dev/null | tr '\n' ' ')"; fi
# Fewer CUs cannot be faster on a CU-bound kernel: 2 CUs/SA slower than 4.
if awk -F, 'NR > 1 { c[$4] += $8 } END { exit !(c[2] > c[4]) }' "$csv"; then ok "CSV: 32 CUs take more cycles than 64"
else bad "CSV: cycles do not depend on gpu.cus_per_sa"; fi
if cmp -s "$T/j1/results.csv" "$T/j2/results.csv"; then ok "J=1 and J=2 give byte-identical CSV"
else bad "J=1 and J=2 CSV differ: $(diff "$T/j1/results.csv" "$T/j2/results.csv" | head -n 4 | tr '\n' ' ')"; fi
if [ "$(ls "$T/j2" | grep -c '^run-[0-5]\.json$')" = 6 ] && ! ls "$T/j2" | grep -q tmp; then ok "one JSON per point, no temporary files left"
else bad "JSON files: $(ls "$T/j2" | tr '\n' ' ')"; fi
if grep -q "evictions" "$T/j2.err" && grep -q " 0 evictions" "$T/j2.err"; then ok "trace frames decoded once (0 evictions)"
else bad "trace cache: $(grep 'trace frames' "$T/j2.err")"; fi

# Resume: a deleted and a truncated (interrupted) JSON are run again, 4 points reused.
rm -f "$T/j2/run-3.json"
head -c 100 "$T/j2/run-4.json" >"$T/j2/run-4.json.cut" && mv "$T/j2/run-4.json.cut" "$T/j2/run-4.json"
"$REPLAY" --sweep "$T/s.ini" --jobs 2 --out "$T/j2" "$T/va.gtrace" 2>"$T/resume.err"; rc=$?
if [ $rc = 0 ] && grep -q "6 of 6 points: 2 run, 4 reused, 0 errors" "$T/resume.err" &&
   grep -q "run-4.json was incomplete" "$T/resume.err" && cmp -s "$T/j1/results.csv" "$T/j2/results.csv"; then
  ok "resume reruns only the 2 missing/incomplete points, same CSV"
else bad "resume (exit $rc): $(grep -E 'points|incomplete' "$T/resume.err" | tr '\n' ' ')"; fi
# A changed sweep file invalidates the points whose configuration changed.
sed 's/1MiB..4MiB\*2/1MiB,2MiB,8MiB/' "$T/s.ini" >"$T/s2.ini"
"$REPLAY" --sweep "$T/s2.ini" --jobs 2 --out "$T/j2" "$T/va.gtrace" 2>"$T/changed.err"; rc=$?
if [ $rc = 0 ] && grep -q "6 of 6 points: 2 run, 4 reused" "$T/changed.err"; then ok "resume reruns points whose configuration changed"
else bad "changed sweep (exit $rc): $(grep points "$T/changed.err")"; fi

# Bad sweep files: exit 2, one line naming file:line and key; nothing runs.
check_bad() { # name, ini text, expected text
  printf '%b' "$2" >"$T/$1.ini"
  "$REPLAY" --sweep "$T/$1.ini" --out "$T/bad-$1" "$T/va.gtrace" >"$T/$1.out" 2>"$T/$1.err"; local rc=$?
  if [ $rc = 2 ] && [ "$(wc -l <"$T/$1.err")" = 1 ] && grep -qF "$3" "$T/$1.err" && [ ! -e "$T/bad-$1" ]; then
    ok "bad sweep file ($1): $(cat "$T/$1.err")"
  else bad "bad sweep file ($1), exit $rc: $(head -n 3 "$T/$1.err" | tr '\n' ' ')"; fi
}
check_bad key '[sweep]\nbase = r9nano\n[params]\nl2.sise = 1MiB,2MiB\n' \
  "$T/key.ini:4: unknown parameter 'l2.sise' (did you mean 'l2.size'?)"
check_bad value '[sweep]\nbase = r9nano\n[params]\nl2.size = 1MiB\nl2.latency = 50cycles, 2furlongs\n' \
  "$T/value.ini:5: l2.latency = '2furlongs': expected a latency"
check_bad range '[sweep]\nbase = r9nano\n[params]\nlink.bandwidth = 16GB/s..128MB/s*2\n' \
  "$T/range.ini:4: link.bandwidth = 16GB/s..128MB/s*2: range '16GB/s..128MB/s*2': both endpoints must use the same unit"
check_bad preset '[sweep]\nbase = r9nano, nosuch\n' "$T/preset.ini:2: base preset 'nosuch' not found"
check_bad point '[sweep]\nbase = r9nano\n[params]\nl2.size = 2MiB,3000KiB\n' "point 1 (topo=r9nano l2.size=3000KiB)"

# GPU-count sweep over two topologies (cross product) and its plot.
cat >"$T/g.ini" <<'EOF'
[sweep]
base = u-mgpu, d-mgpu
mode = cross
gpus = 1,2
EOF
if "$REPLAY" --sweep "$T/g.ini" --out "$T/g" "$T/va.gtrace" 2>"$T/g.err" &&
   [ "$(cut -d, -f2,3 "$T/g/results.csv" | tail -n +2 | tr '\n' ' ')" = "u-mgpu,1 u-mgpu,2 d-mgpu,1 d-mgpu,2 " ]; then
  ok "GPU-count sweep over u-mgpu and d-mgpu"
else bad "GPU-count sweep: $(tail -n 2 "$T/g.err" | tr '\n' ' ')"; fi
if command -v gnuplot >/dev/null; then
  if bash tools/sweep-plot.sh "$T/g/results.csv" "$T/g.svg" >/dev/null 2>"$T/plot.err" && grep -q "speedup vs GPU count" "$T/g.svg" &&
     bash tools/sweep-plot.sh "$T/j1/results.csv" "$T/j1.svg" --x l2.size --y cycles >/dev/null 2>>"$T/plot.err" &&
     grep -q "cycles vs l2.size" "$T/j1.svg"; then ok "sweep-plot.sh draws speedup and parameter plots"
  else bad "sweep-plot.sh: $(head -n 2 "$T/plot.err" | tr '\n' ' ')"; fi
else echo "  skip sweep-plot.sh (no gnuplot)"; fi

# A sampled point beside a full one (sample.enable = 0,1): vectoradd at 4 Mi
# elements (16,384 workgroups: its one kernel is sampled at the workgroup
# level). The sampled row counts the skipped instructions in `instructions`
# (the same as the full row's), says how many it skipped and gives a bound.
if "$EMU" --quiet --record "$T/va4.gtrace" -- "$prog" 4194304 >"$T/rec4.out" 2>&1 && grep -q PASS "$T/rec4.out"; then
  printf '[sweep]\nbase = r9nano\n[params]\nsample.enable = 0,1\n' >"$T/smp.ini"
  if "$REPLAY" --sweep "$T/smp.ini" --out "$T/smp" "$T/va4.gtrace" 2>"$T/smp.err"; then
    c=$T/smp/results.csv
    # columns: 4 sample.enable, 11 instructions, 18 sampled_kernels, 19 skipped_instructions, 20 kernel_time_bound_ps
    if [ "$(head -n1 "$c" | cut -d, -f18-20)" = "sampled_kernels,skipped_instructions,kernel_time_bound_ps" ] &&
       awk -F, 'NR == 2 { full = $11; if ($4 != 0 || $18 != 0 || $19 != 0 || $20 != 0) exit 1 }
                NR == 3 { if ($4 != 1 || $11 != full || $18 != 1 || $19 <= 0 || $19 >= $11 || $20 <= 0) exit 1 }
                END { exit NR != 3 }' "$c"; then
      ok "sampled point: $(sed -n 3p "$c" | cut -d, -f11,18-20) (instructions, sampled kernels, skipped, bound ps) beside the full one"
    else bad "sampled sweep CSV: $(cat "$c" | tr '\n' ' ')"; fi
  else bad "sampled sweep: $(tail -n 2 "$T/smp.err" | tr '\n' ' ')"; fi
else bad "record vectoradd 4194304: $(tail -n 2 "$T/rec4.out" | tr '\n' ' ')"; fi

# MPI: 2 ranks, one job each, same CSV as the single-process run.
if ! command -v mpirun >/dev/null; then
  echo "  skip MPI sweep: mpirun not found (Debian package openmpi-bin)"
elif ! ldd "$REPLAY" 2>/dev/null | grep -q libmpi; then
  echo "  skip MPI sweep: $REPLAY was built without MPI (no mpicc at build time)"
else
  mpirun --oversubscribe --allow-run-as-root -np 2 "$REPLAY" --sweep "$T/s.ini" --jobs 1 --out "$T/mpi" "$T/va.gtrace" \
    >"$T/mpi.out" 2>"$T/mpi.err"; rc=$?
  if [ $rc = 0 ] && cmp -s "$T/j1/results.csv" "$T/mpi/results.csv" &&
     grep -q "sweep rank 0: 3 of 6 points: 3 run" "$T/mpi.err" && grep -q "sweep rank 1: 3 of 6 points: 3 run" "$T/mpi.err"; then
    ok "mpirun -np 2: 3 points per rank, same CSV as one process"
  else bad "mpirun -np 2 (exit $rc): $(grep -v '^sweep rank .: \[' "$T/mpi.err" | head -n 4 | tr '\n' ' ')"; fi
fi

echo "sweep: $pass passed, $fail failed"
[ $fail = 0 ]
