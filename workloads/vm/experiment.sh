#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Issue 17's experiment on real guests: records N qemu guests running each
# of build, fio and numpy (full tier), generates the synthetic equivalents
# (ksmsim gen kernel-build, iozone, number-crunching) at the same size and
# duration, replays everything under jhash2, crc32c and xxhash with the
# 2017 knobs and prints the 2017 / real / synthetic table, then the real
# traces' page statistics (what the generators' parameters stand for).
#
#   experiment.sh
#
# Environment: N (guests, default 4), MIB (guest RAM, 512), SEED (gen's
# seed, 1), FIO_S (fio's seconds per job, 5), HOLD (seconds each guest
# stays up after its end, 20; build 40), WORKLOADS ("fio numpy build",
# the order they are recorded in), HASHES ("jhash2 crc32c xxhash"), OUT
# (traces, /tmp/ksmsim-vm), REUSE=1 (keep a recorded trace that already
# exists instead of recording again), STEPS (any of "record replay
# stats", default all three; without replay the table is printed from the
# rows of the last run, $OUT/exp-rows.csv), KSMSIM (default build/cli/ksmsim
# of this checkout), KSMSIM_VM_CACHE (the image cache, as record-guests.sh),
# CALIBRATION (the generators' --calibration, one or more of "2017
# guests-tcg", default 2017: rows 'synthetic' as before; any other one adds
# rows 'synthetic-NAME' from exp-syn-GEN-NAME-Nvm.ksmb and a table of each
# synthetic row against the real one, in per cent), KVM_CLOCK (a factor
# F: each real trace is also retimed by F with `ksmsim trace retime` and
# replayed as rows 'real-kvm': the same writes on the clock of a guest that
# runs 1/F times faster; tcg-slowdown.sh measures F for this machine's TCG).
# The 4-guest build writes millions of distinct pages: it is recorded with
# `--content digest` (16 bytes a page; equal digests replay as equal
# pages, so the replays take seconds, but its checksum false positives
# cannot be seen). Its bytes form is false-positives.sh's subject.
# Recording needs root (record-guests.sh); REUSE=1 with every trace present
# does not. Recordings run one at a time, niced.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
export KSMSIM=${KSMSIM:-$top/build/cli/ksmsim}
N=${N:-4} MIB=${MIB:-512} SEED=${SEED:-1} FIO_S=${FIO_S:-5} HOLD=${HOLD:-20}
OUT=${OUT:-/tmp/ksmsim-vm}
WORKLOADS=${WORKLOADS:-fio numpy build}
HASHES=${HASHES:-jhash2 crc32c xxhash}
CALIBRATION=${CALIBRATION:-2017}
die() { echo "experiment.sh: $*" >&2; exit 2; }
[ -x "$KSMSIM" ] || die "no ksmsim at $KSMSIM (build it, or set KSMSIM)"
command -v python3 >/dev/null || die "needs python3"
mkdir -p "$OUT"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksmsim-exp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

gen_of() { case $1 in build) echo kernel-build ;; fio) echo iozone ;; numpy) echo number-crunching ;; esac; }

STEPS=${STEPS:-record replay stats}
step() { [[ " $STEPS " == *" $1 "* ]]; }

# 1. Recordings, one at a time.
for w in $WORKLOADS; do
	step record || break
	t=$OUT/exp-$w-${N}vm.ksmb
	if [ -n "${REUSE:-}" ] && [ -s "$t" ]; then
		echo "experiment: reuse $t"
		continue
	fi
	opts=(-n "$N" -m "$MIB" -t full -w "$w")
	case $w in
	# digest: 4 guests building write millions of distinct pages: a
	# bytes trace of 1.4 GB that replays in minutes, not seconds
	build) opts+=(-H "$((HOLD * 2))" -c digest -x 1800) ;;
	fio) opts+=(-s "$FIO_S" -H "$HOLD") ;;
	numpy) opts+=(-H "$HOLD") ;;
	*) die "unknown workload '$w' (build fio numpy)" ;;
	esac
	t0=$EPOCHREALTIME
	nice -n 10 "$here/record-guests.sh" "${opts[@]}" -o "$t"
	echo "experiment: recorded $w in $(since "$t0") s"
