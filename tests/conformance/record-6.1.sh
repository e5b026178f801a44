#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Records expected-6.1/CASE.csv (marks) and expected-6.1/CASE.mm.csv (each
# process's ksm_stat at each mark) on the live KSM of Debian's 6.1 kernel
# inside a QEMU guest (workloads/vm/replay-6.1.sh): RUNS boots (default 3),
# each replaying every CASE once with `ksmsim live`, in the order given.
# As record.sh: cells not identical in every run are listed in a "cells
# that differ between runs:" comment, which `ksmsim diff` skips; the
# measured ksmd_cpu_ms is left out. A case that fails in any run (e.g. it
# needs a knob 6.1 lacks) is not written; its line says why.
# usage: record-6.1.sh PATH/TO/ksmsim CASE...   (RUNS=N; JOBS=2 boots two
# guests at a time; the guest's options through REPLAY_OPTS, e.g.
# REPLAY_OPTS='-m 1024 -c 2 -s 200')
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${1:?usage: record-6.1.sh PATH/TO/ksmsim CASE...}")
shift
runs=${RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here" || exit 2
mkdir -p expected-6.1
cases=()
for c in "$@"; do
	c=$(basename "$c" .ksmt)
	[ -e "cases/$c.ksmt" ] || { echo "record-6.1.sh: no cases/$c.ksmt" >&2; exit 2; }
	cases+=("cases/$c.ksmt")
done
status=0
# JOBS guests at a time (default 1; at most 2 on a shared machine)
jobs=${JOBS:-1}
boot() {
	# shellcheck disable=SC2086 # REPLAY_OPTS: options, split on purpose
	KSMSIM=$bin "$here/../../workloads/vm/replay-6.1.sh" ${REPLAY_OPTS:-} -o "$tmp/run$1" \
		"${cases[@]}" > "$tmp/run$1.log" 2>&1
	echo $? > "$tmp/run$1.rc"
}
running=0
for i in $(seq 1 "$runs"); do
	[ "$running" -lt "$jobs" ] || { wait -n; running=$((running - 1)); }
	boot "$i" &
	running=$((running + 1))
	# the first builds the replayer's cached initramfs: let it be done first
	[ "$i" = 1 ] && [ "$jobs" -gt 1 ] && sleep 30
done
wait
for i in $(seq 1 "$runs"); do
	grep -v ' ok ' "$tmp/run$i.log"
	[ "$(cat "$tmp/run$i.rc")" = 2 ] && { echo "record-6.1.sh: run $i: the guest did not finish" >&2; exit 1; }
done
for c in "${cases[@]}"; do
	c=$(basename "$c" .ksmt)
	ok=1
	for i in $(seq 1 "$runs"); do
		if [ ! -s "$tmp/run$i/$c.csv" ]; then
			echo "FAIL $c: run $i: $(tail -n 1 "$tmp/run$i/$c.err" 2>/dev/null)"
			ok=0; status=1; break
		fi
	done
	[ "$ok" = 1 ] || continue
	for kind in "" ".mm"; do
	files=()
	for i in $(seq 1 "$runs"); do files+=("$tmp/run$i/$c$kind.csv"); done
	python3 "$here/merge_runs.py" "expected-6.1/$c$kind.csv" "${files[@]}" || status=1
	done
done
grep -h '^replay-6.1: \(guest\|traces=\)' "$tmp"/run*.log
grep -h ' ok ' "$tmp"/run*.log | awk '{ sub(/s$/, "", $4); t[$2] = t[$2] " " $4 } END { for (c in t) print "replay-6.1: seconds " c ":" t[c] }' | sort
exit $status
