#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Regenerates analysis/results/policies/ (RESULTS=DIR writes it elsewhere):
# `ksmsim advise` (every checksum with kernel and classified, no-gate,
# dirty-bit and partial-hash once) on generated workloads, and on the
# captured traces of workloads/real/ where they have been recorded
# (REAL=DIR, default analysis/out/real: fio.ksmb, numpy.ksmb; recording
# needs root, see workloads/real/README.md). Each step echoes its command
# and then its run time; the last line is the total. The traces go to
# analysis/out/traces/ (not committed) and are kept: each depends only on
# its seed. Every figure is a function of the traces and the built-in cost
# table, so a rerun gives the same bytes.
#
# --seeds N (1 to 100, default 5) replays the four generated workloads with
# generator seeds 1..N: seed 1 writes NAME.csv and NAME.txt as before (all
# 21 rows), the others seeds/NAME-nS.csv and .txt with the 11 rows the page
# quotes over seeds (SEED_ROWS below: the rows left out cost more than a row
# kept and save the same, so they are never on the frontier nor the pick),
# and seeds.csv holds every seed's rows (trace and seed first), which
# plot_policies.sh draws as means with their min-max. --jobs N (1 to 64,
# default: the CPUs online) is advise's -j. --keep keeps every table
# already there (a stopped run resumes); without it all are made afresh.
# usage: policies.sh [--seeds N] [--jobs N] [--keep]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
seeds=5 jobs= keep=0
while (($#)); do
	case $1 in
	--keep) keep=1; shift ;;
	--seeds | --jobs)
		(($# >= 2)) || { echo "policies.sh: $1 wants a count" >&2; exit 2; }
		printf -v "${1#--}" %s "$2"
		shift 2
		;;
	--seeds=* | --jobs=*) o=${1%%=*}; printf -v "${o#--}" %s "${1#*=}"; shift ;;
	*) echo "policies.sh: unknown option '$1' (usage: policies.sh [--seeds N] [--jobs N] [--keep])" >&2; exit 2 ;;
	esac
done
if ! [[ $seeds =~ ^[1-9][0-9]*$ ]] || ((seeds > 100)); then
	echo "policies.sh: --seeds wants a count from 1 to 100, not '$seeds'" >&2
	exit 2
fi
if [[ -n $jobs ]] && { ! [[ $jobs =~ ^[1-9][0-9]*$ ]] || ((jobs > 64)); }; then
	echo "policies.sh: --jobs wants a count from 1 to 64, not '$jobs'" >&2
	exit 2
fi
res=${RESULTS:-$here/results}/policies
real=${REAL:-$here/out/real}
. "$here/steps.sh" policies.sh
mkdir -p "$res/seeds" "$here/out/traces"
res=$(cd "$res" && pwd)
real=$(cd "$(dirname "$real")" && pwd)/$(basename "$real")
# relative to the checkout, so nothing written names this machine's folders
cd "$here/.."

# CMD... >FILE, but FILE appears only whole (the shell's > would truncate it at once)
trap 'rm -f "$res"/*.tmp.$$ "$res"/seeds/*.tmp.$$' EXIT
to() {
	local out=$1
	shift
	if "$@" >"$out.tmp.$$"; then
		mv "$out.tmp.$$" "$out"
	else
		local rc=$?
		rm -f "$out.tmp.$$"
		return $rc
	fi
}

# OUT TRACE [OPTIONS]: the table into OUT.txt, the CSV into OUT.csv (with
# --no-ideal: the oracle's walk at every 1 s sample costs about 15 times
# the run, and the page quotes no missed merges from these tables); the
# figures are plot_policies.sh's, over the seeds (the recorded traces,
# real-*, get none: at the kernel's default knobs almost nothing merges in
# them, NumPy saves 0 pages under every checksum, so a frontier of them
# shows nothing the table does not)
advise() {
	local out=$1 trace=$2
	shift 2
	if ((keep)) && [[ -s $out.csv && -s $out.txt ]]; then
		echo "policies.sh: kept $out.csv" >&2
		return 0
	fi
	step to "$out.txt" nice -n 10 "$ksmsim" advise "$trace" --quiet --no-ideal \
		${jobs:+-j "$jobs"} -o "$out.csv" "$@"
}

