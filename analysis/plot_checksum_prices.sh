#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The checksum's price a 4 KiB page, every source side by side, in one PNG:
#   left   ksmd's checksums (jhash2, crc32c, xxhash = XXH64): what the model
#          charges (the cost table's checksum:NAME), the price as ksmd
#          computes it (checksum-prices.csv: XXH64 from the live ksmd's
#          profile, the others kernel-shaped twins; median, min-max
#          whisker), and the userspace libraries cold and hot (costs.csv)
#   right  every hash's userspace library, cold and hot (costs.csv)
# Linear axes: the prices differ by less than 20x on the left.
# usage: analysis/plot_checksum_prices.sh COSTS.csv PRICES.csv TABLE.csv CPU OUT.png
#   COSTS.csv   ksmsim bench costs --csv
#   PRICES.csv  bench/checksum_prices.sh's output (analysis/results/cpu/)
#   TABLE.csv   the model's cost table (bench/tables/costs-*.csv)
#   CPU         the machine the three were measured on, named in the title
set -euo pipefail
die() { echo "plot_checksum_prices.sh: $*" >&2; exit 2; }
(($# == 5)) || die "usage: plot_checksum_prices.sh COSTS.csv PRICES.csv TABLE.csv CPU OUT.png"
costs=$1 prices=$2 table=$3 cpu=$4 out=$5
for f in "$costs" "$prices" "$table"; do [[ -r $f && -s $f ]] || die "cannot read $f"; done
command -v gnuplot >/dev/null || die "gnuplot not found (apt-get install gnuplot-nox)"
[[ $cpu =~ ^[A-Za-z0-9\ ,._()-]+$ ]] || die "CPU: letters, digits, spaces and ,._()- only"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

python3 - "$costs" "$prices" "$table" "$T" <<'EOF' || die "$(cat "$T/err" 2>/dev/null)"
import csv, sys
costs, prices, table, t = sys.argv[1:]
def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(l for l in f if not l.startswith("#")))
def num(path, row, col):
    try:
        return float(row[col])
    except (KeyError, TypeError, ValueError):
        open(t + "/err", "w").write(f"{path}: no number in column {col}\n")
        sys.exit(2)
bench = {r["name"]: r for r in rows(costs) if r.get("kind") == "hash"}
price = {r["checksum"]: r for r in rows(prices)}
model = {r["term"]: r for r in rows(table)}
# ksmd's checksums: the name the model and bench use, the price file's name
ksmd = [("jhash2", "jhash2"), ("crc32c", "crc32c"), ("xxhash", "xxh64")]
def fmt(v):
    return f"{v:.0f}" if v >= 100 else f"{v:.3g}"  # no comma: the .dat is comma-separated
with open(t + "/left.dat", "w") as f:
    for i, (name, pname) in enumerate(ksmd, 1):
        for what, src in (("model", "checksum:" + name), ("ksmd", pname),
                          ("cold", name), ("hot", name)):
            if what == "model":
                if src not in model:
                    continue
                v = lo = hi = num(table, model[src], "ns")
            elif what == "ksmd":
                if src not in price:
                    continue
                r = price[src]
                v, lo, hi = (num(prices, r, c) for c in ("ns_median", "ns_min", "ns_max"))
            else:
                if src not in bench:
                    continue
                v = lo = hi = num(costs, bench[src], what + "_ns_per_page")
            k = ("model", "ksmd", "cold", "hot").index(what)
            f.write(f"{i + (k - 1.5) * 0.2},{k + 1},{v},{lo},{hi},{fmt(v)}\n")
with open(t + "/left.tics", "w") as f:
    f.write(", ".join(f"'{n if n != 'xxhash' else 'xxhash (XXH64)'}' {i}"
                      for i, (n, _) in enumerate(ksmd, 1)))
with open(t + "/right.dat", "w") as f:
    for i, (name, r) in enumerate(bench.items(), 1):
        for k, what in enumerate(("cold", "hot")):
            v = num(costs, r, what + "_ns_per_page")
            f.write(f"{i + (k - 0.5) * 0.38},{k + 3},{v},{fmt(v)}\n")
with open(t + "/right.tics", "w") as f:
    f.write(", ".join(f"'{n}' {i}" for i, n in enumerate(bench, 1)))
EOF
[[ -s $T/left.dat && -s $T/right.dat ]] || die "no checksum found in $costs"
nr=$(wc -l <"$T/right.dat")
gnuplot 2>"$T/gp.err" <<EOF || die "gnuplot: $(head -2 "$T/gp.err" | tr '\n' ' ')"
set terminal pngcairo size 1500,720 noenhanced font 'Sans,12'
set output '$T/out.png'
set datafile separator ','
set grid ytics
set style fill solid 0.85 border lc 'black'
set linetype 1 lc rgb '#444444'
set linetype 2 lc rgb '#d55e00'
set linetype 3 lc rgb '#0072b2'
set linetype 4 lc rgb '#56b4e9'
set multiplot layout 1,2 title 'Checksum price a 4 KiB page on $cpu (ns; one machine, another CPU can order them otherwise)'
set title "ksmd's checksums: what the model charges and what was measured"
set ylabel 'ns per page'
set xtics ($(cat "$T/left.tics")) scale 0
set xrange [0.45:3.55]
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set boxwidth 0.19
set key inside top right opaque box width -2
plot '$T/left.dat' using 1:(\$2 == 1 ? \$3 : NaN) with boxes lt 1 title 'the model charges (cost table)', \\
     '' using 1:(\$2 == 2 ? \$3 : NaN) with boxes lt 2 title 'as ksmd computes it (median, min-max)', \\
     '' using 1:(\$2 == 2 ? \$3 : NaN):4:5 with yerrorbars lc 'black' pt 0 lw 1.5 notitle, \\
     '' using 1:(\$2 == 3 ? \$3 : NaN) with boxes lt 3 title 'userspace library, cold', \\
     '' using 1:(\$2 == 4 ? \$3 : NaN) with boxes lt 4 title 'userspace library, hot (page in L1)', \\
     '' using 1:5:6 with labels offset 0,0.8 font ',10' notitle
set title 'every hash, userspace library (ksmsim bench costs)'
set xtics ($(cat "$T/right.tics")) scale 0 rotate by -35 left offset -1,0
set xrange [0.45:$((nr / 2)).55]
set boxwidth 0.36
set key inside top left opaque box width -2
plot '$T/right.dat' using 1:(\$2 == 3 ? \$3 : NaN) with boxes lt 3 title 'cold: streaming from memory', \\
     '' using 1:(\$2 == 4 ? \$3 : NaN) with boxes lt 4 title 'hot: page in L1', \\
     '' using 1:3:4 with labels offset 0,0.8 font ',9' rotate by 90 left notitle
unset multiplot
EOF
[[ $(head -c 8 "$T/out.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || die "gnuplot wrote no PNG"
cp "$T/out.png" "$out.tmp" && mv "$out.tmp" "$out" || die "cannot write $out"
echo "$out"
