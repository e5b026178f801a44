#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Measures the run time of every command whose run time README.md,
# analysis/README.md, workloads/README.md or workloads/vm/README.md quote,
# under GNU /usr/bin/time (wall s, user+sys CPU s, peak RSS: the largest
# single process's, as getrusage reports it), RUNS times, one at a time,
# under nice -n NICE, and writes analysis/results/run-times.csv: one row
# per id: the exact command, wall_s, cpu_s, max_rss_mib (each the median
# over the runs), runs, the commit measured (git short hash, -dirty when a
# tracked file other than a *.md or the CSV differs from HEAD), cpu_model
# (lscpu), nproc, the 1-minute load average at the first run's start,
# nice, its date (UTC) and a note. Then --update-docs.
# In a command, `ksmsim` is the build measured ($KSMSIM, else the
# checkout's build*/cli/ksmsim, first on PATH) and $W a work folder
# (removed at the end unless --work). The machine may be shared: CPU time
# is the figure the READMEs quote unless a marker asks for wall time.
#
# usage: analysis/run_times.sh [--only ID[,ID...]] [--with-root] [--long]
#        [--runs 3] [--nice 19] [--work DIR] [--csv FILE] [--dry-run]
#        analysis/run_times.sh --update-docs | --check | --list
# --with-root: also the ids that need root, QEMU, Slurm or the network
#   (workloads/vm/*.sh, the Slurm test); run the script as root. Without
#   it they are skipped with a note, and their rows (figures, commit, date)
#   are kept from the CSV as it was; an id never measured has a row with
#   empty figures and a note saying so, and its README figure is left as
#   it is until it is measured.
# --long: also the ids that take over ~2 minutes (marked long in --list).
# --only ID,...: only these ids (still subject to --with-root and --long);
#   every other row is kept.
# --dry-run: print what would run, measure nothing.
# --update-docs: rewrite every marked figure in the four READMEs from the
#   CSV, and nothing else. A figure is marked by an HTML comment right
#   after its number and unit: `8 s<!-- run-time: gen-large-tree -->`
#   (CPU time: user + sys) or `25 s<!-- run-time: vm-record-tmpfs wall -->`
#   (wall time). Format: 2 significant digits, trailing zeros dropped, in
#   seconds (`0.14 s`, `1.6 s`, `5 s`, `130 s`), from 600 s on in minutes
#   (`18 min`) once the rounded seconds reach 600.
# --check: every marker well formed and naming an id of the CSV, its
#   figure what --update-docs would write; every CSV id a registry id and
#   quoted by some marker, every registry id in the CSV. Exit 1 otherwise.
# --list: the ids, their class (-, root, long) and command.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
csv=$here/results/run-times.csv
docs=("$top/README.md" "$top/analysis/README.md" "$top/workloads/README.md"
	"$top/workloads/vm/README.md")
only="" with_root=0 long=0 nice_n=19 runs=3 work="" dry=0 action=measure
die() { echo "run_times.sh: $*" >&2; exit 2; }

