#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# analysis/results/README.md against its CSVs: rendering README.md.in from
# the committed CSVs gives the committed page byte for byte (no figure
# typed by hand, none stale); a CSV changed under the page is caught and
# named; the verdict is at most three sentences; summarise.py's Student-t
# quantiles and intervals are right; large-tree's summary is what its
# runs.csv gives (summarise.py --keep); its 2017 checksum time comes from
# each run's checksum_ns, and its differences pair runs by (seed, timing
# replicate); 2017's published figures are the ones reproduce_2017.sh
# compares with.
set -euo pipefail
src=$1
res=$src/analysis/results
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 "$src/analysis/render_results.py" --check ||
	fail "README.md differs from what README.md.in and the CSVs give (run analysis/render_results.py)"

# A figure the page quotes, changed in its CSV, is caught with its line.
cp -r "$res" "$T/res"
awk -F, 'BEGIN {OFS=","} $1 == "\"jhash2\"" {$6 = "\"1999.99\""} {print}' "$res/costs.csv" >"$T/res/costs.csv"
cmp -s "$res/costs.csv" "$T/res/costs.csv" && fail "could not alter costs.csv"
rc=0
python3 "$src/analysis/render_results.py" --results "$T/res" --check 2>"$T/err" || rc=$?
[[ $rc == 1 ]] || fail "a changed CSV gave exit $rc, not 1"
grep -q 'README.md:[0-9]* differs from its CSVs' "$T/err" || fail "no line named: $(cat "$T/err")"
# A placeholder whose row is gone is one line and exit 2.
grep -v '^"crc32c"' "$res/costs.csv" >"$T/res/costs.csv"
rc=0
python3 "$src/analysis/render_results.py" --results "$T/res" --check 2>"$T/err" || rc=$?
[[ $rc == 2 && $(wc -l <"$T/err") == 1 ]] || fail "a missing row: exit $rc, $(cat "$T/err")"
# A cell of 1e400 (inf) is refused, not rendered as "inf" (issue 46).
awk -F, 'BEGIN {OFS=","} $1 == "\"jhash2\"" {$6 = "\"1e400\""} {print}' "$res/costs.csv" >"$T/res/costs.csv"
rc=0
python3 "$src/analysis/render_results.py" --results "$T/res" --check 2>"$T/err" || rc=$?
[[ $rc == 2 && $(wc -l <"$T/err") == 1 ]] && grep -q "'1e400' is not a finite number" "$T/err" ||
	fail "a cell of 1e400: exit $rc, $(cat "$T/err")"
cp "$res/costs.csv" "$T/res/costs.csv"
# --check taken as --results' folder, and a folder with no template, fail.
rc=0
python3 "$src/analysis/render_results.py" --results --check 2>"$T/err" || rc=$?
[[ $rc == 2 && $(wc -l <"$T/err") == 1 ]] || fail "--results --check: exit $rc, $(cat "$T/err")"
mkdir "$T/empty"
rc=0
python3 "$src/analysis/render_results.py" --results "$T/empty" --check 2>"$T/err" || rc=$?
[[ $rc == 2 ]] && grep -q "no README.md.in under it" "$T/err" ||
	fail "a folder without a template: exit $rc, $(cat "$T/err")"

