#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# FORMAT.md's first example trace on the live kernel: after the first settle one KSM
# page, pages_shared 1 and pages_sharing 199. Skips (77) where live KSM
# cannot be used.
set -u
bin=${1:?usage: test_spec_example.sh PATH/TO/ksmsim TRACE}
trace=${2:?}
if ! why=$("$bin" live --check 2>&1); then echo "SKIP: $why"; exit 77; fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" live --trace "$trace" --marks-csv "$out" || exit 1
row=$(grep '^merged,' "$out")
shared=$(echo "$row" | cut -d, -f5)
sharing=$(echo "$row" | cut -d, -f6)
echo "merged: pages_shared $shared, pages_sharing $sharing"
[ "$shared" = 1 ] && [ "$sharing" = 199 ]
