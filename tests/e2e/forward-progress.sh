#!/usr/bin/env bash
# End-to-end tests of forward progress in the emulator (issue 15 scope 1) and
# the deadlock report (issue 20): tests/programs/spin_wait.hip, built by
# mk/prog-samples.mk.
#
#  - workgroups that wait for other workgroups complete under gcn3-emu with
#    --threads 1 and 2 and print PASS: the last workgroup produces, the others
#    spin (with and without s_sleep); a compare-and-swap spin lock; a wave that
#    waits for an LDS flag another wave of its workgroup sets
#  - a wait nobody can end, and a producer that cannot become resident because
#    more workgroups wait than fit on the GPU, are reported as a deadlock within
#    the timeout: the launch returns hipErrorLaunchTimeOut (the program sees it
#    and prints PASS), stderr names the kernel, workgroups, pc and the polled
#    address, and a trace recorded meanwhile stays readable
#  - awaits (trace format 1.2): the producer and the LDS wait are recorded
#    with --threads 1 and 2 into identical wavefront records holding awaits,
#    and replay on r9nano, m-sgpu, u-mgpu and d-mgpu with 0 differences of
#    every kind; the consumers poll longer on u-mgpu (the flag is remote) than
#    on r9nano: the waits are the timing model's, not the recording's
#  - cooperative grid sync (ds_gws_barrier) replays as a barrier of the
#    timing model on r9nano, m-sgpu, d-mgpu and u-mgpu (a kernel over 4
#    partitions: messages to its dispatcher) with 0 differences, identical
#    statistics for --threads 1 and 2 on u-mgpu
#  - retry awaits: the CAS spin lock recorded with one thread (every
#    acquisition succeeded at once) is waited for in the replay: its waves poll
#    the lock until it is free, with no give-up and no walk error, and the data
#    check explains the counter's loads and final value as order-dependent
#    (exit status 0)
#  - tests/programs/sync_patterns.hip (a decoupled look-back scan, a last-block
#    reduction with __threadfence, a CAS-loop float atomicAdd) passes with 1
#    and 2 threads into identical traces and replays on all four presets with
#    0 mismatches and results that check clean (the classes explain the
#    atomic returns and loads that depend on the model's order)
#  - rocPRIM's look-back scan and radix sort, recorded with 1 and 2 threads,
#    replay on r9nano and u-mgpu with 0 mismatches (the look-back's status
#    loads are order-dependent)
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
TRACE=$BUILD/bin/gcn3-trace
BIN=$BUILD/programs/spin_wait
OUT=$BUILD/e2e-forward-progress
mkdir -p "$OUT"
export MGPU_REPLAY_CONFIGS=${MGPU_REPLAY_CONFIGS:-$(realpath replay/configs)}
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
why() { tail -n 3 "$@" 2>/dev/null | grep -v '^==>' | tr '\n' ' ' | cut -c1-300; }
# same_records A B LABEL: the wavefront records (host events aside) of two
# traces are identical
same_records() {
  "$TRACE" dump "$1" 2>&1 | grep -v '^event ' >"$1.dump"
  "$TRACE" dump "$2" 2>&1 | grep -v '^event ' >"$2.dump"
  if [ -s "$1.dump" ] && cmp -s "$1.dump" "$2.dump"; then ok "$3: the trace's records are identical for --threads 1 and 2"
  else bad "$3: records for --threads 1 and 2 differ: $(diff "$1.dump" "$2.dump" | head -n 2 | tr '\n' ' ' | cut -c1-200)"; fi
}
for b in "$EMU" "$REPLAY" "$TRACE" "$BIN"; do
  [ -x "$b" ] || { echo "forward-progress: $b missing (make BUILD=$BUILD all programs)"; exit 1; }
done

