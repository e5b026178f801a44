#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# selective: no merge across security domains on any golden trace (each mm
# its own domain), while the kernel's runs of the same traces do merge
# across some, and its saving is the kernel's less what crossed domains.
# Every run under --check.
# usage: selective.sh KSMSIM SOURCE_ROOT
set -u
bin=$1 root=$2
fail=0
fig() {	# fig CSV SCOPE FIGURE: the count column
	awk -F, -v s="$2" -v f="$3" '$1 == s && $2 == f { print $3; found = 1 }
		END { if (!found) print "missing" }' "$1"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kernel_cross=0
"$bin" policies | grep -q '^selective ' || { echo "FAIL: ksmsim policies does not list selective"; fail=1; }
for t in "$root"/tests/golden/*.ksmt "$root"/traces/samples/default.ksmt; do
	for p in kernel selective; do
		if ! "$bin" run --check --quiet --trace "$t" --policy "$p" --exposure-csv "$tmp/$p.csv" \
			2>"$tmp/err"; then
			echo "FAIL: $t under $p: $(cat "$tmp/err")"; fail=1; continue
		fi
	done
	c=$(fig "$tmp/kernel.csv" cross write_to_merge_us)
	kernel_cross=$((kernel_cross + c))
	s=$(fig "$tmp/selective.csv" cross write_to_merge_us)
	d=$(fig "$tmp/selective.csv" cross domains_at_peak)
	[ "$s" = 0 ] && [ "$d" = 0 ] ||
		{ echo "FAIL: $t: selective merged across domains ($s merges, $d KSM pages)"; fail=1; }
	# what selective saves is the kernel's saving less what crossed domains
	ks=$(fig "$tmp/kernel.csv" all saved_pages) kx=$(fig "$tmp/kernel.csv" all saved_cross_pages)
	ss=$(fig "$tmp/selective.csv" all saved_pages)
	echo "$(basename "$t"): kernel saved $ks ($kx across domains, $c merges across);" \
	     "selective saved $ss"
	# one trace where the end states are the same but for the partition
	case $t in */policy_classified.ksmt|*/policy_partial_hash.ksmt|*/ref_*.ksmt)
		[ "$ss" = $((ks - kx)) ] ||
			{ echo "FAIL: $t: selective saved $ss, not $ks - $kx"; fail=1; } ;;
	esac
done
# the check could fail: the kernel merges across domains on these traces
[ "$kernel_cross" -gt 0 ] || { echo "FAIL: no kernel run merged across domains"; fail=1; }
exit $fail
