#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench calibrate's fit, without a live kernel (--synthetic): the model's CPU
# with a known table stands for the live ksmd's (its breakdown by term for
# the live profile's), and the table written must give every fitted term
# back within 1%, by the profile's fit and by the blind fit
# (KSMSIM_CALIBRATE_BLIND=1, which cannot tell tree_level_scan from
# tree_level: that row is 0 in its table); bad options are refused (exit 2).
set -u
bin=${1:?usage: test_calibrate.sh PATH/TO/ksmsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
{
	echo "term,ns"
	echo "visit,210"; echo "tree_level,75"; echo "memcmp_long,0"; echo "memcmp_byte,0.35"
	echo "merge,4100"; echo "stable_insert,950"; echo "rmap_item_new,520"; echo "thp_split,0"
	echo "smart_scan_skip,60"; echo "full_pass,150000"; echo "chain_step,14"
	echo "tree_level_cold,45"; echo "tree_level_cold_depth,11"; echo "revisit,180"
	echo "tree_level_scan,40"
	"$bin" hashes | awk '$1 != "none" { print "checksum:" $1 ",1700" }'
} >"$tmp/known.csv"
sed 's/^tree_level_scan,.*/tree_level_scan,0/' "$tmp/known.csv" >"$tmp/known-blind.csv"
if ! "$bin" bench calibrate --synthetic "$tmp/known.csv" --repeat 1 --scale 0.25 \
	-o "$tmp/fit.csv" --traces "$tmp/traces" >"$tmp/out" 2>&1; then
	echo "FAIL calibrate --synthetic: $(tail -n 3 "$tmp/out")"; exit 1
fi
if ! KSMSIM_CALIBRATE_BLIND=1 "$bin" bench calibrate --synthetic "$tmp/known-blind.csv" --repeat 1 \
	--scale 0.25 -o "$tmp/fit-blind.csv" >"$tmp/out" 2>&1; then
	echo "FAIL calibrate --synthetic (blind): $(tail -n 3 "$tmp/out")"; exit 1
fi
for pair in "known.csv fit.csv" "known-blind.csv fit-blind.csv"; do
set -- $pair
echo "-- $2"
python3 - "$tmp/$1" "$tmp/$2" <<'PY' || fails=$((fails + 1))
import sys
def table(p):
    return {l.split(",")[0]: float(l.split(",")[1]) for l in open(p)
            if "," in l and not l.startswith(("#", "term,"))}
known, fit = table(sys.argv[1]), table(sys.argv[2])
bad = 0
for k in ["visit", "tree_level", "memcmp_byte", "merge", "stable_insert", "rmap_item_new",
          "smart_scan_skip", "full_pass", "chain_step", "tree_level_cold", "tree_level_cold_depth", "revisit",
          "tree_level_scan", "checksum:xxhash"]:
    ok = abs(fit[k] - known[k]) <= 0.01 * known[k] + 1e-9
    print(f"{'ok  ' if ok else 'FAIL'} {k}: fitted {fit[k]:.3f}, known {known[k]:.3f}")
    bad += not ok
missing = set(known) - set(fit)
if missing:
    print("FAIL rows missing from the fitted table:", sorted(missing)); bad += 1
sys.exit(1 if bad else 0)
PY
done
# the scenarios that stand for workloads' layouts really are out of scan
# order: each later copy holds the first copy's contents (the service's
# shared ones), in an order of its own, not the first copy's
python3 - "$tmp/traces" <<'PY' || fails=$((fails + 1))
import os, sys
d = sys.argv[1]
def copies(name):
    mms = {}
    for l in open(os.path.join(d, name + ".ksmt")):
        f = l.split()
        if len(f) == 6 and f[1] == "fillseq":
            a, n, seed = int(f[3], 16), int(f[4]), int(f[5])
            mms.setdefault(f[2], []).extend((a + i, seed + i) for i in range(n))
    return [[c for _, c in sorted(p)] for _, p in sorted(mms.items())]
bad = 0
for name, shared in [("scattered-64k-12", None), ("scattered-256k-8", None),
                     ("service-96k-10", lambda c: c < 9000000)]:
    cs = copies(name)
    if shared:
        cs = [[c for c in x if shared(c)] for x in cs]
    first = cs[0] if name.startswith("service") else sorted(cs[0])
    ok = len(cs) >= 2 and len(first) > 100
    for x in cs[1:]:
        ok = ok and sorted(x) == sorted(first) and x != first and x != sorted(x)
        # and far from it: under 1% of neighbours kept
        kept = sum(1 for a, b in zip(x, x[1:]) if b == a + 1)
        ok = ok and kept < len(x) / 100
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {len(cs)} copies, each in an order of its own")
    bad += not ok
sys.exit(1 if bad else 0)
PY
[ -e "$tmp/traces/distinct-4k.ksmt" ] || { echo "FAIL --traces kept no distinct-4k.ksmt"; fails=$((fails + 1)); }
if "$bin" bench calibrate --synthetic "$tmp/known.csv" --repeat 1 --scale 0.25 \
	--traces "$tmp/traces" >"$tmp/out" 2>&1 || ! grep -q "not empty" "$tmp/out"; then
	echo "FAIL --traces into a full directory: $(tail -n 1 "$tmp/out")"; fails=$((fails + 1))
else echo "ok   refused: --traces into a full directory"; fi
"$bin" run --trace "$(dirname "$0")/../../traces/samples/default.ksmt" --costs-csv "$tmp/fit.csv" \
	>/dev/null 2>"$tmp/err" || { echo "FAIL run does not take the fitted table: $(cat "$tmp/err")"; fails=$((fails + 1)); }
for bad in "--repeat 0" "--repeat 65" "--repeat x" "--scale 0" "--bogus" "-o"; do
	"$bin" bench calibrate $bad >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/out")" = 1 ]; then echo "ok   refused: $bad"
	else echo "FAIL $bad: exit $rc: $(cat "$tmp/out")"; fails=$((fails + 1)); fi
done
[ "$fails" -eq 0 ]
