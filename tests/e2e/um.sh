#!/usr/bin/env bash
# Unified memory across GPUs end to end (issue 17): record
# tests/programs/um_multi (two GPUs share two hipMallocManaged arrays
# allocated from device 0: each GPU scales its half ROUNDS times, then reads
# the other half) and replay it on d-mgpu with 2 GPUs under every um.policy.
# Checks: every replay's data check is clean; home and interleave move
# nothing; first-touch moves exactly the pages GPU 1 uses first (its halves
# of both arrays) with one fault each, each costing at least
# um.fault_latency + um.shootdown_latency, and cuts GPU 1's remote bytes;
# on-fault moves more (phase 2 takes pages back); access-counter moves pages
# without faults once um.counter_threshold remote accesses are counted;
# um.replicate = 1 makes phase 2's reads read-only copies under first-touch
# (remote traffic gone) and, under on-fault, writes after reads drop copies; the
# moving policies replay as one partition with identical JSON for 1 and 2
# threads; u-mgpu replays clean; bad um.* values are refused in one line.
# Prints one "ok/FAIL" line per check; exits non-zero on a failure.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
OUT=$BUILD/e2e-um
mkdir -p "$OUT"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
N=131072; ROUNDS=3; THR=16
PROG=$BUILD/programs/um_multi
for bin in "$EMU" "$REPLAY" "$PROG"; do
  [ -x "$bin" ] || { echo "  FAIL um: $bin missing (make BUILD=$BUILD all programs)"; exit 1; }
done
TR=$OUT/um.gtrace
if "$EMU" --quiet --gpus 2 --record "$TR" -- "$PROG" $N $ROUNDS >"$OUT/rec.out" 2>"$OUT/rec.err" && grep -q PASS "$OUT/rec.out"; then
  ok "record um_multi $N $ROUNDS on 2 GPUs"
else
  bad "record um_multi: $(tail -n 3 "$OUT/rec.err" "$OUT/rec.out" | tr '\n' ' ')"
  echo "um: $pass passed, $fail failed"; exit 1
fi

# the data check of a stats JSON found nothing (no mismatch of any kind, no walk error)
clean() {
  python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["check"]
bad = [k for k in ("load_mismatches", "atomic_order_mismatches", "lds_mismatches", "d2h_mismatches", "walk_errors") if c[k]]
sys.exit(1 if bad or not c["loads_checked"] else 0)' "$OUT/$1.json"
}
# name, topology, policy, extra arguments
rep() {
  local name=$1 topo=$2 pol=$3; shift 3
  if "$REPLAY" --quiet --topo "$topo" --gpus 2 --set um.policy="$pol" --set um.counter_threshold=$THR "$@" \
       --stats "$OUT/$name.json" "$TR" >"$OUT/$name.out" 2>&1 && clean "$name"; then
    ok "replay $topo um.policy=$pol $*: data check clean"
  else bad "replay $topo $pol: $(tail -n 3 "$OUT/$name.out" | tr '\n' ' ')"; fi
}
for p in home interleave first-touch on-fault access-counter; do rep "d-$p" d-mgpu "$p"; done
rep d-on-fault-t2 d-mgpu on-fault --threads 2
for p in first-touch on-fault; do rep "d-$p-rep" d-mgpu "$p" --set um.replicate=1; done
rep u-on-fault-rep u-mgpu on-fault --set um.replicate=1
for p in first-touch access-counter; do rep "u-$p" u-mgpu "$p"; done

while read -r st rest; do
  case $st in ok) ok "$rest" ;; info) echo "  info $rest" ;; *) bad "$rest" ;; esac
