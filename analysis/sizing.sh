#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Regenerates analysis/results/sizing/model.csv (RESULTS=DIR writes it
# elsewhere): what the model costs a simulated page, for section 10 of
# results/README.md. `ksmsim bench model --host-gib G` (default 32: 8 Mi
# pages in 16 GiB guests, about 1.5 GiB of memory and 2 minutes of CPU),
# one row per job: pages, visits a second, peak RSS, and bytes a page by
# structure. The first lines name the CPU, the date and the load. The
# 256 GiB and 1 TiB hosts section 10 is about need 11-40 GiB and are not
# run here: the page extrapolates from these bytes a page.
#   HOST_GIB=G  the host of job 3 (16 GiB guests)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
res=${RESULTS:-$here/results}/sizing
host_gib=${HOST_GIB:-32}
. "$here/steps.sh" sizing.sh
mkdir -p "$res"
res=$(cd "$res" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

step nice -n 19 "$ksmsim" bench model --mib 1024 --vm-mib 1024 --host-gib "$host_gib" >"$tmp/out"
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)
{
	echo "# ksmsim bench model --mib 1024 --vm-mib 1024 --host-gib $host_gib (analysis/sizing.sh)"
	echo "# measured $(date -u +%Y-%m-%d) on ${cpu:-an unknown CPU}, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), niced"
	# job 1's RSS is "RSS after", the others' "peak RSS"; rows of bytes a
	# page by structure follow "memory by structure"
	awk '
	function flush() {
		if (job != "")
			printf "%s,%d,%s,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f\n", job, pages, vps, rss,
				rss * 1048576 / pages, b["rmap"], b["pages"], b["contents"], b["page"],
				b["stable"], b["model"]
		delete b
	}
	BEGIN { print "job,pages,visits_per_s,rss_mib,rss_bytes_per_page,rmap_items,struct_page,contents,page_tables,stable_nodes,model_total" }
	/^job / {
		flush()
		job = $2; sub(":", "", job)
		for (i = 3; i <= NF; i++) {
			if ($(i + 1) == "distinct" || $(i + 1) == "pages")
				{ pages = $i; break }
			if ($i == "=") { pages = $(i + 1); break }
		}
	}
	/visits per second/ { vps = $4 }
	/RSS after|peak RSS/ { for (i = 1; i <= NF; i++) if ($i ~ /^MiB/) { rss = $(i - 1); break } }
	/B\/page/ { for (i = 1; i <= NF; i++) if ($i == "B/page") b[$1] = $(i - 1) }
	END { flush() }' "$tmp/out"
} >"$tmp/model.csv"
mv "$tmp/model.csv" "$res/model.csv"
echo "sizing.sh: done in $(since "$t0") s" >&2
