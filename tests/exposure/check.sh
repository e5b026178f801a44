#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The exposure figures of a hand-made trace, worked out by hand from the
# model's rules (sim/MODEL.md), and the --domain errors.
#
# two_domains.ksmt, domains d1 = {a, c}, d2 = {b, e}, default knobs:
# ksmd wakes at run 1 (t = 10000 us, jiffy 2): pass 1 visits each of the 9
# pages once and only records checksums; it sleeps 20 ms = 5 ticks and wakes
# on tick 2 + 5 + 1 = 8: pass 2 at t = 32000 visits a:X a:Y a:0 b:X b:Z b:0
# c:Y e:Y e:Z (slots in advice order, pages by address), where
#   b:X + a:X  merge two, across (31000 for a's, written 1000; 29000 for b's, 3000)
#   b:0 + a:0  merge two, across (a: 32000 - 1500 = 30500; b: 32000 - 3500 = 28500)
#   c:Y + a:Y  merge two, within d1 (a: 30000; c: 27000)
#   e:Y        into the KSM page Y, across now that d2 joins (26000)
#   e:Z + b:Z  merge two, within d2 (b: 24000; e: 23000)
# At 100000 b stores 44 to X: a CoW, 68000 us after its merge (across); at
# 150000 c's advice is withdrawn: an unshare, 118000 us after (within).
# That unmerge is the unmap channel's one event (unmaps 1, d1's): Y's KSM
# page lists e (d2) too, so it reveals across, 150000 - 5000 (c's write)
# = 145000 us after c's page was written; Y is no chain's dup.
# Across, write to merge: 26000 28500 29000 30500 31000: p50 = the 3rd
# (nearest rank, ceil(0.5 n)) 29000, p90 = p99 = max = 31000. Within: 23000
# 24000 27000 30000: p50 the 2nd, 24000; p90 the 4th, 30000. d1's pages
# across: 30500 31000; d2's: 26000 28500 29000. KSM pages at their peak:
# X, the zeroes and Y 2 domains, Z 1. At the end (t = 200000) X is a's
# alone (saves 0), the zeroes a+b, Y a+e, Z b+e: 3 saved, 2 of them across
# domains (one a zero page).
#
# With use_zero_pages 1 a:0 and b:0 map the zero page instead at 32000,
# both within (the zero page is everyone's): across 26000 29000 31000 (p50
# the 2nd, 29000; p90 31000), within 23000 24000 27000 28500 30000 30500
# (p50 the 3rd, 27000; p90 the 6th, 30500); d2's across: 26000 29000;
# saved: Y, Z and the two zero PTEs = 4, across 1 (Y).
#
# fork.ksmt: q is forked from p, then writes a page equal to r's; pass 2
# at 32000 merges them (q's at 1000: 31000; r's at 2000: 30000). q is p's
# domain: with d1 = {p} the merge is across and d1's row holds q's 31000;
# with d1 = {p, r} it is within.
set -u
bin=$1
dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

check() {	# check NAME EXPECTED-CSV -- RUN-ARGS...
	local name=$1 want=$2; shift 3
	if ! "$bin" run --quiet --exposure-csv "$tmp/got.csv" "$@" 2>"$tmp/err"; then
		echo "FAIL $name: run failed: $(cat "$tmp/err")"; fail=1; return
	fi
	grep -v '^#' "$tmp/got.csv" > "$tmp/got"
	if ! diff -u <(printf '%s\n' "$want") "$tmp/got"; then
		echo "FAIL $name: figures differ (above)"; fail=1
	fi
}

# figures DOMAINS ROW...: the exposure CSV the rows make, in its order: cross
# and within (write_to_merge_us, merged_us, domains_at_peak), each domain of
# DOMAINS (write_to_merge_us, merged_us), all (zero_merges, saved_pages,
# saved_cross_pages, saved_cross_zero_pages). A row is count,p50,p90,p99,max;
# a count alone has no percentiles.
figures() {
	local -a rows=(cross,write_to_merge_us cross,merged_us cross,domains_at_peak
		within,write_to_merge_us within,merged_us within,domains_at_peak)
	local d
	for d in $1; do
		rows+=("domain:$d,write_to_merge_us" "domain:$d,merged_us")
	done
	rows+=(all,zero_merges all,saved_pages all,saved_cross_pages all,saved_cross_zero_pages)
	# the unmap channel's rows, given only when the trace unmaps or unmerges
	local -a unmap=(cross,unmap_reveal_us within,unmap_reveal_us)
	for d in $1; do
		unmap+=("domain:$d,unmap_reveal_us" "domain:$d,unmaps")
	done
	unmap+=(all,unmaps all,unmap_reveals_in_chain)
	shift
	if [ $# = $((${#rows[@]} + ${#unmap[@]})) ]; then
		rows+=("${unmap[@]}")
	elif [ $# != ${#rows[@]} ]; then
		echo "figures: ${#rows[@]} rows wanted, $# given" >&2; exit 1
	fi
	echo "scope,figure,count,p50,p90,p99,max"
	for d in "${rows[@]}"; do
		case $1 in *,*) echo "$d,$1" ;; *) echo "$d,$1,,,," ;; esac
		shift
	done
}

