#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The acceptance check of a cost table calibrated from ksmd's profile
# (sim/MODEL.md, "Calibrating from the profile"): held-out shapes
# (tests/live/cpu/make_heldout.sh; none is a bench calibrate scenario),
# each replayed RUNS times on the live KSM under `live --profile` and once
# through the model with TABLE under `--profile-csv`. Per shape: the live
# ksmd's CPU at the last mark (median of the runs), the model's, their
# ratio (target within +-15%), and each group's share of ksmd (the live
# terms folded as `ksmsim diff --profile` folds them; the live share the
# median over the runs) against the model's (target within +-5 points).
# ksmd's own CPU time (schedstat), never the wall's: the machine may be
# loaded, and the load is written with the table.
# usage: cpu_acceptance.sh KSMSIM TABLE.csv OUT.md [RUNS]   (root, live KSM)
# Writes OUT.md and OUT.csv; each shape's runs hold /tmp/ksm-live.lock.
# SHAPES (environment) overrides the shapes: default
# "distinct merges churn chains revisits".
set -u
bin=${1:?usage: cpu_acceptance.sh KSMSIM TABLE.csv OUT.md [RUNS]}
table=${2:?usage: cpu_acceptance.sh KSMSIM TABLE.csv OUT.md [RUNS]}
out=${3:?usage: cpu_acceptance.sh KSMSIM TABLE.csv OUT.md [RUNS]}
runs=${4:-3}
shapes=${SHAPES:-distinct merges churn chains revisits}
top=$(cd "$(dirname "$0")/.." && pwd)
if ! why=$("$bin" live --check 2>&1); then
	echo "SKIP: live KSM is not usable here: $why"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$top/tests/live/cpu/make_heldout.sh" "$tmp" || exit 1
facts() {
	echo "$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1), $(nproc) CPUs," \
		"Linux $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1 /proc/loadavg)"
}
start_facts=$(facts)
waited=0
wait_free() {	# another process using KSM: wait (KSMSIM_WAIT_S in all, default 1800)
	while ! "$bin" live --check >/dev/null 2>&1; do
		[ "$waited" -ge "${KSMSIM_WAIT_S:-1800}" ] && { echo "FAIL: KSM busy for ${waited} s" >&2; exit 1; }
		sleep 2; waited=$((waited + 2))
	done
}
exec 9>/tmp/ksm-live.lock
for s in $shapes; do
	flock 9
	i=0
	while [ "$i" -lt "$runs" ]; do
		wait_free
		if ! "$bin" live --trace "$tmp/$s.ksmt" --marks-csv "$tmp/$s.live$i.marks" \
			--profile "$tmp/$s.live$i.prof" >"$tmp/out" 2>&1; then
			"$bin" live --check >/dev/null 2>&1 || continue	# someone took KSM first
			echo "FAIL $s: live: $(tail -n 1 "$tmp/out")" >&2
			exit 1
		fi
		"$bin" live --check >/dev/null 2>&1 || { echo "  $s: KSM used by another process meanwhile: again"; continue; }
		echo "  $s run $((i + 1)): load $(cut -d' ' -f1 /proc/loadavg)"
		i=$((i + 1))
	done
	flock -u 9
	"$bin" run --trace "$tmp/$s.ksmt" --costs-csv "$table" --marks-csv "$tmp/$s.model.marks" \
		--profile-csv "$tmp/$s.model.prof" >/dev/null || { echo "FAIL $s: model run" >&2; exit 1; }
done
end_facts=$(facts)
python3 - "$tmp" "$out" "$table" "$runs" "$start_facts" "$end_facts" $shapes <<'PY'
import csv, statistics, sys
tmp, out, table, runs, f0, f1 = sys.argv[1:7]
shapes, runs = sys.argv[7:], int(runs)
groups = ["visit", "checksum", "tree_search", "merge", "rmap_item", "chain_walk", "full_pass", "other"]
fold = {"page_table_walk": "visit", "mmap_lock": "visit", "scan": "visit",
        "page_compare": "tree_search", "stable_folio": "tree_search", "tree_page": "tree_search"}
def rows(p):
    return list(csv.DictReader(l for l in open(p) if not l.startswith("#")))
def last_ms(p):
    return float(rows(p)[-1]["ksmd_cpu_ms"])
def shares(p):	# the last mark's share of each group
    sh = dict.fromkeys(groups, 0.0)
    seen = {}
    for x in rows(p):	# cumulative: the last row of each term wins
        seen[x["term"]] = float(x["share"])
    for t, v in seen.items():
        sh[fold.get(t, t)] += v
    return sh
res = []
for s in shapes:
    live = [last_ms(f"{tmp}/{s}.live{i}.marks") for i in range(runs)]
    lsh = [shares(f"{tmp}/{s}.live{i}.prof") for i in range(runs)]
    med = statistics.median(live)
    model = last_ms(f"{tmp}/{s}.model.marks")
    msh = shares(f"{tmp}/{s}.model.prof")
    diffs = {g: 100 * (msh[g] - statistics.median(x[g] for x in lsh)) for g in groups}
    worst = max(groups, key=lambda g: abs(diffs[g]))
    res.append(dict(shape=s, live_ms=med, live_runs="/".join(f"{v:.1f}" for v in live),
                    model_ms=model, ratio=model / med, worst_term=worst, worst_pp=diffs[worst],
                    **{f"pp_{g}": diffs[g] for g in groups},
                    **{f"live_{g}": 100 * statistics.median(x[g] for x in lsh) for g in groups}))
with open(out.rsplit(".md", 1)[0] + ".csv", "w") as f:
    w = csv.DictWriter(f, fieldnames=list(res[0]))
    w.writeheader()
    for r in res:
        w.writerow({k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in r.items()})
ok = sum(1 for r in res if abs(r["ratio"] - 1) <= 0.15 and abs(r["worst_pp"]) <= 5)
with open(out, "w") as f:
    f.write(f"Held-out shapes, live ksmd (median of {runs} runs, `ksmsim live --profile`) "
            f"against the model with `{table.split('/')[-1]}` (`run --profile-csv`); "
            f"`bench/cpu_acceptance.sh`. Start: {f0}. End: {f1}.\n\n")
    f.write("| shape | live ms (median) | live runs | model ms | model / live | worst term share, model - live |\n"
            "|---|---:|---|---:|---:|---|\n")
    for r in res:
        f.write(f"| {r['shape']} | {r['live_ms']:,.1f} | {r['live_runs']} | {r['model_ms']:,.1f} | "
                f"{r['ratio']:.3f} | {r['worst_term']} {r['worst_pp']:+.1f} pp |\n")
    f.write(f"\n{ok} of {len(res)} within +-15% of the total and +-5 points on every share.\n")
    f.write("\nEach group's live share (median) and the model's minus it, in points:\n\n")
    f.write("| shape | " + " | ".join(groups) + " |\n|---|" + "---:|" * len(groups) + "\n")
    for r in res:
        f.write(f"| {r['shape']} | " + " | ".join(f"{r['live_' + g]:.1f} ({r['pp_' + g]:+.1f})" for g in groups) + " |\n")
print(open(out).read())
PY
