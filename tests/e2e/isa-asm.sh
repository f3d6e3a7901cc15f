#!/usr/bin/env bash
# Issue 3: kernels written in GCN3 assembly (tests/asm/kernels.s, assembled by
# llvm-mc and linked by ld.lld inside the cmocka test 410-asm) run with known
# outputs, and faults reach a real HIP program as the error real HIP returns:
# s_trap -> hipErrorLaunchFailure, an access outside every allocation ->
# hipErrorIllegalAddress (tests/asm/hip-faults.hip, built by hipcc).
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
OUT=$BUILD/e2e/isa-asm
mkdir -p "$OUT"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }

t=$BUILD/tests/emu/410-asm
if [ -x "$t" ]; then
  if TEST_SRCDIR=. "$t" >"$OUT/410-asm.log" 2>&1; then ok "assembly kernels (410-asm)"
  else bad "assembly kernels: $(grep -E 'FAIL|ERROR|error' "$OUT/410-asm.log" | head -3 | tr '\n' ' ')"; fi
else
  bad "$t is not built (make BUILD=$BUILD $t)"
fi

prog=$OUT/hip-faults
if ${HIPCC:-hipcc} --offload-arch=gfx803 -O2 -o "$prog" tests/asm/hip-faults.hip >"$OUT/hipcc.log" 2>&1; then
  for mode in trap oob; do
    "$EMU" --quiet -- "$prog" $mode >"$OUT/fault-$mode.out" 2>"$OUT/fault-$mode.err"
    rc=$?
    if [ $rc -ge 128 ]; then bad "fault $mode: crashed (exit $rc)"
    elif [ $rc = 0 ] && grep -q PASS "$OUT/fault-$mode.out" && grep -q "k_$mode" "$OUT/fault-$mode.err" \
         && grep -q "wg (" "$OUT/fault-$mode.err" && grep -q "pc 0x" "$OUT/fault-$mode.err"; then
      ok "fault $mode: $(head -n 1 "$OUT/fault-$mode.out")"
    else
      bad "fault $mode (exit $rc): $(tail -n 2 "$OUT/fault-$mode.out" "$OUT/fault-$mode.err" | tr '\n' ' ')"
    fi
  done
else
  bad "hipcc could not build tests/asm/hip-faults.hip: $(tail -n 3 "$OUT/hipcc.log" | tr '\n' ' ')"
fi
echo "isa-asm: $pass passed, $fail failed"
[ $fail = 0 ]
