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

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# .ci/run's sanitizer pass: the guest checks the 6.1 kernel, not this
# build's memory safety, and a second TCG boot would cost CI minutes.
[ -z "${KSMSIM_CI_SANITIZED:-}" ] || skip "sanitizer pass: the 6.1 guest runs in the plain pass"
[ "$(id -u)" = 0 ] || skip "not root (build-image.sh needs it)"
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64 (apt-get install -y qemu-system-x86)"
command -v cpio >/dev/null || skip "no cpio (apt-get install -y cpio)"
command -v apt-get >/dev/null || skip "no apt-get (the kernel comes from Debian's packages)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksmsim-test-replay61.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The kernel: cached, or downloadable from the mirror (else skip).
mkdir -p "$KSMSIM_VM_CACHE"
if [ ! -e "$KSMSIM_VM_CACHE/minimal/initrd.img" ]; then
	apt-cache depends linux-image-amd64 2>/dev/null | grep -q 'Depends: linux-image-' ||
		skip "apt knows no linux-image-amd64 (no Debian package lists)"
	(cd "$tmp" && timeout 60 apt-get download -q busybox-static >/dev/null 2>&1) ||
		skip "cannot download from the Debian mirror (apt-get download busybox-static)"
	rm -f "$tmp"/*.deb
fi

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
