#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The large-tree study's two figures, from its summary.csv
# (analysis/summarise.py large-tree), into DIR:
#   large-tree-gate.png  per size and hash: the changes the gate saw, the
#                        pages changed after insertion in the unstable
#                        tree, the corrupt walks, and the false positives
#                        beside the number 2^-bits x gate_changed expects
#                        (log scale; means over seeds, 95% intervals)
#   large-tree-cpu.png   ksmd CPU (modelled, built-in costs) in % of one
#                        CPU, per size and hash, with 95% intervals
# usage: analysis/plot_large_tree.sh SUMMARY.csv DIR
set -euo pipefail
sum=${1:?usage: plot_large_tree.sh SUMMARY.csv DIR} dir=${2:?usage: plot_large_tree.sh SUMMARY.csv DIR}
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
w=$((560 + 120 * n))
gnuplot <<EOF
set terminal pngcairo size $w,640 noenhanced font 'Sans,11'
set datafile separator '\t'
set output '$T/gate.png'
set title "large-tree: every hash sees the same changes and lets none through\n(means over seeds with 95% intervals; the false positives observed are under each group)"
set logscale y
set yrange [1e-6:*]
set format y '%.0e'
set ylabel 'count over the run'
set style data histograms
set style histogram errorbars gap 2 lw 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics scale 0
set key below horizontal maxrows 2
set bmargin 9
set grid ytics
plot '$T/d.tsv' using 2:3:4:xtic(sprintf("%s\nfalse positives: %g", strcol(1), \$11)) title 'changes the gate saw' lc rgb '#4477aa', \
     '' using 5:6:7 title 'changed after insertion' lc rgb '#66ccee', \
     '' using 8:9:10 title 'corrupt unstable walks' lc rgb '#228833', \
     '' using 14:15:16 title 'false positives expected by chance (2^-bits x changes)' lc rgb '#aa3377'
set output '$T/cpu.png'
set bmargin -1
unset logscale y
set format y '%g'
set yrange [0:*]
set title "large-tree: ksmd CPU, MODELLED (built-in cost table), % of one CPU\n(mean over seeds, 95% interval)"
set ylabel '% of one CPU (modelled)'
set key off
plot '$T/d.tsv' using 17:18:19:xtic(1) title 'ksmd CPU (modelled)' lc rgb '#4477aa'
EOF
mkdir -p "$dir"
for f in gate cpu; do
	[[ -s $T/$f.png ]] || { echo "plot_large_tree.sh: gnuplot made no $f figure" >&2; exit 2; }
	cp "$T/$f.png" "$dir/.large-tree-$f.png.tmp" && mv "$dir/.large-tree-$f.png.tmp" "$dir/large-tree-$f.png"
	echo "$dir/large-tree-$f.png"
done
