#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Replays traces on the live KSM of Debian's 6.1 kernel inside one QEMU
# guest: a second live oracle beside the host's (`ksmsim live`).
#
#   replay-6.1.sh [-o OUTDIR] [-m MIB] [-c CPUS] [-s SLEEP_MS] [-t SETTLE_S] [-x SECONDS] TRACE...
#
# The guest boots the kernel of build-image.sh's minimal tier (Debian's
# linux-image-6.1.0-*-amd64) with an initramfs of busybox, this build's
# ksmsim (the binary and the shared libraries ldd names: the guest has no
# network and no packages) and replay-init.sh as /init, plus a second,
# uncompressed cpio archive appended to it with the traces (in the guest's
# /cases, so that the marks' header names cases/NAME.ksmt as record.sh's do). The guest
# replays every trace with `ksmsim live`, one after the other, resetting
# KSM between them, and sends the results back over its second serial
# line; the host writes, for each TRACE (named by its file name less
# .ksmt/.ksmb):
#
#   OUTDIR/NAME.csv      the marks (`ksmsim live --marks-csv`)
#   OUTDIR/NAME.mm.csv   /proc/PID/ksm_stat at each mark (--mm-stats-csv;
#                        on 6.1: ksm_rmap_items, and ksm_merging_pages
#                        from its own /proc file)
#   OUTDIR/NAME.err      ksmsim live's standard error
#
# and OUTDIR/guest.txt (the guest's kernel, CPUs, memory, THP mode, KSM
# files), OUTDIR/console.log (its serial console). One line per trace:
# 'replay-6.1: NAME ok|FAIL seconds', then a summary line. Exit 0 when
# every trace replayed, 1 when one failed (its .err's last line is
# printed), 2 on bad usage or a guest that did not finish.
#
# -o OUTDIR   default /tmp/ksmsim-vm/replay-6.1
# -m MIB      guest memory (default 1024; below 512 the kernel turns THP
#             off at boot, and a trace that advises hugepage fails)
# -c CPUS     guest vCPUs (default 2, as the host the expected files of
#             tests/conformance/expected were recorded on: `ksmsim live`
#             pins the trace processes to one and itself to the others)
# -s SLEEP_MS ksmsim live --settle-sleep (default 200): ksmd's least sleep in
#             a settle, the time the replayer has to see a pass end and stop
#             ksmd before its next batch. At the host's 10 ms, an emulated
#             vCPU on a busy host is often late, ksmd runs part of another
#             pass, and the marks differ from run to run.
# -t SETTLE_S ksmsim live --settle-timeout (default 600: TCG is slow)
# -x SECONDS  the whole guest's time limit (default 1800)
#
# The guest: -machine mem-merge=off (the host's KSM never sees its RAM, so
# a replay here leaves the host's counters alone), no network, the
# kernel's THP mode set to madvise (transparent_hugepage=madvise, as on
# the host; Debian's default is always), `nice -n 10`. ACCEL=tcg|kvm
# forces the accelerator (default: KVM where /dev/kvm opens and the CPU has
# vmx/svm, else TCG). KSMSIM (default build/cli/ksmsim of this checkout),
# KSMSIM_VM_CACHE (the image cache, build-image.sh). The replayer's
# initramfs is cached by the checksum of ksmsim, its libraries and
# replay-init.sh.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
CACHE=${KSMSIM_VM_CACHE:-$here/cache}
KSMSIM=${KSMSIM:-$top/build/cli/ksmsim}
out=/tmp/ksmsim-vm/replay-6.1 mib=1024 cpus=2 sleep=200 settle=600 limit=1800

die() { echo "replay-6.1.sh: $*" >&2; exit 2; }
while getopts o:m:c:s:t:x:h opt; do
	case $opt in
	o) out=$OPTARG ;;
	m) mib=$OPTARG ;;
	c) cpus=$OPTARG ;;
	s) sleep=$OPTARG ;;
	t) settle=$OPTARG ;;
	x) limit=$OPTARG ;;
	*) sed -n '3,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || die "no trace given (usage: replay-6.1.sh [-o OUTDIR] [-m MIB] [-c CPUS] TRACE...)"
for v in "$mib" "$cpus" "$sleep" "$settle" "$limit"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die "'$v' is not a positive whole number"
done
declare -A seen
for t in "$@"; do
	[ -r "$t" ] || die "$t: cannot read"
	n=$(basename "$t"); n=${n%.ksmt}; n=${n%.ksmb}
	[[ $n =~ ^[A-Za-z0-9_.+-]+$ ]] || die "$t: the name '$n' has characters other than A-Z a-z 0-9 _ . + -"
	[ -z "${seen[$n]:-}" ] || die "$t: two traces named '$n'"
	case $(basename "$t") in list|args) die "$t: 'list' and 'args' are the guest's own file names" ;; esac
	seen[$n]=1
done
[ -x "$KSMSIM" ] || die "no ksmsim at $KSMSIM (build it, or set KSMSIM)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (apt-get install -y qemu-system-x86)"
command -v cpio >/dev/null || die "cpio missing (apt-get install -y cpio)"

# KVM where it works, else TCG (accel.sh)
. "$here/accel.sh"
pick_accel
echo "replay-6.1: accel $accel ($why)"

# The kernel (and busybox) of the minimal tier, cached by build-image.sh.
if [ ! -e "$CACHE/minimal/kernel-version" ] ||
	[ ! -e "$CACHE/kernel-$(cat "$CACHE/minimal/kernel-version")/vmlinuz" ]; then
	"$here/build-image.sh" minimal >&2 || die "build-image.sh minimal failed"
