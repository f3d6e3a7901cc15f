#!/usr/bin/env bash
# Transparent huge pages for the heap (glibc.malloc.hugetlb=1): gcn3-emu puts
# the tunable in the program's GLIBC_TUNABLES (kept and extended when the
# user set other tunables; left out with GCN3SIM_HUGEPAGES=0); mgpu-replay
# executes itself again with it only with GCN3SIM_HUGEPAGES=1 (off by
# default since 2026-12-03: docs/user-guide.md): the same stats JSON, and
# fewer page faults than by default (GNU time's minor-fault count). On a
# kernel whose THP mode is "never" neither sets it (checked instead).
# Prints one "ok/FAIL name" line per check; exits non-zero on any failure.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
BENCH=${BENCH:-$BUILD/bench}
[ -x "$BENCH/vectoradd" ] || BENCH=build/bench
OUT=$BUILD/e2e-hugepages
mkdir -p "$OUT"
export MGPU_REPLAY_CONFIGS=${MGPU_REPLAY_CONFIGS:-replay/configs}
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
for bin in "$EMU" "$REPLAY" "$BENCH/vectoradd" /usr/bin/time; do
  [ -x "$bin" ] || { echo "  FAIL hugepages: $bin missing (make deps; make BUILD=$BUILD all programs)"; exit 1; }
done
unset GLIBC_TUNABLES GCN3SIM_HUGEPAGES

mode=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
case $mode in *"[always]"*|*"[madvise]"*) thp=1 ;; *) thp=0 ;; esac

env_of() { "$EMU" -- env | sed -n 's/^GLIBC_TUNABLES=//p'; }
got=$(env_of)
if [ $thp = 1 ]; then
  [ "$got" = glibc.malloc.hugetlb=1 ] && ok "gcn3-emu: program's GLIBC_TUNABLES=$got" || bad "gcn3-emu: GLIBC_TUNABLES='$got'"
  got=$(GLIBC_TUNABLES=glibc.malloc.arena_max=2 env_of)
  [ "$got" = glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1 ] && ok "gcn3-emu: user's tunables kept: $got" \
    || bad "gcn3-emu: with arena_max=2: GLIBC_TUNABLES='$got'"
  got=$(GLIBC_TUNABLES=glibc.malloc.hugetlb=0 env_of)
  [ "$got" = glibc.malloc.hugetlb=0 ] && ok "gcn3-emu: user's hugetlb=0 left alone" || bad "gcn3-emu: hugetlb=0 became '$got'"
else
  [ -z "$got" ] && ok "gcn3-emu: THP mode '$mode': no tunable set" || bad "gcn3-emu: THP off, GLIBC_TUNABLES='$got'"
fi
got=$(GCN3SIM_HUGEPAGES=0 env_of)
[ -z "$got" ] && ok "gcn3-emu: GCN3SIM_HUGEPAGES=0: no tunable" || bad "gcn3-emu: GCN3SIM_HUGEPAGES=0 gave '$got'"

TR=$OUT/vectoradd.gtrace
if ! "$EMU" --quiet --record "$TR" -- "$BENCH/vectoradd" 65536 >"$OUT/rec.out" 2>&1; then
  bad "record vectoradd 65536: $(tail -n 2 "$OUT/rec.out" | tr '\n' ' ')"
  echo "hugepages: $pass passed, $fail failed"; exit 1
fi
faults() { # HUGEPAGES (1, or "" for the default) JSON -> minor page faults of the replay
  GCN3SIM_HUGEPAGES=$1 /usr/bin/time -f '%R' -o "$OUT/time.$1" "$REPLAY" --topo r9nano --stats "$2" "$TR" \
    >"$OUT/replay.$1.out" 2>&1 || { echo "replay failed: $(tail -n 1 "$OUT/replay.$1.out")"; return 1; }
  tail -n 1 "$OUT/time.$1"
}
on=$(faults 1 "$OUT/on.json") || bad "mgpu-replay (GCN3SIM_HUGEPAGES=1): $on"
off=$(faults "" "$OUT/off.json") || bad "mgpu-replay (default: no huge pages): $off"
if [ -f "$OUT/on.json" ] && [ -f "$OUT/off.json" ]; then
  cmp -s "$OUT/on.json" "$OUT/off.json" && ok "mgpu-replay: the same stats JSON with and without huge pages" \
    || bad "mgpu-replay: stats JSON differ with huge pages"
  if [ $thp = 1 ]; then
    [ "$on" -gt 0 ] && [ $((2 * on)) -lt "$off" ] && ok "mgpu-replay: $on page faults with GCN3SIM_HUGEPAGES=1, $off by default" \
      || bad "mgpu-replay: $on page faults with GCN3SIM_HUGEPAGES=1, $off by default (expected under half)"
  fi
fi
echo "hugepages: $pass passed, $fail failed"
[ $fail = 0 ]
