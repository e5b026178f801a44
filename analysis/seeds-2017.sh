#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The 2017 experiment (kernel-build and iozone, 4 guests x 4 GiB, 1800 s,
# pages_to_scan 1600, sleep_millisecs 200, --batch-time, the oracle on)
# once per hash and generator seed, as one sweep.sh grid, so the
# differences between hashes carry an interval over seeds. Writes
# RESULTS/runs.csv (one row per run, sweep.sh's columns) and
# RESULTS/summary.csv (analysis/summarise.py 2017: means, 95% t intervals,
# each hash's difference from jhash2 paired by seed, beside 2017's).
#
# usage: analysis/seeds-2017.sh [--seeds 1,2,3,4,5] [--scale 1]
#        [--hashes jhash2,crc32c,xxhash] [--out DIR] [--results DIR]
#        [--jobs N] [--summarise-only] [-- SWEEP-OPTIONS (e.g. --slurm --partition P)]
# --summarise-only: no runs, the tables and figure from the runs done.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
seeds=1,2,3,4,5 scale=1 hashes=jhash2,crc32c,xxhash jobs=1
out=$here/out/seeds-2017 res=$here/results/2017/seeds
sweep_args=() only=0
die() { echo "seeds-2017.sh: $*" >&2; exit 2; }
while (($#)); do
	case $1 in
	--seeds) seeds=${2:?}; shift 2 ;;
	--scale) scale=${2:?}; shift 2 ;;
	--hashes) hashes=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--results) res=${2:?}; shift 2 ;;
	--jobs) jobs=${2:?}; shift 2 ;;
	--summarise-only) only=1; shift ;;
	--) shift; sweep_args=("$@"); break ;;
	-h | --help) awk 'NR > 2 && /^#/ {sub(/^# ?/, ""); print; next} NR > 2 {exit}' "$0"; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done
[[ $seeds =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--seeds $seeds: a comma list of numbers"
. "$here/steps.sh" seeds-2017.sh
mkdir -p "$out/traces" "$res"
out=$(cd "$out" && pwd)
# each run's wall and CPU time and peak RSS go to OUT/times.tsv
export KSMSIM_REAL=$ksmsim KSMSIM_TIMES=$out/times.tsv
# cells made by an older binary are stale: start over
if ((!only)) && [[ -e $out/cells.tsv && $ksmsim -nt $out/cells.tsv ]]; then
	rm -rf "$out/cells" "$out/sweep.csv" "$out/cells.tsv"
fi
traces=()
IFS=, read -r -a sl <<<"$seeds"
for w in kernel-build iozone; do
	for s in "${sl[@]}"; do
		t=$out/traces/$w-s$scale-n$s.ksmt
		# a trace is a function of the generator and its options: remade
		# when the binary is newer than it
		if ((!only)) && [[ ! -e $t || $ksmsim -nt $t ]]; then
			"$ksmsim" gen "$w" --scale "$scale" --seed "$s" -o "$t"
		fi
		traces+=(--trace "$t")
	done
done
((only)) || step "$here/sweep.sh" "${traces[@]}" --hash "$hashes" --pages-to-scan 1600 \
	--sleep-millisecs 200 --run-args "--batch-time" --jobs "$jobs" --ksmsim "$here/timed-ksmsim.sh" \
	--out "$out" "${sweep_args[@]}"
# all runs, or (a deadline, --slurm still running) those done: n says how many
src=$out/sweep.csv
if [[ ! -e $src ]]; then
	"$here/sweep.sh" --merge --out "$out" 2>/dev/null || true
	src=$out/sweep.partial.csv
	[[ -e $src ]] || { echo "seeds-2017.sh: no run done yet (rerun to resume)" >&2; exit 0; }
fi
cp "$src" "$res/runs.csv.tmp" && mv "$res/runs.csv.tmp" "$res/runs.csv"
step python3 "$here/summarise.py" 2017 "$res/runs.csv" --times "$out/times.tsv" \
	-o "$res/summary.csv"
if command -v gnuplot >/dev/null; then
	step "$here/plot_2017_seeds.sh" "$res/summary.csv" "$res"
fi
