#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""merge_runs.py OUT RUN.csv...: the runs of one case (marks or ksm_stat rows,
recorded live by record.sh on the host or record-6.1.sh in a 6.1 guest) as
one expected file. Cells not identical in every run are listed in a "cells
that differ between runs:" comment, which `ksmsim diff` skips."""
import csv
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: merge_runs.py OUT RUN.csv...")
    out, paths = sys.argv[1], sys.argv[2:]
    runs = len(paths)
    files = []
    for p in paths:
        lines = open(p).read().splitlines()
        files.append(([l for l in lines if l.startswith("#")],
                      list(csv.reader(l for l in lines if not l.startswith("#")))))
    # ksmd_cpu_ms is the recording machine's (or guest's) CPU time, not a
    # count the model must reproduce anywhere: the expected files leave it
    # out (sim/MODEL.md, "Calibrating the cost table", holds the model's CPU
    # to the live one).
    for _, rs in files:
        if rs and "ksmd_cpu_ms" in rs[0]:
            k = rs[0].index("ksmd_cpu_ms")
            for row in rs:
                del row[k]
    comments, rows = files[0]
    comments = [l for l in comments if not l.startswith("# ksmd_cpu_ms")]
    header = rows[0]
    for f in files:
        if f[1][0] != header:
            sys.exit(f"{out}: the runs wrote different headers")
    if any(len(f[1]) != len(rows) for f in files):
        sys.exit(f"{out}: the runs wrote different numbers of rows")
    varying = []
    mm = header.index("mm") if "mm" in header else None
    for r, row in enumerate(rows[1:], 1):
        key = row[0] if mm is None else f"{row[0]}@{row[mm]}"
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


if __name__ == "__main__":
    main()
