#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""predict.sh's live runs of one workload, one row per replicate, for the
results page's section 11: does tune's prediction hold over runs, not
only in one?

  predict_reps.py DIR [-o CSV]

DIR is replicate 1, made by the earlier form of predict.sh (minutes.csv:
the live counters at record's marks beside `ksmsim run --marks-csv`);
DIR/reps/rN/ are the later replicates, made by today's predict.sh
(verify.csv: `ksmsim verify`, a sample a minute from KSM on), each with
its run.env, tune.csv and load.env (the 1-minute load average at the
start and the end of the live run: `cut -d' ' -f1 /proc/loadavg`,
sampled every 15 s beside the run; foreign=: other processes' mergeable
memory seen during the live run, in words, or "none seen": the live
KSM is the machine's and merges them too; replicate 1 has none).  Writes CSV
(default DIR/replicates.csv): per replicate the date, CPU, kernel, tune's
recommended setting (checked against the knobs run.env says the live run
used), live/model pages_sharing and ksmd CPU lowest and highest over the
marks, ksmd CPU at the last mark, full scans live and modelled there.
Ratios are computed from the counts, not from verify's rounded ratios;
marks without a prediction ('-', after the trace's end) are left out and
counted.  Bad input: one line naming the file (and line), exit 2, no
output written."""
import csv
import io
import os
import re
import sys

COLUMNS = ("rep", "date", "cpu", "kernel", "source", "setting", "costs", "marks",
           "marks_without_model", "sharing_ratio_min", "sharing_ratio_max",
           "cpu_ratio_min", "cpu_ratio_max", "cpu_ratio_end", "live_ksmd_cpu_ms_end",
           "model_ksmd_cpu_ms_end", "live_full_scans_end", "model_full_scans_end",
           "load1_live_start", "load1_live_end", "foreign")
KNOBS = ("pages_to_scan", "sleep_millisecs", "smart_scan", "use_zero_pages",
         "max_page_sharing")


class Bad(Exception):
    """One line for the user: what is wrong, and where."""


def read_env(path):
    """KEY=VALUE lines of PATH (run.env, load.env) as a dict."""
    if not os.path.isfile(path):
        raise Bad(f"{path}: missing")
    env = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            if "=" not in line:
                raise Bad(f"{path}:{n}: not KEY=VALUE: {line[:60]!r}")
            k, v = line.split("=", 1)
            env[k] = v
    return env


def need(env, path, *keys):
    for k in keys:
        if not env.get(k):
            raise Bad(f"{path}: no {k}=")
    return [env[k] for k in keys]


def read_csv(path, cols):
    """Rows of PATH as (line number, dict); every column in COLS present."""
    if not os.path.isfile(path):
        raise Bad(f"{path}: missing")
    with open(path, encoding="utf-8", newline="") as f:
        r = csv.DictReader(f)
        missing = [c for c in cols if c not in (r.fieldnames or [])]
        if missing:
            raise Bad(f"{path}:1: no column '{missing[0]}'")
        rows = [(r.line_num, row) for row in r]
    if not rows:
        raise Bad(f"{path}: no rows")
    return rows


def num(path, n, row, col, allow_dash=False):
    s = row.get(col)
    if allow_dash and s == "-":
        return None
    try:
        x = float(s)
    except (TypeError, ValueError):
        raise Bad(f"{path}:{n}: {col} '{s}' is not a number") from None
    if x != x or x in (float("inf"), float("-inf")) or x < 0:
        raise Bad(f"{path}:{n}: {col} '{s}' is not a finite count")
    return x


def recommended(path):
    """tune.csv's recommended row: (label, {knob: value}, costs)."""
    rows = read_csv(path, KNOBS + ("recommended", "advisor_mode", "costs"))
    rec = [(n, r) for n, r in rows if r["recommended"] == "1"]
    if len(rec) != 1:
        raise Bad(f"{path}: {len(rec)} recommended rows, not 1")
    n, r = rec[0]
    if r["advisor_mode"] not in ("none", ""):
        raise Bad(f"{path}:{n}: an advisor setting; predict_reps.py reads pages_to_scan picks only")
    knobs = {k: str(int(num(path, n, r, k))) for k in KNOBS}
    label = "%s/%s smart_scan=%s use_zero_pages=%s max_page_sharing=%s" % tuple(
        knobs[k] for k in KNOBS)
    return label, knobs, r["costs"]


def used_knobs(env, path):
    """The knobs run.env says the live run used: knobs= (space-separated,
    replicate 1) or setting= (comma-separated, today's predict.sh)."""
    s = env.get("knobs") or env.get("setting")
    if not s:
        raise Bad(f"{path}: no knobs= or setting=")
    got = {}
    for w in re.split(r"[ ,]", s.strip()):
        if "=" not in w:
            raise Bad(f"{path}: knob '{w}' is not NAME=VALUE")
        k, v = w.split("=", 1)
        got[k] = v
    return got


def marks_first(d):
    """Replicate 1: minutes.csv, live at record's marks beside the model's."""
    p = os.path.join(d, "minutes.csv")
    cols = ("label", "live_pages_sharing", "model_pages_sharing", "live_ksmd_cpu_ms",
            "model_ksmd_cpu_ms", "live_full_scans", "model_full_scans")
    out = []
    for n, r in read_csv(p, cols):
        out.append(tuple(num(p, n, r, c) for c in cols[1:]) + ((p, n),))
    return "minutes.csv", out, 0


def marks_verify(d):
    """A later replicate: verify.csv, a sample a minute from KSM on."""
    p = os.path.join(d, "verify.csv")
    cols = ("t_s", "live_pages_sharing", "model_pages_sharing", "live_ksmd_cpu_ms",
            "model_ksmd_cpu_ms", "live_full_scans", "model_full_scans")
    out, dashed = [], 0
    for n, r in read_csv(p, cols):
        v = [num(p, n, r, c, allow_dash=c.startswith("model_")) for c in cols[1:]]
        if None in v:
            if not all(v[i] is None for i in (1, 3, 5)):
                raise Bad(f"{p}:{n}: some model columns '-', not all")
            dashed += 1
            continue
        out.append(tuple(v) + ((p, n),))
    if not out:
        raise Bad(f"{p}: no sample with a prediction")
    return "verify.csv", out, dashed


def ratio(a, b, where, what):
    if b <= 0:
        raise Bad(f"{where[0]}:{where[1]}: model {what} is 0, no ratio")
    return a / b


def replicate(rep, d, first):
    env_path = os.path.join(d, "run.env")
    env = read_env(env_path)
    date, cpu, kernel = need(env, env_path, "date", "cpu", "kernel")
    label, knobs, costs = recommended(os.path.join(d, "tune.csv"))
    used = used_knobs(env, env_path)
    for k, v in knobs.items():
        if used.get(k) != v:
            raise Bad(f"{env_path}: the live run used {k}={used.get(k)}, tune.csv recommends {v}")
    source, marks, dashed = (marks_first if first else marks_verify)(d)
    sh = [ratio(m[0], m[1], m[6], "pages_sharing") for m in marks]
    cp = [ratio(m[2], m[3], m[6], "ksmd CPU") for m in marks]
    last = marks[-1]
    load = ("", "", "")
    if not first:
        lp = os.path.join(d, "load.env")
        le = read_env(lp)
        load = tuple(need(le, lp, "load1_live_start", "load1_live_end", "foreign"))
        for x in load[:2]:
            if not re.fullmatch(r"\d+(\.\d+)?", x):
                raise Bad(f"{lp}: load '{x}' is not a load average")
    return {"rep": rep, "date": date, "cpu": cpu, "kernel": kernel, "source": source,
            "setting": label, "costs": costs, "marks": len(marks),
            "marks_without_model": dashed,
            "sharing_ratio_min": "%.4f" % min(sh), "sharing_ratio_max": "%.4f" % max(sh),
            "cpu_ratio_min": "%.4f" % min(cp), "cpu_ratio_max": "%.4f" % max(cp),
            "cpu_ratio_end": "%.4f" % cp[-1],
            "live_ksmd_cpu_ms_end": "%.1f" % last[2], "model_ksmd_cpu_ms_end": "%.1f" % last[3],
            "live_full_scans_end": "%d" % last[4], "model_full_scans_end": "%d" % last[5],
            "load1_live_start": load[0], "load1_live_end": load[1], "foreign": load[2]}


def main(argv):
    args = argv[1:]
    out = None
    if len(args) == 3 and args[1] == "-o":
        out = args[2]
        args = args[:1]
    if len(args) != 1 or args[0].startswith("-"):
        raise Bad("usage: predict_reps.py DIR [-o CSV]")
    d = args[0]
    if not os.path.isdir(d):
        raise Bad(f"{d}: not a folder")
    out = out or os.path.join(d, "replicates.csv")
    rows = [replicate(1, d, True)]
    reps = os.path.join(d, "reps")
    names = sorted(os.listdir(reps)) if os.path.isdir(reps) else []
    for name in names:
        m = re.fullmatch(r"r([0-9]+)", name)
        if not m or int(m.group(1)) < 2:
            raise Bad(f"{os.path.join(reps, name)}: not a replicate folder r2, r3, ...")
    for name in sorted(names, key=lambda s: int(s[1:])):
        rows.append(replicate(int(name[1:]), os.path.join(reps, name), False))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(buf.getvalue())
    os.replace(tmp, out)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except Bad as e:
        print(f"predict_reps.py: {e}", file=sys.stderr)
        sys.exit(2)
    except OSError as e:
        print(f"predict_reps.py: {e.filename}: {e.strerror}", file=sys.stderr)
        sys.exit(2)
