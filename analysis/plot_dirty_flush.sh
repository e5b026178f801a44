#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What dirty-bit's cost rests on, from policies.sh's dirty-flush CSV
# (`ksmsim advise --policies kernel,dirty-bit:flush_ns=N,...`): modelled
# ksmd CPU against the cost of one clear-and-flush of a set dirty bit
# (log x), a point per dirty-bit run and the line the model is in the
# flush cost (a curve on the log axis), the kernel's checksums as horizontal lines, and the flush cost at
# which dirty-bit breaks even with each of them marked. dirty-bit's own
# default (3100 ns) is the row without flush_ns.
# usage: analysis/plot_dirty_flush.sh CSV PNG
set -euo pipefail
csv=${1:?usage: plot_dirty_flush.sh CSV PNG} png=${2:?usage: plot_dirty_flush.sh CSV PNG}
command -v gnuplot >/dev/null || { echo "plot_dirty_flush.sh: gnuplot not found" >&2; exit 2; }
[[ -r $csv ]] || { echo "plot_dirty_flush.sh: cannot read $csv" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# dirty-bit rows: flush ns, CPU ms, flushes; kernel rows: hash, CPU ms
awk -F, -v d="$T" '
	NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ gsub(/"/, "") }
	$c["policy"] == "kernel" { print $c["hash"], $c["ksmd_cpu_ms"] > (d "/k.dat") }
	$c["policy"] ~ /^dirty-bit/ { f = 3100; if (match($c["policy"], /flush_ns=[0-9]+/))
		f = substr($c["policy"], RSTART + 9, RLENGTH - 9)
		print f, $c["ksmd_cpu_ms"], $c["dirty_flushes"] > (d "/d.dat") }' "$csv"
[[ -s $T/d.dat && -s $T/k.dat ]] || { echo "plot_dirty_flush.sh: $csv has no dirty-bit or kernel rows" >&2; exit 2; }
sort -n -o "$T/d.dat" "$T/d.dat"
# CPU(flush) = CPU(f0) + flushes x (flush - f0) / 1e6 ms: the break-even flush cost per kernel row
read -r f0 c0 fl < "$T/d.dat"
script=""
i=0
while read -r h k; do
	be=$(awk -v k="$k" -v c0="$c0" -v f0="$f0" -v fl="$fl" 'BEGIN { printf "%.0f", f0 + (k - c0) * 1e6 / fl }')
	col=$([[ $i == 0 ]] && echo '#228833' || echo '#aa3377')
	script+="set arrow from $be, graph 0 to $be, graph 1 nohead dt 2 lc rgb '$col'
set label 'breaks even with $h: $be ns' at $be, graph 0.$((62 - 8 * i)) right offset -0.5,0 tc rgb '$col'
"
	echo "$h $k $col" >>"$T/kl"
	i=$((i + 1))
done < "$T/k.dat"
plots="$c0 + $fl * (x - $f0) / 1e6 with lines lw 2 lc rgb '#4477aa' title 'dirty-bit: CPU(f0) + flushes x (flush - f0)', '$T/d.dat' using 1:2 with points pt 7 ps 1.8 lc rgb '#4477aa' title 'dirty-bit runs'"
while read -r h k col; do
	plots+=", $k with lines lw 2 lc rgb '$col' title 'kernel, $h checksum'"
done < "$T/kl"
gnuplot <<EOF
set terminal pngcairo size 1000,600 noenhanced font 'Sans,11'
set output '$T/p.png'
set title "kernel-build at --scale 0.1: dirty-bit against the checksums, by the cost of one dirty-bit clear and TLB flush\n($fl flushes over the run; CPU is the model's, with the built-in costs; dirty-bit's default is 3100 ns)"
set xlabel 'cost of one clear and flush of a set dirty bit (ns, log scale)'
set ylabel 'ksmd CPU over the run (ms, modelled)'
set logscale x
set xrange [0.5:20000]
set samples 400
set yrange [0:*]
set grid
set key top left
$script
plot $plots
EOF
[[ -s $T/p.png ]] || { echo "plot_dirty_flush.sh: gnuplot made no figure" >&2; exit 2; }
cp "$T/p.png" "$png.tmp.$$" && mv "$png.tmp.$$" "$png"
echo "$png"
