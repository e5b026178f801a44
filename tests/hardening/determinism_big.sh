#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Determinism on non-trivial traces: several mms, thousands of writes, fills,
# advice changes, remaps, settles and marks (make_trace.sh), and a 'ksmsim
# gen' workload (KSMSIM_GEN_WORKLOAD, default kernel-build, at
# KSMSIM_GEN_ARGS, default a small scale; skipped while gen is not built). Each is
# run twice, with --check, in its binary and gzip forms, and with
# --batch-time twice; marks, time series, summary CSV and stdout must be
# byte-identical (the forms: the data rows, since the header names the file).
# usage: determinism_big.sh KSMSIM
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

traces=()
"$here/make_trace.sh" "$tmp/made.ksmt" 2500 5 2048
traces+=("$tmp/made.ksmt")
workload=${KSMSIM_GEN_WORKLOAD:-kernel-build}
if "$bin" gen --help > /dev/null 2>&1; then
	# shellcheck disable=SC2086
	if "$bin" gen "$workload" -o "$tmp/gen.ksmt" --seed 7 \
		${KSMSIM_GEN_ARGS:---scale 0.005 --marks-every-ms 200}; then
		traces+=("$tmp/gen.ksmt")
	else
		bad "ksmsim gen $workload failed"
	fi
else
	echo "ksmsim gen not built: the generated trace only"
fi

# run TAG TRACE ARGS...
run() {
	local tag=$1 trace=$2
	shift 2
	"$bin" run --trace "$trace" --marks-csv "$tmp/$tag.marks" --csv "$tmp/$tag.series" \
		--interval-ms 25 --summary-csv "$tmp/$tag.summary" "$@" > "$tmp/$tag.stdout" \
		2> "$tmp/$tag.stderr" || bad "$tag: exit status $?: $(head -3 "$tmp/$tag.stderr")"
}
same() {	# same A B EXT...
	local a=$1 b=$2
	shift 2
	for ext in "$@"; do
		cmp -s "$tmp/$a.$ext" "$tmp/$b.$ext" || bad "$b: $ext differs from $a"
	done
}
same_data() {	# rows only: the header comment and summary name the trace file
	local a=$1 b=$2
	for ext in marks series; do
		cmp -s <(grep -v '^#' "$tmp/$a.$ext") <(grep -v '^#' "$tmp/$b.$ext") ||
			bad "$b: $ext rows differ from $a"
	done
}

for trace in "${traces[@]}"; do
	n=$(basename "$trace" .ksmt)
	run "$n-a" "$trace"
	run "$n-b" "$trace"
	run "$n-check" "$trace" --check
	same "$n-a" "$n-b" marks series summary stdout
	same "$n-a" "$n-check" marks series summary stdout
	rows=$(grep -vc '^#' "$tmp/$n-a.marks")
	[ "$rows" -ge 10 ] || bad "$n: only $rows mark rows: not a meaningful comparison"
	"$bin" trace convert "$trace" "$tmp/$n.ksmb" || bad "$n: convert to binary failed"
	"$bin" trace convert "$trace" "$tmp/$n.ksmt.gz" || bad "$n: convert to gzip failed"
	run "$n-bin" "$tmp/$n.ksmb"
	run "$n-gz" "$tmp/$n.ksmt.gz"
	same_data "$n-a" "$n-bin"
	same_data "$n-a" "$n-gz"
	run "$n-bt1" "$trace" --batch-time --hash jhash2
	run "$n-bt2" "$trace" --batch-time --hash jhash2
	same "$n-bt1" "$n-bt2" marks series summary stdout
	echo "$n: $rows marks, $(grep -vc '^#' "$tmp/$n-a.series") samples identical across runs"
done

if [ "$fails" -gt 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "byte-identical output"
