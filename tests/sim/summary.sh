#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The summary CSV is a complete record of a run: every column is filled,
# its means and peaks are those of the same run's time series (the rows
# after t = 0, the last one at the run's end), the facts of a `ksmsim gen`
# trace and the knobs are the ones the run had, and --no-ideal empties only
# the oracle's columns; checksum_ns is the price the cost table charged.
# usage: summary.sh KSMSIM
set -eu
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# one gen trace, text and gzip; run with a pinned knob and a knob the trace sets
"$bin" gen vm-clones --scale 0.002 --seed 7 --sleep-millisecs 50 --marks-every-ms 1000 \
	-o "$tmp/t.ksmt" 2>/dev/null
"$bin" gen vm-clones --scale 0.002 --seed 7 --sleep-millisecs 50 --marks-every-ms 1000 \
	-o "$tmp/t.ksmt.gz" 2>/dev/null
run() { # TRACE TAG ARGS...
	local t=$1 tag=$2
	shift 2
	"$bin" run --quiet --trace "$t" --trace-label t --hash crc32c --pages-to-scan 300 \
		--interval-ms 700 --ideal-interval-ms 700 --summary-csv "$tmp/$tag.s" "$@"
}
run "$tmp/t.ksmt" a --csv "$tmp/a.c"
run "$tmp/t.ksmt" b --csv "$tmp/b.c"
run "$tmp/t.ksmt" nocsv
run "$tmp/t.ksmt.gz" gz
run "$tmp/t.ksmt" ni --csv "$tmp/ni.c" --no-ideal
cmp "$tmp/a.s" "$tmp/b.s" || fail "summary differs between two runs"
cmp "$tmp/a.c" "$tmp/b.c" || fail "series differs between two runs"
cmp "$tmp/a.s" "$tmp/nocsv.s" || fail "summary without --csv differs: $(diff "$tmp/a.s" "$tmp/nocsv.s")"
cmp "$tmp/a.s" "$tmp/gz.s" || fail "summary of the gzip form differs: $(diff "$tmp/a.s" "$tmp/gz.s")"

# FIELD of a summary file's row, by name
get() { awk -F, -v k="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ if (!(k in c)) { print "NO-COLUMN"; exit } print $c[k] }' "$1"; }
is() { # FILE FIELD WANT
	local got
	got=$(get "$1" "$2")
	[[ $got == "$3" ]] || fail "$1: $2 is '$got', want '$3'"
}

new="checksum_ns policy workload seed scale interval_ms samples avg_pages_sharing peak_pages_sharing
avg_pages_unshared peak_pages_unshared avg_pages_volatile peak_pages_volatile
avg_saved peak_saved avg_missed_merges avg_dedup_fraction pinned run sleep_millisecs use_zero_pages
max_page_sharing merge_across_nodes smart_scan stable_node_chains_prune_millisecs
advisor_mode advisor_max_cpu advisor_min_pages_to_scan advisor_max_pages_to_scan
advisor_target_scan_time"
for c in $new; do
	v=$(get "$tmp/a.s" "$c")
	[[ -n $v && $v != NO-COLUMN ]] || fail "summary column $c is '${v}'"
done
# every column of every series row is filled, the oracle's too
awk -F, 'NR == 1 { n = NF; next } { for (i = 1; i <= n; i++) if ($i == "") { print "row " NR " column " i; exit 1 } }' \
	"$tmp/a.c" || fail "empty field in the time series"

# the facts: from the gen line, the options, the trace's own sets
is "$tmp/a.s" trace t
is "$tmp/a.s" hash crc32c
is "$tmp/a.s" policy kernel
is "$tmp/a.s" workload vm-clones
is "$tmp/a.s" seed 7
is "$tmp/a.s" scale 0.002
is "$tmp/a.s" interval_ms 700
is "$tmp/a.s" pinned pages_to_scan=300
is "$tmp/a.s" pages_to_scan 300
is "$tmp/a.s" sleep_millisecs 50
is "$tmp/a.s" run 1
is "$tmp/a.s" max_page_sharing 256
is "$tmp/a.s" advisor_mode none

# the series: 0, 700 ms, 1400 ms ... and the end of the run, once
end=$(get "$tmp/a.s" sim_us)
awk -F, -v end="$end" 'NR == 1 { next }
	{ want = (NR - 2) * 700000; if (want > end) want = end
	  if ($1 != want) { print "row " NR " at " $1 ", want " want; bad = 1 }
	  if ($2 != $1) { print "row " NR ": trace time " $2; bad = 1 }
	  t = $1 }
	END { if (t != end) { print "last sample " t ", run ends at " end; bad = 1 } exit bad }' \
	"$tmp/a.c" || fail "sample times"
[[ $((end % 700000)) -ne 0 ]] || fail "the trace should end between two samples (end $end)"

# means and peaks: the series rows after t = 0, computed here
check_stats() { # SERIES SUMMARY
	# saved: what advise and tune average, merged pages with the zero page's
	awk -F, 'BEGIN { f[0] = "pages_sharing"; f[1] = "pages_unshared"; f[2] = "pages_volatile"
			 f[3] = "saved" }
	NR == FNR { if (FNR == 1) for (i = 1; i <= NF; i++) c[$i] = i; else if ($1 > 0) {
			n++
			for (k = 0; k < 4; k++) {
				x = k < 3 ? $c[f[k]] + 0 : $c["pages_sharing"] + $c["ksm_zero_pages"]
				s[k] += x; if (x > p[k]) p[k] = x
			}
			if ($c["ideal_saved"] != "") {
				ni++
				miss += $c["missed_merges"]
				frac += $c["ideal_saved"] ? $c["actual_saved"] / $c["ideal_saved"] : 1
			}
		} next }
	FNR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
	function want(name, v) { if ($h[name] != v) { print name " " $h[name] ", series gives " v; bad = 1 } }
	{
		want("samples", n)
		for (k = 0; k < 4; k++) {
			want("avg_" f[k], sprintf("%.3f", s[k] / n))
			want("peak_" f[k], p[k])
		}
		if (ideal) {
			want("avg_missed_merges", sprintf("%.3f", miss / ni))
			want("avg_dedup_fraction", sprintf("%.4f", frac / ni))
		} else {
			want("avg_missed_merges", "")
			want("avg_dedup_fraction", "")
		}
		# the run moved: the figures are worth comparing
		if (p[0] == 0 || s[1] == 0) { print "nothing merged or nothing unshared"; bad = 1 }
	}
	END { exit bad }' ideal="$3" "$1" "$2"
}
check_stats "$tmp/a.c" "$tmp/a.s" 1 || fail "means and peaks disagree with the series"
check_stats "$tmp/ni.c" "$tmp/ni.s" 0 || fail "--no-ideal: means and peaks disagree with the series"
# --no-ideal leaves the oracle's columns empty and changes nothing else
for c in mergeable_pages ideal_saved actual_saved missed_merges dedup_fraction; do
	is "$tmp/ni.s" $c ""
	awk -F, -v k=$c 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == k) c = i; next } $c != "" { exit 1 }' \
		"$tmp/ni.c" || fail "--no-ideal: series column $c filled"
