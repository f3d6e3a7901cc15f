#!/usr/bin/env bash
# The benchmark programs built at -O0, -O1, -O2 and -O3 (Makefile: $(BUILD)/bench/NAME,
# NAME-O0, NAME-O1, NAME-O3) pass under gcn3-emu: every optimisation level's
# instruction mix runs (issue 3, "Done when"). Each run must print PASS and exit 0.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
OUT=$BUILD/e2e/isa-opt
mkdir -p "$OUT"
pass=0; fail=0
# smaller problems at -O0/-O1 (several times the instructions of -O2/-O3).
# vectoradd-O0 is also recorded with and without --scratch-data: without, the
# trace is smaller, the replay's kernel time is the same and its private
# loads are counted as not checked.
args_for() {
  case $1-$2 in
    vectoradd-O0|vectoradd-O1) echo 131072 ;;
    reduction-O0|reduction-O1) echo 262144 ;;
    transpose-O0|transpose-O1) echo "512 512" ;;
  esac
}
for prog in vectoradd reduction transpose; do
  for opt in O0 O1 O2 O3; do
    bin=$BUILD/bench/$prog-$opt
    [ $opt = O2 ] && bin=$BUILD/bench/$prog
    name=$prog-$opt
    if [ ! -x "$bin" ]; then
      fail=$((fail+1)); echo "  FAIL $name: $bin is not built (make BUILD=$BUILD programs)"; continue
    fi
    "$EMU" --quiet -- "$bin" $(args_for $prog $opt) >"$OUT/$name.out" 2>"$OUT/$name.err"
    rc=$?
    if [ $rc = 0 ] && grep -q PASS "$OUT/$name.out"; then
      pass=$((pass+1)); echo "  ok   $name"
    else
      fail=$((fail+1))
      echo "  FAIL $name (exit $rc): $(tail -n 3 "$OUT/$name.err" "$OUT/$name.out" | tr '\n' ' ')"
    fi
  done
done
echo "== an -O0 program's private memory (scratch): values recorded only with --scratch-data (issue 16 scope 3)"
REPLAY=$BUILD/bin/mgpu-replay
bin=$BUILD/bench/vectoradd-O0
if [ -x "$bin" ] && [ -x "$REPLAY" ]; then
  "$EMU" --quiet --threads 2 --record "$OUT/va0-ns.gtrace" -- "$bin" 131072 >/dev/null 2>&1 &&
  "$EMU" --quiet --threads 2 --scratch-data --record "$OUT/va0-sd.gtrace" -- "$bin" 131072 >/dev/null 2>&1 &&
  "$REPLAY" --topo r9nano --stats "$OUT/va0-ns.json" "$OUT/va0-ns.gtrace" >"$OUT/va0-ns.txt" 2>&1 &&
  "$REPLAY" --topo r9nano --stats "$OUT/va0-sd.json" "$OUT/va0-sd.gtrace" >"$OUT/va0-sd.txt" 2>&1
  rc=$?
  res=$(python3 - "$OUT/va0-ns.gtrace" "$OUT/va0-sd.gtrace" "$OUT/va0-ns.json" "$OUT/va0-sd.json" <<'PY'
import json, os, sys
ns, sd = os.path.getsize(sys.argv[1]), os.path.getsize(sys.argv[2])
a, b = (json.load(open(p)) for p in sys.argv[3:5])
ca, cb = a["check"], b["check"]
t = lambda j: sum(k["end_ps"] - k["start_ps"] for k in j["kernels"])
ok = ns < 0.6 * sd and ca["loads_unrecorded"] > 0 and cb["loads_unrecorded"] == 0 and t(a) == t(b)
ok = ok and ca["load_mismatches"] == 0 and cb["load_mismatches"] == 0 and ca["d2h_mismatches"] == 0 and ca["d2h_checked"] > 0
print("trace %d bytes without scratch values, %d with; %d scratch load lanes not checked; same kernel time (%d ps)"
      % (ns, sd, ca["loads_unrecorded"], t(a)))
sys.exit(0 if ok else 1)
PY
  )
  prc=$?
  if [ $rc = 0 ] && [ $prc = 0 ] && [ -n "$res" ] && ! grep -q "^mismatch" "$OUT/va0-ns.txt"; then
    pass=$((pass+1)); echo "  ok   vectoradd-O0: $res"
  else fail=$((fail+1)); echo "  FAIL vectoradd-O0 scratch values: ${res:-record or replay failed: $(tail -n 2 "$OUT/va0-ns.txt" | tr '\n' ' ')}"; fi
