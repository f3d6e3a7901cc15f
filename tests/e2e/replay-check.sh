#!/usr/bin/env bash
# End-to-end tests of the replay's data-value check through the modelled memory
# hierarchy (issue 6, scope 4 and 5), on recorded benchmark traces (vectoradd,
# reduction; reduction also on 4 GPUs):
#  - every replay's data check is clean (0 load and 0 D2H mismatches) on r9nano,
#    and on d-mgpu / u-mgpu for the 4-GPU trace (remote accesses go to the
#    owner GPU's L2);
#  - the injected model bug debug.skip_l2_flush = 1 (the L2 write-back flush
#    writes nothing back) is caught: D2H mismatches > 0;
#  - same trace + same config -> bit-identical stats JSON, run after run;
#  - the stats JSON has the stable keys of the summary;
#  - the observation points (rp_hooks.h, --observe-counts) fire as often as
#    the stats say: kernels, workgroups, wavefront instructions, accesses
#    issued = completed, a mismatch point exactly when differences are counted.
# Prints one "ok/FAIL name" line per check; exits non-zero on any failure.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
BENCH=${BENCH:-$BUILD/bench}   # the HIP benchmark programs (make programs)
OUT=$BUILD/e2e-replay-check
mkdir -p "$OUT"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }

for bin in "$EMU" "$REPLAY"; do
  [ -x "$bin" ] || { echo "replay-check: $bin missing (make BUILD=$BUILD all)"; exit 1; }
done

# value of a top-level "check" counter in a stats JSON (one key per line)
jget() { sed -n "s/^ *\"$2\": \([0-9]*\),\{0,1\}$/\1/p" "$1" | tail -n 1; }

record() { # name prog gpus
  local bin=$BENCH/$2
  if [ ! -x "$bin" ]; then
    bad "record $1: $bin missing (make BUILD=$BUILD programs)"
    return 1
  fi
  if "$EMU" --quiet --gpus "$3" --record "$OUT/$1.gtrace" -- "$bin" >"$OUT/$1.rec.out" 2>&1; then
    ok "record $1"
  else
    bad "record $1: $(tail -n 2 "$OUT/$1.rec.out" | tr '\n' ' ')"
    return 1
  fi
}

replay() { # tag trace topo [--set ...]; writes $OUT/$tag.json and .out
  local tag=$1 tr=$2 topo=$3
  shift 3
  "$REPLAY" --topo "$topo" "$@" --stats "$OUT/$tag.json" "$OUT/$tr.gtrace" >"$OUT/$tag.out" 2>&1
}

clean_check() { # tag trace topo
  if ! replay "$1" "$2" "$3"; then
    bad "$1: replay failed: $(tail -n 2 "$OUT/$1.out" | tr '\n' ' ')"
    return
  fi
  local lm dm dc
  lm=$(jget "$OUT/$1.json" load_mismatches)
  dm=$(jget "$OUT/$1.json" d2h_mismatches)
  dc=$(jget "$OUT/$1.json" d2h_checked)
  if [ "$lm" = 0 ] && [ "$dm" = 0 ] && [ "${dc:-0}" -gt 0 ]; then
    ok "$1: data check clean ($dc D2H blocks)"
  else
    bad "$1: load mismatches '$lm', D2H mismatches '$dm', D2H blocks '$dc'"
  fi
}

echo "== replay data check through the hierarchy"
have_va=0; have_red=0; have_red4=0
record vectoradd vectoradd 1 && have_va=1
record reduction reduction 1 && have_red=1
record reduction4 reduction 4 && have_red4=1

[ $have_va = 1 ] && clean_check vectoradd-r9nano vectoradd r9nano
[ $have_red = 1 ] && clean_check reduction-r9nano reduction r9nano
if [ $have_red4 = 1 ]; then
  clean_check reduction4-d-mgpu reduction4 d-mgpu
  clean_check reduction4-u-mgpu reduction4 u-mgpu
fi

