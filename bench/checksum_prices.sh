#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The checksums as the kernel computes them: XXH64's price a page is the
# live ksmd's own (xxh64's time over the pages it checksummed, from
# bench/profile_prices.sh's CSV: median and range over its live repeats);
# jhash2's and crc32c's are that times the ratio of their kernel-shaped
# twins to the XXH64 twin (bench/ref_kernel.c, as `ksmsim bench costs`
# measures them cold: a page ksmd checksums is not in the caches), the
# ratio taken REPEAT times (at least 5) and printed as median and range.
# usage: checksum_prices.sh KSMSIM PRICES.csv TRACE-NAME [REPEAT]
set -u
bin=${1:?usage: checksum_prices.sh KSMSIM PRICES.csv TRACE-NAME [REPEAT]}
prices=${2:?}
trace=${3:?}
rep=${4:-5}
[ "$rep" -ge 5 ] || { echo "checksum_prices.sh: REPEAT must be at least 5" >&2; exit 2; }
row=$(awk -F, -v t="$trace" '$1 == t && $2 == "checksum"' "$prices")
[ -n "$row" ] || { echo "checksum_prices.sh: $prices: no checksum row for $trace" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq 1 "$rep"); do
	"$bin" bench costs --reps 3 --cold-mib 256 --csv "$tmp/c$r.csv" >/dev/null || exit 1
	awk -F, '{ gsub(/"/, "") } $1 ~ /-kernel$/ { c[$1] = $6 }
		END { printf "%s %s %s\n", c["xxh64-kernel"], c["jhash2-kernel"] / c["xxh64-kernel"],
			c["crc32c-kernel"] / c["xxh64-kernel"] }' "$tmp/c$r.csv" >>"$tmp/ratios"
done
echo "# checksum_prices.sh on $(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1)," \
	"Linux $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'); kernel XXH64 from the live ksmd ($trace, $prices)," \
	"the others by their kernel-shaped twins' cold ratio to XXH64's ($rep runs of bench costs)"
echo "checksum,ns_median,ns_min,ns_max,ratio_median,ratio_min,ratio_max,how"
echo "$row" | awk -F, '{ printf "xxh64,%s,%s,%s,1,1,1,live ksmd: xxh64 ms / checksums\n", $7, $8, $9 }'
for col in 2 3; do
	name=$([ $col = 2 ] && echo jhash2 || echo crc32c)
	sort -g -k$col,$col "$tmp/ratios" | awk -v c=$col -v n="$rep" -v name="$name" -v row="$row" '
		{ v[NR] = $c } END {
			split(row, f, ","); med = v[int((n + 1) / 2)]
			printf "%s,%.1f,%.1f,%.1f,%.3f,%.3f,%.3f,xxh64 live times the twins ratio\n", name,
				f[7] * med, f[8] * v[1], f[9] * v[n], med, v[1], v[n] }'
done
