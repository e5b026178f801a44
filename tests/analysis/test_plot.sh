#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_plot.sh KSMSIM SRCDIR: analysis/plot.sh names every PNG after its
# input, so calls on different inputs never overwrite each other, and it
# finds columns by name (reordered or extra columns change nothing).
# Exit 0 pass, 1 fail, 77 skip (no gnuplot).
set -euo pipefail
ksmsim=$1 src=$2
command -v gnuplot >/dev/null || { echo "gnuplot missing: skip"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
plot() { "$src/analysis/plot.sh" "$@"; }

# want LIST PNG...: LIST (plot.sh's output) names exactly these PNGs, each
# a non-empty file that starts with the PNG signature
want() {
	local list=$1 p; shift
	[[ $(sort "$list") == $(printf '%s\n' "$@" | sort) ]] ||
		fail "plot.sh made $(tr '\n' ' ' <"$list"), want $*"
	for p; do
		[[ -s $p ]] || fail "$p is empty or missing"
		[[ $(head -c 8 "$p" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || fail "$p is not a PNG"
	done
}

# Small runs of the bundled sample: two hashes, two pages_to_scan.
trace=$src/traces/samples/default.ksmt
mkdir "$tmp/runs" "$tmp/png"
for h in xxhash crc32c; do
	for p in 100 400; do
		"$ksmsim" run --quiet --trace "$trace" --hash "$h" --pages-to-scan "$p" \
			--csv "$tmp/runs/s$p-$h.csv" --summary-csv "$tmp/runs/sum-$h-$p.csv"
	done
done
r=$tmp/runs o=$tmp/png

# 1. Two calls, one time series each: two PNGs, both kept, not the same.
plot -o "$o" "$r/s100-xxhash.csv" >"$tmp/l1"
want "$tmp/l1" "$o/s100-xxhash-pages.png"
cp "$o/s100-xxhash-pages.png" "$tmp/first.png"
plot -o "$o" "$r/s100-crc32c.csv" >"$tmp/l2"
want "$tmp/l2" "$o/s100-crc32c-pages.png"
cmp -s "$tmp/first.png" "$o/s100-xxhash-pages.png" || fail "the second call changed the first call's PNG"
! cmp -s "$o/s100-xxhash-pages.png" "$o/s100-crc32c-pages.png" || fail "the two time series gave the same PNG"

# 2. Series given together share one figure named after what they share.
plot -o "$o" "$r/s400-xxhash.csv" "$r/s400-crc32c.csv" >"$tmp/l3"
want "$tmp/l3" "$o/s400-pages.png"
plot -o "$o" "$r/s100-xxhash.csv" "$r/s400-crc32c.csv" >"$tmp/l4"
want "$tmp/l4" "$o/s100-xxhash+s400-crc32c-pages.png"

# 3. A summary of two runs: its figures are named after it.
{ cat "$r/sum-xxhash-100.csv"; tail -n +2 "$r/sum-crc32c-100.csv"; } >"$r/runs.csv"
plot -o "$o" "$r/runs.csv" >"$tmp/l5"
[[ -s $tmp/l5 ]] || fail "no PNG from a summary"
while read -r p; do
	[[ $p == "$o"/runs-*.png ]] || fail "summary PNG $p is not named runs-*.png"
done <"$tmp/l5"
mapfile -t got <"$tmp/l5"
want "$tmp/l5" "${got[@]}"
grep -qx "$o/runs-cost.png" "$tmp/l5" || fail "no runs-cost.png (ksmd_cpu_ms is never 0)"

# 4. A sweep (as analysis/sweep.sh writes it): a PNG per metric; the same
# table with its columns reversed and an unknown column gives the same PNGs.
mkdir "$tmp/rev" "$tmp/png-rev"
{
	echo "workload,set_pages_to_scan,$(head -1 "$r/sum-xxhash-100.csv")"
	for f in "$r"/sum-*.csv; do
		p=${f%.csv}; p=${p##*-}
		echo "default,$p,$(tail -1 "$f")"
	done
} >"$r/sweep.csv"
awk -F, '{ l = (NR == 1 ? "note" : "x"); for (i = NF; i >= 1; i--) l = l "," $i; print l }' \
	"$r/sweep.csv" >"$tmp/rev/sweep.csv"
plot -o "$o" "$r/sweep.csv" >"$tmp/l6"
grep -qx "$o/sweep-ksmd_cpu_ms.png" "$tmp/l6" || fail "no sweep-ksmd_cpu_ms.png: $(tr '\n' ' ' <"$tmp/l6")"
# the checksum's price a page is the model's input, one value a hash: no figure
if grep -q "sweep-checksum_ns" "$tmp/l6"; then fail "a sweep figure of checksum_ns, an input"; fi
mapfile -t got <"$tmp/l6"
want "$tmp/l6" "${got[@]}"
plot -o "$tmp/png-rev" "$tmp/rev/sweep.csv" >"$tmp/l7"
[[ $(sed 's|.*/||' "$tmp/l7") == $(sed 's|.*/||' "$tmp/l6") ]] || fail "reordered sweep gave other PNGs"
while read -r p; do
	cmp -s "$p" "$tmp/png-rev/${p##*/}" || fail "${p##*/} differs when the columns are reordered"
done <"$tmp/l6"

# 4b. The summaries themselves, stacked: the knobs they name (the
# pinned column, else pages_to_scan's values) make it a sweep.
{ head -1 "$r/sum-xxhash-100.csv"; for f in "$r"/sum-*.csv; do tail -n +2 "$f"; done; } >"$r/cells.csv"
plot -o "$o" "$r/cells.csv" >"$tmp/l8"
grep -qx "$o/cells-ksmd_cpu_ms.png" "$tmp/l8" || fail "no cells-ksmd_cpu_ms.png: $(tr '\n' ' ' <"$tmp/l8")"
mapfile -t got <"$tmp/l8"
want "$tmp/l8" "${got[@]}"

# 5. Nothing was overwritten: every PNG of every call is still there.
n=$(cat "$tmp"/l[1-68] | sort -u | wc -l)
[[ $(find "$o" -name '*.png' | wc -l) -eq $n ]] || fail "$o holds other files than the $n listed"

# 6. An unknown CSV: one line naming it, exit 2, no PNG.
echo "a,b" >"$tmp/odd.csv"
set +e
plot -o "$tmp/none" "$tmp/odd.csv" >/dev/null 2>"$tmp/err"
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "unknown header: exit $rc, want 2"
grep -q "odd.csv: header not recognised" "$tmp/err" || fail "error does not name the file: $(cat "$tmp/err")"
echo "ok plot"
