#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Section 5's replicates: `ksmsim collide ksm` on its three traces (its own,
# `gen crc-adversarial`, `gen number-crunching --scale 0.2 --duration-s 30`
# scanned at 4000 pages / 20 ms) for generator seeds 1..N, one row per
# trace, seed and hash in results/collide/ksm_seeds.csv (RESULTS=DIR writes
# it elsewhere). Seed 1's rows are read from ksm.csv, ksm_crc_adversarial.csv
# and ksm_number_crunching.csv where they exist: regenerate.sh makes them
# with the same commands (and more hashes), so they are not run twice.
# The hashes are jhash2, crc32c and xxhash: in ksm.csv crc32 and xxh64 count
# what crc32c and xxhash count and differ only in modelled CPU.
# Each run is deterministic: the spread is the generators' content over
# seeds, not timing. Each step echoes its command and its run time.
# Each run's table is kept in analysis/out/ksm-seeds/ (not committed);
# --keep reuses those found there, so a stopped study resumes, and the rows
# of a trace and seed already in results/collide/ksm_seeds.csv (a clone has
# no cache: more seeds then run only the new ones).
# usage: ksm_seeds.sh [--seeds N] [--keep]   (N from 1 to 100, default 5)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
seeds=5 keep=0
while (($#)); do
	case $1 in
	--keep) keep=1; shift ;;
	--seeds)
		(($# >= 2)) || { echo "ksm_seeds.sh: --seeds wants a count" >&2; exit 2; }
		seeds=$2
		shift 2
		;;
	--seeds=*) seeds=${1#--seeds=}; shift ;;
	*) echo "ksm_seeds.sh: unknown option '$1' (usage: ksm_seeds.sh [--seeds N] [--keep])" >&2; exit 2 ;;
	esac
done
if ! [[ $seeds =~ ^[1-9][0-9]*$ ]] || ((seeds > 100)); then
	echo "ksm_seeds.sh: --seeds wants a count from 1 to 100, not '$seeds'" >&2
	exit 2
fi
res=${RESULTS:-$here/results}/collide
. "$here/steps.sh" ksm_seeds.sh
cache=$here/out/ksm-seeds
mkdir -p "$res" "$here/out/traces" "$cache"
res=$(cd "$res" && pwd)
hashes=jhash2,crc32c,xxhash
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; rm -f "$cache"/*.tmp.$$' EXIT
# relative to the checkout, so nothing written names this machine's folders
cd "$here/.."

# NAME SEED COMMAND...: COMMAND writes its table to the file named by the
# last argument; kept in the cache (whole), or reused from it with --keep
run() {
	local name=$1 seed=$2 out=$cache/$1-n$2.csv
	shift 2
	if ((keep)) && [[ -s $out ]]; then
		echo "ksm_seeds.sh: kept $out" >&2
	elif ((keep)) && [[ -s $res/ksm_seeds.csv ]] &&
		awk -F, -v n="$name" -v s="$seed" 'NR == 1 { print substr($0, index($0, ",seed,") + 6); next }
			$1 == n && $2 == s { print substr($0, length(n) + length(s) + 3); k++ }
			END { exit k == 0 }' "$res/ksm_seeds.csv" >"$out.tmp.$$"; then
		mv "$out.tmp.$$" "$out"
		echo "ksm_seeds.sh: kept $name seed $seed from $res/ksm_seeds.csv" >&2
	else
		step "$@" -o "$out.tmp.$$" >/dev/null
		mv "$out.tmp.$$" "$out"
	fi
	add "$name" "$seed" "$out"
}

# TRACE SEED CSV: CSV's rows, prefixed with the trace's name and the seed
add() {
	local name=$1 seed=$2 csv=$3
	[[ -s $tmp/all.csv ]] || sed -n '1s/^/trace,seed,/p' "$csv" >"$tmp/all.csv"
	sed -n "2,\$s/^/$name,$seed,/p" "$csv" >>"$tmp/all.csv"
}

# seed 1 from regenerate.sh's CSV (NAME CSV), its rows of these hashes only
seed1() {
	awk -F, -v h=",$hashes," 'NR == 1 || index(h, "," $1 ",")' "$2" >"$tmp/s1.csv"
	if [[ $(wc -l <"$tmp/s1.csv") -ne 4 ]]; then
		echo "ksm_seeds.sh: $2 lacks a row of $hashes (rerun regenerate.sh)" >&2
		exit 2
	fi
	echo "ksm_seeds.sh: seed 1 of $1 from $2" >&2
	add "$1" 1 "$tmp/s1.csv"
}

for ((s = 1; s <= seeds; s++)); do
	if ((s == 1)) && [[ -s $res/ksm.csv && -s $res/ksm_crc_adversarial.csv &&
		-s $res/ksm_number_crunching.csv ]]; then
		seed1 own "$res/ksm.csv"
		seed1 crc-adversarial "$res/ksm_crc_adversarial.csv"
		seed1 number-crunching "$res/ksm_number_crunching.csv"
		continue
	fi
	run own "$s" nice -n 10 "$ksmsim" collide ksm --seed "$s" --hashes "$hashes"
	t=analysis/out/traces/crc-adversarial-s1-n$s.ksmt
	[[ -e $t ]] || step nice -n 10 "$ksmsim" gen crc-adversarial --seed "$s" -o "$t"
	run crc-adversarial "$s" nice -n 10 "$ksmsim" collide ksm --trace "$t" --hashes "$hashes"
	t=analysis/out/traces/number-crunching-s0.2-d30-n$s.ksmt
	[[ -e $t ]] || step nice -n 10 "$ksmsim" gen number-crunching --scale 0.2 --duration-s 30 \
		--seed "$s" -o "$t"
	run number-crunching "$s" nice -n 10 "$ksmsim" collide ksm --trace "$t" --hashes "$hashes" \
		--pages-to-scan 4000 --sleep-millisecs 20
done
# whole or not at all
mv "$tmp/all.csv" "$res/ksm_seeds.csv"
echo "ksm_seeds.sh: $seeds seeds in $res/ksm_seeds.csv, done in $(since "$t0") s" >&2