two=$dir/two_domains.ksmt
check two-domains "$(figures "d1 d2" \
	5,29000,31000,31000,31000 1,68000,68000,68000,68000 3,2,2,2,2 \
	4,24000,30000,30000,30000 1,118000,118000,118000,118000 1,1,1,1,1 \
	2,30500,31000,31000,31000 0 \
	3,28500,29000,29000,29000 1,68000,68000,68000,68000 \
	0 3 2 1 \
	1,145000,145000,145000,145000 0 \
	1,145000,145000,145000,145000 1 0 0 \
	1 0)" -- --trace "$two" --domain d1=a,c --domain d2=b,e

check zero-page "$(figures "d1 d2" \
	3,29000,31000,31000,31000 1,68000,68000,68000,68000 2,2,2,2,2 \
	6,27000,30500,30500,30500 1,118000,118000,118000,118000 1,1,1,1,1 \
	1,31000,31000,31000,31000 0 \
	2,26000,29000,29000,29000 1,68000,68000,68000,68000 \
	2 4 1 0 \
	1,145000,145000,145000,145000 0 \
	1,145000,145000,145000,145000 1 0 0 \
	1 0)" -- --trace "$two" --domain d1=a,c --domain d2=b,e --use-zero-pages 1

cat > "$tmp/fork.ksmt" <<'T'
ksmtrace 3
0 spawn p
0 fork p q
0 map q 0x1000 1
0 advise q 0x1000 1 mergeable
0 spawn r
0 map r 0x1000 1
0 advise r 0x1000 1 mergeable
1000 write q 0x1000 byte:11
2000 write r 0x1000 byte:11
10000 set run 1
100000 mark end
T
check fork-across "$(figures d1 \
	2,30000,31000,31000,31000 0 1,2,2,2,2 \
	0 0 0 \
	1,31000,31000,31000,31000 0 \
	0 1 1 0)" -- --trace "$tmp/fork.ksmt" --domain d1=p
check fork-within "$(figures d1 \
	0 0 0 \
	2,30000,31000,31000,31000 0 1,1,1,1,1 \
	0 0 \
	0 1 0 0)" -- --trace "$tmp/fork.ksmt" --domain d1=p,r

# The unmap channel (unmap.ksmt, d1 = {a, c}, d2 = {b, e}; f a domain of its
# own). Pass 2 at 32000 merges a:X + b:X, a:Y + c:Y, e:W + f:W. Only the
# time of a page's last write before its merge and of the unmap count:
#   100000 b unmaps X: a maps it too (mapcount 2), across: 100000 - 3000 = 97000 (d2)
#   150000 e unmerges W: break_ksm faults on any KSM page; f maps W, across:
#          150000 - 5000 = 145000 (d2)
#   190000 a unmaps X (now a's alone, mapcount 1: freed, nothing shows) and
#          Y (c maps it, within d1): 190000 - 2000 = 188000
#   195000 c exits: Y is c's alone, nothing shows
# Unmaps: 5 present PTEs, d1's 3 (a 2, c 1), d2's 2. Cross 97000 145000:
# p50 the 1st, p90 the 2nd. No chain.
# Chain (max_page_sharing 2): p, q, r (d1) and s (d2) hold one page: the
# dups {p, q} and {r, s}; s's unmap at 300000 shows r's mapping (d1),
# across and in a chain: 300000 - 4000 (s's write) = 296000.
unmap_rows() {	# unmap_rows NAME EXPECTED -- RUN-ARGS...: the unmap channel's rows only
	local name=$1 want=$2; shift 3
	if ! "$bin" run --quiet --exposure-csv "$tmp/got.csv" "$@" 2>"$tmp/err"; then
		echo "FAIL $name: run failed: $(cat "$tmp/err")"; fail=1; return
	fi
	grep -E '^[^#].*,(unmap_reveal_us|unmaps|unmap_reveals_in_chain),' "$tmp/got.csv" > "$tmp/got"
	if ! diff -u <(printf '%s\n' "$want") "$tmp/got"; then
		echo "FAIL $name: unmap figures differ (above)"; fail=1
	fi
}
unmap_rows unmap "cross,unmap_reveal_us,2,97000,145000,145000,145000
within,unmap_reveal_us,1,188000,188000,188000,188000
domain:d1,unmap_reveal_us,0,,,,
domain:d1,unmaps,3,,,,
domain:d2,unmap_reveal_us,2,97000,145000,145000,145000
domain:d2,unmaps,2,,,,
all,unmaps,5,,,,
all,unmap_reveals_in_chain,0,,,," -- --trace "$dir/unmap.ksmt" --domain d1=a,c --domain d2=b,e
{
	echo "ksmtrace 1"
	echo "0 set max_page_sharing 2"
	for m in p q r s; do echo "0 spawn $m"; echo "0 map $m 0x1000 1"; echo "0 advise $m 0x1000 1 mergeable"; done
	echo "1000 write p 0x1000 byte:11"; echo "2000 write q 0x1000 byte:11"
	echo "3000 write r 0x1000 byte:11"; echo "4000 write s 0x1000 byte:11"
	echo "10000 set run 1"; echo "300000 unmap s 0x1000 1"; echo "400000 mark end"
} > "$tmp/chain.ksmt"
unmap_rows unmap-chain "cross,unmap_reveal_us,1,296000,296000,296000,296000
within,unmap_reveal_us,0,,,,
domain:d1,unmap_reveal_us,0,,,,
domain:d1,unmaps,0,,,,
domain:d2,unmap_reveal_us,1,296000,296000,296000,296000
domain:d2,unmaps,1,,,,
all,unmaps,1,,,,
all,unmap_reveals_in_chain,1,,,," -- --trace "$tmp/chain.ksmt" --domain d1=p,q,r --domain d2=s
# A trace that never unmaps nor unmerges has no unmap rows (fork.ksmt above).
"$bin" run --quiet --trace "$tmp/fork.ksmt" --exposure-csv "$tmp/nounmap.csv"
! grep -q unmap "$tmp/nounmap.csv" || { echo "FAIL: unmap rows without an unmap"; fail=1; }

