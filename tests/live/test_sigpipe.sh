#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ksmsim live whose standard output's reader goes away (issue 46: `live |
# head -c 1`): SIGPIPE is deferred during a replay, so the write fails with
# EPIPE and live ends as for any failure: every KSM knob as it found it,
# nothing merged, no child process left, one line on stderr, a non-zero
# exit, no unfinished output (*.tmp.*) and no hang. Twice: the reader gone
# mid-replay (head -c 1, 270 KB of marks) and before the first write.
# Skips (77) where live KSM cannot be used. Takes the machine's live-KSM
# lock itself (KSMSIM_LIVE_LOCK, default /tmp/ksm-live.lock; nobody holds
# it in CI): do not run it under a flock of that same file.
set -u
bin=$(realpath "${1:?usage: test_sigpipe.sh PATH/TO/ksmsim}")
. "$(dirname "$0")/knobs.sh"
[ -d $ksm ] || { echo "SKIP: no $ksm"; exit 77; }
lock=${KSMSIM_LIVE_LOCK:-/tmp/ksm-live.lock}
if ! exec 9>>"$lock"; then echo "SKIP: cannot open the lock $lock"; exit 77; fi
if ! flock -w 90 9; then echo "SKIP: the live KSM stayed busy ($lock held)"; exit 77; fi
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

# non-default values, so that a replay's own defaults left behind show
echo 2 >$ksm/run
echo 321 >$ksm/pages_to_scan; echo 37 >$ksm/sleep_millisecs
echo 17 >$ksm/max_page_sharing; echo 55 >$ksm/advisor_max_cpu
echo 0 >$ksm/run
knob_snap >"$tmp/before"

# two processes merged, then 2000 marks 1 ms apart: 270 KB of marks CSV,
# far more than a pipe holds, so head's exit breaks a write mid-replay
{ echo "ksmtrace 1"; echo "0 set pages_to_scan 1000"; echo "0 set sleep_millisecs 10"
  for m in a b; do echo "0 spawn $m"; echo "0 map $m 0x1000 100"
    echo "0 advise $m 0x1000 100 mergeable"; echo "0 fill $m 0x1000 100 byte:63"; done
  echo "0 set run 1"; echo "0 settle 2"
  for i in $(seq 1 2000); do echo "$((1000 + i)) mark m$i"; done; } >"$tmp/many.ksmt"

# check NAME: what one broken-pipe replay left ($rc, $pid, $tmp/err)
check() {
  local name=$1 lines
  sleep 0.2
  lines=$(wc -l <"$tmp/err")
  case $rc in
  0) fail "$name: exit 0 with its output lost" ;;
  124) fail "$name: still running after 120 s" ;;
  esac
  [ "$lines" -eq 1 ] || { fail "$name: $lines lines on stderr, wanted 1:"; cat "$tmp/err"; }
  if LC_ALL=C grep -q "[^[:print:]]" "$tmp/err"; then fail "$name: a control byte on stderr: $(od -c "$tmp/err" | head -3)"; fi
  knob_snap | diff "$tmp/before" - >"$tmp/d" || { fail "$name changed knobs:"; cat "$tmp/d"; }
  [ "$(cat $ksm/pages_shared)" = 0 ] || fail "$name left pages_shared $(cat $ksm/pages_shared)"
  local left
  left=$(ps -e -o sid=,pid=,comm= | awk -v s="$pid" '$1 == s' | grep -v '<defunct>' || true)
  [ -z "$left" ] || fail "$name left processes: $left"
  left=$(find "$tmp" -name '*.tmp.*')
  [ -z "$left" ] || fail "$name left $left"
  [ ! -e "$tmp/mm.csv" ] || fail "$name committed --mm-stats-csv of a failed replay"
  [ $fails -eq 0 ] && echo "ok   $name: exit $rc, '$(cat "$tmp/err")'"
}

# 1. the reader reads a byte and goes (a FIFO, so that live runs in its own
# session and what it leaves is found)
mkfifo "$tmp/p"
head -c 1 <"$tmp/p" >/dev/null &
(cd "$tmp" && exec setsid timeout 120 "$bin" live --trace many.ksmt --mm-stats-csv mm.csv \
   >"$tmp/p" 2>"$tmp/err") &
pid=$!
wait $pid; rc=$?
wait
check "live | head -c 1"

# 2. the reader is gone before the first write
rm -f "$tmp/p"; mkfifo "$tmp/p"
true <"$tmp/p" &
(cd "$tmp" && exec setsid timeout 120 "$bin" live --trace many.ksmt --mm-stats-csv mm.csv \
   >"$tmp/p" 2>"$tmp/err") &
pid=$!
wait $pid; rc=$?
wait
check "live | true"

[ $fails -eq 0 ]
