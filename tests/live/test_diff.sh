#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ksmsim diff: exit codes, the difference table, skipped cells, bad input.
set -u
bin=${1:?usage: test_diff.sh PATH/TO/ksmsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() {	# check NAME WANT_RC GOT_RC
  if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: exit $3, wanted $2"; fails=$((fails + 1)); fi
}
has() {		# has NAME FILE PATTERN
  if grep -q -- "$3" "$2"; then echo "ok   $1"; else echo "FAIL $1: no '$3' in:"; sed 's/^/     /' "$2"; fails=$((fails + 1)); fi
}
hdr=label,t_us,full_scans,pages_scanned,pages_shared,pages_sharing,pages_unshared,pages_volatile,pages_skipped,ksm_zero_pages,stable_node_chains,stable_node_dups,general_profit,cow_ksm
cat >"$tmp/a.csv" <<CSV
# a comment
$hdr
merged,0,2,400,1,199,0,0,0,0,0,0,802304,0
after_cow,0,2,400,1,199,0,0,0,0,0,0,802304,1
CSV
cp "$tmp/a.csv" "$tmp/same.csv"
"$bin" diff "$tmp/a.csv" "$tmp/same.csv" >"$tmp/out" 2>&1; check equal 0 $?
has equal-says "$tmp/out" "no differences"

# extra columns, CRLF and no comments on the B side are fine
{ echo "$hdr,extra"; echo "merged,0,2,400,1,199,0,0,0,0,0,0,802304,0,x"
  echo "after_cow,0,2,400,1,199,0,0,0,0,0,0,802304,1,y"; } | sed 's/$/\r/' >"$tmp/extra.csv"
"$bin" diff "$tmp/a.csv" "$tmp/extra.csv" >"$tmp/out" 2>&1; check extra-column 0 $?

sed 's/^after_cow,0,2,400,1,199/after_cow,0,2,400,1,198/' "$tmp/a.csv" >"$tmp/b.csv"
"$bin" diff "$tmp/a.csv" "$tmp/b.csv" >"$tmp/out" 2>&1; check changed 1 $?
has changed-table "$tmp/out" "after_cow *pages_sharing *199 *198 *-1"
"$bin" diff "$tmp/a.csv" "$tmp/b.csv" --ignore pages_sharing >"$tmp/out" 2>&1; check ignore 0 $?
"$bin" diff "$tmp/a.csv" "$tmp/b.csv" --only pages_shared,cow_ksm >"$tmp/out" 2>&1; check only 0 $?
"$bin" diff "$tmp/a.csv" "$tmp/extra.csv" --only extra >"$tmp/out" 2>&1; check only-extra-missing 2 $?

{ echo "# live kernel, 3 runs: cells that differ between runs: after_cow.pages_sharing=199/198/199, x.y=1"
  cat "$tmp/a.csv"; } >"$tmp/skip.csv"
"$bin" diff "$tmp/skip.csv" "$tmp/b.csv" >"$tmp/out" 2>&1; check skipped-cell 0 $?
has skipped-count "$tmp/out" "1 skipped"
"$bin" diff "$tmp/b.csv" "$tmp/skip.csv" >"$tmp/out" 2>&1; check skipped-cell-in-B 0 $?

head -n 3 "$tmp/a.csv" >"$tmp/short.csv"
"$bin" diff "$tmp/a.csv" "$tmp/short.csv" >"$tmp/out" 2>&1; check fewer-rows 1 $?
has fewer-rows-says "$tmp/out" "row count"
sed 's/^after_cow/after_write/' "$tmp/a.csv" >"$tmp/label.csv"
"$bin" diff "$tmp/a.csv" "$tmp/label.csv" >"$tmp/out" 2>&1; check label 1 $?

sed 's/^after_cow,0,2,400,1,199,0/after_cow,0,2,400,1,199/' "$tmp/a.csv" >"$tmp/bad.csv"
"$bin" diff "$tmp/a.csv" "$tmp/bad.csv" >"$tmp/out" 2>&1; check malformed 2 $?
has malformed-line "$tmp/out" "bad.csv:4:"
sed 's/^merged,0,2,400/merged,0,2,"4x00/' "$tmp/a.csv" >"$tmp/quote.csv"
"$bin" diff "$tmp/a.csv" "$tmp/quote.csv" >"$tmp/out" 2>&1; check unterminated-quote 2 $?
has quote-line "$tmp/out" "quote.csv:3:"
sed 's/^merged,0,2,400/merged,0,2,4x00/' "$tmp/a.csv" >"$tmp/nan.csv"
"$bin" diff "$tmp/a.csv" "$tmp/nan.csv" >"$tmp/out" 2>&1; check not-a-number 2 $?
has nan-line "$tmp/out" "nan.csv:3:"
: >"$tmp/empty.csv"
"$bin" diff "$tmp/a.csv" "$tmp/empty.csv" >"$tmp/out" 2>&1; check empty 2 $?
"$bin" diff "$tmp/a.csv" "$tmp/missing.csv" >"$tmp/out" 2>&1; check missing-file 2 $?
has missing-names-file "$tmp/out" "missing.csv"
"$bin" diff "$tmp/a.csv" >"$tmp/out" 2>&1; check one-file 2 $?

# ksmd_cpu_ms: by ratio, apart from the exact counters, and said which failed
sed -e "s/^$hdr\$/$hdr,ksmd_cpu_ms/" -e 's/^merged,.*/&,100.0/' -e 's/^after_cow,.*/&,200.0/' \
  "$tmp/a.csv" >"$tmp/live.csv"
sed -e 's/,100.0$/,110.0/' -e 's/,200.0$/,212.0/' "$tmp/live.csv" >"$tmp/near.csv"
sed -e 's/,200.0$/,300.0/' "$tmp/live.csv" >"$tmp/far.csv"
"$bin" diff "$tmp/live.csv" "$tmp/near.csv" >"$tmp/out" 2>&1; check cpu-within 0 $?
has cpu-ratio "$tmp/out" "after_cow *200.000 *212.000 *1.060 *ok"
"$bin" diff "$tmp/live.csv" "$tmp/far.csv" >"$tmp/out" 2>&1; check cpu-outside 1 $?
has cpu-outside-says "$tmp/out" "ksmd_cpu_ms: 1 of 2 rows outside the tolerance; exact counters: agree"
has cpu-outside-counters "$tmp/out" "^no differences"
"$bin" diff "$tmp/live.csv" "$tmp/far.csv" --cpu-tolerance 60 >"$tmp/out" 2>&1; check cpu-tolerance 0 $?
"$bin" diff "$tmp/a.csv" "$tmp/far.csv" >"$tmp/out" 2>&1; check cpu-one-side 0 $?
sed 's/^after_cow,0,2,400,1,199/after_cow,0,2,400,1,198/' "$tmp/near.csv" >"$tmp/nearb.csv"
"$bin" diff "$tmp/live.csv" "$tmp/nearb.csv" >"$tmp/out" 2>&1; check cpu-ok-counter-differs 1 $?
has cpu-ok-counter-says "$tmp/out" "0 of 2 rows outside the tolerance; exact counters: differ"
"$bin" diff "$tmp/live.csv" "$tmp/near.csv" --cpu-tolerance x >"$tmp/out" 2>&1; check cpu-tolerance-bad 2 $?
has cpu-tolerance-names "$tmp/out" "cpu-tolerance wants a number from 0 to 1000 (percent), not 'x'"
sed 's/,212.0$/,2x2/' "$tmp/near.csv" >"$tmp/nancpu.csv"
"$bin" diff "$tmp/live.csv" "$tmp/nancpu.csv" >"$tmp/out" 2>&1; check cpu-not-a-number 2 $?
has cpu-nan-line "$tmp/out" "nancpu.csv:4: ksmd_cpu_ms"
[ "$fails" -eq 0 ]
