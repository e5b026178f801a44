#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Each cost term's price from the live ksmd's own functions: every trace
# is replayed REPEAT times on the live KSM with `ksmsim live --profile`
# (root, perf events) and once through the model with `--profile-csv`;
# a term's price is its functions' live ms at the last mark (the live
# terms folded as `diff --profile` folds them) over the model's count of
# its events (visits, checksums, tree levels, merges, rmap_items made,
# chain steps, passes), printed as the median and range over the repeats.
# The model's counts are the kernel's where the model conforms (checksums,
# merges); tree levels and visits are the model's own notion.
# usage: profile_prices.sh KSMSIM REPEAT TRACE...
set -u
bin=${1:?usage: profile_prices.sh KSMSIM REPEAT TRACE...}
rep=${2:?}
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# profile_prices.sh on $(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1)," \
	"$(nproc) CPUs, Linux $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1 /proc/loadavg) at the start"
echo "trace,term,count,live_ms_median,live_ms_min,live_ms_max,ns_per_event_median,ns_per_event_min,ns_per_event_max,share_median"
for t in "$@"; do
	name=$(basename "$t" .ksmt)
	"$bin" run --trace "$t" --profile-csv "$tmp/model.csv" >/dev/null || exit 1
	for r in $(seq 1 "$rep"); do
		"$bin" live --trace "$t" --marks-csv /dev/null --profile "$tmp/live.$r.csv" >"$tmp/out" 2>&1 ||
			{ echo "profile_prices.sh: $name: $(tail -n 1 "$tmp/out")" >&2; exit 1; }
	done
	# the last mark of each file: one row per term (12 live, 8 modelled)
	grep -v '^#' "$tmp/model.csv" | tail -n 8 >"$tmp/m"
	for r in $(seq 1 "$rep"); do grep -v '^#' "$tmp/live.$r.csv" | tail -n 12 >"$tmp/l.$r"; done
	awk -F, -v name="$name" '
	function isort(a, n,    i, j, t) {	# mawk has no asort
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	}
	function group(term) {
		if (term == "page_table_walk" || term == "mmap_lock" || term == "scan") return "visit"
		if (term == "page_compare" || term == "stable_folio" || term == "tree_page") return "tree_search"
		return term
	}
	FNR == 1 { file++ }
	file == 1 { count[$2] = $3; next }
	{ ms[file, group($2)] += $5; sh[file, group($2)] += $4 }
	END {
		for (g in count) {
			n = 0
			for (f = 2; f <= file; f++) { v[++n] = ms[f, g] + 0; s[n] = sh[f, g] + 0 }
			isort(v, n); isort(s, n)
			med = v[int((n + 1) / 2)]
			c = count[g]
			printf "%s,%s,%d,%.1f,%.1f,%.1f,%s,%s,%s,%.3f\n", name, g, c, med, v[1], v[n],
				(c > 0 ? sprintf("%.1f", med * 1e6 / c) : "-"),
				(c > 0 ? sprintf("%.1f", v[1] * 1e6 / c) : "-"),
				(c > 0 ? sprintf("%.1f", v[n] * 1e6 / c) : "-"), s[int((n + 1) / 2)]
		}
	}' "$tmp/m" $(for r in $(seq 1 "$rep"); do echo "$tmp/l.$r"; done) | sort -t, -k2,2
done
