#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The operator's path on a small workload, end to end on the live KSM: two
# copies of a program started through `ksmsim merge-exec` (32 MiB each,
# every page different within a copy and the same across copies), attached
# by `record --pid`, `tune` on the trace (its reproduce line gives the
# pick's row), then `verify` of the pick on the same processes: live
# pages_sharing within +-10% of the model's at every sample after the
# first, ksmd's CPU measured, the CSV and --json agreeing, and every KSM
# knob as it was afterwards. Skips (77) without root, live KSM or
# PR_SET_MEMORY_MERGE, or when another process uses KSM. Run it under the
# machine's live lock when others share it: flock /tmp/ksm-live.lock ...
#   test_verify_live.sh KSMSIM
set -uo pipefail
ksmsim=$1
ksm=/sys/kernel/mm/ksm
skip() { echo "skipped: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root"
[ -w $ksm/run ] || skip "no live KSM here"
"$ksmsim" merge-exec -- true 2> /dev/null || skip "no PR_SET_MEMORY_MERGE"
tmp=$(mktemp -d)
pids=
cleanup() {
	for p in $pids; do kill "$p" 2> /dev/null; done
	for p in $pids; do wait "$p" 2> /dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
knobs() { for f in $(find $ksm -maxdepth 1 -type f -perm -u+w | sort); do echo "$(basename "$f")=$(cat "$f")"; done; }
knobs > "$tmp/knobs.before"

# the workload: 8192 pages, page i holding i over and over; then it idles
cat > "$tmp/work.py" <<'P'
import sys, time
b = bytearray(4096 * 8192)
for i in range(8192):
    b[i * 4096:(i + 1) * 4096] = i.to_bytes(4, 'little') * 1024
open(sys.argv[1], 'w').write('ready')
time.sleep(600)
P
for i in 1 2; do
	"$ksmsim" merge-exec -- python3 "$tmp/work.py" "$tmp/ready$i" &
	pids="$pids $!"
done
for i in 1 2; do
	for _ in $(seq 100); do [ -s "$tmp/ready$i" ] && break; sleep 0.1; done
	[ -s "$tmp/ready$i" ] || fail "workload $i did not start"
done
plist=$(echo $pids | tr ' ' ,)

"$ksmsim" record --pid "$plist" --max-seconds 10 --interval-ms 500 --quiet -o "$tmp/t.ksmb" \
	2> "$tmp/rec.err" || fail "record: $(cat "$tmp/rec.err")"
"$ksmsim" tune "$tmp/t.ksmb" --quiet --setting pages_to_scan=100,sleep_millisecs=20 \
	--setting pages_to_scan=2000,sleep_millisecs=20 --setting pages_to_scan=1000,sleep_millisecs=50 \
	-o "$tmp/tune.csv" > "$tmp/tune.txt" || fail "tune"
line=$(sed -n '/^Reproduce its row/{n;p}' "$tmp/tune.txt" | sed 's/^  //')
line=${line% pick-summary.csv}
eval "\"\$ksmsim\" ${line#ksmsim } \"\$tmp/s.csv\" --quiet" || fail "reproduce line: $line"
spec=$(python3 - "$tmp/tune.csv" "$tmp/s.csv" <<'P'
import csv, sys
pick = [r for r in csv.DictReader(open(sys.argv[1])) if r['recommended'] == '1'][0]
s = list(csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith('#')))[-1]
assert abs(float(s['ksmd_cpu_ms']) - float(pick['ksmd_cpu_ms'])) < 0.01, 'cpu'
assert int(s['pages_sharing']) + int(s['ksm_zero_pages']) == int(pick['saved_end']), 'saved'
print('pages_to_scan=%s,sleep_millisecs=%s' % (pick['pages_to_scan'], pick['sleep_millisecs']))
P
) || fail "the reproduce line's run is not the pick's row"

"$ksmsim" verify --trace "$tmp/t.ksmb" --setting "$spec" --pid "$plist" --minutes 0.15 \
	--every 3 --csv "$tmp/v.csv" --json > "$tmp/v.json" 2> "$tmp/v.err"
rc=$?
if [ $rc = 2 ] && grep -q 'in use by another process' "$tmp/v.err"; then
	skip "$(cat "$tmp/v.err")"
fi
[ $rc = 0 ] || fail "verify exit $rc: $(cat "$tmp/v.err")"
knobs > "$tmp/knobs.after"
diff "$tmp/knobs.before" "$tmp/knobs.after" > /dev/null || fail "knobs changed: $(diff "$tmp/knobs.before" "$tmp/knobs.after")"
python3 -m json.tool "$tmp/v.json" > /dev/null || fail "--json does not parse"
python3 - "$tmp/v.csv" "$tmp/v.json" <<'P' || fail "verify's samples: $(cat "$tmp/v.csv")"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
j = json.load(open(sys.argv[2]))
assert j['command'] == 'verify' and len(j['samples']) == len(rows) == 3, (len(rows), j)
for r, o in zip(rows, j['samples']):
    assert set(o) == set(r), 'the JSON carries the CSV fields'
    assert float(o['t_s']) == float(r['t_s'])
for r in rows[1:]:
    ratio = int(r['live_pages_sharing']) / int(r['model_pages_sharing'])
    assert 0.9 <= ratio <= 1.1, r
    assert float(r['live_ksmd_cpu_ms']) > 0, r
assert int(rows[-1]['live_pages_sharing']) >= 8000, rows[-1]
P
# the processes are gone: verify refuses, one line, before touching KSM
kill $pids; wait $pids 2> /dev/null; dead=$plist; pids=
"$ksmsim" verify --trace "$tmp/t.ksmb" --setting "$spec" --pid "$dead" > /dev/null 2> "$tmp/e"
[ $? = 2 ] && [ "$(wc -l < "$tmp/e")" = 1 ] && grep -q 'no such process' "$tmp/e" || fail "dead pid: $(cat "$tmp/e")"
echo ok
