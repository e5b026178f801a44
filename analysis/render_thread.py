# SPDX-License-Identifier: GPL-2.0-or-later
"""Section 6b of the results page: the 2017-2018 linux-mm threads' checksum
figures beside ours (2017/thread-hash-costs.csv, costs-spread.csv,
2017/ksmd-cpu-htop.csv). Helpers for render_results.py's placeholders,
built on its readers (names() takes that module):

  thread_ns(SOURCE, HASH[, WORKLOAD])  a thread figure as ns a 4 KiB page
  spread(NAME, hot|cold[, min|median|max])  costs-spread.csv
  spread_meta(I)                  costs-spread.csv's heading line I
  model_sd()                      1 sd of the fitted checksum price, ns
  table_thread_costs(), table_htop()   the section's two tables
  htop(SLEEP, HASH[, COLUMN, PRICES])  2017/ksmd-cpu-htop.csv (the model)
  titovets_htop(SLEEP, HASH)      his htop figure, % of one CPU
"""
import os

R = None        # render_results, set by names()
THREAD = "2017/thread-hash-costs.csv"
SPREAD = "costs-spread.csv"
HTOP = "2017/ksmd-cpu-htop.csv"


def thread_ns(source, h, workload=""):
    """A thread figure as ns a 4 KiB page (pct_cpu rows: % of one CPU)."""
    rows = [r for r in R._rows(THREAD) if (r["source"], r["hash"], r["workload"]) == (source, h, workload)]
    if len(rows) != 1:
        raise R.RenderError(f"{THREAD}: {len(rows)} rows for {source}/{h}/{workload}, not 1")
    x, unit = float(rows[0]["value"]), rows[0]["unit"]
    conv = {"ns": x, "pct_cpu": x, "ms_1048576": x * 1e6 / 1048576, "MBps": 4096 / x * 1e3}
    if unit not in conv:
        raise R.RenderError(f"{THREAD}: unit '{unit}'")
    return conv[unit]


def _thread_has(source, h, workload=""):
    return any((r["source"], r["hash"], r["workload"]) == (source, h, workload) for r in R._rows(THREAD))


def spread(name, k, stat="median"):
    """costs-spread.csv: min, median or max over the bench processes of the
    hot or cold ns a page of row NAME."""
    return R.v(SPREAD, f"{k}_ns_{stat}", name=name)


def spread_meta(i):
    """Line I (0, 1) of costs-spread.csv's heading: the command; the CPU, date and load."""
    with open(os.path.join(R.RES, SPREAD)) as fh:
        meta = [l[2:].strip() for l in fh if l.startswith("#")]
    if len(meta) <= i:
        raise R.RenderError(f"{SPREAD}: no heading line {i}")
    return meta[i]


def _sp_cell(name, k):
    lo, med, hi = (spread(name, k, s) for s in ("min", "median", "max"))
    return f"{med:,.0f} ({lo:,.0f}-{hi:,.0f})" if f"{lo:,.0f}" != f"{hi:,.0f}" else f"{med:,.0f}"


def model_sd():
    """1 sd of the fitted checksum (xxhash) price, ns (bench/tables/costs-amd-epyc.txt)."""
    path = os.path.join(R.HERE, "..", "bench", "tables", "costs-amd-epyc.txt")
    try:
        with open(path) as fh:
            got = [l.split() for l in fh if l.split()[:1] == ["checksum"]]
    except OSError as e:
        raise R.RenderError(f"bench/tables/costs-amd-epyc.txt: {e.strerror}")
    if len(got) != 1 or len(got[0]) < 3:
        raise R.RenderError("bench/tables/costs-amd-epyc.txt: no one 'checksum' line")
    return R._val(got[0][2])


