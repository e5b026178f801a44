#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Parameter sweep over ksmsim run: workloads x hashes x pages_to_scan x
# sleep_millisecs x any other knob, one `ksmsim run` per cell, in parallel,
# resumable, merged into one tidy CSV. See analysis/README.md.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: analysis/sweep.sh [OPTIONS]
  --workload LIST        workloads for `ksmsim gen` (comma list; generated once
                         per workload/scale/seed into OUT/traces/)
  --trace FILE           a given trace (repeatable); its cells are named after
                         the file name without .gz, .ksmt, .ksmb
  --hash LIST            checksums (default jhash2,crc32c,xxhash)
  --policy SPEC          a design for `ksmsim run --policy` (repeatable, one
                         spec each since specs hold commas, e.g.
                         --policy dirty-bit --policy classified:classes=8,by=mm;
                         default kernel alone). A policy that decides without
                         the checksum (no-gate, dirty-bit, partial-hash) runs
                         once per trace and knobs, not once per --hash
  --pages-to-scan LIST   (default 100)
  --sleep-millisecs LIST (default 20)
  --knob NAME=V1,V2,...  any other `ksmsim run` knob option (repeatable),
                         e.g. --knob max_page_sharing=256,1024
  --scale S              `ksmsim gen --scale` (default 1)
  --seed N               `ksmsim gen --seed` (default 1)
  --run-args "ARGS"      extra arguments for every `ksmsim run` (e.g. --no-ideal)
  --series               also keep each cell's time series (--csv, 1 s)
  --out DIR              results directory (default analysis/out/sweep)
  --jobs N               parallel runs (default: nproc)
  --ksmsim PATH          the binary (default $KSMSIM, else build*/cli/ksmsim)
  --slurm                write OUT/sweep.sbatch (a job array, one cell per
                         index) and OUT/merge.sh instead of running here
  --merge                only merge finished cells into OUT/sweep.csv
  -h, --help
Cells whose result exists are skipped, so an interrupted sweep resumes
where it stopped. The merged CSV is OUT/sweep.csv: one row per cell, the
cell's `ksmsim run --summary-csv` row as it is (traces/FORMAT.md names the
columns): trace, hash, policy, workload, seed and scale (empty for a trace not made
by `ksmsim gen`), a column per knob (pages_to_scan, sleep_millisecs, ...,
the value at the end of the run) and pinned (the knobs this cell fixed,
knob=value;...).
EOF
}

die() { echo "sweep.sh: $*" >&2; exit 2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self="$here/$(basename "${BASH_SOURCE[0]}")"

find_ksmsim() {
	if [[ -n ${KSMSIM:-} ]]; then echo "$KSMSIM"; return; fi
	local b
	for b in "$here"/../build/cli/ksmsim "$here"/../build*/cli/ksmsim; do
		[[ -x $b ]] && { echo "$(cd "$(dirname "$b")" && pwd)/ksmsim"; return; }
	done
	die "no ksmsim binary: build it or pass --ksmsim"
}

# One cell: line N (1-based) of OUT/cells.tsv. Also what a Slurm array task runs.
run_cell() {
	local out=$1 n=$2 ksmsim=$3
	local line id trace hash args
	line=$(sed -n "${n}p" "$out/cells.tsv")
	[[ -n $line ]] || die "no cell $n in $out/cells.tsv"
	IFS=$'\t' read -r id trace hash args <<<"$line"
	local res="$out/cells/$id.csv"
	local total
	total=$(wc -l <"$out/cells.tsv")
	if [[ -e $res ]]; then
		return 0
	fi
	local tmp="$out/cells/.$id.$$"
	local ser_opts=()
	[[ -e $out/series.flag ]] && ser_opts=(--csv "$out/series/$id.csv" --interval-ms 1000)
	local t0=$SECONDS extra=()
	[[ -s $out/run_args ]] && read -r -a extra <"$out/run_args"
	# shellcheck disable=SC2086  # args is a list of words we built
	# traces the sweep generated are named from OUT, so rows do not depend on
	# where OUT is; traces the user gave keep the path given
	# the summary names the knobs itself; written aside, then renamed: whole or nothing
	local hash_opts=(--hash "$hash")
	[[ $hash == - ]] && hash_opts=()	# the cell's policy decides without a checksum
	if ! "$ksmsim" run --quiet --trace "$trace" --trace-label "${trace#"$out"/}" "${hash_opts[@]}" \
		$args "${extra[@]}" "${ser_opts[@]}" --summary-csv "$tmp"; then
		rm -f "$tmp"
		echo "sweep.sh: cell $id failed" >&2
		return 1
	fi
	mv "$tmp" "$res"
	local ndone
	ndone=$(find "$out/cells" -name '*.csv' | wc -l)
	printf '[%d/%d] %s  %ds\n' "$ndone" "$total" "$id" $((SECONDS - t0)) >&2
}

merge() {
	local out=$1
	local tmp="$out/.sweep.csv.$$" header="" id missing=0
	: >"$tmp"
	while IFS=$'\t' read -r id _; do
		if [[ ! -e $out/cells/$id.csv ]]; then
			missing=$((missing + 1))
			continue
		fi
		if [[ -z $header ]]; then
			header=$(sed -n 1p "$out/cells/$id.csv")
			echo "$header" >>"$tmp"
		elif [[ $(sed -n 1p "$out/cells/$id.csv") != "$header" ]]; then
			# a cell of another ksmsim: its row would land under the wrong names
			rm -f "$tmp"
			die "$out/cells/$id.csv has other columns than the cells before it; remove it to run it again"
		fi
		sed -n 2p "$out/cells/$id.csv" >>"$tmp"
	done <"$out/cells.tsv"
	mv "$tmp" "$out/sweep.csv"
	local rows=$(($(wc -l <"$out/sweep.csv") - 1))
	((rows < 0)) && rows=0
	if ((missing)); then
		echo "sweep.sh: $rows rows in $out/sweep.csv, $missing cells not finished" >&2
	else
		echo "sweep.sh: $rows rows in $out/sweep.csv" >&2
	fi
	((missing == 0))
}

if [[ ${1:-} == --cell ]]; then
	run_cell "$2" "$3" "$4"
	exit
fi

workloads=() traces=() hashes=jhash2,crc32c,xxhash pts=100 slp=20 knobs=() policies=()
scale=1 seed=1 run_args="" series=0 out="$here/out/sweep" jobs=$(nproc 2>/dev/null || echo 1)
ksmsim="" slurm=0 merge_only=0
while (($#)); do
	case $1 in
	--series | --slurm | --merge | -h | --help) ;;
	*) (($# >= 2)) || die "$1 needs a value" ;;
	esac
	case $1 in
	--workload) IFS=, read -r -a w <<<"$2"; workloads+=("${w[@]}"); shift 2 ;;
	--trace) traces+=("$2"); shift 2 ;;
	--hash | --hashes) hashes=$2; shift 2 ;;
	--policy) policies+=("$2"); shift 2 ;;
	--pages-to-scan) pts=$2; shift 2 ;;
	--sleep-millisecs) slp=$2; shift 2 ;;
	--knob) [[ $2 == ?*=* ]] || die "--knob wants NAME=V1,V2, not '$2'"; knobs+=("$2"); shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--run-args) run_args=$2; shift 2 ;;
	--series) series=1; shift ;;
	--out) out=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--ksmsim) ksmsim=$2; shift 2 ;;
	--slurm) slurm=1; shift ;;
	--merge) merge_only=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
