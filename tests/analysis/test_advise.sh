#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_advise.sh KSMSIM SRCDIR: `ksmsim advise` on the bundled default trace:
# one row per configuration, the same bytes with any --jobs and on a rerun,
# the kernel rows equal to `ksmsim run`, dirty-bit computing no checksum, the
# frontier and the pick consistent, and bad usage refused with no output;
# policies.sh's and plot_policies.sh's options refused the same way.
# Exit 0 pass, 1 fail.
set -euo pipefail
ksmsim=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
trace=$src/traces/samples/default.ksmt

# field NAME of the CSV row whose policy and hash are given (policy specs hold commas)
field() {
	python3 - "$@" <<'EOF'
import csv, sys
path, policy, hash_, name = sys.argv[1:5]
rows = [r for r in csv.DictReader(open(path)) if r.get('policy') == policy and r.get('hash') == hash_]
if len(rows) != 1:
    sys.exit(f"{path}: {len(rows)} rows for {policy}/{hash_}")
print(rows[0][name])
EOF
}

# 1. every checksum but none, with each policy that reads it; the others once
start=$(date +%s)
"$ksmsim" advise "$trace" --jobs 2 -o "$tmp/a.csv" >"$tmp/a.txt" 2>"$tmp/a.err" ||
	fail "advise exited $?: $(cat "$tmp/a.err")"
took=$(( $(date +%s) - start ))
(( took <= 60 )) || fail "advise on the default trace took $took s"
nhash=$("$ksmsim" hashes | awk '$1 != "none" && NF { n++ } END { print n }')
want=$(( 2 * nhash + 3 ))
got=$(python3 -c 'import csv,sys; print(sum(1 for _ in csv.DictReader(open(sys.argv[1]))))' "$tmp/a.csv")
[[ $got -eq $want ]] || fail "$got CSV rows, want $want (2 x $nhash hashes + 3)"
# the table: a header, then one row per configuration before the blank line
trows=$(awk 'NF == 0 { exit } NR > 1 { n++ } END { print n + 0 }' "$tmp/a.txt")
[[ $trows -eq $want ]] || fail "$trows table rows, want $want"
python3 - "$tmp/a.csv" "$nhash" <<'EOF' || fail "configurations"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
n = int(sys.argv[2])
pol = [r['policy'].split(':')[0] for r in rows]
want = ['kernel'] * n + ['no-gate', 'dirty-bit', 'partial-hash'] + ['classified'] * n
assert pol == want, pol
assert [r['hash'] for r in rows[:n]] == [r['hash'] for r in rows[-n:]], 'hash order'
assert all(r['hash'] == 'none' for r in rows[n:n + 3]), 'policies without a checksum say none'
assert 'none' not in [r['hash'] for r in rows[:n]], 'none is no checksum'
EOF

# 2. the same bytes with one worker, and on a rerun
"$ksmsim" advise "$trace" --jobs 1 -o "$tmp/b.csv" >"$tmp/b.txt" 2>/dev/null
cmp "$tmp/a.csv" "$tmp/b.csv" || fail "CSV differs between --jobs 2 and --jobs 1"
cmp "$tmp/a.txt" "$tmp/b.txt" || fail "table differs between --jobs 2 and --jobs 1"
"$ksmsim" advise "$trace" --jobs 2 -o "$tmp/c.csv" >"$tmp/c.txt" 2>/dev/null
cmp "$tmp/a.csv" "$tmp/c.csv" || fail "CSV differs on a rerun"
cmp "$tmp/a.txt" "$tmp/c.txt" || fail "table differs on a rerun"

