#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ksmsim gen probe: deterministic by seed; its options documented and
# checked; the attacker's copies merge with the victim's pages across
# domains (one merge each when written once, after the probe write), and
# under selective they never do.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
fig() {	# fig CSV SCOPE FIGURE COLUMN (3 count .. 7 max)
	awk -F, -v s="$2" -v f="$3" -v c="$4" '$1 == s && $2 == f { print $c }' "$1"
}

opts="--scale 0.01 --vms 2 --duration-s 60 --probe-pages 20 --probe-at 5"
"$bin" gen probe $opts --seed 3 -o "$tmp/a.ksmt" || bad "gen probe"
"$bin" gen probe $opts --seed 3 -o "$tmp/b.ksmt" || bad "gen probe again"
"$bin" gen probe $opts --seed 4 -o "$tmp/c.ksmt" || bad "gen probe seed 4"
cmp -s "$tmp/a.ksmt" "$tmp/b.ksmt" || bad "same seed, different traces"
cmp -s "$tmp/a.ksmt" "$tmp/c.ksmt" && bad "seeds 3 and 4 gave one trace"
grep -q '^5000000 fillseq attacker 0x100000 20 ' "$tmp/a.ksmt" || bad "no probe write at 5 s"
[ "$(grep -c 'fillseq attacker' "$tmp/a.ksmt")" = 1 ] || bad "written more than once without --probe-every"
"$bin" gen probe $opts --probe-every 10 -o "$tmp/p.ksmt" || bad "gen probe --probe-every"
[ "$(grep -c 'fillseq attacker' "$tmp/p.ksmt")" = 6 ] || bad "not 6 probe writes at 5, 15 .. 55 s"
"$bin" gen probe --advisor $opts -o "$tmp/adv.ksmt" && grep -q '^0 set advisor_mode scan-time$' "$tmp/adv.ksmt" ||
	bad "--advisor sets no advisor_mode"

help=$("$bin" gen --help)
for o in --probe-pages --probe-at --probe-every --probe-spread --probe-channel --advisor; do
	grep -q -e "$o" <<<"$help" || bad "gen --help does not document $o"
done
"$bin" gen probe --help | grep -q 'domain:attacker' || bad "gen probe --help says not how to run it"

