#!/usr/bin/env bash
# gcn3-trace end to end: record real benchmark traces with gcn3-emu, run
# info / dump / stats (text and --json, checked to be valid JSON) and verify
# on them, damage copies (cut at many offsets, flipped bytes) and check that
# verify fails with one line naming the problem, and that salvage of a cut
# trace writes a trace that verify accepts, holding complete kernels equal
# to the original's. Takes a few seconds.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
T=$BUILD/bin/gcn3-trace
OUT=$BUILD/e2e/trace-tools
rm -rf "$OUT"; mkdir -p "$OUT"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }

for f in "$EMU" "$T" "$BUILD/bench/reduction" "$BUILD/bench/vectoradd"; do
  [ -x "$f" ] || { echo "trace-tools: $f is missing (make BUILD=$BUILD all programs)"; exit 1; }
done
if command -v python3 >/dev/null; then json_ok() { python3 -m json.tool >/dev/null; }
elif command -v jq >/dev/null; then json_ok() { jq -e . >/dev/null; }
else echo "trace-tools: need python3 or jq to check JSON"; exit 1; fi
have_jq=0; command -v jq >/dev/null && have_jq=1

# run NAME EXPECTED_RC CMD...: stdout to $OUT/NAME.out, stderr to $OUT/NAME.err
run() {
  local name=$1 want=$2; shift 2
  "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"; local rc=$?
  if [ $rc -ge 128 ]; then bad "$name: crashed (status $rc): $(head -c 300 "$OUT/$name.err")"; return 1; fi
  if [ $rc != "$want" ]; then bad "$name: exit $rc, expected $want: $(head -c 300 "$OUT/$name.err")"; return 1; fi
  return 0
}

echo "== record"
# Two devices: the program splits its work, giving two kernels (salvage keeps the first).
"$EMU" --quiet --gpus 2 --threads 2 --record "$OUT/red.gtrace" -- "$BUILD/bench/reduction" 65536 \
  >"$OUT/red.app" 2>"$OUT/red.emu" && ok "record reduction (2 devices)" || bad "record reduction: $(tail -n 2 "$OUT/red.emu")"
"$EMU" --quiet --gpus 3 --threads 1 --record "$OUT/vadd.gtrace" -- "$BUILD/bench/vectoradd" 4096 \
  >"$OUT/vadd.app" 2>"$OUT/vadd.emu" && ok "record vectoradd (3 devices)" || bad "record vectoradd: $(tail -n 2 "$OUT/vadd.emu")"
[ -s "$OUT/red.gtrace" ] && [ -s "$OUT/vadd.gtrace" ] || { echo "trace-tools: no traces recorded"; exit 1; }

echo "== info / dump / stats / verify"
for tr in red vadd; do
  f=$OUT/$tr.gtrace
  if run $tr-info 0 "$T" info "$f" && grep -q "^producer *gcn3-emu" "$OUT/$tr-info.out" &&
     grep -q "^isa target *amdgcn-amd-amdhsa--gfx803" "$OUT/$tr-info.out" && grep -q "^command line .*bench/" "$OUT/$tr-info.out" &&
     grep -q "^devices" "$OUT/$tr-info.out" && grep -q "^  all .*x)$" "$OUT/$tr-info.out"; then ok "$tr info"
  else bad "$tr info: header, command line or compression ratio missing"; fi
  for cmd in info dump stats; do
    run $tr-$cmd-json 0 "$T" $cmd --json "$f" && json_ok <"$OUT/$tr-$cmd-json.out" && ok "$tr $cmd --json is valid JSON" ||
      bad "$tr $cmd --json: not valid JSON"
  done
  run $tr-dump 0 "$T" dump "$f" && grep -q "^event 0 " "$OUT/$tr-dump.out" && grep -q "^kernel 1 wg #0 " "$OUT/$tr-dump.out" &&
    grep -q "mem 0: load smem" "$OUT/$tr-dump.out" && ok "$tr dump" || bad "$tr dump: events or workgroups missing"
  # Filters: exactly one wave of one workgroup, no data values, with its instruction list.
  if run $tr-dump-f 0 "$T" dump "$f" --kernel 1 --wg 2 --wave 1 --no-data --instr &&
     [ "$(grep -c '^kernel ' "$OUT/$tr-dump-f.out")" = 1 ] && grep -q "^kernel 1 wg #2 " "$OUT/$tr-dump-f.out" &&
     [ "$(grep -c '^  wave ' "$OUT/$tr-dump-f.out")" = 1 ] && grep -q "^  wave 1:" "$OUT/$tr-dump-f.out" &&
     ! grep -q "^event" "$OUT/$tr-dump-f.out" && ! grep -q " load=" "$OUT/$tr-dump-f.out" &&
     grep -q "s_endpgm" "$OUT/$tr-dump-f.out"; then ok "$tr dump --kernel 1 --wg 2 --wave 1 --no-data --instr"
  else bad "$tr dump filters"; fi
  if [ $have_jq = 1 ]; then
    n=$(jq '[.workgroups[].waves[].instructions | length] | add' <("$T" dump --json --instr --kernel 0 "$f"))
    want=$(jq '.kernels[0].wavefront_instructions' "$OUT/$tr-info-json.out")
    [ "$n" = "$want" ] && ok "$tr dump --instr walks all $want instructions of kernel 0" || bad "$tr dump --instr: $n instructions, info says $want"
  fi
  if run $tr-stats 0 "$T" stats "$f" && grep -q "^  unit .*valu" "$OUT/$tr-stats.out" && grep -q "^  format .*sopp" "$OUT/$tr-stats.out" &&
     grep -q "^  class " "$OUT/$tr-stats.out" && grep -q " vmem-load [0-9]" "$OUT/$tr-stats.out" && grep -q "^  footprint .* lines of 64 B" "$OUT/$tr-stats.out" &&
     grep -q "^  trace *records .* B/instr), data values" "$OUT/$tr-stats.out"; then ok "$tr stats"
  else bad "$tr stats: mix, footprint or bytes per instruction missing"; fi
  if [ $have_jq = 1 ]; then
    # The walked instruction count equals the recorded one; the footprint is plausible.
    jq -e --slurpfile i "$OUT/$tr-info-json.out" \
      '(.kernels | map(.wavefront_instructions)) == ($i[0].kernels | map(.wavefront_instructions))
       and (.kernels[0].mix.unit | add) == .kernels[0].wavefront_instructions
       and .kernels[0].memory.footprint.bytes_read > 0 and .kernels[0].memory.footprint.lines >= 1' \
      "$OUT/$tr-stats-json.out" >/dev/null && ok "$tr stats --json agrees with info" || bad "$tr stats --json disagrees with info"
  fi
  run $tr-verify 0 "$T" verify "$f" && grep -q ": OK: " "$OUT/$tr-verify.out" && ok "$tr verify" ||
    bad "$tr verify on a good trace: $(cat "$OUT/$tr-verify.err")"
