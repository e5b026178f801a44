#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# How much slower a guest runs here than the host: the factor that puts a
# trace recorded from TCG guests on the clock of a KVM guest (which runs
# user code at near-native speed), for `ksmsim trace retime --factor`.
#
#   tcg-slowdown.sh [-r REPS] [-m MIB] [-o CSV]
#
# One guest of the minimal tier (build-image.sh) boots with the workload
# cpubench: it runs two fixed busybox commands REPS times each (sha256sum
# of 32 MiB, compute-bound; gzip -1 of 4 copies of busybox, mixed), with a
# KSMSIM-PHASE mark before and after every run. The host stamps each
# serial line with its own clock as it arrives, so a guest run's time is
# host wall time between its two marks (the guest's clock is not trusted).
# The host runs the very same busybox binary (taken from the initramfs) on
# the same inputs REPS times before the guest boots and REPS times after
# it powered off, in tmpfs, on one CPU like the guest's one vCPU.
# Both sides share this machine with whatever else runs: the ratio of
# medians is reported with its spread (the lowest and highest guest run
# over the host median), and the host runs before and after show how much
# the machine's load moved meanwhile.
#
# -o CSV keeps every run (side,bench,rep,seconds). Prints a summary: per
# benchmark the host and guest medians, the factor
# (guest/host) with its range, and the factor to pass to trace retime
# (1/slowdown, the geometric mean of the two benchmarks' factors).
# ACCEL=tcg|kvm forces the accelerator (default: tcg unless KVM works).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
CACHE=${KSMSIM_VM_CACHE:-$here/cache}
export KSMSIM_VM_CACHE=$CACHE

die() { echo "tcg-slowdown.sh: $*" >&2; exit 2; }
usage() { awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0" >&2; exit 2; }

reps=5 mib=256 csv=
while getopts r:m:o:h opt; do
	case $opt in
	r) reps=$OPTARG ;; m) mib=$OPTARG ;; o) csv=$OPTARG ;; *) usage ;;
	esac
done
[[ $reps =~ ^[1-9][0-9]?$ ]] || die "bad -r '$reps' (1 to 99)"
[[ $mib =~ ^[1-9][0-9]*$ ]] && [ "$mib" -ge 128 ] || die "bad -m '$mib' (at least 128)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (apt-get install -y qemu-system-x86)"
command -v cpio >/dev/null || die "cpio missing (apt-get install -y cpio)"
[ -z "$csv" ] || [ ! -d "$csv" ] || die "-o '$csv' is a directory"

accel=${ACCEL:-}
if [ -z "$accel" ]; then
	accel=tcg
	if grep -qwE 'vmx|svm' /proc/cpuinfo && { exec 9<>/dev/kvm; } 2>/dev/null; then
		exec 9>&-
		accel=kvm
	fi
fi

"$here/build-image.sh" minimal >&2
kver=$(cat "$CACHE/minimal/kernel-version") || die "the image is not in $CACHE"
kernel=$CACHE/kernel-$kver/vmlinuz
initrd=$CACHE/minimal/initrd.img
[ -e "$kernel" ] && [ -e "$initrd" ] || die "the image is not in $CACHE"

