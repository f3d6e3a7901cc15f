#!/usr/bin/env bash
# Deterministic parallel replay (mgpu-replay --threads T): the MGMark-style
# benchmark programs (benchmarks/{aes,bitonic,fir,gd,km,transpose,conv}.hip,
# --small) are recorded on four emulated GPUs and replayed on d-mgpu and
# u-mgpu (pcie-bus; u-mgpu also p2p-ring, d-mgpu also pcie-tree) and on
# r9nano with T = 1, 2 and 3 threads: the stats JSON must be identical byte
# for byte and the text output identical apart from the wall-clock line, the
# data check OK, and the 4-GPU replays split into 4 partitions. With the cut
# inside a GPU (sim.gpu_partitions=3: each GPU's memory side and two groups of
# shader arrays) the same holds on r9nano, m-sgpu, u-mgpu and d-mgpu (3 or 12
# partitions); with the DRAM channels in a partition of their own as well
# (sim.dram_partition=1) on r9nano and d-mgpu (4 or 16 partitions), and with the L2
# banks in two partitions of their own besides (sim.l2_partitions=2: 6 or 24).
# A sampled replay (--sample) of r9nano with the cut and the DRAM partition runs
# its partitions on the threads too: identical JSON for T = 1, 2, 3, and on km
# something must have been fast-forwarded (sample.c "Partitions"); so does one
# of u-mgpu (a partition per GPU: km's launches fast-forwarded whole, and the
# sample programs' workgroup level, on GPUs of 4 shader arrays, and wave level,
# whose fast-forwards reach the other GPUs' L2 banks at the serial points), and
# one of d-mgpu (a dispatcher per GPU: the kernel level's groups change at the
# serial points; km for 6 iterations).
# Bad --threads values are refused with a one-line message; the
# barrier modes (MGPU_REPLAY_BARRIER=spin|sleep) give the same JSON. The critical path in
# events (totals.critical_path_events) lies between the busiest partition's events and
# the sum of all partitions' (totals.partition_events).
# Prints one "ok/FAIL name" line per check; exits non-zero on any failure.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
OUT=$BUILD/e2e-parallel
mkdir -p "$OUT"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }

WORKLOADS=${WORKLOADS:-"aes bitonic fir gd km transpose conv"}
for bin in "$EMU" "$REPLAY"; do
  [ -x "$bin" ] || { echo "  FAIL parallel: $bin missing (make BUILD=$BUILD all programs)"; exit 1; }
done

# "partitions" and the data check of a stats JSON: prints "<partitions> <ok>".
jsum() {
  python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d['check']
okd = c['load_mismatches'] == 0 and c['d2h_mismatches'] == 0 and c['walk_errors'] == 0 and c['lds_mismatches'] == 0
# the critical path in events: at least any one partition's events (it is a
# sum over windows of the most any partition handled), at most all of them
t = d['totals']
ev = [p['events'] for p in t['partition_events']]
crit = t['critical_path_events']
okd = okd and len(ev) == t['partitions'] and max(ev) <= crit <= sum(ev) and (len(ev) > 1 or crit == ev[0])
# the interconnect's hubs, when they have a partition, are the last one and belong to no GPU
hubs = [i for i, p in enumerate(t['partition_events']) if p['holds'] == 'interconnect hubs']
okd = okd and all(t['partition_events'][i]['gpu'] is None for i in hubs) and hubs in ([], [len(ev) - 1])
print(t['partitions'], int(okd), len(hubs))
EOF
}

