#!/usr/bin/env bash
# sweep-plot.sh - the standard plots of a configuration sweep (docs/sweeps.md)
# from the results.csv that `mgpu-replay --sweep` writes, drawn with gnuplot:
#
#   tools/sweep-plot.sh CSV OUT.svg [--x PARAM] [--y time|cycles|ipc|COLUMN]
#   (OUT.png draws a PNG instead)
#
#  - speedup vs GPU count, one line per topology (and per combination of the
#    other swept parameters), when the sweep has more than one GPU count:
#    speedup = kernel time at the smallest GPU count / kernel time;
#  - Y vs a swept parameter (--x; default: the first swept [params] key with
#    more than one value), one line per combination of the other swept
#    columns. Values are categories in sweep order (ranges are often
#    geometric), labelled as written in the sweep file.
# --y time (default) is the kernel time in microseconds (kernel_time_ps).
# Rows whose status is "error" are left out. Exit status: 0, 2 usage/input.
set -euo pipefail

usage() { echo "usage: sweep-plot.sh CSV OUT.svg [--x PARAM] [--y time|cycles|ipc|COLUMN]" >&2; exit 2; }
[ $# -ge 2 ] || usage
csv=$1 out=$2; shift 2
xp= ycol=time
while [ $# -gt 0 ]; do
  case $1 in
    --x) [ $# -ge 2 ] || usage; xp=$2; shift 2 ;;
    --y) [ $# -ge 2 ] || usage; ycol=$2; shift 2 ;;
    *) echo "sweep-plot.sh: unknown option '$1'" >&2; usage ;;
  esac
done
[ -r "$csv" ] || { echo "sweep-plot.sh: $csv: cannot read" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "sweep-plot.sh: gnuplot not found (Debian package gnuplot-nox)" >&2; exit 2; }
head -n1 "$csv" | grep -q '^index,topo,gpus,' ||
  { echo "sweep-plot.sh: $csv: not a sweep results.csv (header must start with index,topo,gpus)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One awk pass writes the data blocks and the plot commands for gnuplot.
awk -F, -v xp="$xp" -v ycol="$ycol" -v dir="$tmp" -v out="$out" '
function esc(s) { gsub(/"/, "\\\"", s); gsub(/_/, "\\\\_", s); return s }
NR == 1 {
  for (i = 1; i <= NF; i++) { col[$i] = i; name[i] = $i }
  st = col["status"]; npar = st - 1           # columns 2..st-1: topo, gpus, swept keys
  if (ycol == "time") { yc = col["kernel_time_ps"]; yscale = 1e-6; ylabel = "kernel time (us)" }
  else { yc = col[ycol]; yscale = 1; ylabel = ycol }
  if (!yc) { print "sweep-plot.sh: no column \"" ycol "\" in the CSV" > "/dev/stderr"; exit 2 }
  tc = col["kernel_time_ps"]
  if (xp != "" && (!col[xp] || col[xp] >= st)) { print "sweep-plot.sh: \"" xp "\" is not a swept column" > "/dev/stderr"; exit 2 }
  next
}
$st == "error" || $st == "" { next }
{
  n++
  for (i = 2; i <= npar; i++) {
    v[n, i] = $i
    if (!((i, $i) in seen)) { seen[i, $i] = ++nv[i]; val[i, nv[i]] = $i }
  }
  y[n] = $yc * yscale; t[n] = $tc
}
END {
  if (n == 0) { print "sweep-plot.sh: no successful rows to plot" > "/dev/stderr"; exit 2 }
  gc = 3
  if (xp == "") for (i = 4; i <= npar; i++) if (nv[i] > 1) { xp = name[i]; break }
  if (xp == "" && nv[2] > 1) xp = "topo"
  xc = xp == "" ? 0 : col[xp]
  nplots = (nv[gc] > 1) + (xc > 0)
  if (nplots == 0) { print "sweep-plot.sh: nothing varies: no plot" > "/dev/stderr"; exit 2 }
  cmd = dir "/plot.gp"
  if (out ~ /\.png$/) printf "set terminal pngcairo size %d,420 font \"sans,10\"\n", nplots * 560 > cmd
  else printf "set terminal svg size %d,420 dynamic font \"sans,11\" background \"white\"\n", nplots * 560 > cmd
  printf "set output \"%s\"\n", out > cmd
  printf "set key outside bottom center horizontal font \",9\"\nset grid\n" > cmd
  if (nplots == 2) printf "set multiplot layout 1,2\n" > cmd
  # Plot 1: speedup vs GPU count; series = every other swept column.
  if (nv[gc] > 1) {
    ns = 0; delete sid
    for (r = 1; r <= n; r++) {
      key = ""; for (i = 2; i <= npar; i++) if (i != gc && nv[i] > 1) key = key (key == "" ? "" : " ") name[i] "=" v[r, i]
      if (key == "") key = v[r, 2]
      if (!(key in sid)) { sid[key] = ++ns; sname[ns] = key }
      s = sid[key]; g = v[r, gc] + 0
      if (!(s in gmin) || g < gmin[s]) { gmin[s] = g; tbase[s] = t[r] }
      row[s, ++cnt[s]] = r
    }
    f = dir "/speedup.dat"
    maxg = 1; pow2 = 1
    for (s = 1; s <= ns; s++) {
      for (k = 1; k <= cnt[s]; k++) {
        r = row[s, k]; g = v[r, gc] + 0
        printf("%d %.6f\n", g, (t[r] > 0 ? tbase[s] / t[r] : 0)) > f
        if (g > maxg) maxg = g
        for (h = g; h > 1 && h % 2 == 0; h /= 2) ;
        if (h != 1) pow2 = 0
      }
      printf "\n\n" > f
    }
    close(f)
    printf "set title \"speedup vs GPU count\"\nset xlabel \"GPUs\"\nset ylabel \"speedup (kernel time)\"\n" > cmd
    if (pow2) printf "set logscale x 2\n" > cmd
    printf "set xrange [0.8:%g]\nset yrange [0:*]\n", maxg * 1.25 > cmd
    printf "plot x with lines dt 2 lc rgb \"gray\" title \"linear\"" > cmd
    for (s = 1; s <= ns; s++) printf ", \"%s\" index %d using 1:2 with linespoints pt 7 title \"%s\"", f, s - 1, esc(sname[s]) > cmd
    printf "\nunset logscale x\nset xrange [*:*]\nset yrange [*:*]\n" > cmd
  }
  # Plot 2: Y vs the swept parameter; x = category index.
  if (xc > 0) {
    ns = 0; delete sid; delete cnt
    for (r = 1; r <= n; r++) {
      key = ""; for (i = 2; i <= npar; i++) if (i != xc && nv[i] > 1) key = key (key == "" ? "" : " ") name[i] "=" v[r, i]
      if (key == "") key = v[r, 2]
      if (!(key in sid)) { sid[key] = ++ns; sname[ns] = key }
      s = sid[key]; row[s, ++cnt[s]] = r
    }
    f = dir "/param.dat"
    for (s = 1; s <= ns; s++) {
      for (k = 1; k <= cnt[s]; k++) { r = row[s, k]; printf "%d %.6g\n", seen[xc, v[r, xc]] - 1, y[r] > f }
      printf "\n\n" > f
    }
    close(f)
    printf "set title \"%s vs %s\"\nset xlabel \"%s\"\nset ylabel \"%s\"\n", esc(ylabel), esc(xp), esc(xp), esc(ylabel) > cmd
    printf "set xrange [-0.3:%g]\nset yrange [0:*]\nset xtics (" , nv[xc] - 0.7 > cmd
    for (k = 1; k <= nv[xc]; k++) printf("%s\"%s\" %d", (k > 1 ? ", " : ""), esc(val[xc, k]), k - 1) > cmd
    printf ")\nplot " > cmd
    for (s = 1; s <= ns; s++) printf("%s\"%s\" index %d using 1:2 with linespoints pt 7 title \"%s\"", (s > 1 ? ", " : ""), f, s - 1, esc(sname[s])) > cmd
    printf "\n" > cmd
  }
  if (nplots == 2) printf "unset multiplot\n" > cmd
  close(cmd)
}' "$csv"

gnuplot "$tmp/plot.gp" 2>"$tmp/gnuplot.err" || {
  echo "sweep-plot.sh: gnuplot failed: $(head -n 3 "$tmp/gnuplot.err" | tr '\n' ' ')" >&2; exit 2; }
echo "sweep-plot.sh: wrote $out"
