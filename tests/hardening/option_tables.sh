#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The commands whose options come from a table (cli/opt_table.c, cli_parse):
# a bad value of one of their options is refused with exit 2, nothing on
# standard output and exactly one line on standard error, "ksmsim CMD:
# --OPTION ...", naming the option; a value given twice is refused the
# same way; --help lists the option. Parsing only: nothing here reaches
# the live KSM (live and verify stop at their options).
# usage: option_tables.sh KSMSIM SOURCE-TOP
set -u
bin=${1:?usage: option_tables.sh KSMSIM SOURCE-TOP}
top=${2:?usage: option_tables.sh KSMSIM SOURCE-TOP}
trace=$top/traces/samples/default.ksmt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# refused PROG OPTION ARGS...: ksmsim ARGS fails on OPTION in one line
refused() {
	local prog=$1 opt=$2
	shift 2
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ $rc != 2 ] || [ -s "$tmp/out" ] || [ "$(wc -l <"$tmp/err")" != 1 ] ||
		! grep -q -- "^ksmsim $prog: $opt[ :]" "$tmp/err"; then
		echo "FAIL: ksmsim $*: exit $rc (want 2), stderr: $(cat "$tmp/err"), stdout $(wc -c <"$tmp/out") bytes"
		fail=1
	else
		echo "ok: $prog $opt: $(cat "$tmp/err")"
	fi
}

# helped PROG OPTION ARGS...: ksmsim ARGS --help lists OPTION at a line's start
helped() {
	local prog=$1 opt=$2
	shift 2
	if ! "$bin" "$@" --help | grep -qE -- "^  (-[a-z], )?$opt( |$)"; then
		echo "FAIL: ksmsim $* --help lists no $opt"
		fail=1
	fi
}

refused live --base live --base 4097
refused live --mib live --measure-scan-rate --mib 0
refused live --settle-timeout live --trace x --settle-timeout 0
refused live --mib live --measure-scan-rate --mib 1 --mib 2
helped live --settle-sleep live

refused verify --minutes verify --minutes 0
refused verify --every verify --every 0.01
refused verify --pid verify --pid 1,x
refused verify --setting verify --setting pages_to_scan
refused verify --every verify --every 1 --every 2
helped verify --every verify

refused "collide ksm" --guests collide ksm --guests 1001
refused "collide ksm" --epoch-ms collide ksm --epoch-ms 0
refused "collide ksm" --pages-to-scan collide ksm -- --pages-to-scan x
refused "collide ksm" --seed collide ksm --seed 1 --seed 2
helped "collide ksm" --crafted collide ksm

for cmd in advise tune; do
	refused $cmd --jobs $cmd "$trace" --jobs 0
	refused $cmd --jobs $cmd "$trace" -j 257
	refused $cmd --jobs $cmd "$trace" -j 2 --jobs 3
	refused $cmd --plot $cmd "$trace" --plot a.png --plot b.png
	refused $cmd --max-memory $cmd "$trace" --max-memory 0
	helped $cmd --jobs $cmd
	# the bound --jobs' error states is the one it takes
	max=$("$bin" $cmd "$trace" --jobs 100000 2>&1 | sed -n 's/.*wants 1 to \([0-9]*\) .*/\1/p')
	[ -n "$max" ] && "$bin" $cmd "$trace" --jobs "$max" --help >/dev/null ||
		{ echo "FAIL: $cmd --jobs: no bound said ($max)"; fail=1; }
done
refused advise --policies advise "$trace" --policies default --policies default
refused tune --cpu-budget tune "$trace" --cpu-budget x

refused gen --probe-every gen probe --probe-every 0.0001 -o "$tmp/g.ksmt"
refused gen --pages-to-scan gen probe --pages-to-scan 4294967296 -o "$tmp/g.ksmt"
refused gen --probe-channel gen probe --probe-channel x -o "$tmp/g.ksmt"
refused gen --calibration gen kernel-build --calibration 2071 -o "$tmp/g.ksmt"
helped gen --probe-every gen
[ -e "$tmp/g.ksmt" ] && { echo "FAIL: a refused gen wrote its output"; fail=1; }

# --help ends the parsing where it stands (what follows is not read), as before the tables
for args in "verify --help --minutes 0" "collide ksm --help --guests 0" "advise --help -j 0"; do
	# shellcheck disable=SC2086  # each a command line
	"$bin" $args >/dev/null 2>"$tmp/err" || { echo "FAIL: $args: exit $?: $(cat "$tmp/err")"; fail=1; }
done
[ $fail = 0 ] && echo "ok: every table-parsed command refuses a bad value in one line naming it"
exit $fail
