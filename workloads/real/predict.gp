# SPDX-License-Identifier: GPL-2.0-or-later
# predict.sh's plot: pages_sharing and ksmd's CPU, live against the model,
# at every mark.   gnuplot -e "csv='minutes.csv'; out='predict.png'" predict.gp
set terminal pngcairo size 900,700 font ",10"
set output out
set datafile separator ","
set key top left
set grid
set multiplot layout 2,1
set title "pages\\_sharing at every mark: live kernel against the model"
set ylabel "pages_sharing"
set xlabel "minutes after KSM on (live) / attach (trace)"
plot csv using 1:4 skip 1 with linespoints pt 7 lw 2 title "live", \
     csv using 1:5 skip 1 with linespoints pt 6 lw 2 dt 2 title "model (ksmsim run)"
set title "ksmd CPU since KSM on (cumulative)"
set ylabel "ksmd CPU (ms)"
plot csv using 1:6 skip 1 with linespoints pt 7 lw 2 title "live (/proc/ksmd/schedstat)", \
     csv using 1:7 skip 1 with linespoints pt 6 lw 2 dt 2 title "model (cost table)"
unset multiplot
