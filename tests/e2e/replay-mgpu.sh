#!/usr/bin/env bash
# Multi-GPU interconnects end to end: record bitonic (--small, peer reads in
# its cross-GPU passes) on 4 emulated GPUs, replay it on d-mgpu and u-mgpu
# with each interconnect.kind (pcie-bus, pcie-tree, p2p-ring, p2p-all) and
# check: the data check is OK, remote traffic shows on the links (bytes
# injected, counter link.bytes, > 0 and the per-link byte counters add up to at least that),
# the per-kernel inter-GPU bytes add up to the injected total (no
# double-counting of concurrent kernels), host copies and launches are timed
# (host.copies > 0, simulated time > launches x launch overhead), and the
# kernel time on p2p-all is below pcie-bus for the same trace.
# Prints one "ok/FAIL name" line per check; exits non-zero on any failure.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
BENCH=${BENCH:-$BUILD/bench}
[ -x "$BENCH/bitonic" ] || BENCH=build/bench
OUT=$BUILD/e2e-replay-mgpu
mkdir -p "$OUT"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }

for bin in "$EMU" "$REPLAY" "$BENCH/bitonic"; do
  [ -x "$bin" ] || { echo "  FAIL replay-mgpu: $bin missing (make BUILD=$BUILD all programs)"; exit 1; }
done

TR=$OUT/bitonic4.gtrace
if "$EMU" --quiet --gpus 4 --record "$TR" -- "$BENCH/bitonic" --small --gpus 4 >"$OUT/rec.out" 2>"$OUT/rec.err" \
   && grep -q PASS "$OUT/rec.out"; then
  ok "record bitonic --small --gpus 4"
else
  bad "record bitonic: $(tail -n 3 "$OUT/rec.err" | tr '\n' ' ')"
  echo "replay-mgpu: $pass passed, $fail failed"; exit 1
fi

# Summary of a stats JSON: check, injected, sum of link bytes, sum of
# per-kernel inter-GPU bytes, kernel time (ps), copies, launches, simulated ps.
summ() {
  python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d['totals']['counters']
chk = d['check']
okd = chk['load_mismatches'] == 0 and chk['d2h_mismatches'] == 0 and chk['walk_errors'] == 0
links = sum(v for k, v in c.items() if k.startswith('net.') and not k.startswith('net.host') and k.endswith('.bytes'))
kb = sum(k['inter_gpu_bytes'] for k in d['kernels'])
kt = sum(k['end_ps'] - k['start_ps'] for k in d['kernels'])
print(int(okd), c.get('link.bytes', 0), links, kb, kt, c.get('host.copies', 0), c.get('host.launches', 0),
      d['totals']['simulated_ps'])
EOF
}

for topo in d-mgpu u-mgpu; do
  declare -A KT=()
  for kind in pcie-bus pcie-tree p2p-ring p2p-all; do
    name=$topo-$kind
    if ! "$REPLAY" --topo $topo --gpus 4 --set interconnect.kind=$kind --stats "$OUT/$name.json" "$TR" \
         >"$OUT/$name.out" 2>"$OUT/$name.err"; then
      bad "$name: replay failed: $(tail -n 2 "$OUT/$name.err" | tr '\n' ' ')"
      continue
    fi
    read -r okd inj links kb kt copies launches sim < <(summ "$OUT/$name.json")
    [ "$okd" = 1 ] && ok "$name: data check OK" || bad "$name: data check failed ($OUT/$name.out)"
    if [ "$inj" -gt 0 ] && [ "$links" -ge "$inj" ]; then
      ok "$name: remote traffic on the links ($inj B injected, $links B over links)"
    else
      bad "$name: no remote traffic on the links (injected $inj, links $links)"
    fi
    [ "$kb" = "$inj" ] && ok "$name: per-kernel inter-GPU bytes add up ($kb)" \
                       || bad "$name: per-kernel inter-GPU bytes $kb != injected $inj"
    if [ "$copies" -gt 0 ] && [ "$sim" -gt $((launches * 5000000)) ]; then
      ok "$name: host copies ($copies) and launches ($launches) timed, ${sim} ps"
    else
      bad "$name: host timing missing (copies $copies, launches $launches, $sim ps)"
    fi
    KT[$kind]=$kt
  done
  if [ -n "${KT[p2p-all]:-}" ] && [ -n "${KT[pcie-bus]:-}" ] && [ "${KT[p2p-all]}" -lt "${KT[pcie-bus]}" ]; then
    ok "$topo: kernel time p2p-all ${KT[p2p-all]} ps < pcie-bus ${KT[pcie-bus]} ps"
  else
    bad "$topo: kernel time p2p-all ${KT[p2p-all]:-?} ps not below pcie-bus ${KT[pcie-bus]:-?} ps"
  fi
  unset KT
done

echo "replay-mgpu: $pass passed, $fail failed"
[ $fail = 0 ]
