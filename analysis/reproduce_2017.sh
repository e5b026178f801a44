#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The 2017 jhash2/crc32c/xxhash tables, reproduced in the model: for each
# workload, CoW count, checksum time, average pages_unshared and
# pages_sharing (per-second samples) and their ratio, per hash, at
# pages_to_scan 1600 and sleep_millisecs 200. See analysis/README.md.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: analysis/reproduce_2017.sh [OPTIONS]
  --workloads LIST   (default kernel-build,iozone)
  --hashes LIST      (default jhash2,crc32c,xxhash)
  --scale S          `ksmsim gen --scale` (default 0.0625: 4 guests x 256 MiB)
  --seed N           (default 1)
  --seconds N        length of the stand-in traces (default 240)
  --costs-csv FILE   checksum ns/page from `ksmsim bench costs --csv`
                     (default: the model's built-in cold figures)
  --no-batch-time    batches take no time (default: they take their modelled
                     CPU time, checksum included, as on the 2017 machines)
  --out DIR          (default analysis/results/2017)
  --ksmsim PATH
When `ksmsim gen WORKLOAD` is not available, a stand-in trace of the same
shape is written here (marked "stand-in" in the tables).
EOF
}
die() { echo "reproduce_2017.sh: $*" >&2; exit 2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
workloads=kernel-build,iozone hashes=jhash2,crc32c,xxhash scale=0.0625 seed=1 seconds=240
costs="" out="$here/results/2017" ksmsim=${KSMSIM:-} batch_time=--batch-time
while (($#)); do
	case $1 in
	--workloads) workloads=$2; shift 2 ;;
	--hashes) hashes=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--costs-csv) costs=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--no-batch-time) batch_time=""; shift ;;
	--ksmsim) ksmsim=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
if [[ -z $ksmsim ]]; then
	for b in "$here"/../build/cli/ksmsim "$here"/../build*/cli/ksmsim; do
		[[ -x $b ]] && { ksmsim=$b; break; }
	done
fi
[[ -x $ksmsim ]] || die "no ksmsim binary (build it or pass --ksmsim)"
mkdir -p "$out/series" "$out/summary"
cache=${KSMSIM_TRACE_CACHE:-$here/out/traces}
mkdir -p "$cache"

# ns per checksummed page: the model's built-in cold figures (sim/cost_model.c)
# unless a measured table is given.
ns_of() {
	if [[ -n $costs ]]; then
		awk -F, -v h="$1" '{ gsub(/"/, "") } $1 == h { print $6; exit }' "$costs"
	else
		case $1 in
		jhash2) echo 1925 ;; crc32c) echo 420 ;; crc32) echo 1400 ;; xxhash | xxh64) echo 716 ;;
		xxh32) echo 890 ;; xxh3) echo 490 ;; *) echo 0 ;;
		esac
	fi
}

# A stand-in of the workload's shape, for when `ksmsim gen` cannot make it:
# 4 guests booted from one image; kernel-build rewrites build output (part of
# it identical across guests, as the same tree compiles to the same objects),
# iozone rewrites I/O buffers with one byte pattern per pass.
standin() {
	local w=$1 pages=$2 t=$3
	awk -v w="$w" -v P="$pages" -v T="$seconds" -v seed="$seed" 'BEGIN {
		G = 4; base = 1048576
		img = int(P * 0.35); zero = int(P * 0.15); priv = int(P * 0.2)
		churn = P - img - zero - priv
		print "ksmtrace 1"
		printf "# stand-in %s: %d guests x %d pages, %d s, seed %d\n", w, G, P, T, seed
		for (g = 0; g < G; g++) {
			printf "0 spawn g%d\n0 map g%d %d %d\n0 advise g%d %d %d mergeable\n", g, g, base, P, g, base, P
			printf "0 fillseq g%d %d %d %.0f\n", g, base, img, seed * 1e9
			printf "0 fill g%d %d %d zero\n", g, base + img, zero
			printf "0 fillseq g%d %d %d %.0f\n", g, base + img + zero, priv + churn, seed * 1e9 + (g + 1) * 1e8
		}
		print "0 set run 1"
		c0 = base + img + zero + priv
		win = int(churn / 10); if (win < 1) win = 1
		# every 6 s each guest rewrites one of its 10 windows, so a window
		# lives 60 s: long enough to be merged, then copied on write
		for (s = 6; s <= T; s += 6) {
			r = s / 6
			for (g = 0; g < G; g++) {
				k = (r + 3 * g) % 10
				if (w == "iozone") {
					# one pass of the benchmark: a slice of the buffer, one pattern
					printf "%.0f fill g%d %d %d byte:%02x\n", s * 1e6, g, c0 + k * win, win, (r * 7 + g) % 256
				} else if (k % 2 == 0) {
					# objects every guest builds alike
					printf "%.0f fillseq g%d %d %d %.0f\n", s * 1e6, g, c0 + k * win, win, seed * 1e9 + 5e8 + int(r / 10) * 1e5 + k * 1e4
				} else {
					printf "%.0f fillseq g%d %d %d %.0f\n", s * 1e6, g, c0 + k * win, win, seed * 1e9 + 6e8 + g * 1e7 + r * 1e5 + k * 1e4
				}
			}
		}
		printf "%.0f mark end\n", (T + 1) * 1e6
	}' >"$t.tmp"
	mv "$t.tmp" "$t"
}

