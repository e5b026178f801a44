#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ksmsim gen's command line: help on stdout and exit 0; each bad option one
# line on stderr, exit 2, and no output file left behind.
set -u
KSMSIM=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$KSMSIM" gen --help > "$T/h" || fail "gen --help"
grep -q -- '--marks-every-ms' "$T/h" || fail "gen --help lacks options"
"$KSMSIM" gen iozone --help > "$T/h" || fail "gen iozone --help"
grep -q 'iozone' "$T/h" || fail "gen iozone --help"

bad() {	# bad ARGS...: must fail with status 2, one stderr line, no file
	"$KSMSIM" gen "$@" > "$T/out" 2> "$T/err"
	rc=$?
	[ $rc -eq 2 ] || fail "gen $*: exit $rc, not 2"
	[ "$(wc -l < "$T/err")" -eq 1 ] || fail "gen $*: stderr: $(cat "$T/err")"
	[ ! -s "$T/out" ] || fail "gen $*: wrote to stdout"
	ls -A "$T" | grep -q 'x\.ksmt' && fail "gen $*: left a file: $(ls -A "$T")"
	return 0
}
bad nosuch -o "$T/x.ksmt"
bad kernel-build --vms 0 -o "$T/x.ksmt"
bad kernel-build --vms many -o "$T/x.ksmt"
bad kernel-build --scale 0 -o "$T/x.ksmt"
bad kernel-build --scale -1 -o "$T/x.ksmt"
bad kernel-build --scale 1e-9 -o "$T/x.ksmt"
bad kernel-build --seed -3 -o "$T/x.ksmt"
bad kernel-build --mem-mib 0 -o "$T/x.ksmt"
bad kernel-build --duration-s 0 -o "$T/x.ksmt"
bad kernel-build --duration-s 0.0001 --scale 0.001 -o "$T/x.ksmt"
bad kernel-build --use-zero-pages 2 -o "$T/x.ksmt"
bad kernel-build --marks-every-ms 0 -o "$T/x.ksmt"
bad kernel-build --pages-to-scan 4294967296 -o "$T/x.ksmt"
bad kernel-build --bogus -o "$T/x.ksmt"
bad kernel-build --scale 0.001
bad kernel-build iozone --scale 0.001 -o "$T/x.ksmt"
bad kernel-build --scale 0.001 -o "$T/nodir/x.ksmt"
bad checksum-adversarial --hash bogus -o "$T/x.ksmt"
bad checksum-adversarial --hash none -o "$T/x.ksmt"
bad checksum-adversarial --hash -o "$T/x.ksmt"
bad checksum-adversarial --hash xxh64 -o "$T/x.ksmt"
bad checksum-adversarial --hash sha256 -o "$T/x.ksmt"
bad checksum-adversarial --vms 4096 -o "$T/x.ksmt"
bad kernel-build --hash jhash2 --scale 0.001 -o "$T/x.ksmt"
# and a good one works, options in any order
"$KSMSIM" gen -o "$T/x.ksmt" --scale 0.001 zero-heavy || fail "options before the workload"
[ -s "$T/x.ksmt" ] || fail "no trace written"
echo ok
