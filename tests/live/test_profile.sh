#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ksmsim live --profile on the real ksmd: a replay of distinct and shared
# pages has samples in the checksum (xxh64) and page-compare (memcmp) terms,
# every mark lists every term once, the shares sum to 1 and the ms to the
# marks' ksmd_cpu_ms; and `diff --profile` reads it against the model's.
# Skipped (77) without root, live KSM or perf events.
# usage: test_profile.sh KSMSIM
set -u
bin=${1:?usage: test_profile.sh KSMSIM}
if ! why=$("$bin" live --check 2>&1); then
	echo "SKIP: live KSM is not usable here: $why"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
{
	printf 'ksmtrace 1\n0 set pages_to_scan 5000\n0 set sleep_millisecs 10\n'
	for m in 0 1; do
		printf '0 spawn m%u\n0 map m%u 0x100000 32768\n0 advise m%u 0x100000 32768 mergeable\n' $m $m $m
		printf '0 fillseq m%u 0x100000 16384 5000\n0 fillseq m%u 0x104000 16384 %u\n' $m $m $((900000 * (m + 1)))
	done
	printf '0 set run 1\n0 settle 2\n0 mark merged\n0 settle 1\n0 mark end\n'
} >"$tmp/t.ksmt"
"$bin" live --trace "$tmp/t.ksmt" --marks-csv "$tmp/marks.csv" --profile "$tmp/prof.csv" >"$tmp/out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	if grep -q -- '--profile: ' "$tmp/out"; then
		echo "SKIP: $(tail -n 1 "$tmp/out")"
		exit 77
	fi
	echo "FAIL live --profile (exit $rc): $(tail -n 1 "$tmp/out")"
	exit 1
fi
sed 's/^/  /' "$tmp/prof.csv" | grep -v '^  #' | grep '^  end,\|^  label'
for term in checksum page_compare; do
	n=$(awk -F, -v t="$term" '$1 == "end" && $2 == t { print $3 }' "$tmp/prof.csv")
	if [ "${n:-0}" -gt 0 ]; then echo "ok   $term: $n samples"; else echo "FAIL $term: no samples"; fails=$((fails + 1)); fi
done
cpu=$(grep -v '^#' "$tmp/marks.csv" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "ksmd_cpu_ms") c = i; next } $1 == "end" { print $c }')
if awk -F, -v cpu="$cpu" '$1 == "end" { n++; ms += $5; sh += $4 }
	END { exit !(n == 12 && sh > 0.999 && sh < 1.001 && ms > 0.99 * cpu && ms < 1.01 * cpu) }' "$tmp/prof.csv"; then
	echo "ok   adds-up: 12 terms, shares sum to 1, ms to ksmd_cpu_ms $cpu"
else
	echo "FAIL adds-up: the end mark's terms do not sum to 1 and ksmd_cpu_ms $cpu"; fails=$((fails + 1))
fi
"$bin" run --trace "$tmp/t.ksmt" --profile-csv "$tmp/model.csv" >/dev/null 2>&1
"$bin" diff --profile "$tmp/prof.csv" "$tmp/model.csv" >"$tmp/diff" 2>&1
rc=$?
sed 's/^/  /' "$tmp/diff"
if [ $rc -le 1 ]; then echo "ok   diff --profile reads it (exit $rc)"; else echo "FAIL diff --profile: exit $rc"; fails=$((fails + 1)); fi
echo "$fails failed"
[ "$fails" -eq 0 ]
