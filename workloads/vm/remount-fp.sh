#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Does the ext4-superblock false positive of crc32c (analysis/results/
# README.md, section 9) recur, and how often? BOOTS independent boots of N
# guests of the minimal tier, each running the 'remount' workload on its
# own scratch ext4 (record-guests.sh -w remount -c bytes: REPS cycles of
# 1 MiB written, remount read-only, SECONDS, remount read-write, SECONDS),
# each trace replayed under every hash by false-positives.sh, then
#
#   OUT/runs.csv     a row per boot, ksmd setting and hash: the boot's
#       start (UTC), guests, guest_hours (each guest's recorder start to its
#       'end' mark, summed), remounts (its ro-I and rw-I marks), the gate's
#       changes and false positives, fp_superblock (those whose changed
#       bytes all lie in the page's bytes 1024-2047: ext4's superblock)
#   OUT/guests.csv   the same a row per guest (vmI): its guest_hours,
#       remounts, false_positives and fp_superblock (gate_changed is the
#       run's, all guests together); remounts_seen, its remounts followed
#       by a false positive of that guest, and fp_unprompted, its false
#       positives with no remount of that guest since its previous one
#   OUT/boot-B/      false-positives.sh's files for that boot (ksmd
#       pages_to_scan 1600, sleep 200 ms) and record.txt (its summary line);
#       boot-B/default/ the same at the kernel's defaults (100, 20 ms)
#
#   remount-fp.sh [-b BOOTS] [-n N] [-m MIB] [-r REPS] [-s SECONDS] [-o OUT]
#
# Defaults: 2 boots, 2 guests x 256 MiB, 15 cycles, 20 s. Traces go to
# TRACES (default /tmp/ksmsim-vm; about 100 MiB each) and are kept. A boot
# whose OUT/boot-B is complete is not run again, only tabulated.
# Root, QEMU and the image as record-guests.sh. KSMSIM as there.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
KSMSIM=${KSMSIM:-$here/../../build/cli/ksmsim}
export KSMSIM
TRACES=${TRACES:-/tmp/ksmsim-vm}
boots=2 n=2 mib=256 reps=15 secs=20 out=.
die() { echo "remount-fp.sh: $*" >&2; exit 2; }
while getopts b:n:m:r:s:o:h o; do
	case $o in
	b) boots=$OPTARG ;; n) n=$OPTARG ;; m) mib=$OPTARG ;; r) reps=$OPTARG ;;
	s) secs=$OPTARG ;; o) out=$OPTARG ;;
	*) die "usage: remount-fp.sh [-b BOOTS] [-n N] [-m MIB] [-r REPS] [-s SECONDS] [-o OUT]" ;;
	esac
done
for v in "$boots" "$n" "$mib" "$reps" "$secs"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die "bad number '$v'"
done
mkdir -p "$out" "$TRACES"
# the recording's cap: every cycle, boot (a minute or two under load), hold
max=$((2 * reps * secs + 600))
for b in $(seq 1 "$boots"); do
	d=$out/boot-$b
	[ -s "$d/default/false-positives.csv" ] && continue # done: tabulated again only
	mkdir -p "$d/default"
	trace=$TRACES/remount-$b.ksmb
	date -u +%Y-%m-%dT%H:%M:%SZ > "$d/start"
	echo "$n $mib $reps $secs" > "$d/params"
	"$here/record-guests.sh" -n "$n" -m "$mib" -w remount -r "$reps" -s "$secs" -H 10 \
		-c bytes -x "$max" -o "$trace" > "$d/record.log" || die "boot $b: record-guests.sh failed"
	grep '^record-guests: ' "$d/record.log" > "$d/record.txt"
	rm "$d/record.log"
	"$KSMSIM" trace cat "$trace" | awk '$2 == "mark" { print $1, $3 }' > "$d/marks.txt"
	"$here/false-positives.sh" -o "$d" "$trace" > /dev/null
	PAGES_TO_SCAN=100 SLEEP_MS=20 "$here/false-positives.sh" -o "$d/default" "$trace" > /dev/null
done
python3 - "$out" "$boots" <<'PY'
import csv, os, re, sys
out, boots = sys.argv[1], int(sys.argv[2])

def superblock(changed):
    # offsets like "1037;1040;2044-2047": all within bytes 1024-2047
    for part in changed.split(";"):
        lo, _, hi = part.partition("-")
        if not (1024 <= int(lo) and int(hi or lo) <= 2047):
            return False
    return True

cols = ["boot", "start_utc", "guests", "mib", "reps", "wait_s", "guest_hours", "remounts",
        "pages_to_scan", "sleep_ms", "hash", "gate_changed", "false_positives", "fp_superblock"]
rows, grows = [], []
for b in range(1, boots + 1):
    d = f"{out}/boot-{b}"
    start = open(f"{d}/start").read().strip()
    n, mib, reps, secs = open(f"{d}/params").read().split()  # the boot's own
    ends, remounts, at = {}, {}, {}
    for line in open(f"{d}/marks.txt"):
        t, label = line.split()
        m = re.fullmatch(r"(vm[0-9]+)-(end|ro-[0-9]+|rw-[0-9]+)", label)
        if m and m.group(2) == "end":
            ends[m.group(1)] = int(t)
        elif m:
            remounts[m.group(1)] = remounts.get(m.group(1), 0) + 1
            at.setdefault(m.group(1), []).append(int(t))
    if len(ends) != int(n):
        sys.exit(f"remount-fp.sh: boot {b}: {len(ends)} end marks, not {n}")
    hours = sum(ends.values()) / 3.6e9
    for sub, pts, ms in (("", 1600, 200), ("/default", 100, 20)):
        for r in csv.DictReader(open(f"{d}{sub}/false-positives.csv")):
            h = r["hash"]
            fps = list(csv.DictReader(l for l in open(f"{d}{sub}/false-positives-{h}.csv")
                                      if not l.startswith("#")))
            rows.append([b, start, n, mib, reps, secs, f"{hours:.4f}", sum(remounts.values()),
                         pts, ms, h, r["gate_changed"], r["false_positives"],
                         sum(superblock(f["changed_bytes"]) for f in fps)])
            for vm in sorted(ends, key=lambda x: int(x[2:])):
                mine = [f for f in fps if f["mm"] == vm]
                seen = unprompted = prev = 0
                for t in sorted(int(f["t_us"]) for f in mine):
                    k = sum(prev < x <= t for x in at.get(vm, []))
                    seen, unprompted, prev = seen + k, unprompted + (k == 0), t
                grows.append([b, vm, f"{ends[vm] / 3.6e9:.4f}", remounts.get(vm, 0), pts, ms, h,
                              len(mine), sum(superblock(f["changed_bytes"]) for f in mine),
                              seen, unprompted])
with open(f"{out}/runs.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(cols)
    w.writerows(rows)
with open(f"{out}/guests.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["boot", "guest", "guest_hours", "remounts", "pages_to_scan", "sleep_ms", "hash",
                "false_positives", "fp_superblock", "remounts_seen", "fp_unprompted"])
    w.writerows(grows)
PY
cat "$out/runs.csv"
