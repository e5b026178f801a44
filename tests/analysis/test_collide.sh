#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_collide.sh KSMSIM SRCDIR: the collision study's defaults and the
# uncertainty it states. Default trial counts (read back from the CSVs),
# the default thread count (every CPU the process may run on), outputs
# that do not depend on --threads, every 32-bit hash's birthday shares
# within 4 standard errors of the formula, and the false-positive
# intervals. Checksums are cut with --bits so that it runs in seconds.
# ksm_seeds.sh refuses a bad --seeds in one line.
# Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
ksmsim=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The value of column $2 in row 2 of CSV $1 (by name).
field() {
	awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
		NR == 2 && c { print $c }' "$1"
}

# --- the defaults, from the CSV and the stderr header -----------------------
"$ksmsim" collide birthday --hashes xxhash,xxh64 --bits 8 -o "$tmp/d.csv" >/dev/null 2>"$tmp/d.err"
[[ $(field "$tmp/d.csv" trials) == 2000 ]] ||
	fail "default birthday trials: $(field "$tmp/d.csv" trials), want 2000"
"$ksmsim" collide birthday --hashes xxh64 --max-pages-wide 1000 -o "$tmp/w.csv" >/dev/null 2>&1
[[ $(field "$tmp/w.csv" trials) == 4 ]] || fail "default --trials-wide: $(field "$tmp/w.csv" trials)"
"$ksmsim" collide false-positive --hashes crc32c --changes word -o "$tmp/fd.csv" \
	>/dev/null 2>"$tmp/fd.err"
[[ $(field "$tmp/fd.csv" trials) == 10000000 ]] ||
	fail "default false-positive trials: $(field "$tmp/fd.csv" trials), want 10000000"
"$ksmsim" collide birthday --help | grep -E -- '^ +--trials N .*default 2000[^0-9]' >/dev/null ||
	fail "birthday --help: --trials not 2000"
"$ksmsim" collide false-positive --help | grep -E -- '^ +--trials N .*default 10000000[^0-9]' >/dev/null ||
	fail "false-positive --help: --trials not 10000000"
# threads: every CPU this process may run on, whatever is online
cpus=$(nproc)
want="on $cpus thread"; [[ $cpus -gt 1 ]] && want="on $cpus threads"
grep -qx "collide birthday: .*, $want" "$tmp/d.err" || fail "default threads: $(head -1 "$tmp/d.err"), want $want"
grep -qx "collide false-positive: .*, $want" "$tmp/fd.err" || fail "fp default threads: $(head -1 "$tmp/fd.err")"
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
	taskset -c 0 "$ksmsim" collide birthday --hashes xxhash --bits 8 --trials 10 >/dev/null 2>"$tmp/t.err"
	grep -qx 'collide birthday: .*, on 1 thread' "$tmp/t.err" ||
		fail "under taskset -c 0: $(head -1 "$tmp/t.err")"
fi

# --- the same bytes for any thread count (and the default) ------------------
bday=(collide birthday --hashes jhash2,crc32,xxh3 --bits 12 --trials 300 --max-pages 2000
      --at 50,100,200 --seed 11)
fp=(collide false-positive --hashes crc32c,xxhash --bits 10 --trials 50000 --seed 5)
for j in 1 3 7 default; do
	th=(--threads "$j"); [[ $j == default ]] && th=()
	"$ksmsim" "${bday[@]}" "${th[@]}" -o "$tmp/b$j.csv" --curve-csv "$tmp/c$j.csv" \
		>"$tmp/b$j.txt" 2>/dev/null
	"$ksmsim" "${fp[@]}" "${th[@]}" -o "$tmp/f$j.csv" >"$tmp/f$j.txt" 2>/dev/null
done
for j in 3 7 default; do
	for f in b c f; do
		cmp -s "$tmp/${f}1.csv" "$tmp/$f$j.csv" || fail "$f CSV differs between --threads 1 and $j"
	done
	cmp -s "$tmp/b1.txt" "$tmp/b$j.txt" || fail "birthday table differs between --threads 1 and $j"
	cmp -s "$tmp/f1.txt" "$tmp/f$j.txt" || fail "false-positive table differs between --threads 1 and $j"
done
# and another seed gives other figures (the check above can fail)
# (bday without its last two words, --seed 11: a repeated option is refused)
"$ksmsim" "${bday[@]:0:${#bday[@]}-2}" --seed 12 -o "$tmp/s.csv" >/dev/null 2>&1 ||
	fail "collide birthday --seed 12: exit $?"
! cmp -s <(cut -d, -f7- "$tmp/b1.csv") <(cut -d, -f7- "$tmp/s.csv") || fail "seed 12 gave seed 11's figures"

# --- the tables say what their uncertainty is --------------------------------
grep -q 'by 100: obs / formula +-95%' "$tmp/b1.txt" || fail "birthday table heading: $(head -1 "$tmp/b1.txt")"
grep -q '^+-95%: 1.96 standard errors' "$tmp/b1.txt" || fail "birthday table: no uncertainty note"
grep -q '(the rule of three)' "$tmp/f1.txt" && grep -q 'Wilson score interval' "$tmp/f1.txt" ||
	fail "false-positive table: no interval note"

