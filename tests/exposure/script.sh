#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# analysis/exposure.sh --trace: the saving table over given traces, whose
# paths hold blanks (and a comma, and --out a blank and a quote): one row
# per trace, named by it, its figures those `ksmsim run --exposure-csv`
# gives for it; the cells kept. A third, shaped as a recorded guest trace
# (vmN-end marks, then the guests' RAM unmapped, which saves nothing),
# must get the figures of its records up to its last vmN-end mark, not
# of its end. --no-run builds probe.csv from the cells already made,
# running nothing. Exit 0 pass, 1 fail.
set -u
bin=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

mkdir -p "$tmp/traces with blanks"
one="$tmp/traces with blanks/two domains.ksmt"
two="$tmp/traces with blanks/default, bundled.ksmt"
cp "$src/tests/exposure/two_domains.ksmt" "$one"
cp "$src/traces/samples/default.ksmt" "$two"
rec="$tmp/traces with blanks/recorded.ksmt"
{
	grep -v 'mark end' "$src/tests/exposure/two_domains.ksmt"
	echo "160000 mark vm2-end"
	echo "170000 mark vm1-end"
	for m in a b c e; do echo "180000 unmap $m 0x1000 $([ $m = c ] && echo 1 || { [ $m = e ] && echo 2 || echo 3; })"; done
	echo "200000 mark end"
} >"$rec"
head -n "$(grep -n 'mark vm1-end' "$rec" | cut -d: -f1)" "$rec" >"$tmp/rec-cut.ksmt"
out="$tmp/out dir's"
KSMSIM=$bin "$src/analysis/exposure.sh" --trace "$one" --trace "$two" --trace "$rec" --out "$out" \
	>"$tmp/stdout" 2>"$tmp/stderr" || bad "exposure.sh exited $?: $(cat "$tmp/stderr")"
[ -s "$tmp/stderr" ] && bad "exposure.sh wrote to stderr: $(cat "$tmp/stderr")"
csv="$out/saving-recorded.csv"
[ -s "$csv" ] || bad "no $csv"
for t in "$one" "$two" "$rec"; do
	name=$(basename "$t" .ksmt)
	from=$t
	[ "$t" != "$rec" ] || from=$tmp/rec-cut.ksmt	# the figures at its last vmN-end
	"$bin" run --quiet --no-ideal --trace "$from" --exposure-csv "$tmp/want.csv" ||
		bad "ksmsim run on '$t'"
	want=$(awk -F, '$1 == "all" && $2 == "saved_pages" { print $3 }' "$tmp/want.csv")
	python3 - "$csv" "$name" "$want" <<'P' || bad "the row of '$name'"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 3, f'{len(rows)} rows, want 3'
mine = [r for r in rows if r['trace'] == sys.argv[2]]
assert len(mine) == 1, f'no row named {sys.argv[2]!r}: {[r["trace"] for r in rows]}'
assert mine[0]['saved_pages'] == sys.argv[3], (mine[0]['saved_pages'], sys.argv[3])
assert int(mine[0]['saved_pages']) > 0, 'the trace saves pages'
P
	[ -s "$out/cells/saving-$name-kernel.csv" ] && [ -s "$out/cells/saving-$name-selective.csv" ] ||
		bad "the cells of '$name' not kept"
done

# --no-run: probe.csv from the cells already made, no model run (KSMSIM a
# program that fails if called), a missing cell left out and said so.
nr="$tmp/no run"
mkdir -p "$nr/cells"
for sz in 2 4; do
	for k in default ubuntu aggressive advisor; do
		cp "$src/analysis/results/exposure/cells/probe-$sz-$k".{csv,time} "$nr/cells/"
	done
done
rm "$nr/cells/probe-4-advisor.csv"
printf '#!/bin/sh\necho called >&2\nexit 9\n' >"$tmp/no-ksmsim"
chmod +x "$tmp/no-ksmsim"
KSMSIM="$tmp/no-ksmsim" "$src/analysis/exposure.sh" --out "$nr" --sizes 2,4 --no-run >"$tmp/nr.out" 2>"$tmp/nr.err" ||
	bad "--no-run: exit $?: $(cat "$tmp/nr.err")"
grep -q called "$tmp/nr.err" && bad "--no-run ran ksmsim"
grep -q 'no cell 4 GiB advisor' "$tmp/nr.err" || bad "--no-run: the missing cell not named: $(cat "$tmp/nr.err")"
diff <(grep -E '^(host_gib|2,|4,(default|ubuntu|aggressive),)' "$src/analysis/results/exposure/probe.csv" | cut -d, -f1-12) \
	<(cut -d, -f1-12 "$nr/probe.csv") >/dev/null || bad "--no-run: probe.csv differs from the committed rows"
exit $fail
