#!/usr/bin/env bash
# End-to-end tests of forward progress in the emulator (issue 15 scope 1) and
# the deadlock report (issue 20): tests/programs/spin_wait.hip, built by
# mk/prog-samples.mk.
#
#  - workgroups that wait for other workgroups complete under gcn3-emu with
#    --threads 1 and 2 and print PASS: the last workgroup produces, the others
#    spin (with and without s_sleep); a compare-and-swap spin lock; a wave that
#    waits for an LDS flag another wave of its workgroup sets
#  - a wait nobody can end, and a producer that cannot become resident because
#    more workgroups wait than fit on the GPU, are reported as a deadlock within
#    the timeout: the launch returns hipErrorLaunchTimeOut (the program sees it
#    and prints PASS), stderr names the kernel, workgroups, pc and the polled
#    address, and a trace recorded meanwhile stays readable
#  - the producer is recorded and replayed on r9nano: the replay completes and
#    the device-to-host data checks clean (the polling loads still report the
#    recording's interleaving: that is issue 15 scopes 2-4)
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
TRACE=$BUILD/bin/gcn3-trace
BIN=$BUILD/programs/spin_wait
OUT=$BUILD/e2e-forward-progress
mkdir -p "$OUT"
export MGPU_REPLAY_CONFIGS=${MGPU_REPLAY_CONFIGS:-$(realpath replay/configs)}
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
why() { tail -n 3 "$@" 2>/dev/null | grep -v '^==>' | tr '\n' ' ' | cut -c1-300; }
for b in "$EMU" "$REPLAY" "$TRACE" "$BIN"; do
  [ -x "$b" ] || { echo "forward-progress: $b missing (make BUILD=$BUILD all programs)"; exit 1; }
done

echo "== waits that the hardware completes complete, any --threads"
for mode in producer sleepy lock lds; do
  for t in 1 2; do
    timeout 120 "$EMU" --quiet --threads $t -- "$BIN" $mode >"$OUT/$mode-$t.out" 2>"$OUT/$mode-$t.err"
    rc=$?
    if [ $rc = 0 ] && grep -q "PASS $mode" "$OUT/$mode-$t.out"; then ok "$mode, --threads $t"
    elif [ $rc = 124 ]; then bad "$mode, --threads $t: still running after 120 s (a hang)"
    else bad "$mode, --threads $t (exit $rc): $(why "$OUT/$mode-$t.err" "$OUT/$mode-$t.out")"; fi
  done
done

echo "== waits that can never end are reported as a deadlock"
for mode in deadlock toomany; do
  for t in 1 2; do
    tr=$OUT/$mode-$t.gtrace
    rm -f "$tr"
    timeout 120 "$EMU" --quiet --threads $t --record "$tr" -- "$BIN" $mode >"$OUT/$mode-$t.out" 2>"$OUT/$mode-$t.err"
    rc=$?
    if [ $rc = 124 ]; then bad "$mode, --threads $t: still running after 120 s (a hang)"; continue; fi
    if [ $rc != 0 ] || ! grep -q "PASS $mode" "$OUT/$mode-$t.out"; then
      bad "$mode, --threads $t (exit $rc): the program did not get hipErrorLaunchTimeOut: $(why "$OUT/$mode-$t.out" "$OUT/$mode-$t.err")"
      continue
    fi
    sum=$(grep -m1 "deadlock: none of the" "$OUT/$mode-$t.err")
    line=$(grep -m1 "gcn3-emu: deadlock: kernel .*wg ([0-9]*,0,0) wave 0 spins in a loop at pc 0x[0-9a-f]*; polls address 0x[0-9a-f]* (4 bytes" "$OUT/$mode-$t.err")
    if [ -z "$sum" ] || [ -z "$line" ]; then bad "$mode, --threads $t: no deadlock report naming wave, pc and address: $(why "$OUT/$mode-$t.err")"; continue; fi
    if [ $mode = toomany ] && ! echo "$sum" | grep -q "more cannot become resident.*at most [0-9]* workgroups of this kernel fit"; then
      bad "$mode: the report does not say that the waited-for workgroups cannot become resident: $sum"; continue
    fi
    if ! "$TRACE" stats "$tr" >"$OUT/$mode-$t.stats" 2>&1; then bad "$mode, --threads $t: the trace is not readable: $(why "$OUT/$mode-$t.stats")"; continue; fi
    ok "$mode, --threads $t: $(echo "$sum" | cut -c1-150)"
  done
done

echo "== a wait that never repeats its state ends only by --timeout"
tr=$OUT/endless.gtrace
rm -f "$tr"
start=$(date +%s)
timeout 60 "$EMU" --quiet --timeout 3 --record "$tr" -- "$BIN" endless >"$OUT/endless.out" 2>"$OUT/endless.err"
rc=$?; took=$(( $(date +%s) - start ))
if [ $rc = 124 ] && [ $took -le 20 ] && grep -q "still runs after --timeout 3 s" "$OUT/endless.err" \
   && grep -q "gcn3-emu: interrupted: kernel .*wg (0,0,0) wave 0 runs at pc 0x" "$OUT/endless.err" \
   && grep -q "interrupted by signal 15" "$OUT/endless.err" && "$TRACE" stats "$tr" >/dev/null 2>&1; then
  ok "endless: --timeout 3 stopped it after ${took} s with exit status 124, printed where the wave was, the trace is readable"
else bad "endless --timeout 3 (exit $rc after ${took} s): $(why "$OUT/endless.err")"; fi

echo "== the producer recorded and replayed"
tr=$OUT/producer.gtrace
if timeout 120 "$EMU" --quiet --threads 2 --record "$tr" -- "$BIN" producer >"$OUT/rec.out" 2>"$OUT/rec.err" && grep -q PASS "$OUT/rec.out"; then
  timeout 120 "$REPLAY" --topo r9nano --stats "$OUT/producer.json" "$tr" >"$OUT/replay.out" 2>"$OUT/replay.err"
  rc=$?
  d2h=$(sed -n 's/.*D2H blocks (\([0-9]*\) mismatches).*/\1/p' "$OUT/replay.out")
  # exit 1 is expected while the polling loads report the recorded interleaving
  if { [ $rc = 0 ] || [ $rc = 1 ]; } && [ "${d2h:-x}" = 0 ] && grep -q ' 0 trace-walk errors' "$OUT/replay.out"; then ok "producer replay r9nano: D2H 0 mismatches ($(grep -m1 '^total' "$OUT/replay.out" | sed 's/.*data check: //' | cut -c1-60))"
  else bad "producer replay r9nano (exit $rc): D2H mismatches '${d2h:-?}' $(why "$OUT/replay.err" "$OUT/replay.out")"; fi
else bad "producer record: $(why "$OUT/rec.err" "$OUT/rec.out")"; fi

echo "forward-progress: $pass passed, $fail failed"
[ $fail = 0 ]
