#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What each policy must show against the kernel's run of the same golden
# trace (the goldens pin the numbers; this pins what they mean), and that
# the kernel policy, named or not, is the model as it was.
# usage: policies.sh KSMSIM GOLDEN_DIR
set -eu
bin=$1 dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

run() {	# run NAME TRACE [OPTION...]: marks to $tmp/NAME.csv
	local name=$1 trace=$2
	shift 2
	"$bin" run --check --quiet --trace "$trace" --marks-csv "$tmp/$name.csv" "$@"
}
# col FILE LABEL COLUMN: one cell of a marks file
col() {
	grep -v '^#' "$1" | awk -F, -v label="$2" -v c="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) n = i; next }
		$1 == label { print $n; found = 1 }
		END { if (!n || !found) exit 1 }' || fail "$1: no $3 at $2"
}
# every FILE COLUMN VALUE: the column holds VALUE in every row
every() {
	grep -v '^#' "$1" | awk -F, -v c="$2" -v v="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) n = i; next }
		$n != v { bad = 1 } END { exit bad || !n }' || fail "$1: $2 is not $3 in every row"
}

# kernel: named or not, byte-identical marks
def="$bin/../../traces/samples/default.ksmt"
[ -f "$def" ] || def="$dir/../../traces/samples/default.ksmt"
run default "$def"
run named "$def" --policy kernel
cmp -s "$tmp/default.csv" "$tmp/named.csv" || fail "--policy kernel changed the marks"
# no-gate is the kernel without a checksum: --hash none, row for row
run none "$def" --hash none
run nogate "$def" --policy no-gate
cmp -s <(grep -v '^#' "$tmp/none.csv") <(grep -v '^#' "$tmp/nogate.csv") ||
	fail "no-gate differs from --hash none"
"$bin" run --quiet --trace "$def" --policy dirty-bit --hash jhash2 2>"$tmp/err" &&
	fail "--hash with dirty-bit was accepted"
grep -q "decides without the page checksum" "$tmp/err" || fail "no reason given: $(cat "$tmp/err")"

# dirty-bit: no checksum, no false positive; a rewrite with the same bytes
# keeps a page volatile, so it is not re-merged and CoWed again as the
# kernel's checksum lets it be
t=$dir/policy_dirty_bit.ksmt
run k "$t"
run d "$t" --policy dirty-bit
every "$tmp/d.csv" checksums 0
every "$tmp/d.csv" false_positives 0
[ "$(col "$tmp/k.csv" toggle2 checksums)" -gt 0 ] || fail "the kernel computed no checksum"
kc=$(col "$tmp/k.csv" quiet cow_ksm) dc=$(col "$tmp/d.csv" quiet cow_ksm)
[ "$dc" -lt "$kc" ] || fail "dirty-bit cow_ksm $dc not below the kernel's $kc"
[ "$(col "$tmp/d.csv" toggle2 pages_volatile)" -gt "$(col "$tmp/k.csv" toggle2 pages_volatile)" ] ||
	fail "dirty-bit did not keep the rewritten pages volatile"

# no-gate: the toggled pages go to the unstable tree at every visit, never volatile
run n "$t" --policy no-gate
every "$tmp/n.csv" checksums 0
every "$tmp/n.csv" pages_volatile 0
[ "$(col "$tmp/k.csv" toggle1 pages_volatile)" = 200 ] || fail "the kernel kept no page volatile"
[ "$(col "$tmp/n.csv" toggle1 pages_unshared)" = 200 ] || fail "no-gate did not file the toggled pages"

# partial-hash: blind to word 1, so false positives grow change by change
t=$dir/policy_partial_hash.ksmt
run k "$t"
run p "$t" --policy partial-hash
every "$tmp/k.csv" false_positives 0
[ "$(col "$tmp/p.csv" change1 false_positives)" = 100 ] || fail "partial-hash: change1"
[ "$(col "$tmp/p.csv" change3 false_positives)" = 300 ] || fail "partial-hash: change3"
# k=1024 samples everything: the kernel's xxhash, row for row
run full "$t" --policy partial-hash:k=1024
cmp -s <(grep -v '^#' "$tmp/k.csv") <(grep -v '^#' "$tmp/full.csv") ||
	fail "partial-hash:k=1024 differs from the kernel's xxhash"

# classified: fewer compares, the same merges by key8; none across mms by mm
t=$dir/policy_classified.ksmt
run k "$t"
run c "$t" --policy classified
run m "$t" --policy classified:by=mm
for label in merged changed; do
	[ "$(col "$tmp/c.csv" $label pages_sharing)" = "$(col "$tmp/k.csv" $label pages_sharing)" ] ||
		fail "classified by key8 lost merges at $label"
	[ "$(col "$tmp/c.csv" $label memcmp_calls)" -lt "$(col "$tmp/k.csv" $label memcmp_calls)" ] ||
		fail "classified walked no fewer nodes at $label"
done
[ "$(col "$tmp/k.csv" merged pages_sharing)" = 1000 ] || fail "the kernel did not merge a with b"
[ "$(col "$tmp/m.csv" merged pages_sharing)" = 0 ] || fail "by=mm merged across classes"
"$bin" run --trace "$t" --policy classified:by=mm | grep -Eq '^  class_lost +3000 ' ||
	fail "by=mm: class_lost is not 3000 (b's 1000 inserts in each of 3 passes)"
# --policy-stats-csv: the rows the summary prints after "policy NAME", the same figures
"$bin" run --trace "$t" --policy classified:by=mm --policy-stats-csv "$tmp/ps.csv" >"$tmp/ps.txt" ||
	fail "--policy-stats-csv: run failed"
[ "$(grep -c '^# ksmsim .*policy classified:classes=16,by=mm; ' "$tmp/ps.csv")" = 1 ] ||
	fail "--policy-stats-csv: no provenance line"
[ "$(grep '^class_lost,' "$tmp/ps.csv" | cut -d, -f2)" = 3000 ] ||
	fail "--policy-stats-csv: class_lost is not 3000"
[ "$(grep -v '^#' "$tmp/ps.csv" | tail -n +2 | cut -d, -f1,2 | tr , ' ')" = \
  "$(sed -n '/^policy /,/^$/p' "$tmp/ps.txt" | awk 'NF >= 2 && $1 != "policy" {print $1, $2}')" ] ||
	fail "--policy-stats-csv and the summary's policy lines differ"
"$bin" run --trace "$t" --quiet --policy-stats-csv "$tmp/pk.csv" || fail "kernel: run failed"
[ "$(grep -vc '^#' "$tmp/pk.csv")" = 1 ] || fail "--policy-stats-csv: rows under the kernel's"
echo "policies: all hold"