# altered FILE:SED PAGE: FILE changed by SED makes --check fail (exit 1)
# and name PAGE (the page that quotes it) as the one that differs.
altered() {
	local f=${1%%:*} e=${1#*:} page=$2 rc=0
	rm -rf "$T/res" && cp -r "$res" "$T/res"
	sed "$e" "$res/$f" >"$T/res/$f"
	cmp -s "$res/$f" "$T/res/$f" && fail "could not alter $f"
	python3 "$src/analysis/render_results.py" --results "$T/res" --check 2>"$T/err" || rc=$?
	[[ $rc == 1 ]] || fail "a changed $f gave exit $rc, not 1: $(cat "$T/err")"
	grep -q "/$page:[0-9]* differs" "$T/err" || fail "a changed $f did not name $page: $(cat "$T/err")"
}
# The files sections 7-10 quote are checked too: a changed figure in a
# policies CSV, a fixed-seed CSV, the sizing CSV and experiment.sh's table
# in guests/ each makes --check fail.
for alt in "policies/kernel-build-s0.1.csv:s/^kernel,xxhash,[0-9.]*,/kernel,xxhash,1.5,/" \
	"fixed-seed/pairs.csv:s/^jhash2,32,1048576,[0-9]*,/jhash2,32,1048576,1,/" \
	"sizing/model.csv:s/^3a,\([0-9]*\),\([0-9]*\),[0-9.]*,/3a,\1,\2,1.0,/" \
	"guests/fio.txt:s/^| fio | jhash2 | real @\([^|]*\)| [0-9]* |/| fio | jhash2 | real @\1| 1 |/"; do
	altered "$alt" res/README.md
done
# The exposure page is rendered and checked the same way: a changed probe
# cell or saving row makes --check fail, naming the exposure page.
for alt in "exposure/probe.csv:s/^4,default,100,20,\([0-9]*\),\([0-9]*\),100,100,[0-9.]*,/4,default,100,20,\1,\2,100,100,1.000,/" \
	"exposure/saving.csv:s/^kernel-build,[0-9]*,/kernel-build,1,/"; do
	altered "$alt" res/exposure/README.md
done
# No page holds figures marked typed.
for tpl in "$res/README.md.in" "$res/exposure/README.md.in"; do
	n=$(grep -ci 'typed' "$tpl" || true)
	[[ $n == 0 ]] || fail "$tpl has $n lines saying 'typed': $(grep -in typed "$tpl")"
done

# The verdict: its first paragraph (what a reader quotes) is at most three
# sentences and 90 words; its caveats follow in paragraphs of their own.
awk '/^## Verdict/ {on = 1; next} /^## / {on = 0} on' "$res/README.md" |
	awk 'NF {p = 1; print; next} p {exit}' >"$T/verdict"
[[ -s $T/verdict ]] || fail "no verdict paragraph under '## Verdict'"
# a sentence ends at '.', '!' or '?' before a space and a letter (not "0.1 s")
sentences=$(tr '\n' ' ' <"$T/verdict" | grep -oE '[.!?] +[A-Za-z`(]' | wc -l)
sentences=$((sentences + 1))
((sentences <= 3)) || fail "the verdict's first paragraph has $sentences sentences"
words=$(wc -w <"$T/verdict")
((words <= 90)) || fail "the verdict's first paragraph has $words words, not at most 90"

# A range quoted from part of the rows it could cover fails (issue 45: a
# range over two of three collide/ksm*.csv): a family of CSVs left out, a
# value of the one key varied left out; part() marks a subset on purpose.
mkdir -p "$T/scope"
printf 'hash,ms\njhash2,10\ncrc32c,7\n' >"$T/scope/ksm.csv"
printf 'hash,ms\njhash2,20\ncrc32c,12\n' >"$T/scope/ksm_a.csv"
printf 'hash,ms\njhash2,30\ncrc32c,15\n' >"$T/scope/ksm_b.csv"
printf 'w,ms\nbuild,1\nio,2\ncrunch,3\n' >"$T/scope/w.csv"
scope() {	# $1 template, $2 expected exit, $3 text of the error (or "")
	printf '%s\n' "$1" >"$T/scope/README.md.in"
	rc=0
	python3 "$src/analysis/render_results.py" --results "$T/scope" 2>"$T/err" || rc=$?
	[[ $rc == "$2" ]] || fail "scope: '$1' gave exit $rc, not $2: $(cat "$T/err")"
	[[ -z $3 ]] || grep -qF -- "$3" "$T/err" || fail "scope: '$1': $(cat "$T/err")"
}
scope "{{rng((v(f_,'ms',hash='crc32c')/v(f_,'ms',hash='jhash2') for f_ in ('ksm.csv','ksm_a.csv')),'.2f')}}" 2 "leaves out ksm_b.csv"
scope "{{min(v(f_,'ms',hash='crc32c') for f_ in ('ksm.csv','ksm_a.csv','ksm_b.csv'))}}" 0 ""
grep -qx '7' "$T/scope/README.md" || fail "scope: the full range rendered $(cat "$T/scope/README.md")"
scope "{{rng((v('w.csv','ms',w=x) for x in ('build','io')),'d')}}" 2 "leaves out w=crunch"
scope "{{rng((v('w.csv','ms',w=x) for x in ('build','io','crunch')),'d')}}" 0 ""
scope "{{rng(part(v('w.csv','ms',w=x) for x in ('build','io')),'d')}}" 0 ""

# Student's t: known quantiles, and an interval from three runs.
py=$src/analysis/summarise.py
for q in "1 12.706" "4 2.776" "30 2.042"; do
	set -- $q
	got=$(python3 "$py" t-quantile 0.975 "$1")
	awk -v g="$got" -v w="$2" 'BEGIN {exit !(g - w < 0.001 && w - g < 0.001)}' ||
		fail "t(0.975, $1) = $got, not $2"
done
{
	echo "trace,hash,cow_ksm,pages_sharing,pages_unshared,avg_pages_unshared,peak_pages_unshared,missed_merges,unstable_corrupt_walks,unstable_changed_after_insert,gate_changed,false_positives,ksmd_cpu_ms,full_scans,pages_scanned,sim_us"
	for s in 1 2 3; do
		echo "traces/large-tree-g16-n$s.ksmb,xxhash,$((s * 10)),1,1,1,262144,0,0,0,$((s * 1000)),0,1000,5,1310720,1000000"
	done
} >"$T/sweep.csv"
python3 "$py" large-tree "$T/sweep.csv" -o "$T/sum.csv" --runs "$T/runs.csv"
# cow 10, 20, 30: mean 20, sd 10, half-width t(0.975, 2) x 10 / sqrt(3) = 24.841
awk -F, '$3 == "cow_ksm" {ok = ($4 == 3 && $5 == 20 && $6 == 10 && $7 - (-4.8414) < 0.001 &&
	$7 - (-4.8414) > -0.001 && $8 - 44.8414 < 0.001 && $8 - 44.8414 > -0.001)} END {exit !ok}' \
	"$T/sum.csv" || fail "interval of 10, 20, 30: $(grep cow_ksm "$T/sum.csv")"
