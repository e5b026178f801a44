#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# PNG plots (gnuplot) of the CSV files ksmsim and the analysis scripts write.
# Each file's kind is told by its header, columns are found by name (extra
# columns are ignored), and every PNG is named after the file it draws, so
# nothing a call makes overwrites what another call made. See
# analysis/README.md.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: analysis/plot.sh [-o DIR] [--title TEXT] [--cpu TEXT] [--x COLUMN] [--ref PANEL:LABEL:VALUE]...
                        [--mark LABEL:X:Y]... CSV...
Each CSV gives the PNGs below, named from its file name STEM (STEM.csv):
  ksmsim run --csv (time series)
      all given together share one figure, one line per file, labelled
      with its hash: the `hash` column if there is one, else the part of
      the file names that differs (iozone-jhash2.csv, iozone-crc32c.csv:
      jhash2, crc32c). PREFIX-pages.png, PREFIX the part they share
      (iozone); with no shared part, the stems joined by '+'.
      Panels: pages_sharing and pages_unshared against simulated time.
  summary rows (ksmsim run --summary-csv, collide ksm -o and --run-csv,
  reproduce_2017.sh's tables.csv): one bar per run, coloured by hash,
  grouped by workload (or trace) when there are several; values on the bars;
  log axes on every panel where one panel's values span a factor of 20 or
  more (a log panel beside a linear one would read as one scale); pages also in
  GiB on the right. Metrics that are 0, or the same, in every row are named in
  the title instead of drawn (no figure when none is left).
      STEM-effects.png  cow_ksm, false_positives, unstable_corrupt_walks,
                        extra_unstable_inserts, missed_merges
      STEM-cost.png     checksum ms (checksums x ns/page when the price is
                        one value a hash: the model's input, named in the
                        title), ksmd_cpu_ms
      STEM-memory.png   mean (or avg, else end) and peak pages_sharing,
                        pages_unshared, pages_volatile; dedup_fraction
  sweeps (rows whose knob columns vary: set_KNOB or knob_KNOB as
  analysis/sweep.sh writes, or a bare knob name such as sleep_millisecs):
      STEM-METRIC.png   one per metric above that is not 0 everywhere: the
                        knob with the most values on x (--x COLUMN picks
                        another), one line per hash, one panel per value of
                        the other varying knobs and of workload
  ksmsim bench costs --csv
      STEM-checksum-cost.png   ns per page, hot and cold, per hash
  collide false-positive -o
      STEM-false-positives.png share of changes that keep the checksum, per
                               hash and kind of change, with the chance 2^-bits
                               where the axis reaches it
  collide birthday --curve-csv
      STEM-birthday.png        observed collision curves and the formula
  collide birthday -o
      STEM-first-collision.png first-collision quantiles per hash
Options:
  -o, --out DIR   where the PNGs go (default .); each path is printed
  --title TEXT    what every figure title calls the data (default: the
                  file's stem; for time series, the part their names share)
  --cpu TEXT      the CPU whose prices the costs are (named in the title of
                  every figure that draws a cost, e.g. 'AMD EPYC')
  --x COLUMN      the sweep column on the x axis
  --ref PANEL:LABEL:VALUE  a dashed reference line in a time-series
                  figure's PANEL (pages_sharing or pages_unshared), e.g.
                  2017's published mean: 'pages_sharing:2017 jhash2:949578'
  --mark LABEL:X:Y  a point marked (black x) in a birthday-curve figure,
                  X in pages, Y a share, e.g. '2017 claim:78000:0.51'
  -h, --help
CSV is read as RFC 4180 (quoted fields may hold commas, quotes and line
breaks); the columns drawn must hold numbers. Text from a CSV or a file name
reaches gnuplot only inside quoted strings, never as commands.
Exit status: 0 done, 2 bad usage, an unreadable, unrecognised or empty CSV,
a missing column, a column drawn that holds something else than numbers, an
output folder that cannot be written or a gnuplot failure (one line on
standard error).
EOF
}

die() { local m="plot.sh: $*"; echo "${m//[[:cntrl:]]/?}" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

outdir=. title="" cpu="" xknob="" files=() refs=() marks=()
while (($#)); do
	case $1 in
	-o | --out) (($# > 1)) || die "$1 needs a value"; outdir=$2; shift 2 ;;
	--title) (($# > 1)) || die "$1 needs a value"; title=$2; shift 2 ;;
	--x) (($# > 1)) || die "$1 needs a value"; xknob=$2; shift 2 ;;
	--cpu) (($# > 1)) || die "$1 needs a value"; cpu=$2; shift 2 ;;
	--mark) [[ ${2:-} =~ ^[A-Za-z0-9\ ,._-]+:[0-9.]+:[0-9.]+$ ]] ||
		die "--mark ${2:-}: LABEL:X:Y, X and Y numbers"
		marks+=("$2"); shift 2 ;;
	--ref) [[ ${2:-} =~ ^(pages_sharing|pages_unshared):[A-Za-z0-9\ ,._-]+:[0-9.]+$ ]] ||
		die "--ref ${2:-}: PANEL:LABEL:VALUE, PANEL pages_sharing or pages_unshared"
		refs+=("$2"); shift 2 ;;
	-h | --help) usage; exit 0 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) files+=("$1"); shift ;;
	esac
done
((${#files[@]})) || die "no CSV given (see --help)"
command -v gnuplot >/dev/null || die "gnuplot not found (apt-get install gnuplot-nox)"
command -v python3 >/dev/null || die "python3 not found"
mkdir -p -- "$outdir" 2>/dev/null || true
[[ -d $outdir ]] || die "-o $outdir: not a folder, and cannot be made one"
[[ -w $outdir && -x $outdir ]] || die "-o $outdir: cannot write there"
# The scratch folder's path goes into gnuplot and awk code: only letters,
# digits and ./_- in it, whatever TMPDIR holds.
work=$(mktemp -d 2>/dev/null) || work=""
if [[ ! $work =~ ^[A-Za-z0-9/._-]+$ ]]; then
	[[ -z $work ]] || rmdir -- "$work"
	work=$(mktemp -d /tmp/plot.XXXXXXXX)
fi
png_mode=$(printf %o $((0666 & ~0$(umask))))
pending=""	# a PNG being copied into its folder, not yet renamed into place
trap 'rm -rf "$work"; [[ -z $pending ]] || rm -f -- "$pending"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# One colour, dash and point per hash, the same in every figure, so that a
# reader who learnt jhash2's colour on one plot finds it on the next.
# Unknown names take the types after these.
hash_order=(jhash2 crc32c crc32 xxhash xxh32 xxh64 xxh3 sha1 sha256 none)
linetypes="
set linetype 1 lc rgb '#0072b2' dt 1 pt 7 lw 2
set linetype 2 lc rgb '#d55e00' dt 2 pt 5 lw 2
set linetype 3 lc rgb '#cc79a7' dt 4 pt 9 lw 2
set linetype 4 lc rgb '#009e73' dt 3 pt 13 lw 2
set linetype 5 lc rgb '#e69f00' dt 5 pt 11 lw 2
set linetype 6 lc rgb '#56b4e9' dt 1 pt 4 lw 2
set linetype 7 lc rgb '#882255' dt 1 pt 6 lw 2
set linetype 8 lc rgb '#999999' dt 4 pt 8 lw 2
set linetype 9 lc rgb '#8c510a' dt 3 pt 10 lw 2
set linetype 10 lc rgb '#7570b3' dt 5 pt 12 lw 2
set linetype 11 lc rgb '#1b9e77' dt 1 pt 1 lw 2
set linetype 12 lc rgb '#e7298a' dt 2 pt 2 lw 2
set linetype cycle 12"

# awk: ltof(name) is the hash's line type, as above
awk_lt='function ltof(h,   i) {
	if (!(h in LT)) { for (i = 1; i <= nho; i++) if (ho[i] == h) { LT[h] = i; return i }
		LT[h] = nho + ++nunk }
	return LT[h] }
BEGIN { nho = split(HO, ho, " ") }'
awk_gq='function gq(s) { gsub(/[\001-\037\177]/, " ", s); gsub(/\047/, "\047\047", s); return "\047" s "\047" }'
awk_fmt='function fmt(v,   a) {
	a = v < 0 ? -v : v
	if (a >= 1e6) return sprintf("%.3gM", v / 1e6)
	if (a >= 1e4) return sprintf("%.3gk", v / 1e3)
	if (a >= 100 || v == int(v)) return sprintf("%d", v + (v < 0 ? -0.5 : 0.5))
	return sprintf("%.3g", v) }'

# Readable on a slide; no enhanced text (names hold _).
# gp PNG WIDTH HEIGHT SCRIPT: the PNG is written whole or not at all.
# gnuplot draws into the scratch folder (it does not report a failed
# write); the PNG is checked, copied beside its place and renamed into it.
gp() {
	local png=$1
	rm -f "$work/out.png"
	printf "set terminal pngcairo size %d,%d noenhanced font 'Sans,12'\nset output '%s'\nset datafile separator ','\nset grid\n%s\n%s\n" \
		"$2" "$3" "$work/out.png" "$linetypes" "$4" | gnuplot 2>"$work/gp.err" ||
		die "gnuplot failed for $png: $(head -3 "$work/gp.err" | tr '\n' ' ')"
	# whole: the PNG signature first and the IEND chunk last
	[[ $(head -c 8 "$work/out.png" 2>/dev/null | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a &&
		$(tail -c 12 "$work/out.png" | od -An -tx1 | tr -d ' \n') == 0000000049454e44ae426082 ]] ||
		die "gnuplot wrote no whole PNG for $png (is $work's file system full?)"
	pending=$(mktemp -- "$outdir/.plot.XXXXXXXX" 2>/dev/null) || die "cannot write in $outdir"
	# mktemp makes it 0600: the PNG gets the mode gnuplot would have given it
	{ chmod -- "$png_mode" "$pending" && cp -- "$work/out.png" "$pending" && mv -f -- "$pending" "$png"; } 2>/dev/null ||
		die "cannot write $png"
	pending=""
	echo "$png"
}

# q TEXT: TEXT as a gnuplot string literal. Inside single quotes gnuplot
# expands nothing (no backquotes, no @macros, no backslash escapes): only
# '' is special, and a line break would end the command.
q() { local s=${1//[[:cntrl:]]/ }; printf "'%s'" "${s//\'/\'\'}"; }

# Each CSV is read once, by a CSV parser, into a TSV file with no tab or
# line break inside a field (analysis/csv2tsv.py); the rest reads that.
declare -A tsv=()
load() {
	local f=$1
	[[ -n ${tsv[$f]:-} ]] && return
	[[ -d $f ]] && die "$f is a folder, not a CSV"
	[[ -s $f ]] || die "$f is empty or missing"
	tsv[$f]="$work/in${#tsv[@]}.tsv"
	python3 "$here/csv2tsv.py" "$f" "${tsv[$f]}" 2>"$work/py.err" || die "$(head -1 "$work/py.err")"
}
columns() { head -1 "${tsv[$1]}" | tr '\t' '\n'; }
header() { head -1 "${tsv[$1]}" | tr '\t' ','; }
has() { columns "$1" | grep -qxF -- "$2"; }
need() { local c; for c in "${@:2}"; do has "$1" "$c" || die "$1: no column '$c'"; done; }

# pick FILE COL...: those columns by header name, tab-separated; a column
# the file lacks comes out empty
pick() {
	local f=$1; shift
	PLOT_WANT=$(IFS=$'\t'; echo "$*") awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
		n = split(ENVIRON["PLOT_WANT"], w, "\t"); next }
	{ l = ""
	  for (i = 1; i <= n; i++) l = l (i > 1 ? "\t" : "") (w[i] in c ? $(c[w[i]]) : "")
	  print l }' "${tsv[$f]}"
}

# numeric FILE COL...: every value of those columns (those the file has) is
# a number or empty, as awk and gnuplot read numbers; else exit 2 naming it
numeric() {
	local f=$1 msg; shift
	msg=$(PLOT_WANT=$(IFS=$'\t'; echo "$*") awk -F'\t' 'NR == 1 { n = split(ENVIRON["PLOT_WANT"], w, "\t")
		for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ for (i = 1; i <= n; i++) if (w[i] in c) { v = $(c[w[i]])
		if (v != "" && v !~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/) {
			printf "row %d, column %s: \047%s\047 is not a number", NR - 1, w[i], v; exit } } }' "${tsv[$f]}")
	[[ -z $msg ]] || die "$f: $msg"
}

stem() { local b; b=$(basename "$1"); echo "${b%.csv}"; }

# Summary metrics by figure; the first of a '|' list that the file has
# is drawn (names differ between the tools that write summaries).
effects="cow_ksm false_positives unstable_corrupt_walks extra_unstable_inserts missed_merges_end|missed_merges mean_missed_merges|avg_missed_merges"
cost="checksum_ns_per_page|checksum_ns checksum_ms ksmd_cpu_ms"
memory="mean_pages_sharing|avg_pages_sharing|pages_sharing peak_pages_sharing mean_pages_unshared|avg_pages_unshared peak_pages_unshared mean_pages_volatile|avg_pages_volatile peak_pages_volatile dedup_fraction_end|dedup_fraction mean_dedup_fraction|avg_dedup_fraction"
drawn="$effects $cost $memory"
declare -A what=(
	[cow_ksm]="CoW breaks of merged pages" [false_positives]="false positives (changed, same checksum)"
	[unstable_corrupt_walks]="unstable-tree walks through changed pages"
	[extra_unstable_inserts]="unstable-tree inserts beyond the fewest"
	[missed_merges]="missed merges at the end" [missed_merges_end]="missed merges at the end"
	[mean_missed_merges]="missed merges, mean" [avg_missed_merges]="missed merges, mean"
	[checksum_ns_per_page]="checksum time per page (the model's input)" [checksum_ns]="checksum time per page (the model's input)"
	[checksum_ms]="checksum CPU time (modelled)" [ksmd_cpu_ms]="ksmd CPU time (modelled)"
	[dedup_fraction]="share of ideal dedup reached" [dedup_fraction_end]="share of ideal dedup reached"
	[mean_dedup_fraction]="share of ideal dedup, mean" [avg_dedup_fraction]="share of ideal dedup, mean" [pages_sharing]="pages_sharing at the end")
unit() {
	case $1 in
	*_ms) echo ms ;; *_ns_per_page | *_ns) echo "ns per page" ;;
	*pages_*) echo pages ;; *fraction*) echo share ;; *) echo count ;;
	esac
}
label() {
	case $1 in
	avg_pages_* | mean_pages_*) echo "${1#*_}, mean over the run" ;;
	peak_pages_*) echo "${1#*_}, peak" ;;
	*) echo "${what[$1]:-${1//_/ }}" ;;
	esac
}

