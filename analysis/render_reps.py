# SPDX-License-Identifier: GPL-2.0-or-later
"""render_results.py's helpers for the replicated sections 5 and 8: every
figure is a mean over generator seeds with the lowest and highest seed
beside it, from one CSV holding a row per seed.

  ks(TRACE, HASH, COLUMN)         collide/ksm_seeds.csv: the COLUMN of every
                                  seed, in seed order (TRACE: own,
                                  crc-adversarial, number-crunching)
  ksr(TRACE, HASH, COLUMN, FORMAT)   "MEAN (LOW-HIGH)", or "X (every seed)"
  ks_n()                          the seeds in ksm_seeds.csv
  ks_save(TRACE, HASH)            per seed, % of jhash2's modelled ksmd time saved
  table_ks(TRACE)                 section 5's table for one trace
  ps(NAME, ROW, COLUMN)           policies/seeds.csv likewise (ROW as pol()'s:
                                  'kernel/xxhash', 'pick', 'no-gate', ...)
  psr(NAME, ROW, COLUMN, FORMAT), ps_pct(NAME, ROW, COLUMN), ps_n([NAME]),
  ps_total(), ps_desc()           seeds per trace, their sum, in words
  ps_picks(NAME)                  the pick among kernel checksums, each seed
  ps_front(NAME, ROW)             the seeds in which ROW is on the frontier
  table_policies_seeds()          section 8's table over the seeds

Each list covers every seed the file holds for that trace, or the helper
fails (a range over part of the seeds would pass for the whole); the
policies traces may hold different numbers of seeds, which the page says.
"""

KS = "collide/ksm_seeds.csv"
PS = "policies/seeds.csv"