for prog in $WORKLOADS; do
  bin=$BUILD/bench/$prog
  if [ ! -x "$bin" ]; then
    bad "$prog: $bin missing (make BUILD=$BUILD programs)"
    continue
  fi
  tr=$OUT/$prog.gtrace
  if ! "$EMU" --quiet --gpus 4 --record "$tr" -- "$bin" --small --gpus 4 >"$OUT/$prog.rec.out" 2>"$OUT/$prog.rec.err"; then
    bad "$prog: record failed: $(tail -n 2 "$OUT/$prog.rec.err" | tr '\n' ' ')"
    continue
  fi
  for cfg in "d-mgpu" "u-mgpu" "u-mgpu:p2p-ring" "d-mgpu:pcie-tree" "r9nano" \
             "r9nano+cut" "m-sgpu+cut" "u-mgpu+cut" "d-mgpu+cut" "r9nano+dram" "d-mgpu+dram" \
             "r9nano+l2" "d-mgpu+l2" "r9nano+smp" "u-mgpu+smpu"; do
    cut=0; per=3; smp=0
    case $cfg in
      *+smp) cut=1; per=4; smp=1; cfg=${cfg%+smp} ;;
      *+smpu) smp=1; cfg=${cfg%+smpu} ;;
      *+cut) cut=1; cfg=${cfg%+cut} ;;
      *+dram) cut=1; per=4; cfg=${cfg%+dram} ;;
      *+l2) cut=1; per=6; cfg=${cfg%+l2} ;;
    esac
    topo=${cfg%%:*}
    set_args=()
    [ "$cfg" != "$topo" ] && set_args=(--set "interconnect.kind=${cfg#*:}")
    [ $cut = 1 ] && set_args+=(--set sim.gpu_partitions=3)
    [ $per -ge 4 ] && set_args+=(--set sim.dram_partition=1)
    [ $per = 6 ] && set_args+=(--set sim.l2_partitions=2)
    [ $smp = 1 ] && set_args+=(--sample)
    # one GPU without the cut (a single partition: threads change nothing) and
    # the cut inside a GPU on two programs only
    case "$smp:$cut:$cfg:$prog" in
      1:0:u-mgpu:km|0:0:r9nano:bitonic|0:0:r9nano:km|0:0:d-mgpu*|0:0:u-mgpu*|*:1:*:bitonic|*:1:*:km) ;;
      *) continue ;;
    esac
    name=$prog-${cfg/:/-}; [ $cut = 1 ] && name=$name-cut; [ $per = 4 ] && name=$name-dram; [ $per = 6 ] && name=$name-l2
    [ $smp = 1 ] && name=$name-sampled
    good=1
    for t in 1 2 3; do
      if ! "$REPLAY" --topo "$topo" "${set_args[@]}" --threads $t --stats "$OUT/$name-t$t.json" "$tr" \
           >"$OUT/$name-t$t.out" 2>"$OUT/$name-t$t.err"; then
        bad "$name: replay with --threads $t failed: $(tail -n 2 "$OUT/$name-t$t.err" | tr '\n' ' ')"
        good=0
        break
      fi
      grep -v '^replay: ' "$OUT/$name-t$t.out" >"$OUT/$name-t$t.txt"
    done
    [ $good = 1 ] || continue
    if cmp -s "$OUT/$name-t1.json" "$OUT/$name-t2.json" && cmp -s "$OUT/$name-t1.json" "$OUT/$name-t3.json"; then
      ok "$name: stats JSON identical for --threads 1, 2, 3"
    else
      bad "$name: stats JSON differs between thread counts ($(cmp "$OUT/$name-t1.json" "$OUT/$name-t2.json" | head -1))"
    fi
    if cmp -s "$OUT/$name-t1.txt" "$OUT/$name-t2.txt" && cmp -s "$OUT/$name-t1.txt" "$OUT/$name-t3.txt"; then
      ok "$name: text output identical"
    else
      bad "$name: text output differs between thread counts"
    fi
    read -r parts okd hubs < <(jsum "$OUT/$name-t1.json")
    want=4; case $topo in r9nano|m-sgpu) want=1 ;; esac
    [ $cut = 1 ] && want=$((want * per))
    # the PCIe bus's or tree's hubs in a partition of their own (not with p2p links)
    want_hubs=0
    case $cfg in u-mgpu|d-mgpu|d-mgpu:pcie-tree) want=$((want + 1)); want_hubs=1 ;; esac
    if [ "$parts" = "$want" ] && [ "$okd" = 1 ] && [ "$hubs" = "$want_hubs" ]; then
      ok "$name: $parts partition(s) ($hubs of the interconnect's hubs), data check OK, critical path within its bounds"
    else
      bad "$name: partitions $parts (want $want), hubs' $hubs (want $want_hubs), data check, critical path and hubs ok=$okd"
    fi
    if [ $smp = 1 ] && [ $prog = km ]; then
      skipped=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sampled"]["skipped_wavefront_instructions"])' "$OUT/$name-t1.json" 2>/dev/null)
      if [ "${skipped:-0}" -gt 0 ] && grep -q "^replay: .*(3 thread(s)" "$OUT/$name-t3.out"; then
        ok "$name: $skipped wavefront instructions fast-forwarded, 3 threads replayed"
      else
        bad "$name: sampled replay skipped ${skipped:-nothing} or did not run on 3 threads ($(grep '^replay: ' "$OUT/$name-t3.out"))"
      fi
    fi
  done
done

