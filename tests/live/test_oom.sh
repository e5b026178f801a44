#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A live command whose heap runs out still leaves the machine's KSM as it
# found it: every knob in /sys/kernel/mm/ksm and khugepaged's back at its
# (non-default) value, the replay lock's record cleared, one line naming
# the failure and the restore, exit 2. Skips (77) where live KSM cannot be
# used.
set -u
helper=${1:?usage: test_oom.sh PATH/TO/oom_in_session}
. "$(dirname "$0")/knobs.sh"
lock=/run/ksmsim-live.lock
if [ -s $lock ]; then echo "SKIP: $lock holds a killed replay's knobs: the next replay restores them"; exit 77; fi
tmp=$(mktemp -d)
[ -w $ksm/run ] && knob_snap >"$tmp/orig"
put_back() {	# the test's own changes, undone whatever happens
  knob_restore "$tmp/orig"
  # empty at the start: a record now is the helper's, of values undone above
  [ -s $lock ] && flock -n $lock truncate -s 0 $lock
  rm -rf "$tmp"
}
trap put_back EXIT

# non-default values everywhere the session changes them
if [ -w $ksm/run ]; then
  echo 2 >$ksm/run
  echo 321 >$ksm/pages_to_scan; echo 37 >$ksm/sleep_millisecs; echo 0 >$ksm/smart_scan
  echo 1 >$ksm/use_zero_pages; echo 17 >$ksm/max_page_sharing
  echo 777 >$ksm/stable_node_chains_prune_millisecs; echo 55 >$ksm/advisor_max_cpu
  [ -w $khp/pages_to_scan ] && echo 1234 >$khp/pages_to_scan
  [ -w $khp/scan_sleep_millisecs ] && echo 9876 >$khp/scan_sleep_millisecs
  echo 0 >$ksm/run
  knob_snap >"$tmp/before"
fi

# ASan would report the request instead of returning NULL to GLib, and
# warns of it on stderr unless sent elsewhere
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:log_path=$tmp/asan \
  "$helper" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 77 ]; then cat "$tmp/out"; exit 77; fi
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
[ $rc -eq 2 ] || fail "exited $rc, wanted 2: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "wanted one line on stderr, got: $(cat "$tmp/err")"
grep -q "^ksmsim: out of memory: failed to allocate .*; KSM's knobs restored$" "$tmp/err" ||
  fail "unexpected message: $(cat "$tmp/err")"
knob_snap | diff "$tmp/before" - >"$tmp/d" || { fail "knobs not restored:"; cat "$tmp/d"; }
[ ! -s $lock ] || fail "the lock file still holds saved knobs: $(head -n 1 $lock)..."
[ $fails -eq 0 ] && echo "ok   out of memory in a live session: knobs restored, lock cleared"
[ $fails -eq 0 ]