def helpers(m):
    """The helpers, bound to render_results (M): its readers and formats."""

    def _seeds(path, **sel):
        return sorted({int(r["seed"]) for r in m._rows(path)
                       if all(str(r.get(k)) == str(x) for k, x in sel.items())})

    def _col(path, rows, col, what):
        want = _seeds(path)
        got = sorted(int(r["seed"]) for r in rows)
        if got != want:
            raise m.RenderError(f"{path}: {what} has seeds {got}, not {want}")
        if rows and col not in rows[0]:
            raise m.RenderError(f"{path}: no column '{col}'")
        return [m._val(r[col]) for r in sorted(rows, key=lambda r: int(r["seed"]))]

    def mr(values, spec, unit="", every=" (every seed)"):
        """'MEAN (LOW-HIGH)', or one figure (and EVERY) where all seeds print alike."""
        values = list(values)
        mean = sum(values) / len(values)
        lo, hi = min(values), max(values)
        if m.f(lo, spec) == m.f(hi, spec):
            return f"{m.f(lo, spec)}{unit}{every}"
        return f"{m.f(mean, spec)}{unit} ({m.rng([lo, hi], spec)})"

    def ks(trace, hash_, col):
        return _col(KS, m._match(KS, dict(trace=trace, hash=hash_)), col, f"{trace}/{hash_}")

    def ks_n():
        return len(_seeds(KS))

    def ksr(trace, hash_, col, spec):
        return mr(ks(trace, hash_, col), spec)

    def ks_save(trace, hash_, base="jhash2"):
        return [100 * (1 - a / b) for a, b in zip(ks(trace, hash_, "ksmd_cpu_ms"),
                                                     ks(trace, base, "ksmd_cpu_ms"))]

    def table_ks(trace):
        cols = (("false positives", "false_positives"), ("extra unstable inserts",
                "extra_unstable_inserts"), ("corrupt unstable walks", "unstable_corrupt_walks"),
                ("changed after insert", "unstable_changed_after_insert"), ("CoW", "cow_ksm"),
                ("missed merges", "missed_merges"), ("peak unshared", "peak_pages_unshared"),
                ("ksmd CPU ms (modelled)", "ksmd_cpu_ms"))
        hashes = []
        for r in m._rows(KS):
            if r["trace"] == trace and r["hash"] not in hashes:
                hashes.append(r["hash"])
        if not hashes:
            raise m.RenderError(f"{KS}: no rows for trace {trace}")
        out = ["| hash | " + " | ".join(c[0] for c in cols) + " |",
               "|---|" + "---:|" * len(cols)]
        for h in hashes:
            out.append(f"| {h} | " + " | ".join(mr(ks(trace, h, c), ",.0f", every="")
                                                 for _, c in cols)
                       + " |")
        return "\n".join(out)

    def _prows(name, seed):
        out = []
        for r in m._match(PS, dict(trace=name, seed=seed)):
            p = r["policy"].split(":")[0]
            out.append(dict(r, row=p + ("/" + r["hash"] if r["hash"] != "none" else "")))
        if not out:
            raise m.RenderError(f"{PS}: no rows for {name}, seed {seed}")
        return out

    def _kpick(rows):
        # kernel_pick's rule, on one seed's rows
        ks_ = [r for r in rows if not m.not_in_kernel(r["row"])]
        clean = [r for r in ks_ if float(r["false_positives"]) == 0] or ks_
        best = max(float(r["saved_mean"]) for r in clean)
        return min((r for r in clean if float(r["saved_mean"]) >= best),
                   key=lambda r: float(r["ksmd_cpu_ms"]))["row"]

    def ps_n(name=None):
        """The seeds of trace NAME, or the fewest any trace has."""
        if name is not None:
            return len(_seeds(PS, trace=name))
        return min(len(_seeds(PS, trace=n_)) for n_, _ in m.POLICY_TRACES)

    def ps_total():
        """Trace-seeds: the seeds of every trace, summed."""
        return sum(ps_n(n_) for n_, _ in m.POLICY_TRACES)

    def ps_desc():
        """'N seeds', or each trace's count where they differ."""
        ns = [(label, ps_n(n_)) for n_, label in m.POLICY_TRACES]
        if len({n for _, n in ns}) == 1:
            return f"{ns[0][1]} seeds"
        return "; ".join(f"{label}: {n} seed{'s' if n > 1 else ''}" for label, n in ns)

    def ps_picks(name):
        return [_kpick(_prows(name, s)) for s in _seeds(PS, trace=name)]

    def _one(name, seed, row):
        rows = _prows(name, seed)
        if row in ("pick", "classified/pick"):
            k = _kpick(rows)
            row = k if row == "pick" else "classified/" + k.split("/", 1)[1]
        hits = [r for r in rows if r["row"] == row]
        if len(hits) != 1:
            raise m.RenderError(f"{PS}: {len(hits)} rows named {row} for {name}, seed {seed}")
        return hits[0]

    def ps(name, row, col):
        # every seed of the trace: _one fails for a row that lacks one
        seeds = _seeds(PS, trace=name)
        return [m._val(_one(name, s, row)[col]) for s in seeds]

    def psr(name, row, col, spec):
        return mr(ps(name, row, col), spec)

    def ps_pct(name, row, col):
        return [100 * (a / b - 1) for a, b in zip(ps(name, row, col),
                                                   ps(name, "kernel/xxhash", col))]

    def ps_front(name, row):
        return sum(1 for x in ps(name, row, "frontier") if x == 1)

    def table_policies_seeds():
        out = ["| trace | row | ksmd CPU ms (modelled) | vs kernel/xxhash | mean saved | "
               "vs kernel/xxhash | CoW | false pos | corrupt walks | on the frontier |",
               "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for name, label in m.POLICY_TRACES:
            n = ps_n(name)
            picks = ps_picks(name)
            rows = ["kernel/xxhash"] + sorted(set(picks) - {"kernel/xxhash"})
            rows += [r for r in ("kernel/xxh3", "kernel/crc32c", "kernel/jhash2", "no-gate",
                                 "dirty-bit", "partial-hash", "classified/xxhash",
                                 "classified/xxh3") if r not in rows]
            for i, row in enumerate(rows):
                fp = max(ps(name, row, "false_positives"))
                notes = [t for t, on in (
                    (f"pick in {picks.count(row)} of {n} seeds", row in picks),
                    ("today", row == "kernel/xxhash"),
                    ("not in the kernel", m.not_in_kernel(row)),
                    ("excluded: false positives", fp > 0 and row.startswith("kernel/")))
                    if on]
                tag = row + (f" ({', '.join(notes)})" if notes else "")
                zero = 0 in ps(name, "kernel/xxhash", "saved_mean")
                out.append(
                    f"| {label if i == 0 else ''} | {tag} | "
                    f"{mr(ps(name, row, 'ksmd_cpu_ms'), ',.0f', every='')} | "
                    f"{mr(ps_pct(name, row, 'ksmd_cpu_ms'), '+.1f', '%', '')} | "
                    f"{mr(ps(name, row, 'saved_mean'), ',.0f', every='')} | "
                    + ("-" if zero else mr(ps_pct(name, row, 'saved_mean'), '+.1f', '%', ''))
                    + " | " + " | ".join(mr(ps(name, row, c), ",.0f", every="") for c in
                                         ("cow_ksm", "false_positives", "unstable_corrupt_walks"))
                    + f" | {ps_front(name, row)}/{n} |")
        return "\n".join(out)

    return {"ks": ks, "ks_n": ks_n, "ksr": ksr, "ks_save": ks_save, "table_ks": table_ks,
            "mr": mr, "ps": ps, "ps_n": ps_n, "ps_total": ps_total, "ps_desc": ps_desc, "psr": psr, "ps_pct": ps_pct,
            "ps_picks": ps_picks, "ps_front": ps_front,
            "table_policies_seeds": table_policies_seeds}
