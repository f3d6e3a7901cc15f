#!/usr/bin/env bash
# End-to-end tests of the Python package python/gcn3sim (issue 18 scope 3),
# with Debian's python3 and its python3-protobuf / python3-zstandard only:
#  - the schema it carries (gtrace.desc) is what protoc-c makes of
#    traceformat/gtrace.proto today
#  - it reads traces exactly as gcn3-trace does (tests/python/check_trace.py:
#    every event, kernel and wave, with data): a one-GPU program, a two-GPU
#    program, a trace with awaits (spin_wait producer), compare-and-swap, and
#    long waves in wave segments (format 2.0), managed allocations (2.1)
#  - a truncated and a corrupted trace raise TraceError with one line
#  - load_stats / kernels_table read mgpu-replay --stats; load_sweep reads a
#    sweep's results.csv, with the numbers the replay printed
set -uo pipefail
BUILD=${BUILD:-build}
PY=${PYTHON:-/usr/bin/python3}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
TRACE=$BUILD/bin/gcn3-trace
OUT=$BUILD/e2e-python
mkdir -p "$OUT"
export MGPU_REPLAY_CONFIGS=${MGPU_REPLAY_CONFIGS:-$(realpath replay/configs)}
export PYTHONPATH=$(realpath python)${PYTHONPATH:+:$PYTHONPATH}
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
why() { tail -n 3 "$@" 2>/dev/null | grep -v '^==>' | tr '\n' ' ' | cut -c1-300; }
for b in "$EMU" "$REPLAY" "$TRACE"; do
  [ -x "$b" ] || { echo "python: $b missing (make BUILD=$BUILD all)"; exit 1; }
done
"$PY" -c 'import google.protobuf, zstandard' 2>"$OUT/import.err" \
  || { echo "python: $PY lacks python3-protobuf or python3-zstandard (make deps): $(why "$OUT/import.err")"; exit 1; }

echo "== the package's schema is gtrace.proto's"
protoc-c --descriptor_set_out="$OUT/gtrace.desc" traceformat/gtrace.proto
if cmp -s "$OUT/gtrace.desc" python/gcn3sim/gtrace.desc; then ok "python/gcn3sim/gtrace.desc matches traceformat/gtrace.proto"
else bad "python/gcn3sim/gtrace.desc is stale: protoc-c --descriptor_set_out=python/gcn3sim/gtrace.desc traceformat/gtrace.proto"; fi

