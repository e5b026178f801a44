#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Where outputs land (util/atomic_file.h), for `run` (atomic_file) and `gen`
# (the trace writer), the two ways outputs are written:
#   - a character device is written in place: /dev/full reports ENOSPC and
#     stays a device, a null device stays a device;
#   - a symlink to a regular file replaces the target, never the link;
#     a symlink to a stream (/proc/self/fd/1) writes through it;
#   - a directory or an empty path is refused before any work, nothing left;
#   - new files get 0666 & ~umask (002 and 077), a replaced file keeps its mode;
#   - SIGPIPE and SIGHUP remove unfinished outputs like SIGINT/SIGTERM.
# Device nodes are made with mknod (root); without root those checks skip.
# usage: outputs.sh KSMSIM TRACE
set -u
bin=$(realpath "$1") trace=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
cd "$tmp" || exit 1

run() { "$bin" run --quiet --trace "$trace" "$@"; }
gen() { "$bin" gen vm-clones --scale 0.001 --quiet "$@"; }

if [ "$(id -u)" = 0 ] && mknod full c 1 7 && mknod null c 1 3; then
	for cmd in run gen; do
		if [ $cmd = run ]; then opt=(--marks-csv); else opt=(-o); fi
		$cmd "${opt[@]}" full 2>err; rc=$?
		[ $rc -eq 2 ] || bad "$cmd to /dev/full: exit $rc, expected 2"
		grep -q 'full: .*No space left on device' err || bad "$cmd to /dev/full: $(cat err)"
		[ -c full ] || bad "$cmd replaced the /dev/full node"
		$cmd "${opt[@]}" null 2>err || bad "$cmd to a null device failed: $(cat err)"
		[ -c null ] || bad "$cmd replaced the null device node"
	done
	[ "$(ls -A | grep -c tmp)" -eq 0 ] || bad "temporary files left: $(ls -A)"
	rm -f full null err
else
	echo "not root or no mknod: device checks skipped"
fi

# symlinks
run --marks-csv direct.csv || bad "plain run failed"
echo old >target.csv
ln -s target.csv link.csv
run --marks-csv link.csv || bad "run through a symlink failed"
[ -L link.csv ] || bad "the symlink was replaced"
cmp -s target.csv direct.csv || bad "the symlink's target does not hold the output"
ln -s /proc/self/fd/1 stream
run --summary-csv stream >streamed.csv || bad "run to a symlink to stdout failed"
[ -L stream ] || bad "the symlink to /proc/self/fd/1 was replaced"
head -1 streamed.csv | grep -q '^trace,hash,' || bad "nothing streamed: $(head -c 200 streamed.csv)"
ln -s missing/none dangling
run --marks-csv dangling 2>err && bad "a dangling symlink was accepted"
grep -q 'dangling: symlink to a missing file' err || bad "dangling: $(cat err)"
rm -f direct.csv target.csv link.csv stream streamed.csv dangling err

# refused before any work
mkdir dir
for cmd in run gen; do
	if [ $cmd = run ]; then opt=(--marks-csv); else opt=(-o); fi
	$cmd "${opt[@]}" dir 2>err; rc=$?
	[ $rc -eq 2 ] || bad "$cmd to a directory: exit $rc"
	grep -q 'dir: is a directory' err || bad "$cmd to a directory: $(cat err)"
	$cmd "${opt[@]}" '' 2>err; rc=$?
	[ $rc -eq 2 ] || bad "$cmd to an empty path: exit $rc"
	grep -q 'empty output path' err || bad "$cmd to an empty path: $(cat err)"
done
[ -z "$(ls -A dir)" ] || bad "something was written into dir: $(ls -A dir)"
[ "$(ls -A)" = "$(printf 'dir\nerr')" ] || bad "files left: $(ls -A | tr '\n' ' ')"
rm -rf dir err

# an output onto an input, or two outputs onto one file: refused, nothing touched
cp "$trace" in.ksmt
ln -s in.ksmt alias.ksmt
sum=$(md5sum <in.ksmt)
for args in "trace convert in.ksmt in.ksmt" "trace convert in.ksmt alias.ksmt" \
	    "trace convert in.ksmt ./in.ksmt" "trace merge in.ksmt $trace in.ksmt"; do
	"$bin" $args 2>err; rc=$?
	[ $rc -eq 2 ] || bad "$args: exit $rc, expected 2"
	grep -q 'same file as' err || bad "$args: $(cat err)"
	[ "$(md5sum <in.ksmt)" = "$sum" ] || bad "$args: the input changed"