awk -F, '$3 == "expected_false_positives" {ok = ($5 - 2000 * 2^-32 < 1e-12)} END {exit !ok}' \
	"$T/sum.csv" || fail "expected false positives: $(grep expected "$T/sum.csv")"
awk -F, '$3 == "unstable_tree_gib" {ok = ($5 == 1)} END {exit !ok}' "$T/sum.csv" ||
	fail "unstable tree GiB: $(grep unstable_tree_gib "$T/sum.csv")"

# --keep: the committed runs.csv alone gives the committed summary.csv
# (and itself) byte for byte, so runs made on other machines summarise as
# when they were made; a run in a sweep CSV replaces the kept one.
lt=$res/large-tree
python3 "$py" large-tree --keep "$lt/runs.csv" -o "$T/lt-sum.csv" --runs "$T/lt-runs.csv" ||
	fail "summarise.py large-tree --keep failed"
cmp -s "$T/lt-sum.csv" "$lt/summary.csv" || fail "large-tree/summary.csv is not what its runs.csv gives"
cmp -s "$T/lt-runs.csv" "$lt/runs.csv" || fail "--keep did not carry large-tree/runs.csv over unchanged"
python3 "$py" large-tree --keep "$T/runs.csv" "$T/sweep.csv" -o "$T/sum1.csv" --runs "$T/runs1.csv"
cmp -s "$T/runs1.csv" "$T/runs.csv" || fail "--keep with the same runs again: rows doubled or changed"
head -2 "$T/sweep.csv" | sed 's/,xxhash,10,/,xxhash,99,/' >"$T/sweep2.csv"
python3 "$py" large-tree --keep "$T/runs.csv" "$T/sweep2.csv" -o "$T/sum2.csv" --runs "$T/runs2.csv"
awk -F, '$1 == 16 && $3 == 1 {c = $5} END {exit !(NR == 4 && c == 99)}' "$T/runs2.csv" ||
	fail "a swept run did not replace its kept row: $(cat "$T/runs2.csv")"

