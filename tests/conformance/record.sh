#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Records expected/CASE.csv (marks) and expected/CASE.mm.csv (each process's
# /proc/PID/ksm_stat at each mark) by replaying cases/CASE.ksmt on the live
# kernel RUNS times (default 3) with `ksmsim live`. Cells that are not identical in
# every run are listed in a "cells that differ between runs:" comment, which
# `ksmsim diff` skips. A new case also goes into meson.build's list.
# usage: record.sh PATH/TO/ksmsim CASE...   (root; RUNS=N to change the count)
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${1:?usage: record.sh PATH/TO/ksmsim CASE...}")
shift
runs=${RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here" || exit 2
status=0
for c in "$@"; do
  c=$(basename "$c" .ksmt)
  ok=1
  for i in $(seq 1 "$runs"); do
    if ! "$bin" live --trace "cases/$c.ksmt" --marks-csv "$tmp/$c.$i.csv" \
        --mm-stats-csv "$tmp/$c.mm.$i.csv" 2>"$tmp/$c.err"; then
      echo "FAIL $c: run $i: $(tail -n 1 "$tmp/$c.err")"; ok=0; status=1; break
    fi
  done
  [ "$ok" = 1 ] || continue
  for kind in "" ".mm"; do
  files=()
  for i in $(seq 1 "$runs"); do files+=("$tmp/$c$kind.$i.csv"); done
  python3 "$here/merge_runs.py" "expected/$c$kind.csv" "${files[@]}" || status=1
  done
done
exit $status
