#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The init of replay-6.1.sh's guest (busybox sh, /init of its initramfs):
# replays each trace of /cases/list (FILE NAME lines) on the guest kernel's live KSM with
# `ksmsim live`, one after the other, and sends every trace's marks CSV,
# per-mm CSV, standard error and exit status to the host over the second
# serial line (/dev/ttyS1, raw), framed by '@@KSMSIM ...' lines:
#
#   @@KSMSIM GUEST key=value ...          the guest: kernel, CPUs, memory, THP
#   @@KSMSIM FILE NAME KIND               then the file's lines (KIND: csv, mm, err)
#   @@KSMSIM ENDFILE
#   @@KSMSIM STATUS NAME RC SECONDS KNOBS  KNOBS: same (every KSM knob as at boot
#                                         after the replay) or the ones that were not
#   @@KSMSIM DONE
#
# Between traces KSM is reset: run=2 then 0, and every knob of
# /sys/kernel/mm/ksm put back to its value at boot (`ksmsim live` restores
# them itself; a knob it left otherwise is reported and written back).
# /cases/args holds extra `ksmsim live` options (one line).
PATH=/bin
export PATH
/bin/busybox --install -s /bin
mount -t proc proc /proc
read -r booted _ < /proc/uptime
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /run /tmp
KSM=/sys/kernel/mm/ksm
THP=/sys/kernel/mm/transparent_hugepage

stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>/dev/ttyS1
say() { printf '@@KSMSIM %s\n' "$*" >&3; }
send() { # NAME KIND FILE
	say "FILE $1 $2"
	[ -e "$3" ] && cat "$3" >&3
	say ENDFILE
}
uptime_cs() { read -r u _ < /proc/uptime; echo "${u%.*}${u#*.}"; }

# The knobs at boot: the guest kernel's defaults, restored after every trace.
# (the files with a write bit: root may write to any, test -w says nothing)
knobs() {
	find "$KSM" -maxdepth 1 -type f -perm -200 | sort | while read -r f; do
		echo "${f##*/}=$(cat "$f")"
	done
}
knobs > /tmp/knobs.boot

mem=$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)
say "GUEST booted_s=$booted kernel=$(uname -r) version=$(uname -v | tr ' ' _) cpus=$(nproc) mem_kib=$mem" \
	"thp_enabled=$(tr ' ' , < $THP/enabled) thp_defrag=$(tr ' ' , < $THP/defrag)" \
	"numa_balancing=$(cat /proc/sys/kernel/numa_balancing 2>/dev/null || echo absent)" \
	"ksm_files=$(cd $KSM && echo * | tr ' ' , )" \
	"ksm_stat=$(cut -d' ' -f1 < /proc/self/ksm_stat | tr '\n' , )" \
	"knobs=$(tr '\n' , < /tmp/knobs.boot)"
args=$(cat /cases/args 2>/dev/null)
cd /
while read -r file name; do
	echo "replay-init: $name" > /dev/console
	t0=$(uptime_cs)
	# shellcheck disable=SC2086 # args: options, split on purpose
	/opt/ksmsim/ksmsim live --trace "cases/$file" $args \
		--marks-csv /tmp/out.csv --mm-stats-csv /tmp/out.mm.csv 2> /tmp/out.err
	rc=$?
	t1=$(uptime_cs)
	echo 2 > $KSM/run
	echo 0 > $KSM/run
	knobs > /tmp/knobs.now
	differ=$(diff /tmp/knobs.boot /tmp/knobs.now | sed -n 's/^+\([a-z_]*\)=.*/\1/p' | tr '\n' , )
	[ -n "$differ" ] && while IFS='=' read -r k v; do
		[ "$k" = run ] || echo "$v" > "$KSM/$k"
	done < /tmp/knobs.boot
	send "$name" csv /tmp/out.csv
	send "$name" mm /tmp/out.mm.csv
	send "$name" err /tmp/out.err
	secs=$(((t1 - t0) / 100)).$(printf '%02d' $(((t1 - t0) % 100)))
	say "STATUS $name $rc $secs ${differ:-same}"
	rm -f /tmp/out.csv /tmp/out.mm.csv /tmp/out.err
done < /cases/list
say DONE
exec 3>&-
sync
poweroff -f
