#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Writes predicted/CASE.csv and predicted/CASE.mm.csv: the model's marks
# for cases/CASE.ksmt (`ksmsim run --check`), in the columns record.sh
# writes to expected/ (the kernel's counters; not the model's own), for a
# case the live kernel has not replayed yet. run.sh compares such a case
# with predicted/ until `record.sh` writes its expected/ files; then the
# live recording is what counts, and predicted/ shows what the model said
# beforehand (diff them with `ksmsim diff`).
# usage: predict.sh PATH/TO/ksmsim CASE...
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${1:?usage: predict.sh PATH/TO/ksmsim CASE...}")
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here" || exit 2
mkdir -p predicted
status=0
for c in "$@"; do
  c=$(basename "$c" .ksmt)
  if ! "$bin" run --check --trace "cases/$c.ksmt" --marks-csv "$tmp/$c.csv" \
      --mm-stats-csv "$tmp/$c.mm.csv" >"$tmp/$c.out" 2>&1; then
    echo "FAIL $c: $(tail -n 1 "$tmp/$c.out")"; status=1; continue
  fi
  python3 - "$c" "$tmp/$c" "predicted/$c" <<'PY' || status=1
import csv, sys
case, src, out = sys.argv[1:]
# the columns record.sh keeps: the live replay's, up to the THP events
kernel = ["label", "t_us", "full_scans", "pages_scanned", "pages_shared", "pages_sharing",
          "pages_unshared", "pages_volatile", "pages_skipped", "ksm_zero_pages",
          "stable_node_chains", "stable_node_dups", "general_profit", "cow_ksm",
          "thp_fault_alloc", "thp_split_page", "thp_split_pmd"]
for kind, note in (("", "marks"), (".mm", "/proc/PID/ksm_stat of every process at each mark")):
    rows = list(csv.reader(l for l in open(f"{src}{kind}.csv") if not l.startswith("#")))
    header = rows[0]
    keep = [i for i, h in enumerate(header) if kind == ".mm" or h in kernel]
    with open(f"{out}{kind}.csv", "w") as f:
        f.write(f"# {note} PREDICTED by the model (ksmsim run --check) for cases/{case}.ksmt, "
                "not recorded on a live kernel: written by predict.sh\n")
        w = csv.writer(f, lineterminator="\n")
        for row in rows:
            w.writerow([row[i] for i in keep])
    print(f"predicted {out}{kind}.csv")
PY
done
exit $status
