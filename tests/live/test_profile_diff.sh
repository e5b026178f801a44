#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run --profile-csv and diff --profile, no kernel needed: the model's terms
# add up to its ksmd_cpu_ms at every mark; a profile against itself agrees;
# a planted mismatch (10 points moved from checksum to visit) is reported,
# by name, with exit 1, and passes a tolerance above it; bad input is one
# line and exit 2. usage: test_profile_diff.sh KSMSIM
set -u
bin=${1:?usage: test_profile_diff.sh KSMSIM}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() {	# check NAME WANT_RC GOT_RC
	if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: exit $3, wanted $2"; fails=$((fails + 1)); fi
}
has() {		# has NAME FILE PATTERN
	if grep -q -- "$3" "$2"; then echo "ok   $1"; else echo "FAIL $1: no '$3' in:"; sed 's/^/     /' "$2"; fails=$((fails + 1)); fi
}
{
	printf 'ksmtrace 1\n0 set pages_to_scan 1000\n0 set sleep_millisecs 10\n'
	for m in 0 1; do
		printf '0 spawn m%u\n0 map m%u 0x100000 4096\n0 advise m%u 0x100000 4096 mergeable\n' $m $m $m
		printf '0 fillseq m%u 0x100000 2048 5000\n0 fillseq m%u 0x100800 2048 %u\n' $m $m $((90000 * (m + 1)))
	done
	printf '0 set run 1\n0 settle 2\n0 mark merged\n0 fill m0 0x100000 256 byte:5a\n0 settle 1\n0 mark end\n'
} >"$tmp/t.ksmt"
"$bin" run --trace "$tmp/t.ksmt" --profile-csv "$tmp/model.csv" --marks-csv "$tmp/marks.csv" >/dev/null 2>"$tmp/err"
check run-profile-csv 0 $?
# each mark: the shares sum to 1 and the ms to the marks' ksmd_cpu_ms
grep -v '^#' "$tmp/marks.csv" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "ksmd_cpu_ms") c = i; next }
	{ print $1, $c }' >"$tmp/cpu"
awk -F, '!/^#/ && $1 != "label" { ms[$1] += $5; sh[$1] += $4 }
	END { for (l in ms) printf "%s %.3f %.4f\n", l, ms[l], sh[l] }' "$tmp/model.csv" | sort >"$tmp/sums"
if join <(sort "$tmp/cpu") "$tmp/sums" | awk '{ if ($2 < 1 || ($2 - $3 > 0.01 || $3 - $2 > 0.01) || ($4 - 1 > 0.001 || 1 - $4 > 0.001)) bad++; n++ }
	END { exit !(n == 2 && !bad) }'; then
	echo "ok   terms-add-up: $(tr '\n' ' ' <"$tmp/sums")against $(tr '\n' ' ' <"$tmp/cpu")"
else
	echo "FAIL terms-add-up:"; join <(sort "$tmp/cpu") "$tmp/sums" | sed 's/^/     /'; fails=$((fails + 1))
fi
"$bin" diff --profile "$tmp/model.csv" "$tmp/model.csv" >"$tmp/out" 2>&1
check self-agrees 0 $?
has self-says "$tmp/out" "every term's share within"
# a live-shaped profile: the model's shares in the live terms (visit split in
# three), then 10 points moved from checksum to page_table_walk
awk -F, -v OFS=, '/^#/ || $1 == "label" { if ($1 == "label") print "label,term,samples,share,ms"; next }
	$2 == "visit" { print $1, "page_table_walk", 0, $4 / 2, 0; print $1, "mmap_lock", 0, $4 / 4, 0
		print $1, "scan", 0, $4 / 4, 0; next }
	$2 == "tree_search" { print $1, "page_compare", 0, $4, 0; print $1, "stable_folio", 0, 0, 0
		print $1, "tree_page", 0, 0, 0; next }
	{ print $1, $2, 0, $4, 0 }' "$tmp/model.csv" >"$tmp/live.csv"
"$bin" diff --profile "$tmp/live.csv" "$tmp/model.csv" >"$tmp/out" 2>&1
check folded-agrees 0 $?
awk -F, -v OFS=, '$1 == "end" && $2 == "checksum" { $4 -= 0.10 } $1 == "end" && $2 == "page_table_walk" { $4 += 0.10 } { print }' \
	"$tmp/live.csv" >"$tmp/planted.csv"
"$bin" diff --profile "$tmp/planted.csv" "$tmp/model.csv" >"$tmp/out" 2>&1
check planted-mismatch 1 $?
has planted-names-checksum "$tmp/out" "^checksum .*+10.0  outside"
has planted-names-visit "$tmp/out" "^visit .*-10.0  outside"
"$bin" diff --profile "$tmp/planted.csv" "$tmp/model.csv" --share-tolerance 11 >"$tmp/out" 2>&1
check planted-within-11pp 0 $?
# bad input: one line, exit 2
sed 's/,checksum,/,crc_of_nothing,/' "$tmp/model.csv" >"$tmp/bad.csv"
"$bin" diff --profile "$tmp/bad.csv" "$tmp/model.csv" >"$tmp/out" 2>&1
check unknown-term 2 $?
has unknown-term-says "$tmp/out" "bad.csv:[0-9]*: unknown term 'crc_of_nothing'"
[ "$(wc -l <"$tmp/out")" -eq 1 ] || { echo "FAIL unknown-term: more than one line"; fails=$((fails + 1)); }
"$bin" diff --profile "$tmp/marks.csv" "$tmp/model.csv" >"$tmp/out" 2>&1
check marks-not-profile 2 $?
"$bin" diff --profile "$tmp/model.csv" >"$tmp/out" 2>&1
check one-file 2 $?
"$bin" diff --profile "$tmp/model.csv" "$tmp/model.csv" --share-tolerance x >"$tmp/out" 2>&1
check bad-tolerance 2 $?
echo "$fails failed"
[ "$fails" -eq 0 ]
