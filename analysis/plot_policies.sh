#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# policies.sh's figure for one trace, over its seeds (policies/seeds.csv:
# `ksmsim advise` rows with trace and seed first): modelled ksmd CPU (log
# x: sha1 and sha256 cost 6-12 times the rest) against mean pages saved
# (y from 0), one point per row at its mean over the seeds, bars from the
# lowest to the highest seed. Every point is named: the kernel's rows above
# their point, classified's below, points that coincide share a label, and
# a label that would run into another moves a column aside (or, with no
# column free, starts past it), joined to its point by a thin line.
# Rows with a false positive in any seed are crossed out in red and named
# "excluded" (the pick leaves them out). Today's kernel (kernel/xxhash) is
# a green square; the pick among the checksums the kernel has (advise's
# rule on the means: the cheapest false-positive-free kernel row that
# saves as much as the best of them) a blue circle labelled "pick (kernel
# hash)"; kernel/xxh3 is labelled "not in the kernel". The frontier of the
# means (no row has no more CPU and no less saved, one strictly) is red,
# joined as a staircase. A row with fewer seeds than the rest (policies.sh
# replays seed 1 only with every checksum) is starred, and is neither pick
# nor frontier: those compare rows over the same seeds.
# usage: analysis/plot_policies.sh SEEDS-CSV TRACE PNG
set -euo pipefail
usage="usage: plot_policies.sh SEEDS-CSV TRACE PNG"
(($# == 3)) || { echo "plot_policies.sh: $usage" >&2; exit 2; }
csv=$1 name=$2 png=$3
command -v gnuplot >/dev/null || { echo "plot_policies.sh: gnuplot not found" >&2; exit 2; }
[[ -r $csv ]] || { echo "plot_policies.sh: cannot read $csv" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 - "$csv" "$name" "$T" <<'EOF' || exit 2
import csv, math, sys
path, name, d = sys.argv[1:]
NOT_IN_KERNEL = ("xxh3",)  # as render_results.py's: the kernel has no XXH3
try:
    rows = [r for r in csv.DictReader(open(path, newline="")) if r.get("trace") == name]
except (OSError, csv.Error) as e:
    sys.exit(f"plot_policies.sh: {path}: {e}")
if not rows:
    sys.exit(f"plot_policies.sh: {path} has no rows for trace '{name}'")
by = {}
for r in rows:
    try:
        key = r["policy"].split(":")[0] + ("/" + r["hash"] if r["hash"] != "none" else "")
        by.setdefault(key, []).append((float(r["ksmd_cpu_ms"]), float(r["saved_mean"]),
                                       float(r["false_positives"])))
    except (KeyError, ValueError) as e:
        sys.exit(f"plot_policies.sh: {path}: a row of '{name}' lacks a number ({e})")
seeds = len({r["seed"] for r in rows})
pts = {}
for k, v in by.items():
    cpu, sv, fp = zip(*v)
    pts[k] = dict(x=sum(cpu) / len(cpu), y=sum(sv) / len(sv), x0=min(cpu), x1=max(cpu),
                  y0=min(sv), y1=max(sv), fp=max(fp), n=len(v))
# the pick and the frontier compare means over every seed: rows replayed in
# fewer seeds (seed 1 only) are drawn, not judged
full = [k for k in pts if pts[k]["n"] == max(p["n"] for p in pts.values())]
kern = [k for k in full if k.startswith("kernel/") and k.split("/")[1] not in NOT_IN_KERNEL]
clean = [k for k in kern if pts[k]["fp"] == 0] or kern
best = max(pts[k]["y"] for k in clean)
pick = min((k for k in clean if pts[k]["y"] >= best - 1e-9), key=lambda k: pts[k]["x"])
front = sorted((k for k in full if not any(
    pts[o]["x"] <= pts[k]["x"] and pts[o]["y"] >= pts[k]["y"]
    and (pts[o]["x"] < pts[k]["x"] or pts[o]["y"] > pts[k]["y"]) for o in full)),
    key=lambda k: pts[k]["x"])


def group(k):
    if pts[k]["fp"] > 0:
        return "fp"
    p = k.split("/")[0]
    if p == "kernel":
        return "nik" if k.split("/")[1] in NOT_IN_KERNEL else "kernel"
    return p


def line(k):
    p = pts[k]
    return f"{p['x']:.3f} {p['y']:.3f} {p['x0']:.3f} {p['x1']:.3f} {p['y0']:.3f} {p['y1']:.3f}\n"


for g in ("kernel", "nik", "classified", "no-gate", "dirty-bit", "partial-hash", "fp"):
    with open(f"{d}/{g}.dat", "w") as fh:
        fh.write("".join(line(k) for k in pts if group(k) == g) or "nan nan nan nan nan nan\n")
with open(f"{d}/front.dat", "w") as fh:
    fh.write("".join(line(k) for k in front))
for f_, k in (("today", "kernel/xxhash"), ("pick", pick)):
    with open(f"{d}/{f_}.dat", "w") as fh:
        fh.write(line(k) if k in pts else "nan nan nan nan nan nan\n")
# labels: the kernel's rows and no-gate above their points, the others
# below; points of one side closer than 0.03 decade of CPU and 5% of the
# y range share a label, so no two overprint
ymax = max(p["y1"] for p in pts.values()) or 1


def tag(k):
    notes = []
    if pts[k]["fp"] > 0:
        notes.append(f"excluded: {pts[k]['fp']:,.0f} FPs")
    if k.startswith("kernel/") and k.split("/")[1] in NOT_IN_KERNEL:
        notes.append("not in the kernel")
    if k == "kernel/xxhash":
        notes.append("today")
    if k == pick:
        notes.append("pick: kernel hash")
    star = "*" if pts[k]["n"] < max(p["n"] for p in pts.values()) else ""
    return k + star + (f" ({'; '.join(notes)})" if notes else "")


labels = []
# The canvas, fixed so that a label's place is known in pixels: a label
# whose column would run into one placed before it (a point close by in
# CPU but at another height, e.g. no-gate beside the kernel's rows) moves
# a column aside, joined to its point by a thin line.
W, H, GX0, GX1, GY0, GY1 = 1400, 1000, 0.08, 0.98, 0.07, 0.92
CH_W, LINE_H, OFF = 6.5, 13.0, 13.0   # Sans 9: a character along the column, a line across
xlo = min(p["x0"] for p in pts.values()) / 1.5
xhi = max(p["x1"] for p in pts.values()) * 1.5
ytop = ymax * 1.6


def px(x, y):
    return (W * (GX0 + (GX1 - GX0) * math.log(x / xlo) / math.log(xhi / xlo)),
            H * (GY0 + (GY1 - GY0) * y / ytop))


# what a label must not cover: every point (today's square and the pick's
# ring larger), owned by its row so that its own label may start beside
# it, and the frontier's staircase
placed = []   # (x0, y0, x1, y1, owner) in pixels, y up
for k, p in pts.items():
    qx, qy = px(p["x"], p["y"])
    r = 16 if k in ("kernel/xxhash", pick) else 7
    placed.append((qx - r, qy - r, qx + r, qy + r, k))
for a_, b_ in zip(front, front[1:]):
    (x1, y1), (x2, y2) = px(pts[a_]["x"], pts[a_]["y"]), px(pts[b_]["x"], pts[b_]["y"])
    placed.append((min(x1, x2), y1 - 2, max(x1, x2), y1 + 2, None))
    placed.append((x2 - 2, min(y1, y2), x2 + 2, max(y1, y2), None))
for side in ("above", "below"):
    ks = sorted((k for k in pts if ("above" if k.startswith("kernel/") or k == "no-gate"
                                    else "below") == side), key=lambda k: pts[k]["x"])
    clusters = []
    for k in ks:
        c = clusters[-1] if clusters else None
        if (c and abs(math.log10(pts[k]["x"]) - math.log10(pts[c[-1]]["x"])) < 0.03
                and abs(pts[k]["y"] - pts[c[-1]]["y"]) < 0.05 * ymax):
            c.append(k)
        else:
            clusters.append([k])
    for c in clusters:
        pols = {k.split("/")[0] for k in c}
        one = len(pols) == 1 and pols <= {"kernel", "classified"}
        # one policy's label drops its name and takes its colour
        parts = [tag(k).split("/", 1)[1] if one else tag(k) for k in c]
        # a long label takes a line (a column, rotated) per row
        text = (",\\n" if len(", ".join(parts)) > 40 else ", ").join(parts)
        col = {"kernel": "#4477aa", "classified": "#aa3377"}.get(pols.pop(), "#000000") if one else "#000000"
        x = math.exp(sum(math.log(pts[k]["x"]) for k in c) / len(c))
        y = sum(pts[k]["y"] for k in c) / len(c)
        lines = text.split(",\\n")
        wide, tall = LINE_H * len(lines) / 2 + 2, CH_W * max(len(t) for t in lines) + 4
        cx, cy = px(x, y)
        up = side == "above"

        def box_at(lx, start):
            return (lx - wide, start if up else start - tall, lx + wide, start + tall if up else start)

        def hits(b):
            return [o for o in placed if o[4] not in c and
                    o[0] < b[2] and b[0] < o[2] and o[1] < b[3] and b[1] < o[3]]

        # its own column first, then one a step to either side, then past what is in the way
        off = 20 if any(k in ("kernel/xxhash", pick) for k in c) else OFF
        start = cy + off if up else cy - off
        lx = next((cx + d for d in (0, 18, -18, 36, -36, 54, -54) if not hits(box_at(cx + d, start))), None)
        if lx is None:
            lx = cx
            while hits(box_at(lx, start)):
                h = hits(box_at(lx, start))
                start = max(o[3] for o in h) + 6 if up else min(o[1] for o in h) - 6
        placed.append(box_at(lx, start) + ("",))

        def data(qx, qy):   # pixels back to the axes' units
            return (xlo * math.exp((qx / W - GX0) / (GX1 - GX0) * math.log(xhi / xlo)),
                    (qy / H - GY0) / (GY1 - GY0) * ytop)
        ax, ay = data(lx, start)
        if lx != cx or start != (cy + off if up else cy - off):
            nx, ny = data(cx, cy + (6 if up else -6))
            labels.append(f"set arrow from {nx:.3f},{ny:.3f} to {ax:.3f},{ay:.3f} nohead lw 0.6 lc rgb '{col}'")
        where = "left rotate by 90" if up else "right rotate by 90"
        labels.append(f"set label \"{text}\" at {ax:.3f},{ay:.3f} {where} tc rgb '{col}' font 'Sans,9'")
# 1-2-5 tics on the log axis
lo, hi = xlo, xhi
tics = [m * 10 ** e for e in range(int(math.floor(math.log10(lo))), int(math.ceil(math.log10(hi))) + 1)
        for m in (1, 2, 5) if lo <= m * 10 ** e <= hi]
labels.append("set xtics (" + ", ".join(f'"{t:,}" {t}' for t in tics) + ")")
with open(f"{d}/labels.gp", "w") as fh:
    fh.write("\n".join(labels) + "\n")
with open(f"{d}/meta", "w") as fh:
    fh.write(f"{seeds} {pick} {min(p['x0'] for p in pts.values()):.3f} {max(p['x1'] for p in pts.values()):.3f} {ymax:.3f}\n")
EOF
read -r seeds pick xmin xmax ymax <"$T/meta"
E="using 1:2:3:4:5:6 with xyerrorbars"
gnuplot <<GP
set terminal pngcairo size 1400,1000 noenhanced font 'Sans,11'
set output '$T/p.png'
set title "$name: modelled ksmd CPU against mean pages saved, $seeds generator seed$([[ $seeds == 1 ]] || echo s) (points: means; bars: lowest to highest seed)\nCPU from the built-in cost table fitted on AMD EPYC; red crosses: rows with false positives (FPs), left out of the pick; * seed 1 only"
set xlabel 'ksmd CPU over the run (ms, modelled; log scale)'
set ylabel 'mean pages saved (pages_sharing + ksm_zero_pages; axis from 0)'
set lmargin at screen 0.08
set rmargin at screen 0.98
set bmargin at screen 0.07
set tmargin at screen 0.92
set logscale x
set xrange [$xmin / 1.5 : $xmax * 1.5]
set yrange [0 : $ymax * 1.6]
set format y '%.0f'
set grid
set key bottom right box opaque
set bars small
load '$T/labels.gp'
plot '$T/front.dat' using 1:2 with steps lw 2 lc rgb '#cc3311' title 'frontier of the means (staircase)', \
     '$T/kernel.dat' $E pt 7 ps 1.2 lc rgb '#4477aa' title 'kernel, a checksum the kernel has', \
     '$T/nik.dat' $E pt 6 ps 1.2 lc rgb '#777777' title 'kernel, checksum not in the kernel (xxh3)', \
     '$T/classified.dat' $E pt 9 ps 1.2 lc rgb '#aa3377' title 'classified (16 classes)', \
     '$T/no-gate.dat' $E pt 5 ps 1.2 lc rgb '#ee7733' title 'no-gate', \
     '$T/dirty-bit.dat' $E pt 13 ps 1.4 lc rgb '#996633' title 'dirty-bit', \
     '$T/partial-hash.dat' $E pt 11 ps 1.2 lc rgb '#009988' title 'partial-hash', \
     '$T/fp.dat' using 1:2 with points pt 2 ps 2.2 lw 2 lc rgb '#cc3311' title 'false positives: excluded', \
     '$T/front.dat' using 1:2 with points pt 6 ps 2.0 lw 2 lc rgb '#cc3311' notitle, \
     '$T/today.dat' using 1:2 with points pt 4 ps 3.0 lw 3 lc rgb '#228833' title "today's kernel (kernel/xxhash)", \
     '$T/pick.dat' using 1:2 with points pt 6 ps 3.8 lw 2 lc rgb '#0044cc' title "pick among kernel hashes: $pick"
GP
[[ -s $T/p.png ]] || { echo "plot_policies.sh: gnuplot made no figure" >&2; exit 2; }
cp "$T/p.png" "$png.tmp.$$" && mv "$png.tmp.$$" "$png"
echo "$png"
