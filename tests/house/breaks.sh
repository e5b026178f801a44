#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# house_rules.sh fails when a rule is broken: on a small tree that keeps
# every rule it passes; each copy that breaks one (a 151-line function, a
# 1,501-line file, struct page asserted at 48 bytes, a counter bumped in
# sim/ksm.c or a policy count in sim/policy_gate.c, a cli/ command
# writing to stderr itself) makes it exit 1
# naming the rule. A function of exactly 150
# lines and a file of exactly 1,500 pass. usage: breaks.sh HOUSE_RULES.SH
set -u
rules=${1:?usage: breaks.sh HOUSE_RULES.SH}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# a function whose braces span n lines
fn() {
	echo "int $1(void)"
	echo "{"
	for ((i = 0; i < $2 - 2; i++)); do echo "	x++;"; done
	echo "}"
}

base() {
	rm -rf "$tmp/t"
	mkdir -p "$tmp/t/sim" "$tmp/t/bench" "$tmp/t/tests"
	{ echo "static int x;"; fn fine 150; } >"$tmp/t/bench/a.c"
	for ((i = 0; i < 1500; i++)); do echo "/* line */"; done >"$tmp/t/sim/long.c"
	printf '%s\n' 'G_STATIC_ASSERT(sizeof(struct rmap_item) == 64);' \
		'G_STATIC_ASSERT(sizeof(struct page) == 24);' >"$tmp/t/sim/sizes.c"
	printf '%s\n' 'static void f(struct ksm *k)' '{' '	ksm_ev_visit(k);' '}' >"$tmp/t/sim/ksm.c"
	fn huge 400 >"$tmp/t/tests/big_test.c"	# tests/ is outside the rules
	# the front door: the funnel may write to stderr, a command only names it in prose
	mkdir -p "$tmp/t/cli"
	printf '%s\n' 'void v(void)' '{' '	fprintf(stderr, "x\n");' '}' >"$tmp/t/cli/report.c"
	printf '%s\n' '/* never fprintf(stderr, ...): cli_error */' 'int cmd_x(void)' '{' \
		'	return cli_error("ksmsim x", "no fprintf(stderr here");' '}' >"$tmp/t/cli/cmd_x.c"
}

# expect STATUS WHAT PATTERN: the script's status, and a line matching PATTERN
expect() {
	"$rules" "$tmp/t" >"$tmp/out" 2>&1
	local st=$?
	if [ "$st" != "$1" ] || { [ -n "$3" ] && ! grep -q -- "$3" "$tmp/out"; }; then
		echo "FAIL: $2: status $st (want $1), output:"
		cat "$tmp/out"
		fail=1
	else
		echo "ok: $2"
	fi
}

base
expect 0 "a tree that keeps the rules passes" ''
[ -s "$tmp/out" ] && { echo "FAIL: a clean tree printed: $(cat "$tmp/out")"; fail=1; }

base
fn too_long 151 >>"$tmp/t/bench/a.c"
expect 1 "a 151-line function" 'bench/a.c:.*function of 151 lines.*too_long'

base
echo "/* one more */" >>"$tmp/t/sim/long.c"
expect 1 "a 1,501-line file" 'sim/long.c: 1501 lines'

base
sed -i 's/struct page) == 24/struct page) == 48/' "$tmp/t/sim/sizes.c"
expect 1 "struct page asserted at 48 bytes" 'sizeof(struct page) == 24'

base
for ((i = 0; i < 1397; i++)); do echo "/* line */"; done >>"$tmp/t/sim/ksm.c"
expect 1 "a 1,401-line sim/ksm.c" 'sim/ksm.c: 1401 lines (the twin'

base
sed -i 's/ksm_ev_visit(k);/k->truth.checksums++;/' "$tmp/t/sim/ksm.c"
expect 1 "a counter bumped in a twin" 'sim/ksm.c:3:.*measurement in a twin'

base
printf '%s\n' 'static void z(struct ksm *k)' '{' '	k->pstats.dirty_checks++;' '}' >>"$tmp/t/sim/policy_gate.c"
expect 1 "a policy count bumped in the gate" 'sim/policy_gate.c:3:.*measurement in a twin'

base
printf '%s\n' 'void y(void)' '{' '	fprintf(stderr, "y\n");' '}' >>"$tmp/t/cli/cmd_x.c"
expect 1 "a command writing to stderr itself" 'cli/cmd_x.c writes to stderr outside the funnel'

exit "$fail"