def table_thread_costs():
    """The threads' per-hash figures beside ours, ns a page, CPU named per row."""
    def thr(src, label, cpu, how, w="", crc="crc32c", mark=""):
        j = thread_ns(src, "jhash2", w)
        c = thread_ns(src, crc, w) if _thread_has(src, crc, w) else None
        x = thread_ns(src, "xxh64", w) if _thread_has(src, "xxh64", w) else None
        return (label, cpu, how, f"{j:,.0f}", f"{c:,.0f}{mark}" if c else "-",
                f"{x:,.0f}" if x else "-", f"{j / x:.2f}" if x else "-",
                f"{c / j:.2f}{mark}" if c else "-")

    def ours(label, how, names, k):
        j, c, x = (spread(n, k) for n in names)
        return (label, "AMD EPYC VM", how) + tuple(_sp_cell(n, k) for n in names) + (
            f"{j / x:.2f}", f"{c / j:.2f}")
    tl = "hot loop: one page hashed 1,048,576 times"
    rows = [
        thr("lee-patch", "Sioh Lee, patch, 2017-08-01", "not stated",
            "in the kernel: 300 checksums averaged", crc="crc32", mark="†"),
        thr("lee-2017-08", "Sioh Lee, 2017-08-09, kernel-build", "Xeon E5-2650 v3",
            "inside ksmd (4 VMs), mean of 2 runs", "kernel-build", crc="crc32", mark="†"),
        thr("lee-2017-08", "Sioh Lee, 2017-08-09, iozone", "Xeon E5-2650 v3",
            "inside ksmd (4 VMs), mean of 2 runs", "iozone", crc="crc32", mark="†"),
        thr("titovets-v8-lee", "Sioh Lee, quoted in Titovets' v8, 2018", "not stated", "not stated"),
        thr("titovets-v2-i5", "Titovets, v2, 2017-09-22", "Core i5-7200U", tl),
        thr("titovets-v2-e5", "Titovets, v2, 2017-09-22", "Xeon E5-2420", tl),
        thr("titovets-v8-e5", "Titovets, v8, 2018-10-23", "Xeon E5-2420 v2",
            "a loop, MB/s as ns (how not stated)"),
        ours("ours, `costs.csv`, hot", "userspace libraries (jhash2 ours, crc32c ISA-L, "
             "XXH64 libxxhash), page in L1", ("jhash2", "crc32c", "xxhash"), "hot"),
        ours("ours, `costs.csv`, cold", "the same, streaming through 256 MiB",
             ("jhash2", "crc32c", "xxhash"), "cold"),
        ours("ours, kernel-shaped twins, hot", "the kernel's C shapes: scalar XXH64, "
             "jhash2, 3-way crc32c (no FPU save)", ("jhash2-kernel", "crc32c-kernel",
                                                    "xxh64-kernel"), "hot"),
        ours("ours, kernel-shaped twins, cold", "the same, streaming through 256 MiB",
             ("jhash2-kernel", "crc32c-kernel", "xxh64-kernel"), "cold"),
    ]
    cp = "cpu/checksum-prices.csv"
    pj, pc, px = (R.v(cp, "ns_median", checksum=h) for h in ("jhash2", "crc32c", "xxh64"))
    rows.append(("ksmd's own, `cpu/checksum-prices.csv`", "AMD EPYC VM, Linux 6.18.44",
                 "XXH64 from the live ksmd's profile, the others by their twins' ratio; 7 rounds")
                + tuple(f"{R.v(cp, 'ns_median', checksum=h):,.0f} ({R.v(cp, 'ns_min', checksum=h):,.0f}-"
                        f"{R.v(cp, 'ns_max', checksum=h):,.0f})" for h in ("jhash2", "crc32c", "xxh64"))
                + (f"{pj / px:.2f}", f"{pc / pj:.2f}"))
    mj, mc, mx = (R.costs_row(f"checksum:{h}") for h in ("jhash2", "crc32c", "xxhash"))
    sd = model_sd()
    rows.append(("the model's built-in table", "AMD EPYC VM, Linux 6.18.44",
                 "fitted to the live ksmd's total; ± 1 sd of the fit, scaled by the ratio",
                 f"{mj:,.0f} ± {sd * mj / mx:,.0f}", f"{mc:,.0f} ± {sd * mc / mx:,.0f}",
                 f"{mx:,.0f} ± {sd:,.0f}", f"{mj / mx:.2f}", f"{mc / mj:.2f}"))
    out = ["| source | CPU | how | jhash2 | crc32c | XXH64 | jhash2 / XXH64 | crc32c / jhash2 |",
           "|---|---|---|---:|---:|---:|---:|---:|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def htop(sleep, h, col="ksmd_pct", prices="built-in"):
    """A row of 2017/ksmd-cpu-htop.csv (the model at Titovets' knobs), on the
    built-in prices or on ksmd's own ("ksmd's own")."""
    return R.v(HTOP, col, sleep_millisecs=sleep, hash=h, prices=prices)


def table_htop():
    """Titovets' htop figures beside the model's on both prices, per sleep_millisecs."""
    out = ["| sleep_millisecs | Titovets: jhash2 | xxh64 | xxh64 / jhash2 "
           "| model, built-in prices: jhash2 | xxhash | xxhash / jhash2 "
           "| model, ksmd's own prices: jhash2 | xxhash | xxhash / jhash2 |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in (20, 1):
        tj, tx = titovets_htop(s, "jhash2"), titovets_htop(s, "xxh64")
        cells = [f"{tj:g}%", f"{tx:g}%", f"{tx / tj:.2f}"]
        for pr in ("built-in", "ksmd's own"):
            mj, mx = htop(s, "jhash2", prices=pr), htop(s, "xxhash", prices=pr)
            cells += [f"{mj:.2f}%", f"{mx:.2f}%", f"{mx / mj:.2f}"]
        out.append(f"| {s} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def titovets_htop(sleep, h):
    """Titovets' htop figure (% of a CPU) at SLEEP under H (jhash2, xxh64)."""
    got = [float(r["value"]) for r in R._rows(THREAD) if r["source"] == "titovets-v2-htop"
           and r["hash"] == h and r["how"].endswith(f"sleep_millisecs {sleep}")]
    if len(got) != 1:
        raise R.RenderError(f"{THREAD}: {len(got)} htop rows for {sleep} ms, {h}")
    return got[0]


def names(module):
    """The helpers by the names the template calls them, on MODULE's readers."""
    global R
    R = module
    return {"thread_ns": thread_ns, "spread": spread, "spread_meta": spread_meta,
            "model_sd": model_sd, "table_thread_costs": table_thread_costs, "htop": htop,
            "table_htop": table_htop, "titovets_htop": titovets_htop}
