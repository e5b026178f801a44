#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The memory estimate counts what a run will hold, so a small trace cannot
# make the model grow past --max-memory:
#   - one store into a 2 MiB block advised hugepage faults in a THP of 512
#     pages: a trace writing one page in every block is refused, from a file
#     before anything runs and from a pipe at the record that crossed;
#   - without the hugepage advice the same trace fits;
#   - blobs (4 KiB each, kept by the reader, maybe again by the model) count,
#     and a stream of blob lines with no record between is stopped too; the
#     trace tools (stat, cat, convert, convert --content digest, merge) hold
#     them to the same limit with the same line.
# usage: memory_bound.sh KSMSIM
set -u
bin=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
cd "$tmp" || exit 1
run() { timeout 120 "$bin" run --quiet --trace-label T --no-ideal "$@"; }

# 65,536 stores, one in each 2 MiB block of 128 GiB advised hugepage:
# 32 Mi pages of THPs (about 7 GiB of model), from a 1.5 MB trace.
thp_trace() {	# ADVICE
	printf 'ksmtrace 3\n0 spawn a\n0 map a 0 0x2000000\n0 advise a 0 0x2000000 %s\n' "$1"
	awk 'BEGIN { for (i = 0; i < 65536; i++) printf "0 write a 0x%x byte:01\n", i * 512 }'
	printf '0 mark end\n'
}
thp_trace hugepage >thp.ksmt
thp_trace nohugepage >small.ksmt
run --trace thp.ksmt --max-memory 64M --marks-csv m.csv 2>err; rc=$?
[ $rc -eq 2 ] || bad "THP from a file: exit $rc"
grep -q '^ksmsim run: thp.ksmt:[0-9]*: the model would need about .* written pages, 1 live mms), more than 64.0 MiB (--max-memory)$' err ||
	bad "THP from a file: $(cat err)"
[ ! -e m.csv ] || bad "THP from a file: an output was left"
line=$(sed -n 's/^ksmsim run: thp.ksmt:\([0-9]*\):.*/\1/p' err)
# 64 MiB hold a few hundred THPs: the refusal comes long before the end
[ -n "$line" ] && [ "$line" -lt 2000 ] || bad "THP from a file: refused at line '$line'"
run --trace - --max-memory 64M --marks-csv m.csv <thp.ksmt 2>err; rc=$?
[ $rc -eq 2 ] || bad "THP from a pipe: exit $rc"
grep -q "^ksmsim run: -:$line: .*more than 64.0 MiB (--max-memory)\$" err || bad "THP from a pipe: $(cat err)"
run --trace small.ksmt --max-memory 64M || bad "65,536 small pages did not fit in 64 MiB"

# Blobs: every one is 4 KiB in the reader and may be 4 KiB more in the
# model. 4,096 distinct blobs (a 38 KB gzip) cannot fit in 32 MiB, from a
# file or a stream; used by no record, they are refused all the same.
blobs() {	# N
	printf 'ksmtrace 2\n0 spawn a\n0 map a 0 16\n'
	awk -v n="$1" 'BEGIN { z = sprintf("%8184s", ""); gsub(/ /, "0", z)
		for (i = 0; i < n; i++) printf "blob %d %08x%s\n", i, i, z }'
	printf '0 mark end\n'
}
blobs 4096 | gzip -1 >blobs.ksmt.gz
run --trace blobs.ksmt.gz --max-memory 32M --marks-csv m.csv 2>err; rc=$?
[ $rc -eq 2 ] || bad "blobs from a file: exit $rc"
grep -q '^ksmsim run: blobs.ksmt.gz:[0-9]*: blob [0-9]*: with it the blobs alone would need more than 32.0 MiB (--max-memory)$' err ||
	bad "blobs from a file: $(cat err)"
[ ! -e m.csv ] || bad "blobs from a file: an output was left"
# a never-ending stream of blob lines is refused at the limit, not read on
{ blobs 1000000000 2>/dev/null; } | run --trace - --max-memory 32M 2>err; rc=$?
[ $rc -eq 2 ] || bad "a stream of blobs: exit $rc"
grep -q '^ksmsim run: -:[0-9]*: blob [0-9]*: with it the blobs alone would need more than 32.0 MiB (--max-memory)$' err ||
	bad "a stream of blobs: $(cat err)"
blobs 64 >few.ksmt
run --trace few.ksmt --max-memory 32M || bad "64 blobs did not fit in 32 MiB"

