#!/usr/bin/env bash
# make bench: speed of emulation (1 and all threads, with and without
# recording), trace size, and replay speed per preset, for every benchmark
# program. Writes benchmarks/results/latest.md (and prints it).
# Wall-clock numbers: run on an otherwise idle machine.
set -euo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
OUT=$BUILD/benchrun
mkdir -p "$OUT" benchmarks/results
NCPU=$(nproc)
now() { date +%s.%N; }
# instructions summed over the per-kernel summary lines of gcn3-emu
instr() { grep -o '[0-9]* wavefront instructions' "$1" | awk '{s+=$1} END{print s+0}'; }
res=benchmarks/results/latest.md
{
echo "# Benchmark results ($(date -u +%Y-%m-%d), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
echo
echo "Emulation rate in M wavefront-instructions/s (wall time of the whole program, host part included)."
echo
echo "| program | wavefront instr | emu 1 thr (s) | emu $NCPU thr (s) | M instr/s 1 thr | M instr/s $NCPU thr | record $NCPU thr (s) | record overhead | trace bytes | B/instr | replay r9nano (s) | m-sgpu (s) | u-mgpu (s) | d-mgpu (s) | replay M instr/s (r9nano) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$res"
for prog in vectoradd reduction transpose; do
  bin=$BUILD/bench/$prog
  t0=$(now); "$EMU" --threads 1 -- "$bin" >/dev/null 2>"$OUT/$prog.t1.err"; t1=$(now)
  "$EMU" --threads "$NCPU" -- "$bin" >/dev/null 2>"$OUT/$prog.tn.err"; t2=$(now)
  "$EMU" --threads "$NCPU" --record "$OUT/$prog.gtrace" -- "$bin" >/dev/null 2>"$OUT/$prog.rec.err"; t3=$(now)
  n=$(instr "$OUT/$prog.t1.err")
  bytes=$(stat -c %s "$OUT/$prog.gtrace")
  rt=()
  for topo in r9nano m-sgpu u-mgpu d-mgpu; do
    a=$(now); "$REPLAY" --quiet --topo $topo "$OUT/$prog.gtrace" >/dev/null; b=$(now)
    rt+=("$(awk "BEGIN{print $b - $a}")")
  done
  awk -v p=$prog -v n=$n -v t1=$(awk "BEGIN{print $t1 - $t0}") -v tn=$(awk "BEGIN{print $t2 - $t1}") \
      -v tr=$(awk "BEGIN{print $t3 - $t2}") -v by=$bytes -v r0=${rt[0]} -v r1=${rt[1]} -v r2=${rt[2]} -v r3=${rt[3]} \
      'BEGIN{printf "| %s | %d | %.3f | %.3f | %.2f | %.2f | %.3f | %.2fx | %d | %.2f | %.3f | %.3f | %.3f | %.3f | %.2f |\n",
             p, n, t1, tn, n/t1/1e6, n/tn/1e6, tr, tr/tn, by, by/n, r0, r1, r2, r3, n/r0/1e6}' >>"$res"
done
cat "$res"
