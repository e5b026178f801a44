#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An error is one line, always: a newline, a terminal escape, a raw 0x9b or
# invalid UTF-8 in a file name, an option value or a trace token reaches
# standard error escaped (\n, \x1b, \x9b), never raw.
# usage: one_line.sh KSMSIM SOURCE-TOP
set -u
bin=$(realpath "$1") top=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
cd "$tmp" || exit 1
trace=$top/traces/samples/default.ksmt
nl=$'a\nb' esc=$'\e[31mred'
printf 'ksmtrace 1\n0 spawn %s\n' "$esc" >"esc.ksmt"
cp "$trace" "$nl.ksmt"
check() {	# WHAT, then the command
	local what=$1
	shift
	n=$((n + 1))
	"$@" >/dev/null 2>err
	local rc=$?
	# every byte of the line printable ASCII here: no test name has UTF-8 in it
	if [ $rc -eq 0 ] || [ "$(wc -l <err)" -ne 1 ] || LC_ALL=C grep -q '[^ -~]' err; then
		bad "$what: exit $rc, $(wc -l <err) lines: $(od -c err | head -5)"
	fi
}
check "a missing trace named with a newline" "$bin" run --trace "missing$nl.ksmt"
check "a trace named with an escape, missing" "$bin" run --trace "$esc.ksmt"
check "an escape in a trace token" "$bin" run --trace esc.ksmt
check "an output clash, names with a newline" "$bin" run --trace "$nl.ksmt" --marks-csv "$nl.ksmt"
check "an option value with a newline" "$bin" run --trace "$trace" --pages-to-scan "1$nl"
check "an unknown option with an escape" "$bin" run "--$esc"
check "a checksum name with a newline" "$bin" run --trace "$trace" --hash "x$nl"
check "a policy with an escape" "$bin" run --trace "$trace" --policy "$esc"
check "trace stat of a name with an escape" "$bin" trace stat "$esc"
check "diff of files with a newline" "$bin" diff "$nl" "$nl"
check "gen with a bad seed" "$bin" gen kernel-build --seed "1$nl" -o x.ksmt
# the architecture review's two-line cases (cli_fuzz.py fuzzes every command)
check "an unknown command with a newline" "$bin" $'foo\nbar'
check "run's unexpected argument" "$bin" run --trace "$trace" $'x\ny'
check "live's settle timeout (refused before KSM)" "$bin" live --settle-timeout $'x\ny'
check "hashes given junk" "$bin" hashes $'a\nb'
check "collide given junk" "$bin" collide $'a\nb'
check "diff's unknown option" "$bin" diff $'--x\ny' a b
check "a raw 0x9b in a file name" "$bin" trace stat $'csi\x9b31m'
check "invalid UTF-8 in a value" "$bin" gen kernel-build --calibration $'\xff\xfe' -o x.ksmt
echo "$((n - fails)) passed, $fails failed"
[ $fails -eq 0 ]
