#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ksmsim live refuses bad options and bad traces with exit 2 and a message
# naming the option or file:line, before it touches KSM: every case here
# fails while parsing, so this runs anywhere, without root, in parallel.
set -u
bin=${1:?usage: test_options.sh PATH/TO/ksmsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
printf 'ksmtrace 1\n0 spawn a\n0 mark m\n' >"$tmp/ok.ksmt"
printf 'ksmtrace 1\n0 spawn a\n0 frobnicate a\n' >"$tmp/bad.ksmt"
refused() {	# refused PATTERN ARGS...: exit 2, PATTERN on stderr
  local want=$1; shift
  "$bin" live "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -eq 2 ] && grep -q -- "$want" "$tmp/err"; then
    echo "ok   live $*"
  else
    echo "FAIL live $*: exit $rc, wanted 2 and '$want' in:"; sed 's/^/     /' "$tmp/err"
    fails=$((fails + 1))
  fi
}
t=(--trace "$tmp/ok.ksmt" --marks-csv "$tmp/m.csv")
refused "bad --base '0x1000'" "${t[@]}" --base 0x1000	# decimal only, like every option
refused "bad --base '4097'" "${t[@]}" --base 4097		# not page aligned
refused "bad --base '140737488355328'" "${t[@]}" --base 140737488355328	# 2^47
refused "bad --cpu '-1'" "${t[@]}" --cpu -1
refused "bad --cpu ' 0'" "${t[@]}" --cpu " 0"
refused "bad --cpu '100000'" "${t[@]}" --cpu 100000
refused "bad --khugepaged 'sleep'" "${t[@]}" --khugepaged sleep
refused "--khugepaged needs a value" "${t[@]}" --khugepaged
refused "bad --settle-timeout '0'" "${t[@]}" --settle-timeout 0
refused "bad --settle-timeout 'inf'" "${t[@]}" --settle-timeout inf
refused "bad --settle-timeout '1s'" "${t[@]}" --settle-timeout 1s
refused "unknown option '--frob'" "${t[@]}" --frob 1
refused "--cpu needs a value" "${t[@]}" --cpu
refused "usage: ksmsim live" --marks-csv "$tmp/m.csv"
refused "bad.ksmt:3:" --trace "$tmp/bad.ksmt" --marks-csv "$tmp/m.csv"
refused "nosuch.ksmt" --trace "$tmp/nosuch.ksmt"
refused "bad --mib '0'" --measure-scan-rate --mib 0
refused "bad --mib '65537'" --measure-scan-rate --mib 65537
refused "bad --mib '010x'" --measure-scan-rate --mib 010x
refused "unknown option '--trace' with --measure-scan-rate" --measure-scan-rate --trace x
[ -e "$tmp/m.csv" ] && { echo "FAIL a refused replay wrote its marks file"; fails=$((fails + 1)); }
[ $fails -eq 0 ]
