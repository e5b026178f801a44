#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The 2017 question in one figure, from seeds-2017.sh's summary.csv: per
# workload, crc32c's difference from jhash2 in % (CoW, mean
# pages_sharing, mean pages_unshared, checksum time), the model's mean
# over seeds with its 95% interval beside 2017's difference (the mean of
# two runs a hash). The y range holds every interval and 2017 point.
# The model's n runs are every seed x timing replicate (seeds-2017.sh
# --timings); KERNEL names the ksmd they model (default: Linux 6.18).
# usage: analysis/plot_2017_seeds.sh SUMMARY.csv DIR [KERNEL]   (writes DIR/2017-deltas.png)
set -euo pipefail
sum=${1:?usage: plot_2017_seeds.sh SUMMARY.csv DIR [KERNEL]} dir=${2:?usage: plot_2017_seeds.sh SUMMARY.csv DIR [KERNEL]}
kernel=${3:-Linux 6.18}
[[ $kernel =~ ^[A-Za-z0-9.\ ]+$ ]] || { echo "plot_2017_seeds.sh: KERNEL '$kernel': letters, digits, dots and spaces" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "plot_2017_seeds.sh: gnuplot not found" >&2; exit 2; }
[[ -r $sum ]] || { echo "plot_2017_seeds.sh: cannot read $sum" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for w in kernel-build iozone; do
	awk -F, -v OFS='\t' -v w="$w" '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["workload"] == w && $c["hash"] == "crc32c" && $c["metric"] ~ /_vs_jhash2_pct$/ {
			m = $c["metric"]; sub(/_vs_jhash2_pct$/, "", m)
			lab["cow_ksm"] = "CoW"; lab["avg_pages_sharing"] = "pages_sharing"
			lab["avg_pages_unshared"] = "pages_unshared"
			if (!(m in lab)) next
			# the interval over the seed means where summarise.py gives it
			# (the timings of one seed are not independent draws), else over the runs
			if ("seed_ci95_low" in c) { lo = $c["seed_ci95_low"]; hi = $c["seed_ci95_high"] }
			else { lo = $c["ci95_low"]; hi = $c["ci95_high"] }
			if (lo == "") { lo = $c["mean"]; hi = lo }
			p = $c["published_2017"]; if (p == "") p = "NaN"
			s = ("seeds" in c) ? $c["seeds"] : $c["n"]; t = ("timings" in c) ? $c["timings"] : 1
			print lab[m], $c["mean"], lo, hi, p, $c["n"], s, t }' "$sum" >"$T/$w.tsv"
	[[ -s $T/$w.tsv ]] || { echo "plot_2017_seeds.sh: no crc32c rows for $w in $sum" >&2; exit 2; }
done
# n runs per workload: seeds x timings (its CoW row's)
runs() { awk -F'\t' '{printf "%s seeds x %s timing%s, n = %s", $7, $8, ($8 == 1 ? "" : "s"), $6; exit}' "$T/$1.tsv"; }
rkb=$(runs kernel-build) rio=$(runs iozone)
ct=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["workload"] == "kernel-build" && $c["hash"] == "crc32c" && $c["metric"] == "checksum_time_vs_jhash2_pct" {
	printf "checksum time: model %+.1f%%, 2017 %+.0f%%", $c["mean"], $c["published_2017"] }' "$sum")
# the y range: every interval end and 2017 point, with a margin
yr=$(cat "$T"/*.tsv | awk -F'\t' '{ for (i = 3; i <= 5; i++) if ($i != "NaN") { if ($i > m) m = $i; if (-$i > m) m = -$i } }
	END { m = m * 1.25 + 0.5; printf "%.1f", m }')
gnuplot <<EOF
set terminal pngcairo size 1200,600 noenhanced font 'Sans,11'
set output '$T/d.png'
set datafile separator '\t'
set multiplot layout 1,2 title "crc32c minus jhash2, in %: the model of $kernel's ksmd (bar: mean over seeds x timings, 95% interval over the seeds' means)\nbeside 2017 (x, the mean of its two runs). $ct (not drawn: off the scale).\nkernel-build's CoW is fixed by its generator: 0 by construction"
set style data histograms
set style histogram errorbars gap 2 lw 1.5
set style fill solid 0.6 border -1
set boxwidth 0.8
set grid ytics
set xtics scale 0
set yrange [-$yr:$yr]
set ylabel '% against jhash2 (model: modelled run)'
set xzeroaxis lt -1
set key top left
do for [w in "kernel-build iozone"] {
	set title w.' ('.(w eq 'iozone' ? '$rio' : '$rkb').')'
	plot '$T/'.w.'.tsv' using 2:3:4:xtic(1) title 'model (mean, 95% interval)' lc rgb '#4477aa', \
	     '' using (\$0):5 with points pt 2 ps 3 lw 3 lc rgb '#cc3311' title '2017 (mean of two runs a hash)'
}
unset multiplot
EOF
[[ -s $T/d.png ]] || { echo "plot_2017_seeds.sh: gnuplot made no figure" >&2; exit 2; }
mkdir -p "$dir"
cp "$T/d.png" "$dir/.2017-deltas.png.tmp" && mv "$dir/.2017-deltas.png.tmp" "$dir/2017-deltas.png"
echo "$dir/2017-deltas.png"
