#!/usr/bin/env bash
# End-to-end test of `make install` (issue 18 scope 4): installs into a fresh
# temporary prefix and uses only the installed copy:
#  - every tool answers --version (version and commit) and has a man page
#  - a 20-line C reader built with `pkg-config --cflags --libs gtrace`
#    against the installed libgtrace reads a trace (kernel count and the
#    first kernel's name, as gcn3-trace says)
#  - the installed gcn3-emu runs a HIP program with the installed HIP runtime
#    (lib/gcn3sim, not the build tree's), the installed mgpu-replay finds its
#    presets in share/ and replays the trace it recorded
#  - the installed Python package reads that trace
set -uo pipefail
BUILD=${BUILD:-build}
PY=${PYTHON:-/usr/bin/python3}
OUT=$BUILD/e2e-install
rm -rf "$OUT"; mkdir -p "$OUT"
P=$(mktemp -d)
trap 'rm -rf "$P"' EXIT
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "  ok   $*"; }
bad() { fail=$((fail+1)); echo "  FAIL $*"; }
why() { tail -n 3 "$@" 2>/dev/null | grep -v '^==>' | tr '\n' ' ' | cut -c1-300; }

echo "== make install PREFIX=$P"
if make -s BUILD="$BUILD" install PREFIX="$P" >"$OUT/install.log" 2>&1; then ok "installed"
else bad "make install: $(why "$OUT/install.log")"; echo "install: $pass passed, $fail failed"; exit 1; fi
for t in gcn3-emu mgpu-replay gcn3-trace gcn3-objdump gcn3-isa-coverage; do
  v=$(env -u MGPU_REPLAY_CONFIGS "$P/bin/$t" --version 2>&1)
  if [[ $v =~ ^$t\ [0-9.]+\ \(commit\ [0-9a-f]+(-dirty)?\)$|^$t\ [0-9.]+\ \(commit\ unknown\)$ ]] \
     && [ -s "$P/share/man/man1/$t.1" ] && grep -q '^\.SH' "$P/share/man/man1/$t.1"; then ok "$v; man page $t.1"
  else bad "$t: --version '$v', man page $(ls -l "$P/share/man/man1/$t.1" 2>&1)"; fi
done
for f in lib/gcn3sim/libamdhip64.so.5 lib/libgtrace.so.1 lib/libgtrace.so include/gtrace/trc.h lib/pkgconfig/gtrace.pc \
         share/mgpu-replay/configs/r9nano.ini share/doc/gcn3sim/trace-format.md share/gcn3sim/python/gcn3sim/gtrace.desc; do
  [ -e "$P/$f" ] || bad "$f not installed"
done
[ -e "$P/lib/libamdhip64.so.5" ] && bad "libamdhip64.so.5 in lib/ (it would shadow a real ROCm)"

echo "== the installed copy at work"
tr=$OUT/va.gtrace
if env -u MGPU_REPLAY_CONFIGS LD_LIBRARY_PATH= "$P/bin/gcn3-emu" --quiet --record "$tr" -- "$BUILD/bench/vectoradd" >"$OUT/emu.out" 2>&1 \
   && grep -q PASS "$OUT/emu.out"; then ok "installed gcn3-emu runs vectoradd"
else bad "installed gcn3-emu: $(why "$OUT/emu.out")"; fi
( cd "$OUT" && env -u MGPU_REPLAY_CONFIGS "$P/bin/mgpu-replay" --topo m-sgpu va.gtrace >replay.out 2>&1 )
if [ $? = 0 ] && grep -q '^total: 1 kernels' "$OUT/replay.out"; then ok "installed mgpu-replay finds the m-sgpu preset in share/: $(grep '^total:' "$OUT/replay.out" | cut -c1-60)"
else bad "installed mgpu-replay: $(why "$OUT/replay.out")"; fi

cat >"$OUT/reader.c" <<'EOF'
/* a reader built against the installed libgtrace */
#include <stdio.h>
#include <gtrace/trc.h>
int main(int argc, char **argv)
{
    char err[256];
    trc_reader *r = trc_reader_open(argv[1], err, sizeof err);
    if (!r) { fprintf(stderr, "%s\n", err); return 1; }
    size_t nk = 0, ne = trc_reader_n_events(r);
    const char *first = "-";
    for (size_t i = 0; i < ne; i++) {
        const trc_event *e = trc_reader_event(r, i);
        if (e->kind == TRC_EV_LAUNCH && nk++ == 0) first = e->launch.kernel_name;
    }
    printf("%s %zu kernels, first %s\n", trc_reader_header(r)->producer, nk, first);
    trc_reader_close(r);
    return 0;
}
EOF
export PKG_CONFIG_PATH=$P/lib/pkgconfig
if cc -o "$OUT/reader" "$OUT/reader.c" $(pkg-config --cflags --libs gtrace) >"$OUT/cc.log" 2>&1; then
  got=$(LD_LIBRARY_PATH=$P/lib "$OUT/reader" "$tr" 2>&1)
  lib=$(LD_LIBRARY_PATH=$P/lib ldd "$OUT/reader" | grep libgtrace | awk '{print $3}')
  want="gcn3-emu 1 kernels, first $("$BUILD/bin/gcn3-trace" dump "$tr" --json --no-data | jq -r '[.events[] | select(.kind == "launch")][0].kernel_name')"
  if [ "$got" = "$want" ] && [ "$lib" = "$P/lib/libgtrace.so.1" ]; then ok "C reader via pkg-config gtrace ($lib): $got"
  else bad "C reader: got '$got' want '$want' (libgtrace from '$lib')"; fi
else bad "building the C reader with pkg-config gtrace: $(why "$OUT/cc.log")"; fi

msg=$(PYTHONPATH=$P/share/gcn3sim/python "$PY" -c 'import sys, gcn3sim
t = gcn3sim.open_trace(sys.argv[1])
print("%s: %d kernels, %d waves" % (gcn3sim.__file__, len(t.kernels), sum(len(g.waves) for g in t.workgroups(0))))' "$tr" 2>&1)
if [[ $msg == "$P"/share/gcn3sim/python/gcn3sim/__init__.py:* ]]; then ok "installed Python package: ${msg#*: }"
else bad "installed Python package: $msg"; fi

echo "install: $pass passed, $fail failed"
[ $fail = 0 ]
