#!/usr/bin/env bash
# check-layering.sh - the include graph of the rooms matches the design's arrows
# (../shared/DESIGN.md section 3, docs/architecture.md):
#
#   traceformat -> (nothing of ours)
#   gcn         -> traceformat (the wave walker reads trace records: trc.h only)
#   emu         -> gcn, traceformat
#   replay      -> gcn, traceformat
#   tools, fuzz -> the public headers of every room
#   tests/<r>   -> the public headers of every room, and room r's internals
#                  (tests/trace tests traceformat)
#
# Inside replay/, the components that know only their own header, the
# engine and a small context (not the sim: rp_sim_internal.h) are listed in
# SIM_FREE; one of them including rp_sim_internal.h is a violation. The
# components' structs (COMPONENT_HEADERS) hold a context (rp_ctx.h,
# rp_mem_ctx), never the sim: a member of type rp_sim * is a violation.
#
# "Internal" is a header named *_internal.h: only files of its own room (and
# that room's tests) may include it. Every quoted #include of a .c/.h file is
# resolved against the including file's directory and the repository root;
# includes of generated protobuf-c headers (traceformat/*.pb-c.h) count as
# traceformat. With FILE arguments (paths from the repository root) only those
# files are checked (tests/e2e/layering.sh plants a violation that way).
# Prints one line per violation; exit 1 if there is any.
set -uo pipefail
cd "$(dirname "$0")/.."
room_of() { # path -> room
  case $1 in
    gcn/*) echo gcn ;; emu/*) echo emu ;; traceformat/*) echo traceformat ;; replay/*) echo replay ;;
    tools/*) echo tools ;; fuzz/*) echo fuzz ;; tests/*) echo "tests/$(echo "$1" | cut -d/ -f2)" ;;
    benchmarks/*) echo benchmarks ;; *) echo other ;;
  esac
}
allowed() { # from-room to-room
  local f=$1 t=$2
  [ "$f" = "$t" ] && return 0
  case $f in
    traceformat) return 1 ;;
    gcn) [ "$t" = traceformat ] ;;
    emu|replay) [ "$t" = gcn ] || [ "$t" = traceformat ] ;;
    *) return 0 ;;
  esac
}
# replay components that see the machine only through a context (rp_mem_ctx for the caches)
SIM_FREE="replay/cache.c replay/dram.c replay/engine.c replay/fmem.c"
COMPONENT_HEADERS="replay/rp_cache.h replay/rp_cu.h replay/rp_disp.h replay/rp_dram.h replay/rp_fetch.h replay/rp_net.h replay/rp_rdma.h replay/rp_host.h"
bad=0; n=0
while IFS= read -r file; do
  from=$(room_of "$file")
  dir=$(dirname "$file")
  while IFS= read -r inc; do
    [ -n "$inc" ] || continue
    n=$((n+1))
    case $inc in *.pb-c.h) target=traceformat/$(basename "$inc") ;;
      *) if [ -f "$dir/$inc" ]; then target=$(realpath -m --relative-to=. "$dir/$inc")
         elif [ -f "$inc" ]; then target=$inc
         else continue; fi ;;   # a test's local data header, a system header in quotes
    esac
    to=$(room_of "$target")
    [ "$to" = other ] && continue
    if ! allowed "$from" "$to"; then
      echo "layering: $file includes $target ($from must not depend on $to)"; bad=$((bad+1))
    fi
    if [ "$target" = replay/rp_sim_internal.h ] && [[ " $SIM_FREE " == *" $file "* ]]; then
      echo "layering: $file includes $target (a component that sees the sim only through its context)"; bad=$((bad+1))
    fi
    case $target in
      *_internal.h)
        own=$from; case $from in tests/trace) own=traceformat ;; tests/*) own=${from#tests/} ;; esac
        # a room's internal header: its own room (or its tests) only
        if [ "$own" != "$to" ] && [ "$from" != "$to" ]; then
          echo "layering: $file includes $target (an internal header of $to)"; bad=$((bad+1))
        fi ;;
    esac
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(if [ $# -gt 0 ]; then printf '%s\n' "$@"; else git ls-files '*.c' '*.h'; fi |
         grep -E '^(gcn|emu|traceformat|replay|tools|fuzz|tests)/')
if [ $# = 0 ]; then
  for h in $COMPONENT_HEADERS; do
    while IFS= read -r hit; do
      echo "layering: $h:${hit%%:*} holds the sim (${hit#*:}); a component sees the machine through its context"
      bad=$((bad+1))
    done < <(grep -nE '^[[:space:]]+(struct[[:space:]]+)?rp_sim[[:space:]]*\*[[:space:]]*[a-z_]+;' "$h" | sed 's/[[:space:]]\+/ /g')
  done
fi
if [ $bad = 0 ]; then echo "check-layering: $n includes follow the arrows, no component holds the sim"; exit 0; fi
echo "check-layering: $bad violation(s)"; exit 1
