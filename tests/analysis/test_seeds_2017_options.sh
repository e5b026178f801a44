#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# analysis/seeds-2017.sh's option errors: one line naming the option, exit 2,
# before any folder is made or trace generated (nothing here runs ksmsim);
# and --summarise-only --keep-runs --timings 2 with only timing 0's runs in
# runs.csv keeps them byte for byte and summarises them (n = 5, 1 timing).
set -uo pipefail
src=${1:?usage: test_seeds_2017_options.sh SOURCE_ROOT KSMSIM}
export KSMSIM=${2:?usage: test_seeds_2017_options.sh SOURCE_ROOT KSMSIM}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
bad() { # WHAT PATTERN ARGS...
	local what=$1 pat=$2; shift 2
	timeout 60 "$src/analysis/seeds-2017.sh" --out "$tmp/out" --results "$tmp/res" "$@" >"$tmp/o" 2>"$tmp/e"
	local rc=$?
	[[ $rc == 2 ]] || fail "$what: exit $rc, not 2"
	[[ $(wc -l <"$tmp/e") == 1 ]] || fail "$what: not one line: $(cat "$tmp/e")"
	grep -q -- "$pat" "$tmp/e" || fail "$what: no '$pat' in: $(cat "$tmp/e")"
	[[ ! -e $tmp/out && ! -e $tmp/res ]] || fail "$what: made a folder"
}
bad timings-zero "--timings 0: a number of timing replicates, 1 to 99" --timings 0
bad timings-word "--timings x: a number of timing replicates, 1 to 99" --timings x
bad timings-large "--timings 100: a number of timing replicates, 1 to 99" --timings 100
bad timings-negative "--timings -1: a number of timing replicates" --timings -1
bad timings-leading-zero "--timings 02: a number of timing replicates" --timings 02
bad kernel "--kernel 5.4: 6.1 or 6.18" --kernel 5.4
bad seeds "--seeds 1,x: a comma list of numbers" --seeds 1,x
bad jobs "--jobs 0: a number of runs at a time" --jobs 0
bad option "unknown option --bogus" --bogus
"$src/analysis/seeds-2017.sh" --help | grep -q -- "--timings" || fail "--help does not name --timings"
# the figure's KERNEL label reaches gnuplot: only a plain name is taken
if command -v gnuplot >/dev/null; then
	"$src/analysis/plot_2017_seeds.sh" "$src/analysis/results/2017/seeds/summary.csv" "$tmp/fig" 'x" ; system "true' \
		>"$tmp/o" 2>"$tmp/e" && fail "plot_2017_seeds.sh took a KERNEL with quotes"
	grep -q "KERNEL .*: letters, digits, dots and spaces" "$tmp/e" || fail "plot KERNEL: $(cat "$tmp/e")"
	[[ ! -e $tmp/fig ]] || fail "plot KERNEL refused: a folder was made"
fi

# the committed 6.18 grid: timing 0 is kept, timing 1 has no run yet
mkdir -p "$tmp/keep"
grep -v -- '-t[0-9]*\.ksmt,' "$src/analysis/results/2017/seeds/runs.csv" >"$tmp/keep/runs.csv"
cp "$tmp/keep/runs.csv" "$tmp/runs0.csv"
"$src/analysis/seeds-2017.sh" --summarise-only --keep-runs --timings 2 \
	--out "$tmp/out" --results "$tmp/keep" >"$tmp/o" 2>"$tmp/e" || fail "--summarise-only --keep-runs: $(cat "$tmp/e")"
grep -q "timing 0: every run is in .*runs.csv, kept" "$tmp/e" || fail "timing 0 not kept: $(cat "$tmp/e")"
grep -q "timing 1: no run done yet" "$tmp/e" || fail "timing 1 not reported missing: $(cat "$tmp/e")"
cmp -s "$tmp/runs0.csv" "$tmp/keep/runs.csv" || fail "--keep-runs changed runs.csv"
awk -F, '$1 == "iozone" && $2 == "crc32c" && $3 == "cow_ksm_vs_jhash2_pct" {ok = ($4 == 5 && $10 == 5 &&
	$11 == 1)} END {exit !ok}' "$tmp/keep/summary.csv" || fail "summary of timing 0: $(grep cow_ksm_vs "$tmp/keep/summary.csv")"
# without --keep-runs and with no sweep output there is nothing to summarise
"$src/analysis/seeds-2017.sh" --summarise-only --timings 2 --out "$tmp/out2" --results "$tmp/keep" >"$tmp/o" 2>"$tmp/e" ||
	fail "--summarise-only with nothing done: exit $?"
grep -q "no run done yet" "$tmp/e" || fail "--summarise-only with nothing done: $(cat "$tmp/e")"
echo ok
