#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_tune.sh KSMSIM SRCDIR: `ksmsim tune` on the bundled default trace: a
# recommendation within the budget that saves the most, a CSV of one
# complete row per setting and a PNG; the same bytes with --jobs 1 and 2;
# a row equal to `ksmsim run` with the same knobs; --setting, --cpu-budget
# and --costs-csv doing what they say; --replot of the CSV giving the plot's
# bytes, a malformed CSV refused with CSV:LINE; bad options refused with one
# line naming the option and no output. Exit 0 pass, 1 fail.
set -uo pipefail
ksmsim=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
trace=$src/traces/samples/default.ksmt

# 1. the default grid: report, CSV, plot
"$ksmsim" tune "$trace" --jobs 2 -o "$tmp/a.csv" --plot "$tmp/a.png" >"$tmp/a.txt" 2>"$tmp/a.err" ||
	fail "tune exited $?: $(cat "$tmp/a.err")"
grep -q '^Recommended for a budget of 5% of one CPU: pages_to_scan=[0-9]* sleep_millisecs=' "$tmp/a.txt" ||
	fail "no recommendation: $(cat "$tmp/a.txt")"
grep -q '^Why: of the [0-9]* settings within the budget it saves the most' "$tmp/a.txt" ||
	fail "no reason given"
grep -q 'ksmd CPU from the built-in cost table' "$tmp/a.txt" || fail "the report does not say the built-in cost table is used"
[[ "$(head -c 8 "$tmp/a.png" | od -An -tx1 | tr -d ' \n')" == 89504e470d0a1a0a ]] || fail "--plot wrote no PNG"
python3 - "$tmp/a.csv" "$trace" <<'P' || fail "CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 24, f'{len(rows)} rows, want 24'
for r in rows:
    assert r['trace'] == sys.argv[2], r['trace']
    assert r['costs'] == 'built-in' and r['cpu_budget_pct'] == '5.000', r
    assert all(r[k] != '' for k in ('pages_to_scan', 'sleep_millisecs', 'smart_scan', 'use_zero_pages',
                                    'max_page_sharing', 'ksmd_cpu_pct', 'saved_mean', 'saved_end',
                                    'ideal_saved_end', 'cow_per_s', 'rmap_bytes', 'general_profit')), r
    # rmap_bytes is what general_profit leaves of the saving
    assert int(r['saved_end']) * 4096 - int(r['general_profit']) == int(r['rmap_bytes']), r
    assert int(r['saved_end']) <= int(r['ideal_saved_end']), r
    assert (float(r['ksmd_cpu_pct']) <= 5) == (r['within_budget'] == '1'), r
    if r['t50_s'] and r['t90_s']:
        assert float(r['t50_s']) <= float(r['t90_s']), r
s = [(r['pages_to_scan'], r['sleep_millisecs'], r['advisor_mode']) for r in rows]
assert s[0] == ('100', '20', 'none') and s[6] == ('3000', '20', 'none'), s
assert sum(r['advisor_mode'] == 'scan-time' for r in rows) == 4
pick = [r for r in rows if r['recommended'] == '1']
assert len(pick) == 1, 'one recommendation'
within = [r for r in rows if r['within_budget'] == '1']
assert within and pick[0] in within, 'the pick is within the budget'
assert float(pick[0]['saved_mean']) == max(float(r['saved_mean']) for r in within), 'the pick saves the most'
assert pick[0]['frontier'] == '1', 'the pick is on the frontier'
# the kernel default saves less on average than 3000/20 (Meta's finding)
assert float(rows[0]['saved_mean']) < float(rows[6]['saved_mean'])
assert float(rows[0]['ksmd_cpu_pct']) < float(rows[6]['ksmd_cpu_pct'])
P
name=$(python3 -c 'import csv,sys; print(next(r for r in csv.DictReader(open(sys.argv[1])) if r["recommended"] == "1")["setting"])' "$tmp/a.csv")
grep -qE "^$name .* pick\$" "$tmp/a.txt" || fail "the table does not mark $name as the pick"

