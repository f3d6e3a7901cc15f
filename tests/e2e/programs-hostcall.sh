#!/usr/bin/env bash
# End-to-end tests of the device-side services served through the hostcall
# buffer (emu/hip/hip_hostcall.c, issue 4): device printf (exact output with one
# worker thread and with two: a kernel that waits on the host with s_sleep runs
# on one emulator thread; also an -O0 build), a failing device assert (the program must see
# hipErrorLaunchFailure, the runtime must name the kernel and print the
# assertion), device malloc/free (small slab blocks and >3 KiB host blocks);
# then each program is recorded and replayed on r9nano: the data the host
# copies back must check OK (loads of the hostcall buffer and of ockl's device
# heap are a known gap of the replay's data check, see below).
# Programs: tests/programs/{printf,assert,device_malloc}.hip, built by
# mk/prog-hostcall.mk. A missing program is a failure.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
TRACE=$BUILD/bin/gcn3-trace
PROGS=$BUILD/programs
OUT=$BUILD/e2e-hostcall
EXP=tests/programs/printf.expected
mkdir -p "$OUT"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
why() { tail -n 3 "$@" 2>/dev/null | grep -v '^==>' | tr '\n' ' '; }

for bin in "$EMU" "$REPLAY"; do
  [ -x "$bin" ] || { echo "programs-hostcall: $bin missing (make BUILD=$BUILD all)"; exit 1; }
done

have() {
  [ -x "$PROGS/$1" ] && return 0
  bad "$1: $PROGS/$1 missing (make BUILD=$BUILD programs)"
  return 1
}

# run NAME THREADS PROG: stdout/stderr into $OUT/NAME.{out,err}; sets rc
run() {
  timeout 120 "$EMU" --quiet --threads "$2" -- "$PROGS/$3" >"$OUT/$1.out" 2>"$OUT/$1.err"
  rc=$?
}

echo "== device printf"
for prog in printf printf-O0; do
  have $prog || continue
  for t in 1 2; do
    name=$prog-t$t
    run $name $t $prog
    if [ $rc != 0 ]; then
      bad "$name: exit status $rc: $(why "$OUT/$name.out" "$OUT/$name.err")"
    elif ! cmp -s "$OUT/$name.out" "$EXP"; then
      bad "$name: stdout differs from $EXP: $(diff "$EXP" "$OUT/$name.out" | head -4 | tr '\n' ' ')"
    else
      ok "$name: $(wc -l <"$OUT/$name.out") lines as expected"
    fi
  done
done

echo "== device assert"
if have assert; then
  run assert-t2 2 assert
  if [ $rc != 0 ] || ! grep -qx PASS "$OUT/assert-t2.out"; then
    bad "assert: exit status $rc: $(why "$OUT/assert-t2.out" "$OUT/assert-t2.err")"
  elif ! grep -q "assert.hip:13: .*check_positive.*: Device-side assertion \`v\[t\] > 0 && \"values must be positive\"' failed." "$OUT/assert-t2.err"; then
    bad "assert: the assertion message is missing from stderr: $(why "$OUT/assert-t2.err")"
  elif ! grep -q "kernel _Z14check_positivePKiPii.*s_trap 2" "$OUT/assert-t2.err" ||
       ! grep -q "kernel _Z14check_positivePKiPii stopped after a device-side message (assert): .*Device-side assertion" "$OUT/assert-t2.err"; then
    bad "assert: the launch failure does not name the kernel and the assertion: $(why "$OUT/assert-t2.err")"
  else
    ok "assert: hipErrorLaunchFailure, kernel and assertion named"
  fi
fi

echo "== device malloc/free"
if have device_malloc; then
  for t in 1 2; do
    run device_malloc-t$t $t device_malloc
    if [ $rc = 0 ] && grep -qx PASS "$OUT/device_malloc-t$t.out"; then
      ok "device_malloc-t$t"
    else
      bad "device_malloc-t$t: exit status $rc: $(why "$OUT/device_malloc-t$t.out" "$OUT/device_malloc-t$t.err")"
    fi
  done
fi

echo "== record and replay (r9nano, data check: hostcall-buffer loads adopted, heap loads order-dependent)"
for prog in printf assert device_malloc; do
  [ -x "$PROGS/$prog" ] || continue # reported above
  tr=$OUT/$prog.gtrace
  rm -f "$tr"
  timeout 120 "$EMU" --quiet --threads 2 --record "$tr" -- "$PROGS/$prog" >"$OUT/$prog-rec.out" 2>"$OUT/$prog-rec.err"
  rc=$?
  if [ $rc != 0 ] || ! grep -qx PASS "$OUT/$prog-rec.out"; then
    bad "$prog --record: exit status $rc: $(why "$OUT/$prog-rec.out" "$OUT/$prog-rec.err")"
    continue
  fi
  # the same records with one emulator thread (the kernels wait on the host)
  if timeout 120 "$EMU" --quiet --threads 1 --record "$OUT/$prog-1.gtrace" -- "$PROGS/$prog" >"$OUT/$prog-rec1.out" 2>&1 &&
     "$TRACE" dump "$tr" 2>&1 | grep -v '^event ' >"$tr.dump" &&
     "$TRACE" dump "$OUT/$prog-1.gtrace" 2>&1 | grep -v '^event ' >"$OUT/$prog-1.dump" && cmp -s "$tr.dump" "$OUT/$prog-1.dump"; then
    ok "$prog: the trace's records are identical for --threads 1 and 2"
  else bad "$prog: records for --threads 1 and 2 differ: $(diff "$tr.dump" "$OUT/$prog-1.dump" 2>&1 | head -n 2 | tr '\n' ' ' | cut -c1-200)"; fi
  timeout 170 "$REPLAY" --topo r9nano "$tr" >"$OUT/$prog-replay.out" 2>"$OUT/$prog-replay.err"
  rc=$?
  total=$(grep -m1 '^total:' "$OUT/$prog-replay.out")
  expl=$(grep -m1 '^explained' "$OUT/$prog-replay.out" | sed 's/^explained differences (not mismatches): //; s/ ([^()]*)//g')
  if [ $rc = 0 ]; then
    ok "$prog: recorded and replayed on r9nano, data check OK${expl:+ (explained: $expl)}"
  elif [ $prog = device_malloc ] && [ $rc = 1 ] && [[ $total == *"D2H blocks (0 mismatches), 0 trace-walk errors"* ]] \
       && grep -q '^awaits: .*, [1-9][0-9]* waits gave up' "$OUT/$prog-replay.out"; then
    # Known gap: ockl's device heap is a lock-free structure the replay does
    # not re-execute; in the model's order of workgroups a wait in it can take
    # a path where the value it waits for is never stored. The wait gives up
    # after sim.await_max_polls (a difference, exit 1), the rest replays. The
    # hostcall buffer's loads are adopted, the heap's order-dependent; what
    # the host copies back must match.
    ok "$prog: replayed on r9nano, D2H data OK; known gap: $(grep -m1 '^awaits' "$OUT/$prog-replay.out" | grep -o '[0-9]* waits gave up') in the device heap"
  else
    bad "$prog: mgpu-replay exit status $rc: $(grep -h -m3 -E 'mismatch|error|failed' "$OUT/$prog-replay.out" "$OUT/$prog-replay.err" | tr '\n' ' ')"
  fi
done

echo "programs-hostcall: $pass ok, $fail failed"
[ $fail = 0 ]
