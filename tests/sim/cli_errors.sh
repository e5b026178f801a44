#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad input and bad options: one clear line naming the file or the option,
# exit 2, no output file left.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {	# expect STATUS PATTERN -- ARGS...
	local want=$1 pat=$2; shift 3
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err"
	local got=$?
	if [ "$got" != "$want" ] || ! grep -qE -e "$pat" "$tmp/err"; then
		echo "FAIL: ksmsim $*: exit $got (want $want), stderr: $(cat "$tmp/err")"
		fail=1
	fi
	if [ "$(wc -l < "$tmp/err")" -gt 1 ]; then
		echo "FAIL: ksmsim $*: more than one error line"; fail=1
	fi
	if ls "$tmp"/marks* >/dev/null 2>&1; then
		echo "FAIL: ksmsim $*: left an output file: $(ls "$tmp"/marks*)"; fail=1
		rm -f "$tmp"/marks*
	fi
}
printf 'ksmtrace 1\n0 spawn a\n0 map a 0x10 4\n0 wirte a 0x10 zero\n' > "$tmp/bad.ksmt"
cat > "$tmp/busy.ksmt" <<'T'
ksmtrace 1
0 spawn a
0 map a 0x10 4
0 advise a 0x10 4 mergeable
0 fill a 0x10 4 byte:01
0 set run 1
0 settle 2
0 mark merged
0 set max_page_sharing 3
T
expect 2 "--trace FILE is required" -- run
expect 2 "unknown checksum 'nope'" -- run --trace "$tmp/bad.ksmt" --hash nope
expect 2 "bad.ksmt:4: unknown verb 'wirte'" -- run --trace "$tmp/bad.ksmt" --marks-csv "$tmp/marks.csv"
expect 2 "missing.ksmt: cannot open" -- run --trace "$tmp/missing.ksmt" --marks-csv "$tmp/marks.csv"
expect 2 "busy.ksmt:9: the kernel refuses max_page_sharing 3 \(EBUSY\)" -- run --trace "$tmp/busy.ksmt" --marks-csv "$tmp/marks.csv"
expect 2 "--pages-to-scan wants" -- run --trace "$tmp/busy.ksmt" --pages-to-scan -1
expect 2 "unexpected argument" -- run --trace "$tmp/busy.ksmt" extra
# every option error names the option
expect 2 "^ksmsim run: --hash needs a value" -- run --trace "$tmp/busy.ksmt" --hash
expect 2 "^ksmsim run: unknown option '--bogus'" -- run --trace "$tmp/busy.ksmt" --bogus
expect 2 "^ksmsim run: --quiet takes no value" -- run --trace "$tmp/busy.ksmt" --quiet=1
expect 2 "^ksmsim run: --hash: unknown checksum 'xxhsah'; did you mean 'xxhash'\\?" -- run --trace "$tmp/busy.ksmt" --hash xxhsah
expect 2 "^ksmsim run: --pages-to-scan wants 0\.\.4294967295, not ' 100'" -- run --trace "$tmp/busy.ksmt" --pages-to-scan " 100"
expect 2 "^ksmsim run: --interval-ms wants a number of milliseconds from 1 to 18446744073709551, not ' -5'" -- run --trace "$tmp/busy.ksmt" --interval-ms " -5"
expect 2 "^ksmsim gen: --seed needs a value" -- gen vm-clones --seed
expect 2 "^ksmsim gen: unknown option '-z'" -- gen vm-clones -z
expect 2 "^ksmsim trace: --format needs a value" -- trace convert --format
expect 2 "^ksmsim collide birthday: --trials wants 1\.\.18446744073709551615, not '0'" -- collide birthday --trials 0
expect 2 "^ksmsim collide birthday: --bits wants 1\.\.64, not '0'" -- collide birthday --bits 0
expect 2 "^ksmsim collide birthday: --plot draws the --curve-csv data" -- collide birthday --plot "$tmp/p.png"
expect 2 "^ksmsim collide birthday: --hashes: unknown checksum 'jhash'; did you mean 'jhash2'" -- collide birthday --hashes jhash
expect 2 "^ksmsim collide false-positive: --seed needs a value" -- collide false-positive --seed
expect 2 "^ksmsim collide ksm: unknown option '--bogus'" -- collide ksm --bogus
expect 2 "^ksmsim collide ksm: .*nosuch.ksmt: cannot open" -- collide ksm --trace "$tmp/nosuch.ksmt"
[ -s "$tmp/out" ] && { echo "FAIL: collide ksm printed a table for a missing trace: $(head -1 "$tmp/out")"; fail=1; }
expect 2 "^ksmsim record: --interval-ms needs a value" -- record --interval-ms
expect 2 "^ksmsim live: --base needs a value" -- live --base
expect 2 "^ksmsim live: unknown option '--bogus'" -- live --bogus 1
# the same refusal is not an error once run=2 unmerged everything
sed -i 's/^0 set max_page_sharing 3$/0 set run 2\n0 set max_page_sharing 3/' "$tmp/busy.ksmt"
if ! "$bin" run --quiet --trace "$tmp/busy.ksmt" --marks-csv "$tmp/ok.csv"; then
	echo "FAIL: max_page_sharing after run 2 was refused"; fail=1
