#!/usr/bin/env bash
# make bench: speed of emulation (1 and all threads, with and without
# recording), trace size, and replay speed per preset, for every benchmark
# program. Writes benchmarks/results/latest.md (and prints it).
# Each timing is the best of 3 runs; run on an otherwise idle machine.
set -euo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
OUT=$BUILD/benchrun
mkdir -p "$OUT" benchmarks/results
NCPU=$(nproc)
now() { date +%s.%N; }
# sum over the per-kernel summary lines of gcn3-emu (stderr)
instr() { grep -o '[0-9]* wavefront instructions' "$1" | awk '{s+=$1} END{print s+0}'; }
kernel_s() { grep -o '[0-9.]* ms, ' "$1" | awk '{s+=$1} END{printf "%.4f", s/1000}'; }
min() { printf '%s\n' "$@" | sort -g | head -n1; }

# best of 3 of: whole-program wall seconds and summed kernel seconds
run_emu() { # threads record(0/1) prog -> sets WALL KSEC
  local t=$1 rec=$2 prog=$3 w=() k=() i
  for i in 1 2 3; do
    local a b; a=$(now)
    if [ "$rec" = 1 ]; then
      "$EMU" --threads "$t" --record "$OUT/$prog.gtrace" -- "$BUILD/bench/$prog" >/dev/null 2>"$OUT/$prog.err"
    else
      "$EMU" --threads "$t" -- "$BUILD/bench/$prog" >/dev/null 2>"$OUT/$prog.err"
    fi
    b=$(now)
    w+=("$(awk "BEGIN{print $b - $a}")"); k+=("$(kernel_s "$OUT/$prog.err")")
  done
  WALL=$(min "${w[@]}"); KSEC=$(min "${k[@]}")
}

res=benchmarks/results/latest.md
{
echo "# Benchmark results ($(date -u +%Y-%m-%d), $NCPU CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
echo
echo "Emulation: kernel time summed over the per-kernel lines of gcn3-emu (host code excluded), best of 3;"
echo "rates in M wavefront-instructions/s. Recording overhead = program wall time with --record / without"
echo "(same thread count; includes compressing and writing the trace). Replay: wall seconds of mgpu-replay."
echo
echo "| program | wavefront instr | kernel s, 1 thr | kernel s, $NCPU thr | M instr/s 1 thr | M instr/s $NCPU thr | scaling | wall s, $NCPU thr | wall s, $NCPU thr + record | record overhead | trace bytes | B/instr (all) | replay r9nano s | m-sgpu s | u-mgpu s | d-mgpu s | replay M instr/s (r9nano) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$res"
for prog in vectoradd reduction transpose vectoradd-O0 reduction-O0 transpose-O0; do
  run_emu 1 0 $prog; k1=$KSEC
  n=$(instr "$OUT/$prog.err")
  run_emu "$NCPU" 0 $prog; kn=$KSEC; wn=$WALL
  run_emu "$NCPU" 1 $prog; wr=$WALL
  bytes=$(stat -c %s "$OUT/$prog.gtrace")
  rt=()
  for topo in r9nano m-sgpu u-mgpu d-mgpu; do
    a=$(now); "$REPLAY" --quiet --topo $topo "$OUT/$prog.gtrace" >/dev/null; b=$(now)
    rt+=("$(awk "BEGIN{print $b - $a}")")
  done
  awk -v p=$prog -v n=$n -v k1=$k1 -v kn=$kn -v wn=$wn -v wr=$wr -v by=$bytes \
      -v r0=${rt[0]} -v r1=${rt[1]} -v r2=${rt[2]} -v r3=${rt[3]} \
      'BEGIN{printf "| %s | %d | %.3f | %.3f | %.1f | %.1f | %.2fx | %.3f | %.3f | %.2fx | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
             p, n, k1, kn, n/k1/1e6, n/kn/1e6, k1/kn, wn, wr, wr/wn, by, by/n, r0, r1, r2, r3, n/r0/1e6}' >>"$res"
done
cat "$res"
