#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The model's ksmd CPU against the live ksmd's, on any machine with live KSM
# (sim/MODEL.md, "Calibrating the cost table"). A table fitted on another
# machine, or on this one in another state, proves nothing here: the live
# ksmd's prices move with the host (the built-in table, fitted on an AMD EPYC
# VM, charged 1.38x, 1.71x and 0.95x the live ksmd on the three 1 Mi-page
# conformance cases on the same VM type a day later). So the test first fits
# a table on this machine (`ksmsim bench calibrate --repeat REPS` with the
# blind fit of ksmd's total CPU, KSMSIM_CALIBRATE_BLIND=1; about 1.5 minutes
# a repeat, quiet), then replays five held-out traces none of whose shapes
# is a calibration scenario (cpu/make_heldout.sh: mixed, chains, churn,
# distinct, revisits) REPS times live, in rounds (each round all five, so a
# drift of the machine's speed falls on every trace alike), and through the
# model with that table, and holds the median of the live replays' last
# ksmd_cpu_ms within +-TOL% of the model's (default 35).
# Why REPS 3 (KSMSIM_CPU_REPS): one replay each failed a fresh clone's CI
# (2026-12-06, AMD EPYC): distinct 0.631, its live ksmd 3,155 ms where the
# same trace took 2,659 and then 2,890-3,092 ms on this machine within ten
# minutes, and mixed 2,067 ms as the first replay after calibrating against
# 1,431-1,537 ms four times just after: a single replay on a shared VM
# moves by up to 1.4 times, the fit's scenarios as much. And it must still
# see broken pricing: the same table with the checksum's price times 10 must put at least one
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
reps=${KSMSIM_CPU_REPS:-3}
case $reps in [1-9]) ;; *) echo "FAIL: KSMSIM_CPU_REPS must be 1-9, not '$reps'"; exit 1 ;; esac
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
	KSMSIM_CALIBRATE_BLIND=1 "$bin" bench calibrate --repeat "$reps" -o "$table" >"$tmp/calibrate" 2>&1
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
ms() {	# ms MARKS: the last mark's ksmd_cpu_ms
	grep -v '^#' "$1" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "ksmd_cpu_ms") c = i }
		END { printf "%.1f", $c }'
}
cases="mixed chains churn distinct revisits"
# the live replays, in rounds; a case whose replay fails is reported once
fails=0 caught=0 n=0
for r in $(seq 1 "$reps"); do
	for c in $cases; do
		[ -e "$tmp/$c.failed" ] && continue
		if "$bin" live --trace "$tmp/$c.ksmt" --marks-csv "$tmp/live-$c-$r.csv" >"$tmp/out" 2>&1; then
			ms "$tmp/live-$c-$r.csv" >>"$tmp/$c.live"
			echo >>"$tmp/$c.live"
		else
			echo "FAIL $c: live (round $r): $(tail -n 1 "$tmp/out")"
			: >"$tmp/$c.failed"
		fi
	done
done
for c in $cases; do
	n=$((n + 1))
	[ -e "$tmp/$c.failed" ] && { fails=$((fails + 1)); continue; }
	for t in good broken; do
		tab=$table
		[ "$t" = broken ] && tab=$tmp/costs-x10.csv
		"$bin" run --trace "$tmp/$c.ksmt" --costs-csv "$tab" --marks-csv "$tmp/model-$t.csv" \
			>/dev/null 2>"$tmp/out" ||
			{ echo "FAIL $c: model: $(tail -n 1 "$tmp/out")"; fails=$((fails + 1)); continue 2; }
	done
	# the median replay: the one whose ksmd_cpu_ms is the median (the
	# lower middle of an even count), its marks held against the model's
	med=$(sort -n "$tmp/$c.live" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	all=$(tr '\n' ' ' <"$tmp/$c.live" | sed 's/ $//')
	for r in $(seq 1 "$reps"); do
		[ "$(ms "$tmp/live-$c-$r.csv")" = "$med" ] && { cp "$tmp/live-$c-$r.csv" "$tmp/live.csv"; break; }
	done
	l=$med g=$(ms "$tmp/model-good.csv") b=$(ms "$tmp/model-broken.csv")
	ratios=$(awk -v l="$l" -v g="$g" -v b="$b" -v all="$all" 'BEGIN { printf "live %.1f ms (median of %s), model %.1f ms (%.3f), checksum x10 %.1f ms (%.3f)", l, all, g, g / l, b, b / l }')
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
