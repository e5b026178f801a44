#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The same trace and options must give byte-identical output, with and
# without the invariant checker, and from the text and binary forms alike.
# usage: determinism.sh KSMSIM TRACE
set -eu
bin=$1 trace=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {
	local tag=$1; shift
	"$bin" run --trace "$@" --marks-csv "$tmp/$tag.marks" --csv "$tmp/$tag.series" \
		--interval-ms 50 --summary-csv "$tmp/$tag.summary" > "$tmp/$tag.stdout"
}
run a "$trace"
run b "$trace"
run c "$trace" --check
for ext in marks series summary stdout; do
	cmp "$tmp/a.$ext" "$tmp/b.$ext"
	cmp "$tmp/a.$ext" "$tmp/c.$ext"
done
# the binary form of the same trace gives the same rows
if "$bin" trace convert "$trace" "$tmp/t.ksmb" 2>/dev/null; then
	run d "$tmp/t.ksmb"
	for ext in marks series; do
		# the header comment names the trace file; compare the data only
		cmp <(grep -v '^#' "$tmp/a.$ext") <(grep -v '^#' "$tmp/d.$ext")
	done
fi
# a different checksum is a different run: the gate's work must show
"$bin" run --trace "$trace" --hash jhash2 --summary-csv "$tmp/j.summary" --quiet
! cmp -s "$tmp/a.summary" "$tmp/j.summary"
echo "identical output across runs"
