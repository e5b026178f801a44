#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Builds the fuzz targets with clang's libFuzzer, ASan and UBSan (a meson
# build with -Dfuzzing=true) and runs each for SECONDS seconds (default 60),
# one after the other (or JOBS at a time), starting from the committed seed
# corpus and the regression inputs.
#
#   tests/fuzz/run.sh [SECONDS] [TARGET...]      TARGET: text binary gz run
#
# Environment: KSMSIM_SRC (sources to build, default this checkout),
# FUZZ_OUT (build and working dir, default build-fuzz/ in KSMSIM_SRC),
# JOBS (targets run at once, default 1), NICE (default 10),
# FUZZ_TIMEOUT (seconds one input may take, default 60: the machines are
# shared), FUZZ_ARGS (extra libFuzzer flags). New corpus entries go to
# FUZZ_OUT/corpus/TARGET (the committed corpus is only read); crashes to
# FUZZ_OUT/artifacts/TARGET/. Exit 1 when any target found something.
# Needs clang and libclang-rt-14-dev (Debian 12: apt-get install -y clang
# libclang-rt-14-dev).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${KSMSIM_SRC:-$(cd "$here/../.." && pwd)}
out=${FUZZ_OUT:-$src/build-fuzz}
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(text binary gz run)
jobs=${JOBS:-1}
cc=${CC_FUZZ:-clang}

mkdir -p "$out"
build=$out/meson
if [ ! -e "$build/build.ninja" ]; then
	CC=$cc meson setup "$build" "$src" -Dfuzzing=true -Db_sanitize=address,undefined \
		-Db_lundef=false -Dbuildtype=debugoptimized \
		-Dc_args=-fno-sanitize-recover=undefined >"$out/setup.log" 2>&1 ||
		{ cat "$out/setup.log" >&2; exit 1; }
fi
names=()
for t in "${targets[@]}"; do
	[ -e "$here/fuzz_$t.c" ] || { echo "fuzz: no target '$t' (text binary gz run)" >&2; exit 2; }
	names+=("tests/fuzz/fuzz-$t")
done
echo "fuzz: building ${targets[*]} in $build"
ninja -C "$build" "${names[@]}" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log" >&2; exit 1; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
run_one() {
	local t=$1
	mkdir -p "$out/corpus/$t" "$out/artifacts/$t"
	local dict=()
	[ "$t" = binary ] || dict=(-dict="$here/ksmtrace.dict")
	# shellcheck disable=SC2086
	nice -n "${NICE:-10}" "$build/tests/fuzz/fuzz-$t" "${dict[@]}" -max_total_time="$secs" -timeout="${FUZZ_TIMEOUT:-60}" \
		-rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
		-artifact_prefix="$out/artifacts/$t/" ${FUZZ_ARGS:-} \
		"$out/corpus/$t" "$here/corpus/$t" "$here/regressions/$t" \
		>"$out/fuzz_$t.log" 2>&1
}
status=0
pids=()
names=()
for t in "${targets[@]}"; do
	echo "fuzz: running $t for ${secs}s (log $out/fuzz_$t.log)"
	run_one "$t" &
	pids+=($!)
	names+=("$t")
	if [ ${#pids[@]} -ge "$jobs" ]; then
		if ! wait "${pids[0]}"; then
			echo "fuzz: ${names[0]} found a problem: see $out/fuzz_${names[0]}.log" >&2
			tail -n 40 "$out/fuzz_${names[0]}.log" >&2
			status=1
		fi
		pids=("${pids[@]:1}")
		names=("${names[@]:1}")
	fi
done
for i in "${!pids[@]}"; do
	if ! wait "${pids[$i]}"; then
		echo "fuzz: ${names[$i]} found a problem: see $out/fuzz_${names[$i]}.log" >&2
		tail -n 40 "$out/fuzz_${names[$i]}.log" >&2
		status=1
	fi
done
for t in "${targets[@]}"; do
	grep -h '^stat::number_of_executed_units\|^Done' "$out/fuzz_$t.log" | sed "s/^/fuzz: $t: /" || true
done
exit $status
