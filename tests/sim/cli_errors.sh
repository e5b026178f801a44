#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ksmsim run on bad input: one clear line, exit 2, no output file left.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {	# expect STATUS PATTERN -- ARGS...
	local want=$1 pat=$2; shift 3
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err"
	local got=$?
	if [ "$got" != "$want" ] || ! grep -qE -e "$pat" "$tmp/err"; then
		echo "FAIL: ksmsim $*: exit $got (want $want), stderr: $(cat "$tmp/err")"
		fail=1
	fi
	if [ "$(wc -l < "$tmp/err")" -gt 1 ]; then
		echo "FAIL: ksmsim $*: more than one error line"; fail=1
	fi
	if ls "$tmp"/marks* >/dev/null 2>&1; then
		echo "FAIL: ksmsim $*: left an output file: $(ls "$tmp"/marks*)"; fail=1
		rm -f "$tmp"/marks*
	fi
}
printf 'ksmtrace 1\n0 spawn a\n0 map a 0x10 4\n0 wirte a 0x10 zero\n' > "$tmp/bad.ksmt"
cat > "$tmp/busy.ksmt" <<'T'
ksmtrace 1
0 spawn a
0 map a 0x10 4
0 advise a 0x10 4 mergeable
0 fill a 0x10 4 byte:01
0 set run 1
0 settle 2
0 mark merged
0 set max_page_sharing 3
T
expect 2 "--trace FILE is required" -- run
expect 2 "unknown checksum 'nope'" -- run --trace "$tmp/bad.ksmt" --hash nope
expect 2 "bad.ksmt:4: unknown verb 'wirte'" -- run --trace "$tmp/bad.ksmt" --marks-csv "$tmp/marks.csv"
expect 2 "missing.ksmt: cannot open" -- run --trace "$tmp/missing.ksmt" --marks-csv "$tmp/marks.csv"
expect 2 "busy.ksmt:9: the kernel refuses max_page_sharing 3 \(EBUSY\)" -- run --trace "$tmp/busy.ksmt" --marks-csv "$tmp/marks.csv"
expect 2 "--pages-to-scan wants" -- run --trace "$tmp/busy.ksmt" --pages-to-scan -1
expect 2 "unexpected argument" -- run --trace "$tmp/busy.ksmt" extra
# the same refusal is not an error once run=2 unmerged everything
sed -i 's/^0 set max_page_sharing 3$/0 set run 2\n0 set max_page_sharing 3/' "$tmp/busy.ksmt"
if ! "$bin" run --quiet --trace "$tmp/busy.ksmt" --marks-csv "$tmp/ok.csv"; then
	echo "FAIL: max_page_sharing after run 2 was refused"; fail=1
fi
[ -s "$tmp/ok.csv" ] || { echo "FAIL: no marks written"; fail=1; }
[ $fail = 0 ] && echo "all error cases behave"
exit $fail
