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
  python3 - "$runs" "$tmp/$c$kind" "expected/$c$kind.csv" <<'PY'
import csv, sys
runs, stem, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
files = []
for i in range(1, runs + 1):
    lines = open(f"{stem}.{i}.csv").read().splitlines()
    files.append(([l for l in lines if l.startswith("#")],
                  list(csv.reader(l for l in lines if not l.startswith("#")))))
# ksmd_cpu_ms is this machine's CPU time, not a count the model must
# reproduce anywhere: the expected files leave it out (sim/MODEL.md,
# "Calibrating the cost table", holds the model's CPU to the live one).
for _, rs in files:
    if rs and "ksmd_cpu_ms" in rs[0]:
        k = rs[0].index("ksmd_cpu_ms")
        for row in rs:
            del row[k]
comments, rows = files[0]
comments = [l for l in comments if not l.startswith("# ksmd_cpu_ms")]
header = rows[0]
varying = []
mm = header.index("mm") if "mm" in header else None
for r, row in enumerate(rows[1:], 1):
    key = row[0] if mm is None else f"{row[0]}@{row[mm]}"
    if any(len(f[1]) != len(rows) for f in files):
        sys.exit(f"{out}: the runs wrote different numbers of rows")
    for c, col in enumerate(header[1:], 1):
        vals = [f[1][r][c] for f in files]
        if len(set(vals)) > 1:
            varying.append(f"{key}.{col}={'/'.join(vals)}")
with open(out, "w") as f:
    for l in comments:
        f.write(l + "\n")
    if varying:
        f.write(f"# live kernel, {runs} runs: cells that differ between runs: "
                + ", ".join(varying) + "\n")
    else:
        f.write(f"# live kernel, {runs} runs: every cell identical in all runs\n")
    w = csv.writer(f, lineterminator="\n")
    for row in rows:
        w.writerow(row)
print(f"recorded {out}: " + (f"{len(varying)} varying cells" if varying else "identical"))
PY
  done
done
exit $status