# Determinism: the same run twice, byte for byte.
"$bin" run --quiet --trace "$two" --domain d1=a,c --exposure-csv "$tmp/1.csv"
"$bin" run --quiet --trace "$two" --domain d1=a,c --exposure-csv "$tmp/2.csv"
cmp -s "$tmp/1.csv" "$tmp/2.csv" || { echo "FAIL: exposure CSV not deterministic"; fail=1; }

# --domain errors: one line naming the option, exit 2, no output left.
expect() {	# expect PATTERN -- ARGS...
	local pat=$1; shift 2
	"$bin" run --trace "$two" --exposure-csv "$tmp/out.csv" "$@" >"$tmp/out" 2>"$tmp/err"
	local got=$?
	if [ "$got" != 2 ] || ! grep -qF -e "$pat" "$tmp/err" || [ "$(wc -l < "$tmp/err")" != 1 ]; then
		echo "FAIL: --domain $*: exit $got, stderr: $(cat "$tmp/err")"; fail=1
	fi
	if [ -e "$tmp/out.csv" ] || [ -s "$tmp/out" ]; then
		echo "FAIL: $*: left output"; fail=1; rm -f "$tmp/out.csv"
	fi
}
expect "ksmsim run: --domain d1=...: no mm 'zz' in" -- --domain d1=a,zz
expect "ksmsim run: --domain d2=...: no mm 'zz' in" -- --domain d1=a --domain d2=zz
expect "ksmsim run: --domain 'd2=b,a': mm 'a' is already in domain 'd1'" -- --domain d1=a --domain d2=b,a
expect "ksmsim run: --domain '=a': an empty domain name" -- --domain =a
expect "ksmsim run: --domain 'd1': NAME=MM[,MM...] expected" -- --domain d1
expect "ksmsim run: --domain 'd1=': domain 'd1' names no mm" -- --domain d1=
expect "ksmsim run: --domain 'd1=a,,b': an empty mm name in domain 'd1'" -- --domain d1=a,,b
expect "ksmsim run: --domain 'd1=b': domain 'd1' is given twice" -- --domain d1=a --domain d1=b
expect "ksmsim run: --domain 'd1=a,a': mm 'a' is listed twice in domain 'd1'" -- --domain d1=a,a
# a pipe is read once: the missing mm is found at its end, and still no output
"$bin" run --trace - --exposure-csv "$tmp/out.csv" --domain d1=zz < "$two" >"$tmp/out" 2>"$tmp/err"
if [ $? != 2 ] || ! grep -qF "no mm 'zz'" "$tmp/err" || [ -e "$tmp/out.csv" ]; then
	echo "FAIL: --domain on a pipe: $(cat "$tmp/err")"; fail=1
fi
exit $fail