# 3. the kernel rows are what `ksmsim run` says for the same configuration
check_run() {	# CSV POLICY HASH run-options...
	local csv=$1 policy=$2 hash=$3
	shift 3
	"$ksmsim" run --quiet --trace "$trace" --summary-csv "$tmp/run.csv" "$@"
	for pair in ksmd_cpu_ms:ksmd_cpu_ms pages_sharing:pages_sharing cow_ksm:cow_ksm \
		    checksums:checksums false_positives:false_positives \
		    unstable_corrupt_walks:unstable_corrupt_walks saved_mean:avg_saved; do
		local mine=${pair%%:*} theirs=${pair#*:} a b
		a=$(field "$csv" "$policy" "$hash" "$mine")
		b=$(python3 -c 'import csv,sys; print(next(csv.DictReader(open(sys.argv[1])))[sys.argv[2]])' \
			"$tmp/run.csv" "$theirs")
		[[ $a == "$b" ]] || fail "$policy/$hash $mine $a, run says $b ($*)"
	done
}
check_run "$tmp/a.csv" kernel xxhash
check_run "$tmp/a.csv" kernel crc32c --hash crc32c
# knob pins pass through to every run
"$ksmsim" advise "$trace" --hashes xxhash --policies kernel --pages-to-scan 100 \
	--sleep_millisecs 50 -o "$tmp/p.csv" >/dev/null 2>&1
check_run "$tmp/p.csv" kernel xxhash --pages-to-scan 100 --sleep-millisecs 50
a=$(field "$tmp/p.csv" kernel xxhash ksmd_cpu_ms)
b=$(field "$tmp/a.csv" kernel xxhash ksmd_cpu_ms)
[[ $a != "$b" ]] || fail "--pages-to-scan 100 changed nothing"
# where run takes --policy, the other policies' rows are run's too
if "$ksmsim" run --help | grep -- '--policy' >/dev/null; then
	"$ksmsim" run --quiet --trace "$trace" --policy dirty-bit --summary-csv "$tmp/d.csv"
	python3 - "$tmp/a.csv" "$tmp/d.csv" <<'EOF' || fail "dirty-bit row differs from run --policy dirty-bit"
import csv, sys
a = [r for r in csv.DictReader(open(sys.argv[1])) if r['policy'] == 'dirty-bit'][0]
d = next(csv.DictReader(open(sys.argv[2])))
for mine, theirs in [('ksmd_cpu_ms', 'ksmd_cpu_ms'), ('pages_sharing', 'pages_sharing'),
                     ('checksums', 'checksums'), ('cow_ksm', 'cow_ksm')]:
    assert a[mine] == d[theirs], (mine, a[mine], d[theirs])
EOF
fi

# 4. dirty-bit needs no checksum and cannot be fooled by one
[[ $(field "$tmp/a.csv" dirty-bit none false_positives) == 0 ]] || fail "dirty-bit false positives"
[[ $(field "$tmp/a.csv" dirty-bit none checksums) == 0 ]] || fail "dirty-bit computed checksums"
[[ $(field "$tmp/a.csv" dirty-bit none dirty_checks) != 0 ]] || fail "dirty-bit tested no bit"

# 5. the frontier and the pick follow the rules --help gives
python3 - "$tmp/a.csv" <<'EOF' || fail "frontier or pick"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    r['c'], r['s'] = float(r['ksmd_cpu_ms']), float(r['saved_mean'])
def dom(a, b):
    return a['c'] <= b['c'] and a['s'] >= b['s'] and (a['c'] < b['c'] or a['s'] > b['s'])
for r in rows:
    want = not any(dom(o, r) for o in rows if o is not r)
    assert (r['frontier'] == '1') == want, (r['policy'], r['hash'], r['frontier'])
kern = [r for r in rows if r['policy'] == 'kernel']
clean = [r for r in kern if r['false_positives'] == '0']
kern = clean or kern
best = max(r['s'] for r in kern)
want = min((r for r in kern if r['s'] == best), key=lambda r: r['c'])
picks = [r for r in rows if r['pick'] == '1']
assert picks == [want], ([p['hash'] for p in picks], want['hash'])
EOF
pick=$(python3 -c 'import csv,sys; print([r["hash"] for r in csv.DictReader(open(sys.argv[1])) if r["pick"] == "1"][0])' "$tmp/a.csv")
tail -1 "$tmp/a.txt" | grep -q "^Pick $pick for this trace: " || fail "the verdict names another pick: $(tail -1 "$tmp/a.txt")"

# a checksum blind to a trace's changes is not picked, however cheap
"$ksmsim" gen crc-adversarial --scale 0.02 --seed 1 -o "$tmp/crc.ksmt"
"$ksmsim" advise "$tmp/crc.ksmt" --quiet --policies kernel --hashes crc32c,xxhash \
	-o "$tmp/crc.csv" >"$tmp/crc.txt"
[[ $(field "$tmp/crc.csv" kernel crc32c false_positives) != 0 ]] ||
	fail "crc-adversarial: crc32c saw no false positive"
[[ $(field "$tmp/crc.csv" kernel crc32c pick) == 0 && $(field "$tmp/crc.csv" kernel xxhash pick) == 1 ]] ||
	fail "crc-adversarial: the pick is not xxhash: $(tail -1 "$tmp/crc.txt")"
grep -q 'false positives): crc32c (' "$tmp/crc.txt" || fail "the verdict does not say why crc32c is left out"

# 6. --policies takes specs whose parameters hold commas
"$ksmsim" advise "$trace" --policies kernel,classified:classes=8,by=mm,dirty-bit \
	--hashes xxhash,crc32c -o "$tmp/l.csv" >/dev/null 2>&1 || fail "--policies with parameters"
python3 - "$tmp/l.csv" <<'EOF' || fail "--policies/--hashes rows"
import csv, sys
got = [(r['policy'], r['hash']) for r in csv.DictReader(open(sys.argv[1]))]
want = [('kernel', 'xxhash'), ('kernel', 'crc32c'), ('classified:classes=8,by=mm', 'xxhash'),
        ('classified:classes=8,by=mm', 'crc32c'), ('dirty-bit', 'none')]
assert got == want, got
EOF

# 7. bad usage and bad traces: one line, exit 2, no output file
printf 'ksmtrace 1\n0 spawn a\n0 map a 0x10 4\n0 fill b 0x10 4 zero\n' >"$tmp/bad.ksmt"
while IFS= read -r args; do
	rc=0
	# shellcheck disable=SC2086
	"$ksmsim" advise $args -o "$tmp/out.csv" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[[ $rc -eq 2 ]] || fail "advise $args: exit $rc, want 2"
	[[ ! -e $tmp/out.csv ]] || fail "advise $args left $tmp/out.csv"
	[[ ! -s $tmp/out ]] || fail "advise $args printed on stdout"
	[[ $(wc -l <"$tmp/err") -eq 1 ]] || fail "advise $args: want one error line: $(cat "$tmp/err")"
done <<EOF
$trace --jobs 0
$trace --bogus
$trace --interval-ms
$trace --policies kernel,nosuch
$trace --policies classified:classes=0
$trace --policies kernel,kernel
$trace --hashes none
$trace --hashes xxhash,crc33
$trace --pages-to-scan 0
$trace --costs-csv $tmp/missing.csv
$trace extra
-
/dev/null
$tmp/missing.ksmt
$tmp/bad.ksmt
EOF
grep -q 'bad.ksmt:4:' "$tmp/err" || fail "bad trace: want FILE:LINE, got $(cat "$tmp/err")"
rc=0
"$ksmsim" advise "$trace" --jobs 0 >/dev/null 2>"$tmp/err" || rc=$?
grep -q -- '--jobs' "$tmp/err" || fail "the error names no option: $(cat "$tmp/err")"
# a named FIFO is refused at once: each worker would block in open() for ever
mkfifo "$tmp/fifo"
rc=0
timeout 20 "$ksmsim" advise "$tmp/fifo" -o "$tmp/out.csv" >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc -eq 2 && ! -e $tmp/out.csv ]] || fail "advise FIFO: exit $rc (124: it hung)"
grep -q 'fifo: TRACE is read once per run: a regular file' "$tmp/err" || fail "advise FIFO: $(cat "$tmp/err")"

