#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --kernel 6.1: what Linux 6.1 lacks is refused (one line naming the
# trace's FILE:LINE or the option, exit 2, no output), its marks lack the
# sysfs files 6.1 has not, and the model follows 6.1 where it differs from
# 6.18: the stable tree before the checksum, no smart scan, no unsharing
# of KSM zero pages by MADV_UNMERGEABLE (sim/MODEL.md, "Linux 6.1").
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
expect() {	# expect STATUS PATTERN -- ARGS...
	local want=$1 pat=$2; shift 3
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err"
	local got=$?
	if [ "$got" != "$want" ] || ! grep -qE -e "$pat" "$tmp/err"; then
		bad "ksmsim $*: exit $got (want $want), stderr: $(cat "$tmp/err")"
	fi
	[ "$(wc -l < "$tmp/err")" -le 1 ] || bad "ksmsim $*: more than one error line"
	if ls "$tmp"/marks* >/dev/null 2>&1; then
		bad "ksmsim $*: left an output file"; rm -f "$tmp"/marks*
	fi
}
# the marks cell of column COL in the row labelled LABEL
cell() {	# cell FILE LABEL COL
	awk -F, -v l="$2" -v c="$3" '/^#/ { next } !h { for (i = 1; i <= NF; i++) n[$i] = i; h = 1; next }
		$1 == l { print (c in n) ? $(n[c]) : "absent"; exit }' "$1"
}

# ---- refusals
base='ksmtrace 1
0 spawn a
0 map a 0x10 4
0 advise a 0x10 4 mergeable
0 fill a 0x10 4 byte:01'
printf '%s\n0 set smart_scan 0\n0 set run 1\n' "$base" > "$tmp/smart.ksmt"
printf '%s\n0 set advisor_mode scan-time\n' "$base" > "$tmp/advisor.ksmt"
printf 'ksmtrace 3\n0 spawn a\n0 prctl a memory-merge 1\n' > "$tmp/prctl.ksmt"
printf '%s\n0 set run 1\n0 settle 2\n0 mark m\n' "$base" > "$tmp/ok.ksmt"
expect 2 "smart.ksmt:6: Linux 6.1 has no knob smart_scan \(added in 6\.7\)" -- \
	run --trace "$tmp/smart.ksmt" --kernel 6.1 --marks-csv "$tmp/marks.csv"
expect 2 "advisor.ksmt:6: Linux 6.1 has no knob advisor_mode \(added in 6\.8\)" -- \
	run --trace "$tmp/advisor.ksmt" --kernel 6.1 --marks-csv "$tmp/marks.csv"
expect 2 "prctl.ksmt:3: Linux 6.1 has no prctl\(PR_SET_MEMORY_MERGE\) \(added in 6\.4\)" -- \
	run --trace "$tmp/prctl.ksmt" --kernel 6.1 --marks-csv "$tmp/marks.csv"
expect 2 "^ksmsim run: --smart-scan: Linux 6.1 has no knob smart_scan" -- \
	run --trace "$tmp/ok.ksmt" --kernel 6.1 --smart-scan 0 --marks-csv "$tmp/marks.csv"
expect 2 "^ksmsim run: --advisor-target-scan-time: Linux 6.1 has no knob advisor_target_scan_time" -- \
	run --trace "$tmp/ok.ksmt" --advisor-target-scan-time 5 --kernel 6.1 --marks-csv "$tmp/marks.csv"
expect 2 "^ksmsim run: --kernel wants 6.1 or 6.18, not '5.4'" -- \
	run --trace "$tmp/ok.ksmt" --kernel 5.4 --marks-csv "$tmp/marks.csv"
expect 2 "^ksmsim advise: --smart-scan: Linux 6.1 has no knob smart_scan" -- \
	advise --kernel 6.1 --smart-scan 1 "$tmp/ok.ksmt"
# the same trace under 6.18 runs
"$bin" run --trace "$tmp/smart.ksmt" --quiet || bad "6.18 refused smart_scan"

# ---- the marks say which kernel, and lack what 6.1 lacks
"$bin" run --trace "$tmp/ok.ksmt" --kernel 6.1 --marks-csv "$tmp/m61.csv" \
	--mm-stats-csv "$tmp/mm61.csv" --summary-csv "$tmp/s61.csv" > "$tmp/out61" || bad "6.1 run failed"
"$bin" run --trace "$tmp/ok.ksmt" --marks-csv "$tmp/m618.csv" --mm-stats-csv "$tmp/mm618.csv" \
	> "$tmp/out618" || bad "6.18 run failed"
