#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# KSMSIM_HASH_KEY, the keyed checksums' key (xxhash-seeded, siphash): a value
# that is not a decimal number is refused with one line naming the variable,
# before any command runs; unset is key 1, so a run reproduces either way.
# usage: key_env.sh KSMSIM TRACE
set -u
bin=${1:?usage: key_env.sh KSMSIM TRACE} trace=${2:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

for v in abc -1 1x $'1\n2' 18446744073709551616; do
	KSMSIM_HASH_KEY=$v "$bin" hashes >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] || bad "KSMSIM_HASH_KEY='$v': exit $rc, want 2"
	[ ! -s "$tmp/out" ] || bad "KSMSIM_HASH_KEY='$v': wrote to stdout"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^ksmsim: KSMSIM_HASH_KEY wants a decimal number' "$tmp/err" ||
		bad "KSMSIM_HASH_KEY='$v': $(cat "$tmp/err")"
done
for h in siphash xxhash-seeded; do
	env -u KSMSIM_HASH_KEY "$bin" run --quiet --trace "$trace" --hash $h --csv "$tmp/unset.csv" || bad "$h unset"
	KSMSIM_HASH_KEY=1 "$bin" run --quiet --trace "$trace" --hash $h --csv "$tmp/one.csv" || bad "$h key 1"
	cmp -s "$tmp/unset.csv" "$tmp/one.csv" || bad "$h: unset and key 1 differ"
done
[ $fail -eq 0 ] && echo "ok   KSMSIM_HASH_KEY: refusals, default 1"
exit $fail
