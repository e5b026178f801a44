#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Means and 95% intervals over seeds for the seeded studies.

  summarise.py large-tree [--times TIMES.tsv] [--cost-table NAME]
               [--keep OLD-RUNS.csv] SWEEP.csv... -o SUMMARY.csv --runs RUNS.csv
  summarise.py 2017 RUNS.csv [--times TIMES.tsv] [--published published.csv]
               -o SUMMARY.csv
  summarise.py 2017-runs SWEEP.csv... [--keep OLD-RUNS.csv] -o RUNS.csv
  summarise.py t-quantile P DF        (prints Student's t quantile)

Inputs are sweep.sh's CSVs (one `ksmsim run --summary-csv` row per run).
2017's checksum time is each run's checksums x its checksum_ns (the price
`ksmsim run` charged a checksum: its cost table's checksum:HASH row);
runs from a ksmsim without that column are refused: run them again.
An interval is mean +- t(0.975, n-1) x sd / sqrt(n) (Student's t, the
seeds taken as independent draws); with one run it is empty. Differences
between hashes are paired by seed: the per-seed difference in % from
jhash2, then its mean and interval. --keep carries over the rows of an
earlier runs.csv whose run (size, hash, seed) is in none of the SWEEP.csv
files: runs made on another machine, whose sweep output is gone; a run
in both is taken from SWEEP.csv. Outputs are written whole (a temporary
file renamed) or not at all; bad input is one line on stderr and exit 2.

2017 runs come in timing replicates as well as seeds (seeds-2017.sh
--timings): replicate K is a trace named ...-tK.ksmt (none: K = 0), the
seed's trace retimed. The runs of a hash are every (seed, timing); a
difference from jhash2 pairs the runs of one (seed, timing), and n counts
them (the summary's seeds and timings columns say how many of each, and
timing_range the largest range of a figure across one seed's timings:
what the phase alone moves it by). A seed's timings are not independent
draws, so seed_mean, seed_ci95_low and seed_ci95_high give the mean and
interval over the seeds' own means (each over its timings) as well.
2017-runs joins sweep.sh's CSVs of the timings into one runs.csv (the
union of their columns, a column a row lacks left empty); --keep carries
over the rows of an earlier runs.csv whose run (trace, hash) is in none
of them.
"""
import csv
import math
import os
import re
import sys

# ---------------------------------------------------------------- statistics


def _betacf(a, b, x):
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def betainc(a, b, x):
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
           + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def t_cdf(t, df):
    x = df / (df + t * t)
    tail = 0.5 * betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p, df):
    """Student's t quantile by bisection on the CDF (p in (0.5, 1))."""
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def mean_ci(values):
    """(n, mean, sd, low, high); low/high None with fewer than two values."""
    n = len(values)
    if n == 0:
        return 0, None, None, None, None
    m = sum(values) / n
    if n < 2:
        return n, m, None, None, None
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    half = t_quantile(0.975, n - 1) * sd / math.sqrt(n)
    return n, m, sd, m - half, m + half


# ---------------------------------------------------------------- I/O


def die(msg):
    print(f"summarise.py: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_args(args, **opts):
    """A mode's options (each OPTION VALUE; names as keywords, '-o' as o,
    --cost-table as cost_table) over their defaults, and its operands."""
    vals, files = dict(opts), []
    it = iter(args)
    for a in it:
        key = a.lstrip("-").replace("-", "_")
        if a.startswith("-") and key in vals:
            vals[key] = next(it, None)
        elif a.startswith("-"):
            die(f"unknown option {a}")
        else:
            files.append(a)
    return vals, files


def read_rows(path, need=()):
    try:
        with open(path, newline="") as f:
            rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    except OSError as e:
        die(f"{path}: {e.strerror}")
    if not rows:
        die(f"{path}: no rows")
    for c in need:
        if c not in rows[0]:
            die(f"{path}: no column '{c}'")
    return rows


def num(path, row, col):
    v = row.get(col, "")
    try:
        return float(v)
    except ValueError:
        die(f"{path}: column '{col}' of {row.get('trace', '?')}/{row.get('hash', '?')} "
            f"is not a number: '{v}'")


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, int) or (float(v).is_integer() and abs(v) < 1e15):
        return str(int(v))
    return f"{v:.6g}" if abs(v) < 1e-3 else f"{v:.4f}".rstrip("0").rstrip(".")


def write_csv(path, header, rows):
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            for r in rows:
                w.writerow([fmt(r.get(h)) for h in header])
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        die(f"{path}: {e.strerror}")


HASH_BITS = {"jhash2": 32, "crc32c": 32, "crc32": 32, "xxhash": 32, "xxh32": 32,
             "xxh64": 64, "xxh3": 64, "sha1": 64, "sha256": 64}
HASH_ORDER = ["jhash2", "crc32c", "xxhash", "crc32", "xxh32", "xxh64", "xxh3", "sha1", "sha256"]


def hash_key(h):
    return HASH_ORDER.index(h) if h in HASH_ORDER else len(HASH_ORDER)


def read_times(path):
    """timed-ksmsim.sh's log: (trace label, hash) -> (wall s, CPU s, peak RSS KiB)."""
    cost = {}
    if not path or not os.path.exists(path):
        return cost
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) < 5:
                continue
            a = p[4].split(" ")
            try:
                lab, h = a[a.index("--trace-label") + 1], a[a.index("--hash") + 1]
                cost[(lab, h)] = (float(p[0]), float(p[1]) + float(p[2]), float(p[3]))
            except (ValueError, IndexError):
                continue
    return cost


