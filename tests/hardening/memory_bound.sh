#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The memory estimate counts what a run will hold, so a small trace cannot
# make the model grow past --max-memory:
#   - one store into a 2 MiB block advised hugepage faults in a THP of 512
#     pages: a trace writing one page in every block is refused, from a file
#     before anything runs and from a pipe at the record that crossed;
#   - without the hugepage advice the same trace fits.
# usage: memory_bound.sh KSMSIM
set -u
bin=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
cd "$tmp" || exit 1
run() { timeout 120 "$bin" run --quiet --trace-label T --no-ideal "$@"; }

# 65,536 stores, one in each 2 MiB block of 128 GiB advised hugepage:
# 32 Mi pages of THPs (about 7 GiB of model), from a 1.5 MB trace.
thp_trace() {	# ADVICE
	printf 'ksmtrace 3\n0 spawn a\n0 map a 0 0x2000000\n0 advise a 0 0x2000000 %s\n' "$1"
	awk 'BEGIN { for (i = 0; i < 65536; i++) printf "0 write a 0x%x byte:01\n", i * 512 }'
	printf '0 mark end\n'
}
thp_trace hugepage >thp.ksmt
thp_trace nohugepage >small.ksmt
run --trace thp.ksmt --max-memory 64M --marks-csv m.csv 2>err; rc=$?
[ $rc -eq 2 ] || bad "THP from a file: exit $rc"
grep -q '^ksmsim run: thp.ksmt:[0-9]*: the model would need about .* written pages, 1 live mms), more than 64.0 MiB (--max-memory)$' err ||
	bad "THP from a file: $(cat err)"
[ ! -e m.csv ] || bad "THP from a file: an output was left"
line=$(sed -n 's/^ksmsim run: thp.ksmt:\([0-9]*\):.*/\1/p' err)
# 64 MiB hold a few hundred THPs: the refusal comes long before the end
[ -n "$line" ] && [ "$line" -lt 2000 ] || bad "THP from a file: refused at line '$line'"
run --trace - --max-memory 64M --marks-csv m.csv <thp.ksmt 2>err; rc=$?
[ $rc -eq 2 ] || bad "THP from a pipe: exit $rc"
grep -q "^ksmsim run: -:$line: .*more than 64.0 MiB (--max-memory)\$" err || bad "THP from a pipe: $(cat err)"
run --trace small.ksmt --max-memory 64M || bad "65,536 small pages did not fit in 64 MiB"

[ $fails -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
[ $fails -eq 0 ]
