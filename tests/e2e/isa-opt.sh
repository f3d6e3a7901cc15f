#!/usr/bin/env bash
# The benchmark programs built at -O0, -O1, -O2 and -O3 (Makefile: $(BUILD)/bench/NAME,
# NAME-O0, NAME-O1, NAME-O3) pass under gcn3-emu: every optimisation level's
# instruction mix runs (issue 3, "Done when"). Each run must print PASS and exit 0.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
OUT=$BUILD/e2e/isa-opt
mkdir -p "$OUT"
pass=0; fail=0
# smaller problems at -O0/-O1 (several times the instructions of -O2/-O3)
args_for() {
  case $1-$2 in
    vectoradd-O0|vectoradd-O1) echo 131072 ;;
    reduction-O0|reduction-O1) echo 262144 ;;
    transpose-O0|transpose-O1) echo "512 512" ;;
  esac
}
for prog in vectoradd reduction transpose; do
  for opt in O0 O1 O2 O3; do
    bin=$BUILD/bench/$prog-$opt
    [ $opt = O2 ] && bin=$BUILD/bench/$prog
    name=$prog-$opt
    if [ ! -x "$bin" ]; then
      fail=$((fail+1)); echo "  FAIL $name: $bin is not built (make BUILD=$BUILD programs)"; continue
    fi
    "$EMU" --quiet -- "$bin" $(args_for $prog $opt) >"$OUT/$name.out" 2>"$OUT/$name.err"
    rc=$?
    if [ $rc = 0 ] && grep -q PASS "$OUT/$name.out"; then
      pass=$((pass+1)); echo "  ok   $name"
    else
      fail=$((fail+1))
      echo "  FAIL $name (exit $rc): $(tail -n 3 "$OUT/$name.err" "$OUT/$name.out" | tr '\n' ' ')"
    fi
  done
done
echo "isa-opt: $pass passed, $fail failed"
[ $fail = 0 ]
