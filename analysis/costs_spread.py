#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The page cost figures with their spread: `ksmsim bench costs` run RUNS
times, each a separate process (one process's median hides what moves
between processes: page placement, frequency, the other jobs).

  costs_spread.py --ksmsim PATH [--runs N] [--reps N] [--cold-mib N]
                  [--out DIR]

Writes, each whole or not at all:
  DIR/costs.csv         the cost table as `bench costs --csv` writes it
                        (`ksmsim run --costs-csv` reads it): per row the
                        median over the runs of each run's hot and cold
                        figure, GiB/s and the ratio to jhash2 from those
  DIR/costs-spread.csv  per row: runs, and the min, median and max over
                        the runs of the hot and the cold ns a page; its
                        first lines name the CPU, the load before and
                        after, the date and the command

Bad options: one line on stderr, exit 2, nothing written. A run that
fails: its stderr, exit 1, nothing written.
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time

HEADER = ("name,kind,bits,hot_ns_per_page,hot_gib_s,cold_ns_per_page,"
          "cold_gib_s,ratio_to_jhash2")
PAGE = 4096
GIB = 1024.0 ** 3


class Usage(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Usage(message)


def positive(lo, hi):
    def conv(s):
        try:
            x = int(s, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{s}' is not a whole number")
        if not lo <= x <= hi:
            raise argparse.ArgumentTypeError(f"{x} is not in {lo}..{hi}")
        return x
    return conv


def cpu_model():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def load1():
    try:
        with open("/proc/loadavg") as fh:
            return fh.read().split()[0]
    except OSError:
        return "?"


def gib_s(ns):
    return PAGE / ns * 1e9 / GIB if ns > 0 else 0.0


def one_run(ksmsim, reps, cold_mib, tmp, i):
    out = os.path.join(tmp, f"run{i}.csv")
    p = subprocess.run([ksmsim, "bench", "costs", "--reps", str(reps),
                        "--cold-mib", str(cold_mib), "--csv", out],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise RuntimeError(f"ksmsim bench costs (run {i + 1}) exited {p.returncode}")
    with open(out, newline="") as fh:
        text = fh.read()
    if text.splitlines()[0] != HEADER:
        raise RuntimeError(f"run {i + 1}: the CSV's header is not the cost table's")
    return list(csv.DictReader(io.StringIO(text)))


def combine(runs):
    """Per row name, in the first run's order: the hot and cold figures of every run."""
    order = [r["name"] for r in runs[0]]
    for k, rows in enumerate(runs[1:], 2):
        if [r["name"] for r in rows] != order:
            raise RuntimeError(f"run {k} measured other rows than run 1")
    out = []
    for j, name in enumerate(order):
        first = runs[0][j]
        hot = [float(rows[j]["hot_ns_per_page"]) for rows in runs]
        cold = [float(rows[j]["cold_ns_per_page"]) for rows in runs]
        out.append((first["name"], first["kind"], first["bits"], hot, cold))
    return out


def q(s):
    return '"' + str(s).replace('"', '""') + '"'


def table_text(rows):
    jh = [statistics.median(h) for n, _, _, h, _ in rows if n == "jhash2"]
    jh = jh[0] if jh else 0.0
    lines = [HEADER]
    for name, kind, bits, hot, cold in rows:
        h, c = statistics.median(hot), statistics.median(cold)
        cells = (name, kind, bits, f"{h:.2f}", f"{gib_s(h):.3f}", f"{c:.2f}",
                 f"{gib_s(c):.3f}", f"{h / jh if jh else 0:.4f}")
        lines.append(",".join(q(x) for x in cells))
    return "\n".join(lines) + "\n"


def spread_text(rows, meta):
    lines = [f"# {m}" for m in meta]
    lines.append("name,kind,bits,runs,hot_ns_min,hot_ns_median,hot_ns_max,"
                 "cold_ns_min,cold_ns_median,cold_ns_max")
    for name, kind, bits, hot, cold in rows:
        cells = [name, kind, bits, str(len(hot))]
        for xs in (hot, cold):
            cells += [f"{min(xs):.2f}", f"{statistics.median(xs):.2f}", f"{max(xs):.2f}"]
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


def write_whole(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".costs-")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def main(argv):
    ap = Parser(prog="costs_spread.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--ksmsim", required=True, help="the ksmsim binary")
    ap.add_argument("--runs", type=positive(1, 100), default=5,
                    help="separate bench processes (default 5)")
    ap.add_argument("--reps", type=positive(1, 1000), default=3,
                    help="each run's --reps (default 3)")
    ap.add_argument("--cold-mib", type=positive(64, 1 << 20), default=256,
                    help="each run's --cold-mib (default 256)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "results"),
                    help="folder for costs.csv and costs-spread.csv (default analysis/results)")
    try:
        a = ap.parse_args(argv)
        if not (os.path.isfile(a.ksmsim) and os.access(a.ksmsim, os.X_OK)):
            raise Usage(f"--ksmsim {a.ksmsim}: not an executable file")
        if not os.path.isdir(a.out):
            raise Usage(f"--out {a.out}: not a folder")
    except Usage as e:
        print(f"costs_spread.py: {e}", file=sys.stderr)
        return 2
    t0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    before = load1()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            runs = [one_run(a.ksmsim, a.reps, a.cold_mib, tmp, i) for i in range(a.runs)]
        rows = combine(runs)
    except (RuntimeError, OSError, IndexError) as e:
        print(f"costs_spread.py: {e}", file=sys.stderr)
        return 1
    meta = [f"analysis/costs_spread.py --runs {a.runs} --reps {a.reps} --cold-mib {a.cold_mib}: "
            f"{a.runs} separate 'ksmsim bench costs' processes, each figure a process's "
            f"median of {a.reps} reps",
            f"{cpu_model()}, {os.cpu_count()} CPUs, {t0}, load {before} before and "
            f"{load1()} after (1-minute average; the machine was shared)"]
    write_whole(os.path.join(a.out, "costs-spread.csv"), spread_text(rows, meta))
    write_whole(os.path.join(a.out, "costs.csv"), table_text(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
