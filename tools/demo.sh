#!/usr/bin/env bash
# make demo: run each benchmark program unmodified under gcn3-emu, recording a
# trace, then replay the trace on the four presets.
set -euo pipefail
BUILD=${BUILD:-build}
mkdir -p out
for prog in vectoradd reduction transpose; do
  echo
  echo "=================== $prog ==================="
  echo "\$ gcn3-emu --record out/$prog.gtrace -- ./$prog"
  "$BUILD/bin/gcn3-emu" --record "out/$prog.gtrace" -- "$BUILD/bench/$prog"
  echo "trace: out/$prog.gtrace, $(stat -c %s "out/$prog.gtrace") bytes"
  for topo in r9nano m-sgpu u-mgpu d-mgpu; do
    echo
    echo "\$ mgpu-replay --topo $topo out/$prog.gtrace"
    "$BUILD/bin/mgpu-replay" --topo "$topo" --stats "out/$prog-$topo.json" "out/$prog.gtrace"
  done
done
echo
echo "demo: all programs passed under gcn3-emu and replayed on r9nano, m-sgpu, u-mgpu, d-mgpu"
