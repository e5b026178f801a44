#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/perf.sh and bench/perf_report.py at --quick sizes: the build against
# itself as --base writes one CSV row per measurement, build and run with
# plausible figures and identical outputs, the builds alternating; --big
# adds job 3's two variants; bench model output of another format stops
# it (exit 1, naming the figure); a bad option is one line and exit 2; the
# report names every measurement, is the same for the same CSV and refuses
# a CSV that is not perf.sh's; --tune adds tune's grid. Figures are not judged: only that they are
# there and positive.
set -u
bin=${1:?usage: test_perf.sh PATH/TO/ksmsim SOURCE-ROOT}
src=${2:?usage: test_perf.sh PATH/TO/ksmsim SOURCE-ROOT}
perf=$src/bench/perf.sh report=$src/bench/perf_report.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# a bad option: one line on standard error, exit 2, no CSV
"$perf" "$bin" --quick --frobnicate -o "$tmp/no.csv" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || bad "--frobnicate: exit $rc"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || bad "--frobnicate: $(wc -l <"$tmp/err") lines: $(cat "$tmp/err")"
grep -q -- "--frobnicate" "$tmp/err" || bad "--frobnicate not named: $(cat "$tmp/err")"
[ -s "$tmp/out" ] && bad "--frobnicate wrote to standard output"
[ -e "$tmp/no.csv" ] && bad "--frobnicate wrote a CSV"
"$perf" "$bin" --runs x >/dev/null 2>"$tmp/err"; rc=$?
{ [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]; } || bad "--runs x: exit $rc: $(cat "$tmp/err")"

if ! "$perf" "$bin" --base "$bin" --quick --runs 2 -o "$tmp/perf.csv" --work "$tmp/work" \
	>"$tmp/out" 2>"$tmp/err"; then
	bad "perf.sh --quick --base: $(tail -n 3 "$tmp/err")"
fi
[ -s "$tmp/out" ] && bad "perf.sh wrote to standard output (progress belongs on standard error)"
grep -q '^perf.sh: e2e-number-crunching: base run 2/2' "$tmp/err" || bad "no progress lines on standard error"
python3 - "$tmp/perf.csv" <<'PY' || fails=$((fails + 1))
import csv, re, sys
cols = ("date_utc,cpu_model,nproc,load_avg_1m,commit,build,measurement,run,wall_s,cpu_s,"
        "peak_rss_mib,visits_per_s,bytes_per_page,model_bytes_per_page,outputs_identical,"
        "command,invocation").split(",")
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
bad = []
with open(sys.argv[1], newline="") as f:
    header = next(csv.reader(f))
if header != cols:
    bad.append(f"columns {header}")
model = ["model-job1", "model-job2"]
e2e = ["e2e-kernel-build", "e2e-kernel-build-no-ideal", "e2e-number-crunching"]
seen = [(r["measurement"], r["build"], r["run"]) for r in rows]
want = [(m, b, str(n)) for m in model + e2e for n in (1, 2)
        for b in (("new", "base") if n == 1 else ("base", "new"))]
if seen != want:
    bad.append(f"rows (measurement, build, run) {seen}, expected {want}")
for r in rows:
    m = r["measurement"]
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", r["date_utc"]):
        bad.append(f"{m}: date {r['date_utc']!r}")
    if not r["cpu_model"] or int(r["nproc"]) < 1 or float(r["load_avg_1m"]) < 0 or not r["commit"]:
        bad.append(f"{m}: machine columns {r['cpu_model']!r} {r['nproc']!r} {r['load_avg_1m']!r} {r['commit']!r}")
    if float(r["wall_s"]) < 0 or float(r["cpu_s"]) < 0 or float(r["peak_rss_mib"]) <= 0:
        bad.append(f"{m} {r['build']} {r['run']}: wall {r['wall_s']} cpu {r['cpu_s']} rss {r['peak_rss_mib']}")
    if "perf.sh" not in r["invocation"] or "ksmsim" not in r["command"]:
        bad.append(f"{m}: invocation {r['invocation']!r} command {r['command']!r}")
    if m in model:
        for c in ("visits_per_s", "bytes_per_page", "model_bytes_per_page"):
            if not r[c] or float(r[c]) <= 0:
                bad.append(f"{m} {r['build']} {r['run']}: {c} {r[c]!r}")
        if r["outputs_identical"]:
            bad.append(f"{m}: outputs_identical {r['outputs_identical']!r} for a bench job")
    else:
        if r["outputs_identical"] != "yes":
            bad.append(f"{m} {r['build']} {r['run']}: outputs_identical {r['outputs_identical']!r}")
        if r["visits_per_s"]:
            bad.append(f"{m}: visits_per_s {r['visits_per_s']!r} on an end-to-end run")