# metrics FILE LIST: the columns of LIST the file has with a number in some
# row, as NAME; those 0 in every row are written to $work/zero
metrics() {
	local f=$1 alt m c out=()
	: >"$work/zero"
	for alt in $2; do
		for m in ${alt//|/ }; do has "$f" "$m" && break; m=; done
		[[ -n $m ]] || continue
		pick "$f" "$m" >"$work/m"
		c=$(awk '$1 != "" { n++ } $1 != "" && $1 != 0 { nz++ } END { print (n ? (nz ? "y" : "0") : "") }' "$work/m")
		case $c in y) out+=("$m") ;; 0) echo "$m" >>"$work/zero" ;; esac
	done
	echo "${out[*]}"
}

knob_names="pages_to_scan sleep_millisecs max_page_sharing use_zero_pages merge_across_nodes smart_scan
	stable_node_chains_prune_millisecs advisor_max_cpu advisor_min_pages_to_scan
	advisor_max_pages_to_scan advisor_target_scan_time advisor_mode"
param_names="workload trace source policy scale seed"

# varying FILE COL...: those of the columns that hold more than one value
varying() {
	local f=$1 c; shift
	for c; do
		has "$f" "$c" || continue
		[[ $(pick "$f" "$c" | sort -u | wc -l) -gt 1 ]] && echo "$c"
	done
	return 0
}

