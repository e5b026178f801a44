#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The guests-tcg calibration against the recorded guests: for each of the
# kernel build, fio and numpy, replays the real trace and `ksmsim gen ... --calibration
# guests-tcg` at the same size and duration (the real trace's last vmI-end,
# rounded up), as experiment.sh does, and prints one CSV row per compared
# column: workload, column, real, synthetic, diff % (synthetic vs real).
#
#   fit-guests-tcg.sh [WORKLOAD...] > analysis/results/guests/guests-tcg-fit.csv
#
# WORKLOAD: build, fio, numpy (default all three). Columns: CoW, pages_sharing and
# pages_unshared at the end mark (the last vmI-end; gen's 'end') and as
# means of the 1 s samples up to it, their ratios, full scans; knobs 1600
# pages every 200 ms, jhash2 (the counters are the same under every hash).
# Environment: N (guests, 4), MIB (512), SEED (1), OUT (traces,
# /tmp/ksmsim-vm: exp-WORKLOAD-Nvm.ksmb), KSMSIM (build/cli/ksmsim of this
# checkout), REAL_CACHE (a folder: the real trace's row is kept there and
# reused, so that refitting replays only the generated trace).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
KSMSIM=${KSMSIM:-$top/build/cli/ksmsim}
N=${N:-4} MIB=${MIB:-512} SEED=${SEED:-1} OUT=${OUT:-/tmp/ksmsim-vm}
die() { echo "fit-guests-tcg.sh: $*" >&2; exit 2; }
[ -x "$KSMSIM" ] || die "no ksmsim at $KSMSIM (build it, or set KSMSIM)"
command -v python3 >/dev/null || die "needs python3"
[ $# -gt 0 ] || set -- build fio numpy
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksmsim-fit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# One replay as experiment.sh's: t_us, CoW, sharing, unshared at the end
# mark, their means over the 1 s samples up to it, full scans.
replay() { # TRACE -> one CSV line
	nice -n 10 "$KSMSIM" run --trace "$1" --hash jhash2 --pages-to-scan 1600 --sleep-millisecs 200 \
		--quiet --csv "$tmp/ts.csv" --marks-csv "$tmp/m.csv"
	python3 - "$tmp/ts.csv" "$tmp/m.csv" "$here" <<'PY'
import sys
sys.path.insert(0, sys.argv[3])
from end_figures import at_end
m, mean = at_end(sys.argv[1], sys.argv[2])
t = int(m["t_us"])
print(",".join(str(x) for x in (t, m["cow_ksm"], m["pages_sharing"], m["pages_unshared"],
      "%.1f" % mean("pages_sharing"), "%.1f" % mean("pages_unshared"), m["full_scans"])))
PY
}

echo "workload,column,real,synthetic,diff_pct"
for w in "$@"; do
	case $w in
	build) g=kernel-build ;;
	fio) g=iozone ;;
	numpy) g=number-crunching ;;
	*) die "unknown workload '$w' (build fio numpy)" ;;
	esac
	t=$OUT/exp-$w-${N}vm.ksmb
	[ -s "$t" ] || die "no trace $t"
	cache=${REAL_CACHE:+$REAL_CACHE/real-$w-${N}vm.row}
	if [ -n "$cache" ] && [ -s "$cache" ] && [ "$cache" -nt "$t" ]; then
		real=$(cat "$cache")
	else
		real=$(replay "$t")
		[ -z "$cache" ] || echo "$real" > "$cache"
	fi
	end_us=${real%%,*}
	dur=$(( (end_us + 999999) / 1000000 ))
	"$KSMSIM" gen "$g" --vms "$N" --mem-mib "$MIB" --duration-s "$dur" --seed "$SEED" \
		--calibration guests-tcg -o "$tmp/syn.ksmb"
	syn=$(replay "$tmp/syn.ksmb")
	python3 - "$w" "$real" "$syn" <<'PY'
import sys
w = sys.argv[1]
names = "t_us cow sharing unshared sharing_mean unshared_mean scans".split()
r, s = ({k: float(v) for k, v in zip(names, a.split(","))} for a in sys.argv[2:4])
for x in (r, s):
    x["ratio"] = x["unshared"] / x["sharing"] if x["sharing"] else 0.0
    x["ratio_mean"] = x["unshared_mean"] / x["sharing_mean"] if x["sharing_mean"] else 0.0
cols = (("cow_ksm", "cow"), ("pages_sharing_end", "sharing"), ("pages_sharing_mean", "sharing_mean"),
        ("pages_unshared_end", "unshared"), ("pages_unshared_mean", "unshared_mean"),
        ("unshared_per_sharing_end", "ratio"), ("unshared_per_sharing_mean", "ratio_mean"),
        ("full_scans", "scans"))
fmt = lambda v: ("%.4f" % v) if v < 10 and v != int(v) else ("%.1f" % v if v != int(v) else "%d" % v)
for name, k in cols:
    d = "%+.1f" % (100.0 * (s[k] - r[k]) / r[k]) if r[k] else "-"
    print("%s,%s,%s,%s,%s" % (w, name, fmt(r[k]), fmt(s[k]), d))
PY
done
