#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A recording whose heap runs out stops the recorded program before it
# exits (it would otherwise run on, unwatched), removes its unfinished
# trace, prints one line and exits 2. Needs no root.
set -u
helper=${1:?usage: test_oom.sh PATH/TO/oom_recording}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# ASan would report the request instead of returning NULL to GLib, and
# warns of it on stderr unless sent elsewhere
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:log_path=$tmp/asan \
  "$helper" "$tmp/out.ksmt" >"$tmp/pid" 2>"$tmp/err"
rc=$?
pid=$(cat "$tmp/pid")
[ $rc -eq 2 ] || fail "exited $rc, wanted 2: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "wanted one line on stderr, got: $(cat "$tmp/err")"
grep -q "^ksmsim: out of memory: failed to allocate .*; 1 unfinished output file removed; the recorded program was stopped (SIGTERM)$" "$tmp/err" ||
  fail "unexpected message: $(cat "$tmp/err")"
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
  fail "the recorded program (pid $pid) still runs"
  kill -KILL "$pid"
fi
left=$(ls -A "$tmp" | grep -v -x -e pid -e err -e 'asan\..*')
[ -z "$left" ] || fail "left in the output directory: $left"
[ $fails -eq 0 ] && echo "ok   out of memory while recording: program stopped, trace removed"
[ $fails -eq 0 ]
