#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The speed target of `ksmsim tune` (issue 33): the default grid of 24
# settings over a 16 Mi-page (64 GiB) host within 15 minutes on a 2-core
# machine. The host: `ksmsim gen vm-clones --vms VMS --mem-mib 4096` (idle
# guests cloned from one image, 1800 s; 16 guests = 64 GiB), seed 1.
# `ksmsim tune TRACE --jobs JOBS` under /usr/bin/time: prints wall and CPU
# seconds and peak RSS (the largest worker's), against the target; with
# OLD-KSMSIM as well, the two builds alternate on the same trace (RUNS
# each) and their CSVs must be identical.
#
# usage: bench/tune_speed.sh KSMSIM [OLD-KSMSIM] [--vms N] [--jobs N] [--runs N]
# (--vms 4: 16 GiB, a quick look; the target is stated for 16. --vms 1 is
# the chain case: one guest's zeroed free pages, with no other guest's to
# spread over, make one stable_node chain of hundreds of full dups, which
# the kernel's stable_node_dup walks at every lookup. The model charges
# that walk's steps but finds the same dup from the chain's counts: one
# `ksmsim run` of that guest at 3000 / 20 ms took 17.6 s of CPU, against
# 190 s while the model walked (the two builds one after the other, nice
# 19, AMD EPYC with 2 shared vCPUs, load 3).)
# Exit 1 when a run fails or the two builds' CSVs differ; the figures are
# printed, never judged (the machine may be shared: read them with its load).
set -euo pipefail
new=${1:?usage: tune_speed.sh KSMSIM [OLD-KSMSIM] [--vms N] [--jobs N] [--runs N]}
shift
old=
if [[ $# -gt 0 && $1 != --* ]]; then old=$1; shift; fi
vms=16 jobs=2 runs=1
while (($#)); do
	case $1 in
	--vms) vms=${2:?}; shift 2 ;;
	--jobs) jobs=${2:?}; shift 2 ;;
	--runs) runs=${2:?}; shift 2 ;;
	*) echo "tune_speed.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
[[ $vms =~ ^[1-9][0-9]*$ && $jobs =~ ^[1-9][0-9]*$ && $runs =~ ^[1-9][0-9]*$ ]] ||
	{ echo "tune_speed.sh: --vms, --jobs and --runs take positive whole numbers" >&2; exit 2; }
for b in "$new" $old; do
	[[ -x $b ]] || { echo "tune_speed.sh: $b is not an executable" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trace=$tmp/vm-clones-$vms.ksmb
"$new" gen vm-clones --quiet --vms "$vms" --mem-mib 4096 --seed 1 -o "$trace"
echo "host: $vms guests x 4 GiB ($((vms * 4)) GiB, $((vms * 1048576)) pages), vm-clones seed 1, 1800 s"
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) online; load $(cut -d' ' -f1-3 /proc/loadavg)"
one() {	# one NAME BINARY RUN
	local name=$1 bin=$2 run=$3
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$bin" tune "$trace" --jobs "$jobs" --quiet \
		-o "$tmp/$name-$run.csv" >/dev/null
	read -r wall user sys rss <"$tmp/time"
	awk -v n="$name" -v r="$run" -v w="$wall" -v u="$user" -v s="$sys" -v m="$rss" 'BEGIN {
		printf "%-4s run %d: %7.1f s wall (%.1f min; target 15 min for 64 GiB), %7.1f s CPU, peak RSS %.0f MiB\n",
			n, r, w, w / 60, u + s, m / 1024 }'
}
for r in $(seq "$runs"); do
	[[ -n $old ]] && one old "$old" "$r"
	one new "$new" "$r"
done
if [[ -n $old ]]; then
	for r in $(seq "$runs"); do
		cmp -s "$tmp/old-$r.csv" "$tmp/new-$r.csv" ||
			{ echo "tune_speed.sh: the builds' CSVs differ (run $r)" >&2; exit 1; }
	done
	echo "the two builds' CSVs are identical"
fi
