#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A run that runs out of memory (here: an address-space limit, as a user's
# `ulimit -v` sets it) ends with one line "ksmsim: out of memory: ...",
# exit 2 and no output file or temporary left: never an abort. Each limit
# fails a different allocation (the model's arenas, the content pool, a
# GLib container). Skipped under ASan, which cannot run in a small address
# space.
set -u
bin=$1
if ldd "$bin" 2>/dev/null | grep -q libasan; then
	echo "SKIP: built with ASan"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" gen number-crunching --vms 2 --mem-mib 2048 --duration-s 60 -o "$tmp/nc.ksmb" || exit 1
fail=0 oom=0
for kib in 60000 100000 150000 200000 250000; do
	rm -rf "$tmp/out"; mkdir "$tmp/out"
	(ulimit -v "$kib"; exec "$bin" run --quiet --trace "$tmp/nc.ksmb" --csv "$tmp/out/s.csv" \
		--summary-csv "$tmp/out/sum.csv") >"$tmp/stdout" 2>"$tmp/err"
	rc=$?
	if [ "$rc" = 0 ]; then
		[ -s "$tmp/out/s.csv" ] || { echo "FAIL: $kib KiB: exit 0 without its CSV"; fail=1; }
		continue
	fi
	oom=$((oom + 1))
	if [ "$rc" != 2 ]; then
		echo "FAIL: $kib KiB: exit $rc (want 2), stderr: $(head -c 300 "$tmp/err")"; fail=1
	fi
	if [ "$(wc -l < "$tmp/err")" != 1 ] || ! grep -q '^ksmsim: out of memory: .*; 2 unfinished output files removed$' "$tmp/err"; then
		echo "FAIL: $kib KiB: stderr is not one out-of-memory line: $(head -c 300 "$tmp/err")"; fail=1
	fi
	if [ -n "$(ls -A "$tmp/out")" ]; then
		echo "FAIL: $kib KiB: left behind: $(ls -A "$tmp/out")"; fail=1
	fi
	echo "$kib KiB: $(cat "$tmp/err")"
done
# The trace needs some 150 MB: the smaller limits must have run out.
[ "$oom" -ge 2 ] || { echo "FAIL: only $oom of 5 limits ran out of memory"; fail=1; }

# advise: a worker that runs out says so through its parent, in one line
# naming the configuration; the parent's unfinished outputs are the parent's
# to remove (a worker once removed them and said so on a line of its own).
oom=0
for kib in 40000 60000 90000; do
	rm -rf "$tmp/out"; mkdir "$tmp/out"
	(ulimit -v "$kib"; exec "$bin" advise --quiet --jobs 2 -o "$tmp/out/a.csv" "$tmp/nc.ksmb") \
		>"$tmp/stdout" 2>"$tmp/err"
	rc=$?
	[ "$rc" = 0 ] && continue
	oom=$((oom + 1))
	[ "$rc" = 2 ] || { echo "FAIL: advise $kib KiB: exit $rc (want 2)"; fail=1; }
	if [ "$(wc -l < "$tmp/err")" != 1 ] ||
	   ! grep -q '^ksmsim advise: [a-z0-9-]*/[a-z0-9]*: its worker ran out of memory: ' "$tmp/err"; then
		echo "FAIL: advise $kib KiB: stderr is not one out-of-memory line: $(head -c 300 "$tmp/err")"; fail=1
	fi
	[ -z "$(ls -A "$tmp/out")" ] || { echo "FAIL: advise $kib KiB: left behind: $(ls -A "$tmp/out")"; fail=1; }
	echo "advise $kib KiB: $(cat "$tmp/err")"
done
[ "$oom" -ge 1 ] || { echo "FAIL: advise never ran out of memory"; fail=1; }
exit $fail