else fail=$((fail+1)); echo "  FAIL $bin or $REPLAY is not built"; fi
echo "== --load-values hash: plain loads record a hash of their values (trace 2.2, issue 16 scope 3)"
TRACE=$BUILD/bin/gcn3-trace
bin=$BUILD/bench/reduction
if [ -x "$bin" ] && [ -x "$REPLAY" ]; then
  # (--host-image off: the input loads would otherwise carry neither values nor hashes)
  "$EMU" --quiet --threads 2 --host-image off --record "$OUT/red-full.gtrace" -- "$bin" >/dev/null 2>&1 &&
  "$EMU" --quiet --threads 2 --host-image off --load-values hash --record "$OUT/red-hash.gtrace" -- "$bin" >/dev/null 2>&1 &&
  "$TRACE" verify "$OUT/red-hash.gtrace" >"$OUT/red-hash.verify" 2>&1 &&
  "$REPLAY" --topo r9nano --stats "$OUT/red-full.json" "$OUT/red-full.gtrace" >"$OUT/red-full.txt" 2>&1 &&
  "$REPLAY" --topo r9nano --stats "$OUT/red-hash.json" "$OUT/red-hash.gtrace" >"$OUT/red-hash.txt" 2>&1 &&
  "$REPLAY" --topo u-mgpu --stats "$OUT/red-hash-u.json" "$OUT/red-hash.gtrace" >"$OUT/red-hash-u.txt" 2>&1
  rc=$?
  res=$(python3 - "$OUT/red-full.gtrace" "$OUT/red-hash.gtrace" "$OUT/red-full.json" "$OUT/red-hash.json" "$OUT/red-hash-u.json" <<'PY'
import json, os, sys
full, hashed = os.path.getsize(sys.argv[1]), os.path.getsize(sys.argv[2])
a, b, u = (json.load(open(p)) for p in sys.argv[3:6])
ca, cb, cu = a["check"], b["check"], u["check"]
t = lambda j: sum(k["end_ps"] - k["start_ps"] for k in j["kernels"])
ok = hashed < 0.9 * full and t(a) == t(b) and "loads_hashed" not in ca and cb.get("loads_hashed", 0) > 0
ok = ok and ca["loads_checked"] == cb["loads_checked"] and ca["lds_checked"] == cb["lds_checked"]
ok = ok and all(c["load_mismatches"] == 0 and c["lds_mismatches"] == 0 and c["d2h_mismatches"] == 0 for c in (ca, cb, cu))
print("trace %d bytes with load hashes, %d with values; %d of %d load lanes checked by hash, clean on r9nano and "
      "u-mgpu; same kernel time (%d ps)" % (hashed, full, cb.get("loads_hashed", 0), cb["loads_checked"] + cb["lds_checked"], t(b)))
sys.exit(0 if ok else 1)
PY
  )
  prc=$?
  if [ $rc = 0 ] && [ $prc = 0 ] && [ -n "$res" ] && grep -q "^hashed: " "$OUT/red-hash.txt"; then
    pass=$((pass+1)); echo "  ok   reduction: $res"
  else fail=$((fail+1)); echo "  FAIL reduction --load-values hash: ${res:-record, verify or replay failed (exit $rc): $(tail -n 2 "$OUT/red-hash.txt" "$OUT/red-hash.verify" 2>/dev/null | tr '\n' ' ')}"; fi
  # a bad value is refused in one line, before the program runs
  "$EMU" --load-values fast -- "$bin" >"$OUT/lv-bad.out" 2>"$OUT/lv-bad.err"
  rc=$?
  if [ $rc = 2 ] && head -n 1 "$OUT/lv-bad.err" | grep -q "expected full or hash" && ! grep -q PASS "$OUT/lv-bad.out"; then
    pass=$((pass+1)); echo "  ok   --load-values fast refused: $(head -n 1 "$OUT/lv-bad.err")"
  else fail=$((fail+1)); echo "  FAIL --load-values fast: exit $rc: $(head -n 2 "$OUT/lv-bad.err" | tr '\n' ' ')"; fi
  GCN3EMU_LOAD_VALUES=fast "$EMU" -- "$bin" >"$OUT/lv-env.out" 2>"$OUT/lv-env.err"
  rc=$?
  if [ $rc != 0 ] && grep -q "GCN3EMU_LOAD_VALUES=fast: expected full or hash" "$OUT/lv-env.err"; then
    pass=$((pass+1)); echo "  ok   GCN3EMU_LOAD_VALUES=fast refused (exit $rc)"
  else fail=$((fail+1)); echo "  FAIL GCN3EMU_LOAD_VALUES=fast: exit $rc: $(head -n 2 "$OUT/lv-env.err" | tr '\n' ' ')"; fi
