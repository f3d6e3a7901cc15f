#!/usr/bin/env bash
# golden.sh - the golden set that keeps a refactor honest (DEVELOPERS guide:
# "before moving code, save a golden set and show byte-identical results after").
#
#   tools/golden.sh save DIR      record every workload of make bench (the sizes
#                                 bench.py uses: 1x on one GPU, 4x on one GPU,
#                                 --gpus 4) and the end-to-end test programs,
#                                 replay each trace on the presets bench replays it
#                                 on, keep every --stats JSON and text report
#   tools/golden.sh compare DIR   do the same into DIR.new and compare file by file:
#                                 every JSON, every replay report and the gcn3-trace
#                                 stats of every trace must be byte-identical
#
# BUILD (default build) names the build to use; GOLDEN_SMALL=1 uses the --small
# sizes (a quick check). Traces are recorded with --threads 1 so that a kernel
# whose recorded values depend on the interleaving (atomics) records the same
# trace every time. Exit status: 0 identical, 1 differences (listed), 2 a run failed.
set -uo pipefail
BUILD=${BUILD:-build}
mode=${1:-}; dir=${2:-}
[ -n "$mode" ] && [ -n "$dir" ] || { echo "usage: tools/golden.sh save|compare DIR" >&2; exit 2; }
case $mode in save) out=$dir ;; compare) out=$dir.new ;; *) echo "golden.sh: unknown mode '$mode'" >&2; exit 2 ;; esac
EMU=$BUILD/bin/gcn3-emu; REPLAY=$(realpath -m "$BUILD/bin/mgpu-replay"); TRACE=$BUILD/bin/gcn3-trace
for b in "$EMU" "$REPLAY" "$TRACE"; do [ -x "$b" ] || { echo "golden.sh: $b missing (make all)" >&2; exit 2; }; done
export MGPU_REPLAY_CONFIGS=${MGPU_REPLAY_CONFIGS:-$(realpath replay/configs)}
rm -rf "$out"; mkdir -p "$out"
failed=0

# name|program|gpus|args (the bench sizes of benchmarks/bench.py)
if [ "${GOLDEN_SMALL:-0}" = 1 ]; then S1=--small; S4=--small; V1=65536; V4=65536; else S1=; S4=; V1=; V4=4194304; fi
runs=()
for w in aes bitonic fir gd km transpose conv; do
  case $w in aes) sz=1048576 ;; bitonic) sz=131072 ;; fir) sz=262144 ;; gd) sz=1048576 ;; km) sz=131072 ;;
             transpose) sz=4096 ;; conv) sz=2048 ;; esac
  if [ "${GOLDEN_SMALL:-0}" = 1 ]; then a4=--small; ad="--small --gpus 4"; else a4="--size $sz"; ad="--gpus 4"; fi
  runs+=("$w.1gpu|bench/$w|1|$S1|r9nano" "$w.1gpu_4x|bench/$w|1|$a4|m-sgpu u-mgpu" "$w.4gpu|bench/$w|4|$ad|d-mgpu")
done
for w in vectoradd reduction; do
  runs+=("$w.1gpu|bench/$w|1|$V1|r9nano" "$w.1gpu_4x|bench/$w|1|$V4|m-sgpu u-mgpu" "$w.4gpu|bench/$w|4|$V4|d-mgpu")
done
# end-to-end programs (tests/programs) that replay
for p in peer_copy:2 zero_copy:1 cas_own:1 dyn_shared:1 warp_ops:1 streams_events:1 managed:1; do
  runs+=("${p%%:*}|programs/${p%%:*}|${p##*:}||r9nano d-mgpu")
done

for r in "${runs[@]}"; do
  IFS='|' read -r name prog gpus args presets <<<"$r"
  bin=$BUILD/$prog
  [ -x "$bin" ] || { echo "golden.sh: $bin missing (make programs)" >&2; failed=1; continue; }
  tr=$out/$name.gtrace
  # shellcheck disable=SC2086
  if ! "$EMU" --quiet --threads 1 --gpus "$gpus" --record "$tr" -- "$bin" $args >"$out/$name.emu.out" 2>"$out/$name.emu.err"; then
    echo "golden.sh: recording $name failed: $(tail -n 2 "$out/$name.emu.err" | tr '\n' ' ')" >&2; failed=1; continue
  fi
  "$TRACE" stats "$tr" >"$out/$name.trace-stats.txt" 2>&1
  for p in $presets; do
    # the trace path inside the JSON is the same in DIR and DIR.new: replay from inside
    (cd "$out" && "$REPLAY" --topo "$p" --stats "$name.$p.json" "$name.gtrace" >"$name.$p.txt" 2>&1) \
      || { echo "golden.sh: replay $name on $p failed: $(tail -n 2 "$out/$name.$p.txt" | tr '\n' ' ')" >&2; failed=1; }
    sed -i '/^replay: .* s wall/d' "$out/$name.$p.txt"   # wall-clock line: not an output
  done
  rm -f "$tr"
  echo "golden.sh: $name ($presets)"
done
[ $failed = 0 ] || exit 2
[ "$mode" = save ] && { echo "golden.sh: saved $(ls "$out" | wc -l) files in $out"; exit 0; }

diffs=0
for f in "$dir"/*.json "$dir"/*.txt; do
  g=$out/$(basename "$f")
  if [ ! -f "$g" ]; then echo "missing: $g"; diffs=$((diffs+1))
  elif ! cmp -s "$f" "$g"; then echo "differs: $(basename "$f")"; diffs=$((diffs+1)); fi
done
n=$(ls "$dir"/*.json "$dir"/*.txt | wc -l)
echo "golden.sh: $((n - diffs)) of $n files byte-identical"
[ $diffs = 0 ]
