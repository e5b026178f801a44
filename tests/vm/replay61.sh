#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# replay61.sh KSMSIM VMDIR CACHE CONFDIR: the second live oracle. One
# Debian 6.1 guest (workloads/vm/replay-6.1.sh) replays three conformance
# cases on its live KSM and their marks and ksm_stat rows must equal
# CONFDIR/expected-6.1 (ksmsim diff, every cell but those the recording
# lists as varying); in the same boot a trace that turns smart scan on and
# one that calls prctl(PR_SET_MEMORY_MERGE) must each fail with one line
# naming the trace's line and what 6.1 lacks. The columns 6.1 has no file
# for are absent from both sides (--ignore). Skips (77) without root,
# qemu-system-x86_64, cpio, or a way to the Debian mirror for the image.
set -euo pipefail
ksmsim=$1 vmdir=$2 conf=$4
export KSMSIM_VM_CACHE=${KSMSIM_VM_CACHE:-$3}
CASES="chains kst_merge_across thp_same_thp"
REFUSED="ltp_ksm03_smart merge_any_on"

. "$(dirname "$0")/prereqs.sh"
# .ci/run's sanitizer pass: the guest checks the 6.1 kernel, not this
# build's memory safety, and a second TCG boot would cost CI minutes.
[ -z "${KSMSIM_CI_SANITIZED:-}" ] || skip "sanitizer pass: the 6.1 guest runs in the plain pass"
vm_prereqs "build-image.sh needs it"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksmsim-test-replay61.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The inputs: cached, or downloadable from the mirror (else skip).
vm_inputs "$tmp"

traces=()
for c in $CASES $REFUSED; do traces+=("$conf/cases/$c.ksmt"); done
start=$(date +%s)
set +e
KSMSIM=$ksmsim "$vmdir/replay-6.1.sh" -o "$tmp/out" -m 1024 -x 240 "${traces[@]}" > "$tmp/log" 2>&1
rc=$?
set -e
cat "$tmp/log"
echo "guest replayed in $(($(date +%s) - start)) s"
[ "$rc" != 2 ] || { tail -n 20 "$tmp/out/console.log" >&2; fail "replay-6.1.sh: the guest did not finish"; }
grep -q '^replay-6.1: guest .* kernel=6\.1\.' "$tmp/log" || fail "the guest's kernel is not 6.1"

mark_ignore=pages_scanned,pages_skipped,ksm_zero_pages,general_profit
mm_ignore=ksm_zero_pages,ksm_process_profit,ksm_mergeable,ksm_merge_any
for c in $CASES; do
	grep -q "^replay-6.1: $c ok " "$tmp/log" || fail "$c did not replay"
	"$ksmsim" diff "$conf/expected-6.1/$c.csv" "$tmp/out/$c.csv" --ignore "$mark_ignore" ||
		fail "$c: the marks differ from expected-6.1/$c.csv"
	"$ksmsim" diff "$conf/expected-6.1/$c.mm.csv" "$tmp/out/$c.mm.csv" --ignore "$mm_ignore" ||
		fail "$c: the ksm_stat rows differ from expected-6.1/$c.mm.csv"
done
grep -qx 'replay-6.1: ltp_ksm03_smart FAIL [0-9.]*s: ksmsim live: cases/ltp_ksm03_smart.ksmt:[0-9]*: set smart_scan 1: this kernel has no /sys/kernel/mm/ksm/smart_scan' "$tmp/log" ||
	fail "ltp_ksm03_smart: no one-line refusal of smart_scan"
grep -qx 'replay-6.1: merge_any_on FAIL [0-9.]*s: ksmsim live: cases/merge_any_on.ksmt:[0-9]*: prctl memory-merge: this kernel has no PR_SET_MEMORY_MERGE (Linux 6.4 or later)' "$tmp/log" ||
	fail "merge_any_on: no one-line refusal of prctl memory-merge"
[ "$(wc -l < "$tmp/out/ltp_ksm03_smart.err")" = 1 ] || fail "the refusal is not one line"
echo "ok"
