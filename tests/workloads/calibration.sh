#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# gen --calibration: 2017 is the default byte for byte (every workload);
# guests-tcg (kernel-build, iozone, number-crunching) is deterministic,
# differs from 2017, says so in its gen line, takes a time step a second and
# writes far less per second than 2017 at the same short duration, as the
# real guests did (number-crunching with a boot burst and new memory at the
# end); bad values are one line naming the option and the valid ones.
set -eu
KSMSIM=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
CALIBRATED="kernel-build iozone number-crunching"

# 1. --calibration 2017 changes nothing, whatever the workload and options.
for w in $("$KSMSIM" gen --list); do
	scale=0.002
	[ "$w" = ksm-flood ] && scale=0.01
	[ "$w" = crc-adversarial ] && scale=0.02
	[ "$w" = checksum-adversarial ] && scale=0.02
	for opts in "--scale $scale --vms 3 --marks-every-ms 100 --seed 5" \
		    "--scale $scale --duration-s 60 --use-zero-pages 1 --pages-to-scan 100"; do
		"$KSMSIM" gen "$w" $opts -o "$T/a.ksmb" || fail "$w $opts: gen"
		"$KSMSIM" gen "$w" $opts --calibration 2017 -o "$T/b.ksmb" ||
			fail "$w $opts: gen --calibration 2017"
		cmp -s "$T/a.ksmb" "$T/b.ksmb" || fail "$w $opts: --calibration 2017 is not the default"
	done
done
# the text form too (the gen line is where a calibration would show)
"$KSMSIM" gen iozone --scale 0.002 -o "$T/a.ksmt"
"$KSMSIM" gen iozone --scale 0.002 --calibration 2017 -o "$T/b.ksmt"
cmp -s "$T/a.ksmt" "$T/b.ksmt" || fail "iozone: --calibration 2017 changes the text trace"
grep -q 'calibration=' "$T/a.ksmt" && fail "a 2017 trace names a calibration"

# 2. guests-tcg: deterministic, its own trace, accepted by the model.
for w in $CALIBRATED; do
	opts="--scale 0.002 --vms 3 --marks-every-ms 100 --calibration guests-tcg"
	"$KSMSIM" gen "$w" $opts --seed 5 -o "$T/a.ksmt" || fail "$w: gen guests-tcg"
	"$KSMSIM" gen "$w" $opts --seed 5 -o "$T/b.ksmt" || fail "$w: gen guests-tcg again"
	"$KSMSIM" gen "$w" $opts --seed 6 -o "$T/c.ksmt" || fail "$w: gen guests-tcg seed 6"
	cmp -s "$T/a.ksmt" "$T/b.ksmt" || fail "$w: guests-tcg: same seed, different traces"
	if cmp -s "$T/a.ksmt" "$T/c.ksmt"; then fail "$w: guests-tcg: seeds 5 and 6 gave one trace"; fi
	# at the default duration (1800 s x scale) too it is not the 2017 trace
	"$KSMSIM" gen "$w" --scale 0.002 --vms 3 --marks-every-ms 100 --seed 5 -o "$T/d.ksmt"
	if cmp -s "$T/a.ksmt" "$T/d.ksmt"; then fail "$w: guests-tcg is the 2017 trace"; fi
	head -3 "$T/a.ksmt" | grep -q '^# ksmsim gen: .* steps=1800 calibration=guests-tcg$' ||
		fail "$w: gen line: $(head -3 "$T/a.ksmt" | grep 'ksmsim gen')"
	"$KSMSIM" run --trace "$T/a.ksmt" --check --quiet --marks-csv "$T/m.csv" ||
		fail "$w: run --check refused the guests-tcg trace"
	grep -q '^end,' "$T/m.csv" || fail "$w: guests-tcg: no end row"
done

# 3. What it is for: a time step a second, so a short run keeps the real
# guests' rates (0.6-2.3% of guest RAM rewritten a second) where 2017's 1800
# steps are squeezed into it. 2 guests x 512 MiB = 131072 pages each, 60 s.
for w in $CALIBRATED; do
	for c in 2017 guests-tcg; do
		"$KSMSIM" gen "$w" --vms 2 --mem-mib 512 --duration-s 60 --calibration "$c" \
			-o "$T/$c.ksmt" || fail "$w: gen --duration-s 60 --calibration $c"
		"$KSMSIM" trace stat "$T/$c.ksmt" > "$T/$c.stat"
	done
	head -3 "$T/guests-tcg.ksmt" | grep -q ' steps=60 calibration=guests-tcg$' ||
		fail "$w: --duration-s 60 is not 60 time steps"
	old=$(awk '/^pages written/ {print $3}' "$T/2017.stat")
	new=$(awk '/^pages written/ {print $3}' "$T/guests-tcg.stat")
	[ -n "$old" ] && [ -n "$new" ] && [ "$new" -gt 0 ] || fail "$w: no page writes ($old, $new)"
	[ $((new * 5)) -lt "$old" ] ||
		fail "$w: guests-tcg writes $new pages in 60 s, not far below 2017's $old"
	# below 3% of guest RAM a second per guest, boot included
	[ "$new" -lt $((131072 * 2 * 60 * 3 / 100)) ] ||
		fail "$w: guests-tcg writes $new pages in 60 s: more than 3% of RAM a second"
