#!/usr/bin/env bash
# Bad input of the command-line tools (issue 20): nothing that existed is lost,
# nothing is read forever, what is printed is what ran.
#  - mgpu-replay --stats T T refuses to overwrite the trace (same file by
#    device and inode, also through another name), the trace is unchanged;
#  - --topo /dev/zero and gcn3-objdump /dev/zero are refused at once;
#  - without --topo the replay is the r9nano preset: same JSON as --topo r9nano;
#  - a configuration file of the user's own elsewhere may say [topo] base = r9nano;
#  - --gpus takes a number (no "4x", no 0, no negatives);
#  - a sweep of more than 10,000 points needs --yes;
#  - gcn3-emu --record of a program that makes no HIP call says so;
#  - a full disk while recording stops the recording, not the program, with one
#    message naming the file and byte (at the next HIP call, or at the program's
#    end when it happened while the last kernels' frames were being written),
#    and the trace written so far is salvaged and replays.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
OBJDUMP=$BUILD/bin/gcn3-objdump
OUT=$BUILD/e2e-bad-input
rm -rf "$OUT"; mkdir -p "$OUT"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
for b in "$EMU" "$REPLAY" "$OBJDUMP"; do [ -x "$b" ] || { echo "bad-input: $b missing"; exit 1; }; done
prog=$BUILD/bench/vectoradd
[ -x "$prog" ] || { echo "bad-input: $prog missing (make programs)"; exit 1; }

tr=$OUT/va.gtrace
if ! "$EMU" --quiet --record "$tr" -- "$prog" 4096 >"$OUT/rec.out" 2>&1; then
  bad "record vectoradd: $(tail -n 2 "$OUT/rec.out" | tr '\n' ' ')"; echo "bad-input: $pass ok, $fail failed"; exit 1
fi
sum0=$(md5sum <"$tr")

echo "== --stats onto the trace"
timeout 60 "$REPLAY" --topo r9nano --stats "$tr" "$tr" >"$OUT/same.out" 2>&1; rc=$?
if [ $rc = 2 ] && grep -q 'is the trace itself' "$OUT/same.out" && [ "$(md5sum <"$tr")" = "$sum0" ]; then
  ok "--stats TRACE TRACE refused, trace unchanged"
else bad "--stats TRACE TRACE: exit $rc, trace $( [ "$(md5sum <"$tr")" = "$sum0" ] && echo unchanged || echo CHANGED)"; fi
ln -f "$tr" "$OUT/hardlink.gtrace"
timeout 60 "$REPLAY" --topo r9nano --stats "$OUT/hardlink.gtrace" "$tr" >"$OUT/link.out" 2>&1; rc=$?
if [ $rc = 2 ] && [ "$(md5sum <"$tr")" = "$sum0" ]; then ok "--stats through a hard link to the trace refused"
else bad "--stats through a hard link: exit $rc"; fi

echo "== devices instead of files"
start=$(date +%s)
timeout 20 "$REPLAY" --topo /dev/zero "$tr" >"$OUT/zero.out" 2>&1; rc=$?
if [ $rc = 2 ] && grep -q 'not a regular file' "$OUT/zero.out" && [ $(( $(date +%s) - start )) -le 5 ]; then
  ok "--topo /dev/zero refused: $(head -n 1 "$OUT/zero.out" | cut -c1-100)"
else bad "--topo /dev/zero: exit $rc: $(head -n 1 "$OUT/zero.out")"; fi
start=$(date +%s)
timeout 20 "$OBJDUMP" /dev/zero >"$OUT/objzero.out" 2>&1; rc=$?
if [ $rc != 0 ] && [ $rc != 124 ] && grep -q 'not a regular file' "$OUT/objzero.out" && [ $(( $(date +%s) - start )) -le 5 ]; then
  ok "gcn3-objdump /dev/zero refused"
else bad "gcn3-objdump /dev/zero: exit $rc: $(head -n 1 "$OUT/objzero.out")"; fi

echo "== the default machine is the r9nano preset"
"$REPLAY" --stats "$OUT/default.json" "$tr" >"$OUT/default.out" 2>&1; rc1=$?
"$REPLAY" --topo r9nano --stats "$OUT/r9nano.json" "$tr" >"$OUT/r9nano.out" 2>&1; rc2=$?
if [ $rc1 = 0 ] && [ $rc2 = 0 ] && cmp -s "$OUT/default.json" "$OUT/r9nano.json" && grep -q '^topology r9nano' "$OUT/default.out"; then
  ok "no --topo = --topo r9nano (identical stats JSON)"
else bad "no --topo (exit $rc1) differs from --topo r9nano (exit $rc2)"; fi

echo "== a user INI elsewhere with [topo] base = r9nano"
mkdir -p "$OUT/mine"
printf '[topo]\nbase = r9nano\nname = mine\n[l2]\nsize = 4MiB\n' >"$OUT/mine/my.ini"
(cd "$OUT/mine" && "$OLDPWD/$REPLAY" --topo my.ini --stats my.json "$OLDPWD/$tr" >my.out 2>&1); rc=$?
if [ $rc = 0 ] && grep -q '"l2.size": "4194304' "$OUT/mine/my.json" 2>/dev/null; then
  ok "base = r9nano resolved from the installed presets"
