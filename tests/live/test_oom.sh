#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A live command whose heap runs out still leaves the machine's KSM as it
# found it: every knob in /sys/kernel/mm/ksm and khugepaged's back at its
# (non-default) value, the replay lock's record cleared, one line naming
# the failure and the restore, exit 2. Skips (77) where live KSM cannot be
# used.
set -u
helper=${1:?usage: test_oom.sh PATH/TO/oom_in_session}
ksm=/sys/kernel/mm/ksm
khp=/sys/kernel/mm/transparent_hugepage/khugepaged
lock=/run/ksmsim-live.lock
if [ -s $lock ]; then echo "SKIP: $lock holds a killed replay's knobs: the next replay restores them"; exit 77; fi
tmp=$(mktemp -d)
knobs="run pages_to_scan sleep_millisecs use_zero_pages max_page_sharing merge_across_nodes
  smart_scan stable_node_chains_prune_millisecs advisor_mode advisor_max_cpu
  advisor_min_pages_to_scan advisor_max_pages_to_scan advisor_target_scan_time"
snap() {
  for k in $knobs; do [ -e $ksm/$k ] && echo "$k=$(cat $ksm/$k)"; done
  for k in pages_to_scan alloc_sleep_millisecs scan_sleep_millisecs; do
    [ -e $khp/$k ] && echo "khugepaged/$k=$(cat $khp/$k)"; done
}
[ -w $ksm/run ] && snap >"$tmp/orig"
put_back() {	# the test's own changes, undone whatever happens
  if [ -s "$tmp/orig" ]; then
    echo 2 >$ksm/run; echo none >$ksm/advisor_mode 2>/dev/null
    while IFS== read -r k v; do
      case $k in
      run|advisor_mode) ;;
      khugepaged/*) echo "$v" >$khp/${k#khugepaged/} 2>/dev/null ;;
      *) echo "$v" >$ksm/$k 2>/dev/null ;;
      esac
    done <"$tmp/orig"
    sed -n 's/^advisor_mode=.*\[\(.*\)\].*/\1/p' "$tmp/orig" >$ksm/advisor_mode
    sed -n 's/^run=//p' "$tmp/orig" >$ksm/run
  fi
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
  snap >"$tmp/before"
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
snap | diff "$tmp/before" - >"$tmp/d" || { fail "knobs not restored:"; cat "$tmp/d"; }
[ ! -s $lock ] || fail "the lock file still holds saved knobs: $(head -n 1 $lock)..."
[ $fails -eq 0 ] && echo "ok   out of memory in a live session: knobs restored, lock cleared"
[ $fails -eq 0 ]
