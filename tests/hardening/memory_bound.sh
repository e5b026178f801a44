#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The memory estimate counts what a run will hold, so a small trace cannot
# make the model grow past --max-memory:
#   - one store into a 2 MiB block advised hugepage faults in a THP of 512
#     pages: a trace writing one page in every block is refused, from a file
#     before anything runs and from a pipe at the record that crossed;
#   - without the hugepage advice the same trace fits;
#   - blobs (4 KiB each, kept by the reader, maybe again by the model) go
#     to disk past a quarter of the limit and give the same run there, and
#     a stream of blob lines with no record between is stopped at
#     --max-disk; the trace tools (stat, cat, convert, convert --content
#     digest, merge) hold them the same way with the same line.
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

# Blobs: every one is 4 KiB in the reader, for the whole read. A quarter of
# --max-memory holds them, the rest go to an unlinked file in $TMPDIR up to
# --max-disk. 4,096 distinct blobs (a 38 KB gzip) are 16 MiB: under 32 MiB
# most are on disk, and the run is the one with every blob in memory (the
# records name blobs from memory, from the file and from the part not
# written yet).
blobs() {	# N [MM]
	printf 'ksmtrace 2\n0 spawn %s\n0 map %s 0 16\n' "${2:-a}" "${2:-a}"
	awk -v n="$1" -v mm="${2:-a}" 'BEGIN { z = sprintf("%8184s", ""); gsub(/ /, "0", z)
		for (i = 0; i < n; i++) printf "blob %d %08x%s\n", i, i, z
		q = int(n * 3 / 4)
		printf "1 write %s 0 blob:5\n1 write %s 1 blob:%d\n", mm, mm, q
		printf "1 write %s 2 blob:%d\n2 write %s 3 blob:%d\n", mm, n - 1, mm, q }'
	printf '3 mark end\n'
}
blobs 4096 | gzip -1 >blobs.ksmt.gz
mkdir spill
run --trace blobs.ksmt.gz --summary-csv all.csv || bad "blobs in memory: exit $?"
TMPDIR=$tmp/spill run --trace blobs.ksmt.gz --max-memory 32M --summary-csv spilled.csv 2>err ||
	bad "blobs past 32 MiB on disk: $(cat err)"
cmp -s all.csv spilled.csv || bad "blobs on disk gave another run than blobs in memory"
[ -z "$(ls -A spill)" ] || bad "the blob file was left in TMPDIR: $(ls spill)"
# past --max-disk they are refused, from a file or a never-ending stream
run --trace blobs.ksmt.gz --max-memory 32M --max-disk 4M --marks-csv m.csv 2>err; rc=$?
[ $rc -eq 2 ] || bad "blobs past --max-disk: exit $rc"
grep -q '^ksmsim run: blobs.ksmt.gz:[0-9]*: blob [0-9]*: with it the blobs kept on disk would need more than 4.0 MiB (--max-disk)$' err ||
	bad "blobs past --max-disk: $(cat err)"
[ ! -e m.csv ] || bad "blobs past --max-disk: an output was left"
{ blobs 1000000000 2>/dev/null; } | run --trace - --max-memory 32M --max-disk 8M 2>err; rc=$?
[ $rc -eq 2 ] || bad "a stream of blobs: exit $rc"
grep -q '^ksmsim run: -:[0-9]*: blob [0-9]*: with it the blobs kept on disk would need more than 8.0 MiB (--max-disk)$' err ||
	bad "a stream of blobs: $(cat err)"
# a folder the file cannot be made in is named
TMPDIR=$tmp/none run --trace blobs.ksmt.gz --max-memory 32M --marks-csv m.csv 2>err; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <err)" -eq 1 ] &&
	grep -q "^ksmsim run: blobs.ksmt.gz:[0-9]*: blob [0-9]*: cannot keep the blobs beyond the memory limit in $tmp/none: No such file or directory\$" err ||
	bad "no TMPDIR: exit $rc, $(cat err)"
[ ! -e m.csv ] || bad "no TMPDIR: an output was left"
run --trace blobs.ksmt.gz --max-disk 0 2>err; rc=$?
[ $rc -eq 2 ] && grep -q -- "--max-disk" err || bad "--max-disk 0: exit $rc, $(cat err)"
blobs 64 b >few.ksmt
run --trace few.ksmt --max-memory 32M || bad "64 blobs did not fit in 32 MiB"

