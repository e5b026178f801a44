#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Renders analysis/results/README.md from README.md.in and the CSVs (and
every other README.md.in under the results, e.g. exposure/'s, the same way).

  render_results.py [--results DIR] [--check]

Every figure the page quotes from a result is a placeholder in the
template, {{EXPR}} or {{EXPR|FORMAT}}: EXPR a Python expression over the
helpers below, FORMAT a format spec (",.0f", "+.1f", ".2e"; default: the
value as the CSV holds it). Helpers:

  v(FILE, COLUMN, KEY=VALUE...)   the COLUMN of the one row of FILE (a CSV
                                  under DIR) whose KEY columns hold VALUEs
  y17(WORKLOAD, HASH, METRIC[, COLUMN])   2017/seeds/summary.csv (mean)
  y17k(KERNEL, WORKLOAD, HASH, METRIC[, COLUMN])  the same under KERNEL
                                  ('6.18': 2017/seeds/, '6.1': 2017/seeds-6.1/)
  runs17(KERNEL, WORKLOAD[, HASH, METRIC])  "S seeds x T timings (n = N)"
  trange(KERNEL, WORKLOAD, HASH, METRIC)  what the timing replicates alone
                                  move a figure by (its timing_range)
  trange_max(KERNEL)              the most they move a difference from jhash2
  pmk(KERNEL, WORKLOAD, HASH, METRIC, FORMAT)  "MEAN (LOW to HIGH)": over
                                  every run, the interval over the seeds' means
  lt(SIZE, HASH, METRIC[, COLUMN])        large-tree/summary.csv (mean)
  lt_runs(COLUMN, KEY=VALUE...)           every matching large-tree run
  ci(LOW, HIGH, FORMAT)           "LOW to HIGH", each formatted
  table17(), table_lt(), table_lt_cost()  whole Markdown tables
  pol(NAME, ROW, COLUMN), pol_pct(...)    policies/NAME.csv by row name
                                  ('kernel/xxhash', 'pick', 'no-gate', ...)
  table_policies(), table_policies_real(), table_pairs(), table_guests()
  gtab/gnum(FILE, WORKLOAD, HASH, SOURCE, COLUMN)  a cell of the table
                                  workloads/vm/experiment.sh prints (guests/*.txt)
  med(VALUES)                     the median
  probe_sizes(), probe_top(KNOBS), xp(SIZE, KNOBS, COLUMN),
  xp_ratio(COLUMN, KEY=VALUE...)  exposure/probe.csv (ratio: in passes)
  table_probe(), table_probe_cells(), table_saving(),
  table_saving_recorded(), table_exposure_times(), table_channels(), table_channels_by_size(), dur(SECONDS)
                                  the exposure page's tables
  lt_estimate(SIZE, KEY)          large-tree/estimate-SIZE.txt: need_gib,
                                  at_pages, pages_mapped, limit_gib, all_gib
  costs_row(TERM)                 a row of bench/tables/costs-amd-epyc.csv,
                                  the table built into the model (ns)
  heldout_ratios()                model/live of its held-out cases over 200 ms
                                  (bench/tables/heldout-amd-epyc.csv)
  ks, ksr, table_ks, ps, psr, table_policies_seeds, ...   sections 5 and 8
                                  over their seeds (render_reps.py)
  pr, pr_rng, pr_within, table_pred_reps, ...   section 11 over its live
                                  replicates (render_predict.py)

On the main page, a range (a placeholder calling rng, min or max) must cover every row it could have:
the rows it reads are recorded, and rendering fails (exit 2) when (a) it
read some files of a family (CSVs of one folder whose names share the part
before the first '_', with the same header: collide/ksm.csv,
collide/ksm_crc_adversarial.csv, ...) but not all, or (b) reading one file only,
the one key it varied (workload=kernel-build, iozone) left out a value that
rows agreeing on its other keys hold. part(VALUES) (or rng_part(VALUES,
SPEC)) quotes a stated subset on purpose: the text must say which.

--check renders in memory and compares with README.md: exit 1 naming the
first line that differs (a figure typed by hand, or a CSV that changed
since the page was rendered). Errors (a missing file, column or row, a
placeholder that does not evaluate, a cell that is not a finite number, a
--results that is not a folder or holds no README.md.in) are one line on
stderr and exit 2.
"""
import csv
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_cache = {}
RES = os.path.join(HERE, "results")


class RenderError(Exception):
    pass


def _rows(path, base=None):
    """The rows of PATH under the results (or under BASE), read once."""
    full = os.path.join(base or RES, path)
    if full not in _cache:
        try:
            with open(full, newline="") as f:
                _cache[full] = list(csv.DictReader(l for l in f if not l.startswith("#")))
        except OSError as e:
            raise RenderError(f"{path}: {e.strerror}")
    return _cache[full]


def _val(s):
    try:
        return int(s)
    except ValueError:
        pass
    try:
        x = float(s)
    except ValueError:
        return s
    # 1e400 reads as inf, and would render as "over inf seeds"
    if not math.isfinite(x):
        raise RenderError(f"a cell '{s}' is not a finite number")
    return x


_reads = []     # (path, selector) of every _match while one placeholder renders


def _match(path, sel):
    rows = _rows(path)
    out = [r for r in rows if all(str(r.get(k)) == str(val) for k, val in sel.items())]
    _reads.append((path, tuple(sorted((k, str(val)) for k, val in sel.items()))))
    return out


def _family(path):
    d, b = os.path.split(path)
    return d, re.sub(r"\.csv$", "", b).split("_", 1)[0]


def _header(path):
    with open(os.path.join(RES, path), newline="") as fh:
        for line in fh:
            if not line.startswith("#"):
                return line.strip()
    return ""


def scope_errors(reads):
    """What a range left out of the rows it could have read (module doc, (a) and (b))."""
    errs = []
    paths = sorted({p for p, _ in reads})
    for d, fam in sorted({_family(p) for p in paths}):
        read = [p for p in paths if _family(p) == (d, fam)]
        hdr = _header(read[0])
        folder = os.path.join(RES, d)
        sibs = sorted(os.path.join(d, b) for b in os.listdir(folder)
                      if b.endswith(".csv") and _family(os.path.join(d, b)) == (d, fam))
        left = [x for x in sibs if x not in read and _header(x) == hdr]
        if left:
            errs.append(f"a range over {', '.join(read)} leaves out {', '.join(left)}")
    # (b) only where one file is read: across files, the files are the range
    for p in paths if len(paths) == 1 else ():
        sels = [dict(sel) for q, sel in reads if q == p]
        keys = sorted({k for s_ in sels for k in s_})
        varied = [k for k in keys if len({s_.get(k) for s_ in sels}) > 1]
        # a range along one key; two varied together (a difference between
        # hashes, per workload) is no range along either
        for k in varied if len(varied) == 1 else ():
            used = {s_.get(k) for s_ in sels}
            # the rows agreeing with every selector on the keys that stayed fixed
            fixed = {j: sels[0].get(j) for j in keys
                     if j != k and len({s_.get(j) for s_ in sels}) == 1}
            have = {r.get(k) for r in _rows(p)
                    if all(str(r.get(j)) == val for j, val in fixed.items() if val is not None)}
            left = sorted(x for x in have - used if x not in (None, ""))
            if left:
                errs.append(f"a range over {p} with {k} in {sorted(used)} leaves out "
                            f"{k}={', '.join(left)}")
    return errs


def v(path, col, **sel):
    rows = _match(path, sel)
    if len(rows) != 1:
        raise RenderError(f"{path}: {len(rows)} rows match {sel}, not 1")
    if col not in rows[0]:
        raise RenderError(f"{path}: no column '{col}'")
    if rows[0][col] == "":
        raise RenderError(f"{path}: column '{col}' is empty where {sel}")
    return _val(rows[0][col])


def vals(path, col, **sel):
    """The COLUMN of every row of FILE whose KEY columns hold VALUEs."""
    rows = _match(path, sel)
    if not rows:
        raise RenderError(f"{path}: no rows match {sel}")
    return [_val(r[col]) for r in rows]


KSM_FILES = ("collide/ksm.csv", "collide/ksm_crc_adversarial.csv", "collide/ksm_number_crunching.csv")


def table_ksm(path):
    """A `collide ksm` CSV as the page's table (counts at the end of the run)."""
    cols = (("false positives", "false_positives"), ("extra unstable inserts",
            "extra_unstable_inserts"), ("corrupt unstable walks", "unstable_corrupt_walks"),
            ("changed after insert", "unstable_changed_after_insert"), ("CoW", "cow_ksm"),
            ("missed merges", "missed_merges"), ("peak unshared", "peak_pages_unshared"),
            ("ksmd CPU ms (modelled)", "ksmd_cpu_ms"))
    out = ["| hash | " + " | ".join(c[0] for c in cols) + " |",
           "|---|" + "---:|" * len(cols)]
    for r in _rows(path):
        out.append(f"| {r['hash']} | " + " | ".join(f(_val(r[c]), ",.0f") for _, c in cols) + " |")
    return "\n".join(out)


def y17(w, h, metric, col="mean"):
    return v("2017/seeds/summary.csv", col, workload=w, hash=h, metric=metric)


def pub17(w, h, metric):
    """2017's published figure (or difference) beside ours, None where it has none."""
    rows = _match("2017/seeds/summary.csv", {"workload": w, "hash": h, "metric": metric})
    if len(rows) != 1:
        raise RenderError(f"2017/seeds/summary.csv: {len(rows)} rows for {w}/{h}/{metric}")
    x = rows[0].get("published_2017", "")
    return _val(x) if x != "" else None


def _bench_table(name):
    """The rows of bench/tables/NAME (the live fits, outside the results)."""
    return _rows(os.path.join("bench", "tables", name), os.path.join(HERE, ".."))


def costs_row(term):
    """A row of the cost table built into the model (sim/cost_model.c is it)."""
    got = [r["ns"] for r in _bench_table("costs-amd-epyc.csv") if r.get("term") == term]
    if len(got) != 1:
        raise RenderError(f"bench/tables/costs-amd-epyc.csv: {len(got)} rows '{term}'")
    return _val(got[0])


def heldout_ratios():
    """model/live of the held-out cases over the 200 ms floor
    (bench/tables/heldout-amd-epyc.csv, bench/cpu_heldout.sh)."""
    got = [_val(r["ratio"]) for r in _bench_table("heldout-amd-epyc.csv")
           if r.get("live_ms_median") and _val(r["live_ms_median"]) >= 200]
    if not got:
        raise RenderError("bench/tables/heldout-amd-epyc.csv: no case over 200 ms")
    return got


def ns_model(h):
    """The model's built-in ns per cold page (as 2017/tables.csv records it)."""
    return v("2017/tables.csv", "checksum_ns_per_page", workload="kernel-build", hash=h)


def ns_table(h):
    """What the built-in cost table (fitted to the live ksmd) charges a checksum
    of hash h, ns a page: its price in the table cpu/checksum_share.sh used."""
    return v("cpu/checksum_share.csv", "checksum_ns", workload="kernel-build", hash=h)


def share(h):
    """The checksum's share of modelled ksmd CPU under hash h, per cent, over
    the workloads of cpu/checksum_share.csv."""
    # from the two times, not the 3-digit share column: 0.3445 prints 34%
    return [100 * c / k for c, k in zip(vals("cpu/checksum_share.csv", "checksum_ms", hash=h),
                                        vals("cpu/checksum_share.csv", "ksmd_cpu_ms", hash=h))]


def ns_meas(h):
    """This machine's measured ns per cold page (costs.csv)."""
    return v("costs.csv", "cold_ns_per_page", name=h)


LTC = "large-tree/crc/runs.csv"


def ltc_runs(size, h, col):
    """COLUMN of every large-tree-crc run of SIZE GiB under hash H, by seed."""
    return vals(LTC, col, size_gib=size, hash=h)


def ltc_sizes():
    """The sizes (GiB) of large-tree/crc/runs.csv, smallest first."""
    return sorted({int(r["size_gib"]) for r in _rows(LTC)})


def ltc_top():
    """The largest size of large-tree/crc/runs.csv."""
    return ltc_sizes()[-1]


def ltc(size, h, col, stat="mean"):
    """mean, min, max or n of COLUMN over the seeds of one size and hash."""
    xs = ltc_runs(size, h, col)
    return {"mean": sum(xs) / len(xs), "min": min(xs), "max": max(xs), "n": len(xs)}[stat]


def ltc_cow_per_fp(size, h="crc32c", base="xxhash"):
    """CoWs a false positive added, per seed: (CoW under H - under BASE) / H's false positives."""
    out = []
    for r in _rows(LTC):
        if int(r["size_gib"]) == size and r["hash"] == h and float(r["false_positives"]) > 0:
            b = v(LTC, "cow_ksm", size_gib=size, hash=base, seed=r["seed"])
            out.append((float(r["cow_ksm"]) - b) / float(r["false_positives"]))
    return out


def ltc_max_cpu():
    """The most modelled ksmd CPU (% of one CPU) of any large-tree-crc run."""
    return max(float(r["ksmd_cpu_pct"]) for r in _rows(LTC))


def _mm(size, h, col, spec):
    """'mean (min-max)' over the seeds, or the value where every seed gave it."""
    m, lo, hi = (ltc(size, h, col, k) for k in ("mean", "min", "max"))
    if f(lo, spec) == f(hi, spec):
        return f(m, spec)
    return f"{f(m, spec)} ({f(lo, spec)}-{f(hi, spec)})"


def table_ltcrc():
    """The large-tree-crc table: per size and hash, mean (min-max) over the seeds."""
    cols = (("changes seen", "gate_changed", ",.0f"), ("false positives", "false_positives", ",.0f"),
            ("changed after insert", "unstable_changed_after_insert", ",.0f"),
            ("corrupt walks", "unstable_corrupt_walks", ",.0f"), ("CoW", "cow_ksm", ",.0f"),
            ("missed merges", "missed_merges", ",.0f"),
            ("ksmd % of a CPU (modelled, max)", "ksmd_cpu_pct", ".1f"))
    out = ["| GiB | hash | seeds | " + " | ".join(c[0] for c in cols) + " |",
           "|---:|---|---:|" + "---:|" * len(cols)]
    for size in ltc_sizes():
        hs = sorted({r["hash"] for r in _rows(LTC) if int(r["size_gib"]) == size}, key=hash_rank)
        for i, h in enumerate(hs):
            cells = [f(ltc(size, h, c, "max"), sp) if c == "ksmd_cpu_pct" else _mm(size, h, c, sp)
                     for _, c, sp in cols]
            out.append(f"| {size if i == 0 else ''} | {h} | {ltc(size, h, 'seed', 'n')} | "
                       + " | ".join(cells) + " |")
    return "\n".join(out)


REMEDY = "fixed-seed/remedy.csv"
REMEDY_ROWS = (("aim-xxhash", "xxhash", "the kernel's xxhash (seed 0)", "xxhash: the attack"),
               ("aim-xxhash", "xxhash-seeded", "the kernel's xxhash (seed 0)", "xxhash-seeded, the run's key"),
               ("aim-xxhash", "siphash", "the kernel's xxhash (seed 0)", "siphash, the run's key"),
               ("aim-seeded", "xxhash-seeded:1", "xxhash-seeded, key 1", "xxhash-seeded, key 1 (known)"),
               ("aim-seeded", "xxhash-seeded", "xxhash-seeded, key 1", "xxhash-seeded, the run's key"),
               ("aim-siphash", "siphash:1", "siphash, key 1", "siphash, key 1 (known)"),
               ("aim-siphash", "siphash", "siphash, key 1", "siphash, the run's key"),
               ("free", "xxhash-seeded", "none: rewrites every 9 s", "xxhash-seeded, the run's key"),
               ("honest-vm2", "xxhash", "the kernel's xxhash; vm2 only holds", "xxhash: the attack"),
               ("honest-vm2", "xxhash-seeded", "the kernel's xxhash; vm2 only holds", "xxhash-seeded, the run's key"))


def rem(trace, hash_key, col):
    """COLUMN of remedy.csv over its seeds for TRACE and HASH (HASH:1: the
    attacker's key; HASH alone: the run's key, or no key)."""
    h, _, k = hash_key.partition(":")
    rows = [r for r in _rows(REMEDY) if r["trace"] == trace and r["hash"] == h
            and ((r["key"] == k) if k else r["key"] != "1")]
    if not rows:
        raise RenderError(f"{REMEDY}: no rows for {trace} {hash_key}")
    return [_val(r[col]) for r in rows]


def _rem_cell(trace, hk, col, spec):
    xs = rem(trace, hk, col)
    a, b, m = f(min(xs), spec), f(max(xs), spec), f(sum(xs) / len(xs), spec)
    return a if a == b else f"{m} ({a}-{b})"


def table_remedy():
    """The fixed-seed remedy table: mean (min-max) over the trace seeds."""
    cols = (("false positives", "false_positives"), ("CoW", "cow_ksm"),
            ("changed after insert", "unstable_changed_after_insert"),
            ("corrupt walks", "unstable_corrupt_walks"), ("missed merges", "missed_merges"),
            ("vm2 merging pages", "vm2_merging_pages"))
    out = ["| pairs made for | replayed under | seeds | " + " | ".join(c[0] for c in cols) + " |",
           "|---|---|---:|" + "---:|" * len(cols)]
    for trace, hk, lab, run in REMEDY_ROWS:
        out.append(f"| {lab} | {run} | {len(rem(trace, hk, 'seed'))} | "
                   + " | ".join(_rem_cell(trace, hk, c, ",.0f") for _, c in cols) + " |")
    return "\n".join(out)


def hash_rank(h):
    order = ("jhash2", "crc32c", "crc32", "xxhash", "xxh32", "xxh64", "xxh3")
    return order.index(h) if h in order else len(order)


def lt(size, h, metric, col="mean"):
    return v("large-tree/summary.csv", col, size_gib=size, hash=h, metric=metric)


def probe(size, col):
    """large-tree.sh --probe's row for SIZE GiB (large-tree/probe.csv)."""
    return v("large-tree/probe.csv", col, size_gib=size)


def lt_runs(col, **sel):
    rows = _match("large-tree/runs.csv", sel)
    if not rows:
        raise RenderError(f"large-tree/runs.csv: no rows match {sel}")
    return [_val(r[col]) for r in rows]


# the large-tree study's checksums, in the page's order (large-tree.sh's default)
LT_HASHES = ("jhash2", "crc32c", "xxhash", "xxh64")


def lt_hashes(size):
    """The hashes with runs at SIZE GiB, in the page's order."""
    have = {r["hash"] for r in _rows("large-tree/summary.csv") if int(r["size_gib"]) == size}
    return [h for h in LT_HASHES if h in have]


def lt32(size, metric, col="mean"):
    """A figure of a 32-bit gate at SIZE (xxhash's where it ran, else another's):
    the counters do not depend on which (no --batch-time)."""
    for h in ("xxhash", "jhash2", "crc32c"):
        if h in lt_hashes(size):
            return lt(size, h, metric, col)
    raise RenderError(f"large-tree/summary.csv: no 32-bit hash at {size} GiB")


def lt_sizes():
    return sorted({int(r["size_gib"]) for r in _rows("large-tree/summary.csv")})


def f(x, spec):
    if isinstance(x, str):
        return x
    return format(x, spec)


def ci(lo, hi, spec):
    return f"{f(lo, spec)} to {f(hi, spec)}"


_exempt = []


def part(values):
    """VALUES as a list, and the placeholder exempt from the scope check: a
    subset chosen on purpose, which the text around it names."""
    _exempt.append(True)
    return list(values)


def rng_part(values, spec):
    """rng over a subset chosen on purpose (part())."""
    return rng(part(values), spec)


def rng(values, spec):
    """'LOW-HIGH' of some values, or one value where they print alike."""
    values = list(values)
    a, b = f(min(values), spec), f(max(values), spec)
    if a == b:
        return a
    # signed values read badly joined by a hyphen ("+0.20-+0.21")
    return f"{a} to {b}" if "-" in a + b or "+" in a + b or "e" in spec else f"{a}-{b}"


def _mci(m, lo, hi, spec):
    """A mean and its 95% interval, or the mean alone where every run gave it."""
    if lo == "" or hi == "" or (f(lo, spec) == f(m, spec) == f(hi, spec)):
        return f"{f(m, spec)} (every run)" if lo != "" else f(m, spec)
    return f"{f(m, spec)} ({ci(lo, hi, spec)})"


def _pm(w, h, met, spec):
    return _pmk("6.18", w, h, met, spec)


K17 = {"6.18": "2017/seeds/summary.csv", "6.1": "2017/seeds-6.1/summary.csv"}


def y17k(kernel, w, h, metric, col="mean"):
    """A 2017 grid's figure under KERNEL's ksmd ('6.1' or '6.18')."""
    return v(K17[kernel], col, workload=w, hash=h, metric=metric)


def _pmk(kernel, w, h, met, spec, scale=1.0):
    """The mean over every seed x timing run, and the 95% interval over the
    seeds' means: a seed's timing replicates are not independent draws."""
    return _mci(*(y17k(kernel, w, h, met, c) * scale
                  for c in ("mean", "seed_ci95_low", "seed_ci95_high")), spec)


def runs17(kernel, w, h="jhash2", met="cow_ksm"):
    """'S seeds x T timings (n = N)': the runs a 2017 grid's figure is over."""
    n, s_, t = (y17k(kernel, w, h, met, c) for c in ("n", "seeds", "timings"))
    return f"{s_} seeds x {t} timing{'s' if t != 1 else ''} (n = {n})"


def trange(kernel, w, h, met):
    """What the timing replicates alone move a figure by: the widest range
    across one seed's timings (summarise.py's timing_range)."""
    rows = _match(K17[kernel], {"workload": w, "hash": h, "metric": met})
    if len(rows) != 1 or rows[0].get("timing_range", "") == "":
        raise RenderError(f"{K17[kernel]}: no timing_range for {w}/{h}/{met} "
                          "(one timing: run seeds-2017.sh --timings 2 or more)")
    return _val(rows[0]["timing_range"])


def trange_max(kernel):
    """The most the timing replicates alone moved a difference from jhash2
    (ksmd CPU, CoW, pages_sharing, pages_unshared) under KERNEL: 'X points
    (WORKLOAD, HASH, FIGURE)', over the workloads that have two timings."""
    names = {"cow_ksm": "CoW", "avg_pages_sharing": "pages_sharing",
             "avg_pages_unshared": "pages_unshared", "ksmd_cpu_ms": "ksmd CPU"}
    best = None
    for r in _rows(K17[kernel]):
        met = r["metric"].replace("_vs_jhash2_pct", "")
        if met not in names or met == r["metric"] or r.get("timing_range", "") == "":
            continue
        x = _val(r["timing_range"])
        if best is None or x > best[0]:
            best = (x, r["workload"], r["hash"], names[met])
    if best is None:
        raise RenderError(f"{K17[kernel]}: no timing_range (one timing: run seeds-2017.sh "
                          "--timings 2 or more)")
    return f"{f(best[0], '.2f')} points ({best[1]}, {best[2]}, {best[3]})"


def table17():
    """Ours (Linux 6.18's ksmd: mean and 95% interval over seeds x timings)
    beside 2017's, per workload."""
    out = []
    hashes = ["jhash2", "crc32c", "xxhash"]
    for w in ("kernel-build", "iozone"):
        out.append(f"**{w}**, modelled as Linux 6.18's ksmd (4 guests x 4 GiB, 1800 s, "
                   f"pages_to_scan 1600, sleep_millisecs 200, `--batch-time`; "
                   f"{runs17('6.18', w)} a hash; mean and 95% interval):\n")
        out.append("| figure | " + " | ".join(hashes) + " | 2017 jhash2 | 2017 crc32c |")
        out.append("|---|" + "---:|" * (len(hashes) + 2))

        def row(label, met, spec):
            cells = [_pm(w, h, met, spec) for h in hashes]
            p = [pub17(w, h, met) for h in ("jhash2", "crc32c")]
            out.append(f"| {label} | " + " | ".join(cells + [f(x, spec) if x is not None else "-"
                                                           for x in p]) + " |")

        row("CoW (cow_ksm over the run)", "cow_ksm", ",.0f")
        row("pages_sharing (mean of 1 s samples)", "avg_pages_sharing", ",.0f")
        row("pages_unshared (mean of 1 s samples)", "avg_pages_unshared", ",.0f")
        for label, met, spec in (
                ("ksmd CPU, modelled (ms over the run)", "ksmd_cpu_ms", ",.0f"),
                ("checksums taken", "checksums", ",.0f"),
                ("changes the gate saw (gate_changed)", "gate_changed", ",.0f"),
                ("false positives", "false_positives", ",.0f"),
                ("corrupt unstable walks", "unstable_corrupt_walks", ",.0f"),
                ("changed after insertion in the unstable tree",
                 "unstable_changed_after_insert", ",.0f"),
                ("missed merges (oracle, end)", "missed_merges", ",.0f")):
            out.append(f"| {label} | " + " | ".join(_pm(w, h, met, spec) for h in hashes)
                       + " | - | - |")
        out.append("")
        out.append(f"Differences from jhash2 on {w} (Linux 6.18), in %, paired by (seed, "
                   f"timing) (mean and 95% interval over {runs17('6.18', w, 'crc32c', 'cow_ksm_vs_jhash2_pct')}), "
                   "beside 2017's (the mean of two runs per hash):\n")
        out.append("| figure | crc32c, ours | crc32c, 2017 | xxhash, ours |")
        out.append("|---|---:|---:|---:|")
        for label, met in (("CoW", "cow_ksm"), ("pages_sharing", "avg_pages_sharing"),
                           ("pages_unshared", "avg_pages_unshared"),
                           ("checksum time (checksums x model ns/page)", "checksum_time"),
                           ("ksmd CPU, modelled", "ksmd_cpu_ms")):
            m = met + "_vs_jhash2_pct"
            p = pub17(w, "crc32c", m)
            out.append(f"| {label} | {_pm(w, 'crc32c', m, '+.2f')} | "
                       f"{f(p, '+.1f') if p is not None else '-'} | {_pm(w, 'xxhash', m, '+.2f')} |")
        out.append("")
    return "\n".join(out).rstrip("\n")


def y61(w, h, metric, col="mean"):
    return v("2017/seeds-6.1/summary.csv", col, workload=w, hash=h, metric=metric)


def _skipped(path, w, h):
    """Mean pages_skipped over a seeds grid's runs; '-' where the kernel has no such count."""
    xs = [r["pages_skipped"] for r in _rows(path) if r["workload"] == w and r["hash"] == h]
    if not xs:
        raise RenderError(f"{path}: no runs of {w}/{h}")
    if any(x == "" for x in xs):
        return "-"
    return f(sum(_val(x) for x in xs) / len(xs), ",.0f")


def table_kernels():
    """The 2017 grid under Linux 6.1 and 6.18: mean over the same seeds and
    timings, 6.1 first; ksmd CPU with its 95% interval."""
    out = ["| workload | hash | runs, 6.1 / 6.18 | visits skipped (smart scan) | checksums | "
           "ksmd CPU, % of one: 6.1 | ksmd CPU, % of one: 6.18 | CoW | pages_sharing (mean) |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for w in ("kernel-build", "iozone"):
        for h in ("jhash2", "crc32c", "xxhash"):
            sk = (_skipped("2017/seeds-6.1/runs.csv", w, h) + " / "
                  + _skipped("2017/seeds/runs.csv", w, h))

            def pair(met, spec, scale=1.0):
                return f"{f(y61(w, h, met) * scale, spec)} / {f(y17(w, h, met) * scale, spec)}"

            def cpu(k):
                return _pmk(k, w, h, "ksmd_cpu_ms", ".2f", 1 / 18000)
            n = f"{y17k('6.1', w, h, 'cow_ksm', 'n')} / {y17k('6.18', w, h, 'cow_ksm', 'n')}"
            out.append(f"| {w} | {h} | {n} | {sk} | {pair('checksums', ',.0f')} | "
                       f"{cpu('6.1')} | {cpu('6.18')} | {pair('cow_ksm', ',.0f')} | "
                       f"{pair('avg_pages_sharing', ',.0f')} |")
    return "\n".join(out)


def table_kernels_delta():
    """crc32c and xxhash against jhash2, paired by (seed, timing), under each
    kernel with its 95% interval, beside 2017's."""
    out = ["| workload | figure | crc32c, 6.1 | crc32c, 6.18 | crc32c, 2017 | xxhash, 6.1 | "
           "xxhash, 6.18 |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for w in ("kernel-build", "iozone"):
        for label, met in (("CoW", "cow_ksm"), ("pages_sharing", "avg_pages_sharing"),
                           ("ksmd CPU, modelled", "ksmd_cpu_ms")):
            m = met + "_vs_jhash2_pct"
            p = pub17(w, "crc32c", m)
            out.append(f"| {w} | {label} | {_pmk('6.1', w, 'crc32c', m, '+.2f')} | "
                       f"{_pmk('6.18', w, 'crc32c', m, '+.2f')} | "
                       f"{f(p, '+.1f') if p is not None else '-'} | "
                       f"{_pmk('6.1', w, 'xxhash', m, '+.2f')} | {_pmk('6.18', w, 'xxhash', m, '+.2f')} |")
    return "\n".join(out)


LT_ROWS = (("unstable tree, peak (GiB)", "unstable_tree_gib", ",.1f"),
           ("full scans", "full_scans", ",.0f"),
           ("changes the gate saw (gate_changed)", "gate_changed", ",.0f"),
           ("false positives", "false_positives", ",.0f"),
           ("expected by chance (gate_changed x 2^-bits)", "expected_false_positives", ".1e"),
           ("changed after insertion", "unstable_changed_after_insert", ",.0f"),
           ("corrupt unstable walks", "unstable_corrupt_walks", ",.0f"),
           ("CoW", "cow_ksm", ",.0f"),
           ("pages_sharing (end)", "pages_sharing", ",.0f"),
           ("pages_unshared (end)", "pages_unshared", ",.0f"),
           ("missed merges (oracle, end)", "missed_merges", ",.0f"),
           ("ksmd CPU, modelled (% of one CPU)", "ksmd_cpu_pct", ".2f"))


def _lt_cell(size, h, met, spec):
    if lt(size, h, met, "n") < 2:
        return f(lt(size, h, met), spec)
    return _mci(lt(size, h, met), lt(size, h, met, "ci95_low"), lt(size, h, met, "ci95_high"),
                spec)


def table_lt():
    out = []
    for size in lt_sizes():
        hashes = lt_hashes(size)
        n = min(lt(size, h, "cow_ksm", "n") for h in hashes)
        out.append(f"**{size} GiB of guests** ({n} seed{'s' if n > 1 else ''} a hash"
                   f"{' at least' if any(lt(size, h, 'cow_ksm', 'n') > n for h in hashes) else ''}; "
                   "mean and 95% interval):\n")
        out.append("| figure | " + " | ".join(hashes) + " |")
        out.append("|---|" + "---:|" * len(hashes))
        for label, met, spec in LT_ROWS:
            out.append(f"| {label} | "
                       + " | ".join(_lt_cell(size, h, met, spec) for h in hashes) + " |")
        for label, met in (("ksmd CPU against jhash2 (%, paired)", "ksmd_cpu_ms_vs_jhash2_pct"),
                           ("CoW against jhash2 (%, paired)", "cow_ksm_vs_jhash2_pct")):
            cells = ["-" if h == "jhash2" or "jhash2" not in hashes else
                     _lt_cell(size, h, met, "+.2f") for h in hashes]
            out.append(f"| {label} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out).rstrip("\n")


def table_lt_cost():
    out = ["| size | guests | runs | wall s a run | CPU s a run | peak RSS MiB |",
           "|---|---|---:|---:|---:|---:|"]
    for size in lt_sizes():
        runs = len(lt_runs("hash", size_gib=size))
        walls, cpus, rss = ([x for x in lt_runs(c, size_gib=size) if x != ""]
                            for c in ("wall_s", "cpu_s", "max_rss_mib"))
        if not walls:	# runs made without timed-ksmsim.sh
            walls = cpus = rss = ["-"]
        guests = "4" if size <= 64 else "16"
        cost = (f"{rng(walls, ',.0f')} | {rng(cpus, ',.0f')} | {rng(rss, ',.0f')}"
                if walls[0] != "-" else "- | - | -")
        out.append(f"| {size} GiB | {guests} x {size * 1024 // int(guests) // 1024} GiB | "
                   f"{runs} | {cost} |")
    return "\n".join(out)


POLICY_TRACES = (("kernel-build-s0.1", "kernel-build 0.1"), ("iozone-s0.1", "iozone 0.1"),
                 ("number-crunching-s0.1", "number-crunching 0.1"),
                 ("crc-adversarial", "crc-adversarial 1"))


def pol_rows(name):
    """policies/NAME.csv, each row with its short name ('kernel/xxhash',
    'no-gate', 'classified/crc32c', ...): the policy without parameters."""
    out = []
    for r in _rows(f"policies/{name}.csv"):
        pol = r["policy"].split(":")[0]
        out.append(dict(r, row=pol + ("/" + r["hash"] if r["hash"] != "none" else "")))
    return out


# Checksums the kernel does not have (lib/ has jhash2, crc32c, crc32, xxh32,
# xxh64, siphash, sha1, sha256): a pick among the kernel's rows leaves them out.
NOT_IN_KERNEL = ("xxh3",)


def not_in_kernel(row):
    """A policies row that is no kernel design or no kernel checksum."""
    return not row.startswith("kernel/") or row.split("/", 1)[1] in NOT_IN_KERNEL


def kernel_pick(name):
    """The pick among the kernel's own rows (policy kernel, a checksum the
    kernel has), by advise's rule: the cheapest row that loses no mean
    pages saved against the best of them, leaving out checksums with false
    positives when any has none; a tie goes to the earlier row (xxhash)."""
    rows = [r for r in pol_rows(name) if not not_in_kernel(r["row"])]
    clean = [r for r in rows if float(r["false_positives"]) == 0] or rows
    best = max(float(r["saved_mean"]) for r in clean)
    ok = [r for r in clean if float(r["saved_mean"]) >= best]
    return min(ok, key=lambda r: float(r["ksmd_cpu_ms"]))["row"]


def pol(name, row, col):
    """COLUMN of the row named ROW ('kernel/xxhash', 'pick', 'no-gate',
    'classified/HASH', 'classified/pick': classified with the pick's
    checksum). 'pick' is kernel_pick's; 'advise-pick' is `ksmsim advise`'s
    over every row (its `pick` column), kernel or not."""
    rows = pol_rows(name)
    if row in ("pick", "classified/pick"):
        k = kernel_pick(name)
        row = k if row == "pick" else "classified/" + k.split("/", 1)[1]
    elif row == "advise-pick":
        picks = [r for r in rows if r["pick"] == "1"]
        if len(picks) != 1:
            raise RenderError(f"policies/{name}.csv: {len(picks)} picks, not 1")
        row = picks[0]["row"]
    hits = [r for r in rows if r["row"] == row]
    if len(hits) != 1:
        raise RenderError(f"policies/{name}.csv: {len(hits)} rows named {row}, not 1")
    if col == "row":
        return hits[0]["row"]
    return _val(hits[0][col])


def pol_pct(name, row, col):
    """ROW's COLUMN against kernel/xxhash's, in per cent."""
    return 100 * (pol(name, row, col) / pol(name, "kernel/xxhash", col) - 1)


def pol_front(name):
    """The rows of policies/NAME.csv on the Pareto frontier, by name."""
    return [r["row"] for r in pol_rows(name) if r["frontier"] == "1"]


def _pol_table_rows(name):
    names = ["kernel/xxhash", pol(name, "pick", "row"), pol(name, "advise-pick", "row"),
             "no-gate", "dirty-bit",
             "partial-hash", "classified/xxhash", pol(name, "classified/pick", "row")]
    seen = []
    for n in names:
        if n not in seen:
            seen.append(n)
    return seen


def _pct_or_dash(name, row, col):
    """pol_pct, or a dash where kernel/xxhash's figure is 0 (nothing saved)."""
    if pol(name, "kernel/xxhash", col) == 0:
        return "-"
    return f(pol_pct(name, row, col), "+.1f") + "%"


def table_policies(traces=None):
    """The policies table: today's kernel, the pick and each other policy,
    from policies/*.csv (the generated traces unless TRACES names others)."""
    out = ["| trace | row | ksmd CPU ms (modelled) | vs kernel/xxhash | mean saved | "
           "vs kernel/xxhash | end saved | CoW | false pos | corrupt walks | frontier |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, label in traces or POLICY_TRACES:
        pick = pol(name, "pick", "row")
        for i, row in enumerate(_pol_table_rows(name)):
            notes = [n for n, on in (("pick", row == pick), ("today", row == "kernel/xxhash"),
                                     ("not in the kernel", not_in_kernel(row))) if on]
            tag = row + (f" ({', '.join(notes)})" if notes else "")
            out.append(f"| {label if i == 0 else ''} | {tag} | "
                       f"{f(pol(name, row, 'ksmd_cpu_ms'), ',.1f')} | "
                       f"{_pct_or_dash(name, row, 'ksmd_cpu_ms')} | "
                       f"{f(pol(name, row, 'saved_mean'), ',.1f')} | "
                       f"{_pct_or_dash(name, row, 'saved_mean')} | "
                       + " | ".join(f(pol(name, row, c), ",.0f") for c in
                                    ("saved_end", "cow_ksm", "false_positives",
                                     "unstable_corrupt_walks"))
                       + f" | {'*' if pol(name, row, 'frontier') == 1 else ''} |")
    return "\n".join(out)


def table_policies_real():
    """The recorded programs (policies/real-*.csv), as table_policies."""
    return table_policies((("real-fio", "fio (recorded)"), ("real-numpy", "numpy (recorded)")))


def table_pairs():
    """fixed-seed/pairs.csv as the page's table."""
    out = ["  | hash | pairs in one 2^20-try sweep | tries a pair | CPU s a sweep (1 core) | "
           "share of the pairs' changes missed |", "  |---|---:|---:|---:|---:|"]
    for r in _rows("fixed-seed/pairs.csv"):
        pairs = _val(r["pairs"])
        if pairs:
            cells = [f(pairs, ",.0f"), f(_val(r["tries_per_pair"]), ",.0f"),
                     f(_val(r["cpu_s"]), ".2f"), f(_val(r["rate"]), ".0f")]
        else:
            chance = 2.0 ** 40 / 2 ** (int(r["bits"]) + 1)
            cells = [f"none (chance {chance:.0e})", "-", f(_val(r["cpu_s"]), ".2f"),
                     "- (no change to make)"]
        out.append(f"  | {r['hash']} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def med(values):
    """The median of some values."""
    x = sorted(values)
    if not x:
        raise RenderError("median of no values")
    n = len(x)
    return x[n // 2] if n % 2 else (x[n // 2 - 1] + x[n // 2]) / 2


def _md_table(path):
    """The rows of the first Markdown table in a text file whose header names
    'workload | hash | source' (workloads/vm/experiment.sh's output)."""
    key = "md:" + path
    if key not in _cache:
        try:
            with open(os.path.join(RES, path)) as fh:
                lines = fh.read().splitlines()
        except OSError as e:
            raise RenderError(f"{path}: {e.strerror}")
        rows, head = [], None
        for ln in lines:
            if ln.startswith("| workload | hash | source |") and head is None:
                head = [c.strip() for c in ln.strip("|").split("|")]
            elif head is not None and ln.startswith("|---"):
                continue
            elif head is not None and ln.startswith("|"):
                rows.append(dict(zip(head, (c.strip() for c in ln.strip("|").split("|")))))
            elif head is not None:
                break
        if not rows:
            raise RenderError(f"{path}: no table of workload | hash | source")
        _cache[key] = rows
    return _cache[key]


def gtab(path, w, hash_, source, col):
    """A cell of experiment.sh's table in PATH: workload W, HASH, the row whose
    source starts with SOURCE ('real @', 'real-kvm', 'synthetic @', '2017')."""
    hits = [r for r in _md_table(path) if r["workload"] == w and r["hash"] == hash_
            and r["source"].startswith(source)]
    if len(hits) != 1:
        raise RenderError(f"{path}: {len(hits)} rows for {w}/{hash_}/{source}, not 1")
    if col not in hits[0]:
        raise RenderError(f"{path}: no column '{col}'")
    return hits[0][col]


def gnum(path, w, hash_, source, col, part=0):
    """gtab's cell as a number: PART 0 the value, 1 the bracketed mean."""
    cell = gtab(path, w, hash_, source, col)
    m = re.match(r"^([-+0-9.]+)%?(?: \[([-+0-9.]+)[^]]*\])?$", cell)
    if not m or m.group(part + 1) is None:
        raise RenderError(f"{path}: '{cell}' ({w}/{hash_}/{source}/{col}) has no part {part}")
    return _val(m.group(part + 1))


def _commas(cell):
    """Thousands separators in the integers of a cell ('64392 [40154]')."""
    return re.sub(r"(?<![.\d])\d{4,}(?![.\d])", lambda m: format(int(m.group()), ","), cell)


def table_guests():
    """experiment.sh's tables of the advised recordings (guests/build.txt,
    guests/fio.txt, guests/numpy.txt), one row per source, ksmd CPU per hash."""
    out = ["| workload | source | CoW | pages_sharing | pages_unshared | full scans | "
           "ksmd CPU ms, modelled (jhash2 / crc32c / xxhash) |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for path, w in (("guests/build.txt", "build"), ("guests/fio.txt", "fio"),
                    ("guests/numpy.txt", "numpy")):
        for src in ("2017", "real @", "real-kvm", "synthetic @", "synthetic-guests-tcg"):
            hits = [r for r in _md_table(path) if r["workload"] == w and r["hash"] == "jhash2"
                    and r["source"].startswith(src)]
            if not hits or hits[0]["CoW"] == "-":
                continue
            r = hits[0]
            cpu = " / ".join(gtab(path, w, h, src, "ksmd_cpu_ms") for h in ("jhash2", "crc32c", "xxhash"))
            if cpu != "- / - / -":
                cpu = " / ".join(f(gnum(path, w, h, src, "ksmd_cpu_ms"), ",.0f")
                                 for h in ("jhash2", "crc32c", "xxhash"))
            out.append(f"| {w} | {r['source']} | " + " | ".join(
                _commas(r[c]) for c in ("CoW", "pages_sharing", "pages_unshared", "full scans"))
                + f" | {cpu if cpu != '- / - / -' else '-'} |")
    return "\n".join(out)


NAMES = {"W17": ("kernel-build", "iozone"), "rng_part": rng_part, "part": part, "ltc": ltc, "ltc_runs": ltc_runs, "ltc_sizes": ltc_sizes, "ltc_top": ltc_top, "ltc_mm": _mm, "ltc_cow_per_fp": ltc_cow_per_fp, "ltc_max_cpu": ltc_max_cpu, "table_ltcrc": table_ltcrc, "rem": rem, "rem_cell": _rem_cell, "table_remedy": table_remedy, "not_in_kernel": not_in_kernel, "v": v, "vals": vals, "KSM_FILES": KSM_FILES, "table_ksm": table_ksm, "y17": y17, "pub17": pub17, "ns_model": ns_model, "costs_row": costs_row, "heldout_ratios": heldout_ratios, "ns_meas": ns_meas,
         "ns_table": ns_table, "share": share, "lt": lt, "lt_runs": lt_runs, "lt_hashes": lt_hashes, "lt32": lt32, "probe": probe, "lt_sizes": lt_sizes, "ci": ci,
         "f": f, "rng": rng, "table17": table17, "y61": y61, "table_kernels": table_kernels, "table_kernels_delta": table_kernels_delta, "table_lt": table_lt, "table_lt_cost": table_lt_cost,
         "pol": pol, "pol_rows": pol_rows, "pol_pct": pol_pct, "float": float, "pol_front": pol_front,
         "table_policies": table_policies, "table_policies_real": table_policies_real,
         "POLICY_TRACES": POLICY_TRACES, "med": med, "table_pairs": table_pairs, "sorted": sorted, "gtab": gtab, "gnum": gnum, "table_guests": table_guests,
         "set": set, "any": any, "all": all, "str": str, "zip": zip, "int": int, "min": min, "max": max, "abs": abs, "sum": sum, "len": len, "round": round,
         "math": math}
# the 2017 grids by kernel ('6.1', '6.18'), their runs and timing spread
NAMES.update({"y17k": y17k, "runs17": runs17, "trange": trange, "trange_max": trange_max,
              "pmk": _pmk})

# sections 5 and 8 over their seeds (render_reps.py)
sys.path.insert(0, HERE)
import render_reps  # noqa: E402 - it binds to the helpers above
NAMES.update(render_reps.helpers(sys.modules[__name__]))

PLACEHOLDER = re.compile(r"\{\{(.+?)\}\}", re.S)


def render(text, where):
    def sub(m):
        body = m.group(1)
        expr, _, spec = body.rpartition("|") if "|" in body else (body, "", "")
        expr = expr.strip()
        line = text.count("\n", 0, m.start()) + 1
        try:
            del _reads[:]
            del _exempt[:]
            x = eval(expr, {"__builtins__": {}, **NAMES})  # our own template, not input
            # ranges: rng(), or min() and max() of a generator; the main
            # page only (the sub-pages have their own owners and wording)
            if (re.search(r"\b(rng|min|max)\(", expr) and not _exempt
                    and os.path.dirname(os.path.abspath(where)) == os.path.abspath(RES)):
                errs = scope_errors(_reads)
                if errs:
                    raise RenderError(errs[0])
            return f(x, spec.strip()) if spec.strip() else (x if isinstance(x, str) else str(x))
        except RenderError as e:
            raise RenderError(f"{where}:{line}: {{{{{expr}}}}}: {e}")
        except Exception as e:  # noqa: BLE001 - any failure of a placeholder is one line
            raise RenderError(f"{where}:{line}: {{{{{expr}}}}}: {type(e).__name__}: {e}")
    return PLACEHOLDER.sub(sub, text)


def _dur(s):
    """A duration in s as the exposure page writes it: s, min or h."""
    if s < 60:
        return f"{s:.1f} s"
    if s < 3600:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.2f} h"


PROBE = "exposure/probe.csv"
KNOBS = (("default", "default 100 / 20 ms"), ("ubuntu", "Ubuntu-like 100 / 200 ms"),
         ("aggressive", "aggressive 3000 / 20 ms"), ("advisor", "advisor (scan-time)"))


def probe_sizes():
    """The host sizes (GiB) of exposure/probe.csv, smallest first."""
    return sorted({int(r["host_gib"]) for r in _rows(PROBE)})


def xp(size, knobs, col):
    """A cell of exposure/probe.csv."""
    return v(PROBE, col, host_gib=size, knobs=knobs)


def probe_top(knobs):
    """The largest host size (GiB) with a probe cell of these knobs."""
    sizes = [int(r["host_gib"]) for r in _match(PROBE, {"knobs": knobs})]
    if not sizes:
        raise RenderError(f"{PROBE}: no cell of knobs '{knobs}'")
    return max(sizes)


def xp_ratio(col, **sel):
    """COLUMN / probe_at_s (in passes) of every matching probe cell."""
    return [_val(r[col]) / _val(r["probe_at_s"]) for r in _match(PROBE, sel)]


def table_probe():
    """T50 / T99 by host size (rows) and knob setting (columns)."""
    out = ["| host (guests) | " + " | ".join(k[1] for k in KNOBS) + " |",
           "|---|" + "---:|" * len(KNOBS)]
    for g in probe_sizes():
        out.append(f"| {g} GiB | " + " | ".join(
            f"{_dur(xp(g, k, 't50_s'))} / {_dur(xp(g, k, 't99_s'))}"
            if _match(PROBE, {"host_gib": g, "knobs": k}) else "not run" for k, _ in KNOBS) + " |")
    return "\n".join(out)


def table_probe_cells():
    """Each probe cell's pass, T50 and T99 in passes, run wall time, peak RSS."""
    out = ["| host | knobs | pass (s) | T50 / pass | T99 / pass | run wall (s) | peak RSS (MiB) |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for g in probe_sizes():
        for k, _ in KNOBS:
            if not _match(PROBE, {"host_gib": g, "knobs": k}):
                continue
            r = _match(PROBE, {"host_gib": g, "knobs": k})[0]
            p = _val(r["probe_at_s"])
            out.append(f"| {g} GiB | {k} | {p} | {_val(r['t50_s']) / p:.2f} | "
                       f"{_val(r['t99_s']) / p:.2f} | {r['run_wall_s']} | {r['run_peak_rss_mib']} |")
    return "\n".join(out)


def table_channels():
    """exposure/channels.csv: the CoW-write and the unmap channel side by side, by host and max_page_sharing."""
    out = ["| host | max_page_sharing | channel | pass (s) | copies merged | T50 / T99 (s) "
           "| reads | reveals (share) | read after write p50 / p99 (s) | reveals in a chain "
           "| run wall (s) | peak RSS (MiB) |",
           "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in _rows("exposure/channels.csv"):
        after = f"{r['reveal_p50_s']} / {r['reveal_p99_s']}" if r["reveal_p50_s"] else "one pass"
        out.append(f"| {r['host_gib']} GiB | {r['max_page_sharing']} | {r['channel']} | {r['pass_s']} | "
                   f"{r['merged']} | {r['t50_s']} / {r['t99_s']} | {r['reads']} | "
                   f"{r['reveals']} ({100 * _val(r['reveal_share']):.1f}%) | {after} | "
                   f"{r['reveals_in_chain']} | {r['run_wall_s']} | {r['run_peak_rss_mib']} |")
    return "\n".join(out)


def table_channels_by_size(mps="256"):
    """exposure/channels.csv at one max_page_sharing, by host size: T50 / T99 also in passes."""
    out = ["| host | pass (s) | channel | T50 / T99 (s) | T50 / T99 (passes) | reads revealing "
           "| read after write p50 (s) | run wall (s) | peak RSS (MiB) |",
           "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    rows = [r for r in _rows("exposure/channels.csv") if r["max_page_sharing"] == mps]
    rows.sort(key=lambda r: (_val(r["host_gib"]), r["channel"]))
    for r in rows:
        p, t50, t99 = _val(r["pass_s"]), _val(r["t50_s"]), _val(r["t99_s"])
        after = f"{_val(r['reveal_p50_s']):.1f}" if r["reveal_p50_s"] else "one pass"
        out.append(f"| {r['host_gib']} GiB | {r['pass_s']} | {r['channel']} | {t50:.1f} / {t99:.1f} | "
                   f"{t50 / p:.2f} / {t99 / p:.2f} | {r['reveals']} / {r['reads']} "
                   f"({100 * _val(r['reveal_share']):.1f}%) | {after} | {r['run_wall_s']} | "
                   f"{r['run_peak_rss_mib']} |")
    return "\n".join(out)

def table_saving():
    """exposure/saving.csv: the saving across domains and selective's cost."""
    out = ["| trace | saved | across domains | of which zeroes | selective saves | cost of selective |",
           "|---|---:|---:|---:|---:|---:|"]
    for r in _rows("exposure/saving.csv"):
        out.append(f"| {r['trace']} | {r['saved_pages']} | {r['saved_cross_pages']} "
                   f"({100 * _val(r['cross_share']):.1f}%) | {r['saved_cross_zero_pages']} "
                   f"({100 * _val(r['zero_share_of_cross']):.2f}%) | {r['selective_saved_pages']} | "
                   f"{100 * _val(r['selective_cost']):.1f}% |")
    return "\n".join(out)


RECORDED = (("exp-fio-4vm", "fio, 4 guests"), ("exp-numpy-4vm", "NumPy, 4 guests"),
            ("glisse-build-2vm", "build, 2 guests"))


def table_saving_recorded():
    """exposure/saving-recorded.csv: the same, and the exposure times, per recorded guest trace."""
    out = ["| trace | saved | across domains | of which zeroes | selective saves | cost of selective "
           "| merges across / within | write to merge p50 / p99 (s) | merged p50 / p99 (s) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    names = dict(RECORDED)
    for r in _rows("exposure/saving-recorded.csv"):
        out.append(f"| {names.get(r['trace'], r['trace'])} | {_val(r['saved_pages']):,} | "
                   f"{_val(r['saved_cross_pages']):,} ({100 * _val(r['cross_share']):.1f}%) | "
                   f"{r['saved_cross_zero_pages']} ({100 * _val(r['zero_share_of_cross']):.2f}%) | "
                   f"{_val(r['selective_saved_pages']):,} | {100 * _val(r['selective_cost']):.1f}% | "
                   f"{_val(r['merges_cross']):,} / {_val(r['merges_within']):,} | "
                   f"{_val(r['cross_write_to_merge_p50_s']):.1f} / {_val(r['cross_write_to_merge_p99_s']):.1f} | "
                   f"{_val(r['cross_merged_p50_s']):.1f} / {_val(r['cross_merged_p99_s']):.1f} |")
    return "\n".join(out)


def table_exposure_times():
    """exposure/saving.csv: how soon and how long pages are exposed across domains."""
    out = ["| trace | merges across | within | last write to merge p50 / p99 (s) | merged p50 / p99 (s) "
           "| domains p50 / max |", "|---|---:|---:|---:|---:|---:|"]
    for r in _rows("exposure/saving.csv"):
        merged = (f"{r['cross_merged_p50_s']} / {r['cross_merged_p99_s']}" if r["cross_merged_p50_s"]
                  else "— (none ended)")
        out.append(f"| {r['trace']} | {r['merges_cross']} | {r['merges_within']} | "
                   f"{r['cross_write_to_merge_p50_s']} / {r['cross_write_to_merge_p99_s']} | {merged} | "
                   f"{r['cross_domains_p50']} / {r['cross_domains_max']} |")
    return "\n".join(out)


NAMES.update({"probe_sizes": probe_sizes, "probe_top": probe_top, "xp": xp, "xp_ratio": xp_ratio, "dur": _dur,
              "table_probe": table_probe, "table_probe_cells": table_probe_cells,
              "table_saving": table_saving, "table_channels": table_channels, "table_channels_by_size": table_channels_by_size, "table_saving_recorded": table_saving_recorded,
              "table_exposure_times": table_exposure_times})


# Section 6b's helpers (the 2017-2018 threads' checksum figures beside ours)
# live in render_thread.py, on this module's readers.
import render_thread  # noqa: E402
NAMES.update(render_thread.names(sys.modules[__name__]))

# Section 11's live replicates (predict*/replicates.csv) in render_predict.py.
import render_predict  # noqa: E402
NAMES.update(render_predict.names(sys.modules[__name__]))


