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
where it stopped (SIGTERM or SIGINT stops the running cells and removes
their unfinished files). The merged CSV is OUT/sweep.csv: one row per cell,
the cell's `ksmsim run --summary-csv` row as it is (traces/FORMAT.md names the
columns): trace, hash, policy, workload, seed and scale (empty for a trace not made
by `ksmsim gen`), a column per knob (pages_to_scan, sleep_millisecs, ...,
the value at the end of the run) and pinned (the knobs this cell fixed,
knob=value;...).
Every value is checked (by asking ksmsim) before the first trace is made.
Exit status: 0 done, 1 a cell or the merge failed (or cells are missing),
2 bad usage or a refused value (one line on standard error), 143 or 130
stopped by SIGTERM or SIGINT.
EOF
}

die() { local m="sweep.sh: $*"; echo "${m//[[:cntrl:]]/?}" >&2; exit 2; }

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

# A cell stopped by TERM or INT: its run stopped, its unfinished files gone.
kid="" tmp="" ser_tmp=""
# shellcheck disable=SC2317  # run by a trap
cell_stop() {
	[[ -z $kid ]] || { kill -TERM "$kid" 2>/dev/null; wait "$kid" 2>/dev/null; }
	rm -f -- ${tmp:+"$tmp"} ${ser_tmp:+"$ser_tmp"}
	exit 143
}

# One cell: line N (1-based) of OUT/cells.tsv. Also what a Slurm array task runs.
run_cell() {
	local out=$1 n=$2 ksmsim=$3
	local line id trace hash args
	[[ $n =~ ^[1-9][0-9]*$ ]] || die "--cell: no cell '$n' (a line number of cells.tsv)"
	line=$(sed -n "${n}p" "$out/cells.tsv")
	[[ -n $line ]] || die "no cell $n in $out/cells.tsv"
	IFS=$'\t' read -r id trace hash args <<<"$line"
	local res="$out/cells/$id.csv"
	local total
	total=$(wc -l <"$out/cells.tsv")
	if [[ -e $res ]]; then
		return 0
	fi
	# the summary (and series) are written aside, then renamed: whole or nothing
	tmp="$out/cells/.$id.$$" ser_tmp=""
	local ser_opts=()
	if [[ -e $out/series.flag ]]; then
		ser_tmp="$out/series/.$id.$$"
		ser_opts=(--csv "$ser_tmp" --interval-ms 1000)
	fi
	local t0=$SECONDS extra=() words=()
	# split on white space, never globbed: these are the words checked before
	[[ -s $out/run_args ]] && read -r -a extra <"$out/run_args"
	read -r -a words <<<"$args"
	# traces the sweep generated are named from OUT, so rows do not depend on
	# where OUT is; traces the user gave keep the path given
	local hash_opts=(--hash "$hash")
	[[ $hash == - ]] && hash_opts=()	# the cell's policy decides without a checksum
	# in the background, so that a TERM stops it and removes its files at once
	trap 'cell_stop' TERM INT
	"$ksmsim" run --quiet --trace "$trace" --trace-label "${trace#"$out"/}" "${hash_opts[@]}" \
		"${words[@]}" "${extra[@]}" "${ser_opts[@]}" --summary-csv "$tmp" &
	kid=$!
	if ! wait "$kid"; then
		kid=""
		rm -f -- "$tmp" ${ser_tmp:+"$ser_tmp"}
		echo "sweep.sh: cell $id failed" >&2
		return 1
	fi
	kid=""
	[[ -z $ser_tmp ]] || mv -- "$ser_tmp" "$out/series/$id.csv"
	mv -- "$tmp" "$res"
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
	--workload | --trace | --hash | --hashes | --policy | --pages-to-scan | --sleep-millisecs | \
		--knob | --scale | --seed | --run-args | --out | --jobs | --ksmsim)
		(($# >= 2)) || die "$1 needs a value" ;;
	*) die "unknown option '$1' (see --help)" ;;
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
	[[ -d $out ]] || die "--out $out: no results folder"
	out=$(cd -- "$out" && pwd)
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
# Names go into OUT/cells.tsv (a line per cell, tab-separated) and the
# values into `ksmsim run` words: no line break or tab in a path, no white
# space in a value.
case $out in *[[:cntrl:]]*) die "--out: a path with a control character (tab, line break) in it" ;; esac
for t in "${traces[@]}"; do
	case $t in *[[:cntrl:]]*) die "--trace: a path with a control character (tab, line break) in it" ;; esac
done
for v in "$hashes" "${policies[@]}" "$pts" "$slp" "${knobs[@]}"; do
	case $v in *[[:space:][:cntrl:]]*) die "'$v': a value with white space in it" ;; esac
