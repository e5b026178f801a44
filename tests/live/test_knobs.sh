#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ksmsim live leaves the machine's KSM as it found it: every knob in
# /sys/kernel/mm/ksm restored (after non-default values), nothing merged, no
# child process left, also when interrupted by SIGINT. Skips (77) where live
# KSM cannot be used.
set -u
bin=${1:?usage: test_knobs.sh PATH/TO/ksmsim TRACE}
trace=${2:?}
. "$(dirname "$0")/knobs.sh"
if ! why=$("$bin" live --check 2>&1); then echo "SKIP: $why"; exit 77; fi
tmp=$(mktemp -d)
knob_snap >"$tmp/orig"
put_back() {	# the test's own changes, undone whatever happens
  knob_restore "$tmp/orig"
  rm -rf "$tmp"
}
trap put_back EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# non-default values everywhere a replay changes them
echo 2 >$ksm/run
echo 321 >$ksm/pages_to_scan; echo 37 >$ksm/sleep_millisecs; echo 0 >$ksm/smart_scan
echo 1 >$ksm/use_zero_pages; echo 17 >$ksm/max_page_sharing
echo 777 >$ksm/stable_node_chains_prune_millisecs; echo 55 >$ksm/advisor_max_cpu
echo 0 >$ksm/run
knob_snap >"$tmp/before"

# a replay run in its own session: its pid is the session id of any child
replay() {	# replay TRACE OUT [SIGNAL_AFTER]
  setsid "$bin" live --trace "$1" --marks-csv "$2" >"$tmp/log" 2>&1 &
  local pid=$!
  if [ $# -ge 3 ]; then sleep "$3"; kill -INT $pid; fi
  wait $pid
  rc=$?
  sleep 0.2
  left=$(ps -e -o sid=,pid=,comm= | awk -v s=$pid '$1 == s' | grep -v '<defunct>' || true)
}
for i in 1 2; do
  replay "$trace" "$tmp/m$i.csv"
  [ $rc -eq 0 ] || fail "replay $i exited $rc: $(tail -n 1 "$tmp/log")"
  knob_snap | diff "$tmp/before" - >"$tmp/d" || { fail "replay $i changed knobs:"; cat "$tmp/d"; }
  [ -z "$left" ] || fail "replay $i left processes: $left"
  [ "$(cat $ksm/pages_shared)" = 0 ] || fail "replay $i left pages_shared $(cat $ksm/pages_shared)"
  [ -s "$tmp/m$i.csv" ] || fail "replay $i wrote no marks"
done
"$bin" diff "$tmp/m1.csv" "$tmp/m2.csv" >/dev/null || fail "two replays of $trace differ"

# merged pages, then 60 s of trace time: SIGINT lands while it waits
long="$tmp/long.ksmt"
{ echo "ksmtrace 1"; echo "0 set pages_to_scan 1000"; echo "0 set sleep_millisecs 10"
  for m in a b; do echo "0 spawn $m"; echo "0 map $m 0x1000 100"
    echo "0 advise $m 0x1000 100 mergeable"; echo "0 fill $m 0x1000 100 byte:63"; done
  echo "0 set run 1"; echo "0 settle 2"; echo "0 mark merged"
  echo "60000000 mark late"; } >"$long"
replay "$long" "$tmp/int.csv" 0.5
[ $rc -eq 130 ] || fail "interrupted replay exited $rc, wanted 130: $(tail -n 1 "$tmp/log")"
knob_snap | diff "$tmp/before" - >"$tmp/d" || { fail "interrupted replay changed knobs:"; cat "$tmp/d"; }
[ -z "$left" ] || fail "interrupted replay left processes: $left"
[ "$(cat $ksm/pages_shared)" = 0 ] || fail "interrupted replay left pages_shared"
ls "$tmp"/int.csv* >/dev/null 2>&1 && fail "interrupted replay left an output file"
[ ! -s /run/ksmsim-live.lock ] || fail "the lock file still holds saved knobs"
[ $fails -eq 0 ] && echo "ok   knobs restored, no processes left, also after SIGINT"
[ $fails -eq 0 ]
