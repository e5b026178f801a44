#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The fixed-seed remedy tested (results/README.md, section 7): the
# checksum-adversarial trace replayed against keyed checksums whose key the
# trace cannot hold (hashes/siphash.c: KSMSIM_HASH_KEY, drawn per run
# here as trace seed + 1, never the attacker's key 1). Writes
# analysis/results/fixed-seed/remedy.csv (RESULTS=DIR: elsewhere), a row
# per trace seed (1-5), trace and replay:
#   aim-xxhash   `gen checksum-adversarial --hash xxhash`: pairs for the
#                kernel's fixed seed 0; replayed under xxhash (the attack),
#                xxhash-seeded and siphash (key drawn per run)
#   aim-seeded   pairs for xxhash-seeded under key 1, as an attacker who
#                knew the key; replayed under key 1 and under the run's key
#   aim-siphash  the same for siphash
#   free         aim-xxhash with each attacked page's toggles thinned to
#                every third (one change in 9 s, about two of ksmd's 4.1 s
#                passes, values still alternating): what a guest gets with
#                no collision at all, by rewriting its pages every other pass
#   honest-vm2   aim-xxhash without vm2's writes after t = 0: vm1 attacks,
#                vm2 only holds its pages; vm2_* columns (its ksm_stat at the
#                end) and missed_merges show what the attack does to it
# --price [N]: instead, siphash's price: `bench costs` N times (default 2)
# and, per row, the least hot ns a page over the runs (contention only
# adds time; a cold figure on a loaded machine is noise), then siphash
# priced as jhash2 is (both scalar and compute-bound: jhash2's model price
# x siphash / jhash2-kernel, hot); writes fixed-seed/price.csv.
# Columns: the run's counters at the end, and vm2's ksm_merging_pages and
# ksm_process_profit (--mm-stats-csv). About 60 runs of 2 x 64 MiB, a few
# minutes of CPU (run it under nice).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
res=${RESULTS:-$here/results}/fixed-seed
. "$here/steps.sh" fixed_seed_remedy.sh
mkdir -p "$res"
res=$(cd "$res" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# $1 trace, $2 output, $3 mode: thin (attacked pages' toggles, every third
# kept) or honest (vm2's writes after t = 0 dropped). Attacked pages are
# those given a word at t = 0 (their pair's first value).
transform() {
	python3 - "$@" <<-'PY'
		import sys
		src, dst, mode = sys.argv[1:4]
		att, seen, out = set(), {}, []
		for line in open(src):
		    f = line.split()
		    # T write MM VPN CONTENT
		    if len(f) >= 5 and f[0].isdigit() and f[1] == "write":
		        key = (f[2], f[3])
		        if f[0] == "0":
		            if f[4].startswith("word:"):
		                att.add(key)
		        elif mode == "thin" and key in att:
		            n = seen.get(key, 0)
		            seen[key] = n + 1
		            if n % 3:
		                continue
		        elif mode == "honest" and f[2] == "vm2":
		            continue
		    out.append(line)
		if not att or (mode == "thin" and not seen):
		    sys.exit(f"fixed_seed_remedy.sh: {src}: no attacked page found")
		open(dst, "w").writelines(out)
	PY
}

if [[ ${1:-} == --price ]]; then
	n=${2:-2}
	cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)
	for i in $(seq 1 "$n"); do
		step "$ksmsim" bench costs --csv "$tmp/costs-$i.csv" --reps 7 --cold-mib 64 >&2
	done
	python3 - "$res/price.csv" "$cpu" "$here/../hashes/registry.c" "$tmp"/costs-*.csv <<-'PY'
		import csv, re, sys
		out, cpu, reg, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
		best = {}
		for fn in files:
		    for r in csv.DictReader(open(fn)):
		        ns = float(r["hot_ns_per_page"])
		        best[r["name"]] = min(ns, best.get(r["name"], ns))
		# the model's jhash2 price: its registry row
		jh = float(re.search(r'"jhash2", 32, page_jhash2, ([0-9.]+)', open(reg).read()).group(1))
		ratio = best["siphash"] / best["jhash2-kernel"]
		with open(out, "w") as f:
		    f.write(f"# ksmsim bench costs x{len(files)} on {cpu}: least hot ns a page per row; "
		            "siphash priced as jhash2 (model price x hot ratio to jhash2-kernel)\n")
		    f.write("name,hot_ns_min,ratio_to_jhash2_kernel,ratio_to_xxh64_kernel,model_ns\n")
		    for n_ in ("xxhash", "xxhash-seeded", "xxh64-kernel", "jhash2-kernel", "siphash"):
		        m = f"{jh * ratio:.1f}" if n_ == "siphash" else ""
		        f.write(f"{n_},{best[n_]:.1f},{best[n_] / best['jhash2-kernel']:.3f},"
		                f"{best[n_] / best['xxh64-kernel']:.3f},{m}\n")
	PY
	cat "$res/price.csv"
	exit 0
