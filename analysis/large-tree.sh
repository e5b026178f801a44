#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The large-tree study: `ksmsim gen large-tree` (an unstable tree of ~86%
# of guest memory among pages with small changes) at each size, seed and
# checksum, as one sweep.sh grid per size (so it runs on Slurm as well:
# give sweep.sh's options after --). Knobs: pages_to_scan 1600 per 16 GiB
# of guests, sleep_millisecs 200 (8,000 pages/s per 16 GiB: 5 full scans
# in the trace's 3000 s), smart_scan 0 (see results/README.md), the
# oracle every 600 s. Every run's cost (wall, CPU, peak RSS) is logged by
# timed-ksmsim.sh. Writes RESULTS/runs.csv (a row per run) and
# RESULTS/summary.csv (means and 95% t intervals per size and hash) with
# analysis/summarise.py.
#
# usage: analysis/large-tree.sh [--sizes 16,64] [--seeds 1,2,3,4,5]
#        [--seeds-for SIZE:LIST]... [--hashes jhash2,crc32c,xxhash,xxh64]
#        [--out DIR] [--results DIR] [--jobs N] [--max-memory SIZE] [--summarise-only]
#        [--keep-runs] [--workload large-tree|large-tree-crc] [--batch-time]
#        [--probe SIZE:SECONDS] [--estimate SIZE]
#        [-- SWEEP-OPTIONS]
# A size is GiB of guest memory in total (at least 1): 4 guests up to
# 64 GiB, 16 above.
# --workload large-tree-crc: the variant whose changes include ones a CRC
# cannot see (workloads/README.md "large-tree-crc"); give it its own --out
# and --results (analysis/results/large-tree/crc/).
# --nice N: the runs' niceness increment (default 19).
# --batch-time: each ksmd batch lasts its modelled CPU time (ksmsim run
# --batch-time), so the modelled ksmd never takes more than one CPU.
# --summarise-only: no runs, only the tables and figures from the runs done.
# --keep-runs: RESULTS/runs.csv's rows for runs OUT does not hold (runs
# made on another machine, or sizes not run this time) stay in the tables;
# without it the tables hold only OUT's runs. With --summarise-only it
# remakes summary.csv and the figures from runs.csv alone.
# --probe SIZE:SECONDS: instead, one short run (xxhash, seed 1, SECONDS of
# trace) to measure what a size costs before running it: its row (scans,
# pages scanned, wall and CPU s, peak RSS) is added to RESULTS/probe.csv.
# --max-memory SIZE: ksmsim run's limit (default 10G up to 64 GiB of
# guests, which need at most 4.5 GiB; above, 88 MiB per GiB of guests:
# 22G at 256 GiB, whose runs need about 18 GiB).
# --estimate SIZE: instead, whether a size fits the study's --max-memory
# (10G unless given): the seed-1 trace's most pages mapped at once (trace stat) and ksmsim
# run's refusal line (where its memory estimate passes the limit), or "fits"
# (a size that fits is run to its end), in RESULTS/estimate-SIZE.txt.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sizes=16,64 seeds=1,2,3,4,5 hashes=jhash2,crc32c,xxhash,xxh64 jobs=1
out=$here/out/large-tree res=$here/results/large-tree
declare -A seeds_for=([256]=1,2)
sweep_args=() only=0 keep=0 probe="" estimate="" maxmem="" workload=large-tree batch="" niceness=19
die() { echo "large-tree.sh: $*" >&2; exit 2; }
while (($#)); do
	case $1 in
	--sizes) sizes=${2:?}; shift 2 ;;
	--seeds) seeds=${2:?}; shift 2 ;;
	--seeds-for) [[ ${2:-} =~ ^([0-9]+):([0-9]+(,[0-9]+)*)$ ]] ||
		die "--seeds-for ${2:-}: SIZE:LIST, e.g. 256:1,2"
		seeds_for[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}; shift 2 ;;
	--hashes) hashes=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--results) res=${2:?}; shift 2 ;;
	--jobs) jobs=${2:?}; shift 2 ;;
	--summarise-only) only=1; shift ;;
	--workload) [[ ${2:-} == large-tree || ${2:-} == large-tree-crc ]] ||
		die "--workload ${2:-}: large-tree or large-tree-crc"
		workload=$2; shift 2 ;;
	--batch-time) batch=" --batch-time"; shift ;;
	--nice) [[ ${2:-} =~ ^[0-9]+$ ]] || die "--nice ${2:-}: a number, 0-19"
		niceness=$2; shift 2 ;;
	--keep-runs) keep=1; shift ;;
	--probe) [[ ${2:-} =~ ^([0-9]+):([0-9]+)$ ]] || die "--probe ${2:-}: SIZE:SECONDS, e.g. 64:700"
		probe=$2; shift 2 ;;
	--max-memory) [[ ${2:-} =~ ^[0-9]+[KMGT]?$ ]] || die "--max-memory ${2:-}: a size, e.g. 22G"
		maxmem=$2; shift 2 ;;
	--estimate) [[ ${2:-} =~ ^[0-9]+$ ]] || die "--estimate ${2:-}: a size in GiB, e.g. 256"
		estimate=$2; shift 2 ;;
	--) shift; sweep_args=("$@"); break ;;
	-h | --help) awk 'NR > 2 && /^#/ {sub(/^# ?/, ""); print; next} NR > 2 {exit}' "$0"; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
