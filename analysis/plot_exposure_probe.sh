#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# exposure.sh's probe figure from its probe.csv: per knob setting, the time
# until half (T50) and 99% (T99) of an attacker's probe pages merge with
# the victim's, against the background the host holds. Log axes; the
# times are labelled in s, min, h and days.
# usage: analysis/plot_exposure_probe.sh PROBE.csv OUT.png
set -euo pipefail
csv=${1:?usage: plot_exposure_probe.sh PROBE.csv OUT.png} out=${2:?usage: plot_exposure_probe.sh PROBE.csv OUT.png}
command -v gnuplot >/dev/null || { echo "plot_exposure_probe.sh: gnuplot not found" >&2; exit 2; }
[[ -s $csv ]] || { echo "plot_exposure_probe.sh: cannot read $csv" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the knob settings, in the order of the file
mapfile -t knob_list < <(awk -F, 'NR > 1 && !s[$2]++ { print $2 }' "$csv")
((${#knob_list[@]})) || { echo "plot_exposure_probe.sh: $csv has no rows" >&2; exit 2; }
gp=$work/plot.gp
{
	echo 'set terminal pngcairo size 1000,560 font ",10"'
	sq="'"	# in gnuplot's single quotes a quote is doubled
	echo "set output '${work//$sq/$sq$sq}/out.png'"
	echo 'set logscale x 2'
	echo 'set logscale y 10'
	echo 'set xlabel "background guests, GiB (4 guests)"'
	echo 'set ylabel "time after the probe write (log scale)"'
	# the times in the units a reader thinks in
	echo 'set ytics ("1 s" 1, "10 s" 10, "1 min" 60, "10 min" 600, "1 h" 3600, "6 h" 21600, "1 day" 86400, "1 week" 604800)'
	echo 'set mytics 1'
	echo 'set key outside right'
	echo 'set grid'
	echo 'set title "Time until an attacker'"'"'s probe page merges with the victim'"'"'s (ksmsim model, gen probe, 100 pages)"'
	printf 'plot '
	i=0
	for k in "${knob_list[@]}"; do
		# one file a knob setting: host, T50, T99 (a line joins only its own points)
		awk -F, -v k="$k" 'NR > 1 && $2 == k && $9 != "" { print $1, $9, $10 }' "$csv" >"$work/$i.dat"
		[ $i -gt 0 ] && printf ', '
		printf "'%s' using 1:2 with linespoints lt %d pt 7 title \"%s T50\", " "$work/$i.dat" $((i + 1)) "$k"
		printf "'%s' using 1:3 with linespoints lt %d dt 2 pt 6 title \"%s T99\"" "$work/$i.dat" $((i + 1)) "$k"
		i=$((i + 1))
	done
	echo
} >"$gp"
gnuplot "$gp"
cp "$work/out.png" "$out.tmp" && mv "$out.tmp" "$out"
echo "$out"
