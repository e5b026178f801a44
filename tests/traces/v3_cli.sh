#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ksmsim trace with version 3 traces: cat and convert keep version 3, the
# new verbs and THP advice, stat counts them, merge keeps the highest version
# and refuses a fork child whose name another input has live, naming that
# input's line.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

cat > "$tmp/a.ksmt" <<'T'
ksmtrace 3
0 spawn a
0 map a 0x10 4
0 fill a 0x10 4 byte:01
1 fork a a2
2 prctl a2 memory-merge 1
3 prctl a memory-merge 1
4 prctl a memory-merge 0
T
printf 'ksmtrace 1\n0 spawn b\n0 map b 0x10 1\n5 exit b\n' > "$tmp/b.ksmt"
printf 'ksmtrace 1\n0 spawn a2\n' > "$tmp/c.ksmt"

"$bin" trace cat "$tmp/a.ksmt" > "$tmp/cat" || bad "trace cat refused a v3 trace"
cmp -s "$tmp/cat" "$tmp/a.ksmt" || bad "trace cat changed a canonical v3 trace: $(diff "$tmp/a.ksmt" "$tmp/cat")"
for ext in ksmb ksmt.gz; do
	"$bin" trace convert "$tmp/a.ksmt" "$tmp/a.$ext" || bad "convert to .$ext"
	"$bin" trace cat "$tmp/a.$ext" | cmp -s - "$tmp/a.ksmt" || bad ".$ext is not lossless"
done
[ "$(od -An -tx1 -j8 -N1 "$tmp/a.ksmb" | tr -d ' ')" = 03 ] || bad "binary version byte is not 03"

"$bin" trace stat "$tmp/a.ksmb" > "$tmp/stat" || bad "trace stat refused a v3 trace"
grep -qx 'version         3' "$tmp/stat" || bad "stat: version: $(cat "$tmp/stat")"
grep -qx 'mms             1 spawned, 1 forked, at most 2 live, 2 live at the end' "$tmp/stat" ||
	bad "stat: mms line: $(grep ^mms "$tmp/stat")"
grep -qx 'pages mapped    at most 8 at once (0.0 MiB), 8 at the end' "$tmp/stat" ||
	bad "stat: pages mapped: $(grep '^pages mapped' "$tmp/stat")"
grep -qx 'forks           1' "$tmp/stat" || bad "stat: forks line missing"
grep -qx 'prctls          3 (memory-merge 1: 2, memory-merge 0: 1)' "$tmp/stat" ||
	bad "stat: prctls line: $(grep ^prctls "$tmp/stat")"
grep -qE '^fork +1$' "$tmp/stat" || bad "stat: no fork row in the verb table"
grep -qE '^prctl +3$' "$tmp/stat" || bad "stat: no prctl row in the verb table"
# a v1 trace's stat has no version 3 lines
"$bin" trace stat "$tmp/b.ksmt" > "$tmp/stat1" || bad "trace stat refused a v1 trace"
grep -qE '^(forks|prctls) ' "$tmp/stat1" && bad "stat of a v1 trace prints forks or prctls"
grep -qx 'mms             1 spawned, at most 1 live, 0 live at the end' "$tmp/stat1" ||
	bad "stat of a v1 trace: mms line: $(grep ^mms "$tmp/stat1")"

# merge: the highest version, fork records kept whole
"$bin" trace merge "$tmp/b.ksmt" "$tmp/a.ksmt" "$tmp/m.ksmt" || bad "merge of v1 and v3 refused"
head -1 "$tmp/m.ksmt" | grep -qx 'ksmtrace 3' || bad "merge output is not version 3"
grep -qx '1 fork a a2' "$tmp/m.ksmt" || bad "merge lost the fork"
"$bin" trace merge "$tmp/b.ksmt" "$tmp/a.ksmt" "$tmp/m.ksmb" || bad "binary merge refused"
"$bin" trace cat "$tmp/m.ksmb" | cmp -s - "$tmp/m.ksmt" || bad "binary merge differs from text merge"
# a child name another input has live is a clash, blamed on the fork's line
"$bin" trace merge "$tmp/c.ksmt" "$tmp/a.ksmt" "$tmp/x.ksmt" 2> "$tmp/err" && bad "merge accepted a clashing child name"
grep -qx "ksmsim trace: $tmp/a.ksmt:5: child mm 'a2' already exists (in the merged trace)" "$tmp/err" ||
	bad "merge clash message: $(cat "$tmp/err")"
[ -e "$tmp/x.ksmt" ] && bad "merge left an output after an error"

# a v2 header with a fork, through every command
printf 'ksmtrace 2\n0 spawn a\n0 fork a b\n' > "$tmp/v2.ksmt"
for sub in cat stat; do
	"$bin" trace $sub "$tmp/v2.ksmt" > /dev/null 2> "$tmp/err" && bad "trace $sub accepted fork in v2"
	grep -qx "ksmsim trace: $tmp/v2.ksmt:3: fork needs header 'ksmtrace 3' (this file is version 2)" "$tmp/err" ||
		bad "trace $sub: $(cat "$tmp/err")"
done

