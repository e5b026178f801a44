#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What `ksmsim run` reads, and what it refuses before spending anything:
#   - a pipe, a FIFO path and a process substitution give exactly what the
#     file gives (read once, checked as it goes), and never hang;
#   - /dev/zero and a gzip bomb stop at the line-length limit;
#   - a trace whose model would not fit (a fill of 2^32 pages, or a small
#     --max-memory) is refused with the estimate, from a file before any
#     output exists and from a pipe at the record that crossed the limit;
#   - an output that is the trace, or two outputs onto one file, is refused;
#   - --interval-ms without --csv or --summary-csv is refused.
# usage: inputs.sh KSMSIM TRACE
set -u
bin=$(realpath "$1") trace=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
cd "$tmp" || exit 1
run() { timeout 60 "$bin" run --quiet --trace-label T "$@"; }

run --trace "$trace" --summary-csv file.csv --marks-csv file.marks || bad "run on the file failed"
strip() { cut -d, -f2- "$1"; }	# the trace column names the input
cat "$trace" | run --trace - --summary-csv pipe.csv --marks-csv pipe.marks || bad "run on a pipe failed"
run --trace <(cat "$trace") --summary-csv subst.csv --marks-csv subst.marks ||
	bad "run on a process substitution failed"
mkfifo fifo
cat "$trace" >fifo &
run --trace fifo --summary-csv fifo.csv --marks-csv fifo.marks; rc=$?
[ $rc -eq 0 ] || bad "run on a FIFO: exit $rc (124 is a hang)"
wait
for how in pipe subst fifo; do
	[ "$(strip $how.csv)" = "$(strip file.csv)" ] || bad "$how: summary differs from the file's"
	cmp -s "$how.marks" file.marks || bad "$how: marks differ from the file's"
done
rm -f ./*.csv ./*.marks fifo

# unbounded lines
run --trace /dev/zero --marks-csv m.csv 2>err; rc=$?
[ $rc -eq 2 ] || bad "/dev/zero: exit $rc"
grep -q '^ksmsim run: /dev/zero:1: line longer than 65536 bytes$' err || bad "/dev/zero: $(cat err)"
{ printf 'ksmtrace 1\n# '; head -c 50000000 /dev/zero | tr '\0' c; } | gzip -1 >bomb.gz
run --trace bomb.gz --marks-csv m.csv 2>err; rc=$?
[ $rc -eq 2 ] || bad "gzip bomb: exit $rc"
grep -q '^ksmsim run: bomb.gz:2: line longer than 65536 bytes$' err || bad "gzip bomb: $(cat err)"
rm -f bomb.gz

# memory the model would need
printf 'ksmtrace 1\n0 spawn a\n0 map a 0 0x100000000\n0 fill a 0 0x100000000 zero\n0 set run 1\n1 mark x\n' >huge.ksmt
run --trace huge.ksmt --marks-csv m.csv 2>err; rc=$?
[ $rc -eq 2 ] || bad "2^32 pages: exit $rc"
grep -Eq '^ksmsim run: huge.ksmt:4: the model would need about [0-9.]+ [GT]iB here \(4294967296 written pages, 1 live mms\), more than ' err ||
	bad "2^32 pages: $(cat err)"
run --trace - --marks-csv m.csv --max-memory 1G <huge.ksmt 2>err; rc=$?
[ $rc -eq 2 ] || bad "2^32 pages from a pipe: exit $rc"
grep -q '^ksmsim run: -:4: .*more than 1.0 GiB (--max-memory)$' err || bad "2^32 pages from a pipe: $(cat err)"
run --trace "$trace" --max-memory 16M 2>err && bad "a 16 MiB limit was not enforced"
grep -q "more than 16.0 MiB (--max-memory)" err || bad "--max-memory 16M: $(cat err)"
run --trace "$trace" --max-memory 1G || bad "a 1 GiB limit refused the sample trace"
for v in 0 -1 1X 1.5G ' 1G'; do
	run --trace "$trace" --max-memory "$v" 2>err && bad "--max-memory '$v' accepted"
	grep -q "^ksmsim run: --max-memory wants a size" err || bad "--max-memory '$v': $(cat err)"
done
rm -f huge.ksmt

# outputs onto inputs
cp "$trace" t.ksmt
ln -s t.ksmt alias.csv
sum=$(md5sum <t.ksmt)
for args in "--marks-csv t.ksmt" "--csv alias.csv" "--summary-csv ./t.ksmt" \
	    "--marks-csv m.csv --csv m.csv" "--csv s.csv --summary-csv ./s.csv" "--marks-csv - --csv -"; do
	# shellcheck disable=SC2086
	run --trace t.ksmt $args 2>err; rc=$?
	[ $rc -eq 2 ] || bad "$args: exit $rc"
	grep -q 'same file as' err || bad "$args: $(cat err)"
	[ "$(md5sum <t.ksmt)" = "$sum" ] || bad "$args: the trace changed"
done
[ "$(ls -A | tr '\n' ' ')" = "alias.csv err t.ksmt " ] || bad "files left: $(ls -A | tr '\n' ' ')"

run --trace t.ksmt --interval-ms 50 2>err && bad "--interval-ms without --csv accepted"
grep -q 'give --csv FILE too' err || bad "--interval-ms alone: $(cat err)"

if [ $fails -gt 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "inputs read once or twice as they allow; oversized and clashing runs refused"
