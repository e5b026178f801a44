#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Replays recorded guest traces through the model under several checksums
# and prints a Markdown table row per trace and hash:
#
#   replay-table.sh TRACE...
#
# The counters are read at the last 'vmI-end' mark (the last guest's
# workload ended; with record-guests.sh -H every guest is still up there):
# cow_ksm, ksmd_cpu_ms, pages_sharing, pages_unshared, unshared/sharing,
# and the peak of pages_sharing over the run (1 s samples).
# HASHES (default "jhash2 crc32c xxhash"), PAGES_TO_SCAN (1600),
# SLEEP_MS (200), KSMSIM (default build/cli/ksmsim of this checkout).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
KSMSIM=${KSMSIM:-$here/../../build/cli/ksmsim}
[ $# -gt 0 ] || { echo "usage: replay-table.sh TRACE..." >&2; exit 2; }
[ -x "$KSMSIM" ] || { echo "replay-table.sh: no ksmsim at $KSMSIM (set KSMSIM)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "replay-table.sh: needs python3" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksmsim-replay.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "| trace | hash | cow_ksm | ksmd_cpu_ms | pages_sharing | pages_unshared | unshared/sharing | peak pages_sharing |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for t in "$@"; do
	for h in ${HASHES:-jhash2 crc32c xxhash}; do
		"$KSMSIM" run --trace "$t" --hash "$h" --pages-to-scan "${PAGES_TO_SCAN:-1600}" \
			--sleep-millisecs "${SLEEP_MS:-200}" --quiet --marks-csv "$tmp/m.csv" \
			--summary-csv "$tmp/s.csv"
		python3 - "$tmp/m.csv" "$tmp/s.csv" "$(basename "$t")" "$h" <<'PY'
import csv, re, sys
def rows(p):
    return list(csv.DictReader(l for l in open(p) if not l.startswith("#")))
marks = [r for r in rows(sys.argv[1]) if re.fullmatch(r"vm[0-9]+-end", r["label"])]
if not marks:
    sys.exit("replay-table.sh: %s has no vmI-end mark" % sys.argv[3])
m = marks[-1]
s = rows(sys.argv[2])[0]
sh, un = int(m["pages_sharing"]), int(m["pages_unshared"])
print("| %s | %s | %s | %.1f | %d | %d | %s | %s |" % (sys.argv[3], sys.argv[4], m["cow_ksm"],
      float(m["ksmd_cpu_ms"]), sh, un, "%.2f" % (un / sh) if sh else "-", s["peak_pages_sharing"]))
PY
	done
done
