#!/usr/bin/env bash
# End-to-end tests of the HIP module API, device globals and code-object
# versions (tests/programs/module_*, device_globals*, codeobj_*; built by
# mk/prog-module.mk into $BUILD/programs/): each program runs unmodified under
# gcn3-emu and must print PASS and exit 0; code objects for gfx906 must be
# refused with a message naming the target and the file; each program is also
# recorded and the trace replayed on r9nano with the data check clean.
set -uo pipefail
BUILD=${BUILD:-build}
EMU=$BUILD/bin/gcn3-emu
REPLAY=$BUILD/bin/mgpu-replay
P=$BUILD/programs
C=$P/codeobj
OUT=$BUILD/e2e-programs-module
mkdir -p "$OUT"
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
why() { tail -n 3 "$@" 2>/dev/null | grep -v '^==>' | tr '\n' ' '; }

for bin in "$EMU" "$REPLAY"; do
  [ -x "$bin" ] || { echo "programs-module: $bin missing (make BUILD=$BUILD all)"; exit 1; }
done

CODEOBJS="$C/module_kernels.v2.co $C/module_kernels.v3.co $C/module_kernels.v4.co
  $C/module_kernels.v4.hsaco $C/module_kernels.v5.hsaco $C/codeobj_kernels.v2.hsaco
  $C/codeobj_kernels.v3.hsaco"
REFUSE="$C/module_kernels.gfx906.co $C/codeobj_kernels.v2.gfx906.hsaco"
missing=0
for f in $P/module_launch $P/module_kernels.co $P/device_globals $P/codeobj_versions $CODEOBJS $REFUSE; do
  [ -e "$f" ] || { bad "$f missing (make BUILD=$BUILD programs)"; missing=1; }
done
[ $missing = 0 ] || { echo "programs-module: $pass passed, $fail failed"; exit 1; }

# name, then the command line
run_prog() {
  local name=$1; shift
  "$EMU" --quiet -- "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
  local rc=$?
  if [ $rc = 0 ] && grep -q '^PASS' "$OUT/$name.out" && ! grep -q FAIL "$OUT/$name.out"; then
    ok "$name: $(grep -m1 '^PASS' "$OUT/$name.out")"
  else bad "$name (exit $rc): $(why "$OUT/$name.err" "$OUT/$name.out")"; fi
}

echo "== module API and device globals under gcn3-emu"
run_prog module_launch "$P/module_launch" "$P/module_kernels.co"
run_prog device_globals "$P/device_globals"

echo "== code object versions (v2 YAML bundle/OpenCL, v3, v4, v5; all loaded at once)"
refuse_args=""
for f in $REFUSE; do refuse_args="$refuse_args refuse:$f"; done
# shellcheck disable=SC2086
run_prog codeobj_versions "$P/codeobj_versions" $CODEOBJS $refuse_args
for f in $CODEOBJS; do
  if grep -qx "ok: $f" "$OUT/codeobj_versions.out"; then ok "runs $(basename "$f")"
  else bad "$(basename "$f") did not run: $(why "$OUT/codeobj_versions.err")"; fi
done
for f in $REFUSE; do
  if grep -q "hipModuleLoad($f).*gfx906" "$OUT/codeobj_versions.err"; then
    ok "refuses $(basename "$f"): $(grep -m1 "hipModuleLoad($f)" "$OUT/codeobj_versions.err" | cut -c1-110)..."
  else bad "refusal of $f does not name the file and gfx906: $(why "$OUT/codeobj_versions.err")"; fi
done

echo "== record, replay on r9nano with the data check"
rec_replay() {
  local name=$1; shift
  local tr=$OUT/$name.gtrace txt=$OUT/$name-r9nano.txt
  rm -f "$tr"
  "$EMU" --quiet --record "$tr" -- "$@" >"$OUT/$name-rec.out" 2>"$OUT/$name-rec.err"
  local rc=$?
  if [ $rc != 0 ] || [ ! -s "$tr" ] || ! grep -q '^PASS' "$OUT/$name-rec.out"; then
    bad "record $name (exit $rc): $(why "$OUT/$name-rec.err" "$OUT/$name-rec.out")"
    return
  fi
  "$REPLAY" --topo r9nano "$tr" >"$txt" 2>&1
  rc=$?
  if [ $rc = 0 ] && ! grep -q "^mismatch:" "$txt" && grep -q "data check: .*loads (0 mismatches)" "$txt" \
     && grep -q "D2H blocks (0 mismatches)" "$txt" && grep -q "0 trace-walk errors" "$txt"; then
    ok "replay $name: $(grep -m1 '^total:' "$txt" | cut -d';' -f1)"
  else bad "replay $name (exit $rc): $(why "$txt")"; fi
}
rec_replay module_launch "$P/module_launch" "$P/module_kernels.co"
rec_replay device_globals "$P/device_globals"
# shellcheck disable=SC2086
rec_replay codeobj_versions "$P/codeobj_versions" $CODEOBJS

echo "programs-module: $pass passed, $fail failed"
[ $fail = 0 ]
