#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every workload at a tiny --scale: the trace parses (trace stat, run --check),
# holds what the README promises (one mm per VM, knobs and run at t=0, marks),
# comes out byte-identical for one seed and different for another, and its
# text, gzip and binary forms hold the same records; then the merges and
# copy-on-writes that some workloads exist for.
set -eu
KSMSIM=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

WORKLOADS="kernel-build iozone number-crunching vm-clones ksm-flood zero-heavy crc-adversarial
checksum-adversarial large-tree large-tree-crc"
listed=$("$KSMSIM" gen --help | awk '/^Workloads/{on=1;next} /^Options/{on=0} on && /^  [a-z]/{print $1}' | tr '\n' ' ')
# probe (tests/exposure/probe.sh) spawns a victim and an attacker beside the guests
want=$(echo "$WORKLOADS" | sed 's/ large-tree/ probe large-tree/')
[ "$listed" = "$(echo $want) " ] || fail "gen --help lists '$listed'"

for w in $WORKLOADS; do
	scale=0.002
	[ "$w" = ksm-flood ] && scale=0.01
	[ "$w" = crc-adversarial ] && scale=0.02
	[ "$w" = checksum-adversarial ] && scale=0.02
	opts="--scale $scale --vms 3 --marks-every-ms 100"
	"$KSMSIM" gen "$w" $opts --seed 5 -o "$T/a.ksmt" || fail "$w: gen"
	"$KSMSIM" gen "$w" $opts --seed 5 -o "$T/b.ksmt" || fail "$w: gen again"
	"$KSMSIM" gen "$w" $opts --seed 6 -o "$T/c.ksmt" || fail "$w: gen seed 6"
	cmp -s "$T/a.ksmt" "$T/b.ksmt" || fail "$w: same seed, different traces"
	if cmp -s "$T/a.ksmt" "$T/c.ksmt"; then fail "$w: seeds 5 and 6 gave one trace"; fi
	"$KSMSIM" gen "$w" $opts --seed 5 -o "$T/a.ksmb" || fail "$w: gen binary"
	"$KSMSIM" gen "$w" $opts --seed 5 -o "$T/a.ksmt.gz" || fail "$w: gen gz"
	"$KSMSIM" trace cat "$T/a.ksmt" > "$T/a.txt"
	"$KSMSIM" trace cat "$T/a.ksmb" > "$T/b.txt"
	"$KSMSIM" trace cat "$T/a.ksmt.gz" > "$T/c.txt"
	cmp -s "$T/a.txt" "$T/b.txt" || fail "$w: binary form differs"
	cmp -s "$T/a.txt" "$T/c.txt" || fail "$w: gzip form differs"

	"$KSMSIM" trace stat "$T/a.ksmt" > "$T/stat" || fail "$w: trace stat refused it"
	grep -Eq '^mms +3 spawned' "$T/stat" || fail "$w: not 3 mms: $(grep ^mms "$T/stat")"
	head -5 "$T/a.txt" | grep -q '^0 set pages_to_scan 1600$' || fail "$w: pages_to_scan"
	head -5 "$T/a.txt" | grep -q '^0 set sleep_millisecs 200$' || fail "$w: sleep_millisecs"
	head -5 "$T/a.txt" | grep -q '^0 set run 1$' || fail "$w: run 1"
	grep -q ' mark s0001$' "$T/a.txt" || fail "$w: no periodic mark"
	grep -q ' mark end$' "$T/a.txt" || fail "$w: no end mark"
	# Workloads that merge at all must map advised memory.
	grep -q ' advise .* mergeable$' "$T/a.txt" || fail "$w: nothing advised"

	"$KSMSIM" run --trace "$T/a.ksmb" --check --quiet --marks-csv "$T/m.csv" ||
		fail "$w: run --check"
	grep -q '^end,' "$T/m.csv" || fail "$w: no end row"
done

