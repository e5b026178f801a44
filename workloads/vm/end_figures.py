# SPDX-License-Identifier: GPL-2.0-or-later
"""What experiment.sh and fit-guests-tcg.sh read from a replay of a guest
trace: its end mark (the last vmI-end, when the last guest's workload was
done; a generated trace's 'end') and the mean of a column over the 1 s
samples up to it."""
import csv
import re


def rows(path):
    return list(csv.DictReader(l for l in open(path) if not l.startswith("#")))


def at_end(samples_csv, marks_csv):
    """(the end mark's row, mean(COLUMN) over the samples up to it)."""
    ts, marks = rows(samples_csv), rows(marks_csv)
    ends = [m for m in marks if re.fullmatch(r"vm[0-9]+-end", m["label"])] or \
        [m for m in marks if m["label"] == "end"]
    m = ends[-1]
    t = int(m["t_us"])
    samp = [r for r in ts if 0 < int(r["trace_t_us"]) <= t]

    def mean(col):
        return sum(float(r[col]) for r in samp) / len(samp) if samp else 0.0
    return m, mean
