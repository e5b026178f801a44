#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The held-out check of a calibrated cost table (sim/MODEL.md, "Calibrating
# the cost table"): every conformance case and bundled sample replayed on the
# live ksmd RUNS times (ksmd_cpu_ms at the last mark, the median; a case whose
# first replay spends under 100 ms is not replayed again: it cannot reach the
# 200 ms floor), and through the model with TABLE; the cases where the live
# ksmd spends at least 200 ms are tabled with the model's ratio to it.
# None of these traces is a calibration scenario (bench/calibrate.c).
# usage: cpu_heldout.sh KSMSIM TABLE.csv OUT.md [RUNS]   (root, live KSM)
# Writes OUT.md (a markdown table) and OUT.csv beside it; exit 77 where live
# KSM is unusable.
set -u
bin=${1:?usage: cpu_heldout.sh KSMSIM TABLE.csv OUT.md [RUNS]}
table=${2:?usage: cpu_heldout.sh KSMSIM TABLE.csv OUT.md [RUNS]}
out=${3:?usage: cpu_heldout.sh KSMSIM TABLE.csv OUT.md [RUNS]}
runs=${4:-3}
top=$(cd "$(dirname "$0")/.." && pwd)
if ! why=$("$bin" live --check 2>&1); then
	echo "SKIP: live KSM is not usable here: $why"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
last_cpu() {	# last_cpu MARKS.csv: ksmd_cpu_ms of the last row
	python3 - "$1" <<'PY'
import csv, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
print(rows[-1]["ksmd_cpu_ms"] if rows and rows[-1]["ksmd_cpu_ms"] else "")
PY
}
# The machine is shared: wait while another process uses KSM (up to
# KSMSIM_WAIT_S in all, default 1800), and replay again when one began during
# a replay (its pages would be in ksmd's time).
waited=0
wait_free() {
	while ! "$bin" live --check >/dev/null 2>&1; do
		[ "$waited" -ge "${KSMSIM_WAIT_S:-1800}" ] && { echo "FAIL: KSM busy for ${waited} s" >&2; exit 1; }
		sleep 2; waited=$((waited + 2))
	done
}
echo "case,live_ms_median,live_ms_runs,model_ms,ratio" >"$tmp/all.csv"
for trace in "$top"/tests/conformance/cases/*.ksmt "$top"/traces/samples/*.ksm*; do
	name=$(basename "$trace")
	vals=()
	i=0
	while [ "$i" -lt "$runs" ]; do
		wait_free
		if ! "$bin" live --trace "$trace" --marks-csv "$tmp/live.csv" >"$tmp/live.out" 2>&1; then
			"$bin" live --check >/dev/null 2>&1 || continue	# someone took KSM first
			echo "FAIL $name: live: $(tail -n 1 "$tmp/live.out")" >&2
			exit 1
		fi
		"$bin" live --check >/dev/null 2>&1 || { echo "     $name: KSM used by another process meanwhile: again"; continue; }
		i=$((i + 1))
		v=$(last_cpu "$tmp/live.csv")
		[ -n "$v" ] || { echo "FAIL $name: no ksmd_cpu_ms (ksmd not visible)" >&2; exit 1; }
		vals+=("$v")
		python3 -c "import sys; sys.exit(0 if float('$v') >= 100 else 1)" || break
	done
	"$bin" run --trace "$trace" --costs-csv "$table" --marks-csv "$tmp/model.csv" >/dev/null ||
		{ echo "FAIL $name: model run" >&2; exit 1; }
	m=$(last_cpu "$tmp/model.csv")
	python3 - "$name" "$m" "${vals[@]}" >>"$tmp/all.csv" <<'PY'
import statistics, sys
name, model, vals = sys.argv[1], float(sys.argv[2]), [float(v) for v in sys.argv[3:]]
med = statistics.median(vals)
print(f"{name},{med:.1f},{'/'.join(f'{v:.1f}' for v in vals)},{model:.1f},"
      f"{model / med if med else 0:.3f}")
PY
	echo "$(tail -n 1 "$tmp/all.csv")"
done
cp "$tmp/all.csv" "${out%.md}.csv"
python3 - "$tmp/all.csv" "$out" "$table" "$runs" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
held = [r for r in rows if float(r["live_ms_median"]) >= 200]
with open(sys.argv[2], "w") as f:
    f.write(f"Held out: every conformance case and bundled sample whose live ksmd spent at "
            f"least 200 ms (median of {sys.argv[4]} live replays, ksmd_cpu_ms at the last mark), "
            f"the model with `{sys.argv[3].split('/')[-1]}`; {len(rows)} traces replayed, "
            f"{len(held)} over the floor.\n\n")
    f.write("| trace | live ms (median) | live runs | model ms | model / live |\n|---|---:|---|---:|---:|\n")
    for r in held:
        f.write(f"| {r['case']} | {float(r['live_ms_median']):,.1f} | {r['live_ms_runs']} | "
                f"{float(r['model_ms']):,.1f} | {float(r['ratio']):.3f} |\n")
    inside = sum(1 for r in held if abs(float(r["ratio"]) - 1) <= 0.15)
    f.write(f"\n{inside} of {len(held)} within +-15%.\n")
PY
echo "wrote $out"
