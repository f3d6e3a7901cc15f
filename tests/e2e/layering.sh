#!/usr/bin/env bash
# The include graph follows the rooms' arrows (issue 14; tools/check-layering.sh):
# the tree passes, and planted violations are caught: replay including an
# emulator header, a tool including another room's *_internal.h, the trace
# format including the target, the target including the timing model.
set -uo pipefail
cd "$(dirname "$0")/../.."
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
if out=$(bash tools/check-layering.sh 2>&1); then ok "tree: $out"; else bad "tree: $out"; fi
plant() { # file include expected-words
  mkdir -p "$(dirname "$1")"
  printf '#include "%s"\n' "$2" > "$1"
  out=$(bash tools/check-layering.sh "$1" 2>&1); rc=$?
  rm -f "$1"
  if [ $rc = 1 ] && echo "$out" | grep -q "$3"; then ok "planted $1 -> $2 caught: $(echo "$out" | head -n 1 | cut -c1-100)"
  else bad "planted $1 -> $2 not caught (exit $rc): $out"; fi
}
plant replay/zz-layering-selftest.c emu/isa/gcn_sem.h "replay must not depend on emu"
plant tools/zz-layering-selftest.c traceformat/trc_internal.h "an internal header of traceformat"
plant traceformat/zz-layering-selftest.c gcn/gcn_isa.h "traceformat must not depend on gcn"
plant gcn/zz-layering-selftest.c replay/rp_sim.h "gcn must not depend on replay"
echo "layering: $pass ok, $fail failed"
[ $fail = 0 ]