# The registry: ID|CLASS|PREP|COMMAND (ID, CLASS and PREP hold no '|':
# the COMMAND is the rest of the line and may). CLASS: - (measured by default),
# root (root, QEMU, Slurm or the network: --with-root), long (--long).
# PREP runs first, untimed (a trace the command reads); both run in $W.
reg=(
	"gen-kernel-build|-||ksmsim gen kernel-build --scale 1 --seed 1 -o \$W/kernel-build.ksmb"
	"gen-iozone|-||ksmsim gen iozone --scale 1 --seed 1 -o \$W/iozone.ksmb"
	"gen-large-tree|-||ksmsim gen large-tree --seed 1 -o \$W/large-tree.ksmb"
	"gen-checksum-adversarial-jhash2|-||ksmsim gen checksum-adversarial --hash jhash2 -o \$W/ca-jhash2.ksmb"
	"gen-checksum-adversarial-xxhash|-||ksmsim gen checksum-adversarial --hash xxhash -o \$W/ca-xxhash.ksmb"
	"gen-checksum-adversarial-crc32c|-||ksmsim gen checksum-adversarial --hash crc32c -o \$W/ca-crc32c.ksmb"
	"gen-checksum-adversarial-crc32|-||ksmsim gen checksum-adversarial --hash crc32 -o \$W/ca-crc32.ksmb"
	"gen-checksum-adversarial-xxh32|-||ksmsim gen checksum-adversarial --hash xxh32 -o \$W/ca-xxh32.ksmb"
	"collide-pairs|-||ksmsim collide false-positive --changes colliding-pair --threads 1 -o \$W/pairs.csv"
	"collide-pairs-jhash2|-||ksmsim collide false-positive --changes colliding-pair --hashes jhash2 --threads 1 -o \$W/pairs-jhash2.csv"
	"collide-birthday|long||ksmsim collide birthday -o \$W/birthday.csv"
	"collide-false-positive|long||ksmsim collide false-positive -o \$W/fp.csv"
	"collide-ksm|-||ksmsim collide ksm -o \$W/ksm.csv"
	"slurm-test|root||tests/analysis/slurm.sh \$KSMSIM ."
	"vm-image-minimal|root||KSMSIM_VM_CACHE=\$W/vm-cold-min workloads/vm/build-image.sh minimal"
	"vm-record-tmpfs-cold|root||KSMSIM_VM_CACHE=\$W/vm-cold-rec workloads/vm/record-guests.sh -w tmpfs -o \$W/tmpfs-cold.ksmb"
	"vm-record-tmpfs|root|workloads/vm/build-image.sh minimal|workloads/vm/record-guests.sh -w tmpfs -o \$W/tmpfs.ksmb"
	"vm-image-full|root||KSMSIM_VM_CACHE=\$W/vm-cold-full workloads/vm/build-image.sh full"
	"vm-image-full-cached|root|workloads/vm/build-image.sh full|workloads/vm/build-image.sh full"
	"vm-record-fio|root|workloads/vm/build-image.sh full|workloads/vm/record-guests.sh -t full -w fio -s 5 -m 512 -H 5 -o \$W/fio-2vm.ksmb"
	"vm-check-numpy|root|if [ ! -s \$W/numpy-2vm.ksmb ]; then workloads/vm/record-guests.sh -t full -w numpy -m 512 -H 5 -o \$W/numpy-2vm.ksmb; fi|ksmsim run --check --quiet --trace \$W/numpy-2vm.ksmb"
	"vm-test-boot|root|KSMSIM_VM_CACHE=build/tests/vm/cache workloads/vm/build-image.sh minimal|tests/vm/guests.sh \$KSMSIM workloads/vm build/tests/vm/cache"
	"vm-test-boot-asan|root|KSMSIM_VM_CACHE=build/tests/vm/cache workloads/vm/build-image.sh minimal|tests/vm/guests.sh build-asan/cli/ksmsim workloads/vm build/tests/vm/cache"
	"vm-tcg-slowdown|root|workloads/vm/build-image.sh minimal|workloads/vm/tcg-slowdown.sh -r 5 -o \$W/slowdown.csv"
	"vm-exp-record-fio|root long|workloads/vm/build-image.sh full|workloads/vm/record-guests.sh -n 4 -m 512 -t full -w fio -s 5 -H 20 -o \$W/exp-fio-4vm.ksmb"
	"vm-exp-record-numpy|root long|workloads/vm/build-image.sh full|workloads/vm/record-guests.sh -n 4 -m 512 -t full -w numpy -H 20 -o \$W/exp-numpy-4vm.ksmb"
	"vm-exp-record-build|root long|workloads/vm/build-image.sh full|workloads/vm/record-guests.sh -n 4 -m 512 -t full -w build -H 40 -c digest -x 1800 -o \$W/exp-build-4vm.ksmb"
	"vm-exp-replay-build|root long|if [ ! -s \$W/exp-build-4vm.ksmb ]; then workloads/vm/record-guests.sh -n 4 -m 512 -t full -w build -H 40 -c digest -x 1800 -o \$W/exp-build-4vm.ksmb; fi|ksmsim run --trace \$W/exp-build-4vm.ksmb --hash xxhash --pages-to-scan 1600 --sleep-millisecs 200 --quiet --csv \$W/ts.csv --marks-csv \$W/m.csv --summary-csv \$W/s.csv"
)

while (($#)); do
	case $1 in
	--only) only=${2:?--only needs ID[,ID...]}; shift 2 ;;
	--with-root) with_root=1; shift ;;
	--long) long=1; shift ;;
	--runs) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "--runs ${2:-}: a positive whole number"
		runs=$2; shift 2 ;;
	--nice) [[ ${2:-} =~ ^-?[0-9]+$ ]] || die "--nice ${2:-}: a number, e.g. 19"
		nice_n=$2; shift 2 ;;
	--work) work=${2:?--work needs a folder}; shift 2 ;;
	--csv) csv=${2:?--csv needs a file}; shift 2 ;;
	--dry-run) dry=1; shift ;;
	--update-docs) action=update; shift ;;
	--check) action=check; shift ;;
	--list) action=list; shift ;;
	-h | --help) awk 'NR > 2 && /^#/ {sub(/^# ?/, ""); print; next} NR > 2 {exit}' "$0"; exit 0 ;;
	*) die "unknown option $1 (see --help)" ;;
	esac
done

ids=()
declare -A class prep cmd
for r in "${reg[@]}"; do
	IFS='|' read -r i c p m <<<"$r"
	[[ -n $m ]] || die "registry entry '$i': no command (a '|' in its preparation?)"
	ids+=("$i") class[$i]=$c prep[$i]=$p cmd[$i]=$m
