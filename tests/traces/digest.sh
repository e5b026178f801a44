#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Version 4 digest content (traces/FORMAT.md, "Version 4: digests"): text,
# binary and gzip convert into each other losslessly; malformed digests are
# refused with FILE:LINE (text) or an offset (binary); the digest form of
# the bundled sample (trace convert --content digest) gives the counters of
# its bytes form; a run says false positives cannot be studied on it,
# collide ksm refuses it and advise warns.
set -u
bin=$1
sample=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

cat > "$tmp/a.ksmt" <<'T'
ksmtrace 4
0 spawn a
0 spawn b
0 map a 0x10 4
0 map b 0x10 4
0 advise a 0x10 4 mergeable
0 advise b 0x10 4 mergeable
0 fill a 0x10 3 digest:00112233445566778899aabbccddeeff
0 write a 0x13 zero
0 write b 0x10 digest:00112233445566778899aabbccddeeff
0 write b 0x11 digest:ffeeddccbbaa99887766554433221100
0 set run 1
100000 settle 3
100000 mark end
T

# lossless both ways, through every form
"$bin" trace convert "$tmp/a.ksmt" "$tmp/a.ksmb" || bad "text -> binary"
"$bin" trace convert "$tmp/a.ksmb" "$tmp/a.ksmt.gz" || bad "binary -> gzip"
"$bin" trace convert "$tmp/a.ksmt.gz" "$tmp/b.ksmt" || bad "gzip -> text"
cmp -s "$tmp/a.ksmt" "$tmp/b.ksmt" || bad "text -> binary -> gzip -> text changed the trace"
"$bin" trace convert "$tmp/b.ksmt" "$tmp/b.ksmb" || bad "text -> binary (again)"
cmp -s "$tmp/a.ksmb" "$tmp/b.ksmb" || bad "the binary form is not the same bytes twice"
[ "$(od -An -tx1 -j8 -N1 "$tmp/a.ksmb" | tr -d ' ')" = 04 ] || bad "binary version byte is not 04"
"$bin" trace stat "$tmp/a.ksmb" | grep -qE '^digest +3 +5$' || bad "stat does not count 3 digest records, 5 pages"

# the model: equal digests merge (3 + 1 pages of one digest: 1 shared, 3 sharing)
"$bin" run --trace "$tmp/a.ksmb" > "$tmp/run" || bad "run of a digest trace failed"
grep -qE '^  pages_shared +1 ' "$tmp/run" || bad "pages_shared: $(grep pages_shared "$tmp/run")"
grep -qE '^  pages_sharing +3 ' "$tmp/run" || bad "pages_sharing: $(grep pages_sharing "$tmp/run")"
grep -q 'false positives cannot be studied on this trace' "$tmp/run" ||
	bad "the run's summary does not say false positives cannot be studied"
"$bin" run --trace "$sample" > "$tmp/run1" || bad "run of the sample"
grep -q 'digest content' "$tmp/run1" && bad "a bytes trace's summary speaks of digests"

# malformed digests: one line, FILE:LINE, exit 2
printf 'ksmtrace 4\n0 spawn a\n0 map a 0x10 1\n' > "$tmp/head"
refused() {	# NAME CONTENT-LINE EXPECTED-MESSAGE
	{ cat "$tmp/head"; printf '%s\n' "$2"; } > "$tmp/$1.ksmt"
	[ "$3" = v3 ] && sed -i 's/^ksmtrace 4$/ksmtrace 3/' "$tmp/$1.ksmt"
	"$bin" trace convert "$tmp/$1.ksmt" "$tmp/$1.out.ksmb" 2> "$tmp/err"
	local rc=$?
	[ $rc = 2 ] || bad "$1: exit $rc, not 2"
	[ "$(wc -l < "$tmp/err")" = 1 ] || bad "$1: not one line: $(cat "$tmp/err")"
	grep -qF "$tmp/$1.ksmt:4: $4" "$tmp/err" || bad "$1: $(cat "$tmp/err")"
	[ -e "$tmp/$1.out.ksmb" ] && bad "$1: a partial output was left"
}
refused short '0 write a 0x10 digest:0011' v4 'digest has 4 hex digits (32 expected: 128 bits)'
refused long '0 write a 0x10 digest:00112233445566778899aabbccddeeff00' v4 'digest has 34 hex digits'
refused empty '0 write a 0x10 digest:' v4 'digest has 0 hex digits'
refused hex '0 write a 0x10 digest:00112233445566778899aabbccddeegg' v4 "bad hex in 'digest:"
refused parts '0 write a 0x10 digest:00:11' v4 "bad content 'digest:00:11'"
refused v3 '0 write a 0x10 digest:00112233445566778899aabbccddeeff' v3 \
	"digest content needs header 'ksmtrace 4' (this file is version 3)"

