#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ksmsim tune's apply and reproduce lines: the sysfs writes it prints set
# exactly the pick's knobs (the CSV row's), the restore lines name every
# knob it writes, and its `ksmsim run` line, run, gives the pick's row
# (ksmd_cpu_ms, pages saved at the end); the band holds the pick and only
# settings within its CPU +- --cpu-spread; MiB and % of the mapped memory
# agree with the pages; progress lines carry an ETA.
#   test_tune_apply.sh KSMSIM SOURCE_DIR
set -uo pipefail
ksmsim=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
trace=$src/traces/samples/default.ksmt

"$ksmsim" tune "$trace" --jobs 2 --cpu-spread 20 -o "$tmp/t.csv" > "$tmp/t.txt" 2> "$tmp/t.err" ||
	fail "tune: $(cat "$tmp/t.err")"
grep -Eq '^ksmsim tune: 24/24 .*ETA [0-9]+ s\)$' "$tmp/t.err" || fail "no ETA: $(tail -2 "$tmp/t.err")"
grep -q '^Band: ksmd CPU .* +-20% ' "$tmp/t.txt" || fail "no band line"
# the echo lines of "Apply it" and of "Restore"
sed -n '/^Apply it/,/^Restore/p' "$tmp/t.txt" | grep '^  echo ' > "$tmp/apply"
sed -n '/^Restore/,/^$/p' "$tmp/t.txt" | grep '^  echo ' > "$tmp/restore"
line=$(sed -n '/^Reproduce its row/{n;p}' "$tmp/t.txt" | sed 's/^  //')
[ -n "$line" ] || fail "no reproduce line"
python3 - "$tmp/t.csv" "$tmp/apply" "$tmp/restore" "$tmp/t.txt" <<'P' || fail "apply lines or band"
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
pick = [r for r in rows if r['recommended'] == '1'][0]
writes = [re.fullmatch(r'  echo (\S+) > /sys/kernel/mm/ksm/(\w+)\n', l).groups() for l in open(sys.argv[2])]
knobs = [k for v, k in writes]
assert writes[0] == ('2', 'run') and writes[-1] == ('1', 'run'), writes
got = {k: v for v, k in writes[1:-1]}
want = {'advisor_mode': pick['advisor_mode'], 'sleep_millisecs': pick['sleep_millisecs'],
        'smart_scan': pick['smart_scan'], 'use_zero_pages': pick['use_zero_pages'],
        'max_page_sharing': pick['max_page_sharing']}
if pick['advisor_mode'] == 'none':
    want['pages_to_scan'] = pick['pages_to_scan']
else:
    want['advisor_target_scan_time'] = pick['advisor_target_scan_time']
assert got == want, (got, want)
restore = [re.fullmatch(r'  echo (\S+) > /sys/kernel/mm/ksm/(\w+)\n', l).groups() for l in open(sys.argv[3])]
assert restore[0] == ('2', 'run') and restore[-1][1] == 'run', restore
assert set(knobs) <= {k for v, k in restore}, 'every knob written is restored'
# the band: the pick and exactly the rows whose CPU is within its +-20%
pc = float(pick['ksmd_cpu_pct'])
for r in rows:
    inside = pc * 0.8 <= float(r['ksmd_cpu_pct']) <= pc * 1.2 or r is pick
    assert (r['in_band'] == '1') == inside, r
    assert abs(float(r['saved_mean_mib']) - float(r['saved_mean']) * 4096 / 2**20) < 0.001, r
    assert abs(float(r['saved_mean_pct_mapped']) - 100 * float(r['saved_mean']) / int(r['mapped_pages'])) < 0.001, r
assert int(pick['mapped_pages']) == 6000, pick['mapped_pages']   # trace stat's "at most 6000"
text = open(sys.argv[4]).read()
listed = re.findall(r'^  (\S+(?: \S+)*?) +[0-9.]+%  .* of the pick', text, re.M)
assert len(listed) == sum(r['in_band'] == '1' for r in rows), (listed, 'band rows')
P
# the reproduce line, run: the pick's row
case $line in "ksmsim run --trace "*) ;; *) fail "reproduce line: $line" ;; esac
case $line in *" --summary-csv pick-summary.csv") ;; *) fail "reproduce line writes no summary: $line" ;; esac
line=${line% pick-summary.csv}
eval "\"\$ksmsim\" ${line#ksmsim } \"\$tmp/s.csv\" --quiet" || fail "reproduce line failed: $line"
python3 - "$tmp/t.csv" "$tmp/s.csv" <<'P' || fail "the reproduce line's run differs from the pick's row"
import csv, sys
pick = [r for r in csv.DictReader(open(sys.argv[1])) if r['recommended'] == '1'][0]
s = list(csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith('#')))[-1]
assert abs(float(s['ksmd_cpu_ms']) - float(pick['ksmd_cpu_ms'])) < 0.01, (s['ksmd_cpu_ms'], pick['ksmd_cpu_ms'])
assert int(s['pages_sharing']) + int(s['ksm_zero_pages']) == int(pick['saved_end']), (s, pick['saved_end'])
P
# a trace path with a blank and a quote reaches the line quoted for the shell
cp "$trace" "$tmp/it's here.ksmt"
"$ksmsim" tune "$tmp/it's here.ksmt" --setting pages_to_scan=1000 --quiet > "$tmp/q.txt" || fail "tune on a quoted name"
line=$(sed -n '/^Reproduce its row/{n;p}' "$tmp/q.txt" | sed 's/^  //')
(cd "$tmp" && eval "\"\$ksmsim\" ${line#ksmsim } --quiet") || fail "quoted reproduce line failed: $line"
# --cpu-spread refuses what is not a percentage, one line
"$ksmsim" tune "$trace" --cpu-spread 100 > "$tmp/o" 2> "$tmp/e"
[ $? = 2 ] && [ ! -s "$tmp/o" ] && [ "$(wc -l < "$tmp/e")" = 1 ] || fail "--cpu-spread 100 accepted"
echo ok