# knobs FILE: the run's knob columns: set_X and knob_X; else those a
# `pinned` column names (knob=value;... as ksmsim run --summary-csv writes:
# the knobs the run fixed); else the bare knob names that vary (a summary
# holds their end values)
knobs() {
	local f=$1 c
	columns "$f" | grep -E '^(set|knob)_' && return
	if has "$f" pinned; then
		pick "$f" pinned | tr ';' '\n' | sed -n 's/=.*//p' | tr - _ | sort -u |
			while read -r c; do if has "$f" "$c"; then echo "$c"; fi; done
		return
	fi
	# shellcheck disable=SC2086
	varying "$f" $knob_names
}

# log_ytics LO HI: the tics of a log y axis from LO to HI, labelled 2k, 5M:
# at 1, 2 and 5 of each decade when it spans 3 decades or fewer (a panel of
# values within a factor of 4 would show one tic or none), else at each
# decade
log_ytics() {
	awk -v lo="$1" -v hi="$2" 'function lab(v) {
			if (v >= 1e9) return sprintf("%gG", v / 1e9)
			if (v >= 1e6) return sprintf("%gM", v / 1e6)
			if (v >= 1e3) return sprintf("%gk", v / 1e3)
			return sprintf("%g", v) }
		BEGIN { n = split(log(hi / lo) / log(10) > 3 ? "1" : "1 2 5", m, " ")
			for (e = int(log(lo) / log(10)) - 1; 10 ^ e <= hi; e++)
				for (i = 1; i <= n; i++) { v = m[i] * 10 ^ e
					if (v >= lo && v <= hi) { t = t sep "\"" lab(v) "\" " v; sep = ", " } }
			print "set ytics (" t ")" }'
}

# panel_refs FILE METRIC I: a published reference beside our bars
# (reproduce_2017.sh's METRIC_2017), one per bar that has one, into
# ref-I.dat (empty when none)
panel_refs() {
	local f=$1 m=$2 i=$3
	: >"$work/ref-$i.dat"
	if has "$f" "${m}_2017"; then
		pick "$f" "${m}_2017" | paste -d, <(cut -d, -f1 "$work/bars.dat") - |
			awk -F, '$2 != ""' >"$work/ref-$i.dat"
	fi
}

# panel_axis I FORCE-LOG: "log LO HI" when panel I's positive values
# (references too) span a factor of 20 (about 1.3 decades), or FORCE-LOG
# is true and it has one; else "lin 0 HI"
panel_axis() {
	local yc=$((2 * $1 + 1))
	awk -F, -v c=$yc -v force="$2" 'FNR == 1 { f++ } f == 2 { c = 2 }
		$c != "" && $c > 0 { if (!n++ || $c < lo) lo = $c; if ($c > hi) hi = $c }
		END { if (n && (hi / lo >= 20 || force == "true")) printf "log %g %g", lo / 3, hi * 4
		      else printf "lin 0 %g", (hi > 0 ? hi * 1.25 : 1) }' \
		"$work/bars.dat" "$work/ref-$1.dat"
}

