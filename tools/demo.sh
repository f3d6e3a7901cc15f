#!/usr/bin/env bash
# make demo: run each benchmark program unmodified under gcn3-emu, recording a
# trace, then replay the trace on the four presets. The programs see four
# emulated GPUs and split their work over them (the D-MGPU programming model:
# hipSetDevice, per-device buffers and launches); the D-MGPU preset runs each
# device's kernels on its own GPU, the single-GPU presets (r9nano, m-sgpu) and
# U-MGPU (one logical GPU built of four) run every launch on their one
# logical device.
set -euo pipefail
BUILD=${BUILD:-build}
mkdir -p out
for prog in vectoradd reduction transpose; do
  echo
  echo "=================== $prog ==================="
  echo "\$ gcn3-emu --gpus 4 --record out/$prog.gtrace -- ./$prog"
  "$BUILD/bin/gcn3-emu" --gpus 4 --record "out/$prog.gtrace" -- "$BUILD/bench/$prog"
  echo "trace: out/$prog.gtrace, $(stat -c %s "out/$prog.gtrace") bytes"
  for topo in r9nano m-sgpu u-mgpu d-mgpu; do
    echo
    echo "\$ mgpu-replay --topo $topo out/$prog.gtrace"
    "$BUILD/bin/mgpu-replay" --topo "$topo" --stats "out/$prog-$topo.json" "out/$prog.gtrace"
  done
done
echo
echo "demo: all programs passed under gcn3-emu and replayed on r9nano, m-sgpu, u-mgpu, d-mgpu"
