#!/usr/bin/env bash
# End-to-end tests of the MGMark-style workloads (benchmarks/{aes,bitonic,fir,gd,
# km,transpose,conv}.hip): each runs unmodified under gcn3-emu at --small on one
# GPU and split over four (the D-MGPU model: `gcn3-emu --gpus 4 -- prog --gpus 4`)
# and must print PASS and exit 0; asking for more devices than are visible must
# fail cleanly; two of them are recorded on four GPUs and replayed on d-mgpu and
# u-mgpu with the data check OK (km: hipMemcpyPeer gathers; conv: kernels read the
# neighbouring GPUs' rows). A missing program is a failure.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
OUT=$BUILD/e2e-workloads
mkdir -p "$OUT"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
why() { tail -n 3 "$@" 2>/dev/null | grep -v '^==>' | tr '\n' ' '; }

WORKLOADS="aes bitonic fir gd km transpose conv"

for bin in "$EMU" "$REPLAY"; do
  [ -x "$bin" ] || { echo "workloads: $bin missing (make BUILD=$BUILD all)"; exit 1; }
done

echo "== workloads under gcn3-emu (--small, 1 and 4 GPUs)"
for prog in $WORKLOADS; do
  bin=$BUILD/bench/$prog
  if [ ! -x "$bin" ]; then
    bad "$prog: $bin missing (benchmarks/$prog.hip; make BUILD=$BUILD programs)"
    continue
  fi
  for g in 1 4; do
    name=$prog-g$g
    if [ $g = 1 ]; then
      "$EMU" --quiet -- "$bin" --small >"$OUT/$name.out" 2>"$OUT/$name.err"
    else
      "$EMU" --quiet --gpus 4 -- "$bin" --small --gpus 4 >"$OUT/$name.out" 2>"$OUT/$name.err"
    fi
    rc=$?
    if [ $rc = 0 ] && grep -q PASS "$OUT/$name.out" && ! grep -q FAIL "$OUT/$name.out"; then
      ok "$name: $(grep -m1 PASS "$OUT/$name.out")"
    else bad "$name (exit $rc): $(why "$OUT/$name.err" "$OUT/$name.out")"; fi
  done
  # More devices than the emulator shows: a clean error, not a crash or a PASS.
  name=$prog-toofew
  "$EMU" --quiet --gpus 2 -- "$bin" --small --gpus 4 >"$OUT/$name.out" 2>"$OUT/$name.err"
  rc=$?
  if [ $rc != 0 ] && [ $rc -lt 128 ] && ! grep -q PASS "$OUT/$name.out" && [ -s "$OUT/$name.err" ]; then
    ok "$name: refused ($(head -n 1 "$OUT/$name.err"))"
  else bad "$name: --gpus 4 with 2 devices gave exit $rc: $(why "$OUT/$name.err" "$OUT/$name.out")"; fi
done

echo "== record on 4 GPUs, replay with the data check"
for prog in km conv; do
  bin=$BUILD/bench/$prog
  [ -x "$bin" ] || continue   # already counted as missing
  tr=$OUT/$prog-g4.gtrace
  "$EMU" --quiet --gpus 4 --record "$tr" -- "$bin" --small --gpus 4 >"$OUT/$prog-rec.out" 2>"$OUT/$prog-rec.err"
  rc=$?
  if [ $rc != 0 ] || [ ! -s "$tr" ]; then
    bad "record $prog (exit $rc): $(why "$OUT/$prog-rec.err" "$OUT/$prog-rec.out")"
    continue
  fi
  for topo in d-mgpu u-mgpu; do
    txt=$OUT/$prog-$topo.txt
    "$REPLAY" --topo $topo --stats "$OUT/$prog-$topo.json" "$tr" >"$txt" 2>&1
    rc=$?
    if [ $rc = 0 ] && grep -q "OK" "$txt" && ! grep -q "^mismatch:" "$txt" \
       && grep -q "data check: .*(0 mismatches)" "$txt"; then
      ok "replay $prog $topo: $(grep -m1 '^total:' "$txt" | cut -d';' -f1)"
    else bad "replay $prog $topo (exit $rc): $(why "$txt")"; fi
  done
done
# conv's kernels read their halo rows from the neighbouring GPUs: on d-mgpu
# those loads must cross the inter-GPU link (non-zero link bytes).
if [ -s "$OUT/conv-d-mgpu.json" ]; then
  lb=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"]["counters"]["link.bytes"])' \
       "$OUT/conv-d-mgpu.json" 2>/dev/null || echo "?")
  if [ "$lb" != "?" ] && [ "$lb" -gt 0 ]; then ok "conv d-mgpu: $lb bytes over the inter-GPU link"
  else bad "conv d-mgpu: inter-GPU link bytes '$lb' (expected > 0)"; fi
fi

echo "workloads: $pass passed, $fail failed"
[ $fail = 0 ]