# Merges happen where the README says they do (run at a size with a few scans).
"$KSMSIM" gen vm-clones --scale 0.005 -o "$T/v.ksmb"
"$KSMSIM" run --trace "$T/v.ksmb" --quiet --marks-csv "$T/m.csv"
awk -F, '$1=="end" && $6 > 0 {ok=1} END {exit !ok}' "$T/m.csv" || fail "vm-clones: nothing merged"
"$KSMSIM" gen ksm-flood --scale 0.01 -o "$T/f.ksmb"
"$KSMSIM" run --trace "$T/f.ksmb" --quiet --marks-csv "$T/m.csv"
# merge_c: every page of 3 processes x 327 pages is 'c': merged with no rmap left unshared
awk -F, '$1=="merge_c" && $6 + $5 == 981 && $7 == 0 {ok=1} END {exit !ok}' "$T/m.csv" ||
	fail "ksm-flood: merge_c is not a full merge: $(grep ^merge_c "$T/m.csv")"
awk -F, '$1=="cow_flood" {c=$14} $1=="one_d" {d=$14} END {exit !(c - d >= 900)}' "$T/m.csv" ||
	fail "ksm-flood: the CoW flood copied too few pages"
awk -F, '$1=="unmerged" && $5 == 0 && $6 == 0 {ok=1} END {exit !ok}' "$T/m.csv" ||
	fail "ksm-flood: run=2 left merged pages"
"$KSMSIM" gen number-crunching --scale 0.01 -o "$T/n.ksmb"
"$KSMSIM" run --trace "$T/n.ksmb" --quiet --marks-csv "$T/m.csv" --summary-csv "$T/s.csv"
# unshared far above 1 GiB at full size = 2621 pages at 1/100
awk -F, '$1=="end" && $7 > 2621 {ok=1} END {exit !ok}' "$T/m.csv" ||
	fail "number-crunching: small unstable tree: $(grep ^end, "$T/m.csv")"
# The converged field merges while idle and is then corrected: copy-on-write.
cow=$(awk -F, 'NR==1 {for (i = 1; i <= NF; i++) if ($i == "cow_ksm") c = i; next}
	c {print $c}' "$T/s.csv")
[ "${cow:-0}" -gt 0 ] || fail "number-crunching: no CoW after merging (cow_ksm '$cow')"
# Corrections are small: two bytes at the start (low mantissa) of one double.
"$KSMSIM" trace cat "$T/n.ksmb" > "$T/n.txt"
awk '$2 == "write" && $5 ~ /^bytes:/ {n++; split($5, b, ":"); if (b[2] % 8 || length(b[3]) != 4) bad++}
	END {exit !(n > 0 && !bad)}' "$T/n.txt" ||
	fail "number-crunching: corrections are not two low bytes of a double"
# large-tree: after the boot fills, every write is one word (counters,
# timestamps, array elements, bitmaps); the gate sees changes, pages
# change after their insertion in the unstable tree, which holds most of
# memory, and the pages the guests share change in lock step (CoW).
"$KSMSIM" gen large-tree --scale 0.01 -o "$T/l.ksmb"
"$KSMSIM" trace cat "$T/l.ksmb" > "$T/l.txt"
awk '$2 == "write" {n++; if ($5 !~ /^word:/) bad++} END {exit !(n > 1000 && !bad)}' "$T/l.txt" ||
	fail "large-tree: changes are not single-word writes"
"$KSMSIM" run --trace "$T/l.ksmb" --quiet --smart-scan 0 --summary-csv "$T/s.csv"
col() { awk -F, -v n="$1" 'NR==1 {for (i = 1; i <= NF; i++) if ($i == n) c = i; next} c {print $c}' "$T/s.csv"; }
pages=$((4 * 10485))
[ "$(col full_scans)" -ge 5 ] || fail "large-tree: $(col full_scans) full scans, not 5"
[ "$(col gate_changed)" -gt 1000 ] || fail "large-tree: gate_changed $(col gate_changed)"
[ "$(col unstable_changed_after_insert)" -gt 0 ] || fail "large-tree: nothing changed after insertion"
[ "$(col cow_ksm)" -gt 0 ] || fail "large-tree: no CoW of the shared changing pages"
[ "$(col peak_pages_unshared)" -gt $((pages * 8 / 10)) ] ||
	fail "large-tree: unstable tree $(col peak_pages_unshared) of $pages pages"
echo ok
