#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The 2017 experiment (kernel-build and iozone, 4 guests x 4 GiB, 1800 s,
# pages_to_scan 1600, sleep_millisecs 200, --batch-time, the oracle on)
# once per hash, generator seed and timing replicate, so the differences
# between hashes carry an interval over seeds and timings. Writes
# RESULTS/runs.csv (one row per run, sweep.sh's columns) and
# RESULTS/summary.csv (analysis/summarise.py 2017: means, 95% t intervals
# over every seed x timing run, each hash's difference from jhash2 paired
# by (seed, timing), beside 2017's).
#
# Timing replicate K (0 to N-1 of --timings N) replays the seed's trace
# with every record's time multiplied by 1 + K x 1e-5 (`ksmsim trace
# retime`): a write at second s comes K x 10 us x s later (K x 18 ms at
# the end of 1800 s), so ksmd, whose wakes do not move, meets the writes
# at another phase, while the workload's rates change by K x 0.001%.
# Seeds change contents, not timing; replicates change timing, not
# contents. K = 0 is the generated trace itself (today's runs, byte for
# byte); K >= 1 traces are named ...-tK.ksmt, and each timing is its own
# sweep.sh grid: OUT for K = 0, OUT/tK for K >= 1.
#
# usage: analysis/seeds-2017.sh [--seeds 1,2,3,4,5] [--timings 1] [--scale 1]
#        [--hashes jhash2,crc32c,xxhash] [--kernel 6.1|6.18] [--out DIR]
#        [--results DIR] [--jobs N] [--keep-runs] [--summarise-only]
#        [-- SWEEP-OPTIONS (e.g. --slurm --partition P)]
# --kernel 6.1: every run models Linux 6.1's ksmd (sweep.sh --kernel);
#   OUT and RESULTS default to out/seeds-2017-6.1 and results/2017/seeds-6.1.
# --keep-runs: a timing whose every run (trace, hash) is already a row of
#   RESULTS/runs.csv and which has no sweep output in OUT is not run again:
#   its rows are kept (runs made earlier, whose sweep output is gone).
# --summarise-only: no runs, the tables and figure from the runs done.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
seeds=1,2,3,4,5 scale=1 hashes=jhash2,crc32c,xxhash jobs=1 timings=1 kernel=
out= res=
sweep_args=() only=0 keep=0
die() { echo "seeds-2017.sh: $*" >&2; exit 2; }
while (($#)); do
	case $1 in
	--seeds) seeds=${2:?}; shift 2 ;;
	--timings) timings=${2:?}; shift 2 ;;
	--scale) scale=${2:?}; shift 2 ;;
	--hashes) hashes=${2:?}; shift 2 ;;
	--kernel) kernel=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--results) res=${2:?}; shift 2 ;;
	--jobs) jobs=${2:?}; shift 2 ;;
	--keep-runs) keep=1; shift ;;
	--summarise-only) only=1; shift ;;
	--) shift; sweep_args=("$@"); break ;;
	-h | --help) awk 'NR > 2 && /^#/ {sub(/^# ?/, ""); print; next} NR > 2 {exit}' "$0"; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