else fail=$((fail+1)); echo "  FAIL $bin or $REPLAY is not built"; fi
echo "== --lds-values none: LDS accesses record their addresses only (trace 2.3, issue 16 scope 3)"
bin=$BUILD/bench/reduction
if [ -x "$bin" ] && [ -x "$REPLAY" ]; then
  "$EMU" --quiet --threads 2 --record "$OUT/red-lfull.gtrace" -- "$bin" >/dev/null 2>&1 &&
  "$EMU" --quiet --threads 2 --lds-values none --record "$OUT/red-lnone.gtrace" -- "$bin" >/dev/null 2>&1 &&
  "$TRACE" verify "$OUT/red-lnone.gtrace" >"$OUT/red-lnone.verify" 2>&1 &&
  "$TRACE" info "$OUT/red-lnone.gtrace" >"$OUT/red-lnone.info" 2>&1 &&
  "$REPLAY" --topo r9nano --stats "$OUT/red-lfull.json" "$OUT/red-lfull.gtrace" >"$OUT/red-lfull.txt" 2>&1 &&
  "$REPLAY" --topo r9nano --stats "$OUT/red-lnone.json" "$OUT/red-lnone.gtrace" >"$OUT/red-lnone.txt" 2>&1
  rc=$?
  res=$(python3 - "$OUT/red-lfull.gtrace" "$OUT/red-lnone.gtrace" "$OUT/red-lfull.json" "$OUT/red-lnone.json" <<'PY'
import json, os, sys
full, none = os.path.getsize(sys.argv[1]), os.path.getsize(sys.argv[2])
a, b = (json.load(open(p)) for p in sys.argv[3:5])
ca, cb = a["check"], b["check"]
t = lambda j: sum(k["end_ps"] - k["start_ps"] for k in j["kernels"])
# the same timing (the LDS's values never steer it), the global loads checked alike, the LDS not at all
ok = none < 0.7 * full and t(a) == t(b) and a["kernels"] == b["kernels"]
ok = ok and "lds_values_recorded" not in ca and cb.get("lds_values_recorded") is False
ok = ok and ca["lds_checked"] > 0 and cb["lds_checked"] == 0 and cb["lds_unchecked"] > 0
ok = ok and ca["loads_checked"] == cb["loads_checked"] and cb["load_mismatches"] == 0 and cb["d2h_mismatches"] == 0
print("trace %d bytes without LDS values, %d with; same kernels (%d ps); %d LDS loads checked with values, "
      "%d LDS accesses unchecked without" % (none, full, t(b), ca["lds_checked"], cb["lds_unchecked"]))
sys.exit(0 if ok else 1)
PY
  )
  prc=$?
  if [ $rc = 0 ] && [ $prc = 0 ] && [ -n "$res" ] && grep -q "^not checked: the LDS" "$OUT/red-lnone.txt" &&
     ! grep -q "^not checked: the LDS" "$OUT/red-lfull.txt" && grep -q "^lds values   none recorded" "$OUT/red-lnone.info"; then
    pass=$((pass+1)); echo "  ok   reduction: $res"
  else fail=$((fail+1)); echo "  FAIL reduction --lds-values none: ${res:-record, verify or replay failed (exit $rc): $(tail -n 2 "$OUT/red-lnone.txt" "$OUT/red-lnone.verify" 2>/dev/null | tr '\n' ' ')}"; fi
  "$EMU" --lds-values hash -- "$bin" >"$OUT/ldv-bad.out" 2>"$OUT/ldv-bad.err"
  rc=$?
  if [ $rc = 2 ] && head -n 1 "$OUT/ldv-bad.err" | grep -q "expected full or none" && ! grep -q PASS "$OUT/ldv-bad.out"; then
    pass=$((pass+1)); echo "  ok   --lds-values hash refused: $(head -n 1 "$OUT/ldv-bad.err")"
  else fail=$((fail+1)); echo "  FAIL --lds-values hash: exit $rc: $(head -n 2 "$OUT/ldv-bad.err" | tr '\n' ' ')"; fi
  GCN3EMU_LDS_VALUES=some "$EMU" -- "$bin" >"$OUT/ldv-env.out" 2>"$OUT/ldv-env.err"
  rc=$?
  if [ $rc != 0 ] && grep -q "GCN3EMU_LDS_VALUES=some: expected full or none" "$OUT/ldv-env.err"; then
    pass=$((pass+1)); echo "  ok   GCN3EMU_LDS_VALUES=some refused (exit $rc)"
  else fail=$((fail+1)); echo "  FAIL GCN3EMU_LDS_VALUES=some: exit $rc: $(head -n 2 "$OUT/ldv-env.err" | tr '\n' ' ')"; fi
else fail=$((fail+1)); echo "  FAIL $bin or $REPLAY is not built"; fi
echo "isa-opt: $pass passed, $fail failed"
[ $fail = 0 ]