done
run usage 2 "$T" dump "$OUT/red.gtrace" --bogus && ok "unknown option: usage, exit 2" || true
run nokernel 2 "$T" dump "$OUT/red.gtrace" --kernel 99 && ok "dump --kernel 99: exit 2" || true

echo "== damaged copies: verify fails with one line"
f=$OUT/red.gtrace
size=$(stat -c %s "$f")
one_line() { [ "$(wc -l <"$1")" = 1 ] && grep -q "red-" "$1"; }
cuts="16 100 $((size/7)) $((size/3)) $((size/2)) $((2*size/3)) $((size-40)) $((size-24)) $((size-1))"
for c in $cuts; do
  d=$OUT/red-cut$c.gtrace
  head -c "$c" "$f" >"$d"
  run cut$c 1 "$T" verify "$d" && one_line "$OUT/cut$c.err" && ok "cut at byte $c: $(cat "$OUT/cut$c.err")" ||
    bad "cut at byte $c: verify must fail with one line naming the file: $(head -c 300 "$OUT/cut$c.err")"
done
for k in 1 2 3 4 5 6 7 8 9 10 11; do
  pos=$(( (size - 1) * k / 12 ))
  d=$OUT/red-flip$pos.gtrace
  cp "$f" "$d"
  b=$(od -An -tu1 -j "$pos" -N1 "$d" | tr -d ' ')
  printf "$(printf '\\%03o' $(( b ^ 0xff )))" | dd of="$d" bs=1 seek="$pos" conv=notrunc status=none
  run flip$pos 1 "$T" verify "$d" && one_line "$OUT/flip$pos.err" && ok "byte $pos flipped: $(cat "$OUT/flip$pos.err")" ||
    bad "byte $pos flipped: verify must fail with one line: $(head -c 300 "$OUT/flip$pos.err")"
  # The other commands must fail cleanly too (or succeed where the damage is not on their path).
  for cmd in info stats dump; do
    "$T" $cmd "$d" >/dev/null 2>"$OUT/flip$pos-$cmd.err"; rc=$?
    [ $rc -lt 2 ] || bad "byte $pos flipped: $cmd exit $rc: $(head -c 200 "$OUT/flip$pos-$cmd.err")"
  done
done

