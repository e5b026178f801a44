#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The checksums as the kernel computes them (sim/MODEL.md, "Calibrating
# from the profile"). XXH64: the live ksmd's own, the checksum term of
# `ksmsim bench calibrate` (its xxh64's time in the profile over the
# model's checksums, fitted over every scenario; spread: the fit on each
# live replay alone), from calibrate's printed output CALIBRATE.txt.
# jhash2 and crc32c: their kernel-shaped userspace twins (bench/ref_kernel.c,
# timed by checksum-twins in this thread's CPU time over 64 MiB) times the
# measured ratio of the kernel's XXH64 to our XXH64 twin on this machine,
# ROUNDS times (at least 5), each round its own ratio: median and range.
# usage: checksum_prices.sh BUILD-DIR CALIBRATE.txt OUT.csv [ROUNDS]
set -u
build=${1:?usage: checksum_prices.sh BUILD-DIR CALIBRATE.txt OUT.csv [ROUNDS]}
cal=${2:?}
out=${3:?}
rounds=${4:-5}
[ "$rounds" -ge 5 ] || { echo "checksum_prices.sh: ROUNDS must be at least 5" >&2; exit 2; }
row=$(awk '$1 == "checksum" && $5 == "checksum" { print $2, $3, $4 }' "$cal")
[ -n "$row" ] || { echo "checksum_prices.sh: $cal: no checksum price row (bench calibrate's profile fit)" >&2; exit 2; }
facts=$(sed -n 's/^machine: //p' "$cal" | head -n 1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/bench/checksum-twins" "$rounds" >"$tmp/twins.csv" || exit 1
python3 - "$tmp/twins.csv" "$out" "$cal" "$facts" $row <<'PY'
import csv, statistics, sys
twins, out, cal, facts = sys.argv[1:5]
k, kmin, kmax = map(float, sys.argv[5:8])
t = list(csv.DictReader(open(twins)))
per = [l.split() for l in open(cal) if l.startswith("xxh64/page ")]
scen = [float(p[3]) for p in per]
with open(out, "w") as f:
    f.write(f"# bench/checksum_prices.sh: calibrate on {facts}; twins timed "
            f"{len(t)} rounds ({', '.join(r['xxh64_ns'] for r in t)} ns a page for our XXH64 twin)\n")
    f.write("checksum,ns_median,ns_min,ns_max,ratio_to_xxh64_median,ratio_min,ratio_max,how\n")
    f.write(f"xxh64,{k:.1f},{kmin:.1f},{kmax:.1f},1,1,1,live ksmd: xxh64's profile time over "
            f"the checksums (calibrate's checksum term; scenarios' own {min(scen):.0f}-{max(scen):.0f})\n")
    for name in ("jhash2", "crc32c"):
        ratio = [float(r[f"{name}_ns"]) / float(r["xxh64_ns"]) for r in t]
        med = statistics.median(ratio)
        f.write(f"{name},{k * med:.1f},{kmin * min(ratio):.1f},{kmax * max(ratio):.1f},"
                f"{med:.3f},{min(ratio):.3f},{max(ratio):.3f},kernel-shaped twin times "
                f"(kernel XXH64 / our XXH64 twin)\n")
print(open(out).read(), end="")
PY