# 2. the same bytes with one worker
"$ksmsim" tune "$trace" --jobs 1 -o "$tmp/b.csv" --plot "$tmp/b.png" >"$tmp/b.txt" 2>/dev/null ||
	fail "tune --jobs 1 exited $?"
cmp "$tmp/a.txt" "$tmp/b.txt" || fail "report differs between --jobs 2 and --jobs 1"
cmp "$tmp/a.csv" "$tmp/b.csv" || fail "CSV differs between --jobs 2 and --jobs 1"
cmp "$tmp/a.png" "$tmp/b.png" || fail "plot differs between --jobs 2 and --jobs 1"

# 3. a row is what `ksmsim run` says with the same knobs pinned
"$ksmsim" tune "$trace" --setting pages_to_scan=1000,sleep_millisecs=50 \
	--setting pages_to_scan=2000,sleep_millisecs=20,use_zero_pages=1 -o "$tmp/s.csv" \
	--cpu-budget 100 >"$tmp/s.txt" 2>/dev/null || fail "tune --setting exited $?"
python3 - "$tmp/s.csv" <<'P' || fail "--setting rows"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [(r['setting'], r['use_zero_pages']) for r in rows] == [('1000/50', '0'), ('2000/20 zero_pages', '1')], rows
assert rows[1]['recommended'] == '1', 'budget 100%: the one that saves more'
P
"$ksmsim" run --quiet --trace "$trace" --batch-time --interval-ms 100 --pages-to-scan 1000 \
	--sleep-millisecs 50 --smart-scan 1 --use-zero-pages 0 --max-page-sharing 256 \
	--summary-csv "$tmp/run.csv" || fail "run"
python3 - "$tmp/s.csv" "$tmp/run.csv" <<'P' || fail "tune's row differs from run's"
import csv, sys
t = next(csv.DictReader(open(sys.argv[1])))
r = next(csv.DictReader(open(sys.argv[2])))
assert t['ksmd_cpu_ms'] == r['ksmd_cpu_ms'], (t['ksmd_cpu_ms'], r['ksmd_cpu_ms'])
assert t['saved_end'] == str(int(r['pages_sharing']) + int(r['ksm_zero_pages'])), (t['saved_end'], r['pages_sharing'])
assert t['cow_ksm'] == r['cow_ksm'] and t['general_profit'] == r['general_profit'], (t, r)
assert t['saved_mean'] == r['avg_saved'], (t['saved_mean'], r['avg_saved'])
P

# 4. a budget nothing meets: the cheapest, and the report says so
"$ksmsim" tune "$trace" --cpu-budget 0.01 >"$tmp/c.txt" 2>/dev/null || fail "tune --cpu-budget 0.01 exited $?"
grep -q '^Why: no setting stays within 0.01% of one CPU; 100/20 is the cheapest' "$tmp/c.txt" ||
	fail "budget 0.01%: $(grep -A1 ^Recommended "$tmp/c.txt")"

# 5. a cost table of this machine's: named in the report and the CSV, CPU changes
printf '%s\n' 'name,kind,bits,hot_ns_per_page,hot_gib_s,cold_ns_per_page,cold_gib_s,ratio_to_jhash2' \
	'xxhash,checksum,32,400,9.5,800,4.8,0.5' 'memcmp,two-page,0,500,7.6,1000,3.8,1' \
	'copy,two-page,0,600,6.3,1200,3.2,1' > "$tmp/costs.csv"
"$ksmsim" tune "$trace" --setting pages_to_scan=1000,sleep_millisecs=50 --costs-csv "$tmp/costs.csv" \
	-o "$tmp/k.csv" >"$tmp/k.txt" 2>/dev/null || fail "tune --costs-csv exited $?"