# 1. generated workloads at a tenth of the 2017 size (4 guests x 410 MiB,
# 180 s), and crc-adversarial at its own (2 x 256 MiB, 120 s), each for
# generator seeds 1..N (seed by seed, so a stopped run has every trace)
names=(kernel-build-s0.1 iozone-s0.1 number-crunching-s0.1 crc-adversarial)
# today's kernel, the cheapest checksum (xxh3, not in the kernel), crc32c and
# jhash2; classified with xxhash and xxh3; the three policies with no checksum
SEED_ROWS=(--policies kernel,classified,no-gate,dirty-bit,partial-hash --hashes xxhash,xxh3,crc32c,jhash2)
for ((s = 1; s <= seeds; s++)); do
	for name in "${names[@]}"; do
		if [[ $name == crc-adversarial ]]; then
			t=analysis/out/traces/crc-adversarial-s1-n$s.ksmt
			[[ -e $t ]] || step "$ksmsim" gen crc-adversarial --seed "$s" -o "$t"
		else
			t=analysis/out/traces/${name%-s0.1}-s0.1-n$s.ksmt
			[[ -e $t ]] || step "$ksmsim" gen "${name%-s0.1}" --scale 0.1 --seed "$s" -o "$t"
		fi
		if ((s == 1)); then
			advise "$res/$name" "$t"
		else
			advise "$res/seeds/$name-n$s" "$t" "${SEED_ROWS[@]}"
		fi
	done
done
# every seed's rows in one CSV, trace and seed first
{
	sed -n '1s/^/trace,seed,/p' "$res/${names[0]}.csv"
	for name in "${names[@]}"; do
		sed -n "2,\$s/^/$name,1,/p" "$res/$name.csv"
		for ((s = 2; s <= seeds; s++)); do
			sed -n "2,\$s/^/$name,$s,/p" "$res/seeds/$name-n$s.csv"
		done
	done
} >"$res/seeds.csv.tmp.$$"
mv "$res/seeds.csv.tmp.$$" "$res/seeds.csv"
if command -v gnuplot >/dev/null; then
	for name in "${names[@]}"; do
		step "$here/plot_policies.sh" "$res/seeds.csv" "$name" "$res/$name.png"
	done
fi

# 1b. what dirty-bit's cost rests on: the clear and TLB flush of a set bit,
# 3100 ns built in; 1 ns (next to free: 0 means the built-in figure), 1 us,
# and the 16 us an IPI to a busy vCPU costs
advise "$res/kernel-build-s0.1-dirty-flush" analysis/out/traces/kernel-build-s0.1-n1.ksmt \
	--hashes xxhash,crc32c \
	--policies kernel,dirty-bit:flush_ns=1,dirty-bit:flush_ns=1000,dirty-bit,dirty-bit:flush_ns=16000
# its figure: CPU against the flush cost, the break-even marked (in place of
# advise's frontier plot, which has one pages-saved value for every row)
if command -v gnuplot >/dev/null; then
	step "$here/plot_dirty_flush.sh" "$res/kernel-build-s0.1-dirty-flush.csv" \
		"$res/kernel-build-s0.1-dirty-flush.png"
fi

# 2. captured programs, where recorded
for r in fio numpy; do
	if [[ -e $real/$r.ksmb ]]; then
		advise "$res/real-$r" "$real/$r.ksmb"
	else
		echo "policies.sh: no $real/$r.ksmb (record it: sudo OUT=$real" \
			"workloads/real/$r.sh); skipped" >&2
	fi
done
echo "policies.sh: done in $(since "$t0") s" >&2
