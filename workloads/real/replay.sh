#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Replays traces through the model with several checksums and prints the
# final counters: replay.sh TRACE... (HASHES="xxhash crc32c jhash2").
. "$(dirname "$0")/common.sh"
printf '%-22s %-7s %13s %14s %14s %8s %15s %9s\n' trace hash peak_sharing unshared@peak end_unshared cow_ksm false_positives ideal@peak
for t in "$@"; do
	for h in ${HASHES:-xxhash crc32c jhash2}; do
		csv=$WORK/replay.$$.csv
		"$KSMSIM" run --trace "$t" --hash "$h" --marks-csv "$csv" >/dev/null
		# the peak of pages_sharing over the marks, and the last mark's totals
		python3 - "$csv" "$(basename "$t")" "$h" <<'PY'
import csv, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
peak = max(rows, key=lambda r: int(r["pages_sharing"]))
last = rows[-1]
print("%-22s %-7s %13s %14s %14s %8s %15s %9s" % (sys.argv[2], sys.argv[3], peak["pages_sharing"],
      peak["pages_unshared"], last["pages_unshared"], last["cow_ksm"], last["false_positives"],
      peak["ideal_saved"]))
PY
		rm -f "$csv"
	done
done
