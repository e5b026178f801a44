#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the conformance cases and compares their marks (and, where
# expected/CASE.mm.csv exists, every process's ksm_stat at each mark) with
# expected/ using `ksmsim diff` (cells the expected files list as varying
# are skipped). A case not yet recorded live is compared with the model's
# prediction in predicted/ (predict.sh) until record.sh writes expected/.
# usage: run.sh PATH/TO/ksmsim model|model61|live [CASE ...]
#        run.sh PATH/TO/ksmsim listed CASE ...
#   model:  ksmsim run --check --trace CASE --marks-csv OUT (every invariant
#           checked after every batch, too)
#   model61: the same under --kernel 6.1, compared with expected-6.1/ (marks
#           recorded on Debian's Linux 6.1 in a guest); no CASE: every case
#           that has expected-6.1/CASE.csv. A case's 'set smart_scan 0'
#           and 'set advisor_mode none' records (what 6.1 always does; the
#           model refuses the knobs, the 6.1 replay takes them as no-ops)
#           are blanked first, line numbers kept. The columns 6.1 has no file
#           for are not compared (the model under 6.1 does not write them).
#   live:   ksmsim live --trace CASE --marks-csv OUT (root; exits 77, meson's
#           "skipped", when live KSM cannot be used here)
#   listed: checks that the CASEs named are exactly cases/*.ksmt, each with
#           its expected/CASE.csv or predicted/CASE.csv (meson.build lists
#           them one test each)
# A CASE is a name (chains) or a path (cases/chains.ksmt); no CASE: all.
# Live, a case that differs is replayed again, up to KSMSIM_LIVE_ATTEMPTS
# times in all (default 3), and passes if any replay matches: the kernel is
# shared, and another process's new pages landing in the replay CPU's
# lru_add batch shift which of a burst's pages can merge (a model bug
# differs every time). Each retry is reported.
# Last line: "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: run.sh PATH/TO/ksmsim model|model61|live|listed [CASE ...]}
mode=${2:?usage: run.sh PATH/TO/ksmsim model|model61|live|listed [CASE ...]}
shift 2
all=()
for f in "$here"/cases/*.ksmt; do all+=("$(basename "$f" .ksmt)"); done
cases=()
for c in "$@"; do cases+=("$(basename "$c" .ksmt)"); done
if [ "$mode" = listed ]; then
  missing=$(comm -23 <(printf '%s\n' "${all[@]}" | sort) <(printf '%s\n' "${cases[@]}" | sort))
  extra=$(comm -13 <(printf '%s\n' "${all[@]}" | sort) <(printf '%s\n' "${cases[@]}" | sort))
  bad=0
  [ -z "$missing" ] || { echo "FAIL not listed in tests/conformance/meson.build:" $missing; bad=1; }
  [ -z "$extra" ] || { echo "FAIL listed twice, or not in cases/:" $extra; bad=1; }
  pending=()
  for c in "${all[@]}"; do
    if [ -f "$here/expected/$c.csv" ]; then continue; fi
    if [ -f "$here/predicted/$c.csv" ]; then pending+=("$c"); continue; fi
    echo "FAIL $c: no expected/$c.csv (nor predicted/$c.csv)"; bad=1
  done
  [ ${#pending[@]} -eq 0 ] || echo "note ${#pending[@]} cases not yet recorded live, compared with the model's predicted/ marks: ${pending[*]}"
  [ $bad -eq 0 ] && echo "ok   ${#all[@]} cases, each listed once with its expected (or predicted) marks"
  exit $bad
fi
for c in "${cases[@]}"; do
  if [ ! -f "$here/cases/$c.ksmt" ]; then
    echo "run.sh: no case '$c' (tests/conformance/cases/$c.ksmt)" >&2
    exit 2
  fi
done
if [ ${#cases[@]} -eq 0 ] && [ "$mode" = model61 ]; then
  for c in "${all[@]}"; do [ -f "$here/expected-6.1/$c.csv" ] && cases+=("$c"); done
  [ ${#cases[@]} -gt 0 ] || { echo "SKIP: no expected-6.1/*.csv recorded yet"; exit 77; }
fi
[ ${#cases[@]} -gt 0 ] || cases=("${all[@]}")
attempts=1
ignore=()
case $mode in
  model) sub="run --check" ;;
  model61)
    sub="run --check --kernel 6.1"
    ignore=(--ignore pages_scanned,pages_skipped,ksm_zero_pages,general_profit,ksm_process_profit,ksm_mergeable,ksm_merge_any) ;;
  live)
    sub=live
    attempts=${KSMSIM_LIVE_ATTEMPTS:-3}
    case $attempts in ''|*[!0-9]*|0) echo "run.sh: KSMSIM_LIVE_ATTEMPTS must be a positive integer" >&2; exit 2 ;; esac
    if ! why=$("$bin" live --check 2>&1); then
      echo "SKIP: live KSM is not usable here: $why"
      exit 77
    fi
    # Under the sanitizers the replayer is several times slower, and this
    # case counts on its spawn's new pages and CoWs filling one CPU's
    # lru_add batch at one trace instant: in .ci/run's sanitizer pass it
    # came out 3 pages short in every replay, while the plain pass (which
    # holds the kernel to it) matched. It stays in the plain pass.
    if [ -n "${KSMSIM_CI_SANITIZED:-}" ] && [ "${cases[*]}" = tricky_lru_spawn ]; then
      echo "SKIP: tricky_lru_spawn times the lru_add batch; the plain pass checks it"
      exit 77
    fi ;;
  *) echo "run.sh: mode must be model, model61, live or listed" >&2; exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
# The marks a case is compared with: expected/ (recorded live), or for a
# case not yet recorded, predicted/ (written by the model, predict.sh).
ref_dir() {
  if [ "$mode" = model61 ]; then
    echo "$here/expected-6.1"
  elif [ -f "$here/expected/$1.csv" ] || [ ! -f "$here/predicted/$1.csv" ]; then
    echo "$here/expected"
  else
    echo "$here/predicted"
  fi
}
# one replay and its comparison: 0 same, 1 different, 2 replay failed
attempt() {
  local c=$1 mm=() ref trace="$here/cases/$c.ksmt"
  ref=$(ref_dir "$c")
  [ -f "$ref/$c.mm.csv" ] && mm=(--mm-stats-csv "$tmp/$c.mm.csv")
  if [ "$mode" = model61 ]; then
    sed -E -e 's/^([0-9]+[[:space:]]+set[[:space:]]+smart_scan[[:space:]]+0[[:space:]]*)$/# \1/' \
      -e 's/^([0-9]+[[:space:]]+set[[:space:]]+advisor_mode[[:space:]]+none[[:space:]]*)$/# \1/' \
      "$trace" >"$tmp/$c.ksmt"
    trace="$tmp/$c.ksmt"
  fi
  if ! "$bin" $sub --trace "$trace" --marks-csv "$tmp/$c.csv" "${mm[@]}" \
      >"$tmp/$c.out" 2>&1; then
    return 2
  fi
  local differs=0
  "$bin" diff "${ignore[@]}" "$ref/$c.csv" "$tmp/$c.csv" >"$tmp/$c.diff" 2>&1 || differs=1
  if [ ${#mm[@]} -gt 0 ]; then
    "$bin" diff "${ignore[@]}" "$ref/$c.mm.csv" "$tmp/$c.mm.csv" >>"$tmp/$c.diff" 2>&1 || differs=1
  fi
  return $differs
}
for c in "${cases[@]}"; do
  n=1
  while :; do
    attempt "$c"; rc=$?
    [ $rc -eq 1 ] && [ $n -lt "$attempts" ] || break
    echo "     $c: replay $n differed ($(grep -o '^[0-9]* differences' "$tmp/$c.diff" | paste -sd+ -)); again"
    n=$((n + 1))
  done
  if [ $rc -eq 2 ]; then
    echo "FAIL $c: ksmsim $sub exited non-zero: $(tail -n 1 "$tmp/$c.out")"
    fail=$((fail + 1))
  elif [ $rc -eq 0 ]; then
    note=""
    [ "$(ref_dir "$c")" = "$here/predicted" ] && note=" (against predicted/: not yet recorded live)"
    if [ $n -gt 1 ]; then echo "ok   $c (replay $n of $attempts)$note"; else echo "ok   $c$note"; fi
    pass=$((pass + 1))
  else
    [ "$attempts" -gt 1 ] && echo "FAIL $c (all $attempts replays differ; the last:)" || echo "FAIL $c"
    grep -v '^no differences' "$tmp/$c.diff" | head -n 25 | sed 's/^/     /'
    fail=$((fail + 1))
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