fi

# one replay: $1 label, $2 seed, $3 trace, $4 hash, $5 key ("-": none)
replay() {
	local k=$5
	if [[ $k == - ]]; then
		"$ksmsim" run --quiet --trace "$3" --hash "$4" --summary-csv "$tmp/s.csv" \
			--mm-stats-csv "$tmp/mm.csv"
	else
		KSMSIM_HASH_KEY=$k "$ksmsim" run --quiet --trace "$3" --hash "$4" \
			--summary-csv "$tmp/s.csv" --mm-stats-csv "$tmp/mm.csv"
	fi
	python3 - "$tmp/s.csv" "$tmp/mm.csv" "$1" "$2" "$4" "$k" <<-'PY'
		import csv, sys
		r = next(csv.DictReader(open(sys.argv[1])))
		mm = [x for x in csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith("#"))
		      if x["label"] == "end" and x["mm"] == "vm2"][-1]
		cols = ("false_positives", "cow_ksm", "unstable_changed_after_insert",
		        "unstable_corrupt_walks", "missed_merges", "pages_sharing", "ksmd_cpu_ms")
		print(",".join(sys.argv[3:7] + [r[c] for c in cols] +
		               [mm["ksm_merging_pages"], mm["ksm_process_profit"]]))
	PY
}

{
	echo "# ksmsim gen checksum-adversarial --seed S (aim: the checksum its pairs are for; key 1 for the keyed ones); ksmsim run --hash H with KSMSIM_HASH_KEY=key"
	echo "trace,seed,hash,key,false_positives,cow_ksm,unstable_changed_after_insert,unstable_corrupt_walks,missed_merges,pages_sharing,ksmd_cpu_ms,vm2_merging_pages,vm2_process_profit"
	for s in 1 2 3 4 5; do
		k=$((s + 1))
		step "$ksmsim" gen checksum-adversarial --hash xxhash --seed "$s" -o "$tmp/x.ksmt" >&2
		KSMSIM_HASH_KEY=1 step "$ksmsim" gen checksum-adversarial --hash xxhash-seeded \
			--seed "$s" -o "$tmp/xs.ksmt" >&2
		KSMSIM_HASH_KEY=1 step "$ksmsim" gen checksum-adversarial --hash siphash \
			--seed "$s" -o "$tmp/sip.ksmt" >&2
		transform "$tmp/x.ksmt" "$tmp/free.ksmt" thin
		transform "$tmp/x.ksmt" "$tmp/honest.ksmt" honest
		replay aim-xxhash "$s" "$tmp/x.ksmt" xxhash -
		replay aim-xxhash "$s" "$tmp/x.ksmt" xxhash-seeded "$k"
		replay aim-xxhash "$s" "$tmp/x.ksmt" siphash "$k"
		replay aim-seeded "$s" "$tmp/xs.ksmt" xxhash-seeded 1
		replay aim-seeded "$s" "$tmp/xs.ksmt" xxhash-seeded "$k"
		replay aim-siphash "$s" "$tmp/sip.ksmt" siphash 1
		replay aim-siphash "$s" "$tmp/sip.ksmt" siphash "$k"
		replay free "$s" "$tmp/free.ksmt" xxhash -
		replay free "$s" "$tmp/free.ksmt" xxhash-seeded "$k"
		replay honest-vm2 "$s" "$tmp/honest.ksmt" xxhash -
		replay honest-vm2 "$s" "$tmp/honest.ksmt" xxhash-seeded "$k"
	done
} >"$tmp/remedy.csv"
mv "$tmp/remedy.csv" "$res/remedy.csv"
echo "fixed_seed_remedy.sh: done in $(since "$t0") s" >&2