grep -qF "ksmd CPU from the cost table $tmp/costs.csv (--costs-csv)" "$tmp/k.txt" || fail "--costs-csv not named"
python3 - "$tmp/k.csv" "$tmp/s.csv" "$tmp/costs.csv" <<'P' || fail "--costs-csv row"
import csv, sys
k = next(csv.DictReader(open(sys.argv[1])))
s = next(csv.DictReader(open(sys.argv[2])))
assert k['costs'] == sys.argv[3], k['costs']
assert float(k['ksmd_cpu_ms']) > float(s['ksmd_cpu_ms']), (k['ksmd_cpu_ms'], s['ksmd_cpu_ms'])
P

# 6. --replot: the CSV of section 1 drawn again is the plot section 1 drew, byte
# for byte; the header before the mapped-memory columns is read too; a bad
# CSV is refused with CSV:LINE, exit 2, no PNG
"$ksmsim" tune --replot "$tmp/a.csv" --plot "$tmp/r.png" >"$tmp/r.out" 2>"$tmp/r.err" ||
	fail "tune --replot exited $?: $(cat "$tmp/r.err")"
[[ -s $tmp/r.out || -s $tmp/r.err ]] && fail "--replot printed: $(cat "$tmp/r.out" "$tmp/r.err")"
cmp "$tmp/a.png" "$tmp/r.png" || fail "--replot of tune's CSV differs from tune's --plot"
python3 - "$tmp/a.csv" "$tmp" <<'P' || fail "making the bad CSVs"
import csv, sys
src, d = sys.argv[1], sys.argv[2]
lines = open(src).read().splitlines(keepends=True)
rows = list(csv.reader(lines))
head = rows[0]
def put(name, rs):
    with open(f'{d}/{name}.csv', 'w', newline='') as f:
        csv.writer(f, lineterminator='\n').writerows(rs)
# the older header: without the mapped memory and the band's columns
old = [c for c in head if c not in ('saved_mean_mib', 'saved_mean_pct_mapped', 'mapped_pages',
                                    'cpu_spread_pct', 'ksmd_cpu_pct_low', 'ksmd_cpu_pct_high', 'in_band')]
put('old', [[r[head.index(c)] for c in old] for r in rows])
col = {c: i for i, c in enumerate(head)}
def edit(name, line, column, value):
    rs = [list(r) for r in rows]
    rs[line - 1][col[column]] = value
    put(name, rs)
edit('cpu', 3, 'ksmd_cpu_pct', 'fast')
edit('name', 4, 'setting', '999/20')
edit('mode', 5, 'advisor_mode', 'auto')
edit('flag', 6, 'smart_scan', '2')
edit('budget', 7, 'cpu_budget_pct', '7.000')
# the pick moved to another row: the rows say otherwise
pick = next(i for i, r in enumerate(rows) if r[col['recommended']] == '1')
other = next(i for i, r in enumerate(rows) if i and r[col['recommended']] == '0')
rs = [list(r) for r in rows]
rs[pick][col['recommended']], rs[other][col['recommended']] = '0', '1'
put('pick', rs)
put('short', [rows[0], rows[1], rows[2][:-1]])
put('head', [['trace', 'setting'] + head[2:-1]] + rows[1:])
put('empty', [rows[0]])
open(f'{d}/quote.csv', 'w').write(lines[0] + lines[1] + '"unterminated' + lines[2])
P
"$ksmsim" tune --replot "$tmp/old.csv" --plot "$tmp/o.png" 2>"$tmp/o.err" ||
	fail "--replot, older header: $(cat "$tmp/o.err")"
[[ "$(head -c 8 "$tmp/o.png" | od -An -tx1 | tr -d ' \n')" == 89504e470d0a1a0a ]] ||
	fail "--replot, older header: no PNG"
