#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ksmsim trace retime (tests/retime/meson.build).
#
#   retime.sh roundtrip KSMSIM SRCROOT  every bundled trace that reads (samples,
#       conformance cases, goldens, the fuzz corpus's good ones), and ksmsim's
#       binary and gzip forms of each: retimed by 2 and then by 0.5 it is the
#       same file byte for byte (a .gz gzip(1) made: the same text inside, as
#       the header's name and time are not kept); gzipped binary (not a form ksmsim writes) comes
#       back as gzip holding the same binary. Retimed by 0.3, each still reads
#       (the times stay in order).
#   retime.sh golden KSMSIM SRCROOT     the bundled sample by 1.5 and odd.ksmt
#       (comments, tabs, leading zeros, blobs, halves to round) by 0.5 are the
#       files beside this script
#   retime.sh errors KSMSIM SRCROOT     bad factors, an overflowing time, a bad
#       trace: one line, exit 2, no output file
set -u
mode=$1 ksmsim=$2 src=$3
here=$src/tests/retime
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# retime IN by 2 then 0.5; the result must be IN byte for byte
there_and_back() {
	"$ksmsim" trace retime --factor 2 "$1" "$tmp/x2" || { fail "$1: retime 2"; return; }
	"$ksmsim" trace retime --factor 0.5 "$tmp/x2" "$tmp/back" || { fail "$1: retime 0.5"; return; }
	case $1 in
	"$src"/*.gz)
		# made by gzip(1), with a name and time in its header: the same text inside
		gzip -dc "$tmp/back" >"$tmp/back.txt"
		gzip -dc "$1" | cmp -s - "$tmp/back.txt" ||
			fail "$1: retimed by 2 and 0.5 is not the same text" ;;
	*)	cmp -s "$1" "$tmp/back" || fail "$1: retimed by 2 and 0.5 is not the same file" ;;
	esac
	"$ksmsim" trace retime --factor 0.3 "$1" "$tmp/x03" && "$ksmsim" trace stat "$tmp/x03" >/dev/null ||
		fail "$1: retimed by 0.3 does not read"
}

roundtrip() {
	n=0
	for f in "$src"/traces/samples/*.ksmt "$src"/tests/conformance/cases/*.ksmt \
		 "$src"/tests/golden/*.ksmt "$src"/tests/fuzz/corpus/run/*; do
		# the fuzz corpus holds bad traces too: only those that read
		"$ksmsim" trace stat "$f" >/dev/null 2>&1 || continue
		there_and_back "$f"
		"$ksmsim" trace convert "$f" "$tmp/b.ksmb" && there_and_back "$tmp/b.ksmb"
		"$ksmsim" trace convert "$f" "$tmp/t.gz" && there_and_back "$tmp/t.gz"
		n=$((n + 1))
	done
	# gzipped binary: the retimed binary, gzipped again
	"$ksmsim" trace convert "$src/tests/fuzz/corpus/run/v2_blobs.ksmt" "$tmp/v2.ksmb"
	gzip -n -c "$tmp/v2.ksmb" >"$tmp/v2.ksmb.gz"
	"$ksmsim" trace retime --factor 2 "$tmp/v2.ksmb.gz" "$tmp/x2" &&
		"$ksmsim" trace retime --factor 0.5 "$tmp/x2" "$tmp/back" || fail "gzipped binary: retime"
	[ "$(od -An -tx1 -N2 "$tmp/back" | tr -d ' ')" = 1f8b ] || fail "gzipped binary: not gzip out"
	gzip -dc "$tmp/back" | cmp -s - "$tmp/v2.ksmb" || fail "gzipped binary: not the same binary inside"
	[ $n -ge 70 ] || fail "only $n bundled traces read"
	echo "$n traces, each as text, binary and gzip: retimed by 2 and 0.5, the same bytes"
}

golden() {
	"$ksmsim" trace retime --factor 1.5 "$src/traces/samples/default.ksmt" "$tmp/d" &&
		cmp "$tmp/d" "$here/default_x1.5.ksmt" || fail "default.ksmt by 1.5 differs from default_x1.5.ksmt"
	"$ksmsim" trace retime --factor 0.5 "$here/odd.ksmt" "$tmp/o" &&
		cmp "$tmp/o" "$here/odd_x0.5.ksmt" || fail "odd.ksmt by 0.5 differs from odd_x0.5.ksmt"
	# stdout, as any trace tool's OUT '-'
	"$ksmsim" trace retime --factor 0.5 "$here/odd.ksmt" - | cmp -s - "$here/odd_x0.5.ksmt" ||
		fail "retime to standard output differs"
}

# expect_error WANT ARGS...: exit 2, one line on stderr holding WANT, no $tmp/out
expect_error() {
	want=$1
	shift
	rm -f "$tmp/out"
	"$ksmsim" trace retime "$@" 2>"$tmp/err" >/dev/null
	rc=$?
	[ $rc -eq 2 ] || fail "retime $*: exit $rc, want 2"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF -- "$want" "$tmp/err" ||
		fail "retime $*: stderr '$(cat "$tmp/err")', want one line with '$want'"
	[ ! -e "$tmp/out" ] || fail "retime $*: left $tmp/out behind"
}

errors() {
	s=$src/traces/samples/default.ksmt
	for f in 0 -1 -0 nan inf -inf abc 1e309 '' 0x2 ' 2' 2x; do
		expect_error "--factor wants a finite number more than 0 (at least 4.9e-324), not '$f'" \
			--factor "$f" "$s" "$tmp/out"
	done
	# a subnormal factor is a number more than 0 (issue 46); what rounds to 0 is not
	expect_error "--factor wants a finite number more than 0 (at least 4.9e-324), not '1e-400'" \
		--factor 1e-400 "$s" "$tmp/out"
	"$ksmsim" trace retime --factor 1e-308 "$s" "$tmp/tiny.ksmt" 2>"$tmp/err" ||
		fail "retime --factor 1e-308: exit $?, $(cat "$tmp/err")"
	expect_error "default.ksmt:34: time 100000 times 1e+15 is beyond 2^64-1 us" \
		--factor 1e15 "$s" "$tmp/out"
	"$ksmsim" trace convert "$s" "$tmp/s.ksmb"
	expect_error "s.ksmb: record 19: time 100000 times 1e+15 is beyond 2^64-1 us" \
		--factor 1e15 "$tmp/s.ksmb" "$tmp/out"
	gzip -n -c "$s" >"$tmp/s.gz"
	expect_error "s.gz:34: time 100000 times 1e+15 is beyond 2^64-1 us" \
		--factor 1e15 "$tmp/s.gz" "$tmp/out"
	expect_error "bad_time.ksmt:3: time 4 is before the previous record's 5" \
		--factor 2 "$src/tests/fuzz/corpus/text/bad_time.ksmt" "$tmp/out"
	expect_error "retime needs --factor F" "$s" "$tmp/out"
	expect_error "retime takes IN and OUT" --factor 2 "$s"
	expect_error "IN cannot be '-'" --factor 2 - "$tmp/out"
	expect_error "cannot open" --factor 2 "$tmp/missing" "$tmp/out"
	cp "$s" "$tmp/out"
	"$ksmsim" trace retime --factor 2 "$tmp/out" "$tmp/out" 2>"$tmp/err"
	[ $? -eq 2 ] && grep -q "same file as IN" "$tmp/err" && cmp -s "$s" "$tmp/out" ||
		fail "retime IN IN: not refused, or IN changed"
	rm -f "$tmp/out"
	# an existing OUT is left as it was
	echo keep >"$tmp/kept"
	"$ksmsim" trace retime --factor 1e15 "$s" "$tmp/kept" 2>/dev/null
	[ "$(cat "$tmp/kept")" = keep ] || fail "a failed retime changed an existing OUT"
}

case $mode in
roundtrip) roundtrip ;;
golden) golden ;;
errors) errors ;;
*) echo "usage: retime.sh roundtrip|golden|errors KSMSIM SRCROOT" >&2; exit 2 ;;
esac
[ $fails -eq 0 ] || exit 1
echo "ok: $mode"
