#!/usr/bin/env bash
# The end-to-end programs under AddressSanitizer + UBSan (issue 20: make
# test-asan runs the unit tests and these): real HIP programs from
# tests/programs, built by hipcc into $BUILD/programs (not instrumented), run
# under the sanitizer build of gcn3-emu and libamdhip64 ($ASAN_BUILD, the
# sanitizer runtimes preloaded because the program itself is not built with
# them), recorded, and replayed by the sanitizer build of mgpu-replay on a
# single-GPU and a partitioned multi-GPU preset. Any sanitizer report fails.
set -uo pipefail
BUILD=${BUILD:-build}
ASAN_BUILD=${ASAN_BUILD:-build-asan}
OUT=$ASAN_BUILD/asan-programs
mkdir -p "$OUT"
export MGPU_REPLAY_CONFIGS=${MGPU_REPLAY_CONFIGS:-$(realpath replay/configs)}
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
san() { grep -m1 -E 'ERROR: (Address|Leak)Sanitizer|runtime error' "$@" 2>/dev/null; }
for b in "$ASAN_BUILD/bin/gcn3-emu" "$ASAN_BUILD/bin/mgpu-replay"; do
  [ -x "$b" ] || { echo "asan-programs: $b missing (make test-asan builds it)"; exit 1; }
done
# name|program|args
runs=("cas_own|cas_own|" "handles|handles|" "spin-producer|spin_wait|producer" "spin-lds|spin_wait|lds"
      "spin-deadlock|spin_wait|deadlock" "streams_events|streams_events|")
for r in "${runs[@]}"; do
  IFS='|' read -r name prog args <<<"$r"
  bin=$BUILD/programs/$prog
  if [ ! -x "$bin" ]; then bad "$name: $bin missing (make programs)"; continue; fi
  tr=$OUT/$name.gtrace
  # the host program's own leaks are not ours: leak checks stay on for the replay
  LD_PRELOAD="$PRELOAD" ASAN_OPTIONS=halt_on_error=1:detect_leaks=0 timeout 600 \
    "$ASAN_BUILD/bin/gcn3-emu" --quiet --threads 2 --record "$tr" -- "$bin" $args >"$OUT/$name.out" 2>"$OUT/$name.err"
  rc=$?
  if [ $rc != 0 ] || ! grep -q PASS "$OUT/$name.out" || san "$OUT/$name.err" >/dev/null; then
    bad "$name under gcn3-emu (exit $rc): $(san "$OUT/$name.err" || tail -n 2 "$OUT/$name.err" "$OUT/$name.out" | tr '\n' ' ')"
    continue
  fi
  good=1
  for topo in r9nano u-mgpu; do
    timeout 600 "$ASAN_BUILD/bin/mgpu-replay" --topo $topo --threads 2 "$tr" >"$OUT/$name.$topo.out" 2>"$OUT/$name.$topo.err"
    rc=$?
    if [ $rc -gt 1 ] || san "$OUT/$name.$topo.err" >/dev/null; then
      bad "$name replay $topo (exit $rc): $(san "$OUT/$name.$topo.err" || tail -n 2 "$OUT/$name.$topo.err" | tr '\n' ' ')"
      good=0
    fi
  done
  [ $good = 1 ] && ok "$name: emulated, recorded and replayed (r9nano, u-mgpu) with no sanitizer report"
done
echo "asan-programs: $pass passed, $fail failed"
[ $fail = 0 ]