else bad "user INI with base = r9nano: exit $rc: $(head -n 2 "$OUT/mine/my.out" | tr '\n' ' ')"; fi

echo "== numbers are numbers"
for g in 4x 0 -1 ""; do
  "$REPLAY" --topo r9nano --gpus "$g" "$tr" >"$OUT/gpus.out" 2>&1; rc=$?
  if [ $rc = 2 ] && grep -q -- "--gpus '$g'" "$OUT/gpus.out"; then ok "--gpus '$g' refused"
  else bad "--gpus '$g': exit $rc: $(head -n 1 "$OUT/gpus.out")"; fi
done

echo "== a huge sweep needs --yes"
printf '[sweep]\nbase = r9nano\n[params]\ncu.valu_cycles = 1..100\ncu.salu_cycles = 1..201\n' >"$OUT/huge.ini"
timeout 60 "$REPLAY" --sweep "$OUT/huge.ini" --out "$OUT/huge" "$tr" >"$OUT/huge.out" 2>&1; rc=$?
if [ $rc = 2 ] && grep -q '20100 points (more than 10000): add --yes' "$OUT/huge.out" && [ ! -e "$OUT/huge/results.csv" ]; then
  ok "a 20100-point sweep without --yes does not start"
else bad "20100-point sweep: exit $rc: $(head -n 2 "$OUT/huge.out" | tr '\n' ' ')"; fi

echo "== sweep ranges are parsed strictly"
nbad=0; nrej=0
for spec in "10..x" "4x" "-5..10" "10..20+0" "10..20*1" "10..20+-1" "1e3..2e3" "1..4,," "20..10" "0x10..0x20"; do
  printf '[sweep]\nbase = r9nano\n[params]\nl2.latency = %s\n' "$spec" >"$OUT/range.ini"
  timeout 60 "$REPLAY" --sweep "$OUT/range.ini" --out "$OUT/range" "$tr" >"$OUT/range.out" 2>&1; rc=$?
  nbad=$((nbad+1))
  if [ $rc = 2 ] && grep -q "range.ini:4: l2.latency" "$OUT/range.out"; then nrej=$((nrej+1))
  else echo "    '$spec': exit $rc $(head -n 1 "$OUT/range.out")"; fi
done
if [ $nrej = $nbad ]; then ok "$nbad malformed sweep values (signs, suffixes, zero steps, reversed ranges, empty items) refused naming file, line and key"
else bad "sweep values: $nrej of $nbad refused"; fi

echo "== a program without HIP calls, recorded"
rm -f "$OUT/ls.gtrace"
"$EMU" --record "$OUT/ls.gtrace" -- /bin/true >"$OUT/ls.out" 2>"$OUT/ls.err"; rc=$?
if [ $rc = 0 ] && grep -q 'made no HIP call: nothing was recorded' "$OUT/ls.err" && [ ! -e "$OUT/ls.gtrace" ]; then
  ok "gcn3-emu --record -- /bin/true: says nothing was recorded"
else bad "gcn3-emu --record -- /bin/true: exit $rc: $(cat "$OUT/ls.err")"; fi
"$EMU" --record "$OUT/ls.gtrace" -- /bin/false >/dev/null 2>&1; rc=$?
if [ $rc = 1 ]; then ok "the program's exit status passes through a recording run (1)"
else bad "gcn3-emu --record -- /bin/false: exit $rc, expected 1"; fi

echo "== the disk fills while recording (a 24 KiB file-size limit)"
cas=$BUILD/programs/cas_own
if [ -x "$cas" ]; then
  rm -f "$OUT/full.gtrace"
  (ulimit -f 24; trap '' XFSZ; exec "$EMU" --quiet --record "$OUT/full.gtrace" -- "$cas") >"$OUT/full.out" 2>"$OUT/full.err"; rc=$?
  if [ $rc = 0 ] && grep -q PASS "$OUT/full.out" && grep -qE 'recording failed: .*write error at byte [0-9]+: File too large; recording stopped' "$OUT/full.err"; then
    ok "recording stops, the program runs to its end (exit 0, PASS)"
  else bad "disk full: exit $rc: $(tr '\n' ' ' <"$OUT/full.err" | cut -c1-200)"; fi
  "$BUILD/bin/gcn3-trace" salvage "$OUT/full.gtrace" "$OUT/full-salv.gtrace" >"$OUT/salv.out" 2>&1; rc=$?
  k=$(sed -n 's/.* \([0-9][0-9]*\) kernels (.*/\1/p' "$OUT/salv.out")
  "$REPLAY" --topo r9nano "$OUT/full-salv.gtrace" >"$OUT/salv-replay.out" 2>&1; rr=$?
  if [ $rc = 0 ] && [ "${k:-0}" -ge 1 ] && [ $rr = 0 ]; then
    ok "the trace written so far is salvageable: $k complete kernel(s), replayed with a clean data check"
  else bad "salvage of the cut trace: exit $rc ($(tail -n 1 "$OUT/salv.out")), replay exit $rr"; fi
else bad "$cas missing (make programs)"; fi

echo "bad-input: $pass ok, $fail failed"
[ $fail = 0 ]