# The trace tools hold blobs the same way and stop at the same limit, the
# digest conversion (which reads the blobs' pages to digest them) too.
for sub in stat cat convert digest; do
	case $sub in
	convert) args=(convert blobs.ksmt.gz out.ksmb) ;;
	digest) args=(convert --content digest blobs.ksmt.gz out.ksmb) ;;
	*) args=("$sub" blobs.ksmt.gz) ;;
	esac
	rm -f out.ksmb
	timeout 60 "$bin" trace "${args[0]}" --max-memory 16M "${args[@]:1}" >out.txt 2>err; rc=$?
	[ $rc -eq 2 ] || bad "trace $sub of blobs: exit $rc"
	grep -q '^ksmsim trace: blobs.ksmt.gz:[0-9]*: blob [0-9]*: with it the blobs alone would need more than 16.0 MiB (--max-memory)$' err ||
		bad "trace $sub of blobs: $(cat err)"
	[ "$(wc -l <err)" -eq 1 ] || bad "trace $sub of blobs: not one line: $(cat err)"
	[ ! -e out.ksmb ] || bad "trace $sub of blobs left its output"
done
for sub in stat digest; do
	case $sub in
	digest) args=(convert --content digest - out.ksmb) ;;
	*) args=("$sub" -) ;;
	esac
	rm -f out.ksmb
	{ blobs 1000000000 2>/dev/null; } |
		timeout 60 "$bin" trace "${args[0]}" --max-memory 16M "${args[@]:1}" >/dev/null 2>err
	rc=$?
	[ $rc -eq 2 ] || bad "trace $sub of a stream of blobs: exit $rc"
	grep -q '^ksmsim trace: -:[0-9]*: blob [0-9]*: with it the blobs alone' err ||
		bad "trace $sub of a stream of blobs: $(cat err)"
	[ ! -e out.ksmb ] || bad "trace $sub of a stream of blobs left its output"
done
"$bin" trace merge --max-memory 16M blobs.ksmt.gz few.ksmt merged.ksmt 2>err; rc=$?
[ $rc -eq 2 ] && [ ! -e merged.ksmt ] || bad "trace merge of blobs: exit $rc"
"$bin" trace convert --max-memory 32M few.ksmt few.ksmb || bad "64 blobs did not convert in 32 MiB"
"$bin" trace convert --content digest --max-memory 32M few.ksmt few-digest.ksmb ||
	bad "64 blobs did not convert to digests in 32 MiB"
# the pages the digest converter follows: 4 Mi pages (256 MiB at 64 bytes)
# are refused in 64 MiB at the store that crosses it, 256 Ki pages fit, and
# a fork that would double what its parent holds is refused at the fork
printf 'ksmtrace 3\n0 spawn a\n0 map a 0x1000 4194304\n0 fillseq a 0x1000 4194304 7\n' >big.ksmt
rm -f out.ksmb
"$bin" trace convert --content digest --max-memory 64M big.ksmt out.ksmb 2>err; rc=$?
[ $rc -eq 2 ] && [ ! -e out.ksmb ] && [ "$(wc -l <err)" -eq 1 ] &&
	grep -q '^ksmsim trace: big.ksmt:4: converting to digests would hold more than 64.0 MiB here (1048577 pages followed, 64 bytes each) (--max-memory)$' err ||
	bad "digest of 4 Mi pages in 64 MiB: exit $rc, $(cat err)"
printf 'ksmtrace 3\n0 spawn a\n0 map a 0x1000 600000\n0 fillseq a 0x1000 600000 7\n1 fork a b\n' >fork.ksmt
"$bin" trace convert --content digest --max-memory 64M fork.ksmt out.ksmb 2>err; rc=$?
[ $rc -eq 2 ] && grep -q '^ksmsim trace: fork.ksmt:5: converting to digests would hold more than 64.0 MiB here (1200000 pages' err ||
	bad "digest of a fork past 64 MiB: exit $rc, $(cat err)"
printf 'ksmtrace 3\n0 spawn a\n0 map a 0x1000 262144\n0 fillseq a 0x1000 262144 7\n' >fits.ksmt
"$bin" trace convert --content digest --max-memory 64M fits.ksmt out.ksmb 2>err ||
	bad "digest of 256 Ki pages did not fit 64 MiB: $(cat err)"
"$bin" trace stat --max-memory x few.ksmt 2>err; rc=$?
[ $rc -eq 2 ] && grep -qx "ksmsim trace: --max-memory wants a size in bytes (K, M, G, T suffixes), not 'x'" err ||
	bad "trace --max-memory x: exit $rc, $(cat err)"

[ $fails -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
[ $fails -eq 0 ]