# The trace tools hold blobs the same way, the digest conversion (which
# reads the blobs' pages to digest them) too: under 16 MiB, with most
# blobs on disk, they give what they give with all in memory, and past
# --max-disk they stop with the same line.
for sub in stat cat convert digest; do
	case $sub in
	convert) args=(convert blobs.ksmt.gz out.ksmb) ;;
	digest) args=(convert --content digest blobs.ksmt.gz out.ksmb) ;;
	*) args=("$sub" blobs.ksmt.gz) ;;
	esac
	rm -f out.ksmb
	timeout 60 "$bin" trace "${args[@]}" >all.txt 2>err || bad "trace $sub of blobs: $(cat err)"
	[ -e out.ksmb ] && mv out.ksmb all.ksmb
	timeout 60 "$bin" trace "${args[0]}" --max-memory 16M "${args[@]:1}" >out.txt 2>err ||
		bad "trace $sub of blobs past 16 MiB: $(cat err)"
	cmp -s all.txt out.txt || bad "trace $sub of blobs past 16 MiB: another output"
	[ ! -e all.ksmb ] || cmp -s all.ksmb out.ksmb || bad "trace $sub of blobs past 16 MiB: another file"
	rm -f out.ksmb all.ksmb
	timeout 60 "$bin" trace "${args[0]}" --max-memory 16M --max-disk 4M "${args[@]:1}" >out.txt 2>err; rc=$?
	[ $rc -eq 2 ] || bad "trace $sub of blobs past --max-disk: exit $rc"
	grep -q '^ksmsim trace: blobs.ksmt.gz:[0-9]*: blob [0-9]*: with it the blobs kept on disk would need more than 4.0 MiB (--max-disk)$' err ||
		bad "trace $sub of blobs past --max-disk: $(cat err)"
	[ "$(wc -l <err)" -eq 1 ] || bad "trace $sub of blobs past --max-disk: not one line: $(cat err)"
	[ ! -e out.ksmb ] || bad "trace $sub of blobs past --max-disk left its output"
done
for sub in stat digest; do
	case $sub in
	digest) args=(convert --content digest - out.ksmb) ;;
	*) args=("$sub" -) ;;
	esac
	rm -f out.ksmb
	{ blobs 1000000000 2>/dev/null; } |
		timeout 60 "$bin" trace "${args[0]}" --max-memory 16M --max-disk 8M "${args[@]:1}" >/dev/null 2>err
	rc=$?
	[ $rc -eq 2 ] || bad "trace $sub of a stream of blobs: exit $rc"
	grep -q '^ksmsim trace: -:[0-9]*: blob [0-9]*: with it the blobs kept on disk' err ||
		bad "trace $sub of a stream of blobs: $(cat err)"
	[ ! -e out.ksmb ] || bad "trace $sub of a stream of blobs left its output"
done
"$bin" trace merge --max-memory 16M blobs.ksmt.gz few.ksmt merged.ksmt 2>err ||
	bad "trace merge of blobs past 16 MiB: $(cat err)"
"$bin" trace merge blobs.ksmt.gz few.ksmt merged-all.ksmt && cmp -s merged.ksmt merged-all.ksmt ||
	bad "trace merge of blobs past 16 MiB: another trace"
rm -f merged.ksmt
"$bin" trace merge --max-memory 16M --max-disk 2M blobs.ksmt.gz few.ksmt merged.ksmt 2>err; rc=$?
[ $rc -eq 2 ] && [ ! -e merged.ksmt ] || bad "trace merge of blobs past --max-disk: exit $rc"
"$bin" trace convert --max-memory 32M few.ksmt few.ksmb || bad "64 blobs did not convert in 32 MiB"
"$bin" trace convert --content digest --max-memory 32M few.ksmt few-digest.ksmb ||
	bad "64 blobs did not convert to digests in 32 MiB"
# the pages the digest converter follows: 4 Mi pages (256 MiB at 64 bytes)
# are refused in 64 MiB before the store takes any (the count is the whole store's), 256 Ki pages fit, and
# a fork that would double what its parent holds is refused at the fork
printf 'ksmtrace 3\n0 spawn a\n0 map a 0x1000 4194304\n0 fillseq a 0x1000 4194304 7\n' >big.ksmt
rm -f out.ksmb
"$bin" trace convert --content digest --max-memory 64M big.ksmt out.ksmb 2>err; rc=$?
[ $rc -eq 2 ] && [ ! -e out.ksmb ] && [ "$(wc -l <err)" -eq 1 ] &&
	grep -q '^ksmsim trace: big.ksmt:4: converting to digests would hold more than 64.0 MiB here (4194304 pages followed, 64 bytes each) (--max-memory)$' err ||
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
"$bin" trace stat --max-disk 0 few.ksmt 2>err; rc=$?
[ $rc -eq 2 ] && grep -qx "ksmsim trace: --max-disk wants a size in bytes (K, M, G, T suffixes), not '0'" err ||
	bad "trace --max-disk 0: exit $rc, $(cat err)"

[ $fails -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
[ $fails -eq 0 ]
