# SPDX-License-Identifier: GPL-2.0-or-later
# predict.sh's plot: pages_sharing and ksmd's CPU, live against the model,
# at every mark, and the workload's own CPU time in the two runs (how far
# it had got).   gnuplot -e "csv='minutes.csv'; out='predict.png'" predict.gp
set terminal pngcairo size 900,1000 font ",10"
set output out
set datafile separator ","
set key below noenhanced
set grid
set offsets 0, 0.25, 0, 0
set xlabel "minutes after attach (recorded run, trace) / KSM on (live run)"
set multiplot layout 3,1
set title "pages_sharing at every mark: live kernel against the model" noenhanced
set ylabel "pages_sharing" noenhanced
plot csv using 1:4 skip 1 with linespoints pt 7 lw 2 title "live", \
     csv using 1:5 skip 1 with linespoints pt 6 lw 2 dt 2 title "model (ksmsim run, the recorded trace)"
set title "ksmd CPU since KSM on (cumulative)"
set ylabel "ksmd CPU (ms)"
plot csv using 1:6 skip 1 with linespoints pt 7 lw 2 title "live (/proc/<ksmd>/schedstat)", \
     csv using 1:7 skip 1 with linespoints pt 6 lw 2 dt 2 title "model (cost table)"
set title "the workload's own CPU time, all copies (how far it had got)"
set ylabel "CPU (s)"
plot csv using 1:13 skip 1 with linespoints pt 7 lw 2 title "live run", \
     csv using 1:12 skip 1 with linespoints pt 6 lw 2 dt 2 title "recorded run"
unset multiplot