done
# iozone: in the work (from 83% of the run; the check reads from 31 s on) the file is the same in every
# guest and distinct within one: rand pages (fillseq ranges, single writes)
# that both guests write alike, and no page of one repeated byte (2017's).
for c in 2017 guests-tcg; do
	"$KSMSIM" gen iozone --vms 2 --mem-mib 64 --duration-s 60 --calibration $c -o "$T/i.ksmt"
	same=$(awk '$1 < 31000000 || ($2 != "fillseq" && ($2 != "write" || $5 !~ /^rand:/)) {next}
		$3 == "vm1" {a[$2 " " $4 " " $5 " " $6]++}
		$3 == "vm2" && ($2 " " $4 " " $5 " " $6) in a {n++}
		END {print n + 0}' "$T/i.ksmt")
	bytes=$(grep -c ' byte:' "$T/i.ksmt" || true)
	case $c in
	2017) [ "$same" -eq 0 ] && [ "$bytes" -gt 0 ] ||
		fail "iozone 2017: $same shared ranges, $bytes byte fills" ;;
	*) [ "$same" -gt 10 ] && [ "$bytes" -eq 0 ] ||
		fail "iozone $c: $same shared ranges in the work, $bytes byte fills" ;;
	esac
done

# number-crunching guests-tcg, as the real NumPy guests: a burst of boot
# pages in the first 2% of the run (they held 5.5% of RAM each 6 s in), and
# new memory, above any written before, from 87% of the run on. 2017 has
# neither. 16,384 pages a guest, 100 s: the burst is 0.3 x 12.5% of RAM,
# 3.75%, where an even boot over 35 s writes 0.7% in 2 s; the late region
# is 4% of RAM.
for c in 2017 guests-tcg; do
	"$KSMSIM" gen number-crunching --vms 2 --mem-mib 64 --duration-s 100 --calibration $c \
		-o "$T/n.ksmt" || fail "number-crunching $c: gen"
	set -- $(python3 - "$T/n.ksmt" <<'PY'
import sys
early = top_before = top_after = 0
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 5 or f[2] != "vm1" or f[1] not in ("fill", "fillseq"):
        continue
    t, vpn, n = int(f[0]), int(f[3], 16), int(f[4])
    if t < 2000000:
        early += n
    if t < 87000000:
        top_before = max(top_before, vpn + n)
    else:
        top_after = max(top_after, vpn + n)
print(early, max(0, top_after - top_before))
PY
)
	early=$1 late=$2
	case $c in
	2017) [ "$late" -eq 0 ] || fail "number-crunching 2017: $late pages above the rest at the end" ;;
	*) [ "$early" -gt $((16384 * 3 / 100)) ] ||
		fail "number-crunching $c: $early pages written in the first 2 s, no boot burst"
	   [ "$late" -gt $((16384 * 3 / 100)) ] ||
		fail "number-crunching $c: $late new pages at the end, not 4% of RAM" ;;
	esac
done

# 4. Bad values: exit 2, one line naming --calibration and the valid values,
# no file; a near miss gets a suggestion; a workload without it is refused.
bad() {	# bad WHAT ARGS...: exit 2, one stderr line matching WHAT, no file
	what=$1
	shift
	rc=0
	"$KSMSIM" gen "$@" > "$T/out" 2> "$T/err" || rc=$?
	[ "$rc" -eq 2 ] || fail "gen $*: exit $rc, not 2"
	[ "$(wc -l < "$T/err")" -eq 1 ] || fail "gen $*: stderr: $(cat "$T/err")"
	grep -q -- "$what" "$T/err" || fail "gen $*: '$(cat "$T/err")' lacks '$what'"
	[ ! -e "$T/x.ksmb" ] || fail "gen $*: left a file"
}
bad "^ksmsim gen: --calibration 'nope': .*2017, guests-tcg" iozone --calibration nope -o "$T/x.ksmb"
bad "did you mean 'guests-tcg'" iozone --calibration guest-tcg -o "$T/x.ksmb"
bad "--calibration" iozone --calibration -o "$T/x.ksmb"
bad "--calibration guests-tcg: vm-clones" vm-clones --calibration guests-tcg --scale 0.002 \
	-o "$T/x.ksmb"
"$KSMSIM" gen vm-clones --calibration 2017 --scale 0.002 -o "$T/x.ksmb" ||
	fail "vm-clones refused --calibration 2017"
"$KSMSIM" gen --help | grep -q -- '--calibration NAME' || fail "gen --help lacks --calibration"
"$KSMSIM" gen iozone --help | grep -q '^  guests-tcg ' ||
	fail "gen iozone --help lacks its calibrations"
if "$KSMSIM" gen vm-clones --help | grep -q '^  guests-tcg '; then
	fail "gen vm-clones --help lists guests-tcg"
fi
echo ok