echo "== injected bug: debug.skip_l2_flush = 1 must be caught"
for t in vectoradd reduction reduction4; do
  case $t in vectoradd) [ $have_va = 1 ] || continue;; reduction) [ $have_red = 1 ] || continue;;
              reduction4) [ $have_red4 = 1 ] || continue;; esac
  topo=r9nano; [ $t = reduction4 ] && topo=d-mgpu
  replay "$t-skipflush" "$t" $topo --set debug.skip_l2_flush=1
  rc=$?
  if [ $rc != 1 ]; then  # 1 = data check failed (2 = error, 0 = the bug went unnoticed)
    bad "$t-skipflush: mgpu-replay exit status $rc, expected 1: $(tail -n 2 "$OUT/$t-skipflush.out" | tr '\n' ' ')"
    continue
  fi
  dm=$(jget "$OUT/$t-skipflush.json" d2h_mismatches)
  if [ "${dm:-0}" -gt 0 ] && grep -q '^mismatch: D2H copy' "$OUT/$t-skipflush.out"; then
    ok "$t-skipflush ($topo): $dm D2H mismatches reported"
  else
    bad "$t-skipflush ($topo): the skipped flush went unnoticed (d2h_mismatches '$dm')"
  fi
done

echo "== injected bug: debug.skip_ds2_write = 1 must be caught lane by lane"
# km --small reads with ds_read2st64_b32 what it wrote with ds_write2st64_b32:
# the replay checks such a load's elements at once when all of them agree and
# lane by lane when one differs; dropping every second element written must
# give LDS mismatches at their own addresses, with as many elements checked
# as in the clean replay.
if [ -x "$BENCH/km" ] && "$EMU" --quiet --record "$OUT/kmsmall.gtrace" -- "$BENCH/km" --small >"$OUT/kmsmall.rec.out" 2>&1; then
  replay kmsmall-clean kmsmall r9nano; rc0=$?
  replay kmsmall-skipds2 kmsmall r9nano --set debug.skip_ds2_write=1; rc=$?
  c0=$(jget "$OUT/kmsmall-clean.json" lds_checked); m0=$(jget "$OUT/kmsmall-clean.json" lds_mismatches)
  c1=$(jget "$OUT/kmsmall-skipds2.json" lds_checked); m1=$(jget "$OUT/kmsmall-skipds2.json" lds_mismatches)
  if [ $rc0 = 0 ] && [ $rc = 1 ] && [ "${m0:-x}" = 0 ] && [ "${m1:-0}" -gt 0 ] && [ -n "$c0" ] && [ "$c0" = "$c1" ] &&
     grep -q '^mismatch: lds load .*(ds_read2st64_b32) addr 0x' "$OUT/kmsmall-skipds2.out"; then
    ok "kmsmall-skipds2: $m1 LDS mismatches of $c1 elements checked (clean: 0 of $c0)"
  else
    bad "kmsmall-skipds2: exit $rc0/$rc, lds_checked '$c0'/'$c1', lds_mismatches '$m0'/'$m1': $(tail -n 2 "$OUT/kmsmall-skipds2.out" | tr '\n' ' ')"
  fi
else
  bad "record kmsmall: $(tail -n 2 "$OUT/kmsmall.rec.out" 2>/dev/null | tr '\n' ' ')"
fi

echo "== determinism: same trace + same config -> identical stats JSON"
for t in reduction reduction4; do
  case $t in reduction) [ $have_red = 1 ] || continue; topo=r9nano;; reduction4) [ $have_red4 = 1 ] || continue; topo=d-mgpu;; esac
  replay "$t-det1" "$t" $topo && replay "$t-det2" "$t" $topo
  if cmp -s "$OUT/$t-det1.json" "$OUT/$t-det2.json" && [ -s "$OUT/$t-det1.json" ]; then
    ok "$t ($topo): stats JSON bit-identical across runs"
  else
    bad "$t ($topo): stats JSON differs between two identical runs"
  fi
done

echo "== stats JSON keys and summary"
if [ $have_red = 1 ] && [ -s "$OUT/reduction-r9nano.json" ]; then
  missing=""
  for key in '"kernels"' '"totals"' '"counters"' '"check"' '"cycles"' '"ipc"' '"summary"' \
             '"l2_hit_rate"' '"dram_bandwidth_GBps"' '"mshr_occupancy"' '"gpu\[0\]\.l2\[0\]\.read_hits"'; do
    grep -q "$key" "$OUT/reduction-r9nano.json" || missing="$missing $key"
  done
  if [ -z "$missing" ]; then ok "stats JSON has the summary keys"; else bad "stats JSON lacks:$missing"; fi
  if grep -q '^summary' "$OUT/reduction-r9nano.out"; then
    ok "human summary printed"
  else
    bad "human summary missing in the replay output"
  fi
