#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# An I/O benchmark, recorded: fio sequential and random reads and writes on
# a file in /tmp (buffered I/O, one job after the other). RUNTIME per job.
. "$(dirname "$0")/common.sh"
need fio
job=$WORK/ksmsim.fio
cat > "$job" <<JOB
[global]
filename=$WORK/fio.dat
size=256m
runtime=${RUNTIME:-5}
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
trace=$OUT/fio.ksmb
"$KSMSIM" record --interval-ms "${INTERVAL_MS:-100}" --max-seconds "${MAX:-120}" ${BASELINE:+--baseline} \
	-o "$trace" -- fio --output=/dev/null "$job"
rm -f "$WORK/fio.dat"
done_msg "$trace"