# 2017's checksum time: each run's checksums x that row's own checksum_ns
# (the price its run charged), paired by seed: crc32c's 1000 and 2000 ns
# against jhash2's 4000 are -75% and -50%, mean -62.5%.
m17=trace,workload,seed,hash,checksums,checksum_ns,cow_ksm,avg_pages_sharing,avg_pages_unshared
m17=$m17,ksmd_cpu_ms,gate_changed,false_positives,unstable_corrupt_walks
m17=$m17,unstable_changed_after_insert,missed_merges,avg_missed_merges
{
	echo "$m17"
	for s in 1 2; do
		echo "t$s,kernel-build,$s,jhash2,1000,4000.000,10,10,10,10,1,0,0,0,1,1"
		echo "t$s,kernel-build,$s,crc32c,1000,$((s * 1000)).000,10,10,10,10,1,0,0,0,1,1"
	done
} >"$T/runs17.csv"
python3 "$py" 2017 "$T/runs17.csv" -o "$T/sum17.csv" || fail "summarise.py 2017 failed"
awk -F, '$2 == "crc32c" && $3 == "checksum_time_vs_jhash2_pct" {ok = ($4 == 2 && $5 == -62.5)}
	END {exit !ok}' "$T/sum17.csv" ||
	fail "checksum time from checksum_ns: $(grep checksum_time "$T/sum17.csv")"
# runs without the column (an older ksmsim) are refused, naming the file
cut -d, -f1-5,7- "$T/runs17.csv" >"$T/old17.csv"
if python3 "$py" 2017 "$T/old17.csv" -o "$T/sum-old.csv" 2>"$T/err"; then
	fail "summarise.py 2017 accepted runs without checksum_ns"
fi
grep -q "old17.csv: no column 'checksum_ns'.*run them again" "$T/err" ||
	fail "runs without checksum_ns: $(cat "$T/err")"
[[ ! -e $T/sum-old.csv ]] || fail "runs without checksum_ns: a summary was written"

# Timing replicates (seeds-2017.sh --timings): a trace named -tK is timing
# K of its seed, and a difference from jhash2 pairs the runs of one (seed,
# timing). CoW +10% and -10% (seed 1, timings 0 and 1), +20% and 0% (seed
# 2): mean +5% over n = 4; paired by seed alone the timings would be lost.
{
	echo "$m17"
	for r in "1 0 100 110" "1 1 200 180" "2 0 100 120" "2 1 50 50"; do
		set -- $r
		t=traces/kernel-build-s1-n$1.ksmt
		(($2)) && t=traces/kernel-build-s1-n$1-t$2.ksmt
		echo "$t,kernel-build,$1,jhash2,1000,4000.000,$3,10,10,10,1,0,0,0,1,1"
		echo "$t,kernel-build,$1,crc32c,1000,1000.000,$4,10,10,10,1,0,0,0,1,1"
	done
} >"$T/timing17.csv"
python3 "$py" 2017 "$T/timing17.csv" -o "$T/sumt.csv" || fail "summarise.py 2017 with timings failed"
# (timing_range: the widest range across one seed's timings, 20 points;
# over the seeds' means 0 and 10: mean 5, half-width t(0.975, 1) x 5 =
# 63.53)
awk -F, '$2 == "crc32c" && $3 == "cow_ksm_vs_jhash2_pct" {ok = ($4 == 4 && $5 == 5 && $10 == 2 &&
	$11 == 2 && $12 == 20 && $13 == 5 && $14 + 58.5310 < 0.001 && $14 + 58.5310 > -0.001 &&
	$15 - 68.5310 < 0.001 && $15 - 68.5310 > -0.001)} END {exit !ok}' "$T/sumt.csv" ||
	fail "deltas paired by (seed, timing): $(grep cow_ksm_vs "$T/sumt.csv")"