[[ $seeds =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--seeds $seeds: a comma list of numbers"
# at most 99: K x 1e-5 stays below 0.1% of the trace's time
[[ $timings =~ ^[1-9][0-9]?$ ]] || die "--timings $timings: a number of timing replicates, 1 to 99"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "--jobs $jobs: a number of runs at a time, 1 or more"
case $kernel in
'' | 6.18) suffix= ;;
6.1) suffix=-6.1 ;;
*) die "--kernel $kernel: 6.1 or 6.18" ;;
esac
[[ -n $out ]] || out=$here/out/seeds-2017$suffix
[[ -n $res ]] || res=$here/results/2017/seeds$suffix
[[ -z $kernel ]] || sweep_args=(--kernel "$kernel" "${sweep_args[@]}")
. "$here/steps.sh" seeds-2017.sh
mkdir -p "$out/traces" "$res"
out=$(cd "$out" && pwd)
# each run's wall and CPU time and peak RSS go to OUT/times.tsv
export KSMSIM_REAL=$ksmsim KSMSIM_TIMES=$out/times.tsv
IFS=, read -r -a sl <<<"$seeds"
IFS=, read -r -a hl <<<"$hashes"
# the sweep folder of timing K
tdir() { if (($1)); then echo "$out/t$1"; else echo "$out"; fi; }
# --keep-runs: is every run of timing K a row of RESULTS/runs.csv?
kept() {
	local k=$1 w s h name tk=
	[[ -e $res/runs.csv ]] || return 1
	(($1 == 0)) || tk=-t$1
	for w in kernel-build iozone; do for s in "${sl[@]}"; do for h in "${hl[@]}"; do
		name=traces/$w-s$scale-n$s$tk.ksmt
		grep -q "^$name,$h," "$res/runs.csv" || return 1
	done; done; done
}
swept=()
for ((k = 0; k < timings; k++)); do
	d=$(tdir "$k")
	if ((keep)) && [[ ! -e $d/cells.tsv ]] && kept "$k"; then
		echo "seeds-2017.sh: timing $k: every run is in $res/runs.csv, kept (--keep-runs)" >&2
		continue
	fi
	swept+=("$k")
	((only)) && continue
	mkdir -p "$d/traces"
	# cells made by an older binary are stale: start over
	if [[ -e $d/cells.tsv && $ksmsim -nt $d/cells.tsv ]]; then
		rm -rf "$d/cells" "$d/sweep.csv" "$d/cells.tsv"
	fi
	traces=()
	# K = 0 in today's order; a replicate runs iozone's seeds (a third of
	# kernel-build's CPU time) first, so a replicate cut short by a
	# deadline has both workloads' cheaper half done
	wls=(kernel-build iozone)
	((k == 0)) || wls=(iozone kernel-build)
	for w in "${wls[@]}"; do
		for s in "${sl[@]}"; do
			t0=$out/traces/$w-s$scale-n$s.ksmt
			# a trace is a function of the generator and its options: remade
			# when the binary is newer than it
			if [[ ! -e $t0 || $ksmsim -nt $t0 ]]; then
				"$ksmsim" gen "$w" --scale "$scale" --seed "$s" -o "$t0"
			fi
			t=$t0
			if ((k)); then
				t=$d/traces/$w-s$scale-n$s-t$k.ksmt
				if [[ ! -e $t || $t0 -nt $t ]]; then
					"$ksmsim" trace retime --factor "$(awk -v k="$k" 'BEGIN { printf "%.5f", 1 + k * 1e-5 }')" "$t0" "$t"
				fi
			fi
			traces+=(--trace "$t")
		done
	done
	step "$here/sweep.sh" "${traces[@]}" --hash "$hashes" --pages-to-scan 1600 \
		--sleep-millisecs 200 --run-args "--batch-time" --jobs "$jobs" --ksmsim "$here/timed-ksmsim.sh" \
		--out "$d" "${sweep_args[@]}"
done
# all runs, or (a deadline, --slurm still running) those done: n says how many
srcs=()
for k in "${swept[@]}"; do
	d=$(tdir "$k") src=$d/sweep.csv
	if [[ ! -e $src ]]; then
		[[ -e $d/cells.tsv ]] && { "$here/sweep.sh" --merge --out "$d" 2>/dev/null || true; }
		src=$d/sweep.partial.csv
		[[ -e $src ]] || { echo "seeds-2017.sh: timing $k: no run done yet (rerun to resume)" >&2; continue; }
	fi
	srcs+=("$src")
done
if ((${#srcs[@]} == 0)) && ! ((keep)) || [[ ${#srcs[@]} == 0 && ! -e $res/runs.csv ]]; then
	echo "seeds-2017.sh: no run done yet (rerun to resume)" >&2
	exit 0
fi
# the runs swept now, and (--keep-runs) the kept timings' rows of runs.csv
kopt=()
((keep)) && [[ -e $res/runs.csv ]] && kopt=(--keep "$res/runs.csv")
step python3 "$here/summarise.py" 2017-runs "${srcs[@]}" "${kopt[@]}" -o "$res/runs.csv"
step python3 "$here/summarise.py" 2017 "$res/runs.csv" --times "$out/times.tsv" -o "$res/summary.csv"
if command -v gnuplot >/dev/null; then
	step "$here/plot_2017_seeds.sh" "$res/summary.csv" "$res" "Linux ${kernel:-6.18}"
fi
