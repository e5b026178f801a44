#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Writes the held-out traces of live-cpu-model (test_cpu_model.sh) into DIR:
# six shapes none of `bench calibrate`'s scenarios has (merges only in
# bench/cpu_acceptance.sh), each a few hundred
# ms to a few s of ksmd CPU on the reference machine (sim/MODEL.md,
# "Calibrating the cost table"). usage: make_heldout.sh DIR
set -eu
dir=${1:?usage: make_heldout.sh DIR}
mm() {	# mm NAME PAGES: spawn, map and advise at 0x100000
	printf '0 spawn %s\n0 map %s 0x100000 %u\n0 advise %s 0x100000 %u mergeable\n' \
		"$1" "$1" "$2" "$1" "$2"
}
head() {	# head TITLE
	printf 'ksmtrace 1\n# live-cpu-model held-out trace: %s\n' "$1"
	printf '0 set pages_to_scan 20000\n0 set sleep_millisecs 10\n'
}
settles() {	# settles N LABEL: N passes, a mark after each
	for i in $(seq 1 "$1"); do printf '0 settle 1\n0 mark %s_s%u\n' "$2" "$i"; done
}

# mixed: 4 mms of 32 Ki pages: a 16 Ki-page image the same in all, 8 Ki
# distinct, 4 Ki byte:5a (chains of 256), 4 Ki zero; then each rewrites 1 Ki
# image pages (CoW of KSM pages) and 1 Ki distinct pages to byte:5a; m1 exits.
{
	head "mixed: image, distinct, chains, zero pages, CoW, an exit"
	for m in 0 1 2 3; do
		mm m$m 32768
		printf '0 fillseq m%u 0x100000 16384 1000000\n' $m
		printf '0 fillseq m%u 0x104000 8192 %u\n' $m $((10000000 * (m + 1)))
		printf '0 fill m%u 0x106000 4096 byte:5a\n0 fill m%u 0x107000 4096 zero\n' $m $m
	done
	printf '0 set run 1\n'
	settles 3 merged
	for m in 0 1 2 3; do
		printf '0 fill m%u 0x%x 1024 word:0:%u\n' $m $((0x100000 + m * 1024)) $((m + 1))
		printf '0 fill m%u 0x104000 1024 byte:5a\n' $m
	done
	settles 2 rewritten
	printf '0 exit m1\n'
	settles 2 exited
} >"$dir/mixed.ksmt"

# chains: 4 mms, 32 contents of 1 Ki pages each (chains of 16 dups at
# max_page_sharing 64, pruned at every visit); then every fourth content
# half rewritten to the next one.
{
	head "chains: 32 contents, chains of 16 dups, then rewritten"
	printf '0 set max_page_sharing 64\n0 set stable_node_chains_prune_millisecs 0\n'
	for m in 0 1 2 3; do
		mm m$m 32768
		for c in $(seq 0 31); do
			printf '0 fill m%u 0x%x 1024 byte:%02x\n' $m $((0x100000 + c * 1024)) $((0x40 + c))
		done
	done
	printf '0 set run 1\n'
	settles 3 merged
	for m in 0 1 2 3; do
		for c in $(seq 0 4 31); do
			printf '0 fill m%u 0x%x 512 byte:%02x\n' $m $((0x100000 + c * 1024)) $((0x41 + c))
		done
	done
	settles 2 rewritten
} >"$dir/chains.ksmt"

# churn: 2 mms of 48 Ki pages, half shared; between passes a quarter of each
# mm's pages get new bytes (volatile pages, CoW of merged ones), three times.
{
	head "churn: shared and distinct pages, a quarter rewritten between passes"
	for m in 0 1; do
		mm m$m 49152
		printf '0 fillseq m%u 0x100000 24576 3000000\n' $m
		printf '0 fillseq m%u 0x106000 24576 %u\n' $m $((40000000 * (m + 1)))
	done
	printf '0 set run 1\n'
	settles 2 first
	for r in 1 2 3; do
		for m in 0 1; do
			printf '0 fillseq m%u 0x%x 12288 %u\n' $m $((0x100000 + (r % 4) * 12288)) \
				$((70000000 + 1000000 * r + 100000 * m))
		done
		settles 1 churn$r
	done
} >"$dir/churn.ksmt"

# distinct: 3 mms of 40 Ki distinct pages, smart scan off, 5 passes (a tree
# between calibrate's 64 Ki and 256 Ki pages, at another pages_to_scan).
{
	head "distinct: 120 Ki distinct pages, 5 passes"
	printf '0 set smart_scan 0\n'
	for m in 0 1 2; do
		mm m$m 40960
		printf '0 fillseq m%u 0x100000 40960 %u\n' $m $((5000000 * (m + 1)))
	done
	printf '0 set run 1\n'
	settles 5 pass
} >"$dir/distinct.ksmt"

# revisits: 3 copies of a 32 Ki-page service, its pages in blocks of 256
# laid out in an order of each copy's own, and 4 Ki pages of each its own:
# merged, then revisited for 8 passes.
{
	head "revisits: 3 copies of a service, blocks out of scan order, 8 passes"
	for m in 0 1 2; do
		mm m$m 36864
		for b in $(seq 0 127); do
			printf '0 fillseq m%u 0x%x 256 %u\n' $m $((0x100000 + ((b * 37 + m * 11) % 128) * 256)) \
				$((8000000 + b * 256))
		done
		printf '0 fillseq m%u 0x108000 4096 %u\n' $m $((90000000 + 1000000 * m))
	done
	printf '0 set run 1\n'
	settles 8 pass
} >"$dir/revisits.ksmt"

# merges: 4 mms of 24 Ki pages: a 16 Ki-page image the same in all, in
# blocks of 512 each mm lays out in an order of its own, and 8 Ki pages of
# each its own; 3 passes, most of the work the first merges.
{
	head "merges: 4 copies of an image, blocks out of order, first merges"
	for m in 0 1 2 3; do
		mm m$m 24576
		for b in $(seq 0 31); do
			printf '0 fillseq m%u 0x%x 512 %u\n' $m $((0x100000 + ((b * 13 + m * 7) % 32) * 512)) \
				$((6000000 + b * 512))
		done
		printf '0 fillseq m%u 0x104000 8192 %u\n' $m $((60000000 + 1000000 * m))
	done
	printf '0 set run 1\n'
	settles 3 pass
} >"$dir/merges.ksmt"