# --- every 32-bit hash follows the birthday formula within 4 se -------------
hashes=$("$ksmsim" hashes | awk '{ b = $2 == "*" ? $3 : $2 } b == 32 { printf "%s%s", n++ ? "," : "", $1 }')
[[ $(tr ',' '\n' <<<"$hashes" | wc -l) -ge 5 ]] || fail "32-bit hashes: '$hashes'"
# 16 bits: the default 2000 trials; 20 bits: 300 trials (se 0.029)
"$ksmsim" collide birthday --hashes "$hashes" --bits 16 --max-pages 4000 --at 150,322,500,800 \
	-o "$tmp/f16.csv" >/dev/null 2>&1
"$ksmsim" collide birthday --hashes "$hashes" --bits 20 --trials 300 --max-pages 16000 \
	--at 600,1290,2000,3200 -o "$tmp/f20.csv" >/dev/null 2>&1
for f in "$tmp/f16.csv" "$tmp/f20.csv"; do
	awk -F, -v want="$hashes" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{
		seen[$1] = 1
		if ($c["collided"] != $c["trials"]) { print $1 ": censored trials"; bad = 1 }
		for (k in c) {
			if (k !~ /^frac_/) continue
			n = substr(k, 6)
			d = $c[k] - $c["formula_" n]; if (d < 0) d = -d
			if ($c["se_" n] <= 0 || d > 4 * $c["se_" n]) {
				print $1 " " $2 " bits: frac_" n " " $c[k] " vs formula " $c["formula_" n] \
				      " (se " $c["se_" n] ")"; bad = 1 }
		}
		d = $c["mean_first"] - $c["expected_mean"]; if (d < 0) d = -d
		if ($c["se_mean"] <= 0 || d > 4 * $c["se_mean"]) {
			print $1 ": mean " $c["mean_first"] " vs " $c["expected_mean"] " (se " $c["se_mean"] ")"; bad = 1 }
	}
	END {
		n = split(want, w, ",")
		for (i = 1; i <= n; i++) if (!seen[w[i]]) { print "no row for " w[i]; bad = 1 }
		exit bad
	}' "$f" || fail "birthday figures in $(basename "$f")"
done
# se_N is the binomial one at the formula: sqrt(p(1-p)/trials)
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
{ p = $c["formula_322"]; want = sqrt(p * (1 - p) / $c["trials"]); d = $c["se_322"] - want
  if (d > 1e-6 || d < -1e-6) { print $1 " se_322 " $c["se_322"] " want " want; bad = 1 } }
END { exit bad }' "$tmp/f16.csv" || fail "se_N"

# --- false-positive intervals: rule of three at 0 and at all, else Wilson ----
"$ksmsim" collide false-positive --hashes crc32c,xxhash --changes word,crafted-crc --trials 30000 \
	-o "$tmp/r3.csv" >/dev/null 2>&1
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
{
	lo = $c["rate_lower95"]; hi = $c["rate_upper95"]; n = $c["trials"]; x = $c["unchanged"]
	if (x == 0 && (lo != 0 || hi - 3 / n > 1e-9 || 3 / n - hi > 1e-9)) { print $1 " " $3 ": none seen, [" lo ", " hi "]"; bad = 1 }
	if (x == n && (hi != 1 || lo - (1 - 3 / n) > 1e-9 || (1 - 3 / n) - lo > 1e-9)) {
		print $1 " " $3 ": all seen, [" lo ", " hi "]"; bad = 1 }
	rows++
}
END { if (rows != 4) { print rows " rows"; bad = 1 } exit bad }' "$tmp/r3.csv" || fail "rule of three"
# at 10 bits some changes pass: the interval brackets the rate, and 2^-10 lies
# within 4 se of every random kind's rate
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
$3 != "crafted-crc" || $1 != "crc32c" {
	r = $c["rate"]; lo = $c["rate_lower95"]; hi = $c["rate_upper95"]; n = $c["trials"]
	e = $c["expected_rate"]; se = sqrt(e * (1 - e) / n); d = r - e; if (d < 0) d = -d
	if (!(lo < r && r < hi)) { print $1 " " $3 ": " r " outside [" lo ", " hi "]"; bad = 1 }
	if (e > 0 && d > 4 * se) { print $1 " " $3 ": rate " r " vs " e; bad = 1 }
}
END { exit bad }' "$tmp/f1.csv" || fail "false-positive rates at 10 bits"
# --- ksm_seeds.sh (section 5's replicates): a bad option is one line, exit 2,
# before any run or file
src=${2:?usage: test_collide.sh KSMSIM SRCDIR}
for args in "--seeds 0" "--seeds two" "--seeds 101" "--seeds" "--bogus"; do
	rc=0
	# shellcheck disable=SC2086 # one option and its value, split on purpose
	RESULTS=$tmp/ks KSMSIM=$ksmsim "$src/analysis/ksm_seeds.sh" $args >/dev/null 2>"$tmp/err" || rc=$?
	[[ $rc -eq 2 && $(wc -l <"$tmp/err") -eq 1 && ! -e $tmp/ks ]] ||
		fail "ksm_seeds.sh $args: exit $rc, $(cat "$tmp/err")"
	grep -q "^ksm_seeds.sh: .*${args%% *}" "$tmp/err" || fail "ksm_seeds.sh $args: $(cat "$tmp/err")"
done
echo "ok"