def lt_estimate(size, key):
    """large-tree/estimate-SIZE.txt (large-tree.sh --estimate SIZE): the
    trace's most pages mapped at once (pages_mapped), and from run's refusal
    line the estimate where it passed the limit (need_gib), the written
    pages held there (at_pages), the limit (limit_gib) and the estimate for
    every mapped page at that rate (all_gib)."""
    path = f"large-tree/estimate-{size}.txt"
    try:
        with open(os.path.join(RES, path)) as fh:
            kv = dict(ln.rstrip("\n").split(" ", 1) for ln in fh if " " in ln)
    except OSError as e:
        raise RenderError(f"{path}: {e.strerror}")
    m = re.search(r"need about ([0-9.]+) (MiB|GiB) here \(([0-9]+) written pages.*more than ([0-9.]+) (MiB|GiB)",
                  kv.get("refused", ""))
    if not m or "pages_mapped" not in kv:
        raise RenderError(f"{path}: no refusal line and pages mapped")
    gib = lambda x, u: float(x) / (1024 if u == "MiB" else 1)
    need, at, total = gib(m[1], m[2]), int(m[3]), int(kv["pages_mapped"])
    d = {"need_gib": need, "at_pages": at, "pages_mapped": total,
         "limit_gib": gib(m[4], m[5]), "all_gib": need * total / at}
    if key not in d:
        raise RenderError(f"{path}: no figure '{key}'")
    return d[key]