grep -q '^# ksmsim .* model of Linux 6.1 KSM' "$tmp/m61.csv" || bad "6.1 marks do not say Linux 6.1"
grep -q '^# ksmsim .* model of Linux 6.18 KSM' "$tmp/m618.csv" || bad "6.18 marks do not say Linux 6.18"
for col in pages_scanned pages_skipped ksm_zero_pages general_profit; do
	[ "$(cell "$tmp/m61.csv" m "$col")" = absent ] || bad "6.1 marks show $col"
	[ "$(cell "$tmp/m618.csv" m "$col")" != absent ] || bad "6.18 marks lack $col"
done
[ "$(cell "$tmp/m61.csv" m pages_sharing)" = 3 ] || bad "6.1: 4 equal pages, sharing $(cell "$tmp/m61.csv" m pages_sharing)"
[ "$(grep -v '^#' "$tmp/mm61.csv" | head -n 1)" = "label,t_us,mm,ksm_rmap_items,ksm_merging_pages" ] ||
	bad "6.1 per-mm header: $(grep -v '^#' "$tmp/mm61.csv" | head -n 1)"
head -n 1 "$tmp/out61" | grep -q 'Linux 6.1 (--kernel 6.1)' || bad "6.1 summary does not name the kernel"
grep -q 'Linux 6.1' "$tmp/out618" && bad "6.18 summary names 6.1"
grep -q 'pages_skipped' "$tmp/out61" && bad "6.1 summary shows pages_skipped"
grep -q ',kernel=6.1,' "$tmp/s61.csv" || bad "6.1 summary CSV: no kernel=6.1 in pinned"

# diff compares what both files have: two 6.1 files, or 6.18 against 6.1
"$bin" diff "$tmp/m61.csv" "$tmp/m61.csv" >/dev/null || bad "diff of a 6.1 marks file with itself"
"$bin" diff "$tmp/m618.csv" "$tmp/m61.csv" >/dev/null || bad "diff 6.18 against 6.1 on ok.ksmt"
"$bin" diff "$tmp/mm618.csv" "$tmp/mm61.csv" >/dev/null || bad "diff of per-mm rows 6.18 against 6.1"

# ---- gate order: a new page equal to a KSM page merges at its first
# visit on 6.1 (stable tree first) and only at its second on 6.18 (its
# first checksum differs from the item's zero oldchecksum: volatile).
cat > "$tmp/order.ksmt" <<'T'
ksmtrace 1
0 set pages_to_scan 1000
0 spawn a
0 map a 0x10 2
0 advise a 0x10 2 mergeable
0 fill a 0x10 2 byte:07
0 set run 1
0 settle 2
0 mark merged
0 spawn b
0 map b 0x10 1
0 advise b 0x10 1 mergeable
0 fill b 0x10 1 byte:07
0 settle 1
0 mark b1
T
"$bin" run --trace "$tmp/order.ksmt" --kernel 6.1 --marks-csv "$tmp/o61.csv" --quiet || bad "order 6.1"
"$bin" run --trace "$tmp/order.ksmt" --marks-csv "$tmp/o618.csv" --quiet || bad "order 6.18"
[ "$(cell "$tmp/o61.csv" merged pages_sharing)" = 1 ] || bad "order 6.1: merged sharing $(cell "$tmp/o61.csv" merged pages_sharing)"
[ "$(cell "$tmp/o61.csv" b1 pages_sharing)" = 2 ] || bad "order 6.1: b's page not merged at its first visit"
[ "$(cell "$tmp/o618.csv" b1 pages_sharing)" = 1 ] || bad "order 6.18: b's page merged at its first visit"
[ "$(cell "$tmp/o618.csv" b1 pages_volatile)" = 1 ] || bad "order 6.18: b's page not volatile"
# 6.1 took no checksum of b's page: it merged before the gate
c61=$(( $(cell "$tmp/o61.csv" b1 checksums) - $(cell "$tmp/o61.csv" merged checksums) ))
c618=$(( $(cell "$tmp/o618.csv" b1 checksums) - $(cell "$tmp/o618.csv" merged checksums) ))
[ "$c61" -lt "$c618" ] || bad "order: checksums in the last pass 6.1 $c61, 6.18 $c618"