done
py() { python3 "$here/run_times.py" "$@"; }
registry_tsv() { # ID TAB CLASS TAB COMMAND, in order
	local i
	for i in "${ids[@]}"; do printf '%s\t%s\t%s\n' "$i" "${class[$i]}" "${cmd[$i]}"; done
}
case $action in
list) registry_tsv; exit 0 ;;
update) exec python3 "$here/run_times.py" update-docs --csv "$csv" --docs "${docs[@]}" ;;
check) exec python3 "$here/run_times.py" check --csv "$csv" --ids "$(IFS=,; echo "${ids[*]}")" --docs "${docs[@]}" ;;
esac

want=()
if [[ -n $only ]]; then
	[[ $only =~ ^[a-z0-9-]+(,[a-z0-9-]+)*$ ]] || die "--only $only: a comma list of ids (see --list)"
	IFS=, read -ra want <<<"$only"
	for i in "${want[@]}"; do [[ -n ${class[$i]+x} ]] || die "--only: no id '$i' (see --list)"; done
else
	want=("${ids[@]}")
fi
((with_root && EUID != 0)) && die "--with-root: run as root (the ids it adds need it)"
[[ -x /usr/bin/time ]] || die "needs GNU time as /usr/bin/time (Debian: apt-get install -y time)"
command -v python3 >/dev/null || die "needs python3"

ksmsim=${KSMSIM:-}
if [[ -z $ksmsim ]]; then
	for b in "$top"/build/cli/ksmsim "$top"/build*/cli/ksmsim; do
		[[ -x $b ]] && { ksmsim=$b; break; }
	done
fi
[[ -x $ksmsim ]] || die "build ksmsim first (or set KSMSIM)"
ksmsim=$(cd "$(dirname "$ksmsim")" && pwd)/$(basename "$ksmsim")
[[ $(basename "$ksmsim") == ksmsim ]] || die "KSMSIM $ksmsim: the binary must be named ksmsim (commands call it so)"

commit=$(git -C "$top" rev-parse --short HEAD)
git -C "$top" diff --quiet HEAD -- . ':(exclude)*.md' ':(exclude)analysis/results/run-times.csv' ||
	commit+=-dirty
cpu_model=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
nproc=$(nproc)

if [[ -n $work ]]; then
	mkdir -p "$work"; W=$(cd "$work" && pwd)
else
	W=$(mktemp -d "${TMPDIR:-/tmp}/run-times.XXXXXX")
	trap 'rm -rf "$W"' EXIT
fi
rows=$W/.rows.tsv
: >"$rows"
export W KSMSIM=$ksmsim PATH="$(dirname "$ksmsim"):$PATH"
fail=0
for i in "${want[@]}"; do
	c=${class[$i]}
	if [[ $c == *root* ]] && ((!with_root)); then
		echo "run_times: $i skipped: needs root, QEMU, Slurm or the network (--with-root); its row is kept" >&2
		continue
	fi
	if [[ $c == *long* ]] && ((!long)); then
		echo "run_times: $i skipped: takes long (--long); its row is kept" >&2
		continue
	fi
	echo "run_times: $i: ${cmd[$i]}" >&2
	((dry)) && continue
	if [[ -n ${prep[$i]} ]]; then
		(cd "$top" && nice -n "$nice_n" bash -c "${prep[$i]}") >"$W/.prep.log" 2>&1 ||
			{ echo "run_times: $i: the preparation failed ($W/.prep.log):" >&2
			  tail -5 "$W/.prep.log" >&2; fail=1; continue; }
	fi
	: >"$W/.runs"
	for ((r = 1; r <= runs; r++)); do
		load=$(cut -d' ' -f1 /proc/loadavg)
		date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
		if ! (cd "$top" && /usr/bin/time -f '%e %U %S %M' -o "$W/.time" \
			nice -n "$nice_n" bash -c "${cmd[$i]}") >"$W/.out.log" 2>&1; then
			echo "run_times: $i failed, no row written ($W/.out.log):" >&2
			tail -5 "$W/.out.log" >&2
			fail=1
			continue 2
		fi
		read -r wall user sys rss < <(tail -1 "$W/.time")
		cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
		mib=$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')
		echo "run_times: $i: wall $wall s, CPU $cpu s, peak RSS $mib MiB (load $load)" >&2
		printf '%s %s %s %s %s\n' "$cpu" "$wall" "$mib" "$load" "$date" >>"$W/.runs"
	done
	# each figure's median over the runs (of an even count, the lower
	# middle); the load and date of the first run
	med() { sort -n -k"$1,$1" "$W/.runs" | sed -n "$(((runs + 1) / 2))p" | cut -d' ' -f"$1"; }
	cpu=$(med 1) wall=$(med 2) mib=$(med 3)
	read -r _ _ _ load date <"$W/.runs"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$i" "$wall" "$cpu" "$mib" "$runs" \
		"$commit" "$cpu_model" "$nproc" "$load" "$nice_n" "$date" >>"$rows"
done
((dry)) && exit 0
py merge --csv "$csv" --new "$rows" --registry <(registry_tsv)
py update-docs --csv "$csv" --docs "${docs[@]}"
exit "$fail"
