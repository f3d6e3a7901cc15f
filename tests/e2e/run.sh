#!/usr/bin/env bash
# End-to-end tests: real HIP programs built by Debian's hipcc for gfx803 run
# unmodified under gcn3-emu (at -O2 and -O0, with 1 and 2 worker threads),
# their traces replay on every preset with the data check OK, and bad input
# (other GPU target, truncated trace, bad config key) gets a one-line error.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
OUT=$BUILD/e2e
mkdir -p "$OUT"
pass=0; fail=0
ok()   { pass=$((pass+1)); echo "  ok   $*"; }
bad()  { fail=$((fail+1)); echo "  FAIL $*"; }

# A crash (signal) is always a failure, whatever the expected status.
crashed() { [ "$1" -ge 128 ]; }

# -O0 code runs about 40x more wavefront instructions (scratch everywhere):
# smaller problems keep the test quick while still using hundreds of workgroups.
o0_args() {
  case $1 in
    vectoradd) echo 131072 ;;   # 512 workgroups
    reduction) echo 262144 ;;   # 256 workgroups
    transpose) echo "512 512" ;; # 256 workgroups
  esac
}

echo "== programs under gcn3-emu"
for prog in vectoradd reduction transpose; do
  for opt in O2 O0; do
    bin=$BUILD/bench/$prog; args=; [ $prog = transpose ] && args="1024 768"
    [ $opt = O0 ] && { bin=$BUILD/bench/$prog-O0; args=$(o0_args $prog); }
    for t in 1 2; do
      name=$prog-$opt-t$t
      "$EMU" --quiet --threads $t --record "$OUT/$name.gtrace" -- "$bin" $args >"$OUT/$name.out" 2>"$OUT/$name.err"
      rc=$?
      if [ $rc = 0 ] && grep -q PASS "$OUT/$name.out"; then ok "$name"
      else bad "$name (exit $rc): $(tail -n 3 "$OUT/$name.err" "$OUT/$name.out" | tr '\n' ' ')"; fi
    done
  done
done

# The D-MGPU programming model: the programs split their work over every
# visible device (hipSetDevice, per-device allocations and launches).
for prog in vectoradd reduction transpose; do
  name=$prog-O2-g4
  args=; [ $prog = transpose ] && args="1024 768"
  "$EMU" --quiet --gpus 4 --threads 2 --record "$OUT/$name.gtrace" -- "$BUILD/bench/$prog" $args >"$OUT/$name.out" 2>"$OUT/$name.err"
  rc=$?
  if [ $rc = 0 ] && grep -q "devices=4: PASS" "$OUT/$name.out"; then ok "$name"
  else bad "$name (exit $rc): $(tail -n 3 "$OUT/$name.err" "$OUT/$name.out" | tr '\n' ' ')"; fi
done

echo "== replay on every preset"
for prog in vectoradd reduction transpose; do
  for opt in O2 O0 O2-g4; do
    tr=$OUT/$prog-$opt-t2.gtrace
    [ $opt = O2-g4 ] && tr=$OUT/$prog-O2-g4.gtrace
    [ -f "$tr" ] || { bad "replay $prog-$opt: no trace"; continue; }
    for topo in r9nano m-sgpu u-mgpu d-mgpu; do
      "$REPLAY" --topo $topo --stats "$OUT/$prog-$opt-$topo.json" "$tr" >"$OUT/$prog-$opt-$topo.txt" 2>&1
      rc=$?
      if [ $rc = 0 ] && grep -q "OK" "$OUT/$prog-$opt-$topo.txt" && ! grep -q "^mismatch:" "$OUT/$prog-$opt-$topo.txt"; then
        ok "replay $prog-$opt $topo"
      else bad "replay $prog-$opt $topo (exit $rc): $(tail -n 3 "$OUT/$prog-$opt-$topo.txt" | tr '\n' ' ')"; fi
    done
  done
done

echo "== determinism: 1 and 2 emulator threads give the same replay"
for prog in vectoradd reduction transpose; do
  for t in 1 2; do
    "$REPLAY" --quiet --topo r9nano --stats "$OUT/$prog-det-t$t.json" "$OUT/$prog-O2-t$t.gtrace" >/dev/null 2>&1
    # every counter, the data check's included (reduction's atomics return
    # nothing: the trace keeps no pre-op values of them, which would depend
    # on how the emulator's threads interleaved them)
    grep -v -e '^ *"trace":' "$OUT/$prog-det-t$t.json" >"$OUT/$prog-det-t$t.cmp" 2>/dev/null
    "$BUILD/bin/gcn3-trace" dump "$OUT/$prog-O2-t$t.gtrace" 2>&1 | grep -v '^event ' >"$OUT/$prog-det-t$t.dump"
  done
  if [ -s "$OUT/$prog-det-t1.cmp" ] && cmp -s "$OUT/$prog-det-t1.cmp" "$OUT/$prog-det-t2.cmp"; then
    ok "$prog: replay statistics identical for traces from 1 and 2 threads"
  else bad "$prog: replay statistics differ between traces from 1 and 2 threads"; fi
  if [ -s "$OUT/$prog-det-t1.dump" ] && cmp -s "$OUT/$prog-det-t1.dump" "$OUT/$prog-det-t2.dump"; then
    ok "$prog: the trace's records are identical for 1 and 2 threads"
  else bad "$prog: records differ between traces from 1 and 2 threads: $(diff "$OUT/$prog-det-t1.dump" "$OUT/$prog-det-t2.dump" | head -n 2 | tr '\n' ' ' | cut -c1-200)"; fi
done

echo "== bad input"
# A program built for another GPU is refused with a message naming its target.
if [ -x "$BUILD/bench-other/vectoradd-gfx906" ]; then
  "$EMU" --quiet -- "$BUILD/bench-other/vectoradd-gfx906" >"$OUT/gfx906.out" 2>&1; rc=$?
  if ! crashed $rc && [ $rc != 0 ] && grep -q gfx906 "$OUT/gfx906.out"; then ok "gfx906 program refused"
  else bad "gfx906 program (exit $rc): $(tail -n 2 "$OUT/gfx906.out" | tr '\n' ' ')"; fi
fi
# A truncated trace opens with a clear error.
tr=$OUT/vectoradd-O2-t1.gtrace
if [ -f "$tr" ]; then
  head -c $(( $(stat -c %s "$tr") / 2 )) "$tr" >"$OUT/truncated.gtrace"
  "$REPLAY" --topo r9nano "$OUT/truncated.gtrace" >"$OUT/truncated.txt" 2>&1; rc=$?
  if ! crashed $rc && [ $rc != 0 ] && [ "$(wc -l <"$OUT/truncated.txt")" -le 3 ] && grep -qi "truncat\|incomplete" "$OUT/truncated.txt"; then
    ok "truncated trace refused"
  else bad "truncated trace (exit $rc): $(head -n 3 "$OUT/truncated.txt" | tr '\n' ' ')"; fi
  # An unknown configuration key is an error naming the key.
  "$REPLAY" --topo r9nano --set gpu.cu_cuont=32 "$tr" >"$OUT/badkey.txt" 2>&1; rc=$?
  if ! crashed $rc && [ $rc != 0 ] && grep -q "cu_cuont" "$OUT/badkey.txt"; then ok "unknown config key refused"
  else bad "unknown config key (exit $rc): $(head -n 2 "$OUT/badkey.txt" | tr '\n' ' ')"; fi
fi

echo "e2e: $pass passed, $fail failed"
[ $fail = 0 ]