# Sampled replays of a partition per GPU on 1, 2 and 3 threads: identical JSON,
# the data check clean, at least MIN kernels sampled at that level, on GPUS
# distinct GPUs. u-mgpu: the workgroup level (sample_deep, on GPUs of 4 shader
# arrays: enough rounds) and the wave level (sample_waves: 1,024 waves, one per
# SIMD of the 4 GPUs; with sample.max_bound=0: its bound of about 50% is over the
# default, which runs it in full); d-mgpu (a dispatcher per GPU: the kernel level's groups
# change at the serial points): km over 4 GPUs for 6 iterations, launches
# fast-forwarded whole on every GPU.
# name|topo|GPUs recorded|level|MIN|GPUS|program and arguments|replay options
for spec in "sample_deep|u-mgpu|1|workgroup_level|1|1|programs/sample_deep|--set gpu.shader_arrays=4" \
            "sample_waves|u-mgpu|1|wave_level|1|1|programs/sample_waves|--set sample.max_bound=0" \
            "km6|d-mgpu|4|whole|4|4|bench/km --small --gpus 4 --iters 6|"; do
  IFS='|' read -r prog topo ng level min ngpu cmd extra <<<"$spec"
  [ -x "$BUILD/${cmd%% *}" ] || continue
  tr=$OUT/$prog.gtrace name=$prog-$topo-sampled good=1
  # shellcheck disable=SC2086
  if ! "$EMU" --quiet --gpus "$ng" --record "$tr" -- $BUILD/$cmd >"$OUT/$prog.rec.out" 2>"$OUT/$prog.rec.err"; then
    bad "$prog: record failed: $(tail -n 2 "$OUT/$prog.rec.err" | tr '\n' ' ')"
    continue
  fi
  for t in 1 2 3; do
    # shellcheck disable=SC2086
    if ! "$REPLAY" --topo "$topo" $extra --sample --threads $t --stats "$OUT/$name-t$t.json" "$tr" \
         >"$OUT/$name-t$t.out" 2>"$OUT/$name-t$t.err"; then
      bad "$name: replay with --threads $t failed: $(tail -n 2 "$OUT/$name-t$t.err" | tr '\n' ' ')"
      good=0
      break
    fi
  done
  [ $good = 1 ] || continue
  res=$(python3 - "$level" "$min" "$ngpu" "$OUT/$name-t1.json" <<'EOF'
import json, sys
level, least, ngpu = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = json.load(open(sys.argv[4]))
c, sm = d['check'], d['sampled']
ok = c['load_mismatches'] == 0 and c['d2h_mismatches'] == 0 and c['d2h_checked'] > 0 and c['walk_errors'] == 0
gpus = {k['gpu'] for k in d['kernels'] if 'sampled' in k}
ok = ok and sm[level] >= least and len(gpus) >= ngpu and sm['skipped_wavefront_instructions'] > 0
ok = ok and d['totals']['partitions'] == 5
print(sm[level], sm['skipped_wavefront_instructions'], int(ok))
EOF
)
  read -r count skipped okd <<<"$res"
  if cmp -s "$OUT/$name-t1.json" "$OUT/$name-t2.json" && cmp -s "$OUT/$name-t1.json" "$OUT/$name-t3.json" &&
     [ "$okd" = 1 ] && grep -q "^replay: .*(3 thread(s), 5 partition(s)" "$OUT/$name-t3.out"; then
    ok "$name: $count kernel(s) sampled (${level/_/ }) on $ngpu+ GPU(s), $skipped wavefront instructions skipped, data check clean, JSON identical for --threads 1, 2, 3"
  else
    bad "$name: ${level/_/ } ${count:-?} (want >= $min), skipped ${skipped:-?}, ok=${okd:-?}, JSON $(cmp "$OUT/$name-t1.json" "$OUT/$name-t2.json" | head -1) $(grep '^replay: ' "$OUT/$name-t3.out")"
  fi
done

# Bad values: one line naming the option, exit status 2.
any=$OUT/bitonic.gtrace
for v in 0 -1 x 2000; do
  "$REPLAY" --topo d-mgpu --threads "$v" "$any" >"$OUT/bad.out" 2>"$OUT/bad.err"
  rc=$?
  if [ $rc = 2 ] && grep -q -- "--threads '$v'" "$OUT/bad.err" && [ "$(wc -l <"$OUT/bad.err")" = 1 ]; then
    ok "--threads $v refused: $(cat "$OUT/bad.err")"
  else
    bad "--threads $v: rc=$rc, $(head -c 200 "$OUT/bad.err")"
  fi
done

# The cut inside a GPU: more partitions than shader arrays + 1 is refused in one line.
"$REPLAY" --topo r9nano --set sim.gpu_partitions=18 "$any" >"$OUT/bad.out" 2>"$OUT/bad.err"
rc=$?
if [ $rc = 2 ] && grep -q "sim.gpu_partitions = 18" "$OUT/bad.err" && [ "$(wc -l <"$OUT/bad.err")" = 1 ]; then
  ok "sim.gpu_partitions=18 refused: $(cat "$OUT/bad.err")"
