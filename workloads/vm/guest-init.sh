#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The guest's init (POSIX sh: busybox in the initramfs, dash in the full
# tier's root). As /init of the initramfs it mounts the pseudo file
# systems, prints KSMSIM-PHASE markers on the console, runs the workload
# named by the kernel command line and powers the guest off (poweroff -f).
#
#   ksmsim.workload=NAME   boot (default), idle, tmpfs, random, cpubench,
#                          remount (needs an ext4 disk at /dev/vda, no
#                          root=), build, fio, numpy (the last three need
#                          root=)
#   ksmsim.seconds=N       idle's length, fio's runtime per job, remount's
#                          wait after each remount (default 10)
#   ksmsim.n=N             numpy's array length (default 2000000)
#   ksmsim.reps=N          cpubench's repetitions of each benchmark,
#                          remount's read-only/read-write cycles (default 5)
#   ksmsim.hold=N          seconds to wait after 'end' before powering off
#                          (default 0), so that all guests are still up
#   root=/dev/vda          the full tier: load virtio-blk and ext4, mount
#                          the disk and run the workload chrooted in it
#
# As /sbin/ksmsim-init in the full root it is called with '--run NAME'.
PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
export PATH

phase() { echo "KSMSIM-PHASE $1" > /dev/console; }

# The initramfs's virtio-blk and ext4 modules, then up to 10 s for disk $1.
disk() {
	while read -r m; do insmod "/lib/modules/$m" 2>/dev/null; done < /lib/modules/order
	i=0
	while [ ! -b "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -b "$1" ]
}

workload() {
	secs=$2
	case $1 in
	boot) ;;
	idle) sleep "$secs" ;;
	tmpfs) # the same 32 MiB in every guest (copies of busybox)
		i=0
		while [ $i -lt 16 ]; do
			dd if=/bin/busybox of=/tmp/same.$i bs=64k count=32 conv=sync 2>/dev/null
			i=$((i + 1))
		done ;;
	random) # 32 MiB distinct in every guest
		dd if=/dev/urandom of=/tmp/random bs=64k count=512 2>/dev/null ;;
	cpubench) # the same busybox commands the host times (tcg-slowdown.sh):
		# a phase mark before and after each run, timed on the host
		dd if=/dev/zero of=/tmp/bench bs=64k count=512 2>/dev/null
		cat /bin/busybox /bin/busybox /bin/busybox /bin/busybox > /tmp/gzin
		i=1
		while [ $i -le "$reps" ]; do
			phase "sha256-$i-start"; sha256sum /tmp/bench > /dev/null; phase "sha256-$i-end"
			phase "gzip-$i-start"; gzip -1 -c /tmp/gzin > /dev/null; phase "gzip-$i-end"
			i=$((i + 1))
		done
		rm -f /tmp/bench /tmp/gzin ;;
	remount) # ext4's superblock, followed by its own crc32c, is rewritten
		# in the page cache at each remount (analysis/results/README.md,
		# section 9): reps cycles of 1 MiB written and synced, remount
		# read-only, wait, remount read-write, wait; ends read-only
		disk /dev/vda && mkdir -p /mnt && mount -t ext4 /dev/vda /mnt || return 1
		i=1
		while [ $i -le "$reps" ]; do
			dd if=/dev/urandom of=/mnt/f.$i bs=64k count=16 2>/dev/null && sync || return 1
			phase "ro-$i"; mount -o remount,ro /mnt || return 1; sleep "$secs"
			[ $i = "$reps" ] && break
			phase "rw-$i"; mount -o remount,rw /mnt || return 1; sleep "$secs"
			i=$((i + 1))
		done ;;
	build)
		rm -rf /tmp/zlib && cp -a /opt/ksmsim/zlib /tmp/zlib && cd /tmp/zlib &&
			./configure >/dev/null && make -s -j1 >/dev/null && ./example >/dev/null ;;
	fio)
		cat > /tmp/ksmsim.fio <<JOB
[global]
filename=/var/tmp/fio.dat
size=64m
runtime=$secs
time_based
ioengine=psync
stonewall
[seq-write]
rw=write
bs=1m
[seq-read]
rw=read
bs=1m
[rand-write]
rw=randwrite
bs=4k
[rand-read]
rw=randread
bs=4k
JOB
		fio --eta=never --output=/dev/null /tmp/ksmsim.fio > /dev/null && rm -f /var/tmp/fio.dat ;;
	numpy) python3 /opt/ksmsim/numpy_vm.py "$3" ;;
	*) echo "ksmsim-init: unknown workload '$1'" > /dev/console; return 1 ;;
	esac
}

if [ "${1:-}" = --run ]; then
	workload "$2" "$3" "$4"
	exit $?
fi

[ -e /kernel-version ] && /bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
phase boot
wl=boot secs=10 n=2000000 reps=5 hold=0 root=
for w in $(cat /proc/cmdline); do
	case $w in
	ksmsim.workload=*) wl=${w#*=} ;;
	ksmsim.seconds=*) secs=${w#*=} ;;
	ksmsim.n=*) n=${w#*=} ;;
	ksmsim.reps=*) reps=${w#*=} ;;
	ksmsim.hold=*) hold=${w#*=} ;;
	root=*) root=${w#*=} ;;
	esac
done
ok=1
if [ -n "$root" ]; then
	if disk "$root" && mount -t ext4 "$root" /newroot; then
		mount -t proc proc /newroot/proc
		mount -t sysfs sys /newroot/sys
		mount -o bind /dev /newroot/dev
		mount -t tmpfs tmp /newroot/tmp
		phase start
		chroot /newroot /sbin/ksmsim-init --run "$wl" "$secs" "$n" || ok=0
		umount /newroot/tmp /newroot/dev /newroot/sys /newroot/proc
		mount -o remount,ro /newroot
	else
		echo "ksmsim-init: cannot mount $root" > /dev/console
		ok=0
	fi
else
	phase start
	workload "$wl" "$secs" "$n" || ok=0
fi
sync
if [ $ok = 1 ]; then phase end; else phase fail; fi
[ "$hold" = 0 ] || sleep "$hold"
poweroff -f
