#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Regenerates every table and plot in analysis/results/ (RESULTS=DIR writes
# them elsewhere). Each step echoes its command and then its run time, and
# the last line the total: see analysis/README.md for the times measured.
# Every figure is a function of the seeds below, except the checksum
# benchmark (this machine's speed).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
res=${RESULTS:-$here/results}
. "$here/steps.sh" regenerate.sh
export KSMSIM=$ksmsim
mkdir -p "$res/collide" "$res/plots"
c="$res/collide"

# 1. birthday: random pages (16 varied bytes), counter pages, fully random pages
step "$ksmsim" collide birthday --seed 1 -o "$c/birthday.csv" --curve-csv "$c/birthday_curve.csv" \
	>"$c/birthday.txt"
step "$ksmsim" collide birthday --seed 2 --pages counter --hashes jhash2,crc32c,crc32,xxhash \
	--trials 20 -o "$c/birthday_counter.csv" >"$c/birthday_counter.txt"
step "$ksmsim" collide birthday --seed 3 --full-random --hashes jhash2,crc32c,crc32,xxhash \
	--trials 300 -o "$c/birthday_full.csv" >"$c/birthday_full.txt"
# 2. per-change false positives, full width and cut to 16 bits (to see rates at all)
step "$ksmsim" collide false-positive --seed 1 -o "$c/false_positive.csv" >"$c/false_positive.txt"
step "$ksmsim" collide false-positive --seed 1 --bits 16 -o "$c/false_positive_16bit.csv" \
	>"$c/false_positive_16bit.txt"
# 3. inside KSM: 4 guests x 100000 pages, unstable tree > 1 GiB
step "$ksmsim" collide ksm --seed 1 -o "$c/ksm.csv" --run-csv "$c/ksm_runs.csv" >"$c/ksm.txt"
# 3b. the same on the workload generators' traces: CRC-invisible changes,
# and number-crunching's big unstable tree (scanned faster so it fills)
mkdir -p "$here/out/traces"
# relative to the checkout, so the tables do not name this machine's folders
cd "$here/.."
t="analysis/out/traces/crc-adversarial-s1-n1.ksmt"
[[ -e $t ]] || step "$ksmsim" gen crc-adversarial --seed 1 -o "$t"
step "$ksmsim" collide ksm --trace "$t" -o "$c/ksm_crc_adversarial.csv" >"$c/ksm_crc_adversarial.txt"
t="analysis/out/traces/number-crunching-s0.2-d30-n1.ksmt"
[[ -e $t ]] || step "$ksmsim" gen number-crunching --scale 0.2 --duration-s 30 --seed 1 -o "$t"
step "$ksmsim" collide ksm --trace "$t" --hashes jhash2,crc32c,xxhash -o "$c/ksm_number_crunching.csv" \
	-- --pages-to-scan 4000 --sleep-millisecs 20 >"$c/ksm_number_crunching.txt"
# the same three traces over generator seeds (seed 1's rows read from the
# tables above): collide/ksm_seeds.csv, section 5's intervals
step "$here/ksm_seeds.sh" --seeds 5
# 4. the 2017 tables at the experiment's size (reproduce_2017.sh runs
# afresh unless given --reuse). sweep.sh resumes from the cells it finds,
# which would keep figures from an older model: start it clean (the
# generated traces are kept, as they depend only on their seeds)
rm -rf "$here/out/sweep-2017/cells" "$here/out/sweep-2017/sweep.csv"
step "$here/reproduce_2017.sh" --out "$res/2017" >/dev/null
# 5. a small sweep on the 2017 kernel-build workload
step "$here/sweep.sh" --workload kernel-build --scale 0.0625 --seed 1 \
	--hash jhash2,crc32c,xxhash --pages-to-scan 100,1600 --sleep-millisecs 20,200 \
	--run-args "--no-ideal --batch-time" --out "$here/out/sweep-2017"
mkdir -p "$res/sweep"
cp "$here/out/sweep-2017/sweep.csv" "$res/sweep/sweep.csv"
# 6. checksum cost on this machine (small cold buffer: minutes, not hours),
# 5 separate processes for a spread (costs-spread.csv beside costs.csv);
# and the model beside Titovets' 2017 htop figures (2017/ksmd-cpu-htop.csv)
step "$here/costs_spread.py" --ksmsim "$ksmsim" --runs 5 --reps 3 --cold-mib 256 --out "$res"
step "$here/ksmd_cpu_2017.py" --ksmsim "$ksmsim" --prices "$res/cpu/checksum-prices.csv" \
	--table "$here/../bench/tables/costs-amd-epyc.csv" --out "$res/2017/ksmd-cpu-htop.csv"

# 7. plots, from the CSVs above (analysis/plot_results.sh: titles, the
# CPU named on the costs, the old PNGs removed first)
step "$here/plot_results.sh" "$res"
echo "regenerate.sh: done in $(since "$t0") s; see $res" >&2
