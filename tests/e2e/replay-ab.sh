#!/usr/bin/env bash
# benchmarks/replay_ab.py, the interleaved A/B timing of two mgpu-replay
# builds: the same build against itself passes with identical stats JSON and
# prints a pair line per run and the ratios; a B that replays another
# configuration (--b-arg) is reported as differing; without --b-arg or
# --allow-diff a difference fails (exit 1) with a one-line message; a replay
# that fails is named, with exit 1; bad usage exits 2. benchmarks/noise_floor.py
# (kernel times with one latency 1 ps longer) prints a line per latency and the
# floor; a key that is no latency exits 2, a failing baseline 1.
# benchmarks/emu_ab.py, the same for two gcn3-emu runs of a program: pair
# lines and wall/CPU ratios, an option on one side only (--b-arg --record),
# a failing run named with exit 1, bad usage exit 2.
# Prints one "ok/FAIL name" line per check; exits non-zero on any failure.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
BENCH=${BENCH:-$BUILD/bench}
[ -x "$BENCH/vectoradd" ] || BENCH=build/bench
OUT=$BUILD/e2e-replay-ab
mkdir -p "$OUT"
export MGPU_REPLAY_CONFIGS=${MGPU_REPLAY_CONFIGS:-replay/configs}
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
for bin in "$EMU" "$REPLAY" "$BENCH/vectoradd"; do
  [ -x "$bin" ] || { echo "  FAIL replay-ab: $bin missing (make deps; make BUILD=$BUILD all programs)"; exit 1; }
done
AB="python3 benchmarks/replay_ab.py"
T=$OUT/va.gtrace
"$EMU" --record "$T" -- "$BENCH/vectoradd" 4096 > "$OUT/rec.log" 2>&1 || { bad "record vectoradd 4096"; exit 1; }

$AB -n 2 "$REPLAY" "$REPLAY" "$T" > "$OUT/same.txt" 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c '^pair [12]: old .* s, new .* s, new/old ' "$OUT/same.txt")" = 2 ] &&
   grep -q '^new/old: median of pairs [0-9.]* (range ' "$OUT/same.txt" && grep -qx 'stats JSON: identical' "$OUT/same.txt"; then
  ok "same build twice: 2 pairs, ratios, identical JSON"
else
  bad "same build twice (rc $rc): $(tr '\n' '|' < "$OUT/same.txt")"
fi

$AB -n 1 --b-arg=--set --b-arg=l2.size=1MiB "$REPLAY" "$REPLAY" "$T" > "$OUT/barg.txt" 2>&1; rc=$?
[ $rc = 0 ] && grep -qx 'stats JSON: differ' "$OUT/barg.txt" && ok "--b-arg l2.size=1MiB: JSON reported as differing, exit 0" \
  || bad "--b-arg (rc $rc): $(tr '\n' '|' < "$OUT/barg.txt")"

# a B that moves results without saying so: the same difference through a
# wrapper that adds the --set itself
W=$OUT/replay-l2-1mib
printf '#!/bin/sh\nexec "%s" --set l2.size=1MiB "$@"\n' "$(cd "$(dirname "$REPLAY")" && pwd)/$(basename "$REPLAY")" > "$W"
chmod +x "$W"
$AB -n 1 "$REPLAY" "$W" "$T" > "$OUT/diff.txt" 2> "$OUT/diff.err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l < "$OUT/diff.err")" = 1 ] && grep -q "stats JSON differ" "$OUT/diff.err" \
  && ok "results moved: exit 1, one line: $(cat "$OUT/diff.err")" || bad "results moved (rc $rc): $(cat "$OUT/diff.err")"
$AB -n 1 --allow-diff "$REPLAY" "$W" "$T" > /dev/null 2>&1 && ok "--allow-diff: exit 0" || bad "--allow-diff: exit $?"

head -c 3000 "$T" > "$OUT/cut.gtrace"
$AB -n 1 "$REPLAY" "$REPLAY" "$OUT/cut.gtrace" > /dev/null 2> "$OUT/fail.err"; rc=$?
[ $rc = 1 ] && grep -q "^replay_ab: .*mgpu-replay: exit status " "$OUT/fail.err" \
  && ok "a failing replay is named: $(head -c 160 "$OUT/fail.err")" || bad "failing replay (rc $rc): $(cat "$OUT/fail.err")"

