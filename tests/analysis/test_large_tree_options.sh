#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# analysis/large-tree.sh's option errors: one line naming the option, exit 2,
# before any trace is made or run (nothing here runs ksmsim); and
# --summarise-only --keep-runs remakes the committed summary from runs.csv.
set -uo pipefail
src=${1:?usage: test_large_tree_options.sh SOURCE_ROOT}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
bad() { # WHAT PATTERN ARGS...
	local what=$1 pat=$2; shift 2
	timeout 60 "$src/analysis/large-tree.sh" --out "$tmp/out" --results "$tmp/res" "$@" >"$tmp/o" 2>"$tmp/e"
	local rc=$?
	[[ $rc == 2 ]] || fail "$what: exit $rc, not 2"
	[[ $(wc -l <"$tmp/e") == 1 ]] || fail "$what: not one line: $(cat "$tmp/e")"
	grep -q -- "$pat" "$tmp/e" || fail "$what: no '$pat' in: $(cat "$tmp/e")"
	[[ ! -e $tmp/out/g16 ]] || fail "$what: made a size folder"
}
bad max-memory-unit "--max-memory 12X" --max-memory 12X
bad max-memory-empty "--max-memory" --max-memory ""
bad max-memory-negative "--max-memory -4G" --max-memory -4G
bad estimate "--estimate x" --estimate x
bad probe "--probe 64" --probe 64
bad sizes "--sizes 16,x" --sizes 16,x
bad workload "--workload bogus: large-tree or large-tree-crc" --workload bogus
bad nice "--nice x: a number" --nice x
# checked before any trace is generated (issue 46: they waited for every trace)
bad hashes "--hashes: unknown checksum 'bogus'" --sizes 16 --seeds 1 --hashes xxhash,bogus
bad jobs "--jobs wants a positive number, not '0'" --sizes 16 --seeds 1 --jobs 0
bad jobs-word "--jobs wants a positive number, not 'x'" --sizes 16 --seeds 1 --jobs x
bad max-memory-zero "--max-memory 0: a size above 0" --sizes 16 --seeds 1 --max-memory 0
"$src/analysis/large-tree.sh" --help | grep -q -- "--max-memory SIZE" || fail "--help does not name --max-memory"
# --summarise-only --keep-runs remakes the summary from runs.csv alone (no
# cells, no run): the committed one
mkdir -p "$tmp/keep"
cp "$src/analysis/results/large-tree/runs.csv" "$tmp/keep/"
"$src/analysis/large-tree.sh" --summarise-only --keep-runs --out "$tmp/out" --results "$tmp/keep" \
	>"$tmp/o" 2>"$tmp/e" || fail "--summarise-only --keep-runs: $(cat "$tmp/e")"
cmp -s "$tmp/keep/summary.csv" "$src/analysis/results/large-tree/summary.csv" ||
	fail "--summarise-only --keep-runs gave another summary"
cmp -s "$tmp/keep/runs.csv" "$src/analysis/results/large-tree/runs.csv" ||
	fail "--summarise-only --keep-runs changed runs.csv"
# without --keep-runs there is nothing to summarise
"$src/analysis/large-tree.sh" --summarise-only --out "$tmp/out2" --results "$tmp/keep" >"$tmp/o" 2>"$tmp/e" &&
	fail "--summarise-only with no cells and no --keep-runs succeeded"
grep -q "no run done yet" "$tmp/e" || fail "no runs: $(cat "$tmp/e")"
echo "ok"
