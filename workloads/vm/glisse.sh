#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Jérôme Glisse's change_pte experiment (linux-mm, 2019), at the size this
# machine runs: two identical guests (qcow2 overlays of one image, i.e.
# copies of one copy-on-write image) build the same source tree side by
# side; KSM with pages_to_scan 10000; pages_sharing at the end of the
# build. Andrea Arcangeli's two stress variants are replayed beside it:
# sleep_millisecs 0, and no checksum gate (--policy no-gate). Per variant:
# pages_sharing at the last guest's end mark, and the secondary-MMU
# notifications KVM would get (range invalidations, and change_pte-style
# updates: the PTE a merge or a CoW rewrites).
#
#   glisse.sh [TRACE]
#
# Without TRACE it records one (root, qemu; record-guests.sh -n 2 -w build,
# MAX_SECONDS cap, default 3600) to $OUT/glisse-build-2vm.ksmb, and with
# KVM_CLOCK=F also replays the trace retimed by F (tcg-slowdown.sh).
# Prints a Markdown table; ROWS=FILE keeps it as CSV as well.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
KSMSIM=${KSMSIM:-$top/build/cli/ksmsim}
OUT=${OUT:-/tmp/ksmsim-vm}
die() { echo "glisse.sh: $*" >&2; exit 2; }
[ -x "$KSMSIM" ] || die "no ksmsim at $KSMSIM (build it, or set KSMSIM)"
command -v python3 >/dev/null || die "needs python3"

trace=${1:-}
if [ -z "$trace" ]; then
	mkdir -p "$OUT"
	trace=$OUT/glisse-build-2vm.ksmb
	KSMSIM=$KSMSIM nice -n 10 "$here/record-guests.sh" -n 2 -m 512 -t full -w build -H 40 \
		-x "${MAX_SECONDS:-3600}" -o "$trace"
fi
[ -r "$trace" ] || die "cannot read $trace"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ksmsim-glisse.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

clocks=("tcg:$trace")
if [ -n "${KVM_CLOCK:-}" ]; then
	"$KSMSIM" trace retime --factor "$KVM_CLOCK" "$trace" "$tmp/kvm.ksmb"
	clocks+=("kvm x$KVM_CLOCK:$tmp/kvm.ksmb")
fi
echo "clock,variant,t_end_s,pages_sharing,pages_shared,pages_unshared,full_scans,mmu_invalidations,mmu_change_pte,cow_ksm,ksmd_cpu_ms" > "$tmp/rows.csv"
for c in "${clocks[@]}"; do
	clock=${c%%:*} t=${c#*:}
	for v in "glisse:--hash xxhash --sleep-millisecs 20" "sleep 0:--hash xxhash --sleep-millisecs 0" \
		"no gate:--sleep-millisecs 20 --policy no-gate"; do
		name=${v%%:*}
		# shellcheck disable=SC2086  # the variant's options are words
		"$KSMSIM" run --quiet --trace "$t" --pages-to-scan 10000 ${v#*:} \
			--no-ideal --marks-csv "$tmp/m.csv"
		python3 - "$tmp/m.csv" "$clock" "$name" >> "$tmp/rows.csv" <<'PY'
import csv, re, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")))
ends = [r for r in rows if re.fullmatch(r"vm[0-9]+-end", r["label"])] or [r for r in rows if r["label"] == "end"]
m = ends[-1]
# under --policy a column may be the policy's own: take the kernel's name first
g = lambda c: next((m[k] for k in m if k == c), "")
print(",".join([sys.argv[2], sys.argv[3], "%.1f" % (int(m["t_us"]) / 1e6)] +
               [g(c) for c in ("pages_sharing", "pages_shared", "pages_unshared", "full_scans",
                               "mmu_invalidations", "mmu_change_pte", "cow_ksm", "ksmd_cpu_ms")]))
PY
	done
done
[ -z "${ROWS:-}" ] || cp "$tmp/rows.csv" "$ROWS"
python3 - "$tmp/rows.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| clock | variant | end of build (s) | pages_sharing | pages_unshared | full scans | MMU invalidations | change_pte-style updates | cow_ksm |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (r["clock"], r["variant"], r["t_end_s"],
          r["pages_sharing"], r["pages_unshared"], r["full_scans"], r["mmu_invalidations"],
          r["mmu_change_pte"], r["cow_ksm"]))
PY
