#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every command that takes a checksum refuses a bad one in the same words
# (hashes/hash.h, hash_resolve), and every command that replays a trace
# lists the same run options in its --help (cli/run_options.c).
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
printf 'ksmtrace 1\n0 spawn a\n0 map a 0x10 4\n0 advise a 0x10 4 mergeable\n0 set run 1\n0 settle 1\n0 mark m\n' >"$tmp/t.ksmt"

# refused ARG: the line each command prints for checksum ARG, "PROG: --OPTION: " cut off
refused() {
	local arg=$1 name
	: >"$tmp/all"
	while IFS='|' read -r name args; do
		# shellcheck disable=SC2086  # each case is a command and its options
		"$bin" $args "$arg" >"$tmp/out" 2>"$tmp/err"
		local rc=$?
		if [ $rc != 2 ] || [ "$(wc -l <"$tmp/err")" != 1 ] || [ -s "$tmp/out" ]; then
			echo "FAIL: $name --hash $arg: exit $rc, stderr: $(cat "$tmp/err")"
			fail=1
		fi
		if ! grep -qE "^ksmsim $name: --hash(es)?: " "$tmp/err"; then
			echo "FAIL: $name --hash $arg: not 'ksmsim $name: --OPTION: ...': $(cat "$tmp/err")"
			fail=1
		fi
		sed -E 's/^ksmsim [a-z -]+: --hash(es)?: //' "$tmp/err" >>"$tmp/all"
	done <<CMDS
run|run --trace $tmp/t.ksmt --quiet --hash
advise|advise $tmp/t.ksmt -o $tmp/a.csv --hash
collide birthday|collide birthday --hash
collide false-positive|collide false-positive --hash
collide ksm|collide ksm --trace $tmp/t.ksmt --hash
gen|gen checksum-adversarial --scale 0.001 -o $tmp/g.ksmt --hash
CMDS
	if [ "$(sort -u "$tmp/all" | wc -l)" != 1 ]; then
		echo "FAIL: --hash $arg is refused in different words:"; sort -u "$tmp/all"
		fail=1
	fi
	cp "$tmp/all" "$tmp/last"
}
refused bogus
grep -qxF "unknown checksum 'bogus' ('ksmsim hashes' lists them)" "$tmp/last" ||
	{ echo "FAIL: --hash bogus: $(head -1 "$tmp/last")"; fail=1; }
refused xxhsah
grep -qxF "unknown checksum 'xxhsah'; did you mean 'xxhash'? ('ksmsim hashes' lists them)" "$tmp/last" ||
	{ echo "FAIL: --hash xxhsah: $(head -1 "$tmp/last")"; fail=1; }
[ -e "$tmp/a.csv" ] || [ -e "$tmp/g.ksmt" ] && { echo "FAIL: a refused command wrote its output"; fail=1; }

# the run options each replaying command lists: the same lines, spacing aside
runopts() {	# runopts COMMAND...: the run options' lines of its --help, blanks squeezed
	"$bin" "$@" --help | sed -n '/^Run options/,/^$/p' | tail -n +2 | tr -s ' ' |
		grep -E -- '^ --(check|batch-time|no-ideal|costs-csv|pages-to-scan|advisor)'
}
runopts run >"$tmp/run.help"
[ "$(wc -l <"$tmp/run.help")" -ge 5 ] || { echo "FAIL: run --help lists no run options"; fail=1; }
for cmd in advise "collide ksm"; do
	# shellcheck disable=SC2086
	runopts $cmd >"$tmp/other.help"
	cmp -s "$tmp/run.help" "$tmp/other.help" ||
		{ echo "FAIL: $cmd --help lists other run options than run:"; diff "$tmp/run.help" "$tmp/other.help"; fail=1; }
done
[ $fail = 0 ] && echo "every command refuses a checksum and lists the run options alike"
exit $fail