done
[[ ! -e $out || -d $out ]] || die "--out $out: not a folder"
if ((${#workloads[@]})); then
	known=$("$ksmsim" gen --list) || die "$ksmsim gen --list failed"
	for w in "${workloads[@]}"; do
		grep -qxF -- "$w" <<<"$known" || die "--workload: unknown workload '$w' (one of: $(paste -sd, <<<"$known"))"
	done
	# --seed and --scale by gen's own rules (it reads its options in order,
	# so --list after them lists only once they are accepted)
	msg=$("$ksmsim" gen --seed "$seed" --scale "$scale" --list 2>&1 >/dev/null) ||
		die "${msg#ksmsim gen: }"
	# and each workload at that size: gen refuses before it creates its
	# output, so an output in a folder that does not exist tells which
	for w in "${workloads[@]}"; do
		msg=$("$ksmsim" gen "$w" --seed "$seed" --scale "$scale" -o "$check_dir/none/$w.ksmt" 2>&1 >/dev/null) &&
			die "ksmsim gen $w wrote into a folder that does not exist"
		[[ $msg == *": $check_dir/none/$w.ksmt: cannot create: "* ]] || die "--workload $w: ${msg#"ksmsim gen $w: "}"
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
# the user's words, split as the run will split them (never globbed)
run_args=${run_args//[[:space:]]/ }
read -r -a ra <<<"$run_args"
((${#ra[@]} == 0)) || ask_run "--run-args '$run_args'" "${ra[@]}"
mkdir -p -- "$out" 2>/dev/null || die "--out $out: cannot make the folder"
out=$(cd -- "$out" && pwd)

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
	[[ -r $t && ! -d $t ]] || die "cannot read $t"
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
	# Every path is written shell-quoted (printf %q), so the scripts run
	# what they say whatever OUT and the paths hold (no control character:
	# refused above). #SBATCH lines are read by sbatch, not the shell: the
	# log path goes there only when it is made of plain characters.
	qs=$(printf %q "$out/sweep.sbatch") qm=$(printf %q "$out/merge.sh")
	logs="#SBATCH --output=$out/slurm-%A_%a.out"
	[[ $out =~ ^[A-Za-z0-9/._+,:@=-]+$ ]] ||
		logs="# (no --output: OUT's name holds characters #SBATCH lines do not take; the logs go where sbatch runs)"
	{
		printf '%s\n' '#!/bin/bash' '# SPDX-License-Identifier: GPL-2.0-or-later' \
			"# Written by analysis/sweep.sh: one array task per cell of $out/cells.tsv." \
			"# Submit: sbatch $qs   then, when all tasks ended: $qm" \
			'#SBATCH --job-name=ksmsim-sweep' "#SBATCH --array=1-$total" '#SBATCH --cpus-per-task=1' \
			'#SBATCH --mem=4G' '#SBATCH --time=02:00:00' "$logs"
		# shellcheck disable=SC2016  # the task's index, expanded when it runs
		printf 'exec %q --cell %q "$SLURM_ARRAY_TASK_ID" %q\n' "$self" "$out" "$ksmsim"
	} >"$out/sweep.sbatch"
	{
		printf '%s\n' '#!/bin/bash' '# SPDX-License-Identifier: GPL-2.0-or-later' \
			"# Written by analysis/sweep.sh: merge the finished cells into $out/sweep.csv." \
			"# (Or submit after the array: sbatch --dependency=afterany:JOBID --wrap $(printf %q "$qm"))"
		printf 'exec %q --merge --out %q\n' "$self" "$out"
	} >"$out/merge.sh"
	chmod +x "$out/sweep.sbatch" "$out/merge.sh"
	echo "sweep.sh: $total cells ($todo to run); sbatch $qs, then $qm" >&2
	exit 0
fi

echo "sweep.sh: $total cells, $todo to run, $jobs at a time" >&2
# Cells run as background jobs, at most --jobs at a time. A TERM or INT
# stops them (each removes its unfinished files) before the sweep exits.
# shellcheck disable=SC2317  # run by a trap
stop_cells() {
	local p
	trap - TERM INT
	for p in $(jobs -pr); do kill -TERM "$p" 2>/dev/null; done
	wait
	exit "$1"
}
trap 'stop_cells 143' TERM
trap 'stop_cells 130' INT
rc=0
running=0
for ((i = 1; i <= total; i++)); do
	id=$(sed -n "${i}p" "$out/cells.tsv" | cut -f1)
	[[ -e $out/cells/$id.csv ]] && continue
	if ((running >= jobs)); then
		wait -n || rc=1
		running=$((running - 1))
	fi
	"$self" --cell "$out" "$i" "$ksmsim" &
	running=$((running + 1))
done
while ((running)); do
	wait -n || rc=1
	running=$((running - 1))
done
trap - TERM INT
merge "$out" || rc=1
exit $rc