echo "== waits that the hardware completes complete, any --threads"
for mode in producer sleepy lock lds; do
  for t in 1 2; do
    timeout 120 "$EMU" --quiet --threads $t -- "$BIN" $mode >"$OUT/$mode-$t.out" 2>"$OUT/$mode-$t.err"
    rc=$?
    if [ $rc = 0 ] && grep -q "PASS $mode" "$OUT/$mode-$t.out"; then ok "$mode, --threads $t"
    elif [ $rc = 124 ]; then bad "$mode, --threads $t: still running after 120 s (a hang)"
    else bad "$mode, --threads $t (exit $rc): $(why "$OUT/$mode-$t.err" "$OUT/$mode-$t.out")"; fi
  done
done

echo "== waits that can never end are reported as a deadlock"
for mode in deadlock toomany; do
  for t in 1 2; do
    tr=$OUT/$mode-$t.gtrace
    rm -f "$tr"
    timeout 120 "$EMU" --quiet --threads $t --record "$tr" -- "$BIN" $mode >"$OUT/$mode-$t.out" 2>"$OUT/$mode-$t.err"
    rc=$?
    if [ $rc = 124 ]; then bad "$mode, --threads $t: still running after 120 s (a hang)"; continue; fi
    if [ $rc != 0 ] || ! grep -q "PASS $mode" "$OUT/$mode-$t.out"; then
      bad "$mode, --threads $t (exit $rc): the program did not get hipErrorLaunchTimeOut: $(why "$OUT/$mode-$t.out" "$OUT/$mode-$t.err")"
      continue
    fi
    sum=$(grep -m1 "deadlock: none of the" "$OUT/$mode-$t.err")
    line=$(grep -m1 "gcn3-emu: deadlock: kernel .*wg ([0-9]*,0,0) wave 0 spins in a loop at pc 0x[0-9a-f]*; polls address 0x[0-9a-f]* (4 bytes" "$OUT/$mode-$t.err")
    if [ -z "$sum" ] || [ -z "$line" ]; then bad "$mode, --threads $t: no deadlock report naming wave, pc and address: $(why "$OUT/$mode-$t.err")"; continue; fi
    if [ $mode = toomany ] && ! echo "$sum" | grep -q "more cannot become resident.*at most [0-9]* workgroups of this kernel fit"; then
      bad "$mode: the report does not say that the waited-for workgroups cannot become resident: $sum"; continue
    fi
    if ! "$TRACE" stats "$tr" >"$OUT/$mode-$t.stats" 2>&1; then bad "$mode, --threads $t: the trace is not readable: $(why "$OUT/$mode-$t.stats")"; continue; fi
    ok "$mode, --threads $t: $(echo "$sum" | cut -c1-150)"
  done
done

echo "== a wait that never repeats its state ends only by --timeout"
tr=$OUT/endless.gtrace
rm -f "$tr"
start=$(date +%s)
timeout 60 "$EMU" --quiet --progress --timeout 3 --record "$tr" -- "$BIN" endless >"$OUT/endless.out" 2>"$OUT/endless.err"
rc=$?; took=$(( $(date +%s) - start ))
if [ $rc = 124 ] && [ $took -le 20 ] && grep -q "still runs after --timeout 3 s" "$OUT/endless.err" \
   && grep -q "gcn3-emu: interrupted: kernel .*wg (0,0,0) wave 0 runs at pc 0x" "$OUT/endless.err" \
   && grep -q "interrupted by signal 15" "$OUT/endless.err" && "$TRACE" stats "$tr" >/dev/null 2>&1; then
  ok "endless: --timeout 3 stopped it after ${took} s with exit status 124, printed where the wave was, the trace is readable"
else bad "endless --timeout 3 (exit $rc after ${took} s): $(why "$OUT/endless.err")"; fi
np=$(grep -c "^gcn3-emu: kernel .*endless.*: 0 of 1 workgroups done, 1 resident, [0-9.]* s$" "$OUT/endless.err")
if [ "${np:-0}" -ge 2 ]; then ok "gcn3-emu --progress (not a terminal): $np progress lines for the kernel that ran 3 s"
else bad "gcn3-emu --progress: ${np:-0} progress lines $(grep -m2 'workgroups done' "$OUT/endless.err")"; fi