done

# One replay: counters at the end mark (the last vmI-end, else 'end') and
# means of the 1 s samples up to it, as one CSV row.
replay() { # TRACE HASH KIND WORKLOAD
	local t0=$EPOCHREALTIME
	nice -n 10 "$KSMSIM" run --trace "$1" --hash "$2" --pages-to-scan 1600 --sleep-millisecs 200 \
		--quiet --csv "$tmp/ts.csv" --marks-csv "$tmp/m.csv" --summary-csv "$tmp/s.csv"
	python3 - "$tmp/ts.csv" "$tmp/m.csv" "$3" "$4" "$2" "$(since "$t0")" \
		"$tmp/s.csv" "$here" <<'PY' >> "$tmp/rows.csv"
import sys
sys.path.insert(0, sys.argv[8])
from end_figures import at_end, rows
kind, wl, h, wall = sys.argv[3:7]
m, mean = at_end(sys.argv[1], sys.argv[2])
t = int(m["t_us"])
# what the run charged a checksum (the built-in cost table's checksum:HASH
# row), as its summary says
s = rows(sys.argv[7])[0]
if "checksum_ns" not in s:
    sys.exit(f"experiment.sh: {sys.argv[7]}: no checksum_ns column (a ksmsim older than this script: rebuild it)")
ns = round(float(s["checksum_ns"]))
print(",".join(str(x) for x in (wl, kind, h, t, m["cow_ksm"], ns, m["pages_sharing"], m["pages_unshared"],
      "%.1f" % mean("pages_sharing"), "%.1f" % mean("pages_unshared"), m["ksmd_cpu_ms"],
      m["mergeable_pages"], m["ideal_saved"], m["full_scans"], wall)))
PY
}

# 2. Replays of the real traces, the synthetic traces at the same size and
# duration (the real trace's last vmI-end, rounded up), and their replays.
: > "$tmp/rows.csv"
for w in $WORKLOADS; do
	step replay || break
	t=$OUT/exp-$w-${N}vm.ksmb
	[ -s "$t" ] || die "no trace $t"
	for h in $HASHES; do replay "$t" "$h" real "$w"; done
	if [ -n "${KVM_CLOCK:-}" ]; then
		k=$OUT/exp-$w-${N}vm-kvm.ksmb
		"$KSMSIM" trace retime --factor "$KVM_CLOCK" "$t" "$k"
		for h in $HASHES; do replay "$k" "$h" real-kvm "$w"; done
	fi
	end_us=$(awk -F, -v w="$w" '$1 == w && $2 == "real" { print $4; exit }' "$tmp/rows.csv")
	dur=$(( (end_us + 999999) / 1000000 ))
	g=$(gen_of "$w")
	for cal in $CALIBRATION; do
		if [ "$cal" = 2017 ]; then	# gen's default
			s=$OUT/exp-syn-$g-${N}vm.ksmb kind=synthetic calopt=()
		else
			s=$OUT/exp-syn-$g-$cal-${N}vm.ksmb kind=synthetic-$cal calopt=(--calibration "$cal")
		fi
		"$KSMSIM" gen "$g" --vms "$N" --mem-mib "$MIB" --duration-s "$dur" --seed "$SEED" \
			"${calopt[@]}" -o "$s"
		echo "experiment: $w: real trace ends (last vmI-end) at $((end_us / 1000)) ms; ksmsim gen $g --vms $N --mem-mib $MIB --duration-s $dur --seed $SEED${calopt[*]:+ ${calopt[*]}}"
		for h in $HASHES; do replay "$s" "$h" "$kind" "$w"; done
	done
done
if step replay; then cp "$tmp/rows.csv" "$OUT/exp-rows.csv"; else cp "$OUT/exp-rows.csv" "$tmp/rows.csv"; fi

# 3. The table: 2017 (means of 1 s samples at 4 x 4 GiB, scaled to N x MIB),
# real and synthetic (at the end mark; means up to it in brackets).
python3 - "$tmp/rows.csv" "$N" "$MIB" <<'PY'
import sys
n, mib = int(sys.argv[2]), int(sys.argv[3])
f = n * mib / (4 * 4096.0)
ref = {("build", "jhash2"): (46114, 949578, 266565), ("build", "crc32c"): (44036, 951661, 265402),
       ("fio", "jhash2"): (4229174, 1446143, 116153), ("fio", "crc32c"): (4288702, 1441300, 117746)}
