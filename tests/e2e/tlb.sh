#!/usr/bin/env bash
# Address translation end to end (issue 17): record tests/programs/page_stride
# (a page-local and a page-striding dependent chain of loads, one work-item)
# and replay it on r9nano with translation on, off, and with a longer walk.
# Checks: both replays' data checks are OK; the striding chain is measurably
# slower than the page-local one only with translation on and walks at every
# step; the extra time per step (translation on minus off) is what the
# walker's own statistics predict, the walk latency plus the L1 TLB lookup and
# the NoC round trip to the L2 TLB and its lookup (within 5%); and adding D
# cycles to tlb.walk_level_latency adds tlb.levels x D cycles per step (1%).
# Then the same trace on u-mgpu and d-mgpu (translation per GPU) with a clean
# data check; bad tlb.* values are refused in one line. Prints one "ok/FAIL" line per check; exits non-zero on a failure.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
OUT=$BUILD/e2e-tlb
mkdir -p "$OUT"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
STEPS=64
PROG=$BUILD/programs/page_stride
for bin in "$EMU" "$REPLAY" "$PROG"; do
  [ -x "$bin" ] || { echo "  FAIL tlb: $bin missing (make BUILD=$BUILD all programs)"; exit 1; }
done
TR=$OUT/ps.gtrace
if "$EMU" --quiet --record "$TR" -- "$PROG" $STEPS >"$OUT/rec.out" 2>"$OUT/rec.err" && grep -q PASS "$OUT/rec.out"; then
  ok "record page_stride $STEPS"
else
  bad "record page_stride: $(tail -n 3 "$OUT/rec.err" "$OUT/rec.out" | tr '\n' ' ')"
  echo "tlb: $pass passed, $fail failed"; exit 1
fi

# name, --set arguments: replay and keep the stats JSON
rep() {
  local name=$1; shift
  "$REPLAY" --quiet --topo r9nano "$@" --stats "$OUT/$name.json" "$TR" >"$OUT/$name.out" 2>&1
}
# the data check of a stats JSON found nothing (no mismatch of any kind, no walk error)
clean() {
  python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["check"]
bad = [k for k in ("load_mismatches", "atomic_order_mismatches", "lds_mismatches", "d2h_mismatches", "walk_errors") if c[k]]
sys.exit(1 if bad or not c["loads_checked"] else 0)' "$OUT/$1.json"
}

for v in on off long; do
  case $v in
    on) args=() ;;
    off) args=(--set tlb.enable=0) ;;
    long) args=(--set tlb.walk_level_latency=204cycles) ;;
  esac
  if rep "$v" "${args[@]}" && clean "$v"; then ok "replay with translation $v: data check clean"
  else bad "replay $v: $(tail -n 3 "$OUT/$v.out" | tr '\n' ' ')"; fi
done

while read -r st rest; do
  case $st in ok) ok "$rest" ;; *) bad "$rest" ;; esac
done < <(python3 - "$OUT" "$STEPS" <<'EOF'

import json, sys
out, steps = sys.argv[1], int(sys.argv[2])
def load(n): return json.load(open(f"{out}/{n}.json"))
on, off, lng = load('on'), load('off'), load('long')
cfg = on['config']
def cyc(d, k): return d['kernels'][k]['cycles']
def ctr(d, k, n): return d['kernels'][k]['counters'].get(n, 0)
def lat(key):
    v = str(cfg[key])
    return int(v[:-6]) if v.endswith('cycles') else None
lt, ls = cyc(on, 0), cyc(on, 1)
walks = ctr(on, 1, 'gpu[0].l2tlb.walks')
print(('ok' if ls > 1.3 * lt and walks >= steps else 'FAIL'),
      f"page-striding chain {ls} cycles vs page-local {lt} ({ls / lt:.2f}x) with {walks} walks for {steps} steps")
ot, os_ = cyc(off, 0), cyc(off, 1)
print(('ok' if abs(os_ - ot) < 0.1 * ot else 'FAIL'),
      f"without translation the chains take alike: {os_} vs {ot} cycles")
per = (ls - os_) / steps
walk = ctr(on, 1, 'gpu[0].l2tlb.walk_ps') / walks / 1000.0   # ps -> cycles at 1 GHz
noc, l1, l2 = lat('noc.latency'), lat('tlb.l1v_latency'), lat('tlb.l2_latency')
pred = walk + l1 + 2 * noc + l2
print(('ok' if abs(per - pred) <= 0.05 * pred else 'FAIL'),
      f"translation costs {per:.1f} cycles per striding step; predicted {pred:.1f} = walk {walk:.1f} "
      f"+ L1 TLB {l1} + NoC 2 x {noc} + L2 TLB {l2}")
d = lat('tlb.walk_level_latency')
lv = int(cfg['tlb.levels'])
dper = (cyc(lng, 1) - ls) / steps
want = lv * (204 - d)
print(('ok' if abs(dper - want) <= 0.01 * want else 'FAIL'),
      f"{204 - d} more cycles per walk level add {dper:.1f} cycles per step (tlb.levels {lv} x {204 - d} = {want})")
EOF
)

for topo in u-mgpu d-mgpu; do
  if "$REPLAY" --quiet --topo $topo --stats "$OUT/$topo.json" "$TR" >"$OUT/$topo.out" 2>&1 && clean "$topo"; then
    ok "replay on $topo with translation: data check clean"
  else bad "replay on $topo: $(tail -n 3 "$OUT/$topo.out" | tr '\n' ' ')"; fi
done
# a bad translation parameter is refused in one line naming it
for kv in tlb.l1v_entries=65 tlb.page_size=12KiB tlb.levels=9; do
  "$REPLAY" --quiet --set "$kv" "$TR" >"$OUT/bad.out" 2>&1; rc=$?
  if [ $rc = 2 ] && [ "$(wc -l <"$OUT/bad.out")" = 1 ] && grep -q "${kv%%=*}" "$OUT/bad.out"; then
    ok "--set $kv refused: $(cat "$OUT/bad.out")"
  else bad "--set $kv: exit $rc: $(head -c 300 "$OUT/bad.out")"; fi
done
echo "tlb: $pass passed, $fail failed"
[ $fail = 0 ]
