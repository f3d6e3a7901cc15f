#!/usr/bin/env bash
# A short libFuzzer campaign on the trace reader (fuzz/trace_reader_fuzz.c,
# built by `make fuzz`, mk/fuzz.mk) under ASan and UBSan. Seeds: the
# checked-in corpus, the tests' golden traces, and small traces recorded
# now from the benchmark programs (so that the seeds are in the format
# version this build writes). Any crash, sanitizer report, leak, timeout or
# failed property is a failure; the reproducer is left in $BUILD/fuzz/findings.
#   FUZZ_SECONDS=600 BUILD=build bash tests/e2e/fuzz.sh   # a longer run
set -uo pipefail
BUILD=${BUILD:-build}
SECS=${FUZZ_SECONDS:-45}
FZ=$BUILD/fuzz/trace_reader_fuzz
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
  for p in "vectoradd 256" "reduction 1024" "transpose 32 32"; do
    set -- $p; prog=$1; shift
    [ -x "$BUILD/bench/$prog" ] || continue
    "$BUILD/bin/gcn3-emu" --quiet --threads 1 --record "$RUN/corpus/fresh-$prog.gtrace" -- "$BUILD/bench/$prog" "$@" \
      >/dev/null 2>&1 || echo "  note: could not record a seed from $prog"
  done
fi
n=$(ls "$RUN/corpus" | wc -l)
[ "$n" -gt 0 ] || { echo "  FAIL fuzz: no seed inputs"; exit 1; }

echo "  fuzzing the trace reader for ${SECS}s from $n seeds"
"$FZ" -max_total_time="$SECS" -timeout=20 -rss_limit_mb=2048 -max_len=262144 -dict=fuzz/trace_reader.dict \
  -artifact_prefix="$FIND/" -print_final_stats=1 "$RUN/corpus" >"$RUN/log" 2>&1
rc=$?
runs=$(grep -m1 '^stat::number_of_executed_units' "$RUN/log" | awk '{print $2}')
cov=$(grep -o 'cov: [0-9]*' "$RUN/log" | tail -n1)
if [ $rc = 0 ] && ! grep -q "ERROR: \|fuzz property failed" "$RUN/log"; then
  echo "  ok   fuzz: ${runs:-?} inputs in ${SECS}s, ${cov:-cov: ?}, no finding"
  exit 0
fi
echo "  FAIL fuzz (exit $rc): $(grep -m1 -E 'ERROR: |fuzz property failed|runtime error' "$RUN/log")"
grep -E '^    #[0-9]+ .* (/[^ ]*/)?(traceformat|fuzz)/[^ ]*\.c:' "$RUN/log" | head -n 8
art=$(grep -o "Test unit written to [^ ]*" "$RUN/log" | tail -n1 | sed 's/Test unit written to //')
echo "  input: ${art:-see $RUN/log}; reproduce: $FZ ${art:-FILE}"
exit 1
