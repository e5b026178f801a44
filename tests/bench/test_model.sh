#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ksmsim bench model: job 3 (the host) runs both variants, before job 2,
# reports the model's structures per page, is skipped by --host-gib 0, and
# a bad --host-gib is refused with exit 2 naming it. Figures are not
# asserted (machines are noisy); what the job is made of is.
set -u
bin=${1:?usage: test_model.sh PATH/TO/ksmsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$bin" bench model --host-gib x >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || bad "--host-gib x: exit $rc"
grep -q -- "--host-gib wants 0..1048576, not 'x'" "$tmp/err" || bad "--host-gib x: $(cat "$tmp/err")"

"$bin" bench model --mib 4 --vm-mib 4 --host-gib 1 >"$tmp/out" 2>"$tmp/err" ||
	bad "bench model --host-gib 1: exit $?: $(cat "$tmp/err")"
order=$(grep -o '^job [0-9][ab]*' "$tmp/out" | tr '\n' ' ')
[ "$order" = "job 1 job 3a job 3b job 2 " ] || bad "job order: '$order'"
grep -q '^job 3a: host of 262144 pages (1 GiB) in 1 guests, job 2.s mix, 3 scans$' "$tmp/out" ||
	bad "job 3a header: $(grep '^job 3a' "$tmp/out")"
# job 3b: every page distinct, so its 262144 rmap items are one per page
sed -n '/^job 3b/,/^job 2/p' "$tmp/out" >"$tmp/3b"
grep -Eq 'rmap items .* 262144 items' "$tmp/3b" || bad "job 3b rmap items: $(grep 'rmap items' "$tmp/3b")"
grep -Eq 'peak RSS .*target <= 80 B/page' "$tmp/3b" || bad "job 3b peak RSS line missing"
grep -Eq 'visits +786432$' "$tmp/3b" || bad "job 3b visits: $(grep visits "$tmp/3b" | head -1)"

"$bin" bench model --mib 4 --vm-mib 4 --host-gib 0 >"$tmp/out" 2>&1 || bad "--host-gib 0: exit $?"
grep -q '^job 3' "$tmp/out" && bad "--host-gib 0 still ran job 3"

[ $fails -eq 0 ] && echo "bench model: all checks passed"
exit $((fails > 0))
