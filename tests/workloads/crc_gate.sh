#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# crc-adversarial: a crc32c (or crc32) checksum gate takes the crafted changes
# for no change (false positives, then merges that are copied again: cow_ksm),
# xxhash and jhash2 never do.
set -eu
KSMSIM=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$KSMSIM" gen crc-adversarial --scale 0.1 -o "$T/c.ksmb"
col() {	# col HASH COLUMN: that column of the 'end' mark
	awk -F, -v c="$2" '/^#/ {next} !h {for (i = 1; i <= NF; i++) if ($i == c) n = i; h = 1; next}
		$1 == "end" {print $n}' "$T/$1.csv"
}
for h in crc32c crc32 xxhash jhash2; do
	"$KSMSIM" run --trace "$T/c.ksmb" --hash "$h" --quiet --marks-csv "$T/$h.csv"
	echo "# $h: false_positives $(col $h false_positives) cow_ksm $(col $h cow_ksm)"
done
for h in crc32c crc32; do
	[ "$(col $h false_positives)" -gt 0 ] || fail "$h gate not fooled"
	[ "$(col $h cow_ksm)" -gt 0 ] || fail "$h: no merge of a changing page"
done
for h in xxhash jhash2; do
	[ "$(col $h false_positives)" -eq 0 ] || fail "$h gate fooled"
	[ "$(col $h cow_ksm)" -eq 0 ] || fail "$h: changing pages merged"
done
echo ok
