#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ksmsim live pins every trace process to one CPU (--cpu N; by default the
# least busy allowed one, so not one another task keeps busy) and itself
# runs elsewhere (where it may), and leaves all free with --cpu any; a CPU
# it may not use is refused before KSM is touched. Skips (77) where live KSM cannot be
# used.
set -u
bin=${1:?usage: test_pin.sh PATH/TO/ksmsim}
if ! why=$("$bin" live --check 2>&1); then echo "SKIP: $why"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; [ -n "${spin:-}" ] && kill $spin 2>/dev/null' EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
# two mms that wait 1.5 s in the replay, long enough to look at them
cat >"$tmp/t.ksmt" <<'T'
ksmtrace 1
0 spawn a
0 spawn b
0 map a 0x10 4
0 fill a 0x10 4 byte:01
1500000 exit a
1500000 exit b
T
allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
first=$(python3 -c "import os; print(min(os.sched_getaffinity(0)))")
last=$(python3 -c "import os; print(max(os.sched_getaffinity(0)))")
# affinity of the replay's children, one line each, sorted
kids_cpus() {
  local pid=$1 n=0 out
  while [ $n -lt 50 ]; do
    out=$(for k in $(pgrep -P "$pid"); do
      sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$k/status; done | sort)
    [ "$(echo "$out" | grep -c .)" = 2 ] && { echo "$out"; return; }
    sleep 0.05; n=$((n + 1))
  done
  echo "no two children: $out"
}
check() {	# check EXPECTED [ARGS...]
  local want=$1; shift
  "$bin" live --trace "$tmp/t.ksmt" --marks-csv "$tmp/m.csv" "$@" & local pid=$!
  sleep 0.3
  local got; got=$(kids_cpus $pid | sort -u)
  local own; own=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$pid/status)
  wait $pid || fail "live $* exited $?"
  # "not:N": any one allowed CPU but N
  case $want in not:*)
    if [[ $got =~ ^[0-9]+$ ]] && [ "$got" != "${want#not:}" ]; then want=$got; fi ;;
  esac
  if [ "$got" = "$want" ]; then
    echo "ok   ${*:-default}: children on $got"
  else
    fail "${*:-default}: children allowed '$got', want '$want'"
    return	# where the children are wrong, the replayer's CPU says nothing more
  fi
  # the replayer itself: off the trace CPU when it has another, else as it was
  if [ "$want" != "$allowed" ] && [ "$first" != "$last" ]; then
    python3 - "$own" "$want" <<'P' && echo "ok   ${*:-default}: replayer on $own" ||
import sys
def cpus(s):
    out = set()
    for part in s.split(","):
        a, _, b = part.partition("-")
        out |= set(range(int(a), int(b or a) + 1))
    return out
sys.exit(int(sys.argv[2]) in cpus(sys.argv[1]))
P
      fail "${*:-default}: replayer allowed '$own', shares CPU $want"
  fi
}
if [ "$first" != "$last" ]; then
  # a CPU kept busy by another task is not the default
  taskset -c "$first" sh -c 'while :; do :; done' & spin=$!
  sleep 0.2
  check "not:$first"
  kill $spin; wait $spin 2>/dev/null
  taskset -c "$last" sh -c 'while :; do :; done' & spin=$!
  sleep 0.2
  check "not:$last"
  kill $spin; wait $spin 2>/dev/null
fi
check "$last" --cpu "$last"
check "$first" --cpu "$first"
check "$allowed" --cpu any
before=$(cat /sys/kernel/mm/ksm/run)
if "$bin" live --trace "$tmp/t.ksmt" --cpu 100000 >"$tmp/out" 2>&1; then
  fail "--cpu 100000 accepted"
else
  grep -q -- "--cpu wants a CPU this process may run on, or 'any', not '100000'" "$tmp/out" && echo "ok   --cpu 100000 refused" ||
    fail "--cpu 100000: $(cat "$tmp/out")"
fi
[ "$(cat /sys/kernel/mm/ksm/run)" = "$before" ] || fail "run changed by a refused replay"
[ $fails -eq 0 ]