# bars FILE STEM NAME FIGURE-TITLE METRIC...: one panel per metric
bars() {
	local f=$1 b=$2 name=$3 ftitle=$4; shift 4
	local gcols=() m i n=$# script zero
	# shellcheck disable=SC2086
	mapfile -t gcols < <(varying "$f" $param_names)
	# group label: the varying parameters (a trace by its file name)
	pick "$f" hash "${gcols[@]}" "$@" | awk -F'\t' -v ng=${#gcols[@]} -v nm=$n -v HO="${hash_order[*]}" \
		-v dat="$work/bars.dat" -v tics="$work/tics" -v glab="$work/glabels" "$awk_lt $awk_fmt $awk_gq"'
	{ g = ""
	  for (i = 2; i <= ng + 1; i++) { p = $i; sub(/.*\//, "", p); sub(/\.gz$/, "", p); sub(/\.ksm[tb]$/, "", p)
		g = g (i > 2 ? " " : "") p }
	  if (!(g in gi)) { gi[g] = ++ngr; gname[ngr] = g }
	  if (!($1 in hi)) { hi[$1] = ++nh; hname[nh] = $1 }
	  row[NR] = $0; rg[NR] = gi[g]; rh[NR] = hi[$1] }
	END {
		# the hash under each bar; the group (when several) under its bars
		w = ngr > 1 ? 0.8 / nh : 0.6
		t = ""
		for (r = 1; r <= NR; r++) {
			split(row[r], v, "\t")
			x = ngr > 1 ? rg[r] + (rh[r] - (nh + 1) / 2) * w : rh[r]
			l = x "," ltof(v[1])
			for (i = 1; i <= nm; i++) { y = v[ng + 1 + i]; l = l "," y "," (y == "" ? "" : fmt(y)) }
			print l > dat
			t = t (r > 1 ? ", " : "") gq(v[1]) " " x
		}
		print t > tics
		printf "" > glab
		if (ngr > 1) for (i = 1; i <= ngr; i++)
			print "set label " gq(gname[i]) " at first " i ", graph -0.13 center font \",13\"" > glab
		print (ngr > 1 ? ngr : nh), ngr, w, NR, (ngr > 1 ? "font \",10\"" : "") > (dat ".n") }'
	local slots ngroups bw nbars rot pw
	read -r slots ngroups bw nbars rot <"$work/bars.dat.n"
	pw=$((nbars * 75 + 140 > 520 ? nbars * 75 + 140 : 520))
	# room for a GiB axis on the right
	for m; do [[ $(unit "$m") != pages ]] || { pw=$((pw + 110)); break; }; done
	# four panels as 2 x 2: no empty cells
	local cols=$((n == 4 ? 2 : n < 3 ? n : 3)) rows
	rows=$(((n + cols - 1) / cols))
	zero=$(paste -sd, "$work/zero" | sed 's/,/, /g')
	local mtitle="" tl
	while IFS= read -r tl; do mtitle+="${mtitle:+.\"\\n\".}$(q "$tl")"; done <<<"$ftitle"
	[[ -z $zero ]] || mtitle+=".\"\\n\".$(q "0 in every run: $zero")"
	[[ ! -s $work/same ]] || mtitle+=".\"\\n\".$(q "the same in every run: $(paste -sd, "$work/same" | sed 's/,/, /g')")"
	script="set multiplot layout $rows,$cols title $mtitle
set style fill solid 0.85 border lc 'black'
set xtics ($(cat "$work/tics")) scale 0 $rot
set xrange [0.4:$slots.6]
set boxwidth $bw
set key off
$(cat "$work/glabels")
"
	((ngroups > 1)) && script+="set bmargin 5
"
	# one scale for every panel: log on all when any panel's values span a
	# factor of 20 (a log panel beside a linear one reads as the same scale)
	local anylog=false
	i=0
	for m; do
		i=$((i + 1))
		panel_refs "$f" "$m" $i
		[[ $(panel_axis $i false) == log* ]] && anylog=true
	done
	i=0
	local linked=false
	for m; do
		i=$((i + 1))
		local yc=$((2 * i + 1)) lc=$((2 * i + 2))
		# a published reference beside our bars (reproduce_2017.sh's METRIC_2017):
		# a black cross on the bar it compares with
		local ref=""
		[[ -s $work/ref-$i.dat ]] && ref=", '$work/ref-$i.dat' using 1:2 with points pt 2 ps 2.5 lw 2.5 lc 'black' title '2017 (published)'"
		# the value labels: above the bar, or above its cross when it has
		# one, clear of it
		: >>"$work/ref-$i.dat"
		awk -F, -v c=$yc -v l=$lc 'FILENAME == ARGV[1] { r[$1] = $2; next }
			{ y = $c; if (($1 in r) && r[$1] > y) y = r[$1]
			  print $1 "," y "," $l "," (($1 in r) ? 1 : 0) "," ($c == "" ? 0 : $c) }' \
			"$work/ref-$i.dat" "$work/bars.dat" >"$work/lab-$i.dat"
		local ax
		ax=$(panel_axis $i $anylog)
		read -r kind lo hi <<<"$ax"
		local lt=""; [[ $kind == log ]] && lt=" (log scale)"
		script+="set title $(q "$(label "$m")$lt")
set ylabel '$(unit "$m")'
"
		# the last panel's GiB axis off, before the scale changes
		$linked && script+="unset link y2
unset y2tics
unset y2label
set ytics mirror
"
		linked=false
		if [[ $kind == log ]]; then
			script+="set logscale y
set yrange [$lo:$hi]
$(log_ytics "$lo" "$hi")
"
		else
			script+="unset logscale y
set ytics autofreq
set yrange [0:$hi]
set format y '$(awk -v h="$hi" 'BEGIN { print (h >= 10 ? "%.0f" : "%.2g") }')'
"
		fi
		# pages (linear axis): their GiB (4 KiB pages) on the right
		[[ $(unit "$m") == pages && $kind == lin ]] && linked=true && script+="set ytics nomirror
set link y2 via y*4096/2**30 inverse y*2**30/4096
set y2tics $(awk -v h="$hi" 'BEGIN { g = h * 4096 / 2^30 / 5; e = 10 ^ int(log(g) / log(10) - (g < 1)); s = g / e
	print (s <= 1 ? 1 : s <= 2 ? 2 : s <= 5 ? 5 : 10) * e }')
set format y2 '%g'
set y2label 'GiB (4 KiB pages)'
"
		[[ -n $ref ]] && script+="set key top left
" || script+="set key off
"
		script+="plot '$work/bars.dat' using 1:(\$$yc == 0 && '$kind' eq 'log' ? NaN : \$$yc):2 with boxes lc variable dt 1 notitle, \\
     '$work/lab-$i.dat' using 1:(\$5 == 0 && '$kind' eq 'log' ? $lo * 1.3 : \$2):(\$4 > 0 ? '' : stringcolumn(3)) with labels offset 0,0.7 font ',10' notitle, \\
     '' using 1:(\$5 == 0 && '$kind' eq 'log' ? $lo * 1.3 : \$2):(\$4 > 0 ? stringcolumn(3) : '') with labels offset 0,1.5 font ',10' notitle$ref
"
	done
	script+="unset multiplot"
	# room for the title's lines
	local th
	th=$(grep -c . <<<"$ftitle")
	[[ -z $zero ]] || th=$((th + 1))
	[[ ! -s $work/same ]] || th=$((th + 1))
	th=$((th * 18))
	# wide enough for the title's longest line (about 8 px a character)
	local fw=$((cols < 2 && pw < 900 ? 900 : cols * pw)) tw
	tw=$(awk '{ if (length($0) > m) m = length($0) } END { print m * 8 + 60 }' <<<"$ftitle")
	((fw >= tw)) || fw=$tw
	gp "$outdir/$b-$name.png" $fw $((rows * 460 + 40 + th)) "$script"
}

# same FILE METRIC...: those of the metrics that differ between rows; the
# others (one value in every row: a bar chart of equal bars says nothing)
# go to $work/same as "METRIC VALUE", for the title
same() {
	local f=$1 m out=()
	: >"$work/same"
	shift
	# only where the hashes are compared: runs of one hash (say, one
	# trace under several labels) keep their bars
	if (($(pick "$f" hash | sort -u | wc -l) < 2)); then echo "$*"; return; fi
	for m; do
		if (($(pick "$f" "$m" | sort -u | wc -l) == 1 && $(pick "$f" "$m" | wc -l) > 1)); then
			pick "$f" "$m" | head -1 | awk -v m="$m" "$awk_fmt"' { print m " " fmt($1) }' >>"$work/same"
		else
			out+=("$m")
		fi
	done
	echo "${out[*]}"
}

# priced FILE: when the checksum's price a page is one value a hash, of
# several hashes (the
# model's input, not a result), the prices go to $work/priced for the
# title, and a checksums column becomes a checksum_ms column (checksums
# times the price: the checksum's modelled CPU time, which does vary)
priced() {
	local f=$1 c
	: >"$work/priced"
	for c in checksum_ns_per_page checksum_ns; do has "$f" "$c" && break; c=; done
	[[ -n $c ]] || return 0
	local nh
	nh=$(pick "$f" hash | sort -u | wc -l)
	((nh > 1 && $(pick "$f" hash "$c" | sort -u | wc -l) == nh)) || return 0
	pick "$f" hash "$c" | awk -F'\t' '!s[$1]++ { printf "%s%s %.0f", (n++ ? ", " : ""), $1, $2 } END { print " ns a page" }' >"$work/priced"
	if has "$f" checksums && ! has "$f" checksum_ms; then
		PLOT_C=$c awk -F'\t' -v OFS='\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print $0, "checksum_ms"; next }
			{ print $0, ($(c["checksums"]) == "" ? "" : $(c["checksums"]) * $(c[ENVIRON["PLOT_C"]]) / 1e6) }' \
			"${tsv[$f]}" >"$work/priced.tsv" && mv "$work/priced.tsv" "${tsv[$f]}"
	fi
}

summary() {
	local f=$1 b m ms
	b=$(stem "$f")
	need "$f" hash
	# shellcheck disable=SC2086
	numeric "$f" ${drawn//|/ } checksums
	ms=$(metrics "$f" "$effects")
	# shellcheck disable=SC2086
	ms=$(same "$f" $ms)
	# shellcheck disable=SC2086
	[[ -n $ms ]] && bars "$f" "$b" effects "${title:-$b}: CoW, missed merges and checksum mistakes per run" $ms
	priced "$f"
	ms=$(metrics "$f" "$cost")
	[[ -s $work/priced ]] && ms=$(for m in $ms; do [[ $m == checksum_ns* ]] || echo "$m"; done)
	# shellcheck disable=SC2086
	ms=$(same "$f" $ms)
	local ct="${title:-$b}: CPU time per run${cpu:+, priced on $cpu}"
	[[ -s $work/priced ]] && ct+=$'\n'"checksum priced at $(cat "$work/priced")"
	# shellcheck disable=SC2086
	[[ -n $ms ]] && bars "$f" "$b" cost "$ct" $ms
	ms=$(metrics "$f" "$memory")
	# shellcheck disable=SC2086
	ms=$(same "$f" $ms)
	# shellcheck disable=SC2086
	[[ -n $ms ]] && bars "$f" "$b" memory "${title:-$b}: pages merged and in the unstable tree per run" $ms
	return 0
}

# sweep FILE KNOB...: per metric, the x knob against the metric, a line per
# hash, a panel per combination of the other varying knobs and workload
sweep() {
	local f=$1 b x others=() m ms np
	b=$(stem "$f"); shift
	need "$f" hash
	if [[ -n $xknob ]]; then
		need "$f" "$xknob"
		x=$xknob
	else
		x=$(for k; do echo "$(pick "$f" "$k" | sort -u | wc -l) $k"; done | sort -k1,1nr -s | head -1 | cut -d' ' -f2-)
	fi
	# shellcheck disable=SC2086
	numeric "$f" "$x" ${drawn//|/ }
	local k; for k in "$@"; do [[ $k == "$x" ]] || others+=("$k"); done
	# shellcheck disable=SC2086
	mapfile -t -O ${#others[@]} others < <(varying "$f" $param_names | grep -vx trace || true)
	ms=$(metrics "$f" "$effects $cost $memory")
	[[ -n $ms ]] || die "$f: no metric with a number"
	local xl=${x#set_}; xl=${xl#knob_}
	for m in $ms; do
		# the checksum's price a page is the model's input, one value a
		# hash whatever the knobs: a figure with no message (the costs
		# figure draws it)
		case $m in checksum_ns | checksum_ns_per_page) continue ;; esac
		rm -rf "$work/sw"; mkdir "$work/sw"
		# panels in the order of their knob values, each line along x
		local keys=() j
		for ((j = 4; j < 4 + ${#others[@]}; j++)); do keys+=("-k$j,${j}g"); done
		# shellcheck disable=SC2086
		pick "$f" "$x" "$m" hash "${others[@]}" | sort -t$'\t' "${keys[@]}" -k1,1g |
			PLOT_NAMES=$(IFS=$'\t'; echo "${others[*]}") awk -F'\t' -v d="$work/sw" -v HO="${hash_order[*]}" "$awk_lt"'
		BEGIN { no = split(ENVIRON["PLOT_NAMES"], on, "\t"); for (i = 1; i <= no; i++) { sub(/^(set|knob)_/, "", on[i]) } }
		$2 == "" { next }
		{ p = ""; for (i = 4; i <= NF; i++) p = p (i > 4 ? ", " : "") on[i - 3] " = " $i
		  if (!(p in pi)) { pi[p] = ++np; print np "," p > (d "/panels") }
		  f = d "/" pi[p] "-" ltof($3)
		  if (!(f in seen)) { seen[f] = 1; print pi[p] "," ltof($3) "," $3 > (d "/lines") }
		  print $1 "," $2 > f }'
		np=$(wc -l <"$work/sw/panels")
		local cols=$((np < 3 ? np : 3)) rows=$(((np + 2) / 3))
		local ax
		ax=$(cat "$work"/sw/[0-9]* | awk -F, '{ if (!n++ || $1 < xl) xl = $1; if ($1 > xh) xh = $1 }
			$2 > 0 { if (!m++ || $2 < lo) lo = $2; if ($2 > hi) hi = $2 } $2 < 0 { neg = 1 }
			END { printf "%s %s %s %g %g\n", (xl > 0 && xh / xl >= 10 ? "log" : "lin"), xl, xh,
				(m && !neg && hi / lo >= 20) ? lo : 0, hi }')
		local xs x0 x1 ys lo hi
		read -r xs x0 x1 lo hi <<<"$ax"
		[[ $lo == 0 ]] && ys=lin || ys=log
		local script
		local stitle="${title:-$b}: $(label "$m") against $xl"
		[[ $(unit "$m") != ms || -z $cpu ]] || stitle+=", priced on $cpu"
		script="set multiplot layout $rows,$cols title $(q "$stitle")
set xlabel $(q "$xl")
set ylabel '$(unit "$m")'
set key outside right top
"
		# the outer points clear of the frame: the range padded, on each side
		# by a factor (log axis) or a twentieth of the span
		script+="set xrange [$(awk -v s="$xs" -v a="$x0" -v b="$x1" 'BEGIN { if (s == "log") print a / 1.4 ":" b * 1.4
			else { d = (b > a ? (b - a) / 20 : 1); print a - d ":" b + d } }')]
"
		[[ $xs == log ]] && script+="set logscale x 2
set xtics ($(pick "$f" "$x" | sed '/^$/d' | sort -gu | paste -sd,))
"
		if [[ $ys == log ]]; then
			script+="set logscale y
set yrange [$lo/2:$hi*3]
set format y '%.0s%c'
"
		else
			# below 0 a little, so that a point at 0 hides no tick
			script+="set yrange [-${hi/#0/1}*0.04:${hi/#0/1}*1.15]
"
		fi
		local style=linespoints
		(($(pick "$f" "$x" | sed '/^$/d' | sort -gu | wc -l) > 2)) || style=points
		# lines drawn first are the widest: where all coincide, each shows
		sort -t, -k2,2n -o "$work/sw/lines" "$work/sw/lines"
		while IFS=, read -r pn pt; do
			local plots="" nl lw
			nl=$(grep -c "^$pn," "$work/sw/lines")
			j=0
			while IFS=, read -r lp lt h; do
				[[ $lp == "$pn" ]] || continue
				lw=$(awk -v j=$j -v n="$nl" 'BEGIN { print 1.5 + 2 * (n - 1 - j), 1.2 + 0.6 * (n - 1 - j) }')
				# two knob values are two points: no line invents what lies between
				plots+="'$work/sw/$pn-$lt' using 1:(\$2 > 0 || '$ys' eq 'lin' ? \$2 : NaN) with $style lt $lt lw ${lw% *} ps ${lw#* } title $(q "$h"), "
				j=$((j + 1))
			done <"$work/sw/lines"
			script+="set title $(q "$pt")
plot ${plots%, }
"
		done <"$work/sw/panels"
		script+="unset multiplot"
		gp "$outdir/$b-$m.png" $((cols * 600)) $((rows * 500 + 40)) "$script"
	done
}

fp() {
	local f=$1 b lo95=""
	b=$(stem "$f")
	need "$f" hash bits change rate rate_upper95
	numeric "$f" bits rate rate_upper95 rate_lower95
	has "$f" rate_lower95 && lo95=rate_lower95
	# x: the hash, points for the kinds of change side by side
	pick "$f" hash bits change rate rate_upper95 $lo95 | awk -F'\t' -v d="$work" "$awk_gq"'
	{ if (!($1 in x)) { x[$1] = ++n; bits[n] = $2; name[n] = $1 }
	  if (!($3 in k)) { k[$3] = ++m; kind[m] = $3 }
	  r[NR] = $0; rx[NR] = x[$1]; rk[NR] = k[$3] }
	END {
		for (i = 1; i <= NR; i++) { split(r[i], v, "\t")
			seen = v[4] > 0; y = seen ? v[4] : v[5]
			if (!lo || y < lo) lo = y
			# the 95% interval of an observed share (whiskers), when the file has it
			print rx[i] + (rk[i] - (m + 1) / 2) * 0.16 "," rk[i] "," y "," seen "," (v[6] != "" && seen ? v[6] : y) "," (seen ? v[5] : y) > (d "/fp.dat")
			# how far an upper bound (none seen) sits above the chance 2^-bits
			if (!seen && v[2] <= 32 && v[5] * 2 ^ v[2] > ratio) { ratio = v[5] * 2 ^ v[2]; rb = v[5]; rbits = v[2] }
			# a share near chance, as a ratio to it (the second panel)
			if (seen && v[4] < 0.5 && v[6] != "") { print rx[i] + (rk[i] - (m + 1) / 2) * 0.16 "," rk[i] "," v[4] * 2 ^ v[2] "," v[6] * 2 ^ v[2] "," v[5] * 2 ^ v[2] > (d "/ratio.dat"); nr++ } }
		for (i = 1; i <= m; i++) print kind[i] > (d "/kinds")
		t = ""; for (i = 1; i <= n; i++) t = t (i > 1 ? ", " : "") gq(name[i] " (" bits[i] " bit)") " " i
		print t > (d "/xt")
		# the chance a random change keeps a b-bit checksum, 2^-b, where the axis reaches
		floor = lo / 30; for (i = 1; i <= n; i++) if (2 ^ -bits[i] < floor && bits[i] <= 40) floor = 2 ^ -bits[i] / 30
		for (i = 1; i <= n; i++) {
			c = 2 ^ -bits[i]
			if (c >= floor) print i - 0.42 "," c "\n" i + 0.42 "," c "\n" > (d "/chance.dat")
			else print i "," floor * 3 ",2^-" bits[i] ": off scale" > (d "/below.dat") }
		note = ratio >= 10 ? sprintf("hollow: none seen; the 95%% upper bound %.1g sits %.0f times above 2^-%d, so these changes cannot tell the hashes apart", rb, ratio, rbits) : ""
		print n, floor > (d "/fp.n"); print note > (d "/fp.note") }'
	local n floor note
	read -r n floor <"$work/fp.n"
	note=$(cat "$work/fp.note")
	[[ -e $work/chance.dat ]] || : >"$work/chance.dat"
	[[ -e $work/below.dat ]] || : >"$work/below.dat"
	local plots="" i=0 k
	while read -r k; do
		i=$((i + 1))
		plots+="'$work/fp.dat' using 1:(\$2 == $i && \$4 > 0 ? \$3 : NaN):5:6 with yerrorbars pt 7 ps 2.2 lw 1.5 lt $((i + 1)) dt 1 title $(q "$k"), "
		plots+="'$work/fp.dat' using 1:(\$2 == $i && \$4 == 0 ? \$3 : NaN) with points pt 6 ps 2.2 lw 1.5 lt $((i + 1)) notitle, "
	done <"$work/kinds"
	# the key says what filled and hollow mean, in black
	plots+="NaN with points pt 7 ps 2.2 lc 'black' title 'filled: observed share (95% interval)', "
	grep -q ',0,[^,]*,[^,]*$' "$work/fp.dat" && plots+="NaN with points pt 6 ps 2.2 lw 1.5 lc 'black' title 'hollow: none seen, 95% upper bound', "
	[[ -s $work/chance.dat ]] && plots+="'$work/chance.dat' using 1:2 with lines lc 'black' dt 2 lw 1.5 title 'chance: 2^-bits', "
	[[ -s $work/below.dat ]] && plots+="'$work/below.dat' using 1:2:3 with labels font ',10' notitle, "
	local ratio="" h=760
	# shares near chance: their 95% intervals, too narrow for the log axis,
	# shown as ratios to 2^-bits in a second panel
	if [[ -s $work/ratio.dat ]]; then
		local rp="" i=0
		while read -r k; do
			i=$((i + 1))
			rp+="'$work/ratio.dat' using 1:(\$2 == $i ? \$3 : NaN):4:5 with yerrorbars pt 7 ps 1.5 lw 2 lt $((i + 1)) dt 1 notitle, "
		done <"$work/kinds"
		ratio="
set title 'the shares near chance, over 2^-bits, with their 95% intervals (1 = a uniform hash)'
unset logscale y
set format y '%.1f'
set ylabel 'observed share / 2^-bits'
set yrange [*:*]
set key off
plot ${rp}1 with lines lc 'black' dt 2 lw 1.5 notitle"
		h=1240
	fi
	gp "$outdir/$b-false-positives.png" 1300 $h "
${ratio:+set multiplot layout 2,1}
set title $(q "${title:+$title: }Changed pages that keep their checksum")${note:+.\"\\n\".$(q "$note")}
set ylabel 'share of changes undetected (log scale)'
set logscale y
set format y '%.0e'
set yrange [$floor:3]
set xtics ($(cat "$work/xt")) scale 0
set xrange [0.4:$n.6]
set samples 2
set key below horizontal maxrows 2 width 1
plot ${plots%, }
$ratio
${ratio:+unset multiplot}"
}

curve() {
	local f=$1 b g tr=""
	b=$(stem "$f")
	need "$f" hash bits n observed formula
	numeric "$f" bits n observed formula
	# the trials a hash, from a `collide birthday -o` file given with it: the
	# formula gets its 95% band, +-1.96 sqrt(p(1-p)/trials)
	for g in "${files[@]}"; do
		[[ ${kinds[$g]} == first_collision ]] || continue
		tr=$(pick "$g" bits trials | awk -F'\t' '{ if (!($1 in t)) t[$1] = $2 } END { for (b in t) printf "%s%s:%s", (n++ ? " " : ""), b, t[b] }')
		break
	done
	pick "$f" hash bits n observed formula | awk -F'\t' -v d="$work" -v HO="${hash_order[*]}" -v TR="$tr" "$awk_lt"'
	BEGIN { nt = split(TR, tt, " "); for (i = 1; i <= nt; i++) { split(tt[i], kv, ":"); trials[kv[1]] = kv[2] } }
	{ if (!($1 in h)) { h[$1] = ++nh; name[nh] = $1; bits[nh] = $2 }
	  print $3 / 1000 "," $4 > (d "/cv-" h[$1])
	  if ($4 > 0) hit[$1] = 1
	  if (!($2 in fb)) fb[$2] = $1
	  if (fb[$2] == $1) { se = ($2 in trials) ? 1.96 * sqrt($5 * (1 - $5) / trials[$2]) : 0
		print $3 / 1000 "," $5 "," $5 - se "," $5 + se > (d "/cf-" $2) }
	  if ($5 > fmax[$2]) fmax[$2] = $5
	  if ($5 < 0.999 && $3 / 1000 > xmax) xmax = $3 / 1000 }
	END { for (i = 1; i <= nh; i++) if (hit[name[i]]) print i "," ltof(name[i]) "," name[i] " (" bits[i] " bit)" > (d "/cv")
		# a curve at 0 (no repeat in any trial, 64 bits) would vanish into the
		# axis: named in a note instead
		else nohit = nohit (nohit == "" ? "" : ", ") name[i] " (" bits[i] " bit)"
		printf "" > (d "/cv.none"); if (nohit != "") print nohit ": no repeat in any trial" > (d "/cv.none")
		# a formula that stays near 0 (64 bits) would only cover the axis
		for (b in fb) if (fmax[b] >= 0.01) print b, ((b in trials) ? trials[b] : "") > (d "/cfb"); print xmax * 1.15 > (d "/cx") }'
	local plots="" bands="" i lt t bb bt r
	while read -r bb bt; do
		[[ -n $bt ]] && bands+="'$work/cf-$bb' using 1:3:4 with filledcurves fc rgb '#bbbbbb' fs solid 0.5 noborder title 'formula, $bb bit, +-1.96 se of $bt trials', "
	done < <(sort -n "$work/cfb" 2>/dev/null)
	while IFS=, read -r i lt t; do plots+="'$work/cv-$i' using 1:2 with lines lt $lt lw 2.5 title $(q "$t"), "; done <"$work/cv"
	while read -r bb bt; do plots+="'$work/cf-$bb' using 1:2 with lines lc 'black' dt 2 lw 1.5 title 'formula, $bb bit', "; done < <(sort -n "$work/cfb" 2>/dev/null)
	# --mark: published points, a black cross each, labelled
	local labels=""
	for r in "${marks[@]}"; do
		IFS=: read -r t i bb <<<"$r"
		plots+="'+' using ($i/1000.0):($bb) every ::0::0 with points pt 2 ps 3 lw 3 lc 'black' notitle, "
		labels+="set label $(q "$t: $bb by $i pages") at first $i/1000.0, first $bb left offset 1.5,-1 font ',11'
"
	done
	[[ -s $work/cv.none ]] && labels+="set label $(q "$(cat "$work/cv.none")") at graph 0.02, graph 0.92 left font ',11'
"
	gp "$outdir/$b-birthday.png" 1200 720 "
set title $(q "${title:+$title: }Birthday collisions of page checksums").\"\\n\".$(q "share of trials with a repeated checksum among n distinct pages, against 1 - exp(-n(n-1)/2^(bits+1))")
set xlabel 'distinct pages hashed, n (thousands)'
set ylabel 'share of trials'
set xrange [0:$(cat "$work/cx")]
set yrange [0:1.05]
set key inside bottom right opaque box
$labels
plot ${bands}${plots%, }"
}

first_collision() {
	local f=$1 b
	b=$(stem "$f")
	need "$f" hash trials collided p10 p50 p90 expected_mean
	numeric "$f" trials collided p10 p50 p90 expected_mean
	pick "$f" hash trials collided p10 p50 p90 expected_mean | awk -F'\t' -v d="$work" -v HO="${hash_order[*]}" "$awk_lt $awk_gq"'
	{ n++; t = t (n > 1 ? ", " : "") gq($1) " " n
	  if ($5 != "") print n "," $4 / 1000 "," $5 / 1000 "," $6 / 1000 "," $7 / 1000 "," ltof($1) "," sprintf("%.1fk", $5 / 1000) > (d "/q.dat")
	  else print n ",no repeat in\\n" $2 " trials" > (d "/cens.dat")
	  if ($5 != "" && $6 / 1000 > hi) hi = $6 / 1000
	  if ($5 != "" && $7 / 1000 > hi) hi = $7 / 1000 }
	END { print t > (d "/qt"); print n, hi * 1.15 > (d "/q.n") }'
	local n hi plots=""
	read -r n hi <"$work/q.n"
	[[ -s $work/q.dat ]] && plots+="'$work/q.dat' using 1:2:2:4:4:6 with candlesticks lc variable lw 2 fill solid 0.3 title '10th to 90th percentile', \\
     '' using 1:3:6 with points pt 7 ps 2 lc variable title 'median', \\
     '' using 1:3:7 with labels left offset 2,0 font ',10' notitle, \\
     '' using 1:(\$5 * sqrt(4 * log(2) / pi)) with points pt 2 ps 2.5 lw 2 lc 'black' title 'formula median', "
	[[ -s $work/cens.dat ]] && plots+="'$work/cens.dat' using 1:($hi/2):2 with labels font ',11' notitle, "
	[[ -n $plots ]] || die "$f: no rows"
	gp "$outdir/$b-first-collision.png" 1200 720 "
set title $(q "${title:+$title: }Distinct pages hashed until a checksum first repeats").\"\\nbox: 10th to 90th percentile of the trials; dot: median; x: the formula median sqrt(2 ln 2 x 2^bits)\"
set ylabel 'distinct pages hashed (thousands)'
set xtics ($(cat "$work/qt")) scale 0
set xrange [0.4:$n.6]
set yrange [0:${hi/#0/1}]
set boxwidth 0.35
set key inside top right opaque box
plot ${plots%, }"
}

costs() {
	local f=$1 b
	b=$(stem "$f")
	need "$f" name kind hot_ns_per_page cold_ns_per_page
	numeric "$f" hot_ns_per_page cold_ns_per_page
	pick "$f" name kind hot_ns_per_page cold_ns_per_page | awk -F'\t' -v d="$work" "$awk_fmt $awk_gq"'
	$2 == "hash" { n++; t = t (n > 1 ? ", " : "") gq($1) " " n
		print n - 0.2 "," $3 "," fmt($3) "," n + 0.2 "," $4 "," fmt($4) > (d "/c.dat")
		if (!lo || $3 < lo) lo = $3; if ($4 > hi) hi = $4; if ($3 > hi) hi = $3 }
	END { print t > (d "/ct"); print n + 0, hi * 1.15 > (d "/c.n") }'
	local n hi
	read -r n hi <"$work/c.n"
	((n)) || die "$f: no rows of kind hash"
	gp "$outdir/$b-checksum-cost.png" 1200 720 "
set title $(q "${title:+$title: }Checksum cost per 4 KiB page (ksmsim bench costs, ${cpu:-the machine that ran it, unnamed})")
set ylabel 'ns per page'
set yrange [0:$hi]
set xtics ($(cat "$work/ct")) scale 0
set xrange [0.4:$n.6]
set boxwidth 0.38
set style fill solid 0.85 border -1
set key inside top left opaque box
plot '$work/c.dat' using 1:2 with boxes lc rgb '#56b4e9' dt 1 title 'hot: page in L1', \\
     '' using 4:5 with boxes lc rgb '#0072b2' dt 1 title 'cold: streaming from memory', \\
     '' using 1:2:3 with labels offset 0,0.7 font ',10' notitle, \\
     '' using 4:5:6 with labels offset 0,0.7 font ',10' notitle"
}

# kind FILE: what the file holds, told by its header
kind() {
	local h
	h=$(header "$1")
	if [[ ,$h, == *,t_us,* && ,$h, == *,pages_sharing,* ]]; then echo series
	elif [[ $h == hash,bits,n,observed,formula* ]]; then echo curve
	elif [[ $h == hash,bits,change,* ]]; then echo fp
	elif [[ ,$h, == *,p50,* && ,$h, == *,expected_mean,* ]]; then echo first_collision
	elif [[ ,$h, == *,hot_ns_per_page,* ]]; then echo costs
	elif [[ ,$h, == *,hash,* && ,$h, == *,cow_ksm,* ]]; then echo summary
	fi
}

# Every file is read, and refused, before any figure is made.
declare -A kinds=()
for f in "${files[@]}"; do
	load "$f"
	kinds[$f]=$(kind "$f")
	[[ -n ${kinds[$f]} ]] || die "$f: header not recognised"
	[[ $(sed -n 2p "${tsv[$f]}") ]] || die "$f: a header and no rows"
done
series=()
for f in "${files[@]}"; do
	case ${kinds[$f]} in
	series) series+=("$f") ;;
	summary)
		mapfile -t ks < <(knobs "$f")
		if ((${#ks[@]})) && [[ $(varying "$f" "${ks[@]}") ]]; then
			mapfile -t ks < <(varying "$f" "${ks[@]}")
			sweep "$f" "${ks[@]}"
		else
			summary "$f"
		fi
		;;
	*) "${kinds[$f]}" "$f" ;;
	esac
done

# The time series: one figure, a line per file. Lines drawn first are the
# widest, so where all coincide each still shows as a band around the next.
if ((${#series[@]})); then
	stems=() labels=()
	for f in "${series[@]}"; do stems+=("$(stem "$f")"); done
	prefix=${stems[0]}
	if ((${#stems[@]} > 1)); then
		for s in "${stems[@]}"; do while [[ ${s:0:${#prefix}} != "$prefix" ]]; do prefix=${prefix%?}; done; done
		# back to whole words: each stem goes on with - or _ after the prefix
		whole() { local s c; for s in "${stems[@]}"; do c=${s:${#prefix}:1}; [[ -z $c || $c == [-_] ]] || return 1; done; }
		until [[ -z $prefix ]] || whole; do prefix=${prefix%?}; done
		prefix=${prefix%[-_]}
	fi
	i=0
	for f in "${series[@]}"; do
		l=""
		has "$f" hash && l=$(pick "$f" hash | sed -n 1p)
		if [[ -z $l ]]; then
			l=${stems[i]:${#prefix}}; l=${l#[-_]}; l=${l:-${stems[i]}}
			l=${l//[[:cntrl:]]/ }	# one line each, below
		fi
		labels+=("$l") i=$((i + 1))
	done
	name=${prefix:-$(IFS=+; echo "${stems[*]}")}
	name_t=${title:-$prefix}
	# in the hashes' order, so the same hash is the widest line in every figure
	ps="" pu="" n=${#series[@]} j=0
	while IFS=, read -r lt i; do
		f=${series[i]}
		need "$f" t_us pages_sharing pages_unshared
		numeric "$f" t_us pages_sharing pages_unshared
		pick "$f" t_us pages_sharing pages_unshared | tr '\t' , >"$work/ts$i"
		lw=$(awk -v j=$j -v n="$n" 'BEGIN { print 1.5 + 2.5 * (n - 1 - j) }')
		ps+="'$work/ts$i' using (\$1/1e6):2 with lines lt $lt dt 1 lw $lw title $(q "${labels[i]}"), "
		pu+="'$work/ts$i' using (\$1/1e6):3 with lines lt $lt dt 1 lw $lw title $(q "${labels[i]}"), "
		j=$((j + 1))
	done < <(printf '%s\n' "${labels[@]}" | awk -v HO="${hash_order[*]}" "$awk_lt"' { print ltof($0) "," NR - 1 }' | sort -t, -k1,1n -s)
	# reference lines (--ref): dashed, one colour each, named in the key
	rs="" ru="" k=0
	for r in "${refs[@]}"; do
		IFS=: read -r panel rl rv <<<"$r"
		line="$rv with lines dt 2 lw 2 lc rgb '$(echo '#cc3311 #228833 #aa3377 #666666' | cut -d' ' -f$((k % 4 + 1)))' title $(q "$rl")"
		[[ $panel == pages_sharing ]] && rs+=", $line" || ru+=", $line"
		k=$((k + 1))
	done
	gp "$outdir/$name-pages.png" 1200 1000 "
set multiplot layout 2,1 title $(q "${name_t:+$name_t: }KSM pages over simulated time (modelled)")
set key outside right top
set xlabel 'simulated time (s)'
set yrange [0:*]
set offsets 0, 0, graph 0.05, 0
set ylabel 'pages'
set format y '%.0f'
set title 'pages_sharing: pages saved by merging'
plot ${ps%, }$rs
set title 'pages_unshared: pages in the unstable tree'
plot ${pu%, }$ru
unset multiplot"
fi
