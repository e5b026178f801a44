#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The checksum's share of ksmd's CPU on the 2017 kernel-build and iozone
# traces, per hash, with a cost table (default: the one fitted for this CPU
# in bench/tables/, else the built-in one): each trace generated at --scale
# S (`ksmsim gen WORKLOAD --scale S --seed 1`), replayed as
# analysis/reproduce_2017.sh replays it (pages_to_scan 1600,
# sleep_millisecs 200, --batch-time) under jhash2, crc32c and xxhash; the
# share is checksums x checksum_ns (the price the run charged a checksum:
# the table's checksum:HASH row, from the run's summary CSV) over
# ksmd_cpu_ms at the end. Writes checksum_share.csv and checksum_share.md here.
# usage: checksum_share.sh KSMSIM [SCALE] [TABLE.csv]
set -u
bin=${1:?usage: checksum_share.sh KSMSIM [SCALE] [TABLE.csv]}
scale=${2:-0.125}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1)
slug=$(printf '%s' "$cpu" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//')
table=${3:-$top/bench/tables/costs-$slug.csv}
[ -f "$table" ] || { echo "checksum_share.sh: no table $table" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "workload,scale,hash,checksums,checksum_ns,checksum_ms,ksmd_cpu_ms,share" >"$tmp/share.csv"
for w in kernel-build iozone; do
	"$bin" gen "$w" --scale "$scale" --seed 1 -o "$tmp/$w.ksmb" || exit 1
	for h in jhash2 crc32c xxhash; do
		nice -n 19 "$bin" run --trace "$tmp/$w.ksmb" --hash "$h" --costs-csv "$table" \
			--pages-to-scan 1600 --sleep-millisecs 200 --batch-time --no-ideal \
			--marks-csv "$tmp/m.csv" --summary-csv "$tmp/s.csv" >/dev/null || exit 1
		python3 - "$w" "$scale" "$h" "$tmp/s.csv" >>"$tmp/share.csv" <<'PY'
import csv, sys
w, scale, h, summ = sys.argv[1:]
row = next(csv.DictReader(l for l in open(summ) if not l.startswith("#")))
# the price the run charged, as its summary says: no second reading of the table
price = float(row["checksum_ns"])
n, cpu = int(row["checksums"]), float(row["ksmd_cpu_ms"])
ms = n * price / 1e6
print(f"{w},{scale},{h},{n},{price:.1f},{ms:.1f},{cpu:.1f},{ms / cpu if cpu else 0:.3f}")
PY
	done
done
cp "$tmp/share.csv" "$here/checksum_share.csv"
python3 - "$here/checksum_share.csv" "$here/checksum_share.md" "$table" "$cpu" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
with open(sys.argv[2], "w") as f:
    f.write(f"The checksum's share of modelled ksmd CPU, cost table "
            f"`{sys.argv[3].split('/')[-1]}` (fitted on {sys.argv[4]}), "
            f"made by `checksum_share.sh` (traces at --scale {rows[0]['scale']}, "
            "pages_to_scan 1600, sleep_millisecs 200, --batch-time). "
            "Sioh Lee's 2017 profile put jhash2 at ~26% of ksmd.\n\n")
    f.write("| workload | hash | checksums | ns each | checksum ms | ksmd ms | share |\n"
            "|---|---|---:|---:|---:|---:|---:|\n")
    for r in rows:
        f.write(f"| {r['workload']} | {r['hash']} | {int(r['checksums']):,} | {r['checksum_ns']} | "
                f"{float(r['checksum_ms']):,.1f} | {float(r['ksmd_cpu_ms']):,.1f} | "
                f"{100 * float(r['share']):.1f}% |\n")
PY
echo "wrote $here/checksum_share.csv and checksum_share.md"
