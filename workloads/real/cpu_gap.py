#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Where the model's ksmd CPU falls short of the live ksmd on a recorded
service: the recorded trace itself replayed on the live kernel, and pieces
of it, each beside the model (root; the live KSM unused by anything else).

  cpu_gap.py [--reps N] [--knobs 'k=v ...'] [--ksmsim PATH] [--work DIR]
             [--pairs N] TRACE OUT.csv
  cpu_gap.py --make-only DIR [...] TRACE
  cpu_gap.py --reprice [...] TRACE OUT.csv

Cases, each timed between its first and its last mark (ksmd's CPU from
/proc/<ksmd>/schedstat as `ksmsim live` reads it, and the model's
ksmd_cpu_ms with the built-in cost table), compared per page scanned
(live_over_model: live ns a page over the model's):
  trace           TRACE as recorded, knobs --knobs first (one replay: it
                  takes the trace's length)
  static          TRACE's pages at its first time stamp, then 5 full scans
                  (mark a) and 20 more (mark b): the state without writes
  static-shared   the same with only the contents two or more pages hold
                  (each mm's pages packed from 0x100000 in address order)
  static-unique   ... only the contents one page holds
  pairs-ordered   --pairs pages (default 65536) over two mms, the same
                  contents in the same order: revisits of merged pages in
                  the order their KSM pages were made (passes 3 to 12)
  pairs-scattered the same, the second mm's pages in a shuffled order
The knobs of the constructed cases are 10000 pages every 10 ms (the
static ones keep --knobs' pages_to_scan). OUT.csv: one row per case and
replay. Exit 77 when the live KSM cannot be used (not root, no KSM).
--make-only DIR writes each case's trace (DIR/CASE.ksmb) and the model's
marks (DIR/CASE-model.csv), and replays nothing (no root needed).
--reprice keeps OUT.csv's live columns as they were measured and makes its
model columns again with this build (after a change of the cost table; no
root needed): its first line then says both when.
"""
import argparse
import collections
import csv
import datetime
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def die(msg, status=2):
    print("cpu_gap.py: " + msg, file=sys.stderr)
    sys.exit(status)


def between(path):
    """ksmd_cpu_ms and pages_scanned from the first to the last mark."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    if len(rows) < 2:
        die(f"{path}: fewer than two marks")
    a, b = rows[0], rows[-1]
    return (float(b["ksmd_cpu_ms"]) - float(a["ksmd_cpu_ms"]),
            int(b["pages_scanned"]) - int(a["pages_scanned"]),
            int(b["pages_sharing"]), int(b["pages_unshared"]))


def model_columns(model_ms, scanned, sharing, unshared, live_ms, lscanned):
    """A row's model columns, and live/model a page scanned: a live ksmd
    short of CPU scans fewer pages in the same time, so totals mislead."""
    return {"pages_scanned": scanned, "pages_sharing": sharing, "pages_unshared": unshared,
            "model_ms": f"{model_ms:.1f}", "model_ns_per_page": f"{model_ms * 1e6 / scanned:.1f}",
            "live_over_model": f"{live_ms / max(lscanned, 1) / (model_ms / scanned):.3f}"}


def knob_lines(knobs):
    out = []
    for kv in knobs.split():
        k, sep, v = kv.partition("=")
        if not sep or not k or not v.isdigit():
            die(f"--knobs: '{kv}' is not NAME=NUMBER")
        out.append(f"0 set {k} {v}")
    return out


def static_cases(text_lines, knobs):
    """The trace's state at its first time stamp, settled: whole, shared, unique."""
    header, body = text_lines[0], [l for l in text_lines[1:] if l and not l.startswith("#")]
    writes = [int(l.split(None, 1)[0]) for l in body if l.split()[1] == "write"]
    if not writes:
        die("the trace writes no page")
    # the state when the capture began: every record up to the first write's time
    kept = [l for l in body if int(l.split(None, 1)[0]) <= writes[0]]
    # the knobs first, at time 0, before any record they would follow
    sets = ["0 " + l.split(None, 1)[1] for l in kept if l.split()[1] == "set"]
    sets += [l for l in knob_lines(knobs) if l.split()[2] != "sleep_millisecs"]
    sets.append("0 set sleep_millisecs 10")	# a settle needs at least 10
    tail = ["1000000 settle 5", "1000000 mark a", "1000000 settle 20", "1000000 mark b"]
    whole = [header] + sets + [l for l in kept if l.split()[1] != "set"] + tail
    mms, last = [], collections.defaultdict(dict)
    for l in kept:
        p = l.split()
        if p[1] == "spawn":
            mms.append(p[2])
        elif p[1] == "write":
            last[p[2]][int(p[3], 16)] = p[4]
        elif p[1] in ("fill", "fillseq", "fork", "unmap"):
            die(f"a '{p[1]}' record in the first batch: only write records are split")
    count = collections.Counter(c for mm in mms for c in last[mm].values())

    def packed(keep):
        out = [header] + sets
        for mm in mms:
            contents = [last[mm][v] for v in sorted(last[mm]) if keep(last[mm][v])]
            n = len(contents)
            if not n:
                continue
            out += [f"0 spawn {mm}", f"0 map {mm} 0x100000 {n}",
                    f"0 advise {mm} 0x100000 {n} mergeable"]
            out += [f"0 write {mm} {0x100000 + i:#x} {c}" for i, c in enumerate(contents)]
        return out + tail
    return {"static": whole, "static-shared": packed(lambda c: count[c] >= 2),
            "static-unique": packed(lambda c: count[c] == 1)}


def pairs_case(n, scattered):
    half = n // 2
    lines = ["ksmtrace 1", "0 set pages_to_scan 10000", "0 set sleep_millisecs 10",
             "0 set smart_scan 0"]
    for m in (0, 1):
        lines += [f"0 spawn m{m}", f"0 map m{m} 0x100000 {half}",
                  f"0 advise m{m} 0x100000 {half} mergeable"]
    lines.append(f"0 fillseq m0 0x100000 {half} 5000000")
    if scattered:
        perm = list(range(half))
        random.Random(1).shuffle(perm)
        lines += [f"0 fillseq m1 {0x100000 + i:#x} 1 {5000000 + perm[i]}" for i in range(half)]
    else:
        lines.append(f"0 fillseq m1 0x100000 {half} 5000000")
    return lines + ["0 set run 1", "0 settle 3", "0 mark a", "0 settle 9", "0 mark b"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--knobs", default="pages_to_scan=1000 sleep_millisecs=20 smart_scan=0 "
                    "use_zero_pages=0 max_page_sharing=256")
    ap.add_argument("--ksmsim", default=os.environ.get("KSMSIM", os.path.join(TOP, "build/cli/ksmsim")))
    ap.add_argument("--work", default=None)
    ap.add_argument("--pairs", type=int, default=65536)
    ap.add_argument("--make-only", metavar="DIR", default=None)
    ap.add_argument("--reprice", action="store_true")
    a = ap.parse_args()
    if not a.out and not a.make_only:
        die("OUT.csv missing (or --make-only DIR)")
    if a.reprice and a.make_only:
        die("--reprice and --make-only: one or the other")
    old_rows, old_head = None, None
    if a.reprice:
        try:
            with open(a.out, newline="") as f:
                text = f.read().split("\n")
        except OSError as e:
            die(f"--reprice: {a.out}: {e.strerror}")
        old_head = text[0] if text and text[0].startswith("# ") else None
        old_rows = list(csv.DictReader(l for l in text if l and not l.startswith("#")))
        need = {"case", "rep", "live_ms", "live_pages_scanned"}
        if not old_head or not old_rows or not need <= set(old_rows[0]):
            die(f"--reprice: {a.out}: not a cpu_gap.py table (a '# ' first line, then "
                f"the columns {', '.join(sorted(need))})")
    knob_lines(a.knobs)	# refused now, not after the live check
    if a.reps < 1:
        die(f"--reps {a.reps}: at least 1")
    if a.pairs < 64 or a.pairs > 4 << 20:
        die(f"--pairs {a.pairs}: 64 to 4194304")
    if not os.access(a.ksmsim, os.X_OK):
        die(f"no ksmsim at {a.ksmsim} (build it, or --ksmsim)")
    if a.make_only:
        a.work = a.make_only
    elif not a.reprice:
        check = subprocess.run([a.ksmsim, "live", "--check"], capture_output=True, text=True)
        if check.returncode != 0:
            print("cpu_gap.py: skipped: " + (check.stderr.strip() or "live KSM not usable"),
                  file=sys.stderr)
            sys.exit(77)
    load0 = os.getloadavg()[0]	# the live ksmd's price a page moves with the machine's load
    work = a.work or tempfile.mkdtemp(prefix="ksmsim-cpugap.")
    os.makedirs(work, exist_ok=True)
    try:
        text = subprocess.run([a.ksmsim, "trace", "cat", a.trace], capture_output=True,
                              text=True)
        if text.returncode != 0:
            die(text.stderr.strip() or f"{a.trace}: cannot read")
        lines = text.stdout.split("\n")
        cases = {"trace": [lines[0]] + knob_lines(a.knobs) + [l for l in lines[1:] if l]}
        cases.update(static_cases(lines, a.knobs))
        cases["pairs-ordered"] = pairs_case(a.pairs, False)
        cases["pairs-scattered"] = pairs_case(a.pairs, True)
        rows = []
        for name, body in cases.items():
            src = os.path.join(work, name + ".ksmt")
            with open(src, "w") as f:
                f.write("\n".join(body) + "\n")
            path = os.path.join(work, name + ".ksmb")
            subprocess.run([a.ksmsim, "trace", "convert", src, path], check=True)
            mcsv = os.path.join(work, name + "-model.csv")
            subprocess.run([a.ksmsim, "run", "--trace", path, "--batch-time", "--quiet",
                            "--marks-csv", mcsv], check=True)
            model_ms, scanned, sharing, unshared = between(mcsv)
            if a.make_only:
                continue
            if a.reprice:
                for r in old_rows:
                    if r["case"] != name:
                        continue
                    r.update(model_columns(model_ms, scanned, sharing, unshared,
                                           float(r["live_ms"]), int(r["live_pages_scanned"])))
                continue
            for rep in range(1, (1 if name == "trace" else a.reps) + 1):
                lcsv = os.path.join(work, f"{name}-live{rep}.csv")
                print(f"cpu_gap.py: {name}, live replay {rep}", file=sys.stderr)
                with open(lcsv, "w") as f:
                    r = subprocess.run([a.ksmsim, "live", "--trace", path], stdout=f)
                if r.returncode != 0:
                    die(f"{name}: ksmsim live failed ({r.returncode})", 1)
                live_ms, lscanned, lsharing, lunshared = between(lcsv)
                # the columns in their order, the model's filled by model_columns
                row = dict.fromkeys(("case", "rep", "pages_scanned", "live_pages_scanned",
                                     "pages_sharing", "live_pages_sharing", "pages_unshared",
                                     "live_pages_unshared", "model_ms", "live_ms",
                                     "model_ns_per_page", "live_ns_per_page",
                                     "live_over_model"))
                row.update({"case": name, "rep": rep, "live_pages_scanned": lscanned,
                            "live_pages_sharing": lsharing, "live_pages_unshared": lunshared,
                            "live_ms": f"{live_ms:.1f}",
                            "live_ns_per_page": f"{live_ms * 1e6 / max(lscanned, 1):.1f}"})
                row.update(model_columns(model_ms, scanned, sharing, unshared, live_ms, lscanned))
                rows.append(row)
        if a.make_only:
            return
        if a.reprice:
            missing = sorted({r["case"] for r in old_rows} - set(cases))
            if missing:
                die(f"--reprice: {a.out}: cases this script does not make: {', '.join(missing)}")
            rows = old_rows
            head = old_head.split("; the model with")[0]
            stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            head += (f"; the live columns as measured then, the model's made again {stamp}"
                     f" with the built-in cost table of that day (--reprice)")
        cpu = subprocess.run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p' | head -1"],
                             capture_output=True, text=True).stdout.strip()
        tmp = a.out + ".tmp"
        with open(tmp, "w", newline="") as f:
            if a.reprice:
                f.write(head + "\n")
            else:
                f.write(f"# workloads/real/cpu_gap.py {os.path.basename(a.trace)}, knobs {a.knobs};"
                        f" {cpu}, Linux {os.uname().release}; 1-minute load average {load0:.2f} at"
                        f" the start, {os.getloadavg()[0]:.2f} at the end; the model with the"
                        f" built-in cost table\n")
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        os.replace(tmp, a.out)
        for name in cases:
            r = [float(x["live_over_model"]) for x in rows if x["case"] == name]
            if not r:	# --reprice of a table without this case
                continue
            print(f"{name:16s} live/model {statistics.median(r):.2f} "
                  f"({min(r):.2f}-{max(r):.2f})")
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