cols = "wl kind hash t_us cow ns sh un msh mun cpu mergeable ideal scans wall".split()
rs = [dict(zip(cols, l.strip().split(","))) for l in open(sys.argv[1])]
print("2017: means of 1 s samples over 1800 s at 4 guests x 4 GiB, scaled by %.4f (guest memory); CoW a count over the run, in brackets scaled to the real trace's duration too" % f)
if any(r["kind"] == "real-kvm" for r in rs):
    print("real: the trace on the clock it was recorded on (TCG guests); real-kvm: the same trace retimed by KVM_CLOCK, a KVM guest's clock")
print("real, synthetic: counters at the end mark (the last vmI-end; gen's end), in brackets the mean of the 1 s samples up to it")
print("| workload | hash | source | CoW | checksum ns/page | pages_sharing | pages_unshared | unshared/sharing | ksmd_cpu_ms | full scans |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
for wl in ("build", "fio", "numpy"):
    for h in ("jhash2", "crc32c", "xxhash"):
        if (wl, h) in ref:
            c, s, u = ref[(wl, h)]
            d = max([int(r["t_us"]) / 1e6 for r in rs if r["wl"] == wl and r["kind"] == "real"] or [1800])
            print("| %s | %s | 2017 (x%.4f) | %d [%d in %.0f s] | - | %d | %d | %.2f | - | - |" % (
                wl, h, f, c * f, c * f * d / 1800, d, s * f, u * f, u / s))
        elif wl != "numpy":
            print("| %s | %s | 2017 | - | - | - | - | - | - | - |" % (wl, h))
        for r in rs:
            if r["wl"] == wl and r["hash"] == h:
                sh, un = int(r["sh"]), int(r["un"])
                print("| %s | %s | %s @%.1f s | %s | %s | %d [%.0f] | %d [%.0f] | %s [%s] | %s | %s |" % (
                    wl, h, r["kind"], int(r["t_us"]) / 1e6, r["cow"], r["ns"], sh, float(r["msh"]), un,
                    float(r["mun"]), "%.2f" % (un / sh) if sh else "-",
                    "%.2f" % (float(r["mun"]) / float(r["msh"])) if float(r["msh"]) else "-",
                    r["cpu"], r["scans"]))
# Each recalibrated synthetic row against the real one of its workload and hash.
pc = lambda a, b: "%+.1f%%" % (100.0 * (a - b) / b) if b else "-"
vs = [(r, q) for r in rs if r["kind"].startswith("synthetic-")
      for q in rs if q["kind"] == "real" and q["wl"] == r["wl"] and q["hash"] == r["hash"]]
if vs:
    print()
    print("synthetic vs real, per cent: at the end mark [means up to it]")
    print("| workload | hash | source | CoW | pages_sharing | pages_unshared | unshared/sharing | full scans |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for r, q in vs:
        f = lambda c: float(r[c])
        g = lambda c: float(q[c])
        ratio = lambda x, a, b: float(x[a]) / float(x[b]) if float(x[b]) else 0.0
        print("| %s | %s | %s | %s | %s [%s] | %s [%s] | %s [%s] | %s vs %s |" % (
            r["wl"], r["hash"], r["kind"], pc(f("cow"), g("cow")), pc(f("sh"), g("sh")),
            pc(f("msh"), g("msh")), pc(f("un"), g("un")), pc(f("mun"), g("mun")),
            pc(ratio(r, "un", "sh"), ratio(q, "un", "sh")),
            pc(ratio(r, "mun", "msh"), ratio(q, "mun", "msh")), r["scans"], q["scans"]))
PY

# 4. The real traces' pages: per guest phase (boot: before vmI-start, work:
# start to end), writes, zero writes, rewrites (a page written before),
# rates; and at the last vmI-end mark what the guests hold: zero pages,
# pages whose contents another guest holds too, duplicates within one
# guest, pages in guest RAM (the smallest mapping of MIB to 1.5 x MIB MiB:
# qemu's RAM block, sometimes joined with a neighbour) vs the rest of qemu
# (its heap, the TCG translation buffer, ...).
step stats || exit 0
echo
echo "real traces: page statistics (guest RAM = the smallest mapping of MIB MiB or a little more)"
for w in $WORKLOADS; do
	"$KSMSIM" trace cat "$OUT/exp-$w-${N}vm.ksmb" | grep -v '^blob ' | python3 -c '
import sys
wl, nvm, rampages = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) * 256
ram, ph, pt, cur = {}, {}, {}, {}
W, Z, R, RW, RWc = ({} for _ in range(5))
ends = 0
def add(d, k): d[k] = d.get(k, 0) + 1
done = False
for line in sys.stdin:
    f = line.split()
    if done or len(f) < 3:
        continue  # read to the end: an early exit would fail the pipe
    op = f[1]
    if op == "write":
        mm, v, c = f[2], int(f[3], 16), f[4]
        p = {"start": "work", "end": "hold"}.get(ph.get(mm), "boot")
        add(W, p)
        if c == "zero": add(Z, p)
        lo, n = ram.get(mm, (0, 0))
        if lo <= v < lo + n: add(R, p)
        k = (mm, v)
        if k in cur:
            add(RW, p)
            if cur[k] != c: add(RWc, p)
        cur[k] = c
    elif op == "map":
        n = int(f[4])
        if rampages <= n < rampages * 3 // 2 and n < ram.get(f[2], (0, 1 << 62))[1]:
            ram[f[2]] = (int(f[3], 16), n)
    elif op == "unmap":
        v0, n = int(f[3], 16), int(f[4])
        for v in range(v0, v0 + n): cur.pop((f[2], v), None)
    elif op == "mark":
        a = f[2].split("-")
        if len(a) == 2 and a[1] in ("start", "end") and a[0].startswith("vm"):
            ph[a[0]] = a[1]; pt[a[0], a[1]] = int(f[0]) / 1e6
            if a[1] == "end":
                ends += 1
                done = ends == nvm
guests = {}
cnt = {}
for (mm, v), c in cur.items():
    guests.setdefault(c, set()).add(mm); add(cnt, c)
tot = len(cur); z = cross = intra = inram = 0
for (mm, v), c in cur.items():
    lo, n = ram[mm]
    if lo <= v < lo + n: inram += 1
    if c == "zero": z += 1
    elif len(guests[c]) > 1: cross += 1
    elif cnt[c] > 1: intra += 1
vms = ["vm%d" % i for i in range(1, nvm + 1)]
bw = sum(pt[g, "start"] for g in vms) / nvm
ww = sum(pt[g, "end"] - pt[g, "start"] for g in vms) / nvm
pg = rampages
g = lambda d, k: d.get(k, 0)
pc = lambda a, b: 100.0 * a / b if b else 0.0
print("%s: guest RAM %d pages a guest; boot (to vmI-start, mean %.1f s): %d writes (%.1f%% zero), %d rewrites (%d changed)" % (
    wl, pg, bw, g(W, "boot"), pc(g(Z, "boot"), g(W, "boot")), g(RW, "boot"), g(RWc, "boot")))
print("%s: work (vmI-start to vmI-end, mean %.1f s): %d writes (%.1f%% zero, %.1f%% in guest RAM), %d rewrites (%d changed): %.0f rewrites/s a guest = %.3f%% of guest RAM/s" % (
    wl, ww, g(W, "work"), pc(g(Z, "work"), g(W, "work")), pc(g(R, "work"), g(W, "work")), g(RW, "work"), g(RWc, "work"),
    g(RW, "work") / ww / nvm, pc(g(RW, "work") / ww / nvm, pg)))
print("%s: at the last vmI-end: %d pages held, %.1f%% of them in guest RAM (%.1f%% of guest RAM present): zero %.1f%%, same contents as in another guest %.1f%%, duplicate within one guest only %.1f%%, unique %.1f%%" % (
    wl, tot, pc(inram, tot), pc(inram, pg * nvm), pc(z, tot), pc(cross, tot), pc(intra, tot), pc(tot - z - cross - intra, tot)))
' "$w" "$N" "$MIB"
done