IFS=, read -r -a wl <<<"$workloads"
IFS=, read -r -a hl <<<"$hashes"
tables="$out/tables.txt" csv="$out/tables.csv"
: >"$tables.tmp"
echo "workload,source,hash,cow_ksm,checksums,checksum_ms,ksmd_cpu_ms,avg_pages_unshared,avg_pages_sharing,unshared_per_sharing,samples,false_positives" >"$csv.tmp"
for w in "${wl[@]}"; do
	t="$cache/$w-s$scale-n$seed.ksmt" src=gen
	if [[ ! -e $t ]] && ! "$ksmsim" gen "$w" --scale "$scale" --seed "$seed" -o "$t" 2>/dev/null; then
		# 4 GiB per guest at scale 1, as the 2017 guests had
		pages=$(awk -v s="$scale" 'BEGIN { printf "%d", 1048576 * s }')
		t="$cache/standin-$w-s$scale-n$seed-t$seconds.ksmt" src=stand-in
		[[ -e $t ]] || standin "$w" "$pages" "$t"
		echo "reproduce_2017.sh: ksmsim gen $w unavailable; using a stand-in trace $t" >&2
	fi
	for h in "${hl[@]}"; do
		s="$out/series/$w-$h.csv" m="$out/summary/$w-$h.csv"
		if [[ ! -e $m || ! -e $s ]]; then
			echo "reproduce_2017.sh: $w $h" >&2
			# shellcheck disable=SC2086  # batch_time is one flag or none
			"$ksmsim" run --quiet --no-ideal $batch_time ${costs:+--costs-csv "$costs"} \
				--trace "$t" --trace-label "$(basename "$t")" --hash "$h" --pages-to-scan 1600 \
				--sleep-millisecs 200 --csv "$s" --interval-ms 1000 --summary-csv "$m"
		fi
		# the 2017 averages: every per-second sample, t = 0 excluded
		awk -F, -v w="$w" -v src="$src" -v h="$h" -v ns="$(ns_of "$h")" -v sum="$m" '
			NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
			$1 > 0 { n++; su += $c["pages_unshared"]; ss += $c["pages_sharing"] }
			END {
				getline hd < sum; getline row < sum
				nh = split(hd, H, ","); split(row, R, ",")
				for (i = 1; i <= nh; i++) v[H[i]] = R[i]
				au = n ? su / n : 0; as = n ? ss / n : 0
				printf "%s,%s,%s,%d,%d,%.1f,%.1f,%.1f,%.1f,%s,%d,%d\n", w, src, h,
					v["cow_ksm"], v["checksums"], v["checksums"] * ns / 1e6, v["ksmd_cpu_ms"],
					au, as, (as > 0 ? sprintf("%.4f", au / as) : "inf"), n, v["false_positives"]
			}' "$s" >>"$csv.tmp"
	done
done
mv "$csv.tmp" "$csv"

# The issue's shape: one table per workload, a column per hash.
awk -F, 'NR == 1 { next }
	{ key[$1] = key[$1] ? key[$1] : ++nw; wn[nw] = $1; src[$1] = $2
	  h = $3; if (!(h in hs)) { hs[h] = ++nh; hn[nh] = h }
	  cow[$1, h] = $4; cs[$1, h] = $6; cpu[$1, h] = $7; un[$1, h] = $8; sh[$1, h] = $9; r[$1, h] = $10; fp[$1, h] = $12 }
	END {
		for (i = 1; i <= nw; i++) {
			w = wn[i]
			printf "%s (%s trace), pages_to_scan 1600, sleep_millisecs 200, per-second averages\n", w, src[w]
			printf "  %-26s", ""; for (j = 1; j <= nh; j++) printf " %14s", hn[j]; printf "\n"
			printf "  %-26s", "CoW count (cow_ksm)"; for (j = 1; j <= nh; j++) printf " %14d", cow[w, hn[j]]; printf "\n"
			printf "  %-26s", "checksum time (ms)"; for (j = 1; j <= nh; j++) printf " %14.1f", cs[w, hn[j]]; printf "\n"
			printf "  %-26s", "ksmd CPU, modelled (ms)"; for (j = 1; j <= nh; j++) printf " %14.1f", cpu[w, hn[j]]; printf "\n"
			printf "  %-26s", "avg pages_unshared"; for (j = 1; j <= nh; j++) printf " %14.1f", un[w, hn[j]]; printf "\n"
			printf "  %-26s", "avg pages_sharing"; for (j = 1; j <= nh; j++) printf " %14.1f", sh[w, hn[j]]; printf "\n"
			printf "  %-26s", "unshared / sharing"; for (j = 1; j <= nh; j++) printf " %14s", r[w, hn[j]]; printf "\n"
			printf "  %-26s", "checksum false positives"; for (j = 1; j <= nh; j++) printf " %14d", fp[w, hn[j]]; printf "\n\n"
		}
	}' "$csv" >"$tables.tmp"
mv "$tables.tmp" "$tables"
cat "$tables"
echo "reproduce_2017.sh: $csv, $tables, series in $out/series/" >&2
