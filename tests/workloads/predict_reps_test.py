#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""workloads/real/predict_reps.py (no root, no live KSM): the committed
predict*/replicates.csv are what the script writes from their folders; a
later replicate's verify.csv rows without a prediction ('-') are left out
and counted, its ratios come from the counts; bad input (a missing column,
a cell that is not a number, no recommended row, knobs other than tune's,
no load.env, a folder that is not rN, bad arguments) is one line, exit 2,
and no output file.
predict_reps_test.py REPO_ROOT"""
import os
import shutil
import subprocess
import sys
import tempfile

root = sys.argv[1]
script = os.path.join(root, "workloads", "real", "predict_reps.py")
res = os.path.join(root, "analysis", "results")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402


def run(*args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def refused(d, what, needle):
    """predict_reps.py on D fails with one line holding NEEDLE, exit 2, no output."""
    out = os.path.join(d, "out.csv")
    p = run(d, "-o", out)
    lines = p.stderr.strip().split("\n")
    check(p.returncode == 2 and len(lines) == 1 and needle in p.stderr and not os.path.exists(out),
          f"{what}: exit {p.returncode}, no '{needle}' in one line, or output written: {p.stderr!r}")


def edit(path, old, new):
    with open(path) as f:
        s = f.read()
    check(old in s, f"{path}: '{old}' to replace")
    with open(path, "w") as f:
        f.write(s.replace(old, new, 1))


with tempfile.TemporaryDirectory() as tmp:
    for w in ("predict", "predict-redis"):
        committed = os.path.join(res, w, "replicates.csv")
        out = os.path.join(tmp, w + ".csv")
        p = run(os.path.join(res, w), "-o", out)
        check(p.returncode == 0, f"{w}: exit {p.returncode}: {p.stderr}")
        if p.returncode == 0:
            check(open(out).read() == open(committed).read(),
                  f"{w}/replicates.csv is not what predict_reps.py writes from {w}/")

    # a folder of replicate 1 (the committed Redis run's files) and one later
    # replicate, made up: three samples, the last after the trace's end
    d = os.path.join(tmp, "w")
    os.makedirs(os.path.join(d, "reps", "r2"))
    for f in ("minutes.csv", "run.env", "tune.csv"):
        shutil.copy(os.path.join(res, "predict-redis", f), d)
    r2 = os.path.join(d, "reps", "r2")
    shutil.copy(os.path.join(res, "predict-redis", "tune.csv"), r2)
    with open(os.path.join(r2, "run.env"), "w") as f:
        f.write("date=2026-12-06 14:30 UTC\ncpu=AMD EPYC\nkernel=6.18.44-test\n"
                "setting=pages_to_scan=1000,sleep_millisecs=20,smart_scan=0,"
                "use_zero_pages=0,max_page_sharing=256\n")
    with open(os.path.join(r2, "load.env"), "w") as f:
        f.write("load1_live_start=2.50\nload1_live_end=3.10\nforeign=none seen\n")
    with open(os.path.join(r2, "verify.csv"), "w") as f:
        f.write("t_s,live_pages_sharing,model_pages_sharing,pages_sharing_ratio,"
                "live_ksm_zero_pages,model_ksm_zero_pages,live_ksmd_cpu_ms,"
                "model_ksmd_cpu_ms,ksmd_cpu_ratio,live_full_scans,model_full_scans\n"
                "60.0,1000,1000,1.000,0,0,110,100,1.100,20,21\n"
                "120.0,990,1000,0.990,0,0,240,200,1.200,41,42\n"
                "180.0,995,-,-,0,-,360,-,-,60,\n".replace(",\n", ",-\n"))
    p = run(d)
    check(p.returncode == 0, f"made-up folder: exit {p.returncode}: {p.stderr}")
    rows = open(os.path.join(d, "replicates.csv")).read().strip().split("\n") if p.returncode == 0 else []
    check(len(rows) == 3, f"made-up folder: {len(rows)} lines, not a header and two replicates")
    if len(rows) == 3:
        r = dict(zip(rows[0].split(","), rows[2].split(",")))
        check((r["rep"], r["marks"], r["marks_without_model"]) == ("2", "2", "1"),
              f"replicate 2: rep, marks, marks without model {r['rep']}, {r['marks']}, "
              f"{r['marks_without_model']}")
        check((r["sharing_ratio_min"], r["sharing_ratio_max"]) == ("0.9900", "1.0000"),
              f"replicate 2: sharing {r['sharing_ratio_min']}-{r['sharing_ratio_max']}")
        check((r["cpu_ratio_min"], r["cpu_ratio_max"], r["cpu_ratio_end"]) ==
              ("1.1000", "1.2000", "1.2000"), f"replicate 2: CPU {r}")
        check((r["live_full_scans_end"], r["model_full_scans_end"], r["load1_live_start"],
               r["load1_live_end"], r["foreign"]) == ("41", "42", "2.50", "3.10", "none seen"),
              f"replicate 2: {r}")
        check(r["setting"] == "1000/20 smart_scan=0 use_zero_pages=0 max_page_sharing=256",
              f"replicate 2: setting {r['setting']}")
    os.remove(os.path.join(d, "replicates.csv"))

    def case(what, path, old, new, needle):
        bad = os.path.join(tmp, "bad")
        shutil.rmtree(bad, ignore_errors=True)
        shutil.copytree(d, bad)
        if old is None:
            os.remove(os.path.join(bad, path))
        else:
            edit(os.path.join(bad, path), old, new)
        refused(bad, what, needle)

    case("a missing column", "minutes.csv", "live_ksmd_cpu_ms", "live_cpu",
         "minutes.csv:1: no column 'live_ksmd_cpu_ms'")
    case("a cell not a number", "reps/r2/verify.csv", "240,200", "240,2x0",
         "verify.csv:3: model_ksmd_cpu_ms '2x0' is not a number")
    case("half the model columns '-'", "reps/r2/verify.csv", "360,-", "360,100",
         "verify.csv:4: some model columns '-'")
    case("no recommended row", "reps/r2/tune.csv", ",1,1,1\n", ",1,1,0\n",
         "0 recommended rows")
    case("knobs other than tune's", "reps/r2/run.env", "smart_scan=0", "smart_scan=1",
         "used smart_scan=1, tune.csv recommends 0")
    case("no load.env", "reps/r2/load.env", None, None, "load.env: missing")
    case("a load that is not one", "reps/r2/load.env", "3.10", "high",
         "load 'high' is not a load average")
    case("no foreign=", "reps/r2/load.env", "foreign=none seen", "", "load.env: no foreign=")
    case("a run.env line", "run.env", "cpu=", "cpu ", "not KEY=VALUE")
    bad = os.path.join(tmp, "bad")
    shutil.rmtree(bad)
    shutil.copytree(d, bad)
    os.rename(os.path.join(bad, "reps", "r2"), os.path.join(bad, "reps", "two"))
    refused(bad, "a folder not rN", "not a replicate folder")
    for args in ((), ("-o",), (d, "-x", "y"), (os.path.join(tmp, "nowhere"),)):
        p = run(*args)
        check(p.returncode == 2 and len(p.stderr.strip().split("\n")) == 1,
              f"arguments {args}: exit {p.returncode}, {p.stderr!r}")
finish()
