#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Regenerates analysis/results/fixed-seed/ (RESULTS=DIR writes it
# elsewhere): the fixed-seed attack of results/README.md, section 7.
#   pairs.csv        `collide false-positive --changes colliding-pair`, one
#                    2^20-try sweep per hash, one process per hash on one
#                    thread, with its CPU time (user + system)
#   first_pair.csv   tries to the first pair (`--trials 1`), seeds 1-40,
#                    jhash2 and xxhash
#   cost64.csv       a 2^22-try sweep of xxh64, xxh3 and jhash2: CPU time a
#                    try and peak RSS (the table included)
#   adversarial.csv  `gen checksum-adversarial --hash H` (each 32-bit hash)
#                    replayed under every hash but sha1/sha256 and none:
#                    false positives and CoW at the end
# The counts depend only on the seeds; the CPU times are this machine's
# (each file's first lines name the CPU, `lscpu`). About 2 min of CPU.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
res=${RESULTS:-$here/results}/fixed-seed
. "$here/steps.sh" fixed_seed.sh
mkdir -p "$res"
res=$(cd "$res" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here/.."

cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)
head_lines() {
	echo "# $1"
	echo "# measured $(date -u +%Y-%m-%d) on ${cpu:-an unknown CPU}, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), niced"
}
# CPU seconds (user + system) of CMD..., its output to $tmp/out; sets $cpu_s and $rss_kib
timed() {
	/usr/bin/time -f '%U %S %M' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err"
	read -r u s rss_kib <"$tmp/time"
	cpu_s=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
}
fp=(nice -n 19 "$ksmsim" collide false-positive --changes colliding-pair --threads 1)
h32="jhash2 crc32c crc32 xxhash xxh32"

# 1. one 2^20-try sweep per hash
{
	head_lines "collide false-positive --changes colliding-pair --threads 1 --hashes H (budget 2^20, seed 1); cpu_s of one process"
	echo "hash,bits,budget,pairs,tries_per_pair,rate,cpu_s"
	for h in $h32 xxh64 xxh3; do
		echo "+ fp --hashes $h" >&2
		timed "${fp[@]}" --hashes "$h" -o "$tmp/fp.csv"
		row=$(awk -F, -v h="$h" '$1 == h { print $2 "," $5 "," $7 }' "$tmp/fp.csv")
		tpp=$(sed -n "s/^ *$h *[0-9]* bits: [0-9]* pairs* in [0-9]* tries (\([0-9]*\) tries per pair)/\1/p" "$tmp/out")
		IFS=, read -r bits pairs rate <<<"$row"
		echo "$h,$bits,1048576,$pairs,${tpp:-},$rate,$cpu_s"
	done
} >"$tmp/pairs.csv"
mv "$tmp/pairs.csv" "$res/pairs.csv"

# 2. the first pair, 40 seeds
{
	head_lines "collide false-positive --changes colliding-pair --trials 1 --seed N: tries to the first pair"
	echo "hash,seed,tries"
	for h in jhash2 xxhash; do
		for seed in $(seq 1 40); do
			"${fp[@]}" --hashes "$h" --trials 1 --seed "$seed" -o "$tmp/fp.csv" >"$tmp/out" 2>/dev/null
			tries=$(sed -n "s/^ *$h *[0-9]* bits: 1 pair in \([0-9]*\) tries.*/\1/p" "$tmp/out")
			[[ -n $tries ]] || { echo "fixed_seed.sh: no pair for $h seed $seed" >&2; exit 1; }
			echo "$h,$seed,$tries"
		done
	done
} >"$tmp/first_pair.csv"
mv "$tmp/first_pair.csv" "$res/first_pair.csv"
echo "fixed_seed.sh: first pairs done" >&2

# 3. what a try costs at 64 bits
{
	head_lines "collide false-positive --changes colliding-pair --threads 1 --budget 4194304 --hashes H; one process per hash"
	echo "hash,bits,budget,pairs,cpu_s,us_per_try,max_rss_mib"
	for h in xxh64 xxh3 jhash2; do
		echo "+ fp --hashes $h --budget 4194304" >&2
		timed "${fp[@]}" --hashes "$h" --budget 4194304 -o "$tmp/fp.csv"
		IFS=, read -r bits pairs <<<"$(awk -F, -v h="$h" '$1 == h { print $2 "," $5 }' "$tmp/fp.csv")"
		awk -v h="$h" -v b="$bits" -v p="$pairs" -v c="$cpu_s" -v r="$rss_kib" \
			'BEGIN { printf "%s,%s,4194304,%s,%s,%.3f,%.0f\n", h, b, p, c, c * 1e6 / 4194304, r / 1024 }'
	done
} >"$tmp/cost64.csv"
mv "$tmp/cost64.csv" "$res/cost64.csv"

# 4. the attack inside the model
{
	head_lines "ksmsim gen checksum-adversarial --hash T --seed 1; ksmsim run --trace . --hash H --summary-csv"
	echo "trace_hash,hash,false_positives,cow_ksm,unstable_changed_after_insert"
	for t in $h32; do
		step nice -n 19 "$ksmsim" gen checksum-adversarial --hash "$t" --seed 1 -o "$tmp/ca.ksmt" >&2
		for h in $h32 xxh64 xxh3; do
			nice -n 19 "$ksmsim" run --trace "$tmp/ca.ksmt" --hash "$h" --summary-csv "$tmp/s.csv" >/dev/null
			python3 - "$tmp/s.csv" "$t" "$h" <<-'EOF'
				import csv, sys
				r = next(csv.DictReader(open(sys.argv[1])))
				print(",".join([sys.argv[2], sys.argv[3]] + [r[c] for c in
				      ("false_positives", "cow_ksm", "unstable_changed_after_insert")]))
			EOF
		done
	done
} >"$tmp/adversarial.csv"
mv "$tmp/adversarial.csv" "$res/adversarial.csv"
echo "fixed_seed.sh: done in $(since "$t0") s" >&2
