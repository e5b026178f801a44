#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ksmsim run --false-positives-csv: a row per false positive of the gate.
#   - A page holding a structure that ends in its own crc32c (an ext4
#     superblock's layout: 1020 bytes and their CRC, at byte 1024 of the
#     page) is rewritten with two fields changed and its CRC updated. The
#     page's crc32c cannot change (a CRC over data followed by its own CRC
#     is a constant, whatever the data), so crc32c's gate lets the change
#     through: one row naming exactly the bytes that differ (computed here
#     independently), and the checksum the page kept. xxhash, jhash2 and
#     xxh64 see the change: no row.
#   - On `ksmsim gen crc-adversarial` the rows are as many as the summary's
#     false_positives, and each row's bytes_changed is its ranges' sum.
#   - The file is written whole at the end, or not at all on an error.
#   - workloads/vm/false-positives.sh tabulates the same: one false
#     positive under crc32c, its row in false-positives-crc32c.csv.
# usage: false_positives.sh KSMSIM SOURCE_ROOT
set -u
bin=$(realpath "$1")
src=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
cd "$tmp" || exit 1

python3 - <<'PY' || { echo "FAIL: could not write the trace"; exit 1; }
import random
# crc32c, reflected (poly 0x82F63B78), as the kernel's crc32c(seed, ...): no final xor
T = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    T.append(c)
def crc(b, c=0xFFFFFFFF):
    for x in b:
        c = T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c
rng = random.Random(7)
page = bytearray(rng.getrandbits(8) for _ in range(4096))
def with_sb(p, sb):
    p = bytearray(p)
    p[1024:1024 + 1020] = sb
    p[2044:2048] = crc(bytes(sb)).to_bytes(4, "little")
    return bytes(p)
sb = bytearray(rng.getrandbits(8) for _ in range(1020))
a = with_sb(page, sb)
sb[96] ^= 0x04                                 # a flag cleared, as at unmount
sb[376:378] = (int.from_bytes(sb[376:378], "little") + 513).to_bytes(2, "little")  # a counter
b = with_sb(page, sb)
diff, i = [], 0
while i < 4096:
    if a[i] != b[i]:
        j = i
        while j + 1 < 4096 and a[j + 1] != b[j + 1]:
            j += 1
        diff.append(f"{i}" if i == j else f"{i}-{j}")
        i = j
    i += 1
open("want", "w").write(";".join(diff) + "\n")
with open("sb.ksmt", "w") as f:
    f.write("ksmtrace 2\n0 set pages_to_scan 100\n0 set sleep_millisecs 20\n0 set run 1\n")
    f.write("0 spawn vm1\n0 map vm1 0x100 1\n0 advise vm1 0x100 1 mergeable\n")
    f.write(f"blob 0 {a.hex()}\nblob 1 {b.hex()}\n")
    f.write("0 write vm1 0x100 blob:0\n1000000 write vm1 0x100 blob:1\n2000000 mark end\n")
PY
for h in crc32c xxhash jhash2 xxh64; do
	"$bin" run --trace sb.ksmt --hash "$h" --quiet --summary-csv "s-$h.csv" \
		--false-positives-csv "fp-$h.csv" 2>err || bad "$h: $(cat err)"
done
rows() { grep -v '^#' "$1" | tail -n +2; }
[ "$(rows fp-crc32c.csv | wc -l)" -eq 1 ] || bad "crc32c: not one false positive: $(cat fp-crc32c.csv)"
IFS=, read -r t mm vpn sum n ranges < <(rows fp-crc32c.csv)
[ "$mm,$vpn" = "vm1,0x100" ] || bad "crc32c: the row names $mm,$vpn"
[ "$ranges" = "$(cat want)" ] || bad "crc32c: changed bytes '$ranges', not '$(cat want)'"
[ "$n" -gt 4 ] || bad "crc32c: bytes_changed $n"
[ "$t" -gt 1000000 ] || bad "crc32c: at t_us $t, before the rewrite"
for h in xxhash jhash2 xxh64; do
	[ "$(rows "fp-$h.csv" | wc -l)" -eq 0 ] || bad "$h: a false positive: $(cat "fp-$h.csv")"
	head -2 "fp-$h.csv" | grep -qx 't_us,mm,vpn,checksum,bytes_changed,changed_bytes' ||
		bad "$h: no header"
done
col() { awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next } { print $k[c] }' "$1"; }
[ "$(col s-crc32c.csv false_positives)" = 1 ] || bad "crc32c: summary false_positives $(col s-crc32c.csv false_positives)"
[ "$(col s-xxhash.csv false_positives)" = 0 ] || bad "xxhash: summary false_positives"

# the guests' script: a row per hash, the false positive under crc32c only
KSMSIM=$bin "$src/workloads/vm/false-positives.sh" -o fpt -H "crc32c xxhash xxh64" sb.ksmt >/dev/null 2>err ||
	bad "false-positives.sh: $(cat err)"
[ "$(col fpt/false-positives.csv false_positives | tr '\n' ' ')" = "1 0 0 " ] ||
	bad "false-positives.sh: $(cat fpt/false-positives.csv)"
[ "$(col fpt/false-positives.csv expected_false_positives | head -1)" = "2.33e-10" ] ||
	bad "false-positives.sh: expected $(col fpt/false-positives.csv expected_false_positives | head -1)"
[ "$(tail -1 fpt/trace.csv)" = "sb.ksmt,0.0,2,2" ] || bad "false-positives.sh: trace.csv $(cat fpt/trace.csv)"
# (its own knobs, so another time)
[ "$(rows fpt/false-positives-crc32c.csv | cut -d, -f2-)" = "$(rows fp-crc32c.csv | cut -d, -f2-)" ] ||
	bad "false-positives.sh: another crc32c row: $(cat fpt/false-positives-crc32c.csv)"

# many: as many rows as the summary counts, each bytes_changed its ranges' sum
"$bin" gen crc-adversarial -o ca.ksmb >/dev/null 2>&1 || bad "gen crc-adversarial failed"
"$bin" run --trace ca.ksmb --hash crc32c --quiet --summary-csv s-ca.csv --false-positives-csv fp-ca.csv ||
	bad "crc-adversarial: run failed"
n=$(col s-ca.csv false_positives)
[ "$n" -gt 0 ] && [ "$(rows fp-ca.csv | wc -l)" -eq "$n" ] ||
	bad "crc-adversarial: $(rows fp-ca.csv | wc -l) rows, summary $n"
rows fp-ca.csv | awk -F, '{ s = 0; k = split($6, r, ";"); for (i = 1; i <= k; i++) {
	m = split(r[i], ab, "-"); s += m == 2 ? ab[2] - ab[1] + 1 : 1 } if (s != $5) bad++ }
	END { exit bad > 0 }' || bad "crc-adversarial: a row whose bytes_changed is not its ranges' sum"

# an error leaves no file: a knob the trace sets that the model refuses... here, a bad trace
printf 'ksmtrace 2\n0 spawn a\n0 map a 0 1\n0 write a 7 byte:1\n' >bad.ksmt
"$bin" run --trace bad.ksmt --quiet --false-positives-csv fp-bad.csv 2>/dev/null && bad "a bad trace ran"
[ ! -e fp-bad.csv ] || bad "a failed run left its --false-positives-csv"

[ $fails -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
[ $fails -eq 0 ]
