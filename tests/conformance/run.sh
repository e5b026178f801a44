#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the conformance cases and compares their marks with expected/ using
# `ksmsim diff` (cells the expected files list as varying are skipped).
# usage: run.sh PATH/TO/ksmsim model|live [CASE ...]
#   model: ksmsim run --trace CASE --marks-csv OUT
#   live:  ksmsim live --trace CASE --marks-csv OUT (root; exits 77, meson's
#          "skipped", when live KSM cannot be used here)
# Last line: "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: run.sh PATH/TO/ksmsim model|live [CASE ...]}
mode=${2:?usage: run.sh PATH/TO/ksmsim model|live [CASE ...]}
shift 2
case $mode in
  model) sub=run ;;
  live)
    sub=live
    if ! why=$("$bin" live --check 2>&1); then
      echo "SKIP: live KSM is not usable here: $why"
      exit 77
    fi ;;
  *) echo "run.sh: mode must be model or live" >&2; exit 2 ;;
esac
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  for f in "$here"/cases/*.ksmt; do cases+=("$(basename "$f" .ksmt)"); done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for c in "${cases[@]}"; do
  if ! "$bin" $sub --trace "$here/cases/$c.ksmt" --marks-csv "$tmp/$c.csv" >"$tmp/$c.out" 2>&1; then
    echo "FAIL $c: ksmsim $sub exited non-zero: $(tail -n 1 "$tmp/$c.out")"
    fail=$((fail + 1)); continue
  fi
  if "$bin" diff "$here/expected/$c.csv" "$tmp/$c.csv" >"$tmp/$c.diff" 2>&1; then
    echo "ok   $c"; pass=$((pass + 1))
  else
    echo "FAIL $c"; head -n 25 "$tmp/$c.diff" | sed 's/^/     /'; fail=$((fail + 1))
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