echo "== awaits: waits recorded once, replayed by the timing model"
jget() { sed -n "s/^ *\"$2\": \([0-9]*\),\{0,1\}$/\1/p" "$1" | tail -n 1; }
for mode in producer lds; do
  for t in 1 2; do
    timeout 120 "$EMU" --quiet --threads $t --record "$OUT/aw-$mode-$t.gtrace" -- "$BIN" $mode >"$OUT/aw-rec.out" 2>"$OUT/aw-rec.err" \
      || bad "$mode record --threads $t: $(why "$OUT/aw-rec.err" "$OUT/aw-rec.out")"
    "$TRACE" dump "$OUT/aw-$mode-$t.gtrace" 2>&1 | grep -v '^event ' >"$OUT/aw-$mode-$t.dump"
  done
  n=$(grep -c 'await @' "$OUT/aw-$mode-1.dump")
  # A kernel that waits on other workgroups runs on one emulator thread
  # (gcn_program_sync_reasons), so its records do not depend on --threads.
  if [ "${n:-0}" -gt 0 ] && cmp -s "$OUT/aw-$mode-1.dump" "$OUT/aw-$mode-2.dump"; then
    ok "$mode: $n awaits recorded; the wavefront records are identical for --threads 1 and 2"
  else bad "$mode: ${n:-0} awaits; records for --threads 1 and 2 differ: $(diff "$OUT/aw-$mode-1.dump" "$OUT/aw-$mode-2.dump" | head -n 2 | tr '\n' ' ')"; fi
  for topo in r9nano m-sgpu u-mgpu d-mgpu; do
    timeout 120 "$REPLAY" --topo $topo --stats "$OUT/aw-$mode-$topo.json" "$OUT/aw-$mode-1.gtrace" >"$OUT/aw-$mode-$topo.out" 2>"$OUT/aw-$mode-$topo.err"
    rc=$?
    lm=$(jget "$OUT/aw-$mode-$topo.json" load_mismatches); am=$(jget "$OUT/aw-$mode-$topo.json" atomic_order_mismatches)
    dm=$(jget "$OUT/aw-$mode-$topo.json" lds_mismatches); hm=$(jget "$OUT/aw-$mode-$topo.json" d2h_mismatches)
    we=$(jget "$OUT/aw-$mode-$topo.json" walk_errors); sp=$(jget "$OUT/aw-$mode-$topo.json" spin_iterations)
    if [ $rc = 0 ] && [ "$lm$am$dm$hm$we" = 00000 ] && [ "${sp:-0}" -gt 0 ]; then
      ok "$mode replay $topo: 0 differences of every kind, $sp wait iterations polled by the model"
    else bad "$mode replay $topo (exit $rc): loads $lm atomics $am lds $dm d2h $hm walk $we spins ${sp:-?} $(why "$OUT/aw-$mode-$topo.err")"; fi
  done
done
# An LDS wait recorded without LDS values (gcn3-emu --lds-values none, trace 2.3): the replay
# has no flag value to poll, so the wait ends as recorded: same kernel time, no give-ups.
timeout 120 "$EMU" --quiet --threads 1 --lds-values none --record "$OUT/aw-ldsnone.gtrace" -- "$BIN" lds \
  >"$OUT/aw-rec.out" 2>"$OUT/aw-rec.err" || bad "lds record --lds-values none: $(why "$OUT/aw-rec.err" "$OUT/aw-rec.out")"