# THP advice: cat and convert keep it, stat counts it (version 3 only)
cat > "$tmp/h.ksmt" <<'T'
ksmtrace 3
0 spawn vm0
0 map vm0 0x100000 2048
0 advise vm0 0x100000 2048 hugepage
0 advise vm0 0x100000 2048 mergeable
1 fill vm0 0x100000 4 zero
2 advise vm0 0x100200 512 nohugepage
3 advise vm0 0x100400 1024 hugepage
T
"$bin" trace cat "$tmp/h.ksmt" > "$tmp/cat" || bad "trace cat refused THP advice"
cmp -s "$tmp/cat" "$tmp/h.ksmt" || bad "trace cat changed THP advice: $(diff "$tmp/h.ksmt" "$tmp/cat")"
for ext in ksmb ksmt.gz; do
	"$bin" trace convert "$tmp/h.ksmt" "$tmp/h.$ext" || bad "convert THP advice to .$ext"
	"$bin" trace cat "$tmp/h.$ext" | cmp -s - "$tmp/h.ksmt" || bad "THP advice: .$ext is not lossless"
done
"$bin" trace convert "$tmp/h.ksmb" "$tmp/h2.ksmb" || bad "convert THP advice binary to binary"
cmp -s "$tmp/h.ksmb" "$tmp/h2.ksmb" || bad "THP advice: binary -> binary changed the bytes"
[ "$(od -An -tx1 -j8 -N1 "$tmp/h.ksmb" | tr -d ' ')" = 03 ] || bad "THP advice: binary version byte is not 03"
for f in h.ksmt h.ksmb; do
	"$bin" trace stat "$tmp/$f" > "$tmp/stat" || bad "trace stat refused THP advice ($f)"
	grep -qx 'hugepage advice 2 ranges, 3072 pages (nohugepage: 1 ranges, 512 pages)' "$tmp/stat" ||
		bad "stat $f: hugepage advice line: $(grep '^hugepage' "$tmp/stat")"
	grep -qE '^advise +4$' "$tmp/stat" || bad "stat $f: advise row: $(grep ^advise "$tmp/stat")"
done
# a v3 trace without it says 0; v1 and v2 traces have no such line
"$bin" trace stat "$tmp/a.ksmt" > "$tmp/stat" || bad "trace stat refused a v3 trace"
grep -qx 'hugepage advice 0 ranges, 0 pages (nohugepage: 0 ranges, 0 pages)' "$tmp/stat" ||
	bad "stat of a v3 trace without THP advice: $(grep '^hugepage' "$tmp/stat")"
printf 'ksmtrace 2\n0 spawn b\n0 map b 0x10 1\n0 advise b 0x10 1 mergeable\n' > "$tmp/b2.ksmt"
for f in b.ksmt b2.ksmt; do
	"$bin" trace stat "$tmp/$f" > "$tmp/stat1" || bad "trace stat refused $f"
	grep -q '^hugepage' "$tmp/stat1" && bad "stat of $f prints hugepage advice"
done
# merge: a v1 trace and THP advice give version 3
"$bin" trace merge "$tmp/b.ksmt" "$tmp/h.ksmt" "$tmp/hm.ksmb" || bad "merge with THP advice refused"
"$bin" trace cat "$tmp/hm.ksmb" > "$tmp/hm.ksmt" || bad "cat of the merged THP trace"
head -1 "$tmp/hm.ksmt" | grep -qx 'ksmtrace 3' || bad "merge with THP advice is not version 3"
grep -qx '2 advise vm0 0x100200 512 nohugepage' "$tmp/hm.ksmt" || bad "merge lost the nohugepage advice"

# the words need a version 3 header, through every command; a bad word lists the version's words
printf 'ksmtrace 2\n0 spawn a\n0 map a 0x10 512\n0 advise a 0x10 512 hugepage\n' > "$tmp/h2.ksmt"
printf 'ksmtrace 3\n0 spawn a\n0 map a 0x10 512\n0 advise a 0x10 512 huge\n' > "$tmp/h3bad.ksmt"
printf 'ksmtrace 1\n0 spawn a\n0 map a 0x10 512\n0 advise a 0x10 512 huge\n' > "$tmp/h1bad.ksmt"
for sub in cat stat; do
	"$bin" trace $sub "$tmp/h2.ksmt" > /dev/null 2> "$tmp/err" && bad "trace $sub accepted hugepage in v2"
	grep -qx "ksmsim trace: $tmp/h2.ksmt:4: advise hugepage needs header 'ksmtrace 3' (this file is version 2)" "$tmp/err" ||
		bad "trace $sub hugepage in v2: $(cat "$tmp/err")"
	"$bin" trace $sub "$tmp/h3bad.ksmt" > /dev/null 2> "$tmp/err" && bad "trace $sub accepted a bad advice word"
	grep -qx "ksmsim trace: $tmp/h3bad.ksmt:4: expected mergeable, unmergeable, hugepage or nohugepage, got 'huge'" "$tmp/err" ||
		bad "trace $sub bad word in v3: $(cat "$tmp/err")"
	"$bin" trace $sub "$tmp/h1bad.ksmt" > /dev/null 2> "$tmp/err" && bad "trace $sub accepted a bad advice word"
	grep -qx "ksmsim trace: $tmp/h1bad.ksmt:4: expected mergeable or unmergeable, got 'huge'" "$tmp/err" ||
		bad "trace $sub bad word in v1: $(cat "$tmp/err")"
done
"$bin" trace convert "$tmp/h2.ksmt" "$tmp/v2h.ksmb" 2> /dev/null && bad "convert accepted hugepage in v2"
[ -e "$tmp/v2h.ksmb" ] && bad "convert left an output after an error"
exit $fail