awk -F, '$2 == "jhash2" && $3 == "cow_ksm" {ok = ($4 == 4 && $5 == 112.5 && $12 == 100)} END {exit !ok}' \
	"$T/sumt.csv" || fail "mean over seeds x timings: $(grep '^kernel-build,jhash2,cow_ksm,' "$T/sumt.csv")"
# one (seed, timing) twice is refused, naming the file
sed -n 2p "$T/timing17.csv" >>"$T/timing17.csv"
python3 "$py" 2017 "$T/timing17.csv" -o "$T/sumt2.csv" 2>"$T/err" &&
	fail "summarise.py 2017 took a run twice"
grep -q "timing17.csv: kernel-build/jhash2 seed 1 timing 0 twice" "$T/err" || fail "a run twice: $(cat "$T/err")"
[[ ! -e $T/sumt2.csv ]] || fail "a run twice: a summary was written"
# 2017-runs: the timings' sweeps in one runs.csv (the union of their
# columns), kept rows only where no sweep has the run, in canonical order;
# the committed runs.csv alone comes back byte for byte
head -1 "$T/timing17.csv" >"$T/t0.csv"
grep -v -- '-t1\.ksmt' "$T/timing17.csv" | tail -n +2 | head -4 >>"$T/t0.csv"
{ head -1 "$T/timing17.csv" | sed 's/$/,avg_saved/'
  grep -- '-t1\.ksmt' "$T/timing17.csv" | sed 's/$/,7/'; } >"$T/t1.csv"
python3 "$py" 2017-runs "$T/t1.csv" --keep "$T/t0.csv" -o "$T/joined.csv" || fail "2017-runs failed"
[[ $(head -1 "$T/joined.csv") == "$m17,avg_saved" ]] || fail "2017-runs header: $(head -1 "$T/joined.csv")"
[[ $(cut -d, -f1,4,17 "$T/joined.csv" | tail -n +2 | paste -sd' ') == \
	"traces/kernel-build-s1-n1.ksmt,jhash2, traces/kernel-build-s1-n1.ksmt,crc32c, traces/kernel-build-s1-n2.ksmt,jhash2, traces/kernel-build-s1-n2.ksmt,crc32c, traces/kernel-build-s1-n1-t1.ksmt,jhash2,7 traces/kernel-build-s1-n1-t1.ksmt,crc32c,7 traces/kernel-build-s1-n2-t1.ksmt,jhash2,7 traces/kernel-build-s1-n2-t1.ksmt,crc32c,7" ]] ||
	fail "2017-runs rows: $(cat "$T/joined.csv")"
for k in seeds seeds-6.1; do
	python3 "$py" 2017-runs --keep "$res/2017/$k/runs.csv" -o "$T/k.csv" || fail "2017-runs --keep $k failed"
	cmp -s "$T/k.csv" "$res/2017/$k/runs.csv" || fail "2017-runs --keep changed 2017/$k/runs.csv"
done

# 2017's published figures are the ones reproduce_2017.sh compares with.
sed -n "/^ref2017='/,/^'/p" "$src/analysis/reproduce_2017.sh" | awk 'NF == 5 {
	print $1 "," $2 ",cow_ksm," $3; print $1 "," $2 ",avg_pages_sharing," $4
	print $1 "," $2 ",avg_pages_unshared," $5 }' | sort >"$T/ref"
grep -v '^#' "$res/2017/published.csv" | grep -v '^any,' | tail -n +2 | sort >"$T/pub"
cmp -s "$T/ref" "$T/pub" || fail "2017/published.csv and reproduce_2017.sh's ref2017 differ"
echo ok
