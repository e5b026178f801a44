#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 46's reproducers, each one line on stderr and exit 2 (or a success),
# no NAME.tmp.* left, never a hang (everything under timeout):
#   digest   trace convert --content digest of a 2^28-page fill is refused at
#            once (it crashed inside GLib at 4.2 GB), under a 2 GB ulimit -v;
#            a version-4 trace converted again keeps its digests as they are
#   plot     advise/tune --plot onto /dev/full and past a 16 KiB ulimit -f
#            fail (they committed a truncated PNG and exited 0)
#   fifo     trace retime on a FIFO is refused (it hung for ever)
#   samples  a 49-day sleep_millisecs with samples is refused by the
#            samples bound (run, tune) instead of running for ever
#   probe    gen probe --probe-at past the end is refused
#   budget   tune's CSV holds --cpu-budget exactly
# usage: edges.sh MODE KSMSIM SRCROOT
set -u
mode=$1 bin=$(realpath "$2") src=$(realpath "$3")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
cd "$tmp" || exit 1
sample=$src/traces/samples/default.ksmt

# one_line WHAT WANT_RC RC ERRFILE PATTERN: exit, one line matching, no temporaries
one_line() {
	local what=$1 want=$2 rc=$3 err=$4 pat=$5
	[ "$rc" -eq "$want" ] || bad "$what: exit $rc, wanted $want: $(head -c 300 "$err")"
	[ "$(wc -l <"$err")" -eq 1 ] || bad "$what: wanted one line on stderr, got: $(cat "$err")"
	grep -q -e "$pat" "$err" || bad "$what: unexpected message: $(cat "$err")"
	left=$(find . -name '*.tmp.*')
	[ -z "$left" ] || bad "$what: left $left"
}

case $mode in
digest)
	# ASan reserves terabytes of shadow at start: no ulimit -v under it
	vlimit=2000000
	[ -z "${KSMSIM_CI_SANITIZED:-}" ] || vlimit=unlimited
	printf 'ksmtrace 1\n0 spawn a\n0 map a 0 268435456\n0 fill a 0 268435456 rand:1\n' >big.ksmt
	# --max-memory 20G (the issue's): past the memory check, the converter's own bound
	(ulimit -v "$vlimit"; timeout 60 "$bin" trace convert --content digest --max-memory 20G \
		big.ksmt out.ksmt) 2>err; rc=$?
	one_line "convert --content digest --max-memory 20G of 2^28 pages" 2 $rc err \
		"^ksmsim trace: big.ksmt:4: converting to digests would follow more than 134217728 pages of one mm here"
	[ ! -e out.ksmt ] || bad "convert of 2^28 pages left out.ksmt"
	# the default limit is the machine's MemAvailable: below the 16 GiB the
	# pages would take (a busy machine) that refuses first, else the bound
	(ulimit -v "$vlimit"; timeout 60 "$bin" trace convert --content digest big.ksmt out.ksmt) \
		2>err; rc=$?
	one_line "convert --content digest of 2^28 pages" 2 $rc err \
		"^ksmsim trace: big.ksmt:4: converting to digests would \(follow more than 134217728 pages of one mm here\|hold more than .* (the machine's MemAvailable; --max-memory sets the limit)$\)"
	[ ! -e out.ksmt ] || bad "convert of 2^28 pages left out.ksmt"
	# a lower --max-memory refuses the same at the same line, at once
	timeout 60 "$bin" trace convert --content digest --max-memory 1M big.ksmt out.ksmt 2>err; rc=$?
	one_line "convert --max-memory 1M" 2 $rc err "^ksmsim trace: big.ksmt:4: .*(--max-memory)$"
	# digests are copied as they are, not hashed from the stand-in bytes
	cat >v4.ksmt <<'T'
ksmtrace 4
0 spawn a
0 map a 0x10 8
0 fill a 0x10 3 digest:00112233445566778899aabbccddeeff
0 write a 0x13 digest:ffeeddccbbaa99887766554433221100
1 write a 0x14 byte:07
T
	timeout 60 "$bin" trace convert --content digest v4.ksmt again.ksmt 2>err ||
		bad "convert of a version-4 trace: $(cat err)"
	grep -o 'digest:[0-9a-f]*' v4.ksmt >want
	grep -o 'digest:[0-9a-f]*' again.ksmt | head -2 >got
	cmp -s want got || bad "digests changed by a second convert: $(tr '\n' ' ' <got)"
	# and converting twice is converting once
	"$bin" trace convert --content digest "$sample" once.ksmt &&
		"$bin" trace convert --content digest once.ksmt twice.ksmt &&
		cmp -s once.ksmt twice.ksmt || bad "the sample's digest form changes when converted again"
	;;
