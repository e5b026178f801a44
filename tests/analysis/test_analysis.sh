#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_analysis.sh CASE KSMSIM SRCDIR: one check of `ksmsim collide` or of
# the analysis/ scripts on inputs small enough for every CI run.
# Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
case_=$1 ksmsim=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Two tiny traces: the bundled sample and a variant with more CoW writes.
tiny_traces() {
	cp "$src/traces/samples/default.ksmt" "$tmp/a.ksmt"
	sed 's/fill guest2 0x10000 100 /fill guest2 0x10000 500 /' \
		"$src/traces/samples/default.ksmt" >"$tmp/b.ksmt"
}

case $case_ in
collide-determinism)
	# same seed, any thread count: the same bytes; another seed: others
	hashes=jhash2,crc32c,xxhash at=100,200
	args=(collide birthday --hashes "$hashes" --bits 14 --trials 40
	      --max-pages 3000 --at "$at" --seed 7)
	"$ksmsim" "${args[@]}" --threads 1 -o "$tmp/a.csv" --curve-csv "$tmp/ac.csv" >/dev/null 2>&1
	"$ksmsim" "${args[@]}" --threads 3 -o "$tmp/b.csv" --curve-csv "$tmp/bc.csv" >/dev/null 2>&1
	cmp "$tmp/a.csv" "$tmp/b.csv" || fail "birthday CSV differs between runs"
	cmp "$tmp/ac.csv" "$tmp/bc.csv" || fail "curve CSV differs between runs"
	"$ksmsim" collide birthday --hashes jhash2 --bits 14 --trials 40 --max-pages 3000 \
		--seed 8 -o "$tmp/d.csv" >/dev/null 2>&1
	! cmp -s <(cut -d, -f7- "$tmp/a.csv" | sed -n 2p) <(cut -d, -f7- "$tmp/d.csv" | sed -n 2p) ||
		fail "seed 8 gave seed 7's figures"
	"$ksmsim" collide fp --hashes crc32c --trials 5000 --bits 8 --seed 3 --threads 1 -o "$tmp/f1.csv" >/dev/null 2>&1
	"$ksmsim" collide fp --hashes crc32c --trials 5000 --bits 8 --seed 3 --threads 2 -o "$tmp/f2.csv" >/dev/null 2>&1
	cmp "$tmp/f1.csv" "$tmp/f2.csv" || fail "false-positive CSV differs between runs"
	;;
collide-formula)
	# formula at n = 300, 16 bits: 1 - exp(-300*299/2^17)
	"$ksmsim" collide birthday --bits 16 --trials 400 --max-pages 4000 --at 300,600 \
		-o "$tmp/b.csv" >/dev/null 2>&1
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{
		want = 1 - exp(-300 * 299 / 2^17)
		if ($c["formula_300"] - want > 1e-5 || want - $c["formula_300"] > 1e-5) {
			print "formula_300 " $c["formula_300"] " want " want; bad = 1 }
		want6 = 1 - exp(-600 * 599 / 2^17)
		if ($c["formula_600"] - want6 > 1e-5 || want6 - $c["formula_600"] > 1e-5) {
			print "formula_600 " $c["formula_600"] " want " want6; bad = 1 }
		if ($c["collided"] != $c["trials"]) { print $1 ": censored trials"; bad = 1 }
		# observed within 4 of the printed standard errors (acceptance)
		for (k = 0; k < 2; k++) {
			n = k ? 600 : 300
			d = $c["frac_" n] - $c["formula_" n]; if (d < 0) d = -d
			if (d > 4 * $c["se_" n]) { print $1 ": frac_" n " " $c["frac_" n] " vs " $c["formula_" n]; bad = 1 }
		}
	}
	END { exit bad }' "$tmp/b.csv" || fail "birthday figures"
	# 64-bit: nothing expected in a bounded run, and the formula says how little
	"$ksmsim" collide birthday --hashes xxh64 --trials-wide 2 --max-pages-wide 20000 \
		-o "$tmp/w.csv" >/dev/null 2>&1
	awk -F, 'NR == 2 && ($7 != 0 || $NF > 1e-10) { exit 1 }' "$tmp/w.csv" || fail "xxh64 collided"
	;;
