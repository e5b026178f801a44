#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What a command prints on standard output must reach it: with standard
# output on a full device (/dev/full) or closed, every command that prints
# exits non-zero with exactly one line on standard error, naming standard
# output; a closed standard output never becomes an output file's
# descriptor (the summary would land in the marks); and standard output on
# a file is an output like the others (--csv /dev/stdout is refused).
# usage: stdout.sh KSMSIM SOURCE-TOP
set -u
bin=$(realpath "$1") top=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
cd "$tmp" || exit 1
trace=$top/traces/samples/default.ksmt golden=$top/tests/golden/default.csv
while IFS= read -r args; do
	for how in full closed; do
		n=$((n + 1))
		# shellcheck disable=SC2086 # the arguments are words
		if [ $how = full ]; then "$bin" $args >/dev/full 2>err; else "$bin" $args >&- 2>err; fi
		rc=$?
		if [ $rc -eq 0 ] || [ "$(wc -l <err)" -ne 1 ] || ! grep -q '^ksmsim.*: standard output: ' err; then
			bad "ksmsim $args, standard output $how: exit $rc, $(wc -l <err) lines: $(cat err)"
		fi
	done
done <<EOF_ARGS
run --trace $trace
run --trace $trace --marks-csv m.csv
hashes
policies
gen --list
trace stat $trace
diff $golden $golden
--help
--version
EOF_ARGS
# a closed standard output named '-' as an output: EBADF, the truth (not EINVAL or
# ENOMEM from fdopen or gzdopen), in one line (issue 46)
while IFS= read -r args; do
	n=$((n + 1))
	# shellcheck disable=SC2086 # the arguments are words
	"$bin" $args >&- 2>err
	rc=$?
	if [ $rc -ne 2 ] || [ "$(wc -l <err)" -ne 1 ] ||
	   ! grep -q 'standard output: cannot write: Bad file descriptor$' err; then
		bad "ksmsim $args, standard output closed: exit $rc, $(wc -l <err) lines: $(cat err)"
	fi
done <<EOF_ARGS
trace cat $trace
trace convert $trace -
trace retime --factor 2 $trace -
gen kernel-build --scale 0.001 -o -
EOF_ARGS
# advise on a full standard output: one line, and the reason is the device's
n=$((n + 1))
"$bin" advise "$trace" --quiet --jobs 1 >/dev/full 2>err; rc=$?
if [ $rc -ne 2 ] || [ "$(wc -l <err)" -ne 1 ] || ! grep -q 'standard output: No space left on device$' err; then
	bad "advise >/dev/full: exit $rc, $(wc -l <err) lines: $(cat err)"
fi
# standard output is an output: a file named as it is refused, not renamed over it
n=$((n + 1))
"$bin" run --trace "$trace" --csv /dev/stdout >out.txt 2>err; rc=$?
if [ $rc -ne 2 ] || ! grep -q '^ksmsim run: --csv /dev/stdout: same file as the summary on standard output -$' err ||
   [ -s out.txt ]; then
	bad "--csv /dev/stdout with standard output on a file: exit $rc: $(cat err)"
fi
n=$((n + 1))
"$bin" run --trace "$trace" --marks-csv out.txt >>out.txt 2>err && bad "--marks-csv FILE >>FILE: accepted"
"$bin" run --quiet --trace "$trace" --csv /dev/stdout >out.txt 2>err || bad "--quiet --csv /dev/stdout >FILE: $(cat err)"
n=$((n + 1))
"$bin" run --trace "$trace" --marks-csv m2.csv >/dev/null
[ ! -e m.csv ] || cmp -s m.csv m2.csv || bad "with standard output closed the marks differ: $(diff m.csv m2.csv | head -3)"
echo "$((n - fails)) passed, $fails failed"
[ $fails -eq 0 ]
