#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ksmsim merge-exec: the program it runs (and that program's children) has
# PR_SET_MEMORY_MERGE set, as prctl(PR_GET_MEMORY_MERGE) reports it inside;
# the program's exit status passes through; 127 not found, 126 not runnable,
# 2 no command. Skips (77) where the kernel has no such prctl.
#   test_merge_exec.sh KSMSIM MERGE_PROBE
set -u
ksmsim=$1 probe=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

v=$("$probe") || { rc=$?; [ $rc = 77 ] && exit 77; fail "merge_probe exit $rc"; }
[ "$v" = 0 ] || fail "the test's own process already has memory merge set ($v)"

v=$("$ksmsim" merge-exec -- "$probe" 2> "$tmp/err")
rc=$?
if [ $rc = 125 ]; then
	# the kernel refused the prctl: one line naming the errno, then skip
	[ "$(wc -l < "$tmp/err")" = 1 ] || fail "prctl refusal not one line: $(cat "$tmp/err")"
	grep -q 'PR_SET_MEMORY_MERGE.*E[A-Z]*' "$tmp/err" || fail "refusal names no errno: $(cat "$tmp/err")"
	echo "skipped: $(cat "$tmp/err")" >&2
	exit 77
fi
[ $rc = 0 ] && [ "$v" = 1 ] || fail "merge-exec -- probe: rc $rc, flag '$v' (want 1)"
# without --, and through a shell's fork and exec: the flag is the mm's and inherited
v=$("$ksmsim" merge-exec sh -c "\"$probe\"; exit 0") || fail "merge-exec sh -c: rc $?"
[ "$v" = 1 ] || fail "child of the merged program: flag '$v' (want 1)"
# the kernel's view of the same: ksm_stat's ksm_merge_any, where it is shown
if [ -r /proc/self/ksm_stat ]; then
	"$ksmsim" merge-exec -- cat /proc/self/ksm_stat > "$tmp/stat" || fail "cat ksm_stat"
	if grep -q ksm_merge_any "$tmp/stat"; then
		grep -q 'ksm_merge_any: *yes' "$tmp/stat" || fail "ksm_merge_any not yes: $(cat "$tmp/stat")"
	fi
fi
# the program's status is merge-exec's
"$ksmsim" merge-exec -- sh -c 'exit 7'
[ $? = 7 ] || fail "exit status not passed through"
# not found: 127 and one line naming it; not runnable: 126; nothing: 2
"$ksmsim" merge-exec -- ksmsim-no-such-program-here 2> "$tmp/err"
[ $? = 127 ] || fail "not found: want 127"
[ "$(wc -l < "$tmp/err")" = 1 ] && grep -q 'ksmsim-no-such-program-here' "$tmp/err" ||
	fail "not found: $(cat "$tmp/err")"
"$ksmsim" merge-exec -- /etc 2> /dev/null
[ $? = 126 ] || fail "a directory: want 126"
"$ksmsim" merge-exec -- 2> "$tmp/err"
[ $? = 2 ] && [ "$(wc -l < "$tmp/err")" = 1 ] || fail "no command: want 2 and one line"
"$ksmsim" merge-exec --bogus 2> /dev/null
[ $? = 2 ] || fail "unknown option: want 2"
"$ksmsim" merge-exec --help | grep -q 'PR_SET_MEMORY_MERGE' || fail "--help"
echo ok