# ---------------------------------------------------------------- large-tree

LT_METRICS = ["cow_ksm", "pages_sharing", "pages_unshared", "avg_pages_unshared",
              "peak_pages_unshared", "unstable_tree_gib", "missed_merges",
              "unstable_corrupt_walks", "unstable_changed_after_insert", "gate_changed",
              "false_positives", "expected_false_positives", "ksmd_cpu_ms", "ksmd_cpu_pct",
              "full_scans", "pages_scanned", "wall_s", "cpu_s", "max_rss_mib"]


LT_RUN_COLUMNS = ["size_gib", "hash", "seed", "hash_bits", "cow_ksm", "pages_sharing",
                  "pages_unshared", "avg_pages_unshared", "peak_pages_unshared",
                  "unstable_tree_gib", "missed_merges", "unstable_corrupt_walks",
                  "unstable_changed_after_insert", "gate_changed", "false_positives",
                  "expected_false_positives", "ksmd_cpu_ms", "ksmd_cpu_pct",
                  "cost_table", "full_scans", "pages_scanned", "sim_us", "wall_s", "cpu_s",
                  "max_rss_mib"]


def derive(row):
    row["unstable_tree_gib"] = row["peak_pages_unshared"] * 4096 / 2 ** 30
    row["expected_false_positives"] = row["gate_changed"] * 2.0 ** -row["hash_bits"]
    row["ksmd_cpu_pct"] = 100.0 * row["ksmd_cpu_ms"] * 1000 / row["sim_us"]


def kept_runs(path):
    """An earlier runs.csv's rows, as numbers again (an empty cost column stays absent)."""
    runs = []
    for r in read_rows(path, LT_RUN_COLUMNS):
        row = {"hash": r["hash"], "cost_table": r["cost_table"]}
        if r["hash"] not in HASH_BITS:
            die(f"{path}: unknown hash '{r['hash']}'")
        for c in LT_RUN_COLUMNS:
            if c in row:
                continue
            if c in ("wall_s", "cpu_s", "max_rss_mib") and r[c] == "":
                continue
            v = num(path, r, c)
            row[c] = int(v) if c in ("size_gib", "seed", "hash_bits") else v
        # runs.csv rounds what is derived: derive it again, so a kept run
        # summarises to the same figures as when it was made
        derive(row)
        if "max_rss_mib" in row:
            row["max_rss_mib"] = round(row["max_rss_mib"] * 1024) / 1024
        runs.append(row)
    return runs


