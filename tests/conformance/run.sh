#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the conformance cases and compares their marks (and, where
# expected/CASE.mm.csv exists, every process's ksm_stat at each mark) with
# expected/ using `ksmsim diff` (cells the expected files list as varying
# are skipped).
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
  mm=()
  [ -f "$here/expected/$c.mm.csv" ] && mm=(--mm-stats-csv "$tmp/$c.mm.csv")
  if ! "$bin" $sub --trace "$here/cases/$c.ksmt" --marks-csv "$tmp/$c.csv" "${mm[@]}" \
      >"$tmp/$c.out" 2>&1; then
    echo "FAIL $c: ksmsim $sub exited non-zero: $(tail -n 1 "$tmp/$c.out")"
    fail=$((fail + 1)); continue
  fi
  ok=1
  "$bin" diff "$here/expected/$c.csv" "$tmp/$c.csv" >"$tmp/$c.diff" 2>&1 || ok=0
  if [ ${#mm[@]} -gt 0 ]; then
    "$bin" diff "$here/expected/$c.mm.csv" "$tmp/$c.mm.csv" >>"$tmp/$c.diff" 2>&1 || ok=0
  fi
  if [ "$ok" = 1 ]; then
    echo "ok   $c"; pass=$((pass + 1))
  else
    echo "FAIL $c"; grep -v '^no differences' "$tmp/$c.diff" | head -n 25 | sed 's/^/     /'
    fail=$((fail + 1))
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