done < <(python3 - "$OUT" "$N" <<'PY'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
def load(x): return json.load(open(f"{out}/{x}.json"))
def ctr(d, g, k): return d['totals']['counters'].get(f'gpu[{g}].{k}', 0)
def moves(d): return sum(ctr(d, g, 'um.migrations_in') for g in range(2))
def faults(d): return sum(ctr(d, g, 'um.faults') for g in range(2))
def lat_ps(cfg, key):
    v = str(cfg[key])
    for suf, m in (('cycles', 1000), ('us', 10**6), ('ns', 1000), ('ps', 1)):
        if v.endswith(suf): return int(float(v[:-len(suf)]) * m)
    raise SystemExit(f'FAIL cannot read {key} = {v}')
home, il, ft, of, ac = (load('d-' + p) for p in ('home', 'interleave', 'first-touch', 'on-fault', 'access-counter'))
pages = n * 4 // 4096          # pages of one array; GPU 1 uses half of each of the two arrays first
want = pages                   # = 2 arrays x pages / 2
print('ok' if moves(home) == 0 and moves(il) == 0 and faults(home) == 0 else 'FAIL',
      f"home and interleave move nothing ({moves(home)}, {moves(il)} moves)")
print('ok' if ctr(home, 1, 'rdma.out_bytes') > 0 and ctr(il, 0, 'rdma.out_bytes') > 0 else 'FAIL',
      f"home: GPU 1 reads GPU 0's memory ({ctr(home, 1, 'rdma.out_bytes')} B); interleave: both GPUs go remote "
      f"({ctr(il, 0, 'rdma.out_bytes')}, {ctr(il, 1, 'rdma.out_bytes')} B)")
f1 = ctr(ft, 1, 'um.faults')
print('ok' if f1 == want and ctr(ft, 0, 'um.faults') == 0 and ctr(ft, 1, 'um.migrations_in') == want
      and ctr(ft, 1, 'um.bytes_in') == want * 4096 else 'FAIL',
      f"first-touch: GPU 1 faults {f1} times and takes {ctr(ft, 1, 'um.migrations_in')} pages "
      f"({ctr(ft, 1, 'um.bytes_in')} B; its halves of both arrays: {want}); GPU 0 faults {ctr(ft, 0, 'um.faults')}")
cfg = ft['config']
floor = lat_ps(cfg, 'um.fault_latency') + lat_ps(cfg, 'um.shootdown_latency')
per = ctr(ft, 1, 'um.fault_ps') / max(f1, 1)
print('ok' if per >= floor else 'FAIL',
      f"first-touch: a fault waits {per / 1e6:.2f} us on average, at least fault + shootdown = {floor / 1e6:.2f} us")
r_home, r_ft = ctr(home, 1, 'rdma.out_bytes'), ctr(ft, 1, 'rdma.out_bytes')
print('ok' if r_ft < r_home / 2 else 'FAIL',
      f"first-touch: GPU 1's remote bytes {r_ft} B vs {r_home} B at home")
print('ok' if moves(of) > moves(ft) and ctr(of, 0, 'um.faults') > 0 else 'FAIL',
      f"on-fault: {moves(of)} moves ({faults(of)} faults, GPU 0 takes {ctr(of, 0, 'um.migrations_in')} back) "
      f"vs {moves(ft)} with first-touch")
print('ok' if faults(ac) == 0 and moves(ac) > 0 and ctr(ac, 1, 'um.remote_counted') > 0 else 'FAIL',
      f"access-counter: {moves(ac)} moves without faults after {ctr(ac, 1, 'um.remote_counted')} remote accesses "
      f"counted by GPU 1")
ts = [ft['kernels'][-1]['end_ps'], of['kernels'][-1]['end_ps'], ac['kernels'][-1]['end_ps'], home['kernels'][-1]['end_ps']]
print('info', "last kernel ends (us): first-touch %.1f, on-fault %.1f, access-counter %.1f, home %.1f"
      % tuple(t / 1e6 for t in ts))
ftr, ofr = load('d-first-touch-rep'), load('d-on-fault-rep')
def copies(d): return sum(ctr(d, g, 'um.replicas_in') for g in range(2))
def remote(d): return sum(ctr(d, g, 'rdma.out_bytes') for g in range(2))
print('ok' if copies(ftr) == want and remote(ftr) < remote(ft) / 4 and moves(ftr) == moves(ft) else 'FAIL',
      f"first-touch + replicate: {copies(ftr)} read-only copies (phase 2's other halves: {want}), remote bytes "
      f"{remote(ftr)} B vs {remote(ft)} B, {moves(ftr)} moves as without copies")
print('ok' if copies(ofr) > 0 and sum(ctr(ofr, g, 'um.collapses') for g in range(2)) > 0 and moves(ofr) < moves(of)
      else 'FAIL',
      f"on-fault + replicate: {copies(ofr)} copies, {sum(ctr(ofr, g, 'um.collapses') for g in range(2))} writes "
      f"dropped copies (phase 1 reads a page before writing it), {moves(ofr)} moves vs {moves(of)} without copies")
t1, t2 = load('d-on-fault'), load('d-on-fault-t2')
for d in (t1, t2):
    d.get('totals', {}).pop('wall_s', None); d.pop('replay', None)
    for k in list(d.get('totals', {})):
        if 'wall' in k or 'threads' in k: d['totals'].pop(k)
same = json.dumps(t1['kernels']) == json.dumps(t2['kernels']) and t1['totals'].get('partitions') == 1
print('ok' if same else 'FAIL', f"on-fault: one partition, the same kernels' JSON for 1 and 2 threads")
PY
)

# a bad unified-memory parameter is refused in one line naming it
for kv in um.policy=lru um.page_size=3000 "um.policy=on-fault --set tlb.enable=0" um.replicate=1; do
  # shellcheck disable=SC2086
  "$REPLAY" --quiet --topo d-mgpu --set $kv "$TR" >"$OUT/bad.out" 2>&1; rc=$?
  key=${kv%%=*}
  if [ $rc = 2 ] && [ "$(wc -l <"$OUT/bad.out")" = 1 ] && grep -q "$key" "$OUT/bad.out"; then
    ok "--set $kv refused: $(cat "$OUT/bad.out")"
  else bad "--set $kv: exit $rc: $(head -c 300 "$OUT/bad.out")"; fi
done
echo "um: $pass passed, $fail failed"
[ $fail = 0 ]