# binary: a digest in a version 3 file is an unknown form; one cut short is truncated
python3 - "$tmp" <<'P' || bad "could not build the broken binaries"
import sys, zlib
t = sys.argv[1]
d = open(t + '/a.ksmb', 'rb').read()
body = zlib.decompress(d[9:])
open(t + '/v3.ksmb', 'wb').write(d[:8] + b'\x03' + zlib.compress(body))
i = body.index(bytes([0x76]))	# fill (6) with form 7 (digest)
open(t + '/cut.ksmb', 'wb').write(d[:9] + zlib.compress(body[:i + 12]))
P
"$bin" trace cat "$tmp/v3.ksmb" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 2 ] && grep -qE "v3.ksmb: offset [0-9]+: unknown content form$" "$tmp/err" ||
	bad "v3 binary with a digest: exit $rc: $(cat "$tmp/err")"
"$bin" trace cat "$tmp/cut.ksmb" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 2 ] && grep -qE "cut.ksmb: offset [0-9]+: truncated record$" "$tmp/err" ||
	bad "a cut digest: exit $rc: $(cat "$tmp/err")"

# the sample as digests: every kernel counter at every mark as its bytes form
"$bin" trace convert --content digest "$sample" "$tmp/s.ksmt" || bad "convert --content digest"
head -1 "$tmp/s.ksmt" | grep -qx 'ksmtrace 4' || bad "digest output is not version 4"
grep -qE ' (word|patch|bytes|rand|byte):| fillseq ' "$tmp/s.ksmt" && bad "a non-digest content survived"
grep -q ' digest:' "$tmp/s.ksmt" || bad "no digest in the converted sample"
"$bin" trace convert --content digest "$sample" "$tmp/s.ksmb" || bad "convert --content digest to binary"
"$bin" trace cat "$tmp/s.ksmb" | cmp -s - "$tmp/s.ksmt" || bad "binary digest form differs from text"
"$bin" run --trace "$sample" --marks-csv "$tmp/m1.csv" > /dev/null || bad "run of the sample"
"$bin" run --trace "$tmp/s.ksmb" --marks-csv "$tmp/m2.csv" > /dev/null || bad "run of its digest form"
"$bin" diff "$tmp/m1.csv" "$tmp/m2.csv" > "$tmp/diff" || bad "digest form's counters differ: $(cat "$tmp/diff")"
grep -q '^no differences' "$tmp/diff" || bad "diff: $(cat "$tmp/diff")"
"$bin" trace convert --content sha "$sample" "$tmp/x.ksmt" 2> "$tmp/err" && bad "--content sha accepted"
grep -qx "ksmsim trace: --content wants bytes or digest, not 'sha'" "$tmp/err" ||
	bad "--content sha: $(cat "$tmp/err")"

# checksum studies: collide ksm refuses, advise warns
"$bin" collide ksm --trace "$tmp/s.ksmb" --hashes xxhash > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc = 2 ] || bad "collide ksm on digests: exit $rc"
[ "$(wc -l < "$tmp/err")" = 1 ] && grep -q 'checksum false positives cannot be studied' "$tmp/err" ||
	bad "collide ksm on digests: $(cat "$tmp/err")"
[ -s "$tmp/out" ] && bad "collide ksm printed a table for a digest trace"
"$bin" advise "$tmp/s.ksmb" --hashes xxhash --policies kernel > "$tmp/out" 2> /dev/null ||
	bad "advise on digests failed"
grep -q '^Warning: TRACE holds digest content' "$tmp/out" || bad "advise did not warn"
exit $fail