if sum(float(r["wall_s"]) for r in rows if r["measurement"] in e2e) <= 0:
    bad.append("no end-to-end run took any time")
if "--no-ideal" not in next(r["command"] for r in rows if r["measurement"] == "e2e-kernel-build-no-ideal"):
    bad.append("the no-ideal run's command has no --no-ideal")
for b in bad:
    print("FAIL csv:", b)
sys.exit(1 if bad else 0)
PY
ls "$tmp"/work/*.ksmb >/dev/null 2>&1 || bad "--work kept no trace"
# "yes" checked on the outputs --work kept: every run's equal to the first
for m in e2e-kernel-build e2e-kernel-build-no-ideal e2e-number-crunching; do
	for d in "$tmp/work/out/$m"-new-* "$tmp/work/out/$m"-base-*; do
		for f in series.csv summary.csv; do
			cmp -s "$tmp/work/out/$m-new-1/$f" "$d/$f" || bad "$m: $d/$f differs from new-1's"
		done
	done
done

# the report: every measurement and both builds, a ratio row, the same bytes twice
if "$report" "$tmp/perf.csv" -o "$tmp/perf.md" 2>"$tmp/err"; then
	for m in model-job1 model-job2 e2e-kernel-build e2e-kernel-build-no-ideal e2e-number-crunching; do
		grep -q "^| $m | new | 2 | " "$tmp/perf.md" || bad "report: no new row for $m"
		grep -q "^| $m | base | 2 | " "$tmp/perf.md" || bad "report: no base row for $m"
		grep -q "^| $m | new/base | " "$tmp/perf.md" || bad "report: no ratio row for $m"
	done
	grep -q 'command: `bench/perf.sh .*--quick' "$tmp/perf.md" || bad "report: the command is not named"
	grep -q "AMD\|Intel\|nproc [1-9]" "$tmp/perf.md" || bad "report: no CPU"
	"$report" "$tmp/perf.csv" -o - >"$tmp/again.md" 2>&1 || bad "report -o -: exit $?"
	cmp -s "$tmp/perf.md" "$tmp/again.md" || bad "report: two renderings of one CSV differ"
else
	bad "perf_report.py: $(cat "$tmp/err")"
fi
cut -d, -f1-8 "$tmp/perf.csv" >"$tmp/cut.csv"
"$report" "$tmp/cut.csv" -o "$tmp/cut.md" 2>"$tmp/err"; rc=$?
{ [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && ! [ -e "$tmp/cut.md" ]; } ||
	bad "report of a CSV without the figures: exit $rc: $(cat "$tmp/err")"

# --big: job 3's two variants (a 1 GiB host at --quick), cpu_s left empty;
# --tune: tune's grid, its CSV the same in both runs
if "$perf" "$bin" --quick --big --tune --runs 2 -o "$tmp/big.csv" >/dev/null 2>"$tmp/err"; then
	python3 - "$tmp/big.csv" <<'PY' || fails=$((fails + 1))
import csv, sys
all_rows = list(csv.DictReader(open(sys.argv[1], newline="")))
rows = {r["measurement"]: r for r in all_rows}
bad = [m for m in ("model-job3a", "model-job3b", "tune-grid") if m not in rows]
tune = [r for r in all_rows if r["measurement"] == "tune-grid"]
if [r["outputs_identical"] for r in tune] != ["yes", "yes"] or not all(
        float(r["wall_s"]) > 0 and float(r["peak_rss_mib"]) > 0 for r in tune):
    bad.append(f"tune-grid rows: {tune}")
for m in ("model-job3a", "model-job3b"):
    r = rows.get(m)
    if r and (r["cpu_s"] != "" or not all(float(r[c]) > 0 for c in
              ("wall_s", "peak_rss_mib", "visits_per_s", "bytes_per_page", "model_bytes_per_page"))):
        bad.append(f"{m}: {r}")
for b in bad:
    print("FAIL --big:", b)
sys.exit(1 if bad else 0)
PY
else
	bad "perf.sh --quick --big: $(tail -n 2 "$tmp/err")"
fi

# bench model's output in another format: exit 1, naming what is missing
fake=$tmp/fake-ksmsim
cat >"$fake" <<EOF
#!/bin/sh
if [ "\$1" = bench ]; then echo "job 1: 1 pages"; echo "  visits per sec 5"; exit 0; fi
exec "$bin" "\$@"
EOF
chmod +x "$fake"
"$perf" "$fake" --quick --runs 1 -o "$tmp/fake.csv" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] || bad "bench model output without figures: exit $rc"
grep -q "no 'visits per second' figure for job 1" "$tmp/err" || bad "the missing figure is not named: $(tail -n 1 "$tmp/err")"
[ -e "$tmp/fake.csv" ] && bad "a failed run wrote its CSV"

[ $fails -eq 0 ] && echo "perf.sh: all checks passed"
exit $((fails > 0))