[[ $sizes =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--sizes $sizes: a comma list of GiB"
[[ $seeds =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--seeds $seeds: a comma list of numbers"
. "$here/steps.sh" large-tree.sh
# every option checked before any trace is made: sweep.sh would refuse
# these only after every size's traces were generated
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "--jobs wants a positive number, not '$jobs'"
[[ -z $maxmem || ! $maxmem =~ ^0+[KMGT]?$ ]] || die "--max-memory $maxmem: a size above 0, e.g. 22G"
known=$("$ksmsim" hashes | awk '{ print $1 }')
IFS=, read -r -a hl <<<"$hashes"
((${#hl[@]})) || die "--hashes: empty list"
for h in "${hl[@]}"; do
	grep -qxF -- "$h" <<<"$known" || die "--hashes: unknown checksum '$h' (ksmsim hashes lists them)"
done
mkdir -p "$out" "$res"
out=$(cd "$out" && pwd)
export KSMSIM_REAL=$ksmsim KSMSIM_TIMES=$out/times.tsv
# a size's trace as the study makes it: vms, MiB a guest, pages_to_scan
shape() {
	local g=$1
	((g >= 1)) || die "$g GiB: at least 1 GiB"
	vms=4
	((g > 64)) && vms=16
	mib=$((g * 1024 / vms)) pts=$((1600 * g / 16))
	mem=${maxmem:-10G}
	[[ -z $maxmem ]] && ((g > 64)) && mem=$((g * 88 / 1024))G
	return 0
}
if [[ -n $estimate ]]; then
	shape "$estimate"
	mkdir -p "$out/estimate"
	t=$out/estimate/large-tree-g$estimate-n1.ksmb
	[[ -e $t && ! $ksmsim -nt $t ]] ||
		step "$ksmsim" gen large-tree --vms "$vms" --mem-mib "$mib" --seed 1 --pages-to-scan "$pts" -o "$t"
	# the most pages mapped at once: what the model holds a page for
	mapped=$("$ksmsim" trace stat "$t" | awk '$1 == "pages" && $2 == "mapped" { print $5 }')
	rc=0
	echo "+ ksmsim run --trace $t --max-memory ${maxmem:-10G} (the study's options)" >&2
	nice -n 19 "$ksmsim" run --quiet --trace "$t" --hash xxhash --smart-scan 0 --pages-to-scan "$pts" \
		--sleep-millisecs 200 --ideal-interval-ms 600000 --max-memory "${maxmem:-10G}" \
		2>"$out/estimate/err" >/dev/null || rc=$?
	{
		echo "size_gib $estimate"
		echo "pages_mapped $mapped"
		if ((rc == 0)); then
			echo "fits ${maxmem:-10G}"
		else
			# the line without the folder this machine kept the trace in
			echo "refused $(sed "s|$out/estimate/||" "$out/estimate/err")"
		fi
	} >"$res/estimate-$estimate.txt"
	cat "$res/estimate-$estimate.txt"
	exit 0
fi
if [[ -n $probe ]]; then
	g=${probe%%:*} dur=${probe#*:}
	((g >= 1 && dur > 0)) || die "--probe $probe: at least 1 GiB and some seconds"
	shape "$g"
	mkdir -p "$out/probe"
	t=$out/probe/large-tree-g$g-d$dur.ksmb
	step "$ksmsim" gen large-tree --vms "$vms" --mem-mib "$mib" --seed 1 --pages-to-scan "$pts" \
		--duration-s "$dur" -o "$t"
	step nice -n 19 /usr/bin/time -f '%e %U %S %M' -o "$out/probe/time" "$ksmsim" run --quiet \
		--trace "$t" --hash xxhash --smart-scan 0 --pages-to-scan "$pts" --sleep-millisecs 200 \
		--ideal-interval-ms 600000 --max-memory "$mem" --summary-csv "$out/probe/summary.csv"
	read -r wall user sys rss <"$out/probe/time"
	row=$(awk -F, -v g="$g" -v d="$dur" -v w="$wall" -v c="$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" \
		-v r="$rss" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
		{ printf "%s,%s,xxhash,%s,%s,%s,%s,%.1f\n", g, d, $k["full_scans"], $k["pages_scanned"], w, c, r / 1024 }' \
		"$out/probe/summary.csv")
	[[ -e $res/probe.csv ]] || echo "size_gib,duration_s,hash,full_scans,pages_scanned,wall_s,cpu_s,max_rss_mib" >"$res/probe.csv"
	grep -v "^$g,$dur,xxhash," "$res/probe.csv" >"$res/probe.csv.tmp" || true
	echo "$row" >>"$res/probe.csv.tmp"
	mv "$res/probe.csv.tmp" "$res/probe.csv"
	echo "large-tree.sh: probe $row" >&2
	exit 0
fi
IFS=, read -r -a szl <<<"$sizes"
for g in "${szl[@]}"; do
	((g >= 1)) || die "--sizes: $g: at least 1 GiB"
	shape "$g"
	o=$out/g$g
	mkdir -p "$o/traces"
	# cells made by an older binary are stale: start this size over
	if ((!only)) && [[ -e $o/cells.tsv && $ksmsim -nt $o/cells.tsv ]]; then
		rm -rf "$o/cells" "$o/sweep.csv" "$o/cells.tsv"
	fi
	traces=()
	IFS=, read -r -a sl <<<"${seeds_for[$g]:-$seeds}"
	for s in "${sl[@]}"; do
		t=$o/traces/$workload-g$g-n$s.ksmb
		if ((!only)) && [[ ! -e $t || $ksmsim -nt $t ]]; then
			step "$ksmsim" gen "$workload" --vms "$vms" --mem-mib "$mib" --seed "$s" \
				--pages-to-scan "$pts" -o "$t"
		fi
		traces+=(--trace "$t")
	done
	((only)) || step nice -n "$niceness" "$here/sweep.sh" "${traces[@]}" --hash "$hashes" --pages-to-scan "$pts" \
		--sleep-millisecs 200 --knob smart_scan=0 \
		--run-args "--ideal-interval-ms 600000 --max-memory $mem$batch" --jobs "$jobs" \
		--ksmsim "$here/timed-ksmsim.sh" --out "$o" "${sweep_args[@]}" || true
done
# every size with runs done goes into the tables: a sweep cut short (a
# deadline, a time limit) by the cells it finished, which summary.csv's
# n column shows
parts=()
for g in "${szl[@]}"; do
	o=$out/g$g
	if [[ -e $o/sweep.csv ]]; then
		parts+=("$o/sweep.csv")
	elif compgen -G "$o/cells/*.csv" >/dev/null; then
		"$here/sweep.sh" --merge --out "$o" 2>/dev/null || true
		[[ -e $o/sweep.partial.csv ]] && parts+=("$o/sweep.partial.csv")
	fi
done
kept=()
((keep)) && [[ -e $res/runs.csv ]] && kept=(--keep "$res/runs.csv")
((${#parts[@]} + ${#kept[@]})) || die "no run done yet (rerun to resume)"
step python3 "$here/summarise.py" large-tree --times "$out/times.tsv" "${kept[@]}" "${parts[@]}" \
	-o "$res/summary.csv" --runs "$res/runs.csv"
if command -v gnuplot >/dev/null; then
	step "$here/plot_large_tree.sh" "$res/summary.csv" "$res" "$workload"
else
	echo "large-tree.sh: no gnuplot: figures not remade" >&2
fi