# ---- no smart scan: distinct pages, many passes; 6.18 skips, 6.1 visits all
cat > "$tmp/smart2.ksmt" <<'T'
ksmtrace 1
0 set pages_to_scan 1000
0 spawn a
0 map a 0x10 64
0 advise a 0x10 64 mergeable
0 fillseq a 0x10 64 0
0 set run 1
0 settle 12
0 mark end
T
"$bin" run --trace "$tmp/smart2.ksmt" --kernel 6.1 --marks-csv "$tmp/s61m.csv" --quiet || bad "smart 6.1"
"$bin" run --trace "$tmp/smart2.ksmt" --marks-csv "$tmp/s618m.csv" --quiet || bad "smart 6.18"
[ "$(cell "$tmp/s618m.csv" end pages_skipped)" -gt 0 ] || bad "6.18 skipped nothing"
[ "$(cell "$tmp/s61m.csv" end checksums)" = $((64 * 12)) ] ||
	bad "6.1: $(cell "$tmp/s61m.csv" end checksums) checksums, want every page every pass ($((64 * 12)))"
[ "$(cell "$tmp/s61m.csv" end pages_unshared)" = 64 ] || bad "6.1: distinct pages not all unshared"

# ---- MADV_UNMERGEABLE leaves KSM zero pages mapped on 6.1 (6.6 unshares
# them): re-advised, 6.18 scans fresh zero pages again, 6.1 has no page to scan
cat > "$tmp/zero.ksmt" <<'T'
ksmtrace 1
0 set use_zero_pages 1
0 spawn a
0 map a 0x10 8
0 advise a 0x10 8 mergeable
0 fill a 0x10 8 zero
0 set run 1
0 settle 3
0 advise a 0x10 8 unmergeable
0 advise a 0x10 8 mergeable
0 settle 1
0 mark again
T
"$bin" run --trace "$tmp/zero.ksmt" --kernel 6.1 --marks-csv "$tmp/z61.csv" --quiet || bad "zero 6.1"
"$bin" run --trace "$tmp/zero.ksmt" --marks-csv "$tmp/z618.csv" --quiet || bad "zero 6.18"
[ "$(cell "$tmp/z61.csv" again rmap_items)" = 0 ] || bad "6.1: zero PTEs scanned after unmerge ($(cell "$tmp/z61.csv" again rmap_items) items)"
[ "$(cell "$tmp/z618.csv" again rmap_items)" = 8 ] || bad "6.18: unshared zero pages not scanned ($(cell "$tmp/z618.csv" again rmap_items) items)"

# ---- a fork child's ksm_stat starts from its parent's on 6.1 (dup_mm), from 0 on 6.18
cat > "$tmp/fork.ksmt" <<'T'
ksmtrace 3
0 spawn a
0 map a 0x10 4
0 advise a 0x10 4 mergeable
0 fill a 0x10 4 byte:05
0 set run 1
0 settle 2
0 fork a c
0 mark forked
T
"$bin" run --trace "$tmp/fork.ksmt" --kernel 6.1 --mm-stats-csv "$tmp/f61.csv" --quiet || bad "fork 6.1"
"$bin" run --trace "$tmp/fork.ksmt" --mm-stats-csv "$tmp/f618.csv" --quiet || bad "fork 6.18"
grep -qx 'forked,0,c,4,4' "$tmp/f61.csv" || bad "6.1: child c's ksm_stat: $(grep ',c,' "$tmp/f61.csv")"
grep -q '^forked,0,c,0,0,0,' "$tmp/f618.csv" || bad "6.18: child c's ksm_stat: $(grep ',c,' "$tmp/f618.csv")"

# tune under 6.1: no write to a file 6.1 lacks, and the lines it prints
# reproduce the 6.1 model, not the host's 6.18
"$bin" tune --kernel 6.1 "$tmp/fork.ksmt" > "$tmp/tune61.txt" 2>/dev/null || bad "tune 6.1"
! grep -q '/sys/kernel/mm/ksm/\(smart_scan\|advisor\)' "$tmp/tune61.txt" || bad "tune 6.1 writes a knob 6.1 lacks"
grep -q '^  ksmsim run .* --kernel 6\.1 ' "$tmp/tune61.txt" || bad "tune 6.1's reproduce line lacks --kernel 6.1"
! grep -q '^  ksmsim verify' "$tmp/tune61.txt" || bad "tune 6.1 offers verify, which models 6.18"
grep -q '^Modelled kernel: Linux 6.1' "$tmp/tune61.txt" || bad "tune 6.1's report does not name the kernel"
"$bin" advise --kernel 6.1 "$tmp/fork.ksmt" > "$tmp/advise61.txt" 2>/dev/null || bad "advise 6.1"
grep -q '^Modelled kernel: Linux 6.1' "$tmp/advise61.txt" || bad "advise 6.1's report does not name the kernel"
"$bin" advise "$tmp/fork.ksmt" 2>/dev/null | grep -q '^Modelled kernel' && bad "advise 6.18's report changed"

[ $fail -eq 0 ] && echo "ok   --kernel 6.1: refusals, columns and behaviour"
exit $fail
