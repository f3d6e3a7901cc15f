#!/usr/bin/env bash
# Short libFuzzer campaigns under ASan and UBSan (built by `make fuzz`,
# mk/fuzz.mk): the trace reader (fuzz/trace_reader_fuzz.c, FUZZ_SECONDS,
# default 45 s) and the whole replay on a small machine (fuzz/replay_fuzz.c).
# The reader's seeds: the checked-in corpus, the tests' golden traces, and
# small traces recorded now from the benchmark and test programs (so that the
# seeds are in the format version this build writes). The replay's campaign
# starts from the checked-in corpus and golden traces only (the awaits-*.seed
# ones hold awaits, the regress-replay-* ones once failed), libFuzzer -seed=1,
# FUZZ_REPLAY_RUNS inputs (default 20000, a few seconds: coverage feedback
# makes longer runs wander differently from run to run);
# FUZZ_REPLAY_SECONDS=S runs S seconds instead (what a fuzzing session uses). Any crash, sanitizer report, leak,
# timeout or failed property is a failure; the reproducer is left in
# $BUILD/fuzz/findings.
#   FUZZ_SECONDS=600 FUZZ_REPLAY_SECONDS=600 BUILD=build bash tests/e2e/fuzz.sh   # longer runs
set -uo pipefail
BUILD=${BUILD:-build}
SECS=${FUZZ_SECONDS:-45}
RSECS=${FUZZ_REPLAY_SECONDS:-}
RRUNS=${FUZZ_REPLAY_RUNS:-20000}
RUN=$BUILD/fuzz/run
FIND=$BUILD/fuzz/findings

# Build (or bring up to date) the target. Called from `make e2e`: do not
# inherit the parent make's jobserver.
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s BUILD="$BUILD" fuzz >"$BUILD/fuzz-build.log" 2>&1; then
  echo "  FAIL make fuzz: $(grep -m3 -i error "$BUILD/fuzz-build.log" | tr '\n' ' ')"
  exit 1
fi

rm -rf "$RUN"; mkdir -p "$RUN/corpus" "$FIND"
cp fuzz/corpus/trace_reader/* "$RUN/corpus/" 2>/dev/null
find tests -name '*.gtrace' -size -256k -exec cp {} "$RUN/corpus/" \; 2>/dev/null
if [ -x "$BUILD/bin/gcn3-emu" ]; then
  for p in "bench/vectoradd 256" "bench/reduction 1024" "bench/transpose 32 32" "programs/spin_wait producer 16" \
           "programs/spin_wait lds"; do
    set -- $p; prog=$1; shift
    [ -x "$BUILD/$prog" ] || continue
    "$BUILD/bin/gcn3-emu" --quiet --threads 1 --record "$RUN/corpus/fresh-${prog##*/}-$1.gtrace" -- "$BUILD/$prog" "$@" \
      >/dev/null 2>&1 || echo "  note: could not record a seed from $prog"
  done
fi
n=$(ls "$RUN/corpus" | wc -l)
[ "$n" -gt 0 ] || { echo "  FAIL fuzz: no seed inputs"; exit 1; }

fail=0
# campaign TARGET CORPUS WHAT LIMIT... (libFuzzer limit flags)
campaign() {
  local fz=$BUILD/fuzz/$1 corpus=$2 what=$3 log=$RUN/$1.log
  shift 3
  echo "  fuzzing $what ($*) from $(ls "$corpus" | wc -l) seeds"
  "$fz" "$@" -timeout=20 -rss_limit_mb=2048 -max_len=262144 -dict=fuzz/trace_reader.dict \
    -artifact_prefix="$FIND/" -print_final_stats=1 "$corpus" >"$log" 2>&1
  local rc=$?
  local runs cov
  runs=$(grep -m1 '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n1)
  if [ $rc = 0 ] && ! grep -q "ERROR: \|fuzz property failed" "$log"; then
    echo "  ok   fuzz ${fz##*/}: ${runs:-?} inputs, ${cov:-cov: ?}, no finding"
    return 0
  fi
  echo "  FAIL fuzz ${fz##*/} (exit $rc): $(grep -m1 -E 'ERROR: |fuzz property failed|runtime error' "$log")"
  grep -E '^    #[0-9]+ .* (/[^ ]*/)?(traceformat|replay|gcn|fuzz)/[^ ]*\.c:' "$log" | head -n 8
  local art
  art=$(grep -o "Test unit written to [^ ]*" "$log" | tail -n1 | sed 's/Test unit written to //')
  echo "  input: ${art:-see $log}; reproduce: $fz ${art:-FILE}"
  return 1
}
campaign trace_reader_fuzz "$RUN/corpus" "the trace reader" -max_total_time="$SECS" || fail=1
mkdir -p "$RUN/replay-corpus"
cp fuzz/corpus/trace_reader/* "$RUN/replay-corpus/" 2>/dev/null
find tests -name '*.gtrace' -size -256k -exec cp {} "$RUN/replay-corpus/" \; 2>/dev/null
if [ -n "$RSECS" ]; then
  campaign replay_fuzz "$RUN/replay-corpus" "the replay (small machine)" -max_total_time="$RSECS" || fail=1
else
  campaign replay_fuzz "$RUN/replay-corpus" "the replay (small machine)" -seed=1 -runs="$RRUNS" || fail=1
fi
exit $fail
