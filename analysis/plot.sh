#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# PNG plots (gnuplot) of the CSV files ksmsim writes. The kind of each file
# is told by its header; all time-series files given together share one
# figure, one line per file. See analysis/README.md.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: analysis/plot.sh [-o DIR] [--title TEXT] CSV...
Recognised CSV files (by header):
  ksmsim run --csv            pages_sharing and pages_unshared over time, one
                              line per file (label: file name, e.g. xxhash.csv)
  ksmsim run --summary-csv,   CoW count, checksum CPU time, false positives
  analysis/sweep.sh output,   and unstable-tree insertions per run
  collide ksm --csv
  ksmsim bench costs --csv    checksum cost per page, hot and cold
  collide false-positive      share of changes that keep the checksum
  collide birthday --curve-csv  observed collision curves vs the formula
  collide birthday --csv      first-collision quantiles per hash
Writes DIR/<file>-<what>.png (default DIR: .) and prints each path.
EOF
}

die() { echo "plot.sh: $*" >&2; exit 2; }
command -v gnuplot >/dev/null || die "gnuplot not found (apt-get install gnuplot-nox)"

outdir=. title="" files=()
while (($#)); do
	case $1 in
	-o | --out) outdir=$2; shift 2 ;;
	--title) title=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	-*) usage >&2; exit 2 ;;
	*) files+=("$1"); shift ;;
	esac
