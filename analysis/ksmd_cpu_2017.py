#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The model beside Timofey Titovets' 2017 htop figures: ksmd's share of a
CPU under jhash2 and under xxhash at sleep_millisecs 20 and 1.

  ksmd_cpu_2017.py --ksmsim PATH [--workload NAME] [--scale F] [--seed N]
                   [--pages-to-scan N] [--prices CSV --table CSV] [--out FILE]

He read ksmd's CPU in htop on a Xeon E5-2420 with 2017's defaults
(pages_to_scan 100) and did not say what ran; here one 'ksmsim gen'
workload (default kernel-build, the 2017 thread's, at --scale 0.25: four
1 GiB guests for 450 s) is replayed under each hash and sleep with Linux
6.1's ksmd (--kernel 6.1: the stable tree before the checksum and no
smart scan, as in 2017's kernels) and --batch-time, so that a batch takes
its modelled CPU time. The checksum prices are the built-in table's
(fitted on AMD EPYC), not his CPU's; with --prices (cpu/checksum-prices.csv:
ksmd's own jhash2 and XXH64 prices, ns_median) and --table (the built-in
table, bench/tables/costs-amd-epyc.csv) each cell runs again on that table
with its checksum:jhash2 and checksum:xxhash rows replaced by them.

Writes FILE (default analysis/results/2017/ksmd-cpu-htop.csv) whole: a
row per sleep and hash with ksmd's modelled CPU time, the simulated time
and their ratio in per cent of one CPU. Bad options: one line on stderr,
exit 2, nothing written; a failed run: exit 1, nothing written.
"""
import argparse
import csv
import io
import os
import subprocess
import sys
import tempfile

HASHES = ("jhash2", "xxhash")
SLEEPS = (20, 1)
WORKLOADS = ("kernel-build", "iozone", "number-crunching", "vm-clones")
COLS = ("prices", "workload", "scale", "seed", "kernel", "pages_to_scan", "sleep_millisecs", "hash",
        "checksum_ns", "checksums", "full_scans", "ksmd_cpu_ms", "sim_s", "ksmd_pct")


class Usage(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Usage(message)


def number(kind, lo, hi):
    def conv(s):
        try:
            x = kind(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{s}' is not a number")
        if not (lo < x <= hi if kind is float else lo <= x <= hi):
            raise argparse.ArgumentTypeError(f"{s} is out of range")
        return x
    return conv


def cost_table(prices, table):
    """TABLE's text with its checksum:jhash2 and checksum:xxhash rows set to
    PRICES' jhash2 and xxh64 ns_median (Usage on a file that lacks them)."""
    try:
        with open(prices, newline="") as fh:
            rd = csv.DictReader(l for l in fh if not l.startswith("#"))
            if not {"checksum", "ns_median"} <= set(rd.fieldnames or ()):
                raise Usage(f"--prices {prices}: no checksum and ns_median columns")
            p = {r["checksum"]: r["ns_median"] for r in rd}
        with open(table) as fh:
            lines = fh.read().splitlines()
    except OSError as e:
        raise Usage(f"{e.filename}: {e.strerror}")
    want = {"checksum:jhash2": p.get("jhash2"), "checksum:xxhash": p.get("xxh64")}
    if None in want.values():
        raise Usage(f"--prices {prices}: no jhash2 or xxh64 row")
    out, seen = [], set()
    for line in lines:
        term = line.split(",", 1)[0]
        if term in want:
            line, _ = f"{term},{want[term]}", seen.add(term)
        out.append(line)
    if seen != set(want):
        raise Usage(f"--table {table}: no checksum:jhash2 or checksum:xxhash row")
    return "\n".join(out) + "\n"


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise RuntimeError(f"{' '.join(cmd[1:3])} exited {p.returncode}")
    return p.stdout


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = Parser(prog="ksmd_cpu_2017.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--ksmsim", required=True, help="the ksmsim binary")
    ap.add_argument("--workload", default="kernel-build", choices=WORKLOADS)
    ap.add_argument("--scale", type=number(float, 0, 1000), default=0.25)
    ap.add_argument("--seed", type=number(int, 0, 2**63 - 1), default=1)
    ap.add_argument("--pages-to-scan", type=number(int, 1, 10**7), default=100,
                    help="ksmd's pages a batch (default 100, 2017's default)")
    ap.add_argument("--prices", help="checksum-prices.csv (needs --table)")
    ap.add_argument("--table", help="the cost table whose checksum rows --prices replaces")
    ap.add_argument("--out", default=os.path.join(here, "results", "2017", "ksmd-cpu-htop.csv"))
    try:
        a = ap.parse_args(argv)
        if not (os.path.isfile(a.ksmsim) and os.access(a.ksmsim, os.X_OK)):
            raise Usage(f"--ksmsim {a.ksmsim}: not an executable file")
        if bool(a.prices) != bool(a.table):
            raise Usage("--prices and --table go together")
        tables = [("built-in", None)]
        if a.prices:
            tables.append(("ksmd's own", cost_table(a.prices, a.table)))
        if not os.path.isdir(os.path.dirname(os.path.abspath(a.out))):
            raise Usage(f"--out {a.out}: its folder does not exist")
    except Usage as e:
        print(f"ksmd_cpu_2017.py: {e}", file=sys.stderr)
        return 2
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            trace = os.path.join(tmp, "trace.ksmb")
            run([a.ksmsim, "gen", a.workload, "--scale", repr(a.scale), "--seed", str(a.seed),
                 "-o", trace])
            for (label, text), sleep, h in ((t, s_, h_) for t in tables for s_ in SLEEPS
                                            for h_ in HASHES):
                summ = os.path.join(tmp, f"{h}-{sleep}.csv")
                extra = []
                if text is not None:
                    extra = ["--costs-csv", os.path.join(tmp, "table.csv")]
                    with open(extra[1], "w") as fh:
                        fh.write(text)
                run([a.ksmsim, "run", "--trace", trace, "--kernel", "6.1", "--batch-time",
                     "--hash", h, "--pages-to-scan", str(a.pages_to_scan),
                     "--sleep-millisecs", str(sleep), "--no-ideal", "--quiet",
                     "--summary-csv", summ] + extra)
                with open(summ, newline="") as fh:
                    s = next(csv.DictReader(fh))
                sim_s = int(s["sim_us"]) / 1e6
                cpu = float(s["ksmd_cpu_ms"])
                rows.append((label, a.workload, repr(a.scale), a.seed, "6.1", a.pages_to_scan,
                             sleep, h, s["checksum_ns"], s["checksums"], s["full_scans"],
                             f"{cpu:.1f}", f"{sim_s:.1f}", f"{100 * cpu / 1000 / sim_s:.3f}"))
    except (RuntimeError, OSError, StopIteration, KeyError, ValueError) as e:
        print(f"ksmd_cpu_2017.py: {e}", file=sys.stderr)
        return 1
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLS)
    w.writerows(rows)
    d = os.path.dirname(os.path.abspath(a.out))
    fd, tmpf = tempfile.mkstemp(dir=d, prefix=".ksmd-cpu-")
    with os.fdopen(fd, "w") as fh:
        fh.write(buf.getvalue())
    os.replace(tmpf, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