collide-crafted)
	"$ksmsim" collide false-positive --hashes crc32c,crc32,xxhash,jhash2,xxh3 \
		--trials 3000 -o "$tmp/fp.csv" >/dev/null 2>&1
	awk -F, 'NR > 1 {
		crc = $1 == "crc32c" || $1 == "crc32"
		if ($3 == "crafted-crc") want = crc ? 1 : 0
		else want = 0
		if ($7 + 0 != want) { print $1 " " $3 " rate " $7 " want " want; bad = 1 }
		n++
	} END { if (n != 20) { print n " rows"; bad = 1 } exit bad }' "$tmp/fp.csv" ||
		fail "false-positive rates"
	# truncated to 8 bits, random changes pass at about 2^-8
	"$ksmsim" collide fp --hashes xxhash --changes word --bits 8 --trials 100000 \
		-o "$tmp/t.csv" >/dev/null 2>&1
	awk -F, 'NR == 2 { r = $7; if (r < 0.0033 || r > 0.0046) exit 1 }' "$tmp/t.csv" ||
		fail "8-bit word-change rate is not about 1/256"
	;;
collide-ksm)
	for i in 1 2; do
		"$ksmsim" collide ksm --guests 2 --pages 3000 --image 600 --churn 300 --crafted 300 \
			--seconds 4 --hashes crc32c,xxhash -o "$tmp/k.csv" --run-csv "$tmp/r$i.csv" \
			>/dev/null 2>&1
	done
	# the run rows name the generated trace the same way every time
	cmp -s "$tmp/r1.csv" "$tmp/r2.csv" || fail "--run-csv differs between runs: $(diff "$tmp/r1.csv" "$tmp/r2.csv" | head -3)"
	[[ $(cut -d, -f1 "$tmp/r1.csv" | sort -u) == $'(generated)\ntrace' ]] ||
		fail "--run-csv trace column: $(cut -d, -f1 "$tmp/r1.csv" | sort -u | tr '\n' ' ')"
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$1 == "crc32c" && $c["false_positives"] == 0 { print "crc32c saw no false positive"; bad = 1 }
	$1 == "xxhash" && $c["false_positives"] != 0 { print "xxhash false positives"; bad = 1 }
	$1 == "crc32c" && $c["extra_unstable_inserts"] != $c["false_positives"] { print "extra inserts"; bad = 1 }
	END { exit bad }' "$tmp/k.csv" || fail "collide ksm table"
	;;
collide-ksm-run)
	# each --run-csv row is what `ksmsim run` says for that hash, run options included
	"$ksmsim" collide ksm --guests 2 --pages 2000 --image 400 --churn 200 --crafted 200 \
		--seconds 3 --hashes crc32,xxh64 --keep-trace "$tmp/k.ksmt" --run-csv "$tmp/r.csv" \
		-o "$tmp/k.csv" -- --pages-to-scan=500 --sleep_millisecs 10 >"$tmp/table" 2>/dev/null
	[[ $(wc -l <"$tmp/r.csv") -eq 3 ]] || fail "want a header and 2 rows: $(cat "$tmp/r.csv")"
	for h in crc32 xxh64; do
		"$ksmsim" run --quiet --trace "$tmp/k.ksmt" --hash $h --pages-to-scan 500 \
			--sleep-millisecs 10 --summary-csv "$tmp/one.csv"
		cmp -s <(head -1 "$tmp/one.csv") <(head -1 "$tmp/r.csv") || fail "run-csv header"
		grep -qxF "$(sed -n 2p "$tmp/one.csv")" "$tmp/r.csv" || fail "$h row differs from ksmsim run"
	done
	# the table repeats the summary's figures
	awk -F, 'NR == FNR { if (FNR == 1) for (i = 1; i <= NF; i++) c[$i] = i; else fp[$2] = $c["false_positives"]; next }
	FNR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
	$k["false_positives"] != fp[$1] { print $1 " false_positives " $k["false_positives"] " vs " fp[$1]; bad = 1 }
	END { exit bad }' "$tmp/r.csv" "$tmp/k.csv" || fail "table and run rows disagree"
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$1 == "crc32" && $c["false_positives"] == 0 { print "crc32 saw no false positive"; bad = 1 }
	$1 == "xxh64" && $c["false_positives"] != 0 { print "xxh64 false positives"; bad = 1 }
	END { exit bad }' "$tmp/k.csv" || fail "collide ksm table"
	# run options that would replace the study's own outputs are refused, before any run
	for bad in "--marks-csv $tmp/m.csv" "--advisor-max-cpu 101" "--run 1" "--pages-to-scan" stray; do
		rc=0
		"$ksmsim" collide ksm --trace "$tmp/k.ksmt" -- $bad >"$tmp/out" 2>"$tmp/err" || rc=$?
		[[ $rc -eq 2 && ! -s $tmp/out && $(wc -l <"$tmp/err") -eq 1 ]] ||
			fail "run option '$bad': exit $rc, $(cat "$tmp/err")"
	done
	;;
