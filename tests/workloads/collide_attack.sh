#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The fixed-seed attack. checksum-adversarial --hash H writes pages that
# alternate between the two contents of colliding pairs for H: the model's
# gate under H takes them for unchanged (false positives), under another
# 32-bit hash or a 64-bit one it sees every change. collide false-positive
# --changes colliding-pair: rate 1 for jhash2 and xxhash, no pair (rate 0)
# for xxh64; the same bytes for any --threads; other kinds unchanged.
set -eu
KSMSIM=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

col() {	# col MARKS-CSV COLUMN: that column of the 'end' mark
	awk -F, -v c="$2" '/^#/ {next} !h {for (i = 1; i <= NF; i++) if ($i == c) n = i; h = 1; next}
		$1 == "end" {print $n}' "$1"
}
fp() {	# fp TRACE HASH: the model's false positives over the run
	"$KSMSIM" run --trace "$1" --hash "$2" --quiet --check --marks-csv "$T/m.csv"
	col "$T/m.csv" false_positives
}

# --- the workload: gen line, determinism, the gate fooled only by its hash ---
for h in jhash2 xxhash; do
	"$KSMSIM" gen checksum-adversarial --scale 0.25 --hash "$h" -o "$T/$h.ksmt"
	grep -q "^# ksmsim gen: workload=checksum-adversarial .* hash=$h\$" "$T/$h.ksmt" ||
		fail "$h: gen line $(sed -n 2p "$T/$h.ksmt")"
done
"$KSMSIM" gen checksum-adversarial --scale 0.25 --hash JHASH2 -o "$T/again.ksmt"
cmp -s "$T/jhash2.ksmt" "$T/again.ksmt" || fail "same options, different trace"
"$KSMSIM" gen checksum-adversarial --scale 0.25 -o "$T/default.ksmt"
cmp -s "$T/xxhash.ksmt" "$T/default.ksmt" || fail "the default --hash is not xxhash"
! cmp -s "$T/jhash2.ksmt" "$T/xxhash.ksmt" || fail "jhash2 and xxhash pairs are the same"
for pair in jhash2:xxhash jhash2:xxh32 xxhash:jhash2 xxhash:crc32c; do
	t=${pair%%:*} other=${pair#*:}
	own=$(fp "$T/$t.ksmt" "$t")
	echo "# $t trace: false_positives $own under $t"
	[ "$own" -gt 40 ] || fail "$t trace under $t: only $own false positives"
	n=$(fp "$T/$t.ksmt" "$other")
	echo "# $t trace: false_positives $n under $other"
	[ "$n" -eq 0 ] || fail "$t trace under $other: $n false positives"
	for w in xxh64 xxh3; do
		n=$(fp "$T/$t.ksmt" "$w")
		[ "$n" -eq 0 ] || fail "$t trace under $w: $n false positives"
	done
done

# --- refused: a 64-bit hash (no pair in the budget), bad names, other workloads ---
refused() {	# refused WHAT ARGS...: exit 2, one line naming --hash, no file
	what=$1
	shift
	rc=0
	"$KSMSIM" gen "$@" -o "$T/no.ksmt" 2>"$T/err" || rc=$?
	[ "$rc" -eq 2 ] || fail "$what: exit $rc"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$what: $(cat "$T/err")"
	grep -q -- '--hash' "$T/err" || fail "$what: $(cat "$T/err")"
	[ ! -e "$T/no.ksmt" ] || fail "$what: left a file"
}
refused xxh64 checksum-adversarial --scale 0.25 --hash xxh64
grep -q 'infeasible' "$T/err" || fail "xxh64: $(cat "$T/err")"
refused bogus checksum-adversarial --hash bogus
refused none checksum-adversarial --hash none
refused crc-adversarial crc-adversarial --scale 0.1 --hash jhash2

# --- collide false-positive --changes colliding-pair -------------------------
cp="collide false-positive --hashes jhash2,xxhash,xxh64 --changes colliding-pair --budget 262144"
for j in 1 2; do
	# shellcheck disable=SC2086
	"$KSMSIM" $cp --threads $j -o "$T/cp$j.csv" >"$T/cp$j.txt" 2>/dev/null
done
cmp -s "$T/cp1.csv" "$T/cp2.csv" && cmp -s "$T/cp1.txt" "$T/cp2.txt" ||
	fail "colliding-pair output differs between --threads 1 and 2"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
{
	n++
	if ($c["change"] != "colliding-pair") { print "change " $c["change"]; bad = 1 }
	if ($1 == "xxh64") {
		if ($c["trials"] != 0 || $c["rate"] != 0) { print "xxh64: " $0; bad = 1 }
	} else if ($c["trials"] < 3 || $c["rate"] != 1 || $c["unchanged"] != $c["trials"]) {
		print $1 ": " $0; bad = 1 }
}
END { if (n != 3) { print n " rows"; bad = 1 } exit bad }' "$T/cp1.csv" ||
	fail "colliding-pair rates"
grep -q '^  xxh64    64 bits: no pair within 262144 tries' "$T/cp1.txt" ||
	fail "no 'no pair within' line: $(cat "$T/cp1.txt")"
grep -q '^  jhash2   32 bits: [0-9]* pairs in [0-9]* tries' "$T/cp1.txt" || fail "jhash2 line"
# another seed, other pairs (so the check above can fail)
# shellcheck disable=SC2086
"$KSMSIM" $cp --seed 2 >"$T/s2.txt" 2>/dev/null
! cmp -s "$T/cp1.txt" "$T/s2.txt" || fail "seed 2 gave seed 1's sweep"
# the other kinds' rows and table are what they were without it
fpw="collide false-positive --hashes jhash2,xxh64 --trials 20000 --seed 3"
# shellcheck disable=SC2086
"$KSMSIM" $fpw --changes word -o "$T/w.csv" >"$T/w.txt" 2>/dev/null
# shellcheck disable=SC2086
"$KSMSIM" $fpw --changes word,colliding-pair --budget 1000 -o "$T/wc.csv" >"$T/wc.txt" 2>/dev/null
grep -v colliding-pair "$T/wc.csv" | cmp -s - "$T/w.csv" || fail "word rows changed by colliding-pair"
! grep -q colliding "$T/w.txt" || fail "colliding-pair notes without the kind"
# bad budgets
for b in 0 1 4294967297 x; do
	rc=0
	"$KSMSIM" collide false-positive --changes colliding-pair --budget "$b" >/dev/null 2>"$T/err" ||
		rc=$?
	[ "$rc" -eq 2 ] && grep -q -- '--budget' "$T/err" || fail "--budget $b: exit $rc, $(cat "$T/err")"
done
echo ok
