#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The large-tree study's two figures, from its summary.csv
# (analysis/summarise.py large-tree), into DIR:
#   large-tree-gate.png  per size and hash: the changes the gate saw, the
#                        pages changed after insertion in the unstable
#                        tree, the corrupt walks, and the false positives
#                        beside the number 2^-bits x gate_changed expects
#                        (points on a log scale, 0 on a floor line; means
#                        over seeds, 95% intervals)
#   large-tree-cpu.png   ksmd CPU (modelled, built-in costs) in % of one
#                        CPU, per size and hash, with 95% intervals (drawn,
#                        and printed as +- under each mean: over seeds
#                        they are far narrower than a bar) and the
#                        one-CPU line
# usage: analysis/plot_large_tree.sh SUMMARY.csv DIR [LABEL]
# (LABEL, default large-tree: the workload the titles name)
set -euo pipefail
sum=${1:?usage: plot_large_tree.sh SUMMARY.csv DIR} dir=${2:?usage: plot_large_tree.sh SUMMARY.csv DIR}
label=${3:-large-tree}
command -v gnuplot >/dev/null || { echo "plot_large_tree.sh: gnuplot not found" >&2; exit 2; }
[[ -r $sum ]] || { echo "plot_large_tree.sh: cannot read $sum" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# one row per (size, hash): label, then mean / low / high of each metric
awk -F, -v OFS='\t' '
	NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ k = $c["size_gib"] " GiB " $c["hash"]; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
	  m = $c["metric"]; lo = $c["ci95_low"]; hi = $c["ci95_high"]
	  if (lo == "") { lo = $c["mean"]; hi = $c["mean"] }
	  v[k, m] = $c["mean"] OFS lo OFS hi }
	END { for (i = 1; i <= n; i++) { k = order[i]
		print k, v[k, "gate_changed"], v[k, "unstable_changed_after_insert"],
		      v[k, "unstable_corrupt_walks"], v[k, "false_positives"],
		      v[k, "expected_false_positives"], v[k, "ksmd_cpu_pct"] } }' "$sum" >"$T/d.tsv"
[[ -s $T/d.tsv ]] || { echo "plot_large_tree.sh: $sum has no rows" >&2; exit 2; }
n=$(wc -l <"$T/d.tsv")
w=$((700 + 130 * n)); ((w >= 1300)) || w=1300
# the most modelled CPU, to keep the one-CPU line in view
# (below 20% it would flatten the bars: then a scale of their own, the line
# named in a label instead)
most=$(awk -F'\t' '{ if ($19 > m) m = $19 } END { print m + 0 }' "$T/d.tsv")
top=$(awk -v m="$most" 'BEGIN { print (m > 100 ? m * 1.15 : m >= 20 ? 115 : m * 1.4) }')
if awk -v m="$most" 'BEGIN { exit !(m >= 20) }'; then
	oneline="set arrow from graph 0, first 100 to graph 1, first 100 nohead lc rgb '#cc3311' lw 2 dt 2
set label 'one CPU: a single ksmd thread cannot go above it (runs without --batch-time can)' at graph 0.02, first 100 offset 0,0.8 tc rgb '#cc3311'"
else
	oneline="set label sprintf('every run far below one CPU (100%%, off this scale): the most is %.2f%%', $most) at graph 0.02, graph 0.93 tc rgb '#cc3311'"
fi
gnuplot <<EOF
set terminal pngcairo size $w,680 noenhanced font 'Sans,11'
set datafile separator '\t'
set output '$T/gate.png'
set title "$label: what the gate saw and let through, per size and hash (points: means over seeds, 95% intervals)\nfalse positives 0 are drawn on the floor line; knobs: pages_to_scan 100 per GiB of guests every 200 ms, smart_scan 0"
set logscale y
set yrange [1e-16:1e9]
set format y '1e%T'
set ylabel 'count over the run (log)'
set xrange [-0.6:$n-0.4]
set xtics rotate by -30 scale 0
set key at graph 0.5, graph 0.32 center center horizontal maxrows 1 box opaque
set bmargin 5
set grid ytics
set arrow from graph 0, first 3e-16 to graph 1, first 3e-16 nohead lc rgb '#999999' dt 3
set label 'none (0)' at graph 0.01, first 1e-15 tc rgb '#666666'
flo(x) = x > 0 ? x : 3e-16
plot '$T/d.tsv' using (\$0-0.24):2:3:4:xtic(1) with yerrorbars pt 7 ps 1.4 lc rgb '#4477aa' title 'changes the gate saw', \
     '' using (\$0-0.08):5:6:7 with yerrorbars pt 9 ps 1.4 lc rgb '#66ccee' title 'changed after insertion', \
     '' using (\$0+0.08):8:9:10 with yerrorbars pt 5 ps 1.2 lc rgb '#228833' title 'corrupt unstable walks', \
     '' using (\$0+0.24):(flo(\$11)) with points pt 2 ps 2.2 lw 3 lc rgb '#cc3311' title 'false positives observed', \
     '' using (\$0+0.24):(flo(\$14)) with points pt 12 ps 1.8 lw 2 lc rgb '#aa3377' title 'expected by chance: 2^-bits x changes'
set output '$T/cpu.png'
unset arrow
unset label
unset logscale y
set format y '%g'
set yrange [0:$top]
set xrange [-0.6:$n-0.4]
set title "$label: ksmd CPU, MODELLED (built-in cost table, AMD EPYC), % of one CPU\n(mean over seeds and its 95% interval, printed under it: too narrow to draw; knobs: pages_to_scan 100 per GiB of guests every 200 ms)"
set ylabel '% of one CPU (modelled)'
set key default
set key inside top right
set bmargin 8
$oneline
set style fill solid 0.8 border -1
set boxwidth 0.6
plot '$T/d.tsv' using 0:17:xtic(1) with boxes lc rgb '#4477aa' title 'ksmd CPU (modelled)', \
     '' using 0:17:18:19 with yerrorbars pt 0 lc rgb 'black' notitle, \
     '' using 0:17:(sprintf("%.2f\\n± %.2g", \$17, (\$19 - \$18) / 2)) with labels offset 0,1.6 notitle
EOF
mkdir -p "$dir"
for f in gate cpu; do
	[[ -s $T/$f.png ]] || { echo "plot_large_tree.sh: gnuplot made no $f figure" >&2; exit 2; }
	cp "$T/$f.png" "$dir/.large-tree-$f.png.tmp" && mv "$dir/.large-tree-$f.png.tmp" "$dir/large-tree-$f.png"
	echo "$dir/large-tree-$f.png"
done
