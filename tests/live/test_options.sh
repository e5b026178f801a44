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
refused "--base wants .*, not '0x1000'" "${t[@]}" --base 0x1000	# decimal only, like every option
refused "--base wants .*, not '4097'" "${t[@]}" --base 4097		# not page aligned
refused "--base wants .*, not '140737488355328'" "${t[@]}" --base 140737488355328	# 2^47
refused "--cpu wants .*, not '-1'" "${t[@]}" --cpu -1
refused "--cpu wants .*, not ' 0'" "${t[@]}" --cpu " 0"
refused "--cpu wants .*, not '100000'" "${t[@]}" --cpu 100000
refused "--khugepaged wants .*, not 'sleep'" "${t[@]}" --khugepaged sleep
refused "--khugepaged needs a value" "${t[@]}" --khugepaged
refused "--settle-timeout wants .*, not '0'" "${t[@]}" --settle-timeout 0
refused "--settle-timeout wants .*, not 'inf'" "${t[@]}" --settle-timeout inf
refused "--settle-timeout wants .*, not '1s'" "${t[@]}" --settle-timeout 1s
refused "--settle-sleep wants milliseconds, 10 to 60000, not '9'" "${t[@]}" --settle-sleep 9
refused "--settle-sleep wants .*, not '60001'" "${t[@]}" --settle-sleep 60001
refused "unknown option '--frob'" "${t[@]}" --frob 1
refused "--cpu needs a value" "${t[@]}" --cpu
refused "--trace FILE is required" --marks-csv "$tmp/m.csv"
refused "bad.ksmt:3:" --trace "$tmp/bad.ksmt" --marks-csv "$tmp/m.csv"
refused "nosuch.ksmt" --trace "$tmp/nosuch.ksmt"
refused "--mib wants .*, not '0'" --measure-scan-rate --mib 0
refused "--mib wants .*, not '65537'" --measure-scan-rate --mib 65537
refused "--mib wants .*, not '010x'" --measure-scan-rate --mib 010x
refused "--measure-scan-rate takes --mib and --csv only" --measure-scan-rate --trace x
[ -e "$tmp/m.csv" ] && { echo "FAIL a refused replay wrote its marks file"; fails=$((fails + 1)); }
[ $fails -eq 0 ]
