#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Boots N identical qemu guests from the image of build-image.sh and records
# them into one trace, one mm per guest (vm1..vmN):
#
#   record-guests.sh [-n N] [-m MIB] [-t minimal|full] [-w WORKLOAD]
#                    [-s SECONDS] [-a ARRAY_LEN] [-r REPS] [-i INTERVAL_MS]
#                    [-H HOLD_SECONDS] [-x MAX_SECONDS] [-c bytes|digest]
#                    [-o TRACE]
#
# Each guest is its own 'ksmsim record --as-vm vmI --find auto' of one
# qemu-system-x86_64 (-machine mem-merge=on, no network, its own copy of the
# initramfs and, for the full tier, its own qcow2 overlay of the root image);
# all start together and the per-guest traces are merged with
# 'ksmsim trace merge'. The guest's serial console is read on the host and
# every 'KSMSIM-PHASE LABEL' line becomes a mark 'vmI-LABEL' at its host
# time (relative to that guest's recorder start).
#
# -s: idle's length, fio's runtime per job, remount's wait after each
# remount; -a: numpy's array length; -r: remount's read-only/read-write
# cycles (default 5; the minimal tier, each guest its own scratch ext4 of
# SCRATCH_MB MiB, default 256, made by the host's mkfs.ext4 -b 4096: its
# metadata_csum superblock is the page of section 9's false positive);
# -H: each guest waits that long after its 'end' before it powers off.
# -c: the recorder's --content (default bytes: each distinct page's 4096
# bytes, which the merge and a replay keep for the whole read, in memory
# up to a quarter of --max-memory and the rest in $TMPDIR, so 4 guests
# building zlib, 2.5 M distinct pages, merge and replay on a 24 GiB
# machine; digest: 16 bytes a page, a trace a fifteenth the size that
# replays in seconds, at the price of the checksum false positives, which
# a digest trace cannot show).
# Defaults: 2 guests x 256 MiB, minimal tier, workload boot, 100 ms
# interval, 600 s cap, trace $OUT/guests-N-WORKLOAD.ksmb (OUT default
# /tmp/ksmsim-vm). KSMSIM: the binary (default build/cli/ksmsim of this
# checkout). ACCEL=tcg|kvm forces the accelerator. KEEP=1 keeps the
# per-guest traces and serial logs (their folder is printed).
# Ends with one line: guests, accel, size, wall time, pages written, trace size.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
KSMSIM=${KSMSIM:-$top/build/cli/ksmsim}
OUT=${OUT:-/tmp/ksmsim-vm}
CACHE=${KSMSIM_VM_CACHE:-$here/cache}
export KSMSIM_VM_CACHE=$CACHE

die() { echo "record-guests.sh: $*" >&2; exit 2; }
usage() { awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0" >&2; exit 2; }

n=2 mib=256 tier=minimal wl=boot secs=10 alen=2000000 reps=5 hold=0 interval=100 max=600 trace= content=bytes
while getopts n:m:t:w:s:a:r:H:i:x:c:o:h opt; do
	case $opt in
	n) n=$OPTARG ;; m) mib=$OPTARG ;; t) tier=$OPTARG ;; w) wl=$OPTARG ;;
	s) secs=$OPTARG ;; a) alen=$OPTARG ;; r) reps=$OPTARG ;; H) hold=$OPTARG ;; i) interval=$OPTARG ;;
	x) max=$OPTARG ;; c) content=$OPTARG ;; o) trace=$OPTARG ;; *) usage ;;
	esac
done
for v in "$n" "$mib" "$secs" "$alen" "$reps" "$interval" "$max" "${SCRATCH_MB:-256}"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die "bad number '$v'"
done
[[ $hold =~ ^[0-9]+$ ]] || die "bad number '$hold'"
case $content in bytes|digest) ;; *) die "unknown content form '$content' (bytes or digest)" ;; esac
case $tier in minimal|full) ;; *) die "unknown tier '$tier' (minimal or full)" ;; esac
case $wl in
boot|idle|tmpfs|random) ;;
remount)
	[ "$tier" = minimal ] || die "workload 'remount' needs -t minimal (its disk is /dev/vda)"
	command -v mkfs.ext4 >/dev/null || die "mkfs.ext4 missing (apt-get install -y e2fsprogs)" ;;
build|fio|numpy) [ "$tier" = full ] || die "workload '$wl' needs -t full" ;;
*) die "unknown workload '$wl' (boot idle tmpfs random remount build fio numpy)" ;;
esac
[ "$(id -u)" = 0 ] || die "run as root (ksmsim record reads the guests' memory)"
[ -x "$KSMSIM" ] || die "no ksmsim at $KSMSIM (build it, or set KSMSIM)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (apt-get install -y qemu-system-x86)"
[ "$tier" = minimal ] || command -v qemu-img >/dev/null || die "qemu-img missing (apt-get install -y qemu-utils)"
mkdir -p "$OUT"
trace=${trace:-$OUT/guests-$n-$wl.ksmb}

# KVM where it works, else TCG (accel.sh)
. "$here/accel.sh"
pick_accel
echo "record-guests: accel $accel ($why)"