def large_tree(args):
    o, files = parse_args(args, times=None, keep=None, o=None, runs=None,
                          cost_table="built-in (sim/cost_model.c = bench/tables/costs-amd-epyc.csv)")
    times, cost_table, out, runs_out, keep = o["times"], o["cost_table"], o["o"], o["runs"], o["keep"]
    if not (files or keep) or not out or not runs_out:
        die("large-tree needs SWEEP.csv... (or --keep RUNS.csv), -o SUMMARY.csv and --runs RUNS.csv")
    cost = read_times(times)
    runs = []
    for path in files:
        for r in read_rows(path, ("trace", "hash", "gate_changed", "ksmd_cpu_ms")):
            m = re.search(r"large-tree(?:-crc)?-g(\d+)-n(\d+)", r["trace"])
            if not m:
                die(f"{path}: trace '{r['trace']}' is not a large-tree-gSIZE-nSEED trace")
            h = r["hash"]
            bits = HASH_BITS.get(h)
            if bits is None:
                die(f"{path}: unknown hash '{h}'")
            g = {c: num(path, r, c) for c in
                 ("cow_ksm", "pages_sharing", "pages_unshared", "avg_pages_unshared",
                  "peak_pages_unshared", "missed_merges", "unstable_corrupt_walks",
                  "unstable_changed_after_insert", "gate_changed", "false_positives",
                  "ksmd_cpu_ms", "full_scans", "pages_scanned", "sim_us")}
            row = {"size_gib": int(m.group(1)), "seed": int(m.group(2)), "hash": h,
                   "hash_bits": bits, **g}
            derive(row)
            row["cost_table"] = cost_table
            c = cost.get((r["trace"], h))
            if c:
                row["wall_s"], row["cpu_s"], row["max_rss_mib"] = c[0], c[1], c[2] / 1024
            runs.append(row)
    if keep:
        done = {(r["size_gib"], r["hash"], r["seed"]) for r in runs}
        runs += [r for r in kept_runs(keep) if (r["size_gib"], r["hash"], r["seed"]) not in done]
    runs.sort(key=lambda r: (r["size_gib"], hash_key(r["hash"]), r["seed"]))
    write_csv(runs_out, LT_RUN_COLUMNS, runs)
    out_rows = []
    groups = sorted({(r["size_gib"], r["hash"]) for r in runs}, key=lambda k: (k[0], hash_key(k[1])))
    for size, h in groups:
        rs = [r for r in runs if r["size_gib"] == size and r["hash"] == h]
        for met in LT_METRICS:
            vals = [r[met] for r in rs if r.get(met) is not None]
            n, m, sd, lo, hi = mean_ci(vals)
            if n:
                out_rows.append({"size_gib": size, "hash": h, "metric": met, "n": n, "mean": m,
                                 "sd": sd, "ci95_low": lo, "ci95_high": hi,
                                 "min": min(vals), "max": max(vals)})
        # the cost of a hash against jhash2's, paired by seed
        base = {r["seed"]: r for r in runs if r["size_gib"] == size and r["hash"] == "jhash2"}
        if h != "jhash2" and base:
            for met in ("ksmd_cpu_ms", "cow_ksm", "pages_sharing", "avg_pages_unshared"):
                d = [100.0 * (r[met] - base[r["seed"]][met]) / base[r["seed"]][met]
                     for r in rs if r["seed"] in base and base[r["seed"]][met]]
                n, m, sd, lo, hi = mean_ci(d)
                if n:
                    out_rows.append({"size_gib": size, "hash": h, "metric": met + "_vs_jhash2_pct",
                                     "n": n, "mean": m, "sd": sd, "ci95_low": lo,
                                     "ci95_high": hi, "min": min(d), "max": max(d)})
    write_csv(out, ["size_gib", "hash", "metric", "n", "mean", "sd", "ci95_low", "ci95_high",
                    "min", "max"], out_rows)


# ---------------------------------------------------------------- 2017

Y17_METRICS = ["cow_ksm", "avg_pages_sharing", "avg_pages_unshared", "ksmd_cpu_ms",
               "checksums", "gate_changed", "false_positives", "unstable_corrupt_walks",
               "unstable_changed_after_insert", "missed_merges", "avg_missed_merges"]
Y17_DELTAS = ["cow_ksm", "avg_pages_sharing", "avg_pages_unshared", "ksmd_cpu_ms",
              "checksum_time"]


TIMING_RE = re.compile(r"-t([0-9]+)\.ksm[tb](\.gz)?$")


def timing_of(row):
    """The timing replicate of a 2017 run: the -tK of its trace's name, else 0."""
    m = TIMING_RE.search(row.get("trace", ""))
    return int(m.group(1)) if m else 0


def y2017_runs(args):
    o, files = parse_args(args, keep=None, o=None)
    out, keep = o["o"], o["keep"]
    if not files and not keep or not out:
        die("2017-runs needs SWEEP.csv... (or --keep RUNS.csv) and -o RUNS.csv")
    header, rows, done = [], [], set()
    for path in files + ([keep] if keep else []):
        for r in read_rows(path, ["trace", "hash"]):
            if (r["trace"], r["hash"]) in done:
                if path == keep:
                    continue
                die(f"{path}: run {r['trace']}/{r['hash']} twice")
            header += [c for c in r if c not in header]
            done.add((r["trace"], r["hash"]))
            rows.append(r)
    # timing by timing, kernel-build first, then by seed and hash (a
    # timing-0 sweep's own order, whatever the order its cells ran in)
    def order(r):
        try:
            seed = int(r.get("seed", ""))
        except ValueError:
            seed = 0
        w = r.get("workload", "")
        return (timing_of(r), w != "kernel-build", w, seed, hash_key(r["hash"]))
    rows.sort(key=order)
    write_csv(out, header, rows)


