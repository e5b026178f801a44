#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Two identical guests: the same tinyconfig kernel build twice at once, in
# two source trees, each recorded with --as-vm (one address space per
# "guest") and --scope all (make and gcc never advise MADV_MERGEABLE: all of
# their anonymous memory, as if under prctl(PR_SET_MEMORY_MERGE)), then
# merged into one trace with two mms, vm1 and vm2.
. "$(dirname "$0")/common.sh"
need linux-source-6.1 bc flex bison libelf-dev libssl-dev make gcc xz-utils
for i in 1 2; do
	src=$WORK/linux-$i
	if [ ! -d "$src" ]; then
		mkdir -p "$src.tmp"
		tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$src.tmp" --strip-components=1
		mv "$src.tmp" "$src"
	fi
	make -C "$src" -s tinyconfig
	make -C "$src" -s clean
done
for i in 1 2; do
	"$KSMSIM" record --interval-ms "${INTERVAL_MS:-200}" --max-seconds "${MAX:-900}" \
		--as-vm "vm$i" --scope all -o "$WORK/vm$i.ksmb" -- make -C "$WORK/linux-$i" -s -j2 &
done
wait
trace=$OUT/kernel-build-2vm.ksmb
"$KSMSIM" trace merge "$WORK/vm1.ksmb" "$WORK/vm2.ksmb" "$trace"
done_msg "$trace"