done
if ((merge_only)); then
	out=$(cd "$out" 2>/dev/null && pwd) || die "no results directory $out"
	[[ -e $out/cells.tsv ]] || die "$out has no cells.tsv"
	merge "$out"
	exit
fi
[[ -n $ksmsim ]] || ksmsim=$(find_ksmsim)
[[ -x $ksmsim ]] || die "--ksmsim $ksmsim: not an executable"
[[ $ksmsim == /* ]] || ksmsim="$(cd "$(dirname "$ksmsim")" && pwd)/$(basename "$ksmsim")"
((${#workloads[@]} + ${#traces[@]})) || die "no --workload and no --trace"

# Every value is checked before the first trace is generated, by asking
# ksmsim itself: one `ksmsim run` per value on a trace that is only a header.
check_dir=$(mktemp -d)
trap 'rm -rf "$check_dir"' EXIT
printf 'ksmtrace 1\n' >"$check_dir/empty.ksmt"
ask_run() { # OPTION-AS-GIVEN ARGS...
	local given=$1 msg
	shift
	msg=$("$ksmsim" run --quiet --trace "$check_dir/empty.ksmt" "$@" 2>&1 >/dev/null) ||
		die "$given: ${msg#ksmsim run: }"
}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "--jobs wants a positive number, not '$jobs'"
[[ $seed =~ ^[0-9]+$ ]] || die "--seed wants a decimal number, not '$seed'"
[[ $scale =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] || die "--scale wants a number, not '$scale'"
if ((${#workloads[@]})); then
	known=$("$ksmsim" gen --list) || die "$ksmsim gen --list failed"
	for w in "${workloads[@]}"; do
		grep -qx -- "$w" <<<"$known" || die "--workload: unknown workload '$w' (one of: $(echo $known | tr ' ' ,))"
	done
fi
IFS=, read -r -a hl <<<"$hashes"
((${#hl[@]})) || die "--hash: empty list"
for h in "${hl[@]}"; do ask_run "--hash $hashes" --hash "$h"; done
((${#policies[@]})) || policies=(kernel)
declare -A pol_hash	# 1: the policy gates on --hash
for p in "${policies[@]}"; do
	ask_run "--policy $p" --policy "$p"
	pol_hash[$p]=0
	"$ksmsim" run --quiet --trace "$check_dir/empty.ksmt" --policy "$p" --hash xxhash \
		>/dev/null 2>&1 && pol_hash[$p]=1
done
for ax in "pages-to-scan=$pts" "sleep-millisecs=$slp" "${knobs[@]}"; do
	name=${ax%%=*}
	IFS=, read -r -a vals <<<"${ax#*=}"
	((${#vals[@]})) || die "--${name//_/-}: empty list"
	for v in "${vals[@]}"; do ask_run "--${name//_/-} ${ax#*=}" "--${name//_/-}" "$v"; done
done
# shellcheck disable=SC2086  # the user's words, split as the run will split them
[[ -z $run_args ]] || ask_run "--run-args '$run_args'" $run_args
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Workload traces: generated once per (workload, scale, seed), kept in a cache.
mkdir -p "$out/traces" "$out/cells"
names=() paths=()
for w in "${workloads[@]}"; do
	t="$out/traces/$w-s$scale-n$seed.ksmt"
	if [[ ! -e $t ]]; then
		echo "sweep.sh: generating $w (scale $scale, seed $seed)" >&2
		"$ksmsim" gen "$w" --scale "$scale" --seed "$seed" -o "$t" || die "ksmsim gen $w failed"
	fi
	names+=("$w") paths+=("$t")
done
for t in "${traces[@]}"; do
	[[ -r $t ]] || die "cannot read $t"
	b=$(basename "$t")
	n=${b%.gz}
	n=${n%.ksmt}
	n=${n%.ksmb}
	names+=("$n") paths+=("$(cd "$(dirname "$t")" && pwd)/$b")
done

# The cross product, one line per cell: id, trace, hash, run options.
axes=("pages-to-scan=$pts" "sleep-millisecs=$slp")
for k in "${knobs[@]}"; do
	name=${k%%=*}
	axes+=("${name//_/-}=${k#*=}")
done
cells=()
for i in "${!names[@]}"; do for p in "${policies[@]}"; do
	IFS=, read -r -a hl <<<"$hashes"
	((pol_hash[$p])) || hl=(-)
	popt="" pid=""
	if [[ $p != kernel ]]; then
		popt="--policy $p"
		pid=_$(tr -c 'A-Za-z0-9.-' '-' <<<"$p" | sed 's/-$//')
	fi
	for h in "${hl[@]}"; do
		combos=("|${names[$i]}")	# args|id
		for ax in "${axes[@]}"; do
			opt=${ax%%=*}
			IFS=, read -r -a vals <<<"${ax#*=}"
			next=()
			for c in "${combos[@]}"; do
				IFS='|' read -r a id <<<"$c"
				for val in "${vals[@]}"; do
					next+=("$a --$opt $val|${id}_${opt}$val")
				done
			done
			combos=("${next[@]}")
		done
		for c in "${combos[@]}"; do
			IFS='|' read -r a id <<<"$c"
			hid=_$h
			[[ $h == - ]] && hid=""
			a="$a${popt:+ $popt}"
			cells+=("$(printf '%s%s%s\t%s\t%s\t%s' "$id" "$pid" "$hid" "${paths[$i]}" "$h" "${a# }")")
		done
	done
done; done
printf '%s\n' "${cells[@]}" >"$out/cells.tsv.tmp"
mv "$out/cells.tsv.tmp" "$out/cells.tsv"
echo "$run_args" >"$out/run_args"
if ((series)); then
	mkdir -p "$out/series"
	: >"$out/series.flag"
else
	rm -f "$out/series.flag"
fi
total=${#cells[@]}
todo=0
while IFS=$'\t' read -r id _; do
	[[ -e $out/cells/$id.csv ]] || todo=$((todo + 1))
done <"$out/cells.tsv"

if ((slurm)); then
	cat >"$out/sweep.sbatch" <<EOF
#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Written by analysis/sweep.sh: one array task per cell of $out/cells.tsv.
# Submit: sbatch $out/sweep.sbatch   then, when all tasks ended: $out/merge.sh
#SBATCH --job-name=ksmsim-sweep
#SBATCH --array=1-$total
#SBATCH --cpus-per-task=1
#SBATCH --mem=4G
#SBATCH --time=02:00:00
#SBATCH --output=$out/slurm-%A_%a.out
exec "$self" --cell "$out" "\$SLURM_ARRAY_TASK_ID" "$ksmsim"
EOF
	cat >"$out/merge.sh" <<EOF
#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Written by analysis/sweep.sh: merge the finished cells into $out/sweep.csv.
# (Or submit after the array: sbatch --dependency=afterany:JOBID --wrap "$out/merge.sh")
exec "$self" --merge --out "$out"
EOF
	chmod +x "$out/sweep.sbatch" "$out/merge.sh"
	echo "sweep.sh: $total cells ($todo to run); sbatch $out/sweep.sbatch, then $out/merge.sh" >&2
	exit 0
fi

echo "sweep.sh: $total cells, $todo to run, $jobs at a time" >&2
rc=0
if ((todo)); then
	seq 1 "$total" | xargs -P "$jobs" -I{} "$self" --cell "$out" {} "$ksmsim" || rc=1
fi
merge "$out" || rc=1
exit $rc
