#!/usr/bin/env bash
# Hardware probes (issue 21): the replay on the r9nano preset against
# measurements of a real R9 Nano (../shared/hw-r9nano/README.md). So far the
# empty-kernel probe (MGPUSim microbench/emptykernel): an empty kernel
# (s_endpgm only) with workgroups of 1..7 wavefronts and 128..1024 workgroups
# (tests/programs/empty_kernel.hip); the least-squares slope of kernel time
# over workgroups, per wavefront count, must be within 5% of the hardware's.
# Writes the table as markdown to $BUILD/e2e-hw-probes/table.md.
set -uo pipefail
BUILD=${BUILD:-build}
PY=${PYTHON:-/usr/bin/python3}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
OUT=$BUILD/e2e-hw-probes
mkdir -p "$OUT"
export MGPU_REPLAY_CONFIGS=${MGPU_REPLAY_CONFIGS:-$(realpath replay/configs)}
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
why() { tail -n 3 "$@" 2>/dev/null | grep -v '^==>' | tr '\n' ' ' | cut -c1-300; }
P=$BUILD/programs/empty_kernel
for b in "$EMU" "$REPLAY" "$P"; do
  [ -x "$b" ] || { echo "hw-probes: $b missing (make BUILD=$BUILD all programs)"; exit 1; }
done

echo "== empty kernel: dispatcher cost per workgroup (R9 Nano: shared/hw-r9nano)"
if ! "$EMU" --quiet --record "$OUT/empty.gtrace" -- "$P" >"$OUT/empty.out" 2>&1; then
  bad "empty_kernel: $(why "$OUT/empty.out")"
elif ! "$REPLAY" --topo r9nano --quiet --stats "$OUT/empty.json" "$OUT/empty.gtrace" >"$OUT/replay.out" 2>&1; then
  bad "empty_kernel replay: $(why "$OUT/replay.out")"
else
  "$PY" - "$OUT/empty.json" "$OUT/table.md" >"$OUT/fit.out" 2>&1 <<'PY'
import json, sys
ks = json.load(open(sys.argv[1]))['kernels']
hw = [3.99, 4.00, 4.01, 4.02, 5.02, 6.00, 7.01]  # ns per workgroup, W = 1..7 (README.md)
rows, bad = [], 0
for w in range(1, 8):
    pts = [(128 * (g + 1), ks[(w - 1) * 8 + g]['time_ns']) for g in range(8)]
    mx = sum(x for x, _ in pts) / 8
    my = sum(y for _, y in pts) / 8
    slope = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    err = 100 * (slope / hw[w - 1] - 1)
    bad += abs(err) > 5
    rows.append((w, hw[w - 1], slope, err))
    print("%s W=%d: %.2f ns per workgroup, R9 Nano %.2f (%+.1f%%)" % ("ok  " if abs(err) <= 5 else "FAIL", w, slope,
                                                                     hw[w - 1], err))
with open(sys.argv[2], 'w') as f:
    f.write("| wavefronts per workgroup | R9 Nano, ns per workgroup | r9nano preset | error |\n|---|---|---|---|\n")
    for w, h, s, e in rows:
        f.write("| %d | %.2f | %.2f | %+.1f%% |\n" % (w, h, s, e))
sys.exit(1 if bad else 0)
PY
  rc=$?
  while read -r st rest; do
    if [ "$st" = ok ]; then ok "empty kernel $rest"; else bad "empty kernel $rest"; fi
  done <"$OUT/fit.out"
  [ $rc = 0 ] || [ -s "$OUT/fit.out" ] || bad "empty kernel fit: $(why "$OUT/fit.out")"
fi

echo "hw-probes: $pass passed, $fail failed"
[ $fail = 0 ]
