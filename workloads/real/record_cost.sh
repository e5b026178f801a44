#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What `ksmsim record --pid` costs the recorder on a service host: COPIES
# (3) services of SIZE_MIB (330) MiB each, every page different, each
# rewriting 50 pages a second, started through `ksmsim merge-exec`; one
# capture of SECONDS (60) at each interval given (default 10000 5000 1000),
# printing the detector's and the recorder's CPU as record reports them.
# The steady cost per interval is the difference between two intervals'
# totals over the difference in their interval counts (the first snapshot,
# which reads every page once, cancels out).
#   sudo workloads/real/record_cost.sh [INTERVAL_MS...]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/workloads/real/common.sh"
COPIES=${COPIES:-3}
SIZE_MIB=${SIZE_MIB:-330}
SECONDS_EACH=${SECONDS_EACH:-60}
[ $# -gt 0 ] || set -- 10000 5000 1000
d=$(mktemp -d)
pids=''
trap 'for p in $pids; do kill "$p" 2> /dev/null || true; done; wait; rm -rf "$d"' EXIT
cat > "$d/svc.py" <<'P'
import os, sys, time
n = int(sys.argv[2]) * 256
b = bytearray(os.urandom(4096 * 1024)) * (n // 1024)
for i in range(n):
    b[i * 4096:i * 4096 + 8] = i.to_bytes(8, 'little')
open(sys.argv[1], 'w').write('ready')
j = 0
while True:
    time.sleep(0.02)
    j = (j * 7919 + 1) % n
    b[j * 4096 + 8] = (b[j * 4096 + 8] + 1) % 256
P
for i in $(seq "$COPIES"); do
	"$KSMSIM" merge-exec -- python3 "$d/svc.py" "$d/ready$i" "$SIZE_MIB" &
	pids="$pids $!"
done
for i in $(seq "$COPIES"); do until [ -s "$d/ready$i" ]; do sleep 0.2; done; done
echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') load=$(cut -d' ' -f1-3 /proc/loadavg)"
echo "$COPIES services, RSS (kB): $(for p in $pids; do awk '/VmRSS/ { printf "%s ", $2 }' "/proc/$p/status"; done)"
plist=$(echo $pids | tr ' ' ,)
for iv in "$@"; do
	echo "interval_ms=$iv seconds=$SECONDS_EACH"
	"$KSMSIM" record --pid "$plist" --max-seconds "$SECONDS_EACH" --interval-ms "$iv" --quiet \
		-o "$d/t.ksmb" 2>&1 | grep -E "detector .*CPU|capture took|intervals of"
done
echo "load after=$(cut -d' ' -f1-3 /proc/loadavg)"