fi

echo "== observation points (--observe-counts): every point fires as often as the model says"
obs_check() { # tag trace topo [--set ...]
  local tag=$1 tr=$2 topo=$3; shift 3
  "$REPLAY" --topo "$topo" "$@" --observe-counts --stats "$OUT/$tag.json" "$OUT/$tr.gtrace" >"$OUT/$tag.out" 2>&1
  local line; line=$(grep '^observed:' "$OUT/$tag.out")
  [ -n "$line" ] || { bad "$tag: no 'observed:' line"; return; }
  python3 - "$OUT/$tag.json" "$line" "$tag" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
seen = {k: int(v) for k, v in (p.strip().rsplit(' ', 1) for p in sys.argv[2][len('observed:'):].split(','))}
ks = j['kernels']
want = {'kernel.start': len(ks), 'kernel.end': len(ks), 'workgroup.start': sum(k['workgroups'] for k in ks),
        'workgroup.end': sum(k['workgroups'] for k in ks),
        'wave.issue': sum(k['wavefront_instructions'] for k in ks), 'access.done': seen['access.issue'],
        'check.mismatch': None}
bad = [f"{k} {seen.get(k)} != {v}" for k, v in want.items() if v is not None and seen.get(k) != v]
c = j['check']
diffs = c['load_mismatches'] + c['lds_mismatches'] + c['d2h_mismatches'] + c['atomic_order_mismatches']
if (seen['check.mismatch'] > 0) != (diffs > 0):
    bad.append(f"check.mismatch {seen['check.mismatch']} with {diffs} differences counted")
if seen['wave.retire'] == 0 or seen['access.issue'] == 0 or seen['link.send'] == 0:
    bad.append('a point never fired')
# the data check observes check.value: at least one value per D2H block and per checked atomic return,
# and a load run holds at most 64 lanes
vals = c['d2h_checked'] + c['atomics_checked'] + (c['loads_checked'] + c['lds_checked'] + 63) // 64
if seen['check.value'] < vals:
    bad.append(f"check.value {seen['check.value']} for {vals}+ values checked")
print(('ok   ' if not bad else 'FAIL ') + sys.argv[3] + ': ' + ('; '.join(bad) if bad else sys.argv[2][:150]))
sys.exit(1 if bad else 0)
PY
  if [ $? = 0 ]; then pass=$((pass+1)); else fail=$((fail+1)); fi
}
[ $have_red = 1 ] && obs_check reduction-observe reduction r9nano
[ $have_red4 = 1 ] && obs_check reduction4-observe reduction4 d-mgpu --threads 2
[ $have_va = 1 ] && obs_check vectoradd-observe-skipflush vectoradd r9nano --set debug.skip_l2_flush=1

