#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The CSV and README side of analysis/run_times.sh.

  run_times.py merge --csv FILE --new ROWS.tsv --registry REG.tsv
  run_times.py update-docs --csv FILE --docs MD...
  run_times.py check --csv FILE --ids ID,... --docs MD...
  run_times.py format SECONDS...

merge: the new measurements (ROWS: id, wall_s, cpu_s, max_rss_mib, runs,
commit, cpu_model, nproc, loadavg_1m, nice, date_utc) replace their ids' rows;
every other registry id keeps its row from FILE when its command is the
same, else gets a row with empty figures and a note. One row per registry
id, in its order; ids no longer in the registry are dropped.

A figure in a README is marked by an HTML comment right after its number
and unit: `8 s<!-- run-time: ID -->` (CPU: user + sys) or
`25 s<!-- run-time: ID wall -->`, outside code blocks and spans. update-docs rewrites the number and
unit from the CSV (format_seconds); an id whose row has no figures yet is
left as it is. check: exit 1, naming file and line, on a malformed marker,
an id not in the CSV, a figure update-docs would change, a CSV id not in
--ids or quoted by no marker, an --ids id missing from the CSV.
"""
import csv
import decimal
import re
import sys

COLUMNS = ["id", "command", "wall_s", "cpu_s", "max_rss_mib", "runs", "commit",
           "cpu_model", "nproc", "loadavg_1m", "nice", "date_utc", "note"]
MEASURED = COLUMNS[2:12]
# a whole marker: NUMBER UNIT then the comment, nothing between
MARK = re.compile(r"(\d+(?:\.\d+)?) (s|min)<!-- run-time: ([a-z0-9][a-z0-9-]*)( wall)? -->")
ANY_MARK = re.compile(r"<!--\s*run-time")
CODE_SPAN = re.compile(r"`[^`]*`")


def sig2(x):
    """x to 2 significant digits, half up, trailing zeros dropped."""
    d = decimal.Decimal(repr(x))
    if d <= 0:
        return "0"
    exp = d.adjusted() - 1  # keep digits down to 10^exp
    q = d.quantize(decimal.Decimal(1).scaleb(exp), rounding=decimal.ROUND_HALF_UP)
    s = format(q, "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def format_seconds(v):
    """The one format rule: seconds to 2 significant digits; from 600 s
    on, minutes to 2 significant digits."""
    if float(sig2(v)) >= 600:
        return sig2(v / 60) + " min"
    return sig2(v) + " s"


def note_for(cls):
    if "root" in cls:
        return ("needs root, QEMU, Slurm or the network: measured only with "
                "--with-root, kept from run to run without it")
    if "long" in cls:
        return "takes long: measured only with --long, kept from run to run without it"
    return ""


def read_csv(path):
    try:
        with open(path, newline="") as f:
            r = csv.DictReader(f)
            if r.fieldnames != COLUMNS:
                sys.exit(f"run_times: {path}: columns are not {','.join(COLUMNS)}")
            return list(r)
    except FileNotFoundError:
        return []


def merge(path, new_path, reg_path):
    old = {r["id"]: r for r in read_csv(path)}
    new = {}
    with open(new_path, newline="") as f:
        for line in f:
            v = line.rstrip("\n").split("\t")
            new[v[0]] = dict(zip(MEASURED, v[1:]))
    out = []
    with open(reg_path, newline="") as f:
        for line in f:
            rid, cls, cmd = line.rstrip("\n").split("\t", 2)
            row = {"id": rid, "command": cmd, "note": note_for(cls)}
            if rid in new:
                row.update(new[rid])
            elif rid in old and old[rid]["command"] == cmd:
                row.update({k: old[rid][k] for k in MEASURED})
            if not row.get("cpu_s"):
                row.update({k: "" for k in MEASURED})
                row["note"] = "not measured yet" + (": " + row["note"] if row["note"] else "")
            out.append(row)
    tmp = path + ".tmp.run-times"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    import os
    os.replace(tmp, path)


def figures(path):
    return {r["id"]: r for r in read_csv(path)}


def wanted(row, wall):
    v = row["wall_s" if wall else "cpu_s"]
    return format_seconds(float(v)) if v else None


def scan(doc, rows, errors, used, fix):
    """Check (and with fix, rewrite) one README; returns its new text."""
    with open(doc) as f:
        lines = f.read().split("\n")
    fence = False
    for n, line in enumerate(lines, 1):
        # a comment in a code block or span is text, not a marker
        if line.lstrip().startswith("```"):
            fence = not fence
        if fence or line.lstrip().startswith("```"):
            continue
        spans = [m.span() for m in CODE_SPAN.finditer(line)]
        def in_code(pos):
            return any(a <= pos < b for a, b in spans)
        good = [m for m in MARK.finditer(line) if not in_code(m.start())]
        if len([m for m in ANY_MARK.finditer(line) if not in_code(m.start())]) != len(good):
            errors.append(f"{doc}:{n}: a run-time marker not of the form "
                          "'N s<!-- run-time: ID -->' or '... ID wall -->'")
        def sub(m):
            if in_code(m.start()):
                return m.group(0)
            rid, wall = m.group(3), bool(m.group(4))
            used.add(rid)
            if rid not in rows:
                errors.append(f"{doc}:{n}: run-time id '{rid}' is not in the CSV")
                return m.group(0)
            want = wanted(rows[rid], wall)
            have = f"{m.group(1)} {m.group(2)}"
            if want is None or want == have:
                return m.group(0)
            if not fix:
                errors.append(f"{doc}:{n}: {rid}: '{have}' but the CSV gives '{want}' "
                              f"({'wall' if wall else 'CPU'}); run analysis/run_times.sh --update-docs")
                return m.group(0)
            return want + m.group(0)[len(have):]
        lines[n - 1] = MARK.sub(sub, line)
    return "\n".join(lines)


def update_docs(path, docs):
    rows = figures(path)
    errors, used = [], set()
    for d in docs:
        text = scan(d, rows, errors, used, True)
        with open(d) as f:
            if f.read() == text:
                continue
        with open(d + ".tmp.run-times", "w") as f:
            f.write(text)
        import os
        os.replace(d + ".tmp.run-times", d)
        print(f"run_times: updated {d}", file=sys.stderr)
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


def check(path, ids, docs):
    rows = figures(path)
    errors, used = [], set()
    if not rows:
        errors.append(f"{path}: no rows")
    for d in docs:
        scan(d, rows, errors, used, False)
    for rid in rows:
        if rid not in ids:
            errors.append(f"{path}: id '{rid}' is not one run_times.sh measures")
        if rid not in used:
            errors.append(f"{path}: id '{rid}' is quoted by no marker in the READMEs")
    for rid in ids:
        if rid not in rows:
            errors.append(f"{path}: id '{rid}' has no row (run analysis/run_times.sh)")
    for e in errors:
        print(e, file=sys.stderr)
    commits = {}
    for r in rows.values():
        if r["commit"]:
            commits[r["commit"]] = commits.get(r["commit"], 0) + 1
    if commits:
        print("run_times: measured at " + ", ".join(f"{c} ({n} ids)" for c, n in commits.items()))
    todo = [r for r in rows if not rows[r]["cpu_s"]]
    if todo:
        print(f"run_times: not measured yet (their README figures are older): {', '.join(todo)}")
    print(f"run_times: {len(used)} ids quoted, {len(rows)} rows, {len(errors)} problems")
    return 1 if errors else 0


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, args = argv[1], argv[2:]
    opts, docs, i = {}, [], 0
    while i < len(args):
        a = args[i]
        if a == "--docs":
            docs = args[i + 1:]
            break
        if a in ("--csv", "--new", "--registry", "--ids") and i + 1 < len(args):
            opts[a] = args[i + 1]
            i += 2
            continue
        if cmd == "format":
            docs.append(a)
            i += 1
            continue
        sys.exit(f"run_times.py: unknown argument {a}")
    if cmd == "format":
        for a in docs:
            print(format_seconds(float(a)))
        return 0
    if "--csv" not in opts:
        sys.exit("run_times.py: --csv FILE is needed")
    if cmd == "merge":
        merge(opts["--csv"], opts["--new"], opts["--registry"])
        return 0
    if cmd == "update-docs":
        return update_docs(opts["--csv"], docs)
    if cmd == "check":
        return check(opts["--csv"], set(filter(None, opts.get("--ids", "").split(","))), docs)
    sys.exit(f"run_times.py: unknown command {cmd}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