def y2017(args):
    here = os.path.dirname(os.path.abspath(__file__))
    o, files = parse_args(args, times=None, o=None,
                          published=os.path.join(here, "results", "2017", "published.csv"))
    times, published, out = o["times"], o["published"], o["o"]
    if len(files) != 1 or not out:
        die("2017 needs RUNS.csv and -o SUMMARY.csv")
    # 2017's published figures
    pub = {}
    for r in read_rows(published, ("workload", "hash", "figure", "value")):
        pub[(r["workload"], r["hash"], r["figure"])] = num(published, r, "value")
    runs = read_rows(files[0], ["trace", "workload", "seed", "hash"] + Y17_METRICS)
    # each run's price of a checksum is in its own row: no cost table is read here
    if "checksum_ns" not in runs[0]:
        die(f"{files[0]}: no column 'checksum_ns' (runs of a ksmsim older than the column): "
            "run them again (analysis/seeds-2017.sh)")
    cost = read_times(times)
    by = {}
    for r in runs:
        v = {m: num(files[0], r, m) for m in Y17_METRICS}
        v["checksum_time"] = v["checksums"] * num(files[0], r, "checksum_ns")
        c = cost.get((r["trace"], r["hash"]))
        if c:
            v["wall_s"], v["cpu_s"], v["max_rss_mib"] = c[0], c[1], c[2] / 1024
        key = (r["workload"], r["hash"], (int(num(files[0], r, "seed")), timing_of(r)))
        if key in by:
            die(f"{files[0]}: {r['workload']}/{r['hash']} seed {key[2][0]} timing {key[2][1]} "
                "twice")
        by[key] = v
    out_rows = []
    wl = sorted({k[0] for k in by}, key=lambda w: (w != "kernel-build", w))
    for w in wl:
        hashes = sorted({k[1] for k in by if k[0] == w}, key=hash_key)
        for h in hashes:
            # every (seed, timing) run of this hash
            st = sorted(k[2] for k in by if k[0] == w and k[1] == h)

            def spread(runs, value):
                """How many seeds and timings RUNS span, and what timing alone
                moves: the largest range across one seed's timings."""
                per = {}
                for x in runs:
                    per.setdefault(x[0], []).append(value(x))
                moved = [max(p) - min(p) for p in per.values() if len(p) > 1]
                # a seed's timings are not independent draws (the phase may
                # move a figure little): the interval over the seeds' means
                _, sm, _, slo, shi = mean_ci([sum(p) / len(p) for p in per.values()])
                return {"seeds": len(per), "timings": len({x[1] for x in runs}),
                        "timing_range": max(moved) if moved else None, "seed_mean": sm,
                        "seed_ci95_low": slo, "seed_ci95_high": shi}
            for met in Y17_METRICS + ["wall_s", "cpu_s", "max_rss_mib"]:
                have = [x for x in st if met in by[(w, h, x)]]
                if not have:
                    continue
                n, m, sd, lo, hi = mean_ci([by[(w, h, x)][met] for x in have])
                out_rows.append({"workload": w, "hash": h, "metric": met, "n": n, "mean": m,
                                 "sd": sd, "ci95_low": lo, "ci95_high": hi,
                                 "published_2017": pub.get((w, h, met)),
                                 **spread(have, lambda x: by[(w, h, x)][met])})
            if h == "jhash2":
                continue
            for met in Y17_DELTAS:
                # paired by (seed, timing): the same trace under both hashes
                pair = [x for x in st if (w, "jhash2", x) in by and by[(w, "jhash2", x)][met]]
                pct = {x: 100.0 * (by[(w, h, x)][met] - by[(w, "jhash2", x)][met])
                       / by[(w, "jhash2", x)][met] for x in pair}
                d = [pct[x] for x in pair]
                n, m, sd, lo, hi = mean_ci(d)
                p17 = None
                a, b = pub.get((w, h, met)), pub.get((w, "jhash2", met))
                if a is not None and b:
                    p17 = 100.0 * (a - b) / b
                if met == "checksum_time":
                    p17 = pub.get(("any", h, "checksum_time_vs_jhash2_pct"))
                if n:
                    out_rows.append({"workload": w, "hash": h, "metric": met + "_vs_jhash2_pct",
                                     "n": n, "mean": m, "sd": sd, "ci95_low": lo,
                                     "ci95_high": hi, "published_2017": p17,
                                     **spread(pair, pct.get)})
    write_csv(out, ["workload", "hash", "metric", "n", "mean", "sd", "ci95_low", "ci95_high",
                    "published_2017", "seeds", "timings", "timing_range", "seed_mean",
                    "seed_ci95_low", "seed_ci95_high"], out_rows)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    if argv[1] == "large-tree":
        large_tree(argv[2:])
    elif argv[1] == "2017":
        y2017(argv[2:])
    elif argv[1] == "2017-runs":
        y2017_runs(argv[2:])
    elif argv[1] == "t-quantile" and len(argv) == 4:
        print(f"{t_quantile(float(argv[2]), float(argv[3])):.6f}")
    else:
        die(f"unknown mode '{argv[1]}' (large-tree, 2017, 2017-runs, t-quantile)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