# 8. --plot: a PNG; without gnuplot a clear error before any run, and no files
if command -v gnuplot >/dev/null && gnuplot -e 'set terminal pngcairo' 2>/dev/null; then
	"$ksmsim" advise "$trace" --quiet --hashes xxhash,crc32c --plot "$tmp/a.png" \
		-o "$tmp/pl.csv" >/dev/null 2>"$tmp/err" || fail "--plot: $(cat "$tmp/err")"
	[[ $(head -c 4 "$tmp/a.png" | od -An -c | tr -d ' ') == '211PNG' ]] || fail "--plot wrote no PNG"
fi
rc=0
PATH=/nonexistent "$ksmsim" advise "$trace" --plot "$tmp/n.png" -o "$tmp/n.csv" \
	>/dev/null 2>"$tmp/err" || rc=$?
[[ $rc -eq 2 && ! -e $tmp/n.png && ! -e $tmp/n.csv ]] || fail "--plot without gnuplot: exit $rc"
grep -q gnuplot "$tmp/err" || fail "--plot without gnuplot: $(cat "$tmp/err")"
[[ $(wc -l <"$tmp/err") -eq 1 ]] || fail "--plot without gnuplot: $(cat "$tmp/err")"
# 9. policies.sh and plot_policies.sh: a bad option or count is one line
# and exit 2, before any run or folder; the figure over seeds from advise's CSV
for args in "--seeds 0" "--seeds x" "--seeds 101" "--jobs 0" "--jobs 65" "--seeds" "--bogus"; do
	rc=0
	# shellcheck disable=SC2086 # one option and its value, split on purpose
	RESULTS=$tmp/pol KSMSIM=$ksmsim "$src/analysis/policies.sh" $args >/dev/null 2>"$tmp/err" || rc=$?
	[[ $rc -eq 2 && $(wc -l <"$tmp/err") -eq 1 && ! -e $tmp/pol ]] ||
		fail "policies.sh $args: exit $rc, $(cat "$tmp/err")"
	grep -q "^policies.sh: .*${args%% *}" "$tmp/err" || fail "policies.sh $args: $(cat "$tmp/err")"
done
if command -v gnuplot >/dev/null && gnuplot -e 'set terminal pngcairo' 2>/dev/null; then
	{ sed -n '1s/^/trace,seed,/p' "$tmp/a.csv"
	  for s in 1 2; do sed -n "2,\$s/^/t,$s,/p" "$tmp/a.csv"; done; } >"$tmp/seeds.csv"
	"$src/analysis/plot_policies.sh" "$tmp/seeds.csv" t "$tmp/s.png" >/dev/null 2>"$tmp/err" ||
		fail "plot_policies.sh: $(cat "$tmp/err")"
	[[ $(head -c 4 "$tmp/s.png" | od -An -c | tr -d ' ') == '211PNG' ]] || fail "plot_policies.sh wrote no PNG"
	for args in "$tmp/seeds.csv nosuch $tmp/n.png" "$tmp/none.csv t $tmp/n.png" "$tmp/seeds.csv t"; do
		rc=0
		# shellcheck disable=SC2086
		"$src/analysis/plot_policies.sh" $args >/dev/null 2>"$tmp/err" || rc=$?
		[[ $rc -eq 2 && $(wc -l <"$tmp/err") -eq 1 && ! -e $tmp/n.png ]] ||
			fail "plot_policies.sh $args: exit $rc, $(cat "$tmp/err")"
	done
fi
echo PASS
