#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# analysis/run_times.sh without measuring anything: the READMEs' run-time
# markers against the committed analysis/results/run-times.csv (every
# marker names a CSV id and carries the figure --update-docs would write,
# every CSV id is quoted and is one the script measures), then the checker,
# the rewrite, the CSV merge and the format rule on small fixtures, so that
# each way of failing is seen to fail.
# usage: test_run_times.sh SOURCE-ROOT
set -uo pipefail
src=${1:?usage: test_run_times.sh SOURCE-ROOT}
rt=$src/analysis/run_times.sh
py=$src/analysis/run_times.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect CODE PATTERN DESCRIPTION -- CMD...: exit CODE and PATTERN in its stderr+stdout
expect() {
	local code=$1 pat=$2 what=$3
	shift 4
	"$@" >"$tmp/out" 2>&1
	local rc=$?
	if [[ $rc -eq $code ]] && grep -qE -- "$pat" "$tmp/out"; then
		ok "$what"
	else
		bad "$what (exit $rc, want $code and /$pat/):"
		cat "$tmp/out"
	fi
}

# 1. The repository as committed.
expect 0 ' 0 problems' "the READMEs' markers match analysis/results/run-times.csv" -- "$rt" --check
n=$(grep -c '<!-- run-time: ' "$src/README.md" "$src/analysis/README.md" \
	"$src/workloads/README.md" "$src/workloads/vm/README.md" | awk -F: '{ s += $2 } END { print s }')
[[ $n -ge 20 ]] && ok "$n README lines with markers" || bad "only $n README lines with markers"
"$rt" --list >"$tmp/list"
[[ $(wc -l <"$tmp/list") -eq $(($(wc -l <"$src/analysis/results/run-times.csv") - 1)) ]] &&
	ok "one CSV row per registry id" || bad "CSV rows and registry ids differ in number"
expect 0 'usage: analysis/run_times.sh' "--help" -- "$rt" --help
for o in $(grep -oE '^\s+--[a-z-]+\)' "$rt" | tr -d ' \t)'); do
	"$rt" --help | grep -q -- "$o" && ok "--help names $o" || bad "--help does not name $o"
done
expect 2 "no id 'nosuch'" "--only with an unknown id" -- "$rt" --only gen-iozone,nosuch --dry-run
expect 2 'unknown option --bogus' "an unknown option" -- "$rt" --bogus
expect 0 'gen-iozone: ksmsim gen iozone' "--dry-run --only runs nothing but lists it" -- \
	"$rt" --only gen-iozone --dry-run

# 2. The format rule.
"$py" format 0.1449 0.145 5.03 1.62 84 125 599 1082 >"$tmp/fmt"
printf '%s\n' "0.14 s" "0.15 s" "5 s" "1.6 s" "84 s" "130 s" "10 min" "18 min" | diff - "$tmp/fmt" >/dev/null &&
	ok "format: 2 significant digits, minutes from 600 s" || { bad "format:"; cat "$tmp/fmt"; }

# 3. The checker on a fixture.
hdr=id,command,wall_s,cpu_s,max_rss_mib,runs,commit,cpu_model,nproc,loadavg_1m,nice,date_utc,note
cat >"$tmp/rt.csv" <<EOF
$hdr
fast,ksmsim gen x,0.31,0.1449,4.2,3,abc1234,AMD EPYC,2,1.0,19,2026-12-05T10:00:00Z,
slow,ksmsim run y,1100,1082,900,1,abc1234,AMD EPYC,2,1.0,19,2026-12-05T10:00:00Z,
guest,sudo boot,,,,,,,,,,,not measured yet: needs root
EOF
cat >"$tmp/good.md" <<'EOF'
Generating takes 0.14 s<!-- run-time: fast --> of CPU, 0.31 s<!-- run-time: fast wall --> wall;
a run **18 min<!-- run-time: slow -->**; a guest 25.2 s<!-- run-time: guest wall -->.
A marker in code is text: `9 s<!-- run-time: nosuch -->`
```
7 s<!-- run-time: Bad_ID -->
```
EOF
chk() { "$py" check --csv "$tmp/rt.csv" --ids fast,slow,guest --docs "$@"; }
expect 0 ' 0 problems' "a fixture whose figures match" -- chk "$tmp/good.md"
expect 0 'not measured yet.*guest' "an id not yet measured is listed" -- chk "$tmp/good.md"
sed 's/0.14 s/0.2 s/' "$tmp/good.md" >"$tmp/stale.md"
expect 1 "stale.md:1: fast: '0.2 s' but the CSV gives '0.14 s'" "a stale figure" -- chk "$tmp/stale.md"
sed 's/0.31 s/0.14 s/' "$tmp/good.md" >"$tmp/wall.md"
expect 1 "wall.md:1: fast: '0.14 s' but the CSV gives '0.31 s' \(wall\)" "CPU where wall is asked" -- chk "$tmp/wall.md"
{ cat "$tmp/good.md"; echo 'and 3 s<!-- run-time: unknown-id -->'; } >"$tmp/unknown.md"
expect 1 "unknown.md:7: run-time id 'unknown-id' is not in the CSV" "an unknown id" -- chk "$tmp/unknown.md"
for m in '3 s<!-- run-time: Bad_ID -->' '3 s<!-- run-time:fast -->' '3 s <!-- run-time: fast -->' \
	'3 secs<!-- run-time: fast -->' '3 s<!-- run-time: fast cpu -->' 'about<!-- run-time: fast -->'; do
	{ cat "$tmp/good.md"; echo "and $m"; } >"$tmp/malformed.md"
	expect 1 'malformed.md:7: a run-time marker not of the form' "malformed: $m" -- chk "$tmp/malformed.md"
