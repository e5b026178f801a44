#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# slurm.sh KSMSIM SRCDIR: analysis/sweep.sh --slurm on a real Slurm. Starts
# a one-node Slurm (Debian's slurmctld, slurmd and munge; installed here
# when missing) from a slurm.conf in a temporary folder, queues a small
# sweep through OUT/submit.sh, waits for it and compares the merged CSV
# with a local run of the same grid. Also: a MaxArraySize of 5 splits 8
# cells into two array jobs, --cells-per-task 3 makes them 3 tasks, a
# resubmission after losing a cell queues one task, merge.sh with a cell
# missing keeps the complete sweep.csv, a partition's MaxTime and a
# second sweep into one OUT are refused, and OUT holds a space and a %.
# The daemons run as children of this script and are stopped by their
# PIDs on every exit; an install here starts no service and leaves none
# enabled that was not.
# Exit 0 pass, 1 fail, 77 skip (not root, or Slurm cannot be installed).
set -euo pipefail
ksmsim=$1 src=$2
sweep=$src/analysis/sweep.sh
skip() { echo "skip: $*"; exit 77; }
fail() {
	echo "FAIL: $*" >&2
	[[ -z ${tmp:-} ]] || tail -n 5 "$tmp"/log/*.log >&2 2>/dev/null || true
	exit 1
}

((EUID == 0)) || skip "not root: cannot start Slurm's daemons"
daemons='munged|slurmctld|slurmd|slurmstepd|slurmscriptd'
policy="" daemon_pids=() tmp=""
cleanup() {
	local p i
	# the newest first: slurmd, slurmctld, then munged, which they need
	for ((i = ${#daemon_pids[@]} - 1; i >= 0; i--)); do
		p=${daemon_pids[$i]}
		kill -TERM "$p" 2>/dev/null || continue
		for ((n = 0; n < 100; n++)); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	[[ -z $policy ]] || rm -f "$policy"
	[[ -z $tmp ]] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

need=(munged slurmctld slurmd sbatch squeue scontrol scancel sinfo)
missing=0
for c in "${need[@]}"; do command -v "$c" >/dev/null || missing=1; done
if ((missing)); then
	command -v apt-get >/dev/null || skip "no Slurm here and no apt-get to install it"
	# The packages' scripts would start (and enable) their services: a
	# policy-rc.d that refuses, for the install only, unless one is there.
	before=$(pgrep -x -d' ' "$daemons" || true)
	units=(munge.service slurmctld.service slurmd.service) was_enabled=()
	if command -v systemctl >/dev/null; then
		for u in "${units[@]}"; do
			systemctl --quiet is-enabled "$u" 2>/dev/null && was_enabled+=("$u")
		done
	fi
	if [[ ! -e /usr/sbin/policy-rc.d ]]; then
		policy=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\n# slurm.sh (ksmsim tests): no service starts during its install\nexit 101\n' >"$policy"
		chmod 755 "$policy"
	fi
	echo "installing slurmctld slurmd slurm-client munge"
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends \
		slurmctld slurmd slurm-client munge >"${TMPDIR:-/tmp}/ksmsim-slurm-apt.$$.log" 2>&1 ||
		{ tail -3 "${TMPDIR:-/tmp}/ksmsim-slurm-apt.$$.log"; rm -f "${TMPDIR:-/tmp}/ksmsim-slurm-apt.$$.log"; skip "apt-get install failed"; }
	rm -f "${TMPDIR:-/tmp}/ksmsim-slurm-apt.$$.log"
	[[ -z $policy ]] || { rm -f "$policy"; policy=""; }
	# the packages enable their services for the next boot: not any that
	# was not enabled before
	if command -v systemctl >/dev/null; then
		for u in "${units[@]}"; do
			[[ " ${was_enabled[*]} " == *" $u "* ]] || systemctl --quiet disable "$u" >/dev/null 2>&1 || true
		done
	fi
	# a daemon started anyway (no policy-rc.d honoured): stopped by its PID
	for p in $(pgrep -x "$daemons" || true); do
		[[ " $before " == *" $p "* ]] || kill -TERM "$p" 2>/dev/null || true
	done
	for c in "${need[@]}"; do command -v "$c" >/dev/null || skip "$c missing after the install"; done
fi
command -v setpriv >/dev/null || skip "no setpriv (util-linux) to run munged as munge"
id munge >/dev/null 2>&1 || skip "no munge user"
[[ -r /etc/munge/munge.key ]] || skip "no /etc/munge/munge.key (the munge package makes it)"

tmp=$(mktemp -d)
# munged and the jobs' users walk into it
chmod 755 "$tmp"
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/log"
chown munge:munge "$tmp/munge"
host=$(hostname -s 2>/dev/null || uname -n)
host=${host%%.*}
# two free ports
for ((i = 0; i < 50; i++)); do
	port=$((20000 + RANDOM % 30000))
	(: </dev/tcp/127.0.0.1/$port) 2>/dev/null || (: </dev/tcp/127.0.0.1/$((port + 1))) 2>/dev/null || break
done
cat >"$tmp/slurm.conf" <<EOF
ClusterName=ksmsimtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.socket
CredType=cred/munge
SlurmUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MaxArraySize=5
MinJobAge=10
ReturnToService=2
NodeName=ksmsimnode NodeAddr=127.0.0.1 CPUs=2 RealMemory=8192 State=UNKNOWN
PartitionName=main Nodes=ksmsimnode Default=YES MaxTime=INFINITE State=UP
PartitionName=short Nodes=ksmsimnode MaxTime=00:10:00 State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf

setpriv --reuid=munge --regid=munge --init-groups munged -F --socket="$tmp/munge/munge.socket" \
	--key-file=/etc/munge/munge.key --log-file="$tmp/log/munged.log" \
	--pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" 2>/dev/null &
daemon_pids+=($!)
for ((i = 0; i < 100; i++)); do
	[[ -S $tmp/munge/munge.socket ]] && break
	sleep 0.1
done
[[ -S $tmp/munge/munge.socket ]] || fail "munged did not start"
slurmctld -D -f "$tmp/slurm.conf" >"$tmp/log/slurmctld.out" 2>&1 &
daemon_pids+=($!)
slurmd -D -f "$tmp/slurm.conf" -N ksmsimnode >"$tmp/log/slurmd.out" 2>&1 &
daemon_pids+=($!)
for ((i = 0; i < 300; i++)); do
	[[ $(sinfo -h -p main -o %T 2>/dev/null) == idle ]] && break
	sleep 0.1
done
[[ $(sinfo -h -p main -o %T 2>/dev/null) == idle ]] || fail "the node did not come up: $(sinfo 2>&1)"

# wait_jobs: until the queue is empty (this cluster runs only this test's jobs)
wait_jobs() {
	local i
	for ((i = 0; i < 600; i++)); do
		[[ -z $(squeue -h -o %i) ]] && return 0
		sleep 0.5
	done
	fail "jobs still queued after 300 s: $(squeue)"
}

# The grid: 2 traces x 2 hashes x 2 pages_to_scan = 8 cells.
cp "$src/traces/samples/default.ksmt" "$tmp/a.ksmt"
sed 's/fill guest2 0x10000 100 /fill guest2 0x10000 500 /' "$src/traces/samples/default.ksmt" >"$tmp/b.ksmt"
# shellcheck disable=SC2054  # the commas are in the values
grid=(--ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --trace "$tmp/b.ksmt" --hash xxhash,crc32c --pages-to-scan 100,1000)
"$sweep" "${grid[@]}" --out "$tmp/local" --jobs 2 2>/dev/null || fail "local sweep"
[[ $(wc -l <"$tmp/local/sweep.csv") -eq 9 ]] || fail "local sweep: $(cat "$tmp/local/sweep.csv")"

# 1. MaxArraySize 5 (scontrol's): indexes 1-4, so two array jobs; OUT with
# a space and a %; the job named after OUT
out="$tmp/o d%1"
"$sweep" "${grid[@]}" --out "$out" --slurm 2>"$tmp/err" || fail "--slurm: $(cat "$tmp/err")"
grep -qF '8 cells, 8 to run in 8 tasks (--array=1-4; --array=1-4 from cell group 5)' "$tmp/err" ||
	fail "plan: $(cat "$tmp/err")"
ids=$("$out/submit.sh" 2>"$tmp/err") || fail "submit.sh: $(cat "$tmp/err")"
[[ $(wc -l <<<"$ids") -eq 3 ]] || fail "want 2 array jobs and a merge job: $ids"
wait_jobs
cmp "$tmp/local/sweep.csv" "$out/sweep.csv" || fail "Slurm's sweep.csv differs from the local run's"
[[ $(find "$out/logs" -name 'o_d_1-*_*.out' | wc -l) -eq 8 ]] || fail "task logs: $(ls "$out/logs")"
grep -q ' rows in ' "$out/logs/o_d_1-merge-$(tail -1 <<<"$ids").out" || fail "merge job log"

# 2. a resubmission queues the missing cells alone: one task
rm "$out/cells/b_pages-to-scan1000_sleep-millisecs20_crc32c.csv"
"$sweep" "${grid[@]}" --out "$out" --slurm 2>"$tmp/err" || fail "--slurm again: $(cat "$tmp/err")"
grep -qF '8 cells, 1 to run in 1 tasks (--array=4 from cell group 5)' "$tmp/err" || fail "resubmission plan: $(cat "$tmp/err")"
ids=$("$out/submit.sh" 2>"$tmp/err") || fail "submit.sh again: $(cat "$tmp/err")"
[[ $(wc -l <<<"$ids") -eq 2 ]] || fail "want 1 array job and a merge job: $ids"
wait_jobs
[[ $(find "$out/logs" -name "o_d_1-$(head -1 <<<"$ids")_*.out" | wc -l) -eq 1 ]] ||
	fail "the resubmission ran $(ls "$out/logs")"
cmp "$tmp/local/sweep.csv" "$out/sweep.csv" || fail "resubmitted sweep.csv differs"

# 3. merge.sh with a cell missing: exit 1, sweep.csv kept, the rows done aside
rm "$out/cells/a_pages-to-scan100_sleep-millisecs20_xxhash.csv"
rc=0
"$out/merge.sh" 2>"$tmp/err" || rc=$?
[[ $rc -eq 1 ]] || fail "merge with a cell missing: exit $rc"
cmp "$tmp/local/sweep.csv" "$out/sweep.csv" || fail "a partial merge replaced sweep.csv"
[[ $(wc -l <"$out/sweep.partial.csv") -eq 8 ]] || fail "sweep.partial.csv: $(cat "$out/sweep.partial.csv")"
grep -q 'sweep.csv, an earlier complete merge, is kept' "$tmp/err" || fail "merge message: $(cat "$tmp/err")"

# 4. 3 cells a task: 3 tasks in one job
"$sweep" "${grid[@]}" --out "$tmp/per3" --cells-per-task 3 --submit >"$tmp/ids" 2>"$tmp/err" ||
	fail "--cells-per-task 3: $(cat "$tmp/err")"
grep -qF '8 cells, 8 to run in 3 tasks (--array=1-3)' "$tmp/err" || fail "per-task plan: $(cat "$tmp/err")"
wait_jobs
cmp "$tmp/local/sweep.csv" "$tmp/per3/sweep.csv" || fail "--cells-per-task 3: sweep.csv differs"
[[ $(find "$tmp/per3/logs" -name 'per3-*_*.out' | wc -l) -eq 3 ]] || fail "per-task logs: $(ls "$tmp/per3/logs")"

# 5. refused before anything is written: a time over the partition's
# MaxTime, memory no node has, another sweep into OUT, a file that is no trace
refused() { # PATTERN ARGS...
	local pat=$1 rc=0
	shift
	"$sweep" "$@" >/dev/null 2>"$tmp/err" || rc=$?
	[[ $rc -eq 2 ]] || fail "$*: exit $rc: $(cat "$tmp/err")"
	grep -q -- "$pat" "$tmp/err" || fail "$*: $(cat "$tmp/err")"
}
refused "over the MaxTime of partition short (00:10:00)" "${grid[@]}" --out "$tmp/t" --slurm --partition short
[[ ! -e $tmp/t ]] || fail "a refused sweep made its OUT"
"$sweep" "${grid[@]}" --out "$tmp/t" --slurm --partition short --slurm-time 5 2>/dev/null || fail "--slurm-time 5"
grep -qx '#SBATCH --partition=short' "$tmp/t/sweep.sbatch" || fail "partition line"
refused "sbatch --test-only refuses these resources" "${grid[@]}" --out "$tmp/m" --slurm --slurm-mem 100G
refused "holds another sweep" "${grid[@]}" --hash xxhash --out "$out" --slurm
printf 'not a trace\n' >"$tmp/junk.ksmt"
refused "not a trace ksmsim reads" --ksmsim "$ksmsim" --trace "$tmp/junk.ksmt" --out "$tmp/j" --slurm
[[ -z $(squeue -h -o %i) ]] || fail "a refused sweep queued jobs"
echo "ok slurm"