timeout 120 "$REPLAY" --topo r9nano --stats "$OUT/aw-ldsnone.json" "$OUT/aw-ldsnone.gtrace" >"$OUT/aw-ldsnone.out" 2>"$OUT/aw-ldsnone.err"
rc=$?
sp=$(jget "$OUT/aw-ldsnone.json" spin_iterations); gu=$(jget "$OUT/aw-ldsnone.json" await_give_ups)
c0=$(awk '$1 == "0" {print $4}' "$OUT/aw-lds-r9nano.out"); c1=$(awk '$1 == "0" {print $4}' "$OUT/aw-ldsnone.out")
if [ $rc = 0 ] && [ "${sp:-0}" -gt 0 ] && [ "${gu:-1}" = 0 ] && [ -n "$c0" ] && [ "$c0" = "$c1" ] &&
   grep -q "^not checked: the LDS" "$OUT/aw-ldsnone.out"; then
  ok "lds wait without LDS values: ends as recorded ($sp wait iterations polled, 0 give-ups, $c1 cycles as with values)"
else bad "lds wait --lds-values none (exit $rc): spins ${sp:-?} give-ups ${gu:-?} cycles ${c1:-?} vs ${c0:-?} $(why "$OUT/aw-ldsnone.err")"; fi
s1=$(jget "$OUT/aw-producer-r9nano.json" spin_iterations); s4=$(jget "$OUT/aw-producer-u-mgpu.json" spin_iterations)
c1=$(jget "$OUT/aw-producer-r9nano.json" wait_cycles); c4=$(jget "$OUT/aw-producer-u-mgpu.json" wait_cycles)
if [ "${s1:-0}" -gt 0 ] && [ "${s4:-0}" -gt "${s1:-0}" ] && [ "${c1:-0}" -gt 0 ] && [ "${c4:-0}" -gt "${c1:-0}" ]; then
  ok "producer: the consumers poll longer on u-mgpu ($s4 iterations, $c4 wave-cycles waiting) than on r9nano ($s1, $c1): the waits come from the timing model"
else bad "producer: spin iterations r9nano ${s1:-?}, u-mgpu ${s4:-?}; wait cycles ${c1:-?}, ${c4:-?} (u-mgpu must poll longer: the flag is remote)"; fi

echo "== GCN3EMU_NO_AWAITS=1: every iteration recorded (to measure what awaits save)"
GCN3EMU_NO_AWAITS=1 timeout 120 "$EMU" --quiet --threads 1 --record "$OUT/na-producer.gtrace" -- "$BIN" producer >"$OUT/na.out" 2>&1
na=$("$TRACE" dump "$OUT/na-producer.gtrace" --no-data 2>/dev/null | grep -c 'await @')
if grep -q "PASS producer" "$OUT/na.out" && [ "$na" = 0 ] && [ -f "$OUT/aw-producer-1.gtrace" ]; then
  ok "producer without awaits: $(stat -c %s "$OUT/na-producer.gtrace") bytes, 0 awaits (with awaits: $(stat -c %s "$OUT/aw-producer-1.gtrace") bytes)"
else bad "GCN3EMU_NO_AWAITS=1: $na awaits $(why "$OUT/na.out")"; fi

echo "== retry awaits: a lock that was free in the emulator is waited for in the replay"
timeout 120 "$EMU" --quiet --threads 1 --record "$OUT/lock.gtrace" -- "$BIN" lock >"$OUT/lock-rec.out" 2>"$OUT/lock-rec.err"
nr=$("$TRACE" dump "$OUT/lock.gtrace" 2>/dev/null | grep -c 'await @.* retry$')
if [ "${nr:-0}" -ge 512 ]; then ok "lock --threads 1: $nr retry awaits (every acquisition succeeded at once in the emulator)"
else bad "lock --threads 1: ${nr:-0} retry awaits, want 512 $(why "$OUT/lock-rec.err")"; fi
for topo in r9nano m-sgpu u-mgpu d-mgpu; do
  timeout 300 "$REPLAY" --topo $topo --stats "$OUT/lock-$topo.json" "$OUT/lock.gtrace" >"$OUT/lock-$topo.out" 2>"$OUT/lock-$topo.err"
  rc=$?
  sp=$(jget "$OUT/lock-$topo.json" spin_iterations); gu=$(jget "$OUT/lock-$topo.json" await_give_ups)
  we=$(jget "$OUT/lock-$topo.json" walk_errors); lm=$(jget "$OUT/lock-$topo.json" load_mismatches)
  lo=$(jget "$OUT/lock-$topo.json" load_order_dependent); ho=$(jget "$OUT/lock-$topo.json" d2h_order_dependent)
  # the counter under the lock is read and written with the recorded values,
  # in the model's acquisition order: those loads (and the final value) differ,
  # and the data check explains them as order-dependent (another wave writes
  # the counter; several waves stored its final value): exit status 0
  if [ $rc = 0 ] && [ "${sp:-0}" -gt 512 ] && [ "$gu$we$lm" = 000 ] && [ "${lo:-0}" -gt 0 ]; then
    ok "lock replay $topo: the waves wait for the lock ($sp polls), 0 mismatches, 0 give-ups, 0 walk errors; order-dependent: $lo counter loads, ${ho:-?} D2H block"
  else bad "lock replay $topo (exit $rc): polls ${sp:-?} give-ups ${gu:-?} walk ${we:-?} mismatches ${lm:-?} order-dependent ${lo:-?} $(why "$OUT/lock-$topo.err")"; fi