echo "== traces read as gcn3-trace reads them"
rec() { # NAME GPUS PROG ARGS...
  local name=$1 gpus=$2; shift 2
  [ -x "$1" ] || { bad "$name: $1 missing (make BUILD=$BUILD programs)"; return 1; }
  timeout 300 "$EMU" --quiet --threads 2 --gpus "$gpus" --record "$OUT/$name.gtrace" -- "$@" >"$OUT/$name-rec.out" 2>&1 \
    || { bad "$name: recording failed: $(why "$OUT/$name-rec.out")"; return 1; }
}
check() {
  if timeout 600 "$PY" tests/python/check_trace.py "$OUT/$1.gtrace" "$TRACE" >"$OUT/$1-py.out" 2>&1; then ok "$1: $(tail -n1 "$OUT/$1-py.out" | sed 's/^check_trace: [^:]*: //')"
  else bad "$1: $(why "$OUT/$1-py.out")"; fi
}
rec vectoradd 1 "$BUILD/bench/vectoradd" && check vectoradd
# format 2.6: the golden file's host-image loads (copy, memset and INIT bytes; a D2D'd
# load that keeps its values) rebuilt by Python as by gcn3-trace
cp tests/trace/data/golden-2.6.gtrace "$OUT/golden-2.6.gtrace" && check golden-2.6
rec fir-g2 2 "$BUILD/bench/fir" --gpus 2 && check fir-g2
rec producer 1 "$BUILD/programs/spin_wait" producer && check producer
rec cas_own 1 "$BUILD/programs/cas_own" && check cas_own
# format 2.0: long waves in wave segments
rec long_waves 1 "$BUILD/programs/long_waves" 1500 && check long_waves
# format 2.1: hipMallocManaged allocations are managed ALLOC events
rec managed 1 "$BUILD/programs/managed" && check managed
if [ -f "$OUT/managed.gtrace" ]; then
  n=$("$PY" -c 'import sys, gcn3sim
t = gcn3sim.open_trace(sys.argv[1])
print(t.format, sum(e["kind"] == "alloc" and e["mem_kind"] == "managed" for e in t.events))' "$OUT/managed.gtrace")
  if [ "$n" = "2.6 2" ]; then ok "managed: 2 managed allocations seen from Python (format 2.6)"
  else bad "managed: format and managed allocations seen from Python: '$n' (want '2.6 2')"; fi
fi
if [ -f "$OUT/producer.gtrace" ]; then
  n=$("$PY" -c 'import sys, gcn3sim
t = gcn3sim.open_trace(sys.argv[1])
print(sum(len(w.awaits) for g in t.workgroups(0) for w in g.waves))' "$OUT/producer.gtrace")
  if [ "${n:-0}" -gt 0 ]; then ok "producer: $n awaits seen from Python"; else bad "producer: no awaits seen from Python"; fi
fi

echo "== damaged traces raise TraceError"
if [ -f "$OUT/vectoradd.gtrace" ]; then
  sz=$(stat -c %s "$OUT/vectoradd.gtrace")
  head -c $((sz / 2)) "$OUT/vectoradd.gtrace" >"$OUT/cut.gtrace"
  cp "$OUT/vectoradd.gtrace" "$OUT/flip.gtrace"
  # one byte inside the first event chunk's zstd frame (the content checksum catches it)
  printf '\xff' | dd of="$OUT/flip.gtrace" bs=1 seek=$((sz / 3)) conv=notrunc status=none
  for f in cut flip; do
    msg=$("$PY" - "$OUT/$f.gtrace" <<'EOF' 2>&1
import sys, gcn3sim
try:
    t = gcn3sim.open_trace(sys.argv[1])
    for k in t.kernels:
        for g in t.workgroups(k["kernel_id"], with_data=True):
            pass
    print("READ WITHOUT ERROR")
except gcn3sim.TraceError as e:
    print("TraceError:", e)
EOF
)
    if [[ $msg == TraceError:* ]] && [ "$(printf '%s\n' "$msg" | wc -l)" = 1 ]; then ok "$f: $msg"
    else bad "$f: $(printf '%s' "$msg" | tail -n 3 | tr '\n' ' ')"; fi
  done
fi

echo "== statistics and sweeps"
if [ -f "$OUT/fir-g2.gtrace" ]; then
  "$REPLAY" --topo d-mgpu --stats "$OUT/fir.json" "$OUT/fir-g2.gtrace" >"$OUT/fir-replay.out" 2>&1
  msg=$("$PY" - "$OUT/fir.json" "$OUT/fir-replay.out" <<'EOF' 2>&1
import sys, gcn3sim
s = gcn3sim.load_stats(sys.argv[1])
rows = gcn3sim.kernels_table(s)
n = len(rows)
text = open(sys.argv[2]).read()
total = [l for l in text.splitlines() if l.startswith("total:")][0]
want = "total: %d kernels" % n
assert total.startswith(want), (total, want)
gpus = sorted({(r["gpu"] if isinstance(r, dict) else None) for r in (rows if isinstance(rows, list) else rows.to_dict("records"))})
print("load_stats: %d kernels (as the text report), on GPUs %s, %d loads checked" % (n, gpus, s["check"]["loads_checked"]))
EOF
)
  if [[ $msg == load_stats:* ]]; then ok "$msg"; else bad "load_stats: $(printf '%s' "$msg" | tail -n 3 | tr '\n' ' ')"; fi
fi
if [ -f "$OUT/vectoradd.gtrace" ]; then
  printf '[sweep]\nbase = r9nano\n[params]\nl2.latency = 100cycles..200cycles+100cycles\n' >"$OUT/s.ini"
  "$REPLAY" --sweep "$OUT/s.ini" --jobs 1 --quiet --out "$OUT/sweep" "$OUT/vectoradd.gtrace" >"$OUT/sweep.out" 2>&1
  msg=$("$PY" - "$OUT/sweep/results.csv" <<'EOF' 2>&1
import sys, gcn3sim
rows = gcn3sim.load_sweep(sys.argv[1])
recs = rows if isinstance(rows, list) else rows.to_dict("records")
assert len(recs) == 2, recs
lat = [r["l2.latency"] for r in recs]
t = [r["time_ps"] for r in recs]
assert t[1] > t[0], t
print("load_sweep: 2 points, l2.latency %s, time %s (slower with the slower L2)" % (lat, t))
EOF
)
  if [[ $msg == load_sweep:* ]]; then ok "$msg"; else bad "load_sweep: $(printf '%s' "$msg" | tail -n 3 | tr '\n' ' ') $(why "$OUT/sweep.out")"; fi
fi

echo "python: $pass passed, $fail failed"
[ $fail = 0 ]