echo "== salvage of cut traces"
kernels_of() { "$T" info --json "$1" | jq -c '[.kernels[] | {name, grid, wavefront_instructions, memory_ops}]'; }
nk=$("$T" info --json "$f" | jq '.kernels | length' 2>/dev/null || echo 0)
[ "$nk" -ge 2 ] || bad "reduction trace should have 2 kernels, has $nk"
best=0
for c in $cuts; do
  d=$OUT/red-cut$c.gtrace s=$OUT/red-cut$c.salvaged.gtrace
  "$T" salvage "$d" "$s" >"$OUT/salv$c.out" 2>"$OUT/salv$c.err"; rc=$?
  if [ $rc != 0 ]; then
    # Only a cut inside the header may make salvage give up, with one line.
    if [ $rc = 1 ] && [ $c -le 200 ] && [ "$(wc -l <"$OUT/salv$c.err")" = 1 ] && ! grep -q "not available" "$OUT/salv$c.err"; then ok "salvage cut $c: refused: $(cat "$OUT/salv$c.err")"
    else bad "salvage cut $c: exit $rc: $(head -c 300 "$OUT/salv$c.err")"; fi
    continue
  fi
  if ! "$T" verify "$s" >"$OUT/salv$c.verify" 2>&1; then bad "salvage cut $c: output fails verify: $(cat "$OUT/salv$c.verify")"; continue; fi
  if [ $have_jq = 1 ]; then
    got=$(kernels_of "$s"); n=$(echo "$got" | jq length)
    want=$(kernels_of "$f" | jq -c ".[0:$n]")
    if [ "$got" != "$want" ]; then bad "salvage cut $c: kept kernels differ from the original's first $n"; continue; fi
    [ "$n" -gt "$best" ] && best=$n
    [ $c = $((size-1)) ] && [ "$n" != "$nk" ] && { bad "salvage of a trace cut in its trailer kept $n of $nk kernels"; continue; }
    ok "salvage cut $c: $n complete kernel(s), verify OK"
  else
    ok "salvage cut $c: verify OK"
  fi
done
[ $have_jq = 0 ] || [ "$best" -ge 1 ] && ok "some cut kept complete kernels" || bad "no cut trace salvaged a complete kernel"
cp "$f" "$OUT/red-copy.gtrace"
run salv-complete 0 "$T" salvage "$OUT/red-copy.gtrace" "$OUT/red-copy.salvaged.gtrace" && cmp -s <(kernels_of "$f") <(kernels_of "$OUT/red-copy.salvaged.gtrace") &&
  ok "salvage of a complete trace keeps everything" || bad "salvage of a complete trace: $(head -c 300 "$OUT/salv-complete.err")"

echo "== host-image loads (format 2.6)"
# A load whose values are what the program's copies and memsets wrote there
# records a flag instead of them, and the reader takes the values from the
# copies: the replay must see exactly what it saw with the values recorded
# (--host-image off), from a smaller trace.
R=$BUILD/bin/mgpu-replay
export MGPU_REPLAY_CONFIGS=${MGPU_REPLAY_CONFIGS:-replay/configs}
mkdir -p "$OUT/hi-on" "$OUT/hi-off"
for m in on off; do
  run "hi-rec-$m" 0 "$EMU" --quiet --threads 2 --host-image $m --record "$OUT/hi-$m/va.gtrace" -- "$BUILD/bench/vectoradd" 65536 &&
    run "hi-dump-$m" 0 "$T" dump --kernel 0 --wg 3 "$OUT/hi-$m/va.gtrace" &&
    run "hi-verify-$m" 0 "$T" verify "$OUT/hi-$m/va.gtrace" &&
    (cd "$OUT/hi-$m" && "$OLDPWD/$R" --topo r9nano --stats va.json va.gtrace >va.txt 2>&1) ||
    bad "host image $m: record, dump, verify or replay failed: $(cat "$OUT"/hi-*-$m.err "$OUT/hi-$m/va.txt" 2>/dev/null | head -c 300)"
done
hon=$(grep -c '^    mem [0-9]*: load.* host ' "$OUT/hi-dump-on.out"); hoff=$(grep -c ' host ' "$OUT/hi-dump-off.out")
son=$(stat -c %s "$OUT/hi-on/va.gtrace" 2>/dev/null || echo 0); soff=$(stat -c %s "$OUT/hi-off/va.gtrace" 2>/dev/null || echo 0)
if [ "${hon:-0}" -gt 0 ] && [ "${hoff:-1}" = 0 ] && [ "$son" -gt 0 ] && [ "$son" -lt "$soff" ]; then
  ok "host image: $hon loads flagged host, trace $son bytes (off: none, $soff bytes)"
else bad "host image: $hon loads flagged host (off: $hoff), trace $son bytes (off: $soff)"; fi
if [ -s "$OUT/hi-on/va.json" ] && cmp -s "$OUT/hi-on/va.json" "$OUT/hi-off/va.json" && grep -q '(0 mismatches)' "$OUT/hi-on/va.txt"; then
  ok "host image: the replay's statistics JSON is byte-identical with and without it, data check clean"
else bad "host image: the replay's JSON differs with and without it (or its data check failed)"; fi
run hi-bad 2 "$EMU" --host-image maybe -- "$BUILD/bench/vectoradd" 4096 &&
  head -n 1 "$OUT/hi-bad.err" | grep -q -- '^gcn3-emu: --host-image maybe: expected on or off$' &&
  ok "--host-image maybe: refused, the first line names it" || bad "--host-image maybe: $(head -c 300 "$OUT/hi-bad.err")"

echo "trace-tools: $pass passed, $fail failed"
[ $fail = 0 ]
