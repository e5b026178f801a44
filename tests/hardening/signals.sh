#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Interrupted runs lose nothing: SIGINT / SIGTERM sent to real 'ksmsim run's
# must leave no output and no temporary file in the output directory, print
# "ksmsim: interrupted; <what was done>" on stderr, and exit 130 / 143.
#   1. a run blocked reading a trace from a pipe that stops mid-way (no
#      timing involved: the outputs are open, the trace never ends);
#   2. a run busy on a big generated trace, signalled once its outputs exist;
#   3. a run left alone gives exactly its outputs, nothing else;
#   5. the same, and for SIGHUP too, for 'gen' busy on a big workload, for
#      'trace convert' blocked on a pipe and for 'collide ksm' (its generated
#      trace and its CSV): no partial file, exit 128 + signal;
#   6. 'gen' writing into a pipe whose reader left.
# usage: signals.sh KSMSIM
set -u
# job control: background jobs keep SIGINT (a script's would ignore it, and
# ksmsim, rightly, keeps a SIGINT ignored on entry ignored)
set -m
bin=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# Waits (up to 120 s) until DIR holds a file; 0 when one appeared.
wait_for_file() {
	local dir=$1 pid=$2
	for _ in $(seq 1 2400); do
		[ -n "$(ls -A "$dir")" ] && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# check NAME RC WANT_RC OUTDIR ERRFILE
check() {
	local name=$1 rc=$2 want=$3 out=$4 err=$5
	[ "$rc" -eq "$want" ] || bad "$name: exit status $rc, expected $want"
	if [ -n "$(ls -A "$out")" ]; then
		bad "$name: files left behind: $(ls -A "$out" | tr '\n' ' ')"
	fi
	# what was done: records counted so far, or the share of the trace read
	if ! grep -Eq '^ksmsim: interrupted; running: ([0-9]+ records|[0-9.]+%)' "$err"; then
		bad "$name: no 'ksmsim: interrupted; running: N records' (or P%) line on stderr:"
		sed 's/^/    /' "$err" >&2
	fi
	if ! grep -q 'unfinished output files removed' "$err"; then
		bad "$name: stderr does not say the unfinished outputs were removed"
	fi
	echo "$name: exit $rc; stderr: $(grep interrupted "$err")"
}

# 1. A trace that stops mid-way in a pipe: run reads it from standard input.
for sig in INT TERM; do
	out=$tmp/pipe-$sig
	mkdir -p "$out"
	mkfifo "$tmp/fifo-$sig"
	"$bin" run --trace - --marks-csv "$out/marks.csv" --csv "$out/series.csv" \
		--summary-csv "$out/summary.csv" --quiet \
		< "$tmp/fifo-$sig" > "$tmp/pipe-$sig.stdout" 2> "$tmp/pipe-$sig.stderr" &
	pid=$!
	pids+=("$pid")
	# hold the pipe open after the head of a trace: the reader waits for more
	exec 9> "$tmp/fifo-$sig"
	head -n 200 "$here/../../traces/samples/default.ksmt" >&9
	if ! wait_for_file "$out" "$pid"; then
		bad "pipe $sig: the run never opened its outputs"
	fi
	sleep 0.2
	kill -s "$sig" "$pid"
	wait "$pid"
	rc=$?
	exec 9>&-
	want=130
	[ "$sig" = TERM ] && want=143
	check "pipe $sig" "$rc" "$want" "$out" "$tmp/pipe-$sig.stderr"
	[ -s "$tmp/pipe-$sig.stdout" ] && bad "pipe $sig: something on standard output"
done

# 2. A big trace (a few seconds of work, more under sanitizers).
trace=$tmp/big.ksmt
"$here/make_trace.sh" "$trace" 6000 4 16384
for sig in INT TERM; do
	out=$tmp/big-$sig
	mkdir -p "$out"
	"$bin" run --trace "$trace" --marks-csv "$out/marks.csv" --csv "$out/series.csv" \
		--interval-ms 10 --summary-csv "$out/summary.csv" --quiet \
		> "$tmp/big-$sig.stdout" 2> "$tmp/big-$sig.stderr" &
	pid=$!
	pids+=("$pid")
	if ! wait_for_file "$out" "$pid"; then
		bad "big $sig: the run never opened its outputs"
	fi
	sleep 0.5
	if ! kill -0 "$pid" 2>/dev/null; then
		bad "big $sig: the run ended before the signal (trace too small for this machine?)"
	fi
	kill -s "$sig" "$pid"
	wait "$pid"
	rc=$?
	want=130
	[ "$sig" = TERM ] && want=143
	check "big $sig" "$rc" "$want" "$out" "$tmp/big-$sig.stderr"
	[ -s "$tmp/big-$sig.stdout" ] && bad "big $sig: something on standard output"
done

# 3. A SIGINT ignored on entry stays ignored: the run goes on and completes.
out=$tmp/ignored
mkdir -p "$out"
mkfifo "$tmp/fifo-ign"
( trap '' INT; exec "$bin" run --trace - --marks-csv "$out/marks.csv" --quiet ) \
	< "$tmp/fifo-ign" 2> "$tmp/ignored.stderr" &
pid=$!
pids+=("$pid")
exec 9> "$tmp/fifo-ign"
head -n 20 "$here/../../traces/samples/default.ksmt" >&9
wait_for_file "$out" "$pid" || bad "ignored INT: the run never opened its outputs"
kill -s INT "$pid"
sleep 0.3
kill -0 "$pid" 2>/dev/null || bad "ignored INT: the run died of a SIGINT ignored on entry"
cat "$here/../../traces/samples/default.ksmt" | tail -n +21 >&9
exec 9>&-
wait "$pid"
rc=$?
[ "$rc" -eq 0 ] || bad "ignored INT: exit status $rc: $(cat "$tmp/ignored.stderr")"
[ "$(ls -A "$out")" = "marks.csv" ] || bad "ignored INT: left $(ls -A "$out")"
echo "ignored INT: exit $rc, marks written"

# 4. Left alone, the same kind of run leaves its three outputs and nothing else.
out=$tmp/whole
mkdir -p "$out"
"$here/make_trace.sh" "$tmp/small.ksmt" 300 2 512
if "$bin" run --trace "$tmp/small.ksmt" --marks-csv "$out/marks.csv" --csv "$out/series.csv" \
	--summary-csv "$out/summary.csv" --quiet 2> "$tmp/whole.stderr"; then
	got=$(ls -A "$out" | tr '\n' ' ')
	[ "$got" = "marks.csv series.csv summary.csv " ] || bad "whole run left: $got"
	[ -s "$tmp/whole.stderr" ] && bad "whole run: stderr not empty"
else
	bad "whole run failed: $(cat "$tmp/whole.stderr")"
fi

# 5. gen and trace convert: their trace writers' temporary files go too.
# check_tool NAME RC WANT_RC OUTDIR ERRFILE PHASE
check_tool() {
	local name=$1 rc=$2 want=$3 out=$4 err=$5 phase=$6
	[ "$rc" -eq "$want" ] || bad "$name: exit status $rc, expected $want: $(cat "$err")"
	[ -n "$(ls -A "$out")" ] && bad "$name: files left behind: $(ls -A "$out" | tr '\n' ' ')"
	grep -Eq "^ksmsim: interrupted; $phase.*1 unfinished output file removed" "$err" ||
		bad "$name: stderr lacks 'ksmsim: interrupted; $phase...; 1 unfinished output file removed': $(cat "$err")"
	echo "$name: exit $rc; stderr: $(grep interrupted "$err")"
}
# Under nohup SIGHUP arrives ignored, stays ignored in every child (as it
# should) and cannot be reset from a shell: then its round is skipped.
sigs="INT TERM HUP"
if (( (16#$(awk '/^SigIgn:/ { print $2 }' /proc/self/status) & 1) )); then
	echo "SIGHUP is ignored here (nohup?): its round is skipped" >&2
	sigs="INT TERM"
fi
for sig in $sigs; do
	want=$((128 + $(kill -l "$sig")))
	# gen: 4000 guests of kernel-build is ~30 million records, tens of seconds
	out=$tmp/gen-$sig
	mkdir -p "$out"
	"$bin" gen kernel-build --vms 4000 -o "$out/t.ksmb" --quiet 2> "$tmp/gen-$sig.stderr" &
	pid=$!
	pids+=("$pid")
	wait_for_file "$out" "$pid" || bad "gen $sig: no temporary file appeared"
	sleep 0.3
	kill -0 "$pid" 2>/dev/null || bad "gen $sig: ended before the signal"
	kill -s "$sig" "$pid"
	wait "$pid"
	check_tool "gen $sig" $? "$want" "$out" "$tmp/gen-$sig.stderr" "writing: [0-9]+ records"

	# convert: the input is a pipe that stops mid-way, so it waits for more
	# (sent in bulk: the reader fills a whole buffer before it parses)
	out=$tmp/convert-$sig
	mkdir -p "$out"
	mkfifo "$tmp/cfifo-$sig"
	"$bin" trace convert "$tmp/cfifo-$sig" "$out/t.ksmb" 2> "$tmp/convert-$sig.stderr" &
	pid=$!
	pids+=("$pid")
	exec 9> "$tmp/cfifo-$sig"
	head -c 4000000 "$trace" | head -n -1 >&9
	wait_for_file "$out" "$pid" || bad "convert $sig: no temporary file appeared"
	sleep 0.2
	kill -s "$sig" "$pid"
	wait "$pid"
	rc=$?
	exec 9>&-
	check_tool "convert $sig" "$rc" "$want" "$out" "$tmp/convert-$sig.stderr" ""

	# collide ksm: its generated trace (a temporary file) and its CSV go too
	out=$tmp/collide-$sig
	mkdir -p "$out"
	TMPDIR=$out "$bin" collide ksm --hashes xxhash,crc32c --csv "$out/c.csv" \
		>/dev/null 2> "$tmp/collide-$sig.stderr" &
	pid=$!
	pids+=("$pid")
	wait_for_file "$out" "$pid" || bad "collide $sig: no temporary file appeared"
	sleep 0.5
	kill -0 "$pid" 2>/dev/null || bad "collide $sig: ended before the signal"
	kill -s "$sig" "$pid"
	wait "$pid"
	rc=$?
	[ "$rc" -eq "$want" ] || bad "collide $sig: exit status $rc, expected $want"
	[ -n "$(ls -A "$out")" ] && bad "collide $sig: files left behind: $(ls -A "$out" | tr '\n' ' ')"
	grep -q '^ksmsim: interrupted.*unfinished output file' "$tmp/collide-$sig.stderr" ||
		bad "collide $sig: $(cat "$tmp/collide-$sig.stderr")"
done

# 6. SIGPIPE: a reader that goes away ends gen quietly, with nothing left behind.
out=$tmp/pipe-gen
mkdir -p "$out"
cd "$out" || exit 1
"$bin" gen kernel-build --vms 400 --quiet -o - | head -c 1000 >/dev/null
rc=${PIPESTATUS[0]}
cd - >/dev/null || exit 1
[ "$rc" -eq 141 ] || bad "gen into a closed pipe: exit $rc, expected 141"
[ -n "$(ls -A "$out")" ] && bad "gen into a closed pipe left: $(ls -A "$out")"

if [ "$fails" -gt 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "interrupted runs left nothing behind"