plot)
	command -v gnuplot >/dev/null || { echo "no gnuplot: skipped"; exit 77; }
	"$bin" gen vm-clones --scale 0.002 --seed 3 -o t.ksmt 2>/dev/null || bad "gen"
	for cmd in advise tune; do
		timeout 300 "$bin" $cmd --quiet t.ksmt --plot /dev/full >/dev/null 2>err; rc=$?
		one_line "$cmd --plot /dev/full" 2 $rc err "^ksmsim $cmd: .*--plot.*/dev/full\|^ksmsim $cmd: --plot: "
		# a file system that is full after 16 KiB (ulimit -f counts 1 KiB blocks)
		(ulimit -f 16; trap '' XFSZ; timeout 300 "$bin" $cmd --quiet t.ksmt --plot p.png >/dev/null) \
			2>err; rc=$?
		one_line "$cmd --plot past ulimit -f 16" 2 $rc err "^ksmsim $cmd: .*--plot"
		[ ! -e p.png ] || bad "$cmd: a truncated p.png was committed"
		timeout 300 "$bin" $cmd --quiet t.ksmt --plot p.png >/dev/null 2>err || bad "$cmd --plot: $(cat err)"
		tail -c 12 p.png | od -An -c | grep -q 'I   E   N   D' || bad "$cmd: p.png has no IEND"
		rm -f p.png
	done
	;;
fifo)
	mkfifo in.fifo
	timeout 10 "$bin" trace retime --factor 2 in.fifo out.ksmt 2>err; rc=$?
	one_line "retime on a FIFO" 2 $rc err "^ksmsim trace: in.fifo: "
	[ ! -e out.ksmt ] || bad "retime on a FIFO left out.ksmt"
	# standard input from a pipe, by its /dev/stdin name: refused too
	cat "$sample" | timeout 10 "$bin" trace retime --factor 2 /dev/stdin out.ksmt 2>err; rc=$?
	one_line "retime on a pipe" 2 $rc err "^ksmsim trace: /dev/stdin: not a regular file"
	timeout 10 "$bin" trace retime --factor 2 "$sample" out.ksmt 2>err || bad "retime of a file: $(cat err)"
	;;
samples)
	timeout 120 "$bin" run --quiet --no-ideal --trace "$sample" --sleep-millisecs 4294967295 \
		--summary-csv f.csv >/dev/null 2>err; rc=$?
	one_line "run --sleep-millisecs 4294967295 --summary-csv" 2 $rc err \
		"more than 1048576 samples at one each"
	[ ! -e f.csv ] || bad "f.csv written"
	timeout 300 "$bin" tune "$sample" --setting sleep_millisecs=4294967295 -o t.csv \
		>/dev/null 2>err; rc=$?
	one_line "tune --setting sleep_millisecs=4294967295" 2 $rc err "more than 1048576 samples at one each"
	[ ! -e t.csv ] || bad "t.csv written"
	# without samples the same run ends, and an ordinary one is untouched
	timeout 60 "$bin" run --quiet --trace "$sample" --sleep-millisecs 4294967295 >/dev/null 2>err ||
		bad "run without samples: $(cat err)"
	;;
probe)
	timeout 60 "$bin" gen probe --scale 0.01 --probe-at 1e9 -o p.ksmt 2>err; rc=$?
	one_line "gen probe --probe-at past the end" 2 $rc err "^ksmsim gen probe: --probe-at 1e+09: at or past the trace's end"
	[ ! -e p.ksmt ] || bad "p.ksmt written"
	# at the end exactly (--scale 0.01: 6 s) is past it too; just inside writes the probe
	timeout 60 "$bin" gen probe --scale 0.01 --probe-at 6 -o p.ksmt 2>err; rc=$?
	one_line "gen probe --probe-at at the end" 2 $rc err "^ksmsim gen probe: --probe-at 6: at or past"
	timeout 60 "$bin" gen probe --scale 0.01 --probe-at 5.9 -o p.ksmt 2>err || bad "--probe-at 5.9: $(cat err)"
	"$bin" trace cat p.ksmt | grep -q '^5900000 fillseq attacker ' || bad "--probe-at 5.9: no probe at 5.9 s"
	;;
budget)
	# tune's CSV holds the budget given, not rounded to 3 decimals (0.0001 was 0.000)
	for b in 0.0001 5 12.3456; do
		timeout 120 "$bin" tune --quiet "$sample" --setting pages_to_scan=100 --cpu-budget $b \
			-o b.csv >/dev/null 2>err || bad "tune --cpu-budget $b: $(cat err)"
		python3 - "$b" <<'PY' || bad "tune --cpu-budget $b: the CSV's budget is not $b"
import csv, sys
rows = list(csv.DictReader(open("b.csv")))
sys.exit(not rows or any(float(r["cpu_budget_pct"]) != float(sys.argv[1]) for r in rows))
PY
	done
	;;
*)
	echo "unknown mode $mode" >&2
	exit 2
	;;
esac
[ $fails -eq 0 ] && echo "ok   edges $mode"
[ $fails -eq 0 ]