"$here/build-image.sh" "$tier" >&2
kver=$(cat "$CACHE/minimal/kernel-version" 2>/dev/null) || die "the image is not in $CACHE"
kernel=$CACHE/kernel-$kver/vmlinuz
initrd=$CACHE/minimal/initrd.img
if [ ! -e "$kernel" ] || [ ! -e "$initrd" ]; then die "the image is not in $CACHE"; fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksmsim-vm.XXXXXX")
pids=()
# On an early exit: SIGTERM to each recorder, which ends its capture and
# passes the signal on to its qemu; then wait for them (and the stampers).
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -n "${KEEP:-}" ]; then echo "record-guests: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# host time (us) -> stamped lines of the serial console
stamp() {
	local l
	while IFS= read -r l; do printf '%s %s\n' "${EPOCHREALTIME/./}" "${l%$'\r'}"; done
}

append="console=ttyS0 quiet panic=1 no_timer_check ksmsim.workload=$wl ksmsim.seconds=$secs ksmsim.n=$alen ksmsim.reps=$reps ksmsim.hold=$hold"
start=$EPOCHREALTIME
for i in $(seq 1 "$n"); do
	cp "$initrd" "$tmp/initrd$i.img"
	disk=()
	if [ "$tier" = full ]; then
		qemu-img create -q -f qcow2 -b "$CACHE/full/root.img" -F raw "$tmp/vm$i.qcow2"
		disk=(-drive "file=$tmp/vm$i.qcow2,format=qcow2,if=virtio")
		guest_append="$append root=/dev/vda"
	elif [ "$wl" = remount ]; then
		mkfs.ext4 -q -F -b 4096 "$tmp/scratch$i.img" "${SCRATCH_MB:-256}M" >/dev/null || die "mkfs.ext4 failed"
		disk=(-drive "file=$tmp/scratch$i.img,format=raw,if=virtio")
		guest_append=$append
	else
		guest_append=$append
	fi
	echo "${EPOCHREALTIME/./}" > "$tmp/vm$i.t0"
	mkfifo "$tmp/vm$i.fifo"
	stamp < "$tmp/vm$i.fifo" > "$tmp/vm$i.serial" &
	nice -n 10 "$KSMSIM" record --as-vm "vm$i" --find auto --quiet --mark-every 1000000 \
		--content "$content" --interval-ms "$interval" --max-seconds "$max" -o "$tmp/vm$i.ksmb" -- \
		qemu-system-x86_64 -machine mem-merge=on -accel "$accel" -m "$mib" -smp 1 \
		-display none -serial stdio -monitor none -no-reboot -nic none \
		-kernel "$kernel" -initrd "$tmp/initrd$i.img" "${disk[@]}" \
		-append "$guest_append" < /dev/null > "$tmp/vm$i.fifo" 2> "$tmp/vm$i.record" &
	pids+=($!)
done
fail=0
for i in $(seq 1 "$n"); do
	wait "${pids[$((i - 1))]}" || fail=1
done
pids=()
wait # the stampers, at the end of their consoles
wall=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
for i in $(seq 1 "$n"); do
	sed 's/^/  /' "$tmp/vm$i.record" | grep -E 'exited|page writes|detector' >&2 || true
	[ -s "$tmp/vm$i.ksmb" ] || { cat "$tmp/vm$i.record" >&2; die "guest vm$i: no trace"; }
	grep -q 'KSMSIM-PHASE end' "$tmp/vm$i.serial" || {
		tail -n 20 "$tmp/vm$i.serial" >&2
		die "guest vm$i did not reach KSMSIM-PHASE end (serial log above)"
	}
done
[ $fail = 0 ] || die "ksmsim record failed"

# Phase markers -> marks, in time order, in a trace of marks only.
{
	echo "ksmtrace 1"
	for i in $(seq 1 "$n"); do
		awk -F '[ \t\r]+' -v t0="$(cat "$tmp/vm$i.t0")" -v vm="vm$i" \
			'{ for (k = 2; k < NF; k++) if ($k == "KSMSIM-PHASE") {
				l = $(k + 1); gsub(/[^A-Za-z0-9_.-]/, "", l); t = $1 - t0
				if (l != "") print (t < 0 ? 0 : t), "mark", vm "-" l
				break } }' \
			"$tmp/vm$i.serial"
	done | sort -n -s -k 1,1
} > "$tmp/marks.ksmt"
merge=()
for i in $(seq 1 "$n"); do merge+=("$tmp/vm$i.ksmb"); done
# a merge that fails (memory) keeps the guests' traces: they took minutes
"$KSMSIM" trace merge "${merge[@]}" "$tmp/marks.ksmt" "$trace" || { KEEP=1; die "trace merge failed"; }

stat=$("$KSMSIM" trace stat "$trace")
written=$(sed -n 's/^pages written *//p' <<< "$stat")
mms=$(sed -n 's/^mms *\([0-9]*\) spawned.*/\1/p' <<< "$stat")
size=$(stat -c %s "$trace")
echo "record-guests: marks: $(grep -c mark "$tmp/marks.ksmt") phase marks ($(awk 'NR > 1 { printf "%s%s@%.2fs", s, $3, $1 / 1e6; s = " " }' "$tmp/marks.ksmt"))"
printf 'record-guests: guests=%s mms=%s accel=%s mem=%sMiB tier=%s workload=%s wall=%ss pages_written=%s trace=%s (%.1f MiB)\n' \
	"$n" "$mms" "$accel" "$mib" "$tier" "$wl" "$wall" "$written" "$trace" "$(awk -v s="$size" 'BEGIN { print s / 1048576 }')"