done
"$bin" trace merge in.ksmt in.ksmt out.ksmt 2>err && bad "merging a trace with itself was accepted"
grep -q "^ksmsim trace: in.ksmt:[0-9]*: mm '.*' already exists (in the merged trace)" err ||
	bad "merge blames: $(cat err)"
# a full OUT is OUT's failure, not a line of an input
sed 's/\bguest\([0-9]\)/other\1/g' in.ksmt >other.ksmt
"$bin" trace merge in.ksmt other.ksmt /dev/full 2>err; rc=$?
[ $rc -eq 2 ] && [ "$(cat err)" = "ksmsim trace: /dev/full: cannot write: No space left on device" ] ||
	bad "merge into /dev/full: exit $rc, $(cat err)"
rm -f other.ksmt
[ "$(ls -A | tr '\n' ' ')" = "alias.ksmt err in.ksmt " ] || bad "files left: $(ls -A | tr '\n' ' ')"
rm -f in.ksmt alias.ksmt err

# text that would break a CSV: comment lines escape it, fields quote it
run --trace-label $'two\nlines, "quoted"\\' --marks-csv nl.csv --summary-csv nl.sum || bad "run with a newline label failed"
grep -q '^# ksmsim .* trace two\\nlines, "quoted"\\\\; checksum' nl.csv || bad "comment not escaped: $(head -1 nl.csv)"
"$bin" diff nl.csv nl.csv >/dev/null || bad "ksmsim diff rejects run's own output with a newline label"
python3 -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1]))); sys.exit(r[1][0] != "two\nlines, \"quoted\"\\")' nl.sum ||
	bad "summary field not RFC 4180: $(cat nl.sum)"
rm -f nl.csv nl.sum

# modes
for mask in 002 077; do
	(umask $mask && run --marks-csv m$mask.csv && gen -o g$mask.ksmt) || bad "umask $mask runs failed"
done
[ "$(stat -c %a m002.csv g002.ksmt)" = "$(printf '664\n664')" ] || bad "umask 002: $(stat -c '%n %a' m002.csv g002.ksmt)"
[ "$(stat -c %a m077.csv g077.ksmt)" = "$(printf '600\n600')" ] || bad "umask 077: $(stat -c '%n %a' m077.csv g077.ksmt)"
chmod 640 m002.csv g002.ksmt
(umask 077 && run --marks-csv m002.csv && gen -o g002.ksmt) || bad "replacing runs failed"
[ "$(stat -c %a m002.csv g002.ksmt)" = "$(printf '640\n640')" ] || bad "replaced files lost their mode: $(stat -c '%n %a' m002.csv g002.ksmt)"
rm -f m0* g0*

# SIGPIPE: the reader of standard output leaves; the file output goes too
run --csv - --interval-ms 1 --marks-csv marks.csv | head -1 >/dev/null
rc=${PIPESTATUS[0]}
[ $rc -eq 141 ] || bad "run into a closed pipe: exit $rc, expected 141"
[ -z "$(ls -A)" ] || bad "SIGPIPE left: $(ls -A | tr '\n' ' ')"

# SIGHUP while blocked on a trace that never ends. Under nohup SIGHUP
# arrives ignored, stays ignored for every child (as it should) and cannot
# be reset from a shell: then there is nothing to test.
sigign=$(awk '/^SigIgn:/ { print $2 }' /proc/self/status)
if (( (16#$sigign & 1) )); then
	echo "SIGHUP is ignored here (nohup?): its check is skipped" >&2
else
mkfifo feed
(head -20 "$trace"; sleep 30) >feed &
feeder=$!
"$bin" run --quiet --trace - --marks-csv hup.csv <feed 2>err &
pid=$!
for _ in $(seq 1 100); do ls hup.csv.tmp.* >/dev/null 2>&1 && break; sleep 0.05; done
kill -HUP $pid
wait $pid; rc=$?
kill $feeder 2>/dev/null; wait $feeder 2>/dev/null
[ $rc -eq 129 ] || bad "SIGHUP: exit $rc, expected 129"
grep -q 'interrupted.*unfinished output file removed' err || bad "SIGHUP: $(cat err)"
rm -f feed err
[ -z "$(ls -A)" ] || bad "SIGHUP left: $(ls -A | tr '\n' ' ')"
fi

if [ $fails -gt 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "outputs land where they should"