fi
[ -s "$tmp/ok.csv" ] || { echo "FAIL: no marks written"; fail=1; }
# an output onto an input or onto another output, for every command that has several
expect 2 "^ksmsim collide ksm: --csv .*busy.ksmt: same file as --trace" -- collide ksm --trace "$tmp/busy.ksmt" --csv "$tmp/busy.ksmt"
expect 2 "^ksmsim collide birthday: --curve-csv .*: same file as --csv" -- collide birthday --csv "$tmp/c.csv" --curve-csv "$tmp/./c.csv"
expect 2 "^ksmsim live: --marks-csv .*busy.ksmt: same file as --trace" -- live --trace "$tmp/busy.ksmt" --marks-csv "$tmp/busy.ksmt"
expect 2 "^ksmsim live: --mm-stats-csv -: same file as --marks-csv -" -- live --trace "$tmp/busy.ksmt" --mm-stats-csv -
grep -q '^0 set max_page_sharing 3$' "$tmp/busy.ksmt" || { echo "FAIL: a refused output touched the trace"; fail=1; }
# lists that name nothing, limits that are named, keys given twice
T=$tmp/busy.ksmt
expect 2 "^ksmsim advise: --policies: an empty list" -- advise "$T" --policies ''
expect 2 "^ksmsim advise: --hashes: an empty list" -- advise "$T" --hashes ''
expect 2 "^ksmsim collide birthday: --hashes: an empty list" -- collide birthday --hashes ''
expect 2 "^ksmsim advise: --jobs wants 1 to 256 worker processes, not '1000'" -- advise "$T" --jobs 1000
expect 2 "^ksmsim run: --ideal-interval-ms wants a number of milliseconds from 1 to 18446744073709551, not '18446744073709551615'" -- run --trace "$T" --csv "$tmp/s.csv" --ideal-interval-ms 18446744073709551615
expect 2 "k is given twice" -- run --trace "$T" --policy partial-hash:k=4,k=8
# a single-valued option given twice is refused, not silently the last (issue 46)
expect 2 "^ksmsim run: --trace given twice" -- run --trace "$T" --trace "$T"
expect 2 "^ksmsim run: --hash given twice" -- run --trace "$T" --hash xxhash --hash jhash2
expect 2 "^ksmsim run: --policy given twice" -- run --trace "$T" --policy kernel --policy kernel
expect 2 "^ksmsim run: --pages-to-scan given twice" -- run --trace "$T" --pages-to-scan 1 --pages_to_scan 2
expect 2 "^ksmsim run: --interval-ms given twice" -- run --trace "$T" --csv "$tmp/s.csv" --interval-ms 5 --interval-ms 6
expect 2 "^ksmsim advise: --jobs given twice" -- advise "$T" --jobs 1 -j 2
expect 2 "^ksmsim tune: --cpu-budget given twice" -- tune "$T" --cpu-budget 5 --cpu-budget 6
expect 2 "^ksmsim gen: --seed given twice" -- gen kernel-build --seed 1 --seed 2 -o "$tmp/marks.ksmt"
expect 2 "^ksmsim trace: --format given twice" -- trace convert -f text --format gz "$T" "$tmp/marks.ksmt"
expect 2 "^ksmsim collide ksm: --guests given twice" -- collide ksm --guests 1 --guests 2
# a probe past the trace's end would write a trace with no probe (issue 46)
expect 2 "^ksmsim gen probe: --probe-at 1e\+06: at or past the trace's end" -- gen probe --scale 0.001 --probe-at 1e6 -o "$tmp/marks.ksmt"
# no usage, no getopt line after the error: one line (issue 46)
expect 2 "^ksmsim hashes: unexpected argument 'extra'" -- hashes extra
expect 2 "^ksmsim policies: unexpected argument 'extra'" -- policies extra
expect 2 "^ksmsim collide: unknown mode 'bogus'" -- collide bogus
expect 2 "^ksmsim bench trace: unknown option '--bogus'" -- bench trace --bogus
expect 2 "^ksmsim bench costs: unknown option '--bogus'" -- bench costs --bogus
expect 2 "^ksmsim: a COMMAND is required" --
expect 2 "^ksmsim gen: a WORKLOAD is required" -- gen
# trace stat of a FIFO reads it once: the form comes from the reader, not a second open
mkfifo "$tmp/fifo"
cat "$T" >"$tmp/fifo" &
timeout 20 "$bin" trace stat "$tmp/fifo" >"$tmp/out" 2>"$tmp/err" || { echo "FAIL: trace stat FIFO: $(cat "$tmp/err")"; fail=1; }
wait
grep -q '(text, ' "$tmp/out" || { echo "FAIL: trace stat FIFO: $(head -3 "$tmp/out")"; fail=1; }
# a hash name in any case is the same checksum
"$bin" run --quiet --trace "$tmp/busy.ksmt" --hash CRC32C --summary-csv "$tmp/upper.csv" 2>/dev/null
"$bin" run --quiet --trace "$tmp/busy.ksmt" --hash crc32c --summary-csv "$tmp/lower.csv" 2>/dev/null
cmp -s "$tmp/upper.csv" "$tmp/lower.csv" || { echo "FAIL: --hash CRC32C differs from crc32c"; fail=1; }
[ $fail = 0 ] && echo "all error cases behave"
exit $fail