done
sed 's/<!-- run-time: slow -->//' "$tmp/good.md" >"$tmp/unused.md"
expect 1 "id 'slow' is quoted by no marker" "a CSV id no marker quotes" -- chk "$tmp/unused.md"
expect 1 "id 'slow' is not one run_times.sh measures" "a CSV id not in the registry" -- \
	"$py" check --csv "$tmp/rt.csv" --ids fast,guest --docs "$tmp/good.md"
expect 1 "id 'extra' has no row" "a registry id without a row" -- \
	"$py" check --csv "$tmp/rt.csv" --ids fast,slow,guest,extra --docs "$tmp/good.md"
sed 's/,note$/,notes/' "$tmp/rt.csv" >"$tmp/cols.csv"
expect 1 'columns are not' "a CSV with other columns" -- \
	"$py" check --csv "$tmp/cols.csv" --ids fast,slow,guest --docs "$tmp/good.md"

# 4. --update-docs mends the stale figure and nothing else.
cp "$tmp/stale.md" "$tmp/mend.md"
"$py" update-docs --csv "$tmp/rt.csv" --docs "$tmp/mend.md" 2>/dev/null
cmp -s "$tmp/mend.md" "$tmp/good.md" && ok "update-docs rewrites a stale figure, leaves the rest" ||
	{ bad "update-docs:"; diff "$tmp/good.md" "$tmp/mend.md"; }

# 5. merge: new rows replace, unmeasured ids keep theirs, a changed command
# empties its row, the registry's order and ids.
printf 'fast\t-\tksmsim gen x\nslow\tlong\tksmsim run y --changed\nguest\troot\tsudo boot\nnew\t-\tksmsim new\n' >"$tmp/reg.tsv"
printf 'new\t1.5\t1.25\t10.0\t3\tdef5678-dirty\tAMD EPYC\t2\t3.5\t19\t2026-12-05T11:00:00Z\n' >"$tmp/rows.tsv"
cp "$tmp/rt.csv" "$tmp/merged.csv"
"$py" merge --csv "$tmp/merged.csv" --new "$tmp/rows.tsv" --registry "$tmp/reg.tsv"
cat >"$tmp/want.csv" <<EOF
$hdr
fast,ksmsim gen x,0.31,0.1449,4.2,3,abc1234,AMD EPYC,2,1.0,19,2026-12-05T10:00:00Z,
slow,ksmsim run y --changed,,,,,,,,,,,"not measured yet: takes long: measured only with --long, kept from run to run without it"
guest,sudo boot,,,,,,,,,,,"not measured yet: needs root, QEMU, Slurm or the network: measured only with --with-root, kept from run to run without it"
new,ksmsim new,1.5,1.25,10.0,3,def5678-dirty,AMD EPYC,2,3.5,19,2026-12-05T11:00:00Z,
EOF
diff "$tmp/want.csv" "$tmp/merged.csv" >/dev/null && ok "merge" || { bad "merge:"; diff "$tmp/want.csv" "$tmp/merged.csv"; }

echo "$fails failures"
[[ $fails -eq 0 ]]
