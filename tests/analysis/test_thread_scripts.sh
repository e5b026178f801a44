#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# analysis/costs_spread.py and analysis/ksmd_cpu_2017.py on tiny inputs:
# each bad option is one line and exit 2 with nothing written; a tiny run
# writes its CSVs whole, with the rows and columns the results page reads.
# usage: test_thread_scripts.sh KSMSIM SOURCE-ROOT
set -uo pipefail
ksmsim=${1:?usage: test_thread_scripts.sh KSMSIM SOURCE-ROOT}
src=${2:?usage: test_thread_scripts.sh KSMSIM SOURCE-ROOT}
cs=$src/analysis/costs_spread.py
kc=$src/analysis/ksmd_cpu_2017.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
# refuse PATTERN -- CMD...: exit 2, one stderr line matching PATTERN, no file in $tmp/out
refuse() {
	local pat=$1
	shift 2
	rm -rf "$tmp/out" && mkdir "$tmp/out"
	"$@" >"$tmp/stdout" 2>"$tmp/stderr"
	local rc=$? lines
	lines=$(wc -l <"$tmp/stderr")
	if [[ $rc -eq 2 && $lines -eq 1 ]] && grep -qE -- "$pat" "$tmp/stderr" &&
		[[ -z $(ls -A "$tmp/out") ]]; then
		ok "refused: ${*:2}"
	else
		bad "${*:2}: exit $rc, $lines stderr lines, want 2 and 1 matching /$pat/:"
		cat "$tmp/stderr"
		ls "$tmp/out"
	fi
}

# 1. costs_spread.py
refuse '--runs: 0 is not in' -- "$cs" --ksmsim "$ksmsim" --runs 0 --out "$tmp/out"
refuse "--reps: 'x' is not" -- "$cs" --ksmsim "$ksmsim" --reps x --out "$tmp/out"
refuse '--cold-mib: 1 is not in' -- "$cs" --ksmsim "$ksmsim" --cold-mib 1 --out "$tmp/out"
refuse 'not an executable' -- "$cs" --ksmsim "$tmp/nosuch" --out "$tmp/out"
refuse 'not a folder' -- "$cs" --ksmsim "$ksmsim" --out "$tmp/out/nosuch"
refuse 'required' -- "$cs" --out "$tmp/out"
refuse 'unrecognized arguments' -- "$cs" --ksmsim "$ksmsim" --bogus --out "$tmp/out"

rm -rf "$tmp/out" && mkdir "$tmp/out"
if "$cs" --ksmsim "$ksmsim" --runs 2 --reps 1 --cold-mib 64 --out "$tmp/out" 2>"$tmp/stderr"; then
	ok "a tiny run (2 runs, 1 rep, 64 MiB)"
else
	bad "a tiny run failed:"
	cat "$tmp/stderr"
fi
python3 - "$tmp/out" <<'EOF' && ok "costs.csv and costs-spread.csv agree, min <= median <= max" || bad "the CSVs"
import csv, sys
d = sys.argv[1]
table = list(csv.DictReader(open(f"{d}/costs.csv")))
spread = list(csv.DictReader(l for l in open(f"{d}/costs-spread.csv") if not l.startswith("#")))
meta = [l for l in open(f"{d}/costs-spread.csv") if l.startswith("#")]
assert any("load" in l and "CPUs" in l for l in meta), meta
names = [r["name"] for r in table]
assert names == [r["name"] for r in spread], "rows differ"
for want in ("jhash2", "xxhash", "crc32c", "jhash2-kernel", "xxh64-kernel", "copy"):
    assert want in names, want
assert not any(n.startswith("exchange") for n in names)
for t, s in zip(table, spread):
    assert s["runs"] == "2"
    for k in ("hot", "cold"):
        lo, med, hi = (float(s[f"{k}_ns_{x}"]) for x in ("min", "median", "max"))
        assert 0 < lo <= med <= hi, (t["name"], k, lo, med, hi)
        assert abs(float(t[f"{k}_ns_per_page"]) - med) < 0.01, (t["name"], k)
