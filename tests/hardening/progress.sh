#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Progress of 'ksmsim run' goes to stderr only: shown on a terminal (a pty
# made by script(1)) or with --progress, silent otherwise and with --quiet,
# and the outputs (stdout, marks, time series, summary) are byte-identical
# with and without it.
# usage: progress.sh KSMSIM
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

trace=$tmp/t.ksmt
"$here/make_trace.sh" "$trace" 3000 4 2048

# run TAG ARGS...: outputs under $tmp/TAG.*
run() {
	local tag=$1
	shift
	"$bin" run --trace "$trace" --marks-csv "$tmp/$tag.marks" --csv "$tmp/$tag.series" \
		--interval-ms 100 --summary-csv "$tmp/$tag.summary" "$@" \
		> "$tmp/$tag.stdout" 2> "$tmp/$tag.stderr" || bad "$tag: exit status $?"
}
run plain
run forced --progress
run quiet --quiet
run quiet_forced --quiet --progress

for tag in forced quiet quiet_forced; do
	for ext in marks series summary; do
		cmp -s "$tmp/plain.$ext" "$tmp/$tag.$ext" || bad "$tag: $ext differs from the plain run"
	done
done
cmp -s "$tmp/plain.stdout" "$tmp/forced.stdout" || bad "forced: stdout differs"
[ -s "$tmp/plain.stdout" ] || bad "plain: no summary on stdout"
[ -s "$tmp/quiet.stdout" ] && bad "quiet: something on stdout"
[ -s "$tmp/quiet_forced.stdout" ] && bad "quiet --progress: something on stdout"

# not a terminal: silent unless forced
[ -s "$tmp/plain.stderr" ] && bad "plain (stderr not a terminal): stderr not empty: $(cat "$tmp/plain.stderr")"
[ -s "$tmp/quiet.stderr" ] && bad "quiet: stderr not empty"
for tag in forced quiet_forced; do
	if ! grep -Eq '^ksmsim run: running: [0-9]+ records, 100\.0%' "$tmp/$tag.stderr"; then
		bad "$tag: no final progress line on stderr:"
		sed 's/^/    /' "$tmp/$tag.stderr" >&2
	fi
	grep -q $'\r' "$tmp/$tag.stderr" && bad "$tag: carriage returns in a non-terminal stderr"
done

# a binary trace: the share is of the trace's time, so it climbs instead of
# reading 100% as soon as the compressed file is in the reader's buffers
"$bin" gen kernel-build --scale 0.1 --quiet -o "$tmp/t.ksmb" || bad "gen kernel-build failed"
"$bin" run --trace "$tmp/t.ksmb" --progress --quiet 2> "$tmp/bin.stderr" || bad "binary run failed"
grep '^ksmsim run: running: ' "$tmp/bin.stderr" | sed '$d' > "$tmp/bin.lines"
[ -s "$tmp/bin.lines" ] || echo "binary run too fast for two progress lines: share not checked"
grep -q ', 100\.0%' "$tmp/bin.lines" && bad "binary: 100% before the end: $(head -3 "$tmp/bin.lines")"

# a terminal: shown by default, in place (\r); not with --quiet
if command -v script > /dev/null; then
	q() { printf '%q ' "$@"; }
	script -q -e -c "$(q "$bin" run --trace "$trace" --marks-csv "$tmp/tty.marks") > $(q "$tmp/tty.stdout")" \
		/dev/null < /dev/null > "$tmp/tty.out" 2>&1 || bad "tty: exit status $?"
	grep -q $'\rksmsim run: running: ' "$tmp/tty.out" || {
		bad "tty: no progress on the terminal:"
		cat -A "$tmp/tty.out" | head -5 >&2
	}
	cmp -s "$tmp/plain.marks" "$tmp/tty.marks" || bad "tty: marks differ"
	cmp -s "$tmp/plain.stdout" "$tmp/tty.stdout" || bad "tty: stdout differs"
	script -q -e -c "$(q "$bin" run --trace "$trace" --quiet)" /dev/null < /dev/null \
		> "$tmp/ttyq.out" 2>&1 || bad "tty quiet: exit status $?"
	[ -s "$tmp/ttyq.out" ] && bad "tty --quiet: output on the terminal: $(cat -A "$tmp/ttyq.out" | head -3)"
else
	echo "no script(1): terminal cases not checked"
fi

# A record far ahead (2^64 - 1 us) is a run of batches with no record
# between: progress follows the trace clock through them and says how long
# the run would take, instead of standing still.
printf 'ksmtrace 1\n0 spawn a\n0 map a 0 4\n0 advise a 0 4 mergeable\n0 fill a 0 4 zero\n0 set run 1\n18446744073709551615 mark end\n' >"$tmp/far.ksmt"
timeout -s INT 4 "$bin" run --trace "$tmp/far.ksmt" --progress 2>"$tmp/far.err" >/dev/null
tr '\r' '\n' <"$tmp/far.err" | grep -Eq 'running: .*ETA [0-9]{4,}h' ||
	bad "a record at 2^64-1 us: no ETA in hours by the thousand: $(tr '\r' '\n' <"$tmp/far.err" | tail -2)"
if [ "$fails" -gt 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "progress on stderr only, outputs unchanged"