$AB -n 0 "$REPLAY" "$REPLAY" "$T" > /dev/null 2>&1; rc=$?
[ $rc = 2 ] && ok "-n 0: usage error, exit 2" || bad "-n 0: exit $rc"
$AB "$REPLAY" "$REPLAY" "$OUT/none.gtrace" > /dev/null 2>&1; rc=$?
[ $rc = 2 ] && ok "missing trace: usage error, exit 2" || bad "missing trace: exit $rc"

# benchmarks/noise_floor.py on the same trace: one line per perturbed latency
# (1 ps longer than the configuration's), then the noise floor; the L2 made
# 1 MiB by a wrapper moves the baseline, not the perturbation's
NF="python3 benchmarks/noise_floor.py --replay $REPLAY"
$NF --param noc.latency --param l1s.latency "$T" --topo r9nano > "$OUT/nf.txt" 2>&1; rc=$?
if [ $rc = 0 ] && grep -q '^  noc.latency = 4cycles + 1 ps: kernel time [-+][0-9.]*%, worst kernel [0-9.]*% (kernel 0, ' "$OUT/nf.txt" &&
   grep -q '^  l1s.latency = 20cycles + 1 ps: ' "$OUT/nf.txt" && grep -q '^noise floor: kernel time [0-9.]*%, a single kernel [0-9.]*%$' "$OUT/nf.txt"; then
  ok "noise_floor: $(tail -n 1 "$OUT/nf.txt")"
else
  bad "noise_floor (rc $rc): $(tr '\n' '|' < "$OUT/nf.txt")"
fi
$NF --param l1v.size "$T" > /dev/null 2> "$OUT/nf-bad.err"; rc=$?
[ $rc = 2 ] && grep -q "l1v.size: not a latency" "$OUT/nf-bad.err" && ok "noise_floor on a size: exit 2, $(cat "$OUT/nf-bad.err")" \
  || bad "noise_floor on a size (rc $rc): $(cat "$OUT/nf-bad.err")"
$NF "$OUT/cut.gtrace" > /dev/null 2> "$OUT/nf-fail.err"; rc=$?
[ $rc = 1 ] && grep -q "^noise_floor: baseline: exit status " "$OUT/nf-fail.err" \
  && ok "noise_floor on a cut trace: exit 1, $(head -c 120 "$OUT/nf-fail.err")" || bad "noise_floor on a cut trace (rc $rc): $(cat "$OUT/nf-fail.err")"

EAB="python3 benchmarks/emu_ab.py --emu $EMU"
$EAB -n 2 -- "$BENCH/vectoradd" 4096 > "$OUT/emu-same.txt" 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c '^pair [12]: A .* s (.* CPU), B .* s (.* CPU), B/A ' "$OUT/emu-same.txt")" = 2 ] &&
   grep -q '^B/A wall: median of pairs [0-9.]* (range ' "$OUT/emu-same.txt" &&
   grep -q '^B/A CPU: median of pairs [0-9.]* (range ' "$OUT/emu-same.txt"; then
  ok "emu_ab, the same run twice: 2 pairs, wall and CPU ratios"
else
  bad "emu_ab same (rc $rc): $(tr '\n' '|' < "$OUT/emu-same.txt")"
fi
rm -f "$OUT/emu-b.gtrace"
$EAB -n 1 --b-arg=--record --b-arg="$OUT/emu-b.gtrace" -- "$BENCH/vectoradd" 4096 > /dev/null 2>&1; rc=$?
[ $rc = 0 ] && [ -s "$OUT/emu-b.gtrace" ] && ok "emu_ab --b-arg --record: B recorded a trace" \
  || bad "emu_ab --b-arg (rc $rc)"
$EAB -n 1 -- "$OUT/no-such-program" > /dev/null 2> "$OUT/emu-fail.err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l < "$OUT/emu-fail.err")" = 1 ] && grep -q "^emu_ab: .*exit status " "$OUT/emu-fail.err" \
  && ok "emu_ab, a failing run: exit 1, $(head -c 120 "$OUT/emu-fail.err")" || bad "emu_ab failing run (rc $rc): $(cat "$OUT/emu-fail.err")"
$EAB -n 0 -- "$BENCH/vectoradd" > /dev/null 2>&1; rc=$?
[ $rc = 2 ] && ok "emu_ab -n 0: usage error, exit 2" || bad "emu_ab -n 0: exit $rc"
$EAB > /dev/null 2>&1; rc=$?
[ $rc = 2 ] && ok "emu_ab without a program: usage error, exit 2" || bad "emu_ab without a program: exit $rc"

echo "replay-ab: $pass passed, $fail failed"
[ $fail = 0 ]
