#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The checksum false positives of a recorded trace with page bytes (`-c
# bytes`: a digest trace cannot show them): one `ksmsim run` per hash with
# --summary-csv and --false-positives-csv, then
#
#   OUT/false-positives.csv          a row per hash: bits, checksums,
#       gate_changed, expected_false_positives (gate_changed x 2^-bits),
#       false_positives, cow_ksm, avg_pages_sharing, avg_pages_unshared,
#       ksmd_cpu_ms (modelled, the built-in cost table), wall_s, cpu_s and
#       max_rss_mib of the run
#   OUT/false-positives-HASH.csv     each false positive: t_us, mm, vpn,
#       the checksum kept, bytes_changed, changed_bytes (offsets in the page)
#   OUT/trace.csv                    the trace (`ksmsim trace stat`): its
#       name, size in MiB, page writes and distinct pages (blobs)
#
#   false-positives.sh [-o OUT] [-H "jhash2 crc32c xxhash xxh64"] TRACE
#
# Knobs as experiment.sh replays: pages_to_scan 1600, sleep_millisecs 200
# (PAGES_TO_SCAN, SLEEP_MS). KSMSIM: the binary (default build/cli/ksmsim
# of this checkout). A trace of millions of distinct pages keeps most of
# its blobs in $TMPDIR while it replays (traces/FORMAT.md, version 2).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
KSMSIM=${KSMSIM:-$here/../../build/cli/ksmsim}
out=. hashes="jhash2 crc32c xxhash xxh64"
die() { echo "false-positives.sh: $*" >&2; exit 2; }
while getopts "o:H:h" o; do
	case $o in
	o) out=$OPTARG ;;
	H) hashes=$OPTARG ;;
	h) sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "usage: false-positives.sh [-o OUT] [-H HASHES] TRACE" ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || die "usage: false-positives.sh [-o OUT] [-H HASHES] TRACE"
trace=$1
[ -r "$trace" ] || die "$trace: cannot read it"
[ -x "$KSMSIM" ] || die "no ksmsim at $KSMSIM (set KSMSIM)"
command -v /usr/bin/time >/dev/null || die "needs GNU time (apt-get install -y time)"
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksmsim-fp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
label=$(basename "$trace")
"$KSMSIM" trace stat "$trace" >"$tmp/stat" || die "trace stat failed"
awk -v t="$label" -v b="$(stat -c %s "$trace")" '
	$1 == "blobs" { blobs = $2 }
	$1 == "write" && NF == 2 { writes = $2 }
	END { print "trace,trace_mib,page_writes,distinct_pages"
	      printf "%s,%.1f,%d,%d\n", t, b / 1048576, writes, blobs }' "$tmp/stat" >"$tmp/trace.csv"
for h in $hashes; do
	echo "false-positives.sh: $h" >&2
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time-$h" "$KSMSIM" run --trace "$trace" \
		--trace-label "$label" --hash "$h" --pages-to-scan "${PAGES_TO_SCAN:-1600}" \
		--sleep-millisecs "${SLEEP_MS:-200}" --quiet --summary-csv "$tmp/s-$h.csv" \
		--false-positives-csv "$tmp/fp-$h.csv" || die "$h: ksmsim run failed"
done
python3 - "$tmp" "$out" $hashes <<'PY'
import csv, os, sys
tmp, out, hashes = sys.argv[1], sys.argv[2], sys.argv[3:]
bits = {"jhash2": 32, "crc32c": 32, "crc32": 32, "xxhash": 32, "xxh32": 32}
cols = ["hash", "bits", "checksums", "gate_changed", "expected_false_positives",
        "false_positives", "fp_rows", "cow_ksm", "avg_pages_sharing", "avg_pages_unshared",
        "ksmd_cpu_ms", "wall_s", "cpu_s", "max_rss_mib"]
rows = []
for h in hashes:
    s = next(csv.DictReader(open(f"{tmp}/s-{h}.csv")))
    fp = [l for l in open(f"{tmp}/fp-{h}.csv") if not l.startswith("#")]
    wall, user, sys_, rss = open(f"{tmp}/time-{h}").read().split()
    b = bits.get(h, 64)
    if int(s["false_positives"]) != len(fp) - 1:
        sys.exit(f"false-positives.sh: {h}: {len(fp) - 1} rows, summary {s['false_positives']}")
    rows.append([h, b, s["checksums"], s["gate_changed"],
                 f"{int(s['gate_changed']) * 2.0 ** -b:.3g}", s["false_positives"], len(fp) - 1,
                 s["cow_ksm"], s["avg_pages_sharing"], s["avg_pages_unshared"],
                 s["ksmd_cpu_ms"], wall, f"{float(user) + float(sys_):.2f}",
                 f"{int(rss) / 1024:.1f}"])
    os.replace(f"{tmp}/fp-{h}.csv", f"{out}/false-positives-{h}.csv")
with open(f"{out}/false-positives.csv.tmp", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(cols)
    w.writerows(rows)
os.replace(f"{out}/false-positives.csv.tmp", f"{out}/false-positives.csv")
PY
mv "$tmp/trace.csv" "$out/trace.csv"
cat "$out/false-positives.csv"