sweep)
	tiny_traces
	out="$tmp/sw"
	"$src/analysis/sweep.sh" --ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --trace "$tmp/b.ksmt" \
		--hash xxhash --pages-to-scan 100,1000 --out "$out" --jobs 2 2>"$tmp/log1"
	[[ $(wc -l <"$out/sweep.csv") -eq 5 ]] || fail "want 4 rows: $(cat "$out/sweep.csv")"
	head -1 "$out/sweep.csv" | grep -q '^trace,hash,checksum_ns,policy,workload,seed,scale,' ||
		fail "header: $(head -1 "$out/sweep.csv")"
	# the cells, by column name: trace file, swept knob, the other pinned one, hash
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ n = split($c["trace"], p, "/")
		  print p[n] "," $c["pages_to_scan"] "," $c["sleep_millisecs"] "," $c["hash"] "," $c["pinned"] }' \
		"$out/sweep.csv" | sort >"$tmp/got"
	for t in a b; do
		for n in 100 1000; do
			echo "$t.ksmt,$n,20,xxhash,pages_to_scan=$n;sleep_millisecs=20"
		done
	done >"$tmp/want"
	diff "$tmp/want" "$tmp/got" || fail "cells"
	# each row is exactly what `ksmsim run` says for that cell, under its header
	"$ksmsim" run --quiet --trace "$tmp/b.ksmt" --hash xxhash --pages-to-scan 1000 \
		--sleep-millisecs 20 --summary-csv "$tmp/one.csv"
	grep -qxF "$(sed -n 2p "$tmp/one.csv")" "$out/sweep.csv" || fail "row differs from ksmsim run"
	cmp -s <(head -1 "$tmp/one.csv") <(head -1 "$out/sweep.csv") || fail "header differs from ksmsim run"
	cp "$out/sweep.csv" "$tmp/first.csv"
	stamp=$(stat -c %Y%N "$out"/cells/*.csv | md5sum)
	"$src/analysis/sweep.sh" --ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --trace "$tmp/b.ksmt" \
		--hash xxhash --pages-to-scan 100,1000 --out "$out" --jobs 2 2>"$tmp/log2"
	grep -q '4 cells, 0 to run' "$tmp/log2" || fail "resume: $(cat "$tmp/log2")"
	[[ $(stat -c %Y%N "$out"/cells/*.csv | md5sum) == "$stamp" ]] || fail "cells rewritten"
	cmp "$tmp/first.csv" "$out/sweep.csv" || fail "merged CSV changed"
	# a lost cell is run again, and only it
	rm "$out/cells/a_pages-to-scan100_sleep-millisecs20_xxhash.csv"
	"$src/analysis/sweep.sh" --ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --trace "$tmp/b.ksmt" \
		--hash xxhash --pages-to-scan 100,1000 --out "$out" 2>"$tmp/log3"
	grep -q '4 cells, 1 to run' "$tmp/log3" || fail "rerun: $(cat "$tmp/log3")"
	cmp "$tmp/first.csv" "$out/sweep.csv" || fail "rerun changed the CSV"
	# one sweep per OUT: other cells or other run options are refused
	for other in "--hash crc32c" "--run-args --no-ideal"; do
		# shellcheck disable=SC2086  # an option and its value
		"$src/analysis/sweep.sh" --ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --trace "$tmp/b.ksmt" \
			--hash xxhash --pages-to-scan 100,1000 $other --out "$out" 2>"$tmp/err" && fail "$other: a second sweep into OUT"
		grep -q "holds another sweep" "$tmp/err" || fail "$other: $(cat "$tmp/err")"
	done
	cmp "$tmp/first.csv" "$out/sweep.csv" || fail "a refused sweep changed the CSV"
	# a file that is not a trace is found before any cell runs
	printf 'not a trace\n' >"$tmp/junk.ksmt"
	"$src/analysis/sweep.sh" --ksmsim "$ksmsim" --trace "$tmp/junk.ksmt" --out "$tmp/junk" 2>"$tmp/err" &&
		fail "a junk trace was accepted"
	grep -q "not a trace ksmsim reads: .*junk.ksmt:1: " "$tmp/err" || fail "junk trace: $(cat "$tmp/err")"
	[[ -z $(ls -A "$tmp/junk/cells") ]] || fail "a junk trace's cells ran"
	# Slurm: one array job of 4 tasks (then merge.sh), nothing run here
	# shellcheck disable=SC2054  # the commas are in the values
	sl=(--ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --hash xxhash,crc32c --pages-to-scan 100,1000 --slurm)
	"$src/analysis/sweep.sh" "${sl[@]}" --out "$tmp/sl" 2>"$tmp/err"
	grep -qF '4 cells, 4 to run in 4 tasks (--array=1-4)' "$tmp/err" || fail "slurm plan: $(cat "$tmp/err")"
	[[ -z $(ls "$tmp/sl/cells") ]] || fail "--slurm ran cells"
	# arrays kept under MaxArraySize, several cells a task
	"$src/analysis/sweep.sh" "${sl[@]}" --out "$tmp/sl" --max-array-size 3 2>"$tmp/err"
	grep -qF '4 cells, 4 to run in 4 tasks (--array=1-2; --array=1-2 from cell group 3)' "$tmp/err" ||
		fail "MaxArraySize 3: $(cat "$tmp/err")"
	"$src/analysis/sweep.sh" "${sl[@]}" --out "$tmp/sl" --cells-per-task 3 2>"$tmp/err"
	grep -qF '4 cells, 4 to run in 2 tasks (--array=1-2)' "$tmp/err" || fail "3 a task: $(cat "$tmp/err")"
	"$src/analysis/sweep.sh" "${sl[@]}" --out "$tmp/sl" 2>/dev/null
	# a task by hand, after what a SIGKILLed run of its cell leaves
	id3=$(sed -n 3p "$tmp/sl/cells.tsv" | cut -f1)
	: >"$tmp/sl/cells/.$id3.4242"
	: >"$tmp/sl/cells/.$id3.4242.tmp.Ab12Cd"
	SLURM_ARRAY_TASK_ID=3 bash "$tmp/sl/sweep.sbatch" 2>/dev/null
	[[ $(ls -A "$tmp/sl/cells") == "$id3.csv" ]] || fail "task 3 left $(ls -A "$tmp/sl/cells")"
	"$tmp/sl/merge.sh" 2>/dev/null && fail "merge of 1 of 4 cells claimed success"
	[[ ! -e $tmp/sl/sweep.csv && $(wc -l <"$tmp/sl/sweep.partial.csv") -eq 2 ]] || fail "partial merge"
	# a task refuses a cell list other than the one it was queued for, or no index
	sed -i "s/--task \([^ ]*\) [0-9]*-[0-9]* /--task \1 1-1 /" "$tmp/sl/sweep.sbatch"
	SLURM_ARRAY_TASK_ID=1 bash "$tmp/sl/sweep.sbatch" 2>"$tmp/err" && fail "a task ran another cell list"
	grep -q "is not the cell list this task was queued for" "$tmp/err" || fail "other list: $(cat "$tmp/err")"
	bash "$tmp/sl/sweep.sbatch" 2>"$tmp/err" && fail "a task without an index ran"
	grep -q "no SLURM_ARRAY_TASK_ID" "$tmp/err" || fail "no index: $(cat "$tmp/err")"
	# policies: a checksum-free one runs once, not once per hash; each row is ksmsim run's
	"$src/analysis/sweep.sh" --ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --hash xxhash,crc32c \
		--policy kernel --policy dirty-bit --policy classified:classes=4,by=mm \
		--out "$tmp/pol" --jobs 2 2>/dev/null
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ print $c["hash"] " " $c["policy"] }' "$tmp/pol/sweep.csv" | sort >"$tmp/got"
	printf '%s\n' "crc32c \"classified:classes=4" "crc32c kernel" "none dirty-bit" \
		"xxhash \"classified:classes=4" "xxhash kernel" | sort >"$tmp/want"
	diff "$tmp/want" "$tmp/got" || fail "policy cells"
	"$ksmsim" run --quiet --trace "$tmp/a.ksmt" --policy dirty-bit --pages-to-scan 100 \
		--sleep-millisecs 20 --summary-csv "$tmp/one.csv"
	grep -qxF "$(sed -n 2p "$tmp/one.csv")" "$tmp/pol/sweep.csv" || fail "dirty-bit row differs"
	"$src/analysis/sweep.sh" --ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --policy nope \
		--out "$tmp/pol2" 2>"$tmp/err" && fail "an unknown policy was accepted"
	grep -q "no such policy" "$tmp/err" || fail "policy error: $(cat "$tmp/err")"
	[[ ! -e $tmp/pol2 ]] || fail "a refused sweep made its directory"
	;;
reproduce-2017)
	# a tiny scale: every run made, 2017's figures beside ours, scaled
	r=$src/analysis/reproduce_2017.sh
	"$r" --ksmsim "$ksmsim" --scale 0.002 --out "$tmp/r" >"$tmp/table" 2>"$tmp/log" ||
		fail "exit $?: $(cat "$tmp/log")"
	[[ $(grep -c ': running (scale 0.002)$' "$tmp/log") -eq 6 ]] || fail "runs: $(cat "$tmp/log")"
	grep -q 'ran 6, reused 0 run' "$tmp/log" || fail "no count of runs made: $(cat "$tmp/log")"
	grep -q '^kernel-build: 4 guests x ' "$tmp/table" || fail "no kernel-build table"
	grep -q '^iozone: 4 guests x ' "$tmp/table" || fail "no iozone table"
	[[ $(grep -c '^  SCALED x0.002: ' "$tmp/table") -eq 2 ]] || fail "scaled tables not marked"
	[[ $(grep -cE '^  hash +figure +ours +2017 +diff$' "$tmp/table") -eq 2 ]] || fail "column heads"
	grep -qE '^  jhash2 +CoW \(cow_ksm, count over the run\) +[0-9,]+ +92 +[-+][0-9.]+%$' "$tmp/table" ||
		fail "kernel-build jhash2 CoW line: $(grep -m1 CoW "$tmp/table")"
	cmp "$tmp/table" "$tmp/r/tables.txt" || fail "printed table is not tables.txt"
	[[ $(wc -l <"$tmp/r/tables.csv") -eq 7 ]] || fail "tables.csv rows"
	# by column name: 2017 = published x scale, diff = (ours - 2017) / 2017,
	# model ns/page = what each run charged (its summary's checksum_ns, the
	# built-in table's checksum row), oracle on, means from the series
	awk -F, -v sums="$tmp/r/summary" '
		function charged(w, h,   f, hd, ln, H, R, i) {
			f = sums "/" w "-" h ".csv"
			getline hd < f; getline ln < f; close(f)
			split(hd, H, ","); split(ln, R, ",")
			for (i = 1; i in H; i++) if (H[i] == "checksum_ns") return R[i]
			return "none"
		}
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		function near(a, b) { return a - b < 0.051 && b - a < 0.051 }
		{
			k = $c["workload"] "/" $c["hash"]
			if (k == "kernel-build/jhash2" && !near($c["cow_ksm_2017"], 46114 * 0.002)) bad = bad " cow_2017"
			if (k == "iozone/crc32c" && $c["avg_pages_unshared_2017"] != sprintf("%.1f", 117746 * 0.002))
				bad = bad " unshared_2017"
			if ($c["hash"] == "xxhash" && $c["cow_ksm_2017"] != "") bad = bad " xxhash_2017"
			if ($c["hash"] != "xxhash") {
				d = ($c["cow_ksm"] - $c["cow_ksm_2017"]) * 100 / $c["cow_ksm_2017"]
				if (!near(d, $c["cow_ksm_diff_pct"])) bad = bad " " k ":cow_diff"
				d = ($c["avg_pages_sharing"] - $c["avg_pages_sharing_2017"]) * 100 / $c["avg_pages_sharing_2017"]
				if (!near(d, $c["avg_pages_sharing_diff_pct"])) bad = bad " " k ":sharing_diff"
			}
			if ($c["checksum_ns_per_page"] != charged($c["workload"], $c["hash"]) ||
			    $c["checksum_ns_per_page"] + 0 < 100) bad = bad " " k ":ns"
			if ($c["missed_merges"] == "") bad = bad " " k ":missed_merges"
			if ($c["false_positives"] != 0) bad = bad " " k ":fp"
			n++
		}
		END { if (n != 6 || bad) { print "rows " n ":" bad; exit 1 } }' "$tmp/r/tables.csv" ||
		fail "tables.csv figures"
	# the mean is the one the summary gives, else that of the 1 s samples
	want=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$1 > 0 { n++; s += $c["pages_sharing"] } END { printf "%.1f", s / n }' "$tmp/r/series/iozone-jhash2.csv")
	mc=$(head -1 "$tmp/r/summary/iozone-jhash2.csv" | tr ',' '\n' |
		{ grep -nxE 'mean_pages_sharing|avg_pages_sharing|pages_sharing_mean' || true; } | head -1 | cut -d: -f1)
	if [[ -n $mc ]]; then
		want=$(awk -F, -v c="$mc" 'NR == 2 { printf "%.1f", $c }' "$tmp/r/summary/iozone-jhash2.csv")
	fi
	got=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$1 == "iozone" && $4 == "jhash2" { print $c["avg_pages_sharing"] }' "$tmp/r/tables.csv")
	[[ $got == "$want" ]] || fail "iozone jhash2 mean pages_sharing $got, want $want"
	# results already there are run again unless --reuse, and then only
	# those of the same trace are kept
	"$r" --ksmsim "$ksmsim" --scale 0.002 --out "$tmp/r" >/dev/null 2>"$tmp/log" || fail "second run"
	grep -q 'ran 6, reused 0 run' "$tmp/log" || fail "second run reused: $(cat "$tmp/log")"
	"$r" --ksmsim "$ksmsim" --scale 0.002 --out "$tmp/r" --reuse >"$tmp/table2" 2>"$tmp/log" || fail "--reuse"
	[[ $(grep -c ': reusing .* (--reuse)$' "$tmp/log") -eq 6 ]] || fail "--reuse: $(cat "$tmp/log")"
	cmp "$tmp/table" "$tmp/table2" || fail "--reuse changed the table"
	"$r" --ksmsim "$ksmsim" --scale 0.003 --workloads kernel-build --hashes xxhash --out "$tmp/r" \
		--reuse >/dev/null 2>"$tmp/log" || fail "--reuse at another scale"
	grep -q 'ran 1, reused 0 run' "$tmp/log" || fail "reused another scale's run: $(cat "$tmp/log")"
	grep -q '^kernel-build: 4 guests x 12.288 MiB, 5.4 s' "$tmp/r/tables.txt" || fail "scale 0.003 heading"
	# --help names every option the script takes; bad ones exit 2
	"$r" --help >"$tmp/help"
	for o in $(grep -oE '^\t--[a-z-]+\)' "$r" | tr -d '\t)'); do
		grep -q -- "^  $o\b" "$tmp/help" || fail "--help lacks $o"
	done
	for bad in "--bogus" "--scale x" "--seed" "--costs-csv $tmp/none.csv"; do
		# shellcheck disable=SC2086  # each case is an option and its value
		"$r" --ksmsim "$ksmsim" --out "$tmp/bad" $bad >/dev/null 2>"$tmp/err" && fail "accepted $bad"
		[[ $? -eq 2 ]] || fail "$bad: exit status"
		grep -q '^reproduce_2017.sh: ' "$tmp/err" || fail "$bad: $(cat "$tmp/err")"
	done
	[[ ! -e $tmp/bad ]] || fail "a refused run made its --out"
	;;
sweep-checks)
	# every bad value is refused, naming the option, before any trace is
	# generated or any cell runs; --merge needs no binary
	out=$tmp/bad
	check() { # PATTERN ARGS...
		local pat=$1
		shift
		if "$src/analysis/sweep.sh" --ksmsim "$ksmsim" --out "$out" "$@" 2>"$tmp/err"; then
			fail "accepted: $*"
		fi
		grep -q -- "$pat" "$tmp/err" || fail "$*: $(cat "$tmp/err")"
		[[ ! -e $out/traces && ! -e $out/cells && ! -e $out/sweep.csv ]] ||
			fail "$*: work was done: $(find "$out" | tr '\n' ' ')"
	}
	check "--hash jhash2,crc32cc: --hash: unknown checksum 'crc32cc'; did you mean 'crc32c'" \
		--workload vm-clones --scale 0.001 --hash jhash2,crc32cc
	check "unknown option '--max-page-sharng'" \
		--workload vm-clones --scale 0.001 --knob max_page_sharng=2,4
	check "--pages-to-scan 100,abc: --pages-to-scan wants 0..4294967295, not 'abc'" \
		--workload vm-clones --scale 0.001 --pages-to-scan 100,abc
	check "--workload: unknown workload 'vm-clone'" --workload vm-clone --scale 0.001
	check "--scale wants a number" --workload vm-clones --scale x
	check "--jobs wants a positive number" --workload vm-clones --jobs 0
	check "--seed needs a value" --workload vm-clones --seed
	check "unknown option '--bogus'" --workload vm-clones --bogus 1
	check "--knob max_page_sharing given twice" \
		--workload vm-clones --knob max_page_sharing=2,4 --knob max_page_sharing=8
	check "--run-args '--frob': unknown option '--frob'" --workload vm-clones --run-args --frob
	# a finished sweep merges again without any ksmsim binary
	"$src/analysis/sweep.sh" --ksmsim "$ksmsim" --workload vm-clones --scale 0.001 \
		--hash xxhash --out "$tmp/ok" 2>/dev/null || fail "a good sweep failed"
	rm "$tmp/ok/sweep.csv"
	KSMSIM=/nonexistent "$src/analysis/sweep.sh" --merge --out "$tmp/ok" 2>/dev/null ||
		fail "--merge wanted a binary"
	[[ $(wc -l <"$tmp/ok/sweep.csv") -eq 2 ]] || fail "--merge wrote $(cat "$tmp/ok/sweep.csv")"
	# --kernel beside --run-args (as seeds-2017.sh passes them): one --kernel a run
	"$src/analysis/sweep.sh" --ksmsim "$ksmsim" --workload vm-clones --scale 0.001 \
		--hash xxhash --kernel 6.1 --run-args --batch-time --out "$tmp/k61" 2>"$tmp/err" ||
		fail "--kernel 6.1 with --run-args: $(cat "$tmp/err")"
	grep -q 'kernel=6.1' "$tmp/k61/sweep.csv" || fail "--kernel 6.1 rows: $(cat "$tmp/k61/sweep.csv")"
	;;
plot)
	command -v gnuplot >/dev/null || { echo "gnuplot missing: skip"; exit 77; }
	tiny_traces
	"$ksmsim" run --quiet --trace "$tmp/a.ksmt" --hash xxhash --csv "$tmp/xxhash.csv"
	"$ksmsim" run --quiet --trace "$tmp/a.ksmt" --hash crc32c --csv "$tmp/crc32c.csv" \
		--summary-csv "$tmp/sum.csv"
	"$ksmsim" collide birthday --bits 12 --trials 20 --max-pages 1000 --hashes crc32,xxhash \
		-o "$tmp/bd.csv" --curve-csv "$tmp/curve.csv" >/dev/null 2>&1
	"$ksmsim" collide fp --trials 500 --hashes crc32,xxhash -o "$tmp/fp.csv" >/dev/null 2>&1
	"$src/analysis/plot.sh" -o "$tmp/png" "$tmp/xxhash.csv" "$tmp/crc32c.csv" "$tmp/sum.csv" \
		"$tmp/bd.csv" "$tmp/curve.csv" "$tmp/fp.csv" >"$tmp/list"
	for w in xxhash+crc32c-pages sum-cost bd-first-collision curve-birthday fp-false-positives; do
		grep -qx "$tmp/png/$w.png" "$tmp/list" || fail "no $w.png: $(cat "$tmp/list")"
	done
	while read -r p; do
		[[ -s $p ]] || fail "$p empty"
		[[ $(head -c 4 "$p" | od -An -tx1 | tr -d ' ') == 89504e47 ]] || fail "$p is not PNG"
	done <"$tmp/list"
	;;
*)
	echo "unknown case $case_" >&2
	exit 2
	;;
esac
echo "ok $case_"
