#!/usr/bin/env bash
# Hardware probes (issue 21): the replay on the r9nano preset against
# measurements of a real R9 Nano (../shared/hw-r9nano/README.md): dram_read,
# l2_read, the ALU probe (reduced N sets) and the empty kernel, run by
# benchmarks/micro/hw-probes.sh; every checked slope must be within 5% of the
# hardware's. Writes the table as markdown to $BUILD/e2e-hw-probes/table.md.
set -uo pipefail
BUILD=${BUILD:-build}
OUT=$BUILD/e2e-hw-probes
pass=0; fail=0
echo "== R9 Nano hardware probes (reduced N sets)"
out=$(BUILD="$BUILD" bash benchmarks/micro/hw-probes.sh --out "$OUT" 2>&1)
rc=$?
while read -r st rest; do
  case "$st" in
    ok) pass=$((pass+1)); echo "  ok   $rest" ;;
    FAIL) fail=$((fail+1)); echo "  FAIL $rest" ;;
    info) echo "  info $rest" ;;
  esac
done <<<"$out"
if [ $rc != 0 ] && [ $fail = 0 ]; then fail=1; echo "  FAIL hw-probes.sh: $out"; fi
[ $pass -gt 0 ] || { fail=$((fail+1)); echo "  FAIL no slope was measured"; }
echo "hw-probes: $pass passed, $fail failed"
[ $fail = 0 ]
