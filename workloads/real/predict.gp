# SPDX-License-Identifier: GPL-2.0-or-later
# predict.sh's plot: pages_sharing and ksmd's CPU, live against the model,
# at every mark (from 0, so that a small difference looks small), their
# relative differences, and the workload's own CPU time in the two runs
# (how far it had got; whole seconds every 2 s, so drawn as steps, from the
# progress files beside the table).
#   gnuplot -e "csv='minutes.csv'; out='predict.png'; cpu='AMD EPYC'" predict.gp
if (!exists("cpu")) cpu = "the machine that ran it"
set terminal pngcairo size 900,1250 font ",10"
set output out
set datafile separator ","
set key below noenhanced
set grid
set offsets 0, 0.25, graph 0.08, 0
set lmargin 12
set autoscale xfixmax
set xlabel "minutes after attach (recorded run, trace) / KSM on (live run)"
set multiplot layout 4,1
set title "pages_sharing at every mark: live kernel against the model" noenhanced
set ylabel "pages_sharing" noenhanced
set yrange [0:*]
plot csv using 1:4 skip 1 with linespoints pt 7 lw 2 title "live", \
     csv using 1:5 skip 1 with linespoints pt 6 lw 2 dt 2 title "model (ksmsim run, the recorded trace)"
set title "ksmd CPU since KSM on (cumulative; model priced on ".cpu.")" noenhanced
set ylabel "ksmd CPU (ms)"
plot csv using 1:6 skip 1 with linespoints pt 7 lw 2 title "live (/proc/<ksmd>/schedstat)", \
     csv using 1:7 skip 1 with linespoints pt 6 lw 2 dt 2 title "model (cost table)"
set title "live against the model at each mark: (live - model) / model"
set ylabel "difference (%)"
set yrange [*:*]
set format y "%+.1f"
plot 0 with lines lc "black" lw 1 notitle, \
     csv using 1:(100 * ($4 - $5) / $5) skip 1 with points pt 7 ps 1.5 lc rgb "#0072b2" title "pages_sharing", \
     csv using 1:(100 * ($6 - $7) / $7) skip 1 with points pt 5 ps 1.5 lc rgb "#d55e00" title "ksmd CPU"
set format y "%g"
# every 2 s from live-progress.csv and record-progress.csv beside the table
# (same clock as the marks), else the marks' samples
set title "the workload's own CPU time, all copies (how far it had got; whole seconds, every 2 s)"
set ylabel "CPU (s)"
set yrange [0:*]
lp = "live-progress.csv"; rp = "record-progress.csv"
if (system("test -s ".lp." && test -s ".rp." && echo y") eq "y") {
	plot lp using ($1 / 60000.0):2 skip 1 with steps lw 2 title "live run", \
	     rp using ($1 / 60000.0):2 skip 1 with steps lw 2 dt 2 title "recorded run"
} else {
	plot csv using 1:13 skip 1 with steps lw 2 title "live run", \
	     csv using 1:12 skip 1 with steps lw 2 dt 2 title "recorded run"
}
unset multiplot
