#!/usr/bin/env bash
# The R9 Nano hardware probes (../shared/hw-r9nano/README.md) through record
# and replay: dram_read, l2_read and the ALU probe as their exact instruction
# sequences (benchmarks/micro/hw_probes.hip), the empty kernel
# (tests/programs/empty_kernel.hip); least-squares slopes beside the
# hardware's (benchmarks/micro/hw_fit.py), 5% tolerance.
#   BUILD=build bash benchmarks/micro/hw-probes.sh [--full] [--out DIR] [--set key=value ...]
# --full: every N of the hardware runs (make validation; a few minutes);
# default: a reduced set (tests/e2e/hw-probes.sh). Writes DIR/table.md
# (default $BUILD/hw-probes). Exit 1 if a checked slope is off by more than 5%.
set -u
BUILD=${BUILD:-build}
PY=${PYTHON:-/usr/bin/python3}
FULL=
OUT=$BUILD/hw-probes
SETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --full) FULL=full ;;
    --out) OUT=$2; shift ;;
    --set) SETS+=(--set "$2"); shift ;;
    *) echo "hw-probes.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
for f in "$EMU" "$REPLAY" "$BUILD/micro/hw_probes" "$BUILD/programs/empty_kernel"; do
  [ -x "$f" ] || { echo "hw-probes.sh: $f missing (make BUILD=$BUILD all programs)" >&2; exit 2; }
done
export MGPU_REPLAY_CONFIGS=${MGPU_REPLAY_CONFIGS:-$(realpath replay/configs)}
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.list
for p in dram l2 alu empty; do
  if [ $p = empty ]; then cmd=("$BUILD/programs/empty_kernel"); else cmd=("$BUILD/micro/hw_probes" $p $FULL); fi
  if ! "$EMU" --quiet --record "$OUT/$p.gtrace" -- "${cmd[@]}" >"$OUT/$p.list" 2>"$OUT/$p.err"; then
    echo "FAIL record $p: $(tail -n 2 "$OUT/$p.err" | tr '\n' ' ')"; exit 1
  fi
  if ! "$REPLAY" --topo r9nano --quiet "${SETS[@]}" --stats "$OUT/$p.json" "$OUT/$p.gtrace" >"$OUT/$p.replay" 2>&1; then
    echo "FAIL replay $p: $(tail -n 2 "$OUT/$p.replay" | tr '\n' ' ')"; exit 1
  fi
done
"$PY" benchmarks/micro/hw_fit.py "$OUT" "$OUT/table.md"
