# MGSim paper Fig. 9 with our model: per workload, the simulated execution time
# on U-MGPU and D-MGPU (4 GPUs) and on U-MGPU with unified-memory placement
# (first-touch, access-counter) normalised to M-SGPU (top), and the bytes that
# cross the inter-GPU interconnect (bottom); log scales, zero bytes are not drawn.
# Input: benchmarks/case_study.py's data file
#   label u_norm d_norm u_link_MB d_link_MB m_us u_us d_us ft_norm ac_norm ft_link_MB ac_link_MB
# gnuplot -e "datafile='benchmarks/results/case-study.dat'; outfile='docs/case-study.svg'" benchmarks/case-study.gp
if (!exists("datafile")) datafile = 'benchmarks/results/case-study.dat'
if (!exists("outfile")) outfile = 'docs/case-study.svg'
if (strlen(outfile) > 4 && outfile[strlen(outfile)-2:] eq "png") {
    set terminal pngcairo size 900,640 font "sans,11" background rgb "white"
} else {
    set terminal svg size 900,640 font "sans,12" background rgb "white"
}
set output outfile
set multiplot layout 2,1 title "Multi-GPU execution, 4 GPUs, 4x problem (MGSim Table II)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set key top left horizontal maxcols 3
set xtics nomirror
set ylabel "time / M-SGPU time (log)"
set logscale y
set yrange [0.1:2000]  # room above the bars for the key
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb "black" front
plot datafile using 2:xtic(1) title "U-MGPU" lc rgb "#d95f02", \
     '' using 9 title "U-MGPU first-touch" lc rgb "#e6ab02", \
     '' using 10 title "U-MGPU access-counter" lc rgb "#7570b3", \
     '' using 3 title "D-MGPU" lc rgb "#1b9e77", \
     NaN with lines dt 2 lc rgb "black" title "M-SGPU = 1"
unset arrow 1
set ylabel "inter-GPU bytes (KB, log)"
set yrange [0.1:1e8]  # room above the bars for the key
plot datafile using ($4 > 0 ? $4 * 1000 : NaN):xtic(1) title "U-MGPU" lc rgb "#d95f02", \
     '' using ($11 > 0 ? $11 * 1000 : NaN) title "U-MGPU first-touch" lc rgb "#e6ab02", \
     '' using ($12 > 0 ? $12 * 1000 : NaN) title "U-MGPU access-counter" lc rgb "#7570b3", \
     '' using ($5 > 0 ? $5 * 1000 : NaN) title "D-MGPU" lc rgb "#1b9e77"
unset multiplot
