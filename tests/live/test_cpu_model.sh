#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The model's ksmd CPU against the live ksmd's (sim/MODEL.md, "Calibrating
# the cost table"): three held-out cases in which the live ksmd spends over
# 200 ms, each replayed live once and through the model with the cost table
# fitted for this CPU (bench/tables/, by /proc/cpuinfo's model name;
# skipped where none is), the last mark's ksmd_cpu_ms within +-35%
# (`ksmsim diff --only ksmd_cpu_ms --cpu-tolerance 35` on that row).
# The held-out check on the reference machine gave 1.02-1.14 for these
# three (sim/MODEL.md); 35% is the margin for the live ksmd's own spread
# on this VM type: scale_mixed_1m took 20.5 s live 40 minutes after the
# table was fitted, 22.2 s when it was, 27.9 s in a CI run (1.36x). The
# table fitted before chain steps and cold levels were terms gave 0.68.
# Skipped (77) where live KSM cannot be used. usage: test_cpu_model.sh KSMSIM CASES-DIR TABLES-DIR
set -u
bin=${1:?usage: test_cpu_model.sh KSMSIM CASES-DIR TABLES-DIR}
cases=${2:?}
tables=${3:?}
if ! why=$("$bin" live --check 2>&1); then
	echo "SKIP: live KSM is not usable here: $why"
	exit 77
fi
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1)
slug=$(printf '%s' "$cpu" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//')
costs=()
if [ -f "$tables/costs-$slug.csv" ]; then
	costs=(--costs-csv "$tables/costs-$slug.csv")
	echo "table: $tables/costs-$slug.csv"
else
	# the claim is about a table fitted on the machine at hand: without one
	# for this CPU model there is nothing to hold the model to
	echo "SKIP: no cost table fitted for '$cpu' ($tables/costs-$slug.csv): run 'ksmsim bench calibrate -o $tables/costs-$slug.csv' on this machine"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
last_row() {	# the header and the last row of a marks file
	grep -v '^#' "$1" | sed -n '1p;$p'
}
for c in scale_mixed_1m scale_chains_1m scale_midpass_1m; do
	"$bin" live --trace "$cases/$c.ksmt" --marks-csv "$tmp/live.csv" >"$tmp/out" 2>&1 ||
		{ echo "FAIL $c: live: $(tail -n 1 "$tmp/out")"; fails=$((fails + 1)); continue; }
	"$bin" run --trace "$cases/$c.ksmt" "${costs[@]}" --marks-csv "$tmp/model.csv" >/dev/null 2>"$tmp/out" ||
		{ echo "FAIL $c: model: $(tail -n 1 "$tmp/out")"; fails=$((fails + 1)); continue; }
	last_row "$tmp/live.csv" >"$tmp/l.csv"
	last_row "$tmp/model.csv" >"$tmp/m.csv"
	tol=35
	if "$bin" diff "$tmp/l.csv" "$tmp/m.csv" --only ksmd_cpu_ms --cpu-tolerance "$tol" \
		--cpu-floor-ms 0 >"$tmp/diff" 2>&1; then
		echo "ok   $c (+-$tol%): $(grep -E '^[^ ]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +ok' "$tmp/diff")"
	else
		echo "FAIL $c:"; sed 's/^/     /' "$tmp/diff"
		fails=$((fails + 1))
	fi
done
echo "$((3 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
