#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The model's ksmd CPU against the live ksmd's, on any machine with live KSM
# (sim/MODEL.md, "Calibrating the cost table"). A table fitted on another
# machine, or on this one in another state, proves nothing here: the live
# ksmd's prices move with the host (the built-in table, fitted on an AMD EPYC
# VM, charged 1.38x, 1.71x and 0.95x the live ksmd on the three 1 Mi-page
# conformance cases on the same VM type a day later). So the test first fits
# a table on this machine (`ksmsim bench calibrate --repeat 1` with the
# blind fit of ksmd's total CPU, KSMSIM_CALIBRATE_BLIND=1; about 1.5 minutes
# quiet), then replays five held-out traces none of whose shapes is a
# calibration scenario (cpu/make_heldout.sh: mixed, chains, churn, distinct,
# revisits) once live and through the model with that table, and holds the
# last mark's ksmd_cpu_ms within +-TOL% (default 35: one live replay each,
# on a machine that may be shared). And it must still see broken pricing:
# the same table with the checksum's price times 10 must put at least one
# trace outside the tolerance (a case of the test, "broken-price"), else the
# check is too blunt to mean anything and the test fails.
# Why the blind fit here and not the profile-priced table calibrate makes
# by default: on 2026-12-06 (AMD EPYC, Linux 6.18.44, one run each at load
# 2-5) the profile-priced table put mixed at 1.386 (outside) and every
# held-out trace above 1.13, while the blind fit put all five at
# 0.86-1.24. Priced term by term, the model misses mixed (shares right,
# total ~1.4x: sim/MODEL.md, "Calibrating from the profile"); until that is
# found, the total this test holds is the blind fit's.
# Skipped (77) where live KSM cannot be used.
# usage: test_cpu_model.sh KSMSIM MAKE-HELDOUT [TOL [TABLE]]
# (TABLE: use that table instead of calibrating, to try the check quickly)
set -u
bin=${1:?usage: test_cpu_model.sh KSMSIM MAKE-HELDOUT [TOL [TABLE]]}
make_heldout=${2:?}
tol=${3:-35}
table=${4:-}
# .ci/run's sanitizer pass sets KSMSIM_CI_SANITIZED: the pricing checked
# here is arithmetic the plain pass already held to the live ksmd, and a
# calibration under ASan would add ten minutes for nothing the sanitizers see.
if [ -n "${KSMSIM_CI_SANITIZED:-}" ]; then
	echo "SKIP: sanitizer build (the plain build's run holds the CPU check)"
	exit 77
fi
if ! why=$("$bin" live --check 2>&1); then
	echo "SKIP: live KSM is not usable here: $why"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "cpu: $(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1), $(uname -r)"
if [ -z "$table" ]; then
	table=$tmp/costs.csv
	KSMSIM_CALIBRATE_BLIND=1 "$bin" bench calibrate --repeat 1 -o "$table" >"$tmp/calibrate" 2>&1
	rc=$?
	if [ "$rc" -eq 77 ]; then
		echo "SKIP: $(tail -n 1 "$tmp/calibrate")"
		exit 77
	fi
	if [ "$rc" -ne 0 ]; then
		echo "FAIL calibrate (exit $rc):"; tail -n 5 "$tmp/calibrate" | sed 's/^/     /'
		exit 1
	fi
	# the fit's residuals say how steady the machine was
	sed -n '/^scenario  *live ms/,/^$/p' "$tmp/calibrate" | sed 's/^/  calibrate: /'
fi
echo "table: $table"
# the broken table: the checksum (the kernel's xxhash, the model's default)
# 10 times its price. Times 3 was too small a break to be sure of: a good
# blind fit leaves the checksum 10-16% of the held-out traces' ksmd, so
# times 3 moved them 19-32%, inside +-35% (CI, 2026-12-06, AMD EPYC)
awk -F, -v OFS=, '$1 == "checksum:xxhash" { $2 = $2 * 10; n++ } { print } END { exit n != 1 }' \
	"$table" >"$tmp/costs-x10.csv" || { echo "FAIL broken-price: no checksum:xxhash row in $table"; exit 1; }
"$make_heldout" "$tmp" || { echo "FAIL: $make_heldout did not write the traces"; exit 1; }

last_row() {	# the header and the last row of a marks file
	grep -v '^#' "$1" | sed -n '1p;$p'
}
within() {	# within LIVE MODEL: the last marks' ksmd_cpu_ms within +-tol (diff prints the row)
	last_row "$1" >"$tmp/l.csv"
	last_row "$2" >"$tmp/m.csv"
	"$bin" diff "$tmp/l.csv" "$tmp/m.csv" --only ksmd_cpu_ms --cpu-tolerance "$tol" \
		--cpu-floor-ms 0 >"$tmp/diff" 2>&1
}
fails=0 caught=0 n=0
for c in mixed chains churn distinct revisits; do
	n=$((n + 1))
	"$bin" live --trace "$tmp/$c.ksmt" --marks-csv "$tmp/live.csv" >"$tmp/out" 2>&1 ||
		{ echo "FAIL $c: live: $(tail -n 1 "$tmp/out")"; fails=$((fails + 1)); continue; }
	for t in good broken; do
		tab=$table
		[ "$t" = broken ] && tab=$tmp/costs-x10.csv
		"$bin" run --trace "$tmp/$c.ksmt" --costs-csv "$tab" --marks-csv "$tmp/model-$t.csv" \
			>/dev/null 2>"$tmp/out" ||
			{ echo "FAIL $c: model: $(tail -n 1 "$tmp/out")"; fails=$((fails + 1)); continue 2; }
	done
	ms() { grep -v '^#' "$1" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "ksmd_cpu_ms") c = i }
		END { printf "%.1f", $c }'; }
	l=$(ms "$tmp/live.csv") g=$(ms "$tmp/model-good.csv") b=$(ms "$tmp/model-broken.csv")
	ratios=$(awk -v l="$l" -v g="$g" -v b="$b" 'BEGIN { printf "live %.1f ms, model %.1f ms (%.3f), checksum x10 %.1f ms (%.3f)", l, g, g / l, b, b / l }')
	if within "$tmp/live.csv" "$tmp/model-good.csv"; then
		echo "ok   $c (+-$tol%): $ratios"
	else
		echo "FAIL $c (+-$tol%): $ratios"; sed 's/^/     /' "$tmp/diff"
		fails=$((fails + 1))
	fi
	within "$tmp/live.csv" "$tmp/model-broken.csv" || caught=$((caught + 1))
done
if [ "$caught" -eq 0 ]; then
	echo "FAIL broken-price: with the checksum priced 10 times, every trace stayed within +-$tol%: the check cannot see broken pricing"
	fails=$((fails + 1))
else
	echo "ok   broken-price: with the checksum priced 10 times, $caught of $n traces fall outside +-$tol%"
fi
echo "$((n + 1 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