tmp=$(mktemp -d /dev/shm/ksmsim-slowdown.XXXXXX)
qpid=
cleanup() {
	[ -z "$qpid" ] || { kill -TERM "$qpid" 2>/dev/null || true; wait "$qpid" 2>/dev/null || true; }
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# the guest's busybox, so both sides run the same code
(cd "$tmp" && gzip -dc "$initrd" | cpio -i --quiet --to-stdout bin/busybox > busybox)
chmod 755 "$tmp/busybox"
bb=$tmp/busybox
dd if=/dev/zero of="$tmp/bench" bs=64k count=512 2>/dev/null
cat "$bb" "$bb" "$bb" "$bb" > "$tmp/gzin"
cpu=$(( $(nproc) - 1 ))

# host: REPS runs of each, pinned to one CPU; seconds per run
host_runs() {	# PHASE
	local i t0 t1
	for i in $(seq 1 "$reps"); do
		t0=$EPOCHREALTIME
		taskset -c "$cpu" "$bb" sha256sum "$tmp/bench" > /dev/null
		t1=$EPOCHREALTIME
		echo "host-$1,sha256,$i,$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')"
		t0=$EPOCHREALTIME
		taskset -c "$cpu" "$bb" gzip -1 -c "$tmp/gzin" > /dev/null
		t1=$EPOCHREALTIME
		echo "host-$1,gzip,$i,$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')"
	done
}

stamp() {
	local l
	while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "${l%$'\r'}"; done
}

echo "side,bench,rep,seconds" > "$tmp/runs.csv"
host_runs before >> "$tmp/runs.csv"
mkfifo "$tmp/serial.fifo"
stamp < "$tmp/serial.fifo" > "$tmp/serial" &
spid=$!
taskset -c "$cpu" qemu-system-x86_64 -accel "$accel" -m "$mib" -smp 1 -display none \
	-serial stdio -monitor none -no-reboot -nic none -kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 quiet panic=1 no_timer_check ksmsim.workload=cpubench ksmsim.reps=$reps" \
	< /dev/null > "$tmp/serial.fifo" 2> "$tmp/qemu.err" &
qpid=$!
wait "$qpid" || die "qemu failed: $(head -c 300 "$tmp/qemu.err")"
qpid=
wait "$spid" || true
grep -q 'KSMSIM-PHASE end' "$tmp/serial" || die "the guest did not finish its benchmark (serial: $(tail -c 300 "$tmp/serial" | tr '\n' ' '))"
awk '$2 == "KSMSIM-PHASE" {
	n = split($3, p, "-")
	if (n != 3) next
	if (p[3] == "start") t[p[1] "," p[2]] = $1
	else if (p[3] == "end" && (p[1] "," p[2]) in t)
		printf "guest,%s,%s,%.6f\n", p[1], p[2], $1 - t[p[1] "," p[2]]
}' "$tmp/serial" >> "$tmp/runs.csv"
host_runs after >> "$tmp/runs.csv"
[ "$(grep -c '^guest,' "$tmp/runs.csv")" = $((2 * reps)) ] || die "expected $((2 * reps)) guest runs, got $(grep -c '^guest,' "$tmp/runs.csv")"

if [ -n "$csv" ]; then
	cp "$tmp/runs.csv" "$csv.tmp.$$" && mv "$csv.tmp.$$" "$csv"
fi
model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "tcg-slowdown: accel=$accel reps=$reps cpu='$model' qemu=$(qemu-system-x86_64 --version | head -n 1 | awk '{print $4}') guest_kernel=$kver"
python3 - "$tmp/runs.csv" <<'PY'
import csv, math, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def times(side, bench):
    return [float(r['seconds']) for r in rows if r['side'].startswith(side) and r['bench'] == bench]
logs = []
print(f"{'bench':8} {'host med s':>11} {'host before/after':>19} {'guest med s':>12} {'slowdown':>9} {'range':>15}")
for b in ('sha256', 'gzip'):
    h = times('host', b); g = times('guest', b)
    hb = statistics.median(times('host-before', b)); ha = statistics.median(times('host-after', b))
    hm, gm = statistics.median(h), statistics.median(g)
    f = gm / hm
    logs.append(math.log(f))
    print(f"{b:8} {hm:11.4f} {hb:9.4f}/{ha:<9.4f} {gm:12.4f} {f:9.2f} {min(g)/hm:7.2f}-{max(g)/hm:<7.2f}")
s = math.exp(sum(logs) / len(logs))
print(f"slowdown (geometric mean of the two): {s:.2f}; replay a TCG trace on a KVM clock with: ksmsim trace retime --factor {1/s:.4f} IN OUT")
PY