NAMES["lt_estimate"] = lt_estimate


def lt_big(size):
    """What the page says of the SIZE GiB grid: the runs made (seeds x
    hashes), what each cost against the next smaller size's, and which
    seeds the study asks for that are still missing."""
    have = [int(r["size_gib"]) for r in _rows("large-tree/runs.csv")]
    if size not in have:
        return (f"No {size} GiB run is in `large-tree/runs.csv` yet "
                f"(`analysis/large-tree.sh --sizes {size}`).")
    smaller = max(x for x in set(have) if x < size)
    cpu = lt_runs("cpu_s", size_gib=size)
    rss = lt_runs("max_rss_mib", size_gib=size)
    runs = len(lt_runs("hash", size_gib=size))
    seeds = sorted({int(x) for x in lt_runs("seed", size_gib=size)})
    per_hash = {h: len(lt_runs("seed", size_gib=size, hash=h)) for h in lt_hashes(size)}
    text = (f"The {size} GiB grid ran {runs} run{'s' if runs != 1 else ''} "
            f"(seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}; "
            + ", ".join(f"{h} {n}" for h, n in per_hash.items())
            + f"), each {rng(cpu, ',.0f')} s of CPU, "
            f"{sum(cpu) / len(cpu) / (sum(lt_runs('cpu_s', size_gib=smaller)) / len(lt_runs('cpu_s', size_gib=smaller))):.1f}"
            f" times a {smaller} GiB run's on average, at a peak RSS of "
            f"{rng([x / 1024 for x in rss], '.1f')} GiB.")
    short = [h for h, n in per_hash.items() if n < 2]
    missing = [h for h in LT_HASHES if h not in per_hash]
    if short or missing:
        text += (" Still to run for the study's two seeds a hash: "
                 + "; ".join(([f"a second seed of {', '.join(short)}"] if short else [])
                             + ([f"{', '.join(missing)} at all"] if missing else []))
                 + " (the figures above with one seed have no interval).")
    return text