fi
kver=$(cat "$CACHE/minimal/kernel-version")
kernel=$CACHE/kernel-$kver/vmlinuz
busybox_deb=$(find "$CACHE/debs" -maxdepth 1 -name 'busybox-static_*.deb' | sort | tail -n 1)
[ -n "$busybox_deb" ] || die "no busybox-static in $CACHE/debs (run build-image.sh minimal)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksmsim-replay61.XXXXXX")
qpid=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	[ -z "$qpid" ] || kill "$qpid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The replayer's part: cached by what goes into it.
bin=$(realpath "$KSMSIM")
libs=$(ldd "$bin" | awk '/=> \// { print $3 } /^\t\/.*ld-linux/ { print $1 }' | sort -u)
# shellcheck disable=SC2086 # libs: one path a word
key=$(cat "$bin" $libs "$here/replay-init.sh" "$busybox_deb" | sha256sum | cut -c 1-16)
base=$CACHE/replay-6.1/base-$key.cpio.gz
if [ ! -e "$base" ]; then
	r=$tmp/root
	mkdir -p "$r"/{bin,dev,proc,sys,tmp,run,cases,opt/ksmsim}
	mkdir -p "$tmp/bb" && dpkg-deb -x "$busybox_deb" "$tmp/bb"
	cp "$tmp/bb/bin/busybox" "$r/bin/busybox"
	ln -s busybox "$r/bin/sh"
	cp "$bin" "$r/opt/ksmsim/ksmsim"
	for l in $libs; do
		mkdir -p "$r$(dirname "$l")"
		cp -L "$l" "$r$l"
	done
	# ld.so looks in /lib/x86_64-linux-gnu on Debian; /lib64 holds the loader
	cp "$here/replay-init.sh" "$r/init"
	chmod 755 "$r/init"
	mkdir -p "$CACHE/replay-6.1"
	rm -f "$CACHE"/replay-6.1/base-*.cpio.gz
	(cd "$r" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -6n) > "$base.tmp"
	mv "$base.tmp" "$base"
	rm -rf "$r" "$tmp/bb"
fi

# The traces: a second cpio archive, appended (the kernel unpacks both).
t=$tmp/traces
mkdir -p "$t/cases"
names=()
for f in "$@"; do
	b=$(basename "$f"); n=${b%.ksmt}; n=${n%.ksmb}
	cp "$f" "$t/cases/$b"
	echo "$b $n" >> "$t/cases/list"
	names+=("$n")
done
echo "--settle-timeout $settle --settle-sleep $sleep" > "$t/cases/args"
(cd "$t" && find cases | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) > "$tmp/traces.cpio"
# the second archive must start 4-byte aligned: pad the first with zeros,
# which the kernel skips between archives
size=$(stat -c %s "$base")
{ cat "$base"; head -c $(((512 - size % 512) % 512)) /dev/zero; cat "$tmp/traces.cpio"; } > "$tmp/initrd.img"

mkdir -p "$out"
start=$(date +%s.%N)
nice -n 10 timeout "$limit" qemu-system-x86_64 -machine mem-merge=off -accel "$accel" \
	-m "$mib" -smp "$cpus" -display none -monitor none -no-reboot -nic none \
	-kernel "$kernel" -initrd "$tmp/initrd.img" \
	-append "console=ttyS0 panic=1 quiet no_timer_check transparent_hugepage=madvise" \
	-serial "file:$out/console.log" -serial "file:$tmp/results" </dev/null &
qpid=$!
wait "$qpid" && qrc=0 || qrc=$?
qpid=
wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')

# The frames: files, statuses, the guest line.
tr -d '\r' < "$tmp/results" | awk -v out="$out" '
	/^@@KSMSIM FILE / {
		kind = $4
		f = out "/" $3 (kind == "csv" ? ".csv" : kind == "mm" ? ".mm.csv" : ".err")
		printf "" > f; infile = 1; next
	}
	/^@@KSMSIM ENDFILE/ { close(f); infile = 0; next }
	infile { print > f; next }
	/^@@KSMSIM GUEST / { sub(/^@@KSMSIM GUEST /, ""); print > (out "/guest.txt"); next }
	/^@@KSMSIM (STATUS|DONE)/ { sub(/^@@KSMSIM /, ""); print }
' > "$tmp/status"
[ -s "$out/guest.txt" ] && echo "replay-6.1: guest $(cat "$out/guest.txt")"
# boot: the guest's uptime when its init began (guest clock, which TCG keeps near the host's)

ok=0 failed=0 status=0
for n in "${names[@]}"; do
	line=$(awk -v n="$n" '$1 == "STATUS" && $2 == n' "$tmp/status")
	if [ -z "$line" ]; then
		echo "replay-6.1: $n FAIL: the guest never reported it"
		failed=$((failed + 1)); status=1
		continue
	fi
	read -r _ _ rc secs knobs <<< "$line"
	if [ "$rc" = 0 ]; then
		echo "replay-6.1: $n ok ${secs}s"
		ok=$((ok + 1))
	else
		echo "replay-6.1: $n FAIL ${secs}s: $(tail -n 1 "$out/$n.err" 2>/dev/null)"
		rm -f "$out/$n.csv" "$out/$n.mm.csv"
		failed=$((failed + 1)); status=1
	fi
	[ "$knobs" = same ] || echo "replay-6.1: $n left knobs changed ($knobs): written back"
done
grep -q '^DONE' "$tmp/status" || { echo "replay-6.1: the guest did not finish (qemu exit $qrc; $out/console.log)"; status=2; }
echo "replay-6.1: traces=${#names[@]} ok=$ok failed=$failed accel=$accel cpus=$cpus mem=${mib}MiB settle_sleep=${sleep}ms kernel=$kver wall=${wall}s out=$out"
exit $status