done
((${#files[@]})) || { usage >&2; exit 2; }
mkdir -p "$outdir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Common look: big enough to read on a slide, grid, no enhanced text (names have _).
style="set terminal pngcairo size 1200,720 noenhanced font 'Sans,12'
set datafile separator ','
set grid
set key outside right top"

# Write PNG atomically: gnuplot into a temporary name, then rename.
gp() {
	local png=$1 script=$2
	printf '%s\nset output "%s.tmp"\n%s\n' "$style" "$png" "$script" | gnuplot ||
		die "gnuplot failed for $png"
	mv "$png.tmp" "$png"
	echo "$png"
}

col() { # index (1-based) of column $2 in CSV $1, or empty
	{ head -1 "$1" | tr ',' '\n' | tr -d '"\r' | grep -nx -- "$2" || true; } | cut -d: -f1 | head -1
}

base() { local b; b=$(basename "$1"); echo "${b%.csv}"; }

series=()
for f in "${files[@]}"; do
	[[ -s $f ]] || die "$f is empty or missing"
	h=$(head -1 "$f" | tr -d '"\r')
	if [[ $h == t_us,trace_t_us,* ]]; then
		series+=("$f")
		continue
	fi
	if [[ $h == hash,bits,n,observed,formula* ]]; then kind=curve
	elif [[ $h == hash,bits,change,* ]]; then kind=fp
	elif [[ $h == hash,bits,pages,seed,trials,* ]]; then kind=birthday
	elif [[ $h == name,kind,bits,hot_ns_per_page* ]]; then kind=costs
	elif [[ -n $(col "$f" cow_ksm) && -n $(col "$f" hash) ]]; then kind=summary
	else
		die "$f: header not recognised"
	fi
	b=$(base "$f")
	case $kind in
	curve)
		gp "$outdir/$b-birthday.png" "
set title '${title:-Birthday collisions of page checksums}: observed share of trials (solid) vs formula (dashed)'
set xlabel 'distinct pages hashed, n (thousands)'
set ylabel 'P(some checksum repeated among n pages)'
set yrange [0:1.05]
hashes = system(\"awk -F, 'NR>1 && !s[\$1]++ {printf \\\"%s \\\", \$1}' '$f'\")
bitsof(h) = system(\"awk -F, -v h=\".h.\" '\$1==h {print \$2; exit}' '$f'\")
plot for [h in hashes] '$f' using (\$3/1000):(strcol(1) eq h ? \$4 : NaN) with lines lw 2 title h.' ('.bitsof(h).' bit)', \\
     for [h in hashes] '$f' using (\$3/1000):(strcol(1) eq h ? \$5 : NaN) with lines dt 2 lw 1 lc 'black' notitle, \\
     0.5 with lines lc 'gray' dt 3 title '50%'"
		;;
	birthday)
		# quantiles as boxes: p10..p90 with the median marked; none for censored hashes
		awk -F, 'NR>1 && $10!="" {print ++n","$1","$10","$11","$12","$9}' "$f" >"$work/q.csv"
		if [[ -s $work/q.csv ]]; then
			gp "$outdir/$b-first-collision.png" "
set title '${title:-Pages hashed until the first repeated checksum} (bars: 10th-90th percentile, dot: median, x: formula mean)'
set ylabel 'distinct pages hashed (thousands)'
set xlabel 'checksum'
set key inside top right
set style fill solid 0.3
set boxwidth 0.3
set xrange [0.5:$(($(wc -l <"$work/q.csv"))).5]
set yrange [0:*]
plot '$work/q.csv' using 1:(\$3/1000):(\$3/1000):(\$5/1000):(\$5/1000):xtic(2) with candlesticks lw 2 title '10th-90th percentile', \\
     '' using 1:(\$4/1000) with points pt 7 ps 2 title 'median', \\
     '' using 1:(\$6/1000) with points pt 2 ps 2 lc 'black' title 'formula mean'"
		fi
		;;
	fp)
		# x = hash, one point per change kind; hollow = none seen, 95% bound
		awk -F, 'NR>1 { if (!($1 in x)) { x[$1]=++n } ; c=$3;
			if (!(c in k)) { k[c]=++m; print c > "'"$work"'/kinds" }
			v=$7>0 ? $7 : $8; print x[$1]+(k[c]-2.5)*0.15","$1","c","v","($7>0)","$9 }' \
			"$f" >"$work/fp.csv"
		awk -F, 'NR>1 && !s[$1]++ {printf "%s\"%s\" %d", (n++ ? "," : ""), $1, n}' "$f" >"$work/xt"
		gp "$outdir/$b-false-positives.png" "
set title '${title:-Changed pages that keep their checksum}: filled = observed rate, hollow = none seen (95% upper bound)'
set ylabel 'share of changes undetected (log scale)'
set xlabel 'checksum'
set logscale y
set format y '%.0e'
set yrange [1e-12:3]
set xtics ($(cat "$work/xt"))
set xrange [0.4:$(awk -F, 'NR>1 && !s[$1]++ {n++} END {print n + 0.6}' "$f")]
kinds = system(\"cat '$work/kinds' | tr '\\\\n' ' '\")
plot for [i=1:words(kinds)] '$work/fp.csv' using 1:(strcol(3) eq word(kinds,i) && \$5 > 0 ? \$4 : NaN) with points pt 7 ps 2.2 lc i title word(kinds,i), \\
     for [i=1:words(kinds)] '$work/fp.csv' using 1:(strcol(3) eq word(kinds,i) && \$5 == 0 ? \$4 : NaN) with points pt 6 ps 2.2 lc i notitle, \\
     2**-32 with lines dt 2 lc 'black' title '2^-32'"
		;;
	costs)
		awk -F, 'NR>1 { gsub(/"/,""); if ($2=="hash") print $1","$4","$6 }' "$f" >"$work/c.csv"
		gp "$outdir/$b-checksum-cost.png" "
set title '${title:-Checksum cost per 4 KiB page} (ksmsim bench costs)'
set ylabel 'ns per page (log scale)'
set xlabel 'checksum'
set logscale y
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -30
set yrange [10:*]
plot '$work/c.csv' using 2:xtic(1) title 'hot (page in L1)', '' using 3 title 'cold (streaming)'"
		;;
	summary)
		# one bar per row: label workload/hash (or hash), a panel per metric
		hc=$(col "$f" hash); wc_=$(col "$f" workload)
		metrics=()
		for m in cow_ksm ksmd_cpu_ms checksum_ms false_positives unstable_inserts unstable_corrupt_walks \
			missed_merges avg_pages_sharing avg_pages_unshared peak_pages_unshared extra_unstable_inserts; do
			c=$(col "$f" $m)
			# a column without one number (e.g. missed_merges under --no-ideal) is left out
			[[ -n $c ]] && awk -F, -v c="$c" 'NR > 1 && $c != "" { ok = 1 } END { exit !ok }' "$f" &&
				metrics+=("$m:$c")
		done
		# sweep output: parameters other than workload/hash join the label
		pcols=$(head -1 "$f" | tr ',' '\n' | { grep -n '^set_' || true; } | cut -d: -f1 | tr '\n' ' ')
		# label: workload (when several), hash, then the swept values joined by /
		awk -F, -v hc="$hc" -v wc="$wc_" -v pc="$pcols" -v keyf="$work/key" '
			NR == FNR { if (FNR > 1 && wc) nw += !seen[$wc]++; next }
			FNR == 1 { n = split(pc, p, " "); for (i = 1; i <= n; i++) key = key (i > 1 ? "/" : "") substr($p[i], 5); next }
			{ l = (nw > 1 ? $wc " " : "") $hc; v = ""
			  for (i = 1; i <= n; i++) v = v (i > 1 ? "/" : "") $p[i]
			  if (n) l = l " " v; print l "," $0 }
			END { print key > keyf }' "$f" "$f" >"$work/s.csv"
		sub=""
		[[ -n $(cat "$work/key") ]] && sub=" (bars: hash $(cat "$work/key"))"
		rows=$(wc -l <"$work/s.csv")
		prow=$(((${#metrics[@]} + 2) / 3))
		script="set multiplot layout $prow,3 title '${title:-Per-run results: $b}$sub'
set style data histograms
set style fill solid 0.8 border -1
set key off
set yrange [0:*]
set xtics rotate by -45 font ',9'
"
		for mc in "${metrics[@]}"; do
			m=${mc%%:*} c=${mc#*:}
			unit=count; [[ $m == *_ms ]] && unit=ms; [[ $m == avg_* || $m == peak_* ]] && unit=pages
			zero=$(awk -F, -v c="$c" 'NR > 1 && $c != 0 { nz = 1 } END { print nz ? "" : " (all 0)" }' "$f")
			script+="set title '$m$zero'
set ylabel '$unit'
plot '$work/s.csv' using $((c + 1)):xtic(1) lc rgb '#3070b0'
"
		done
		script+="unset multiplot"
		w=$((1200 + rows * 8 > 2400 ? 2400 : 1200 + rows * 8))
		style_save=$style
		style=${style/1200,720/$w,$((prow * 520))}
		gp "$outdir/$b-per-run.png" "$script"
		style=$style_save
		;;
	esac
done

if ((${#series[@]})); then
	plots_sh="" plots_un="" i=0
	for f in "${series[@]}"; do
		i=$((i + 1))
		b=$(base "$f")
		cs=$(col "$f" pages_sharing) cu=$(col "$f" pages_unshared)
		plots_sh+="'$f' using (\$1/1e6):$cs with lines lw 2 dt $i title '$b', "
		plots_un+="'$f' using (\$1/1e6):$cu with lines lw 2 dt $i title '$b', "
	done
	name=$(base "${series[0]}")
	((${#series[@]} > 1)) && name=timeseries
	style_save=$style
	style=${style/1200,720/1200,1000}
	gp "$outdir/$name-pages.png" "
set multiplot layout 2,1 title '${title:-KSM pages over time}'
set key below
set xlabel 'simulated time (s)'
set ylabel 'pages_sharing (pages)'
set title 'pages_sharing: memory saved'
set yrange [0:*]
plot ${plots_sh%, }
set title 'pages_unshared: pages in the unstable tree'
set ylabel 'pages_unshared (pages)'
plot ${plots_un%, }
unset multiplot"
	style=$style_save
fi