echo "== timeline (--timeline): Chrome trace-event JSON, spans per kernel, workgroup and host copy, counter tracks, deterministic"
tl_check() { # tag trace topo budget
  local tag=$1 tr=$2 topo=$3 budget=$4 extra=()
  [ "$budget" != 0 ] && extra=(--timeline-budget "$budget")
  "$REPLAY" --topo "$topo" --quiet --threads 1 --stats "$OUT/$tag.json" --timeline "$OUT/$tag-t1.tl.json" "${extra[@]}" "$OUT/$tr.gtrace" >/dev/null 2>&1 &&
  "$REPLAY" --topo "$topo" --quiet --threads 2 --timeline "$OUT/$tag-t2.tl.json" "${extra[@]}" "$OUT/$tr.gtrace" >/dev/null 2>&1
  local rc=$?
  python3 - "$OUT/$tag.json" "$OUT/$tag-t1.tl.json" "$budget" "$tag" <<'PY'
import json, sys
st = json.load(open(sys.argv[1])); tl = json.load(open(sys.argv[2])); budget = int(sys.argv[3])
ev = tl['traceEvents']
kern = [e for e in ev if e.get('cat') == 'kernel']; wgs = [e for e in ev if e.get('cat') == 'workgroup']
n_wg = sum(k['workgroups'] for k in st['kernels'])
bad = []
if len(kern) != len(st['kernels']): bad.append(f"{len(kern)} kernel spans for {len(st['kernels'])} kernels")
want = n_wg if not budget else min(budget, n_wg)
if len(wgs) != want: bad.append(f"{len(wgs)} workgroup spans, expected {want}")
if tl['otherData']['workgroup_spans_left_out'] != n_wg - want: bad.append('left_out wrong')
if budget and n_wg > budget and not any(e['ph'] == 'C' for e in ev): bad.append('no busy counters over the budget')
if any(e['dur'] < 0 or e['ts'] < 0 for e in kern + wgs): bad.append('negative time')
# kernel spans on the GPU that ran them
kg = sorted((e['args']['kernel'], e['pid']) for e in kern)
sg = sorted((k['id'], k['gpu']) for k in st['kernels'])
if kg != sg: bad.append(f"kernel spans on GPUs {kg[:4]}, the statistics say {sg[:4]}")
procs = {e['pid']: e['args']['name'] for e in ev if e['ph'] == 'M' and e['name'] == 'process_name'}
host = [p for p, n in procs.items() if n == 'host']
copies = [e for e in ev if e.get('cat') == 'copy']
tnames = {(e['pid'], e['tid']): e['args']['name'] for e in ev if e['ph'] == 'M' and e['name'] == 'thread_name'}
hc = [e for e in copies if host and e['pid'] == host[0]]
# a copy that ran on a copy engine is also a span on that engine's track in its GPU's process
ec = [e for e in copies if e not in hc]
if not host or not hc or any(e['dur'] < 0 or e['args']['bytes'] <= 0 for e in copies) or len(ec) > len(hc) \
   or any(not tnames.get((e['pid'], e['tid']), '').startswith('copy engine ') or procs.get(e['pid'], '').find('GPU') != 0 for e in ec):
    bad.append(f"copy spans: {len(hc)} on the host, {len(ec)} on copy engines of processes {sorted({e['pid'] for e in ec})}, host {host}")
cnt = {}
for e in ev:
    if e['ph'] == 'C' and not e['name'].endswith(' busy'):
        cnt.setdefault((procs.get(e['pid']), e['name']), []).append(e['args']['value'])
gpus_run = sorted({k['gpu'] for k in st['kernels']})
for g in gpus_run:
    for name in ('IPC', 'L2 hit rate', 'DRAM GB/s'):
        v = cnt.get((f'GPU {g}', name))
        if not v or max(v) <= 0: bad.append(f"GPU {g}: no '{name}' counter")
if any(not 0 <= x <= 1 for (p, n), v in cnt.items() if n == 'L2 hit rate' for x in v): bad.append('L2 hit rate outside [0, 1]')
links = [n for (p, n) in cnt if p == 'interconnect']
if st['totals'].get('inter_gpu_bytes', 0) > 0 and not links: bad.append('inter-GPU traffic but no link counters')
print(('ok   ' if not bad else 'FAIL ') + sys.argv[4] + ': ' + ('; '.join(bad) if bad else f"{len(kern)} kernel and {len(wgs)} workgroup spans of {n_wg}, {len(copies)} host copies, counters {sorted({n for p, n in cnt})[:6]}"))
sys.exit(1 if bad else 0)
PY
  if [ $? = 0 ] && [ $rc = 0 ]; then pass=$((pass+1)); else fail=$((fail+1)); fi
  if cmp -s "$OUT/$tag-t1.tl.json" "$OUT/$tag-t2.tl.json"; then ok "$tag: timeline identical with 1 and 2 threads"
  else bad "$tag: timeline differs between 1 and 2 threads"; fi
}
[ $have_red4 = 1 ] && tl_check reduction4-timeline reduction4 d-mgpu 0
[ $have_red4 = 1 ] && tl_check reduction4-timeline-budget reduction4 d-mgpu 100
[ $have_red = 1 ] && tl_check reduction-umgpu-timeline reduction u-mgpu 0

echo "replay-check: $pass passed, $fail failed"
[ $fail = 0 ]
