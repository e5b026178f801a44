#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A kernel build, recorded: Debian's linux-source-6.1, 'make tinyconfig',
# then 'make -j2' under ksmsim record. MAX (seconds, default 900) caps it.
. "$(dirname "$0")/common.sh"
need linux-source-6.1 bc flex bison libelf-dev libssl-dev make gcc xz-utils
src=$WORK/linux-1
if [ ! -d "$src" ]; then
	mkdir -p "$src.tmp"
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$src.tmp" --strip-components=1
	mv "$src.tmp" "$src"
fi
make -C "$src" -s tinyconfig
make -C "$src" -s clean
trace=$OUT/kernel-build.ksmb
"$KSMSIM" record --interval-ms "${INTERVAL_MS:-200}" --max-seconds "${MAX:-900}" \
	-o "$trace" -- make -C "$src" -s -j2
done_msg "$trace"