refused() {	# OUTPUT EXPECTED-TEXT ARGS...: exit 2, one line naming it, no OUTPUT
	local out=$1 want=$2
	shift 2
	rm -f "$out"
	"$ksmsim" tune "$@" >"$tmp/r.out" 2>"$tmp/r.err"
	local rc=$?
	[[ $rc -eq 2 ]] || fail "tune $*: exit $rc, want 2"
	[[ $(wc -l <"$tmp/r.err") -eq 1 ]] || fail "tune $*: not one line: $(cat "$tmp/r.err")"
	grep -qF -- "$want" "$tmp/r.err" || fail "tune $*: $(cat "$tmp/r.err"), want '$want'"
	[[ -s "$tmp/r.out" ]] && fail "tune $*: printed $(cat "$tmp/r.out")"
	[[ -e "$out" ]] && fail "tune $*: left $out"
	return 0
}
badre() { refused "$tmp/y.png" "$@"; }	# EXPECTED-TEXT ARGS...
r() { badre "$1" --replot "$tmp/$2.csv" --plot "$tmp/y.png"; }
r "cpu.csv:3: ksmd_cpu_pct wants a number, not 'fast'" cpu
r "name.csv:4: setting '999/20' is not what its knobs say" name
r "mode.csv:5: advisor_mode wants none or scan-time, not 'auto'" mode
r "flag.csv:6: smart_scan wants 0..1, not '2'" flag
r "budget.csv:7: cpu_budget_pct '7.000' differs from the first row's '5.000'" budget
r "pick.csv:" pick
grep -q 'recommended is [01], but the rows' "$tmp/r.err" || fail "a moved pick: $(cat "$tmp/r.err")"
r "short.csv:3: 35 fields, the header has 36" short
r "head.csv:1: not the header 'ksmsim tune -o' writes" head
r "empty.csv:1: no rows after the header" empty
r "quote.csv:3: unterminated quoted field" quote
r "none.csv" none
badre "--replot wants --plot PNG" --replot "$tmp/a.csv"
badre "--replot takes no TRACE nor run options" --replot "$tmp/a.csv" --plot "$tmp/y.png" "$trace"
badre "unknown option" --replot "$tmp/a.csv" --plot "$tmp/y.png" --jobs 2

# 7. bad usage: one line naming the option, exit 2, no output file
bad() {	# EXPECTED-TEXT ARGS...
	local want=$1
	shift
	refused "$tmp/x.csv" "$want" "$@" -o "$tmp/x.csv"
}
bad "--cpu-budget wants a percentage of one CPU, more than 0 and at most 100, not '0'" "$trace" --cpu-budget 0
bad "--cpu-budget wants" "$trace" --cpu-budget 101
bad "--cpu-budget wants" "$trace" --cpu-budget five
bad "--jobs wants 1 to 256 worker processes, not '0'" "$trace" --jobs 0
bad "--setting: 'fast' is not KNOB=VALUE" "$trace" --setting fast
bad "--setting: unknown knob 'pages'" "$trace" --setting pages=100
bad "--setting: pages_to_scan wants 0..4294967295, not 'x'" "$trace" --setting pages_to_scan=x
bad "--setting: pages_to_scan cannot be set with the advisor" "$trace" --setting advisor=1,pages_to_scan=100
bad "--pages-to-scan: tune sets pages_to_scan in each setting (see --setting)" "$trace" --pages-to-scan 100
bad "--costs-csv" "$trace" --costs-csv "$tmp/missing.csv"
bad "a TRACE is required" --cpu-budget 5
bad "TRACE is read once per run" -
bad "$tmp/none.ksmt: cannot open" "$tmp/none.ksmt"
bad "unknown option" "$trace" --bogus
printf 'ksmtrace 1\n0 spawn a\n0 map a 0x10 1\n0 wirte a 0x10 zero\n' > "$tmp/bad.ksmt"
bad "bad.ksmt:4: unknown verb 'wirte'" "$tmp/bad.ksmt"
# grep reads it all: with pipefail, grep -q's early exit would make a SIGPIPE a failure
"$ksmsim" tune --help | grep '^usage: ksmsim tune TRACE' >/dev/null || fail "--help"
echo "ok"
