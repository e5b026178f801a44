#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""workloads/real/cpu_gap.py --make-only on a small recorded-like trace (no
root): every case's trace reads back, the static state holds the pages of
the first batch only, its shared and unique pieces split it (each content
of static-shared on two or more pages, each of static-unique on one, the
page counts adding up), the pairs cases hold the same contents in the
same or another order, and bad arguments get one line and exit 2.
cpu_gap_test.py REPO_ROOT KSMSIM"""
import collections
import os
import subprocess
import sys
import tempfile

root, ksmsim = sys.argv[1], sys.argv[2]
script = os.path.join(root, "workloads", "real", "cpu_gap.py")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, failed, finish  # noqa: E402


def pages(path):
    """{mm: {vpn: content}} of every write in a trace."""
    out = subprocess.run([ksmsim, "trace", "cat", path], capture_output=True, text=True,
                         check=True).stdout
    got = collections.defaultdict(dict)
    for line in out.split("\n"):
        p = line.split()
        if len(p) >= 5 and p[1] == "write":
            got[p[2]][int(p[3], 16)] = p[4]
        if len(p) >= 6 and p[1] == "fillseq":
            for i in range(int(p[4])):
                got[p[2]][int(p[3], 16) + i] = "rand:%d" % (int(p[5], 0) + i)
    return got


with tempfile.TemporaryDirectory() as tmp:
    # three mms: contents a, b on every mm; c on two; one of its own each;
    # a later batch that must not reach the static cases
    lines = ["ksmtrace 1", "0 set run 1"]
    for m, own in (("p1", "11"), ("p2", "22"), ("p3", "33")):
        lines += [f"5 spawn {m}", f"5 map {m} 0x100 16", f"5 advise {m} 0x100 16 mergeable",
                  f"5 write {m} 0x100 byte:aa", f"5 write {m} 0x105 byte:bb",
                  f"5 write {m} 0x10a byte:{own}"]
    lines += ["5 write p1 0x10f byte:cc", "5 write p2 0x101 byte:cc",
              "2000000 write p1 0x102 byte:dd", "2000000 mark i1", "4000000 mark end"]
    src = os.path.join(tmp, "t.ksmt")
    with open(src, "w") as f:
        f.write("\n".join(lines) + "\n")
    made = os.path.join(tmp, "made")
    r = subprocess.run([sys.executable, script, "--ksmsim", ksmsim, "--pairs", "128",
                        "--make-only", made, src], capture_output=True, text=True)
    check(r.returncode == 0, f"--make-only exits 0 ({r.returncode}: {r.stderr.strip()})")
    cases = ("trace", "static", "static-shared", "static-unique", "pairs-ordered",
             "pairs-scattered")
    for c in cases:
        check(os.path.exists(os.path.join(made, c + ".ksmb")), f"{c}.ksmb written")
        check(os.path.exists(os.path.join(made, c + "-model.csv")), f"{c}-model.csv written")
    if not failed:
        st = pages(os.path.join(made, "static.ksmb"))
        sh = pages(os.path.join(made, "static-shared.ksmb"))
        un = pages(os.path.join(made, "static-unique.ksmb"))
        n = lambda g: sum(len(v) for v in g.values())
        check(n(st) == 11, f"static holds the 11 pages of the first batch ({n(st)})")
        check(all("byte:dd" not in v.values() for v in st.values()),
              "static holds nothing written after the first batch")
        cnt = collections.Counter(c for v in st.values() for c in v.values())
        check(all(cnt[c] >= 2 for v in sh.values() for c in v.values()),
              "static-shared holds only contents on two or more pages")
        check(all(cnt[c] == 1 for v in un.values() for c in v.values()),
              "static-unique holds only contents on one page")
        check(n(sh) + n(un) == n(st), f"the pieces add up ({n(sh)} + {n(un)} != {n(st)})")
        check(sorted(sh["p1"].values()) == ["byte:aa", "byte:bb", "byte:cc"],
              f"p1's shared pages packed in address order ({sh['p1']})")
        po = pages(os.path.join(made, "pairs-ordered.ksmb"))
        ps = pages(os.path.join(made, "pairs-scattered.ksmb"))
        check(po["m0"] == po["m1"] and len(po["m0"]) == 64, "ordered pairs: m1 = m0, 64 pages")
        check(sorted(ps["m1"].values()) == sorted(ps["m0"].values()) and ps["m1"] != ps["m0"],
              "scattered pairs: m1 holds m0's contents in another order")
        tr = pages(os.path.join(made, "trace.ksmb"))
        check("byte:dd" in tr["p1"].values(), "the trace case keeps every record")
    # --reprice: the live columns stay, the model's are made again
    old = os.path.join(tmp, "old.csv")
    with open(old, "w") as f:
        f.write("# workloads/real/cpu_gap.py t.ksmt, knobs x; a CPU; the model with the "
                "built-in cost table\n"
                "case,rep,pages_scanned,live_pages_scanned,pages_sharing,live_pages_sharing,"
                "pages_unshared,live_pages_unshared,model_ms,live_ms,model_ns_per_page,"
                "live_ns_per_page,live_over_model\n"
                "pairs-ordered,1,1,7680,0,64,0,0,999.0,3.5,1.0,455.7,9.999\n")
    r = subprocess.run([sys.executable, script, "--ksmsim", ksmsim, "--pairs", "128",
                        "--reprice", src, old], capture_output=True, text=True)
    check(r.returncode == 0, f"--reprice exits 0 ({r.returncode}: {r.stderr.strip()})")
    with open(old) as f:
        got = f.read().split("\n")
    rows = [l.split(",") for l in got[2:] if l]
    check(len(rows) == 1 and rows[0][3] == "7680" and rows[0][9] == "3.5",
          f"--reprice keeps the live columns ({rows})")
    if len(rows) == 1:
        # 64 pages a mm, passes 3 to 12 between the marks
        check(rows[0][2] == str(128 * 9) and rows[0][8] != "999.0" and rows[0][12] != "9.999",
              f"--reprice makes the model columns again ({rows[0]})")
    check(got[0].startswith("# workloads/real/cpu_gap.py t.ksmt") and "--reprice" in got[0],
          f"--reprice says so on the first line ({got[0]!r})")
    with open(old, "w") as f:
        f.write("case,rep\nx,1\n")
    r = subprocess.run([sys.executable, script, "--ksmsim", ksmsim, "--reprice", src, old],
                       capture_output=True, text=True)
    check(r.returncode == 2 and r.stderr.count("\n") == 1,
          f"--reprice of another table: one line, exit 2 ({r.returncode}: {r.stderr!r})")
    for args, what in ((["--reps", "0", src, "o.csv"], "--reps 0"),
                       (["--pairs", "7", src, "o.csv"], "--pairs 7"),
                       (["--knobs", "pages_to_scan", src, "o.csv"], "--knobs without ="),
                       ([src], "no OUT and no --make-only")):
        r = subprocess.run([sys.executable, script, "--ksmsim", ksmsim] + args,
                           capture_output=True, text=True, cwd=tmp)
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and not os.path.exists(
            os.path.join(tmp, "o.csv")), f"{what}: one line, exit 2 ({r.returncode}: {r.stderr!r})")

finish()