EOF
# the table is one the model reads
"$ksmsim" gen ksm-flood --scale 0.05 -o "$tmp/flood.ksmb" 2>"$tmp/stderr" &&
	"$ksmsim" run --trace "$tmp/flood.ksmb" --costs-csv "$tmp/out/costs.csv" --hash jhash2 \
		--quiet --summary-csv "$tmp/s.csv" 2>>"$tmp/stderr" &&
	python3 -c "
import csv, sys
r = next(csv.DictReader(open('$tmp/s.csv')))
t = {x['name']: x for x in csv.DictReader(open('$tmp/out/costs.csv'))}
sys.exit(abs(float(r['checksum_ns']) - float(t['jhash2']['cold_ns_per_page'])) > 0.01)" &&
	ok "ksmsim run --costs-csv charges the table's jhash2" ||
	{ bad "ksmsim run --costs-csv on the table"; cat "$tmp/stderr"; }

# 2. ksmd_cpu_2017.py
refuse "invalid choice: 'nope'" -- "$kc" --ksmsim "$ksmsim" --workload nope --out "$tmp/out/h.csv"
refuse 'out of range' -- "$kc" --ksmsim "$ksmsim" --scale 0 --out "$tmp/out/h.csv"
refuse "--pages-to-scan: 'many' is not" -- "$kc" --ksmsim "$ksmsim" --pages-to-scan many --out "$tmp/out/h.csv"
refuse 'its folder does not exist' -- "$kc" --ksmsim "$ksmsim" --out "$tmp/out/no/h.csv"
refuse 'not an executable' -- "$kc" --ksmsim "$tmp/nosuch" --out "$tmp/out/h.csv"
refuse 'go together' -- "$kc" --ksmsim "$ksmsim" --prices "$src/analysis/results/cpu/checksum-prices.csv" \
	--out "$tmp/out/h.csv"
refuse 'no checksum and ns_median columns' -- "$kc" --ksmsim "$ksmsim" \
	--prices "$src/analysis/results/costs.csv" --table "$src/bench/tables/costs-amd-epyc.csv" \
	--out "$tmp/out/h.csv"

rm -rf "$tmp/out" && mkdir "$tmp/out"
if "$kc" --ksmsim "$ksmsim" --scale 0.005 --prices "$src/analysis/results/cpu/checksum-prices.csv" \
	--table "$src/bench/tables/costs-amd-epyc.csv" --out "$tmp/out/h.csv" 2>"$tmp/stderr"; then
	ok "a tiny run (kernel-build at scale 0.005)"
else
	bad "a tiny run failed:"
	cat "$tmp/stderr"
fi
python3 - "$tmp/out/h.csv" "$src/analysis/results/cpu/checksum-prices.csv" <<'EOF' &&
import csv, sys
every = list(csv.DictReader(open(sys.argv[1])))
assert len(every) == 8, len(every)
own = {r["hash"]: float(r["checksum_ns"]) for r in every if r["prices"] == "ksmd's own"}
p = {r["checksum"]: float(r["ns_median"]) for r in
     csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith("#"))}
assert own == {"jhash2": p["jhash2"], "xxhash": p["xxh64"]}, own
rows = {(r["sleep_millisecs"], r["hash"]): r for r in every if r["prices"] == "built-in"}
assert sorted(rows) == [("1", "jhash2"), ("1", "xxhash"), ("20", "jhash2"), ("20", "xxhash")], sorted(rows)
p = {k: float(r["ksmd_pct"]) for k, r in rows.items()}
for s in ("1", "20"):
    assert 0 < p[(s, "xxhash")] < p[(s, "jhash2")], p
    r = rows[(s, "jhash2")]
    assert abs(float(r["ksmd_cpu_ms"]) / 10 / float(r["sim_s"]) - p[(s, "jhash2")]) < 0.01
for h in ("jhash2", "xxhash"):
    assert p[("1", h)] > p[("20", h)], p
assert all(r["kernel"] == "6.1" and r["pages_to_scan"] == "100" for r in rows.values())
EOF
	ok "8 rows; ksmd's own prices charged; xxhash below jhash2, 1 ms above 20 ms" || bad "ksmd-cpu CSV"

echo "$fails failures"
[[ $fails -eq 0 ]]
