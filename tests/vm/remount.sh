#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# remount.sh KSMSIM VMDIR CACHE: one 256 MiB guest of the minimal tier runs
# the 'remount' workload (record-guests.sh -w remount -c bytes: 2 cycles of
# remounting its scratch ext4 read-only and read-write, 5 s apart) and
# false-positives.sh replays it with a ksmd that visits every page each
# second (pages_to_scan 5000, sleep 20 ms). Each remount rewrites ext4's
# superblock, followed in the page by its own crc32c, so crc32c must let
# through at least one change confined to the page's bytes 1024-2047 (the
# superblock) and xxhash and xxh64 none. Skips (77) as vm-guests-boot.
set -euo pipefail
ksmsim=$1 vmdir=$2
export KSMSIM_VM_CACHE=${KSMSIM_VM_CACHE:-$3}

. "$(dirname "$0")/prereqs.sh"
vm_prereqs "ksmsim record needs it"
command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4 (apt-get install -y e2fsprogs)"
command -v /usr/bin/time >/dev/null || skip "no GNU time (apt-get install -y time)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksmsim-test-remount.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
vm_inputs "$tmp"

KSMSIM=$ksmsim OUT=$tmp "$vmdir/record-guests.sh" -n 1 -m 256 -w remount -r 2 -s 5 -H 2 \
	-x 300 -c bytes -o "$tmp/remount.ksmb" > "$tmp/out" 2> "$tmp/err" ||
	{ cat "$tmp/out" "$tmp/err" >&2; fail "record-guests.sh failed"; }
cat "$tmp/out"
marks=$(grep -o 'vm1-r[ow]-[0-9]*' "$tmp/out" | tr '\n' ' ')
[ "$marks" = "vm1-ro-1 vm1-rw-1 vm1-ro-2 " ] || fail "remount marks are '$marks'"

KSMSIM=$ksmsim PAGES_TO_SCAN=5000 SLEEP_MS=20 "$vmdir/false-positives.sh" -o "$tmp/fp" \
	-H "crc32c xxhash xxh64" "$tmp/remount.ksmb" || fail "false-positives.sh failed"
python3 - "$tmp/fp" <<'PY' || fail "the superblock's false positives are not as expected"
import csv, sys
d = sys.argv[1]
def sb(changed):
    return all(1024 <= int(p.partition("-")[0]) and int(p.partition("-")[2] or p) <= 2047
               for p in changed.split(";"))
for h in ("crc32c", "xxhash", "xxh64"):
    fps = list(csv.DictReader(l for l in open(f"{d}/false-positives-{h}.csv") if not l.startswith("#")))
    n_sb = sum(sb(f["changed_bytes"]) for f in fps)
    print(f"{h}: {len(fps)} false positives, {n_sb} in the superblock")
    if h == "crc32c" and n_sb < 1:
        sys.exit(1)
    if h != "crc32c" and fps:
        sys.exit(1)
PY
echo "ok"
