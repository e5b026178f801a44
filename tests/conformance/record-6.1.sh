#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Records expected-6.1/CASE.csv (marks) and expected-6.1/CASE.mm.csv (each
# process's ksm_stat at each mark) on the live KSM of Debian's 6.1 kernel
# inside a QEMU guest (workloads/vm/replay-6.1.sh): RUNS boots (default 3),
# each replaying every CASE once with `ksmsim live`, in the order given.
# As record.sh: cells not identical in every run are listed in a "cells
# that differ between runs:" comment, which `ksmsim diff` skips; the
# measured ksmd_cpu_ms is left out. A case that fails in any run (e.g. it
# needs a knob 6.1 lacks) is not written; its line says why.
# usage: record-6.1.sh PATH/TO/ksmsim CASE...   (RUNS=N; JOBS=2 boots two
# guests at a time; the guest's options through REPLAY_OPTS, e.g.
# REPLAY_OPTS='-m 1024 -c 2 -s 200')
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${1:?usage: record-6.1.sh PATH/TO/ksmsim CASE...}")
shift
runs=${RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here" || exit 2
mkdir -p expected-6.1
cases=()
for c in "$@"; do
	c=$(basename "$c" .ksmt)
	[ -e "cases/$c.ksmt" ] || { echo "record-6.1.sh: no cases/$c.ksmt" >&2; exit 2; }
	cases+=("cases/$c.ksmt")
done
status=0
# JOBS guests at a time (default 1; at most 2 on a shared machine)
jobs=${JOBS:-1}
boot() {
	# shellcheck disable=SC2086 # REPLAY_OPTS: options, split on purpose
	KSMSIM=$bin "$here/../../workloads/vm/replay-6.1.sh" ${REPLAY_OPTS:-} -o "$tmp/run$1" \
		"${cases[@]}" > "$tmp/run$1.log" 2>&1
	echo $? > "$tmp/run$1.rc"
}
running=0
for i in $(seq 1 "$runs"); do
	[ "$running" -lt "$jobs" ] || { wait -n; running=$((running - 1)); }
	boot "$i" &
	running=$((running + 1))
	# the first builds the replayer's cached initramfs: let it be done first
	[ "$i" = 1 ] && [ "$jobs" -gt 1 ] && sleep 30
done
wait
for i in $(seq 1 "$runs"); do
	grep -v ' ok ' "$tmp/run$i.log"
	[ "$(cat "$tmp/run$i.rc")" = 2 ] && { echo "record-6.1.sh: run $i: the guest did not finish" >&2; exit 1; }
done
for c in "${cases[@]}"; do
	c=$(basename "$c" .ksmt)
	ok=1
	for i in $(seq 1 "$runs"); do
		if [ ! -s "$tmp/run$i/$c.csv" ]; then
			echo "FAIL $c: run $i: $(tail -n 1 "$tmp/run$i/$c.err" 2>/dev/null)"
			ok=0; status=1; break
		fi
	done
	[ "$ok" = 1 ] || continue
	for kind in "" ".mm"; do
	python3 - "$runs" "$tmp" "$c$kind" "expected-6.1/$c$kind.csv" <<'PY'
import csv, sys
runs, tmp, stem, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
files = []
for i in range(1, runs + 1):
    lines = open(f"{tmp}/run{i}/{stem}.csv").read().splitlines()
    files.append(([l for l in lines if l.startswith("#")],
                  list(csv.reader(l for l in lines if not l.startswith("#")))))
# ksmd_cpu_ms is the guest's CPU time under QEMU, no count the model must
# reproduce: left out as record.sh leaves out the host's.
for _, rs in files:
    if rs and "ksmd_cpu_ms" in rs[0]:
        k = rs[0].index("ksmd_cpu_ms")
        for row in rs:
            del row[k]
comments, rows = files[0]
comments = [l for l in comments if not l.startswith("# ksmd_cpu_ms")]
header = rows[0]
varying = []
mm = header.index("mm") if "mm" in header else None
for f in files:
    if f[1][0] != header:
        sys.exit(f"{out}: the runs wrote different headers")
for r, row in enumerate(rows[1:], 1):
    key = row[0] if mm is None else f"{row[0]}@{row[mm]}"
    if any(len(f[1]) != len(rows) for f in files):
        sys.exit(f"{out}: the runs wrote different numbers of rows")
    for c, col in enumerate(header[1:], 1):
        vals = [f[1][r][c] for f in files]
        if len(set(vals)) > 1:
            varying.append(f"{key}.{col}={'/'.join(vals)}")
with open(out, "w") as f:
    for l in comments:
        f.write(l + "\n")
    if varying:
        f.write(f"# live kernel, {runs} runs: cells that differ between runs: "
                + ", ".join(varying) + "\n")
    else:
        f.write(f"# live kernel, {runs} runs: every cell identical in all runs\n")
    w = csv.writer(f, lineterminator="\n")
    for row in rows:
        w.writerow(row)
print(f"recorded {out}: " + (f"{len(varying)} varying cells" if varying else "identical"))
PY
	done
done
grep -h '^replay-6.1: \(guest\|traces=\)' "$tmp"/run*.log
grep -h ' ok ' "$tmp"/run*.log | awk '{ sub(/s$/, "", $4); t[$2] = t[$2] " " $4 } END { for (c in t) print "replay-6.1: seconds " c ":" t[c] }' | sort
exit $status
