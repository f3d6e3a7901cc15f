#!/usr/bin/env bash
# End-to-end test of gcn3-emu --timeline (issue 18 scope 1, the emulator's
# side): a two-GPU program run with --timeline writes Chrome trace-event JSON
# (checked with jq) with one kernel span per launch on the GPU that ran it
# (pid 1 + device, the grid's workgroups in its args), the host's copies
# (H2D and D2H), allocations and synchronisations as instants, track names,
# spans that do not overlap, and no dropped events; with recording at the same time the trace is
# unchanged; a budget of 3 events drops the rest and says so; an unwritable
# timeline path is reported and the program's exit status stands.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
TRACE=$BUILD/bin/gcn3-trace
OUT=$BUILD/e2e-emu-timeline
mkdir -p "$OUT"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
why() { tail -n 3 "$@" 2>/dev/null | grep -v '^==>' | tr '\n' ' ' | cut -c1-300; }
for b in "$EMU" "$TRACE" "$BUILD/bench/fir"; do
  [ -x "$b" ] || { echo "emu-timeline: $b missing (make BUILD=$BUILD all programs)"; exit 1; }
done

echo "== gcn3-emu --timeline on a two-GPU program"
tl=$OUT/fir2.json
rm -f "$tl"
if "$EMU" --gpus 2 --quiet --timeline "$tl" --record "$OUT/fir2.gtrace" -- "$BUILD/bench/fir" --gpus 2 --small >"$OUT/fir2.out" 2>&1 \
   && grep -q PASS "$OUT/fir2.out"; then ok "fir --gpus 2 ran with --timeline"
else bad "fir --gpus 2 --timeline: $(why "$OUT/fir2.out")"; fi
if jq -e . "$tl" >/dev/null 2>"$OUT/jq.err"; then
  ok "valid JSON ($(jq '.traceEvents | length' "$tl") events)"
  launches=$("$TRACE" dump "$OUT/fir2.gtrace" --json --no-data | jq -c '[.events[] | select(.kind == "launch") | [.device, .grid[0] * .grid[1] * .grid[2]]] | sort')
  spans=$(jq -c '[.traceEvents[] | select(.ph == "X" and .cat == "kernel") | [.pid - 1, .args.workgroups]] | sort' "$tl")
  if [ "$launches" = "$spans" ] && [ "$spans" != "[]" ]; then ok "kernel spans on the GPUs that ran them, workgroups as launched: $spans"
  else bad "kernel spans $spans, launches in the trace $launches"; fi
  st=$(jq -r '[.traceEvents[] | select(.cat == "kernel") | .args.status] | unique | join(",")' "$tl")
  [ "$st" = ok ] && ok "every kernel span has status ok" || bad "kernel statuses: $st"
  h2d=$(jq '[.traceEvents[] | select(.name == "copy H2D" and .pid == 0)] | length' "$tl")
  d2h=$(jq '[.traceEvents[] | select(.name == "copy D2H" and .pid == 0)] | length' "$tl")
  al=$(jq '[.traceEvents[] | select(.name == "alloc")] | length' "$tl")
  sy=$(jq '[.traceEvents[] | select(.name == "synchronize")] | length' "$tl")
  if [ "$h2d" -gt 0 ] && [ "$d2h" -gt 0 ] && [ "$al" -gt 0 ]; then ok "host instants: $h2d H2D and $d2h D2H copies, $al allocations, $sy synchronisations"
  else bad "host instants: $h2d H2D, $d2h D2H, $al allocations"; fi
  names=$(jq -r '[.traceEvents[] | select(.ph == "M" and .name == "process_name") | .args.name] | join(", ")' "$tl")
  if [ "$names" = "host, GPU 0 (emulated), GPU 1 (emulated)" ]; then ok "processes: $names"
  else bad "process names: $names"; fi
  dr=$(jq '.otherData.dropped_events' "$tl")
  [ "$dr" = 0 ] && ok "no events dropped" || bad "dropped_events $dr"
  # the emulator runs one kernel at a time: spans never overlap, and every
  # copy back to the host comes after the first kernel started
  ovl=$(jq '[.traceEvents[] | select(.ph == "X")] | sort_by(.ts) | [range(1; length) as $i | select(.[$i - 1].ts + .[$i - 1].dur > .[$i].ts)] | length' "$tl")
  late=$(jq '([.traceEvents[] | select(.ph == "X") | .ts] | min) as $k | [.traceEvents[] | select(.name == "copy D2H" and .ts < $k)] | length' "$tl")
  [ "$ovl" = 0 ] && [ "$late" = 0 ] && ok "kernel spans do not overlap; D2H copies follow the kernels" || bad "$ovl overlapping spans, $late D2H copies before the first kernel"
else bad "not valid JSON: $(why "$OUT/jq.err")"; fi
if "$TRACE" verify "$OUT/fir2.gtrace" >"$OUT/verify.out" 2>&1; then ok "the trace recorded alongside verifies"
else bad "trace recorded with --timeline: $(why "$OUT/verify.out")"; fi

echo "== budget and errors"
GCN3EMU_TIMELINE_BUDGET=3 "$EMU" --quiet --timeline "$OUT/small.json" -- "$BUILD/bench/fir" --small >"$OUT/small.out" 2>"$OUT/small.err"
rc=$?
n=$(jq '[.traceEvents[] | select(.ph != "M")] | length' "$OUT/small.json" 2>/dev/null)
dr=$(jq '.otherData.dropped_events' "$OUT/small.json" 2>/dev/null)
if [ $rc = 0 ] && [ "$n" = 3 ] && [ "${dr:-0}" -gt 0 ] && grep -q "dropped" "$OUT/small.err"; then ok "budget 3: 3 events kept, $dr dropped, said on stderr"
else bad "budget 3: exit $rc, $n events kept, dropped ${dr:-?}: $(why "$OUT/small.err")"; fi
"$EMU" --quiet --timeline /nonexistent-dir/t.json -- "$BUILD/bench/fir" --small >"$OUT/nodir.out" 2>"$OUT/nodir.err"
rc=$?
if [ $rc = 0 ] && grep -q PASS "$OUT/nodir.out" && grep -q "timeline /nonexistent-dir/t.json: cannot write" "$OUT/nodir.err"; then
  ok "unwritable path: $(head -n1 "$OUT/nodir.err"); the program's exit status 0 stands"
else bad "unwritable path: exit $rc: $(why "$OUT/nodir.err")"; fi

echo "emu-timeline: $pass passed, $fail failed"
[ $fail = 0 ]