for args in "--probe-pages 0" "--probe-at -1" "--probe-every x" "--probe-every 0.0001"; do
	"$bin" gen probe $args -o "$tmp/x.ksmt" 2>"$tmp/err" && bad "gen probe $args accepted"
	[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -e "${args%% *}" "$tmp/err" || bad "$args: $(cat "$tmp/err")"
done
"$bin" gen vm-clones --probe-pages 5 -o "$tmp/x.ksmt" 2>"$tmp/err" && bad "vm-clones took --probe-pages"
grep -q "only probe takes them" "$tmp/err" || bad "vm-clones --probe-pages: $(cat "$tmp/err")"
[ -e "$tmp/x.ksmt" ] && bad "a refused gen left a file"

# spread: page i of 20 at 5 + i x 10 / 20 s, and the same bytes as the victim's page i
"$bin" gen probe $opts --probe-spread 10 -o "$tmp/s.ksmt" || bad "gen probe --probe-spread"
grep -q '^14500000 write attacker 0x100013 rand:' "$tmp/s.ksmt" || bad "page 19 not written at 14.5 s"
"$bin" gen probe --probe-every 1 --probe-spread 2 -o "$tmp/x.ksmt" 2>/dev/null && bad "spread > every accepted"
dom="--domain victim=victim --domain attacker=attacker"
"$bin" run --quiet --trace "$tmp/s.ksmt" $dom --exposure-csv "$tmp/sp.csv" --pages-to-scan 100 \
	--sleep-millisecs 20 || bad "run spread"
# (smart scan: the victim's pages, aged by then, are processed on fewer passes,
# so not every copy meets its twin within the minute; those that do merge across)
n=$(fig "$tmp/sp.csv" domain:attacker write_to_merge_us 3)
[ "$n" -ge 1 ] && [ "$n" -le 20 ] || bad "spread copies merged $n times"
"$bin" run --quiet --check --trace "$tmp/a.ksmt" $dom --exposure-csv "$tmp/k.csv" \
	--pages-to-scan 100 --sleep-millisecs 20 || bad "run"
n=$(fig "$tmp/k.csv" domain:attacker write_to_merge_us 3)
[ "$n" = 20 ] || bad "the attacker's 20 copies merged $n times"
[ "$(fig "$tmp/k.csv" domain:victim write_to_merge_us 3)" = 20 ] || bad "the victim's pages"
# merged after the probe write at 5 s and before the end at 60 s
max=$(fig "$tmp/k.csv" domain:attacker write_to_merge_us 7)
[ -n "$max" ] && [ "$max" -gt 0 ] && [ "$max" -le 55000000 ] || bad "attacker max $max"
"$bin" run --quiet --check --trace "$tmp/a.ksmt" $dom --exposure-csv "$tmp/s.csv" \
	--pages-to-scan 100 --sleep-millisecs 20 --policy selective || bad "run selective"
[ "$(fig "$tmp/s.csv" domain:attacker write_to_merge_us 3)" = 0 ] || bad "selective let the attacker merge"
[ "$(fig "$tmp/s.csv" cross write_to_merge_us 3)" = 0 ] || bad "selective merged across domains"
# --probe-channel: unmap reads each round's copies by munmap (map, advise
# and write again), unmerge by MADV_UNMERGEABLE; once, at the end. The
# CoW channel's trace is the one it was (no probe_channel word).
grep -q probe_channel "$tmp/a.ksmt" && bad "the cow trace names a channel"
"$bin" gen probe $opts --seed 3 --probe-channel cow -o "$tmp/cow.ksmt" && cmp -s "$tmp/a.ksmt" "$tmp/cow.ksmt" ||
	bad "--probe-channel cow changed the trace"
"$bin" gen probe $opts --probe-every 10 --probe-channel unmap -o "$tmp/u.ksmt" || bad "gen unmap"
[ "$(grep -c '^[0-9]* unmap attacker 0x100000 20$' "$tmp/u.ksmt")" = 5 ] || bad "not 5 unmaps at 15 .. 55 s"
grep -q '^15000000 unmap attacker 0x100000 20$' "$tmp/u.ksmt" || bad "no unmap at 15 s"
grep -q 'probe_channel=unmap' "$tmp/u.ksmt" || bad "the unmap trace's gen line names no channel"
"$bin" gen probe $opts --probe-channel unmerge -o "$tmp/m.ksmt" || bad "gen unmerge"
grep -q '^60000000 advise attacker 0x100000 20 unmergeable$' "$tmp/m.ksmt" || bad "no unmerge at the end"
for ch in unmap unmerge; do
	t=$tmp/u.ksmt; [ $ch = unmerge ] && t=$tmp/m.ksmt
	"$bin" run --quiet --check --trace "$t" $dom --exposure-csv "$tmp/$ch.csv" \
		--pages-to-scan 100 --sleep-millisecs 20 || bad "run $ch"
	n=$(fig "$tmp/$ch.csv" domain:attacker unmap_reveal_us 3)
	u=$(fig "$tmp/$ch.csv" domain:attacker unmaps 3)
	# every round's 20 copies merged before the next read: each read reveals them all
	[ "$n" = "$u" ] && [ "$n" -ge 20 ] || bad "$ch: $n reveals of $u unmaps"
	[ "$(fig "$tmp/$ch.csv" domain:victim unmaps 3)" = 0 ] || bad "$ch: the victim unmapped"
done
# once, at 60 s, of copies written at 5 s: every reveal 55 s after the write
[ "$(fig "$tmp/unmerge.csv" domain:attacker unmap_reveal_us 7)" = 55000000 ] || bad "unmerge at the end"
"$bin" gen probe --probe-channel bogus -o "$tmp/x.ksmt" 2>"$tmp/err" && bad "--probe-channel bogus accepted"
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -e --probe-channel "$tmp/err" || bad "bogus: $(cat "$tmp/err")"
"$bin" gen vm-clones --probe-channel unmap -o "$tmp/x.ksmt" 2>/dev/null && bad "vm-clones took --probe-channel"
exit $fail
