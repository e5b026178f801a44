#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Byte-identical outputs between two builds: every bundled trace (the
# samples, the goldens, the conformance cases) through `ksmsim run` of OLD
# and of NEW, under the kernel's policy and each other design, with every
# output (marks, time series, summary CSV, per-mm stats, standard output);
# every file must be the same to the byte. For a change of structure, not of
# behaviour. usage: same_outputs.sh OLD-KSMSIM NEW-KSMSIM [SOURCE-TOP]
set -u
old=$1 new=$2 top=${3:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
policies=(kernel no-gate dirty-bit partial-hash classified classified:by=mm)
n=0 bad=0
for trace in "$top"/traces/samples/*.ksm* "$top"/tests/golden/*.ksmt "$top"/tests/conformance/cases/*.ksmt; do
	for policy in "${policies[@]}"; do
		for side in old new; do
			bin=$old; [ "$side" = new ] && bin=$new
			d=$tmp/$side; rm -rf "$d"; mkdir -p "$d"
			"$bin" run --trace "$trace" --trace-label "$(basename "$trace")" --policy "$policy" \
				--marks-csv "$d/marks.csv" --csv "$d/series.csv" --summary-csv "$d/summary.csv" \
				--mm-stats-csv "$d/mm.csv" --interval-ms 500 --ideal-interval-ms 1000 \
				>"$d/stdout" 2>"$d/stderr"
			echo "$?" >"$d/status"
		done
		n=$((n + 1))
		if ! diff -r "$tmp/old" "$tmp/new" >"$tmp/diff"; then
			bad=$((bad + 1))
			echo "DIFFERS: $(basename "$trace") --policy $policy"
			head -n 20 "$tmp/diff"
		fi
	done
done
echo "$((n - bad)) passed, $bad failed"
[ "$bad" = 0 ]