NAMES["lt_big"] = lt_big


def lt_cpu_by_size():
    """Modelled ksmd CPU (% of one CPU) per size, xxhash, crc32c, jhash2 where
    they ran: 'at 16 GiB xxhash 9.18% of one CPU, crc32c ...; at 64 GiB ...'."""
    parts = []
    for i, size in enumerate(lt_sizes()):
        hs = [h for h in ("xxhash", "crc32c", "jhash2") if h in lt_hashes(size)]
        spec = ".2f" if size < 64 else ".1f"
        cells = [f"{h} {f(lt(size, h, 'ksmd_cpu_pct'), spec)}%" + (" of one CPU" if i == 0 and j == 0 else "")
                 for j, h in enumerate(hs)]
        parts.append(f"at {size} GiB " + ", ".join(cells))
    return "; ".join(parts)


NAMES["lt_cpu_by_size"] = lt_cpu_by_size


def lt_over_one_cpu():
    """A caveat where a size's modelled ksmd needs more than one CPU."""
    over = [(size, max(lt(size, h, "ksmd_cpu_pct") for h in lt_hashes(size)))
            for size in lt_sizes()]
    over = [(size, pct) for size, pct in over if pct > 100]
    if not over:
        return ""
    size, pct = over[0]
    return (f"At {size} GiB that is more than the one CPU ksmd, a single thread, has "
            f"({f(pct, '.0f')}%): these runs price each batch but do not let its length "
            "delay the next (no `--batch-time`), so their counters are those of a ksmd "
            "that keeps up with these knobs; a real one would fall behind and make "
            "fewer passes in the 3000 s.")