done

echo "== cooperative grid sync replayed as a barrier of the timing model"
CG=$BUILD/programs/coop_groups
if [ -x "$CG" ] && timeout 120 "$EMU" --quiet --record "$OUT/coop.gtrace" -- "$CG" >"$OUT/coop-rec.out" 2>"$OUT/coop-rec.err" \
   && grep -q PASS "$OUT/coop-rec.out"; then
  for topo in r9nano m-sgpu d-mgpu u-mgpu; do
    timeout 120 "$REPLAY" --topo $topo --stats "$OUT/coop-$topo.json" "$OUT/coop.gtrace" >"$OUT/coop-$topo.out" 2>"$OUT/coop-$topo.err"
    rc=$?
    lm=$(jget "$OUT/coop-$topo.json" load_mismatches); hm=$(jget "$OUT/coop-$topo.json" d2h_mismatches); we=$(jget "$OUT/coop-$topo.json" walk_errors)
    if [ $rc = 0 ] && [ "$lm$hm$we" = 000 ]; then ok "coop_groups replay $topo: grid barrier modelled, 0 differences, 0 walk errors"
    else bad "coop_groups replay $topo (exit $rc): loads ${lm:-?} d2h ${hm:-?} walk ${we:-?} $(why "$OUT/coop-$topo.err")"; fi
  done
  # u-mgpu: the kernel's waves are in 4 partitions; the barrier is messages
  # to the dispatcher and back, identical for any --threads
  timeout 120 "$REPLAY" --topo u-mgpu --threads 2 --stats "$OUT/coop-u2.json" "$OUT/coop.gtrace" >"$OUT/coop-u2.out" 2>&1
  if cmp -s "$OUT/coop-u-mgpu.json" "$OUT/coop-u2.json"; then ok "coop_groups replay u-mgpu: statistics identical with --threads 1 and 2"
  else bad "coop_groups replay u-mgpu: statistics differ between --threads 1 and 2 $(why "$OUT/coop-u2.out")"; fi
else bad "coop_groups record: $(why "$OUT/coop-rec.err" "$OUT/coop-rec.out")"; fi

