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
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
res=${RESULTS:-$here/results}/policies
real=${REAL:-$here/out/real}
. "$here/steps.sh" policies.sh
mkdir -p "$res" "$here/out/traces"
res=$(cd "$res" && pwd)
real=$(cd "$(dirname "$real")" && pwd)/$(basename "$real")
# relative to the checkout, so nothing written names this machine's folders
cd "$here/.."

# CMD... >FILE, but FILE appears only whole (the shell's > would truncate it at once)
trap 'rm -f "$res"/*.tmp.$$' EXIT
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

# NAME TRACE [OPTIONS]: the table into NAME.txt, the CSV and the plot beside
# it; the recorded traces (real-*) get no plot: at the kernel's default knobs
# almost nothing merges in them (NumPy saves 0 pages under every checksum),
# so a frontier of them shows nothing the table does not
advise() {
	local name=$1 trace=$2 plot=()
	shift 2
	[[ $name == real-* ]] || plot=(--plot "$res/$name.png")
	step to "$res/$name.txt" nice -n 10 "$ksmsim" advise "$trace" --quiet \
		-o "$res/$name.csv" "${plot[@]}" "$@"
}

# 1. generated workloads at a tenth of the 2017 size (4 guests x 410 MiB,
# 180 s), and crc-adversarial at its own (2 x 256 MiB, 120 s)
for w in kernel-build iozone number-crunching; do
	t=analysis/out/traces/$w-s0.1-n1.ksmt
	[[ -e $t ]] || step "$ksmsim" gen "$w" --scale 0.1 --seed 1 -o "$t"
	advise "$w-s0.1" "$t"
done
t=analysis/out/traces/crc-adversarial-s1-n1.ksmt
[[ -e $t ]] || step "$ksmsim" gen crc-adversarial --seed 1 -o "$t"
advise crc-adversarial "$t"

# 1b. what dirty-bit's cost rests on: the clear and TLB flush of a set bit,
# 3100 ns built in; 1 ns (next to free: 0 means the built-in figure), 1 us,
# and the 16 us an IPI to a busy vCPU costs
advise kernel-build-s0.1-dirty-flush analysis/out/traces/kernel-build-s0.1-n1.ksmt \
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
		advise "real-$r" "$real/$r.ksmb"
	else
		echo "policies.sh: no $real/$r.ksmb (record it: sudo OUT=$real" \
			"workloads/real/$r.sh); skipped" >&2
	fi
done
echo "policies.sh: done in $(since "$t0") s" >&2
