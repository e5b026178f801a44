#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# guests.sh KSMSIM VMDIR CACHE: records 2 x 256 MiB guests of the minimal
# tier booting (workloads/vm/record-guests.sh, each held up 5 s after its
# end) and checks that the trace replays under --check, has two mms (vm1,
# vm2) holding no more than what QEMU advised mergeable (record's advised
# scope: guest RAM and its small firmware and video blocks, not QEMU's heap
# or TCG buffer) and the phase marks, and that the guests share pages at the last
# vmI-end mark, when both are up: the oracle's ideal_saved and, replayed
# with a ksmd fast enough to scan the guests several times whatever the
# boot's length (pages_to_scan 5000, i.e. 250,000 pages/s), pages_sharing.
# The image is built into
# CACHE ($KSMSIM_VM_CACHE overrides it). Skips (77) without root,
# qemu-system-x86_64, cpio, or a way to the Debian mirror for the inputs.
set -euo pipefail
ksmsim=$1 vmdir=$2
export KSMSIM_VM_CACHE=${KSMSIM_VM_CACHE:-$3}
MIN_SHARING=${MIN_SHARING:-4096}
MIB=256		# each guest's RAM

. "$(dirname "$0")/prereqs.sh"
vm_prereqs "ksmsim record needs it"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksmsim-test-vm.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The inputs: cached, or downloadable from the mirror (else skip).
vm_inputs "$tmp"

start=$(date +%s)
KSMSIM=$ksmsim OUT=$tmp "$vmdir/record-guests.sh" -n 2 -m "$MIB" -w boot -H 5 -x 300 \
	-o "$tmp/guests.ksmb" > "$tmp/out" 2> "$tmp/err" ||
	{ cat "$tmp/out" "$tmp/err" >&2; fail "record-guests.sh failed"; }
cat "$tmp/out"
grep -q '^record-guests: accel \(tcg\|kvm\) (' "$tmp/out" || fail "no accel line"
grep -q '^record-guests: guests=2 mms=2 ' "$tmp/out" || fail "no summary line with guests=2 mms=2"
echo "recorded in $(($(date +%s) - start)) s"

# One mm per guest, named vm1 and vm2.
"$ksmsim" trace stat "$tmp/guests.ksmb" > "$tmp/stat"
grep -q '^mms *2 spawned' "$tmp/stat" || { cat "$tmp/stat"; fail "not 2 mms"; }
spawns=$("$ksmsim" trace cat "$tmp/guests.ksmb" | awk '$2 == "spawn" { print $3 }' | sort | tr '\n' ' ')
[ "$spawns" = "vm1 vm2 " ] || fail "mms are '$spawns', not 'vm1 vm2'"

# Advised scope (record's default with --as-vm): only QEMU's RAMBlocks, which
# mem-merge=on advises MADV_MERGEABLE: the guest's RAM, recorded whole, and
# small blocks (firmware, ACPI tables, option ROMs, the VGA's 16 MiB video
# RAM: 4737 pages in all for a 64 MiB guest). Never QEMU's heap or its TCG
# translation buffer (1 GiB), which --scope all would add: each mm's pages
# mapped at once stay within its RAM and 32 MiB.
"$ksmsim" trace cat "$tmp/guests.ksmb" | awk -v ram=$((MIB * 256)) -v extra=8192 '
	$2 == "map" {
		now[$3] += $5
		if (now[$3] > peak[$3]) peak[$3] = now[$3]
		if ($5 >= ram) whole[$3] = 1
	}
	$2 == "unmap" { now[$3] -= $5 }
	END {
		for (m in peak) {
			printf "%s: at most %d pages mapped (RAM %d)\n", m, peak[m], ram
			if (peak[m] > ram + extra) { print "FAIL: " m " maps pages outside the advised RAMBlocks"; bad = 1 }
			if (!whole[m]) { print "FAIL: " m " has no map of its whole RAM"; bad = 1 }
		}
		exit bad
	}' || fail "the trace holds pages QEMU did not advise mergeable"

# It replays under the invariant checker; the phase marks are there.
"$ksmsim" run --trace "$tmp/guests.ksmb" --check --quiet --pages-to-scan 5000 \
	--marks-csv "$tmp/marks.csv" > "$tmp/run" 2>&1 || { cat "$tmp/run"; fail "run --check failed"; }
for m in vm1-boot vm1-start vm1-end vm2-boot vm2-start vm2-end; do
	grep -q "^$m," "$tmp/marks.csv" || fail "no mark $m"
done

# Identical guests share pages after boot (counters at the last vmI-end).
read -r sharing ideal < <(python3 - "$tmp/marks.csv" <<'PY'
import csv, re, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))
        if re.fullmatch(r"vm[0-9]+-end", r["label"])]
print(rows[-1]["pages_sharing"], rows[-1]["ideal_saved"])
PY
)
echo "at the last vmI-end: pages_sharing $sharing, ideal_saved $ideal (threshold $MIN_SHARING)"
[ "$ideal" -gt "$MIN_SHARING" ] || fail "ideal_saved $ideal <= $MIN_SHARING"
[ "$sharing" -gt "$MIN_SHARING" ] || fail "pages_sharing $sharing <= $MIN_SHARING"
echo "ok"