echo "== rocPRIM (librocprim-dev): look-back scan and radix sort"
RP=$BUILD/programs/rocprim_ops
if [ -x "$RP" ]; then
  for t in 1 2; do
    timeout 300 "$EMU" --quiet --threads $t --record "$OUT/rocprim-$t.gtrace" -- "$RP" 100000 >"$OUT/rocprim-$t.out" 2>"$OUT/rocprim-$t.err"
    rc=$?
    if [ $rc = 0 ] && grep -q PASS "$OUT/rocprim-$t.out"; then ok "rocprim_ops --threads $t: $(grep -m1 PASS "$OUT/rocprim-$t.out" | cut -c1-90)"
    else bad "rocprim_ops --threads $t (exit $rc): $(why "$OUT/rocprim-$t.err" "$OUT/rocprim-$t.out")"; fi
  done
  same_records "$OUT/rocprim-1.gtrace" "$OUT/rocprim-2.gtrace" "rocprim_ops (look-back scan, radix sort)"
  # the look-back polls that the emulator never had to repeat (its
  # predecessors were done) are replayed as recorded: their loads differ where
  # the model's order differs, and are explained as order-dependent (another
  # workgroup writes the status flag); everything else checks clean
  for t in 1; do
    for topo in r9nano u-mgpu; do
      timeout 300 "$REPLAY" --topo $topo --stats "$OUT/rocprim-$t-$topo.json" "$OUT/rocprim-$t.gtrace" >"$OUT/rocprim-$t-$topo.out" 2>"$OUT/rocprim-$t-$topo.err"
      rc=$?
      j=$OUT/rocprim-$t-$topo.json
      hm=$(jget "$j" d2h_mismatches); we=$(jget "$j" walk_errors); lm=$(jget "$j" load_mismatches); lo=$(jget "$j" load_order_dependent)
      sp=$(jget "$j" spin_iterations)
      # the look-back's status loads before its spin loops are guard awaits:
      # the model makes the waits (before them: 300 order-dependent loads on r9nano)
      if [ $rc = 0 ] && [ "$hm$we$lm" = 000 ] && [ "${sp:-0}" -gt 0 ]; then
        ok "rocprim_ops (recorded with $t thread(s)) replay $topo: 0 mismatches, 0 walk errors, $sp look-back wait iterations (order-dependent look-back loads: ${lo:-?})"
      else bad "rocprim_ops (--threads $t) replay $topo (exit $rc): load ${lm:-?} d2h ${hm:-?} walk ${we:-?} spins ${sp:-?} $(why "$OUT/rocprim-$t-$topo.err")"; fi
    done
  done
else bad "rocprim_ops: $RP missing (make programs; needs librocprim-dev from make deps)"; fi

echo "== sync_patterns: decoupled look-back scan, last-block reduction, CAS-loop float atomicAdd"
SP=$BUILD/programs/sync_patterns
if [ -x "$SP" ]; then
  for m in lookback lastblock casfloat; do
    for t in 1 2; do
      timeout 120 "$EMU" --quiet --threads $t --record "$OUT/sp-$m-$t.gtrace" -- "$SP" $m >"$OUT/sp-$m-$t.out" 2>"$OUT/sp-$m-$t.err"
      rc=$?
      if [ $rc != 0 ] || ! grep -q "PASS $m" "$OUT/sp-$m-$t.out"; then bad "sync_patterns $m --threads $t (exit $rc): $(why "$OUT/sp-$m-$t.out" "$OUT/sp-$m-$t.err")"; continue; fi
      res=""
      for topo in r9nano m-sgpu u-mgpu d-mgpu; do
        j=$OUT/sp-$m-$t-$topo.json
        timeout 120 "$REPLAY" --topo $topo --stats "$j" "$OUT/sp-$m-$t.gtrace" >"$OUT/sp-$m-$t-$topo.out" 2>&1
        rc=$?
        # the results whose final value does not depend on order (a scan, a
        # last-block sum, a CAS-loop sum: its compare-and-swaps apply in the
        # recorded order, cache.c) check clean: no D2H difference of any class
        d="$(jget "$j" load_mismatches)$(jget "$j" lds_mismatches)$(jget "$j" d2h_mismatches)$(jget "$j" walk_errors)$(jget "$j" await_give_ups)$(jget "$j" d2h_order_dependent)$(jget "$j" d2h_adopted)"
        if [ $rc = 0 ] && [ "$d" = 0000000 ]; then
          res="$res $topo: $(jget "$j" spin_iterations) spins, order-dependent $(jget "$j" atomic_order_mismatches)+$(jget "$j" load_order_dependent)+$(jget "$j" d2h_order_dependent);"
        else res="$res $topo: FAILED (exit $rc, differences $d);"; fi
      done
      if [[ $res == *FAILED* ]]; then bad "sync_patterns $m --threads $t:$res"
      else ok "sync_patterns $m --threads $t: PASS, 0 mismatches on every preset;$res"; fi
    done
    same_records "$OUT/sp-$m-1.gtrace" "$OUT/sp-$m-2.gtrace" "sync_patterns $m"
  done
  # a kernel with compare-and-swaps is not sampled (their recorded order, which
  # a fast-forward cannot keep): --sample replays it in full, the same
  tr=$OUT/sp-casfloat-1.gtrace
  timeout 120 "$REPLAY" --topo r9nano "$tr" >"$OUT/cf-full.out" 2>&1
  timeout 120 "$REPLAY" --topo r9nano --sample "$tr" >"$OUT/cf-smp.out" 2>&1
  a=$(grep -m1 '^total:' "$OUT/cf-full.out"); b=$(grep -m1 '^total:' "$OUT/cf-smp.out")
  if [ -n "$a" ] && [ "$a" = "$b" ] && ! grep -q '\[sampled:' "$OUT/cf-smp.out" &&
     grep -q '\[in full: global compare-and-swaps' "$OUT/cf-smp.out" &&
     grep -q '^sampled: 0 of 1 kernels.*in full: 1 (1 compare-and-swaps)' "$OUT/cf-smp.out"; then
    ok "casfloat --sample: not sampled (compare-and-swaps, and it says so), the same as the full replay"
  else bad "casfloat --sample: '$b' against '$a'"; fi