else
  bad "sim.gpu_partitions=18: rc=$rc, $(head -c 200 "$OUT/bad.err")"
fi

# --threads on one partition says so on stderr, once, naming the cut; on 4 GPUs it says nothing.
"$REPLAY" --quiet --topo r9nano --threads 2 "$any" >"$OUT/note.out" 2>"$OUT/note.err"
"$REPLAY" --quiet --topo d-mgpu --threads 2 "$any" >"$OUT/note4.out" 2>"$OUT/note4.err"
if [ "$(wc -l <"$OUT/note.err")" = 1 ] && grep -q "one partition.*sim.gpu_partitions=5 --set sim.dram_partition=1" "$OUT/note.err" &&
   [ ! -s "$OUT/note4.err" ]; then
  ok "--threads 2 on one partition noted: $(cut -c1-100 "$OUT/note.err")..."
else
  bad "--threads 2 note: r9nano: $(head -c 200 "$OUT/note.err"); d-mgpu: $(head -c 200 "$OUT/note4.err")"
fi

# The DRAM's own partition needs the cut inside the GPU: refused in one line without it.
"$REPLAY" --topo r9nano --set sim.dram_partition=1 "$any" >"$OUT/bad.out" 2>"$OUT/bad.err"
rc=$?
if [ $rc = 2 ] && grep -q "sim.dram_partition = 1 needs sim.gpu_partitions >= 2" "$OUT/bad.err" &&
   [ "$(wc -l <"$OUT/bad.err")" = 1 ]; then
  ok "sim.dram_partition=1 without the cut refused: $(cat "$OUT/bad.err")"
else
  bad "sim.dram_partition=1 without the cut: rc=$rc, $(head -c 200 "$OUT/bad.err")"
fi

# The L2 banks' own partitions need the DRAM's, and are not built for a unified
# multi-GPU machine yet: both refused in one line.
for c in "r9nano:sim.gpu_partitions=3:sim.l2_partitions=2:needs sim.gpu_partitions >= 2, sim.dram_partition = 1" \
         "u-mgpu:sim.gpu_partitions=3:sim.dram_partition=1:sim.l2_partitions=2:unified multi-GPU topology is not implemented"; do
  IFS=: read -r -a f <<<"$c"
  topo=${f[0]}; want=${f[${#f[@]}-1]}; set_args=()
  for kv in "${f[@]:1:${#f[@]}-2}"; do set_args+=(--set "$kv"); done
  "$REPLAY" --topo "$topo" "${set_args[@]}" "$any" >"$OUT/bad.out" 2>"$OUT/bad.err"
  rc=$?
  if [ $rc = 2 ] && grep -q "sim.l2_partitions.*$want" "$OUT/bad.err" && [ "$(wc -l <"$OUT/bad.err")" = 1 ]; then
    ok "sim.l2_partitions on $topo refused: $(cat "$OUT/bad.err")"
  else
    bad "sim.l2_partitions on $topo: rc=$rc, $(head -c 200 "$OUT/bad.err")"
  fi
done

# The window barrier's mode (MGPU_REPLAY_BARRIER) changes the speed, never the results.
for m in spin sleep; do
  if MGPU_REPLAY_BARRIER=$m "$REPLAY" --topo u-mgpu --threads 2 --stats "$OUT/bar-$m.json" "$any" >/dev/null 2>"$OUT/bar.err" &&
     cmp -s "$OUT/bar-$m.json" "$OUT/bitonic-u-mgpu-t1.json"; then
    ok "MGPU_REPLAY_BARRIER=$m: stats JSON identical to --threads 1"
  else
    bad "MGPU_REPLAY_BARRIER=$m: $(head -c 200 "$OUT/bar.err")"
  fi
done
MGPU_REPLAY_BARRIER=always "$REPLAY" --topo u-mgpu --threads 2 "$any" >"$OUT/bad.out" 2>"$OUT/bad.err"
rc=$?
if [ $rc = 2 ] && grep -q "MGPU_REPLAY_BARRIER=always" "$OUT/bad.err" && [ "$(wc -l <"$OUT/bad.err")" = 1 ]; then
  ok "MGPU_REPLAY_BARRIER=always refused: $(cat "$OUT/bad.err")"
else
  bad "MGPU_REPLAY_BARRIER=always: rc=$rc, $(head -c 200 "$OUT/bad.err")"
fi

echo "parallel: $pass passed, $fail failed"
[ $fail = 0 ]