done
for c in samples avg_pages_sharing peak_pages_unshared pages_sharing cow_ksm pinned; do
	is "$tmp/ni.s" $c "$(get "$tmp/a.s" $c)"
done

# checksum_ns: the price the run charged a checksum of its hash, the cost
# table's checksum:HASH row: the built-in table is the one fitted as
# bench/tables/costs-amd-epyc.csv; --costs-csv's own row replaces it, and
# ksmd_cpu_ms moves by checksums x the difference; no checksum, no price
top=$(dirname "$0")/../..
row=$(sed -n 's/^checksum:crc32c,//p' "$top/bench/tables/costs-amd-epyc.csv")
[[ -n $row ]] || fail "no checksum:crc32c row in bench/tables/costs-amd-epyc.csv"
is "$tmp/a.s" checksum_ns "$(printf '%.3f' "$row")"
sed 's/^checksum:crc32c,.*/checksum:crc32c,1234.5/' "$top/bench/tables/costs-amd-epyc.csv" >"$tmp/costs.csv"
run "$tmp/t.ksmt" cc --costs-csv "$tmp/costs.csv"
is "$tmp/cc.s" checksum_ns 1234.500
awk -v a="$(get "$tmp/a.s" ksmd_cpu_ms)" -v b="$(get "$tmp/cc.s" ksmd_cpu_ms)" \
	-v n="$(get "$tmp/cc.s" checksums)" -v pa="$(get "$tmp/a.s" checksum_ns)" \
	'BEGIN { d = n * (pa - 1234.5) / 1e6; exit !(n > 0 && a - b - d < 0.002 && b - a + d < 0.002) }' ||
	fail "--costs-csv: ksmd_cpu_ms $(get "$tmp/cc.s" ksmd_cpu_ms) is not $(get "$tmp/a.s" ksmd_cpu_ms) less checksums x the price difference"
is "$tmp/cc.s" checksums "$(get "$tmp/a.s" checksums)"
"$bin" run --quiet --trace "$tmp/t.ksmt" --policy dirty-bit --summary-csv "$tmp/db.s"
is "$tmp/db.s" hash none
is "$tmp/db.s" checksum_ns 0.000

# the oracle's default period (60 s) is longer than this run: it walks the
# pages at t = 0 and at the end only, and the averages are over what it saw
"$bin" run --quiet --trace "$tmp/t.ksmt" --trace-label t --hash crc32c --pages-to-scan 300 \
	--interval-ms 700 --summary-csv "$tmp/p.s" --csv "$tmp/p.c"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ filled = $c["ideal_saved"] != ""; last = NR
	  if (filled) rows = rows " " NR }
	END { want = " 2 " last; if (rows != want) { print "oracle rows" rows ", want" want; exit 1 } }' \
	"$tmp/p.c" || fail "default oracle period"
check_stats "$tmp/p.c" "$tmp/p.s" 1 || fail "default oracle period: averages disagree with the series"
for c in samples avg_pages_sharing peak_pages_unshared missed_merges pages_sharing; do
	is "$tmp/p.s" $c "$(get "$tmp/a.s" $c)"
done

# a trace not made by ksmsim gen: no facts, the rest as ever
"$bin" run --quiet --trace "$(dirname "$0")/../../traces/samples/default.ksmt" \
	--summary-csv "$tmp/d.s" --sleep-millisecs 30 --use-zero-pages 1
is "$tmp/d.s" workload ""
is "$tmp/d.s" seed ""
is "$tmp/d.s" scale ""
is "$tmp/d.s" policy kernel
is "$tmp/d.s" pinned "sleep_millisecs=30;use_zero_pages=1"
is "$tmp/d.s" use_zero_pages 1
is "$tmp/d.s" interval_ms 1000
echo "summary columns filled and consistent with the series"