else bad "sync_patterns: $SP missing (make programs)"; fi

echo "== a flag on the other GPU (spin_wait remote: peer memory)"
if timeout 120 "$EMU" --gpus 2 --quiet --threads 2 --record "$OUT/remote.gtrace" -- "$BIN" remote >"$OUT/remote.out" 2>&1 \
   && grep -q "PASS remote" "$OUT/remote.out"; then
  ok "remote, --gpus 2 --threads 2: PASS"
  for topo in d-mgpu u-mgpu; do
    j=$OUT/remote-$topo.json
    timeout 120 "$REPLAY" --topo $topo --stats "$j" "$OUT/remote.gtrace" >"$OUT/remote-$topo.out" 2>&1
    rc=$?
    d="$(jget "$j" load_mismatches)$(jget "$j" d2h_mismatches)$(jget "$j" walk_errors)$(jget "$j" await_give_ups)"
    ib=$(sed -n 's/^ *"inter_gpu_bytes": \([0-9]*\),\{0,1\}$/\1/p' "$j" | tail -n 1)
    if [ $rc = 0 ] && [ "$d" = 0000 ] && [ "${ib:-0}" -gt 0 ]; then
      ok "remote replay $topo: 0 mismatches, $(jget "$j" spin_iterations) wait iterations, $ib bytes between GPUs"
    else bad "remote replay $topo (exit $rc): differences $d, inter-GPU bytes ${ib:-?} $(why "$OUT/remote-$topo.out")"; fi
  done
else bad "remote: $(why "$OUT/remote.out")"; fi
if timeout 120 "$EMU" --gpus 2 --quiet --threads 1 --record "$OUT/remote-1.gtrace" -- "$BIN" remote >"$OUT/remote-1.out" 2>&1 \
   && grep -q "PASS remote" "$OUT/remote-1.out"; then
  same_records "$OUT/remote-1.gtrace" "$OUT/remote.gtrace" "remote (--gpus 2)"
else bad "remote --threads 1: $(why "$OUT/remote-1.out")"; fi