NAMES["lt_over_one_cpu"] = lt_over_one_cpu


def pages():
    """Every template under DIR (README.md.in at the top, then any in a
    folder, e.g. exposure/) with the page it renders."""
    out = []
    for d, dirs, files in os.walk(RES):
        dirs.sort()
        if "README.md.in" in files:
            out.append((os.path.join(d, "README.md.in"), os.path.join(d, "README.md")))
    return sorted(out, key=lambda p: (os.path.dirname(p[0]) != RES, p[0]))


def main(argv):
    global RES
    check = False
    it = iter(argv[1:])
    for a in it:
        if a == "--results":
            RES = next(it, None)
            # --results --check would take the option for the folder
            if not RES or RES.startswith("-") or not os.path.isdir(RES):
                print(f"render_results.py: --results wants a folder, not {RES!r}",
                      file=sys.stderr)
                return 2
        elif a == "--check":
            check = True
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        else:
            print(f"render_results.py: unknown option {a}", file=sys.stderr)
            return 2
    status = 0
    if not pages():
        print(f"render_results.py: {RES}: no README.md.in under it", file=sys.stderr)
        return 2
    for tpl, page in pages():
        status = max(status, one_page(tpl, page, check))
        if status == 2:
            break
    return status


def one_page(tpl, page, check):
    """Renders one template; with check, compares it with its page instead."""
    try:
        with open(tpl) as fh:
            text = fh.read()
        out = render(text, tpl)
    except (OSError, RenderError) as e:
        print(f"render_results.py: {e}", file=sys.stderr)
        return 2
    out = ("<!-- Made by analysis/render_results.py from README.md.in and the CSVs it "
           "names: edit those, not this file. -->\n" + out)
    if check:
        try:
            with open(page) as fh:
                have = fh.read()
        except OSError as e:
            print(f"render_results.py: {page}: {e.strerror}", file=sys.stderr)
            return 2
        if have == out:
            return 0
        a, b = have.splitlines(), out.splitlines()
        for i in range(max(len(a), len(b))):
            x = a[i] if i < len(a) else "<end>"
            y = b[i] if i < len(b) else "<end>"
            if x != y:
                print(f"render_results.py: {page}:{i + 1} differs from its CSVs:\n"
                      f"  page:    {x}\n  from CSV: {y}", file=sys.stderr)
                return 1
        return 1
    tmp = f"{page}.tmp.{os.getpid()}"
    with open(tmp, "w") as fh:
        fh.write(out)
    os.replace(tmp, page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
