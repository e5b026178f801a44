#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Every figure of analysis/results/plots/ from the CSVs already there (no
# study is run): regenerate.sh's last step, and alone to redraw after a
# change to the plotting. The old PNGs go first, so no figure from an
# earlier layout lingers. Each title says what was run and, where it draws
# a cost, on which CPU (CPU=..., default the cost table's: AMD EPYC).
# usage: analysis/plot_results.sh [RESULTS]   (default analysis/results)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
res=${1:-$here/results}
cpu=${CPU:-AMD EPYC (VM, 2 vCPUs)}
table=${COST_TABLE:-$here/../bench/tables/costs-amd-epyc.csv}
c="$res/collide" p="$res/plots"
mkdir -p "$p"
rm -f "$p"/*.png
plot() { "$here/plot.sh" -o "$p" --cpu "$cpu" "$@"; }

# the birthday curves with 2017's two crc32 points (51% by 78,000 pages,
# 99% by 200,000); birthday.csv gives the trials, so the formula its band
plot --mark "2017, crc32:78000:0.51" --mark "2017, crc32:200000:0.99" \
	"$c/birthday_curve.csv" "$c/birthday.csv"
plot "$c/false_positive.csv"
plot --title "cut to 16 bits" "$c/false_positive_16bit.csv"
pk=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$c["peak_pages_unshared"] > m { m = $c["peak_pages_unshared"] } END { printf "%.1f", m * 4096 / 2^30 }' "$c/ksm.csv")
plot --title "collide ksm, own trace: 4 guests x 100,000 pages, 30 s, unstable tree up to $pk GiB" "$c/ksm.csv"
plot --title "collide ksm, crc-adversarial trace (2 x 256 MiB), seed 1" "$c/ksm_crc_adversarial.csv"
plot --title "collide ksm, number-crunching at scale 0.2, 30 s" "$c/ksm_number_crunching.csv"
plot --title "kernel-build at 1/16 of 2017's size, seed 1, modelled" "$res/sweep/sweep.csv"
# the checksum's price, every source (the model's, as ksmd computes it,
# the userspace libraries) in one figure
"$here/plot_checksum_prices.sh" "$res/costs.csv" "$res/cpu/checksum-prices.csv" "$table" "$cpu" \
	"$p/costs-checksum-cost.png"

# the 2017 time series, one figure per workload, a line per hash; plotted
# in a scratch folder and prefixed, so the PNGs say they are the 2017 runs
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for w in kernel-build iozone; do
	mkdir -p "$scratch/$w"
	# 2017's published means beside the model's series, each with its
	# value in the key: jhash2's and crc32c's lie within 1.4% of each
	# other, so their two lines draw as one
	ref=()
	while IFS=, read -r rw rh rf rv; do
		[[ $rw == "$w" && $rf == avg_* ]] && ref+=(--ref "${rf#avg_}:2017 mean, $rh, $rv pages:$rv")
	done <"$res/2017/published.csv"
	"$here/plot.sh" -o "$scratch/$w" --title "$w, seed 1, pages_to_scan 1600, sleep 200 ms" \
		"${ref[@]}" "$res/2017/series/$w"-*.csv >/dev/null
	for f in "$scratch/$w"/*.png; do mv "$f" "$p/2017-$(basename "$f")"; echo "$p/2017-$(basename "$f")"; done
done
plot --title "2017 workloads at 2017's size, seed 1, modelled" "$res/2017/tables.csv"