echo "== the other waits: the same records for --threads 1 and 2"
for mode in sleepy lock; do
  for t in 1 2; do
    timeout 120 "$EMU" --quiet --threads $t --record "$OUT/id-$mode-$t.gtrace" -- "$BIN" $mode >"$OUT/id-$mode-$t.out" 2>&1 \
      || bad "$mode record --threads $t: $(why "$OUT/id-$mode-$t.out")"
  done
  same_records "$OUT/id-$mode-1.gtrace" "$OUT/id-$mode-2.gtrace" "spin_wait $mode"
done
# sleepy's loop is rotated (its first poll is before the loop, s_sleep in its
# body): the poll that found the flag set is a guard await (gcn_sem.c), so the
# model still makes the consumers wait where the flag is not yet set there
ng=$(grep -c 'await @.*retry' "$OUT/id-sleepy-1.gtrace.dump")
timeout 120 "$REPLAY" --topo u-mgpu --stats "$OUT/id-sleepy-u.json" "$OUT/id-sleepy-1.gtrace" >"$OUT/id-sleepy-u.out" 2>&1
rc=$?; sp=$(jget "$OUT/id-sleepy-u.json" spin_iterations); wc=$(jget "$OUT/id-sleepy-u.json" wait_cycles)
d="$(jget "$OUT/id-sleepy-u.json" load_mismatches)$(jget "$OUT/id-sleepy-u.json" d2h_mismatches)$(jget "$OUT/id-sleepy-u.json" walk_errors)$(jget "$OUT/id-sleepy-u.json" await_give_ups)"
if [ "${ng:-0}" -gt 0 ] && [ $rc = 0 ] && [ "$d" = 0000 ] && [ "${sp:-0}" -gt 0 ]; then
  ok "sleepy: $ng guard awaits recorded; on u-mgpu the model polls $sp iterations ($wc wave-cycles), 0 differences"
else bad "sleepy: ${ng:-0} guard awaits; u-mgpu replay (exit $rc): spins ${sp:-?}, differences $d $(why "$OUT/id-sleepy-u.out")"; fi

echo "== kernels that wait run on one emulator thread (--parallel-waits: on all)"
timeout 120 "$EMU" --threads 2 -- "$BIN" lock >"$OUT/one.out" 2>"$OUT/one.err"
timeout 120 "$EMU" --threads 2 --parallel-waits -- "$BIN" lock >"$OUT/all.out" 2>"$OUT/all.err"
if grep -q "PASS lock" "$OUT/one.out" && grep -q "lock_counter.*may wait on each other (an atomic that returns its old value at pc 0x[0-9a-f]*): run on one emulator thread" "$OUT/one.err" \
   && grep -q "PASS lock" "$OUT/all.out" && ! grep -q "may wait on each other" "$OUT/all.err"; then
  ok "lock: one emulator thread by default (said on stderr), every thread with --parallel-waits; PASS both ways"
else bad "lock one thread / --parallel-waits: $(why "$OUT/one.err") / $(why "$OUT/all.err")"; fi

echo "== mgpu-replay --progress"
timeout 120 "$REPLAY" --topo r9nano --progress --stats "$OUT/prog-on.json" "$OUT/aw-producer-1.gtrace" >"$OUT/prog-on.out" 2>"$OUT/prog-on.err"
timeout 120 "$REPLAY" --topo r9nano --stats "$OUT/prog-off.json" "$OUT/aw-producer-1.gtrace" >"$OUT/prog-off.out" 2>"$OUT/prog-off.err"
if grep -q "^mgpu-replay: 100.0%  1/1 kernels .* ETA 0 s (ended after" "$OUT/prog-on.err" && [ ! -s "$OUT/prog-off.err" ] \
   && cmp -s "$OUT/prog-on.json" "$OUT/prog-off.json"; then
  ok "--progress (not a terminal): a last line at the end; off by default; the statistics are the same"
else bad "--progress: $(tail -n 1 "$OUT/prog-on.err") / default stderr $(wc -c <"$OUT/prog-off.err") bytes / JSON $(cmp "$OUT/prog-on.json" "$OUT/prog-off.json")"; fi

echo "forward-progress: $pass passed, $fail failed"
[ $fail = 0 ]
