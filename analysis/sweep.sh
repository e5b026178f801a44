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
  --kernel 6.1|6.18      whose mm/ksm.c every run models (`ksmsim run --kernel`;
                         default 6.18); 6.1 refuses --knob smart_scan and the
                         advisor knobs, and its rows say kernel=6.1 in pinned
  --series               also keep each cell's time series (--csv, 1 s)
  --out DIR              results directory (default analysis/out/sweep)
  --jobs N               parallel runs (default: nproc)
  --ksmsim PATH          the binary (default $KSMSIM, else build*/cli/ksmsim)
  --slurm                write OUT/sweep.sbatch (the array tasks), OUT/submit.sh
                         (queues the cells still missing, then merge.sh) and
                         OUT/merge.sh instead of running here
  --submit               --slurm, then run OUT/submit.sh
  --cells-per-task N     cells one array task runs, one after the other (1)
  --max-array-size N     the cluster's MaxArraySize (default: scontrol's, else
                         1001); each array's indexes stay below it
  --slurm-mem M          memory a task asks for (default 4G)
  --slurm-time T         time a task asks for (default 02:00:00)
  --partition P          the tasks' partition (default: the cluster's)
  --account A            the tasks' account
  --sbatch-args "ARGS"   more sbatch options for every job (split at white
                         space, never globbed), e.g. "--qos=long --nice=10"
  --merge                only merge finished cells into OUT/sweep.csv (or,
                         with cells missing, OUT/sweep.partial.csv)
  -h, --help
Cells whose result exists are skipped, so an interrupted sweep resumes
where it stopped (SIGTERM or SIGINT stops the running cells and removes
their unfinished files). One sweep per OUT: a sweep whose cells differ
from those OUT/cells.tsv lists is refused. Every trace is read through
(`ksmsim trace stat`) before its cells run or are queued. The merged CSV
is OUT/sweep.csv, written only when every cell is done (a merge with cells
missing writes OUT/sweep.partial.csv and exits 1): one row per cell,
the cell's `ksmsim run --summary-csv` row as it is (traces/FORMAT.md names the
columns): trace, hash, checksum_ns (the price the run charged a checksum),
policy, workload, seed and scale (empty for a trace not made by `ksmsim
gen`), a column per knob (pages_to_scan, sleep_millisecs, ..., the value at
the end of the run) and pinned (the knobs this cell fixed, knob=value;...).
Every value is checked (by asking ksmsim) before the first trace is made;
with --slurm where Slurm answers (scontrol), the resources too (sbatch
--test-only, the partition's MaxTime).
Exit status: 0 done, 1 a cell or the merge failed (or cells are missing),
2 bad usage or a refused value (one line on standard error), 143 or 130
stopped by SIGTERM or SIGINT.
EOF
}

die() { local m="sweep.sh: $*"; echo "${m//[[:cntrl:]]/?}" >&2; exit 2; }
say() { local m="sweep.sh: $*"; echo "${m//[[:cntrl:]]/?}" >&2; }

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

# The fingerprint of OUT/cells.tsv: an array task runs only the cells of
# the list it was queued for.
cells_sum() { cksum <"$1/cells.tsv" | awk '{ print $1 "-" $2 }'; }

# What a run of cell ID stopped by SIGKILL (a time limit, a lost node)
# leaves: the sweep's .ID.PID and ksmsim's own .ID.PID.tmp.XXXXXX, in
# cells/ and series/. The digits keep another cell's files out (an ID may
# hold dots).
clean_leftovers() { # OUT ID
	local f
	for f in "$1/cells/.$2."[0-9]* "$1/series/.$2."[0-9]*; do
		[[ ${f#"${f%/*}/.$2."} =~ ^[0-9]+(\.tmp\.[A-Za-z0-9]{6})?$ ]] && rm -f -- "$f"
	done
	return 0
}

# A cell stopped by TERM or INT: its run stopped, its unfinished files gone.
kid="" tmp="" ser_tmp=""
# shellcheck disable=SC2317  # run by a trap
cell_stop() {
	[[ -z $kid ]] || { kill -TERM "$kid" 2>/dev/null; wait "$kid" 2>/dev/null; }
	[[ -z $tmp ]] || rm -f -- "$tmp" "$tmp".tmp.??????
	[[ -z $ser_tmp ]] || rm -f -- "$ser_tmp" "$ser_tmp".tmp.??????
	exit 143
}

# One cell: line N (1-based) of OUT/cells.tsv.
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
	if [[ ! -r $trace ]]; then
		say "cell $id: cannot read $trace on ${HOSTNAME:-this host} (traces must be on a file system every node shares)"
		return 1
	fi
	clean_leftovers "$out" "$id"
	# the summary (and series) are written aside, then renamed: whole or nothing
	tmp="$out/cells/.$id.$$" ser_tmp=""
	local ser_opts=()
	if [[ -e $out/series.flag ]]; then
		ser_tmp="$out/series/.$id.$$"
		ser_opts=(--csv "$ser_tmp" --interval-ms 1000)
	fi
	local t0=$SECONDS words=()
	# split on white space, never globbed: these are the words checked before
	read -r -a words <<<"$args"
	# traces the sweep generated are named from OUT, so rows do not depend on
	# where OUT is; traces the user gave keep the path given
	local hash_opts=(--hash "$hash")
	[[ $hash == - ]] && hash_opts=()	# the cell's policy decides without a checksum
	# in the background, so that a TERM stops it and removes its files at once
	trap 'cell_stop' TERM INT
	"$ksmsim" run --quiet --trace "$trace" --trace-label "${trace#"$out"/}" "${hash_opts[@]}" \
		"${words[@]}" "${ser_opts[@]}" --summary-csv "$tmp" &
	kid=$!
	if ! wait "$kid"; then
		kid=""
		rm -f -- "$tmp" ${ser_tmp:+"$ser_tmp"}
		tmp="" ser_tmp=""
		echo "sweep.sh: cell $id failed" >&2
		return 1
	fi
	kid=""
	[[ -z $ser_tmp ]] || mv -- "$ser_tmp" "$out/series/$id.csv"
	mv -- "$tmp" "$res"
	tmp="" ser_tmp=""
	local ndone
	ndone=$(find "$out/cells" -name '*.csv' | wc -l)
	printf '[%d/%d] %s  %ds\n' "$ndone" "$total" "$id" $((SECONDS - t0)) >&2
}

# Array task IDX of a job queued with group offset OFFSET (what
# OUT/sweep.sbatch runs): the cells of group OFFSET+IDX, PER cells a group,
# one after the other, if OUT/cells.tsv is still the list it was queued for.
run_task() {
	local out=$1 sum=$2 per=$3 offset=$4 idx=$5 ksmsim=$6
	local on="task $idx on ${HOSTNAME:-this host}" total g c last rc=0
	[[ $idx =~ ^[0-9]+$ ]] || die "no SLURM_ARRAY_TASK_ID: queue the tasks with $out/submit.sh"
	[[ -d $out ]] || die "$on: no $out (OUT must be on a file system every node shares)"
	[[ -e $out/cells.tsv && $(cells_sum "$out") == "$sum" ]] ||
		die "$on: $out/cells.tsv is not the cell list this task was queued for; nothing run"
	[[ -x $ksmsim ]] || die "$on: no binary $ksmsim (it must be on a file system every node shares)"
	total=$(wc -l <"$out/cells.tsv")
	g=$((offset + idx))
	c=$(((g - 1) * per + 1)) last=$((g * per))
	((last <= total)) || last=$total
	((g >= 1 && c <= last)) || die "$on: no cell in group $g ($total cells, $per a task)"
	echo "sweep.sh: $on: cells $c-$last of $total" >&2
	for ((; c <= last; c++)); do
		run_cell "$out" "$c" "$ksmsim" || rc=1
	done
	return $rc
}

# The array jobs that queue the cells still missing, one line per job:
# "OFFSET INDEXES TASKS". Task I of a job runs group OFFSET+I (cells
# (G-1)*PER+1 .. G*PER); a group with any cell missing is queued, and a
# job's indexes stay below MAX (Slurm's MaxArraySize), so a bigger sweep
# takes several jobs.
plan() { # OUT PER MAX
	local out=$1 per=$2 span=$(($3 - 1)) id n=0 g last=0
	local -a groups=()
	while IFS=$'\t' read -r id _; do
		n=$((n + 1))
		[[ -e $out/cells/$id.csv ]] && continue
		g=$(((n - 1) / per + 1))
		((g == last)) || groups+=("$g")
		last=$g
	done <"$out/cells.tsv"
	local cur=-1 list="" tasks=0 a=0 b=0 win i
	# a trailing 0 closes the last job
	for g in "${groups[@]}" 0; do
		win=-1 i=0
		((g == 0)) || win=$(((g - 1) / span)) i=$((g - (g - 1) / span * span))
		if ((win == cur && i == b + 1)); then
			b=$i tasks=$((tasks + 1))
			continue
		fi
		if ((cur >= 0)); then
			list+=,$a
			((b == a)) || list+=-$b
		fi
		if ((win != cur)); then
			((cur < 0)) || echo "$((cur * span)) ${list#,} $tasks"
			cur=$win list="" tasks=0
		fi
		a=$i b=$i tasks=$((tasks + 1))
	done
}

# MaxArraySize as the cluster's controller says, if one answers here.
site_max_array() {
	local v
	command -v scontrol >/dev/null || return 1
	v=$(scontrol show config 2>/dev/null | awk '$1 == "MaxArraySize" { print $3 }') || return 1
	[[ $v =~ ^[1-9][0-9]*$ ]] || return 1
	echo "$v"
}

# What OUT/submit.sh runs: the array jobs plan() gives, then merge.sh
# after them all (afterany: it merges what finished and names what did
# not). Job ids go to OUT/slurm-jobs and standard output.
queue() { # OUT PER MAX SBATCH-ARGS...
	local out=$1 per=$2 max=$3
	shift 3
	local -a sargs=("$@") ids=() lists=()
	local q running site offset list tasks j ntasks=0 log
	command -v sbatch >/dev/null || die "no sbatch here: run $out/submit.sh where Slurm's commands are"
	[[ -e $out/cells.tsv ]] || die "$out has no cells.tsv"
	# one submission at a time: tasks still queued would run the cells a
	# new job queues too
	q=$(squeue -h -u "$(id -un)" -o '%F|%o' 2>&1) || die "squeue: ${q//$'\n'/ }"
	running=$(S="$out/sweep.sbatch" M="$out/merge.sh" awk '
		{ c = substr($0, index($0, "|") + 1) }
		c == ENVIRON["M"] || c == ENVIRON["S"] || index(c, ENVIRON["S"] " ") == 1 { print $1 }' <<<"$q" |
		cut -d'|' -f1 | sort -u | paste -sd, -)
	[[ -z $running ]] ||
		die "jobs $running of this sweep are still queued or running: wait for them (squeue -j $running) or scancel them, then run $out/submit.sh again"
	if site=$(site_max_array) && ((site < max)); then max=$site; fi
	((max >= 2)) || die "MaxArraySize $max: this cluster takes no job arrays"
	mkdir -p "$out/logs"
	# sbatch expands %A, %a, %x in the log path: a % of OUT is written %%
	log="${out//%/%%}/logs/%x-%A_%a.out"
	while read -r offset list tasks; do
		if ! j=$(sbatch --parsable --array="$list" --output="$log" "${sargs[@]}" "$out/sweep.sbatch" "$offset"); then
			((${#ids[@]} == 0)) || scancel "${ids[@]}" || true
			say "sbatch refused the array job --array=$list${ids[0]:+ (jobs ${ids[*]}, queued before it, cancelled)}"
			exit 1
		fi
		ids+=("${j%%;*}") lists+=("$list") ntasks=$((ntasks + tasks))
	done < <(plan "$out" "$per" "$max")
	if ((${#ids[@]} == 0)); then
		say "every cell of $out is done: nothing queued; $out/merge.sh merges them"
		return 0
	fi
	if ! j=$(sbatch --parsable --dependency="afterany:$(IFS=:; echo "${ids[*]}")" \
		--output="${out//%/%%}/logs/%x-%j.out" "${sargs[@]}" "$out/merge.sh"); then
		scancel "${ids[@]}" || true
		say "sbatch refused the merge job (array jobs ${ids[*]} cancelled)"
		exit 1
	fi
	j=${j%%;*}
	{
		for i in "${!ids[@]}"; do echo "${ids[$i]} ${lists[$i]}"; done
		echo "$j merge"
	} >"$out/slurm-jobs"
	say "$ntasks tasks in array job(s) ${ids[*]}, then merge job $j (logs in $out/logs)"
	printf '%s\n' "${ids[@]}" "$j"
}

# Cells are missing after a submission: a job whose tasks left no log has
# not run yet, or could not open OUT on its node (Slurm then writes no log
# at all and ends the task as JobLaunchFailure).
jobs_report() {
	local out=$1 id list
	[[ -s $out/slurm-jobs ]] || return 0
	while read -r id list; do
		[[ $list == merge ]] && continue
		[[ -z $(find "$out/logs" -maxdepth 1 -name "*-${id}_*.out" 2>/dev/null | head -1) ]] || continue
		if scontrol show job -o "$id" 2>/dev/null | grep -q ' Reason=JobLaunchFailure '; then
			say "array job $id (tasks $list) ended in JobLaunchFailure and left no log in $out/logs: its node could not open $out; OUT, this script, the binary and the traces must be on a file system every node shares"
			continue
		fi
		say "array job $id (tasks $list) left no log in $out/logs: it has not run yet (squeue -j $id), or its tasks could not open $out on their node: OUT, this script, the binary and the traces must be on a file system every node shares"
	done <"$out/slurm-jobs"
}

# OUT/sweep.csv only ever holds every cell: with cells missing, the rows
# done go to OUT/sweep.partial.csv and a complete sweep.csv stays.
merge() {
	local out=$1
	local tmp="$out/.sweep.csv.$$" header="" id missing=0 first=()
	: >"$tmp"
	while IFS=$'\t' read -r id _; do
		if [[ ! -e $out/cells/$id.csv ]]; then
			missing=$((missing + 1))
			((${#first[@]} == 3)) || first+=("$id")
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
	local rows=$(($(wc -l <"$tmp") - 1))
	((rows >= 0)) || rows=0
	if ((missing == 0)); then
		mv "$tmp" "$out/sweep.csv"
		rm -f "$out/sweep.partial.csv"
		say "$rows rows in $out/sweep.csv"
		return 0
	fi
	mv "$tmp" "$out/sweep.partial.csv"
	local kept=""
	[[ ! -e $out/sweep.csv ]] || kept="; $out/sweep.csv, an earlier complete merge, is kept"
	((missing <= 3)) || first+=(...)
	say "$missing cells not finished (${first[*]}): the $rows done are in $out/sweep.partial.csv$kept"
	jobs_report "$out"
	return 1
}

case ${1:-} in
--cell) run_cell "$2" "$3" "$4"; exit ;;
--task) run_task "$2" "$3" "$4" "$5" "$6" "$7"; exit ;;
--queue) shift; queue "$@"; exit ;;
esac

workloads=() traces=() hashes=jhash2,crc32c,xxhash pts=100 slp=20 knobs=() policies=()
scale=1 seed=1 run_args="" kernel="" series=0 out="$here/out/sweep" jobs=$(nproc 2>/dev/null || echo 1)
ksmsim="" slurm=0 submit=0 merge_only=0 per=1 max="" mem=4G time=02:00:00 partition="" account=""
sbatch_args=""
while (($#)); do
	case $1 in
	--series | --slurm | --submit | --merge | -h | --help) ;;
	--workload | --trace | --hash | --hashes | --policy | --pages-to-scan | --sleep-millisecs | \
		--knob | --scale | --seed | --run-args | --kernel | --out | --jobs | --ksmsim | --cells-per-task | \
		--max-array-size | --slurm-mem | --slurm-time | --partition | --account | --sbatch-args)
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
	--knob)
		[[ $2 == ?*=* ]] || die "--knob wants NAME=V1,V2, not '$2'"
		# one axis per knob: a second would silently replace the first (issue 46)
		for k in "${knobs[@]}"; do
			[[ ${k%%=*} != "${2%%=*}" ]] || die "--knob ${2%%=*} given twice (one axis per knob)"
		done
		knobs+=("$2"); shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--run-args) run_args=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--series) series=1; shift ;;
	--out) out=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--ksmsim) ksmsim=$2; shift 2 ;;
	--slurm) slurm=1; shift ;;
	--submit) slurm=1 submit=1; shift ;;
	--cells-per-task) per=$2; shift 2 ;;
	--max-array-size) max=$2; shift 2 ;;
	--slurm-mem) mem=$2; shift 2 ;;
	--slurm-time) time=$2; shift 2 ;;
	--partition) partition=$2; shift 2 ;;
	--account) account=$2; shift 2 ;;
	--sbatch-args) sbatch_args=$2; shift 2 ;;
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

# A Slurm time or limit in seconds; nothing for no limit.
slurm_seconds() {
	local t=$1 d=0 h=0 m=0 s=0 f=()
	case ${t,,} in unlimited | infinite) return ;; esac
	if [[ $t == *-* ]]; then
		d=${t%%-*}
		IFS=: read -r h m s <<<"${t#*-}"
	else
		IFS=: read -r -a f <<<"$t"
		case ${#f[@]} in
		1) m=${f[0]} ;;
		2) m=${f[0]} s=${f[1]} ;;
		*) h=${f[0]} m=${f[1]} s=${f[2]} ;;
		esac
	fi
	echo $((((10#$d * 24 + 10#${h:-0}) * 60 + 10#${m:-0}) * 60 + 10#${s:-0}))
}

# With --slurm where a controller answers: its MaxArraySize, and the
# resources asked for by its own rules (sbatch --test-only), and the
# partition's MaxTime, which --test-only lets pass although a task over it
# waits in the queue forever.
check_slurm() {
	local site msg p lim s secs ok="" seen="" parts=()
	if ! site=$(site_max_array); then
		[[ -n $max ]] || max=1001
		say "no Slurm controller answers here (scontrol): MaxArraySize $max assumed, --slurm-* resources not checked"
		return 0
	fi
	[[ -z $max ]] || ((max <= site)) || max=$site
	[[ -n $max ]] || max=$site
	msg=$(sbatch --test-only --wrap=: --cpus-per-task=1 --mem="$mem" --time="$time" \
		${partition:+--partition="$partition"} ${account:+--account="$account"} "${sargs[@]}" 2>&1) ||
		die "sbatch --test-only refuses these resources: $(tail -1 <<<"$msg")"
	secs=$(slurm_seconds "$time")
	[[ -n $secs ]] || return 0
	if [[ -n $partition ]]; then
		IFS=, read -r -a parts <<<"$partition"
	else
		parts=("$(scontrol show partition -o | awk '/ Default=YES / { sub("PartitionName=", "", $1); print $1 }')")
	fi
	for p in "${parts[@]}"; do
		[[ -n $p ]] || continue
		lim=$(scontrol show partition -o "$p" 2>/dev/null | grep -o 'MaxTime=[^ ]*') || continue
		lim=${lim#MaxTime=}
		s=$(slurm_seconds "$lim")
		[[ -z $s ]] || ((secs <= s)) && ok=1
		seen+="${seen:+,} $p ($lim)"
	done
	[[ -n $ok || -z $seen ]] ||
		die "--slurm-time $time is over the MaxTime of partition${seen}: the tasks would wait in the queue forever (give --slurm-time or --partition)"
}

# Every value is checked before the first trace is generated, by asking
# ksmsim itself: one `ksmsim run` per value on a trace that is only a header.
check_dir=$(mktemp -d)
trap 'rm -rf "$check_dir"' EXIT
printf 'ksmtrace 1\n' >"$check_dir/empty.ksmt"
ask_run() { # OPTION-AS-GIVEN ARGS...
	local given=$1 msg
	shift
	msg=$("$ksmsim" run --quiet --trace "$check_dir/empty.ksmt" ${kernel:+--kernel "$kernel"} "$@" 2>&1 >/dev/null) ||
		die "$given: ${msg#ksmsim run: }"
}
[[ -z $kernel ]] || ask_run "--kernel $kernel"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "--jobs wants a positive number, not '$jobs'"
[[ $seed =~ ^[0-9]+$ ]] || die "--seed wants a decimal number, not '$seed'"
[[ $scale =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] || die "--scale wants a number, not '$scale'"
[[ $per =~ ^[1-9][0-9]*$ ]] || die "--cells-per-task wants a positive number, not '$per'"
[[ -z $max || $max =~ ^[1-9][0-9]*$ && $max -ge 2 ]] ||
	die "--max-array-size wants a number of 2 or more, not '$max'"
# the resources go into #SBATCH lines, which sbatch reads without a shell:
# plain values only
[[ $mem =~ ^[1-9][0-9]*[KMGT]?$ ]] || die "--slurm-mem wants a size such as 4G or 4096 (MB), not '$mem'"
[[ $time =~ ^(([0-9]+-)?[0-9]+(:[0-9]+){0,2}|[Uu][Nn][Ll][Ii][Mm][Ii][Tt][Ee][Dd]|[Ii][Nn][Ff][Ii][Nn][Ii][Tt][Ee])$ ]] ||
	die "--slurm-time wants a Slurm time (MINUTES, HH:MM:SS, DAYS-HH:MM:SS, ...), not '$time'"
[[ $partition =~ ^[A-Za-z0-9_.+,-]*$ ]] || die "--partition: '$partition' is not a partition name (or a comma list of them)"
[[ $account =~ ^[A-Za-z0-9_.+-]*$ ]] || die "--account: '$account' is not an account name"
case $sbatch_args in *[[:cntrl:]]*) die "--sbatch-args: a control character (tab, line break) in it" ;; esac
read -r -a sargs <<<"$sbatch_args"
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
# --kernel goes to every run as one of its arguments (checked with them below)
[[ -z $kernel ]] || run_args="--kernel $kernel${run_args:+ $run_args}"
# the user's words, split as the run will split them (never globbed)
run_args=${run_args//[[:space:]]/ }
read -r -a ra <<<"$run_args"
# (ask_run adds --kernel itself: ask without the copy folded in above)
((${#ra[@]} == 0)) || kernel= ask_run "--run-args '$run_args'" "${ra[@]}"
((slurm == 0)) || check_slurm
mkdir -p -- "$out" 2>/dev/null || die "--out $out: cannot make the folder"
out=$(cd -- "$out" && pwd)

# The traces: a workload's is generated once per (workload, scale, seed)
# into OUT/traces (kept: later sweeps reuse it), once the cells are known.
names=() paths=()
for w in "${workloads[@]}"; do
	names+=("$w") paths+=("$out/traces/$w-s$scale-n$seed.ksmt")
done
for t in "${traces[@]}"; do
	[[ -r $t && ! -d $t ]] || die "cannot read $t"
	b=$(basename "$t")
	n=${b%.gz}
	n=${n%.ksmt}
	n=${n%.ksmb}
	names+=("$n") paths+=("$(cd "$(dirname "$t")" && pwd)/$b")
done

# The cross product, one line per cell: id, trace, hash, run options (the
# swept ones, the policy, --run-args).
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
			a="$a${popt:+ $popt}${run_args:+ $run_args}"
			cells+=("$(printf '%s%s%s\t%s\t%s\t%s' "$id" "$pid" "$hid" "${paths[$i]}" "$h" "${a# }")")
		done
	done
done; done
# One sweep per OUT: another cell list would mix its cells with the ones
# done, and tasks still queued would run the new list's cells.
list=$(printf '%s\n' "${cells[@]}")
if [[ -e $out/cells.tsv && $(<"$out/cells.tsv") != "$list" ]]; then
	die "--out $out holds another sweep (its cells.tsv lists other cells or run options): give another --out, or remove $out/cells.tsv and $out/cells to start over there"
fi

mkdir -p "$out/traces" "$out/cells"
for i in "${!workloads[@]}"; do
	t=${paths[$i]} w=${workloads[$i]}
	if [[ ! -e $t ]]; then
		echo "sweep.sh: generating $w (scale $scale, seed $seed)" >&2
		"$ksmsim" gen "$w" --scale "$scale" --seed "$seed" -o "$t" || die "ksmsim gen $w failed"
	fi
done
printf '%s\n' "$list" >"$out/cells.tsv.tmp"
mv "$out/cells.tsv.tmp" "$out/cells.tsv"
if ((series)); then
	mkdir -p "$out/series"
	: >"$out/series.flag"
else
	rm -f "$out/series.flag"
fi
total=${#cells[@]}
todo=0
declare -A check_trace=()
while IFS=$'\t' read -r id t _; do
	[[ -e $out/cells/$id.csv ]] && continue
	todo=$((todo + 1))
	check_trace[$t]=1
done <"$out/cells.tsv"
# Every trace a cell still needs is read through now, not when its cells
# fail (on a cluster, after a wait in the queue).
for t in "${!check_trace[@]}"; do
	msg=$("$ksmsim" trace stat "$t" 2>&1 >/dev/null) || die "not a trace ksmsim reads: ${msg#ksmsim trace: }"
done

if ((slurm)); then
	# Every path is written shell-quoted (printf %q), so the scripts run
	# what they say whatever OUT and the paths hold (no control character:
	# refused above). #SBATCH lines, which sbatch reads without a shell,
	# hold only checked plain values; the log paths are sbatch's arguments
	# in submit.sh (with OUT's % doubled).
	name=$(basename -- "$out")
	name=${name//[^A-Za-z0-9._+-]/_}
	sbatch_lines() { # JOB-NAME
		printf '#SBATCH %s\n' "--job-name=$1" --cpus-per-task=1 "--mem=$mem" "--time=$time" \
			${partition:+"--partition=$partition"} ${account:+"--account=$account"}
	}
	qsub=$(printf %q "$out/submit.sh") qm=$(printf %q "$out/merge.sh")
	{
		printf '%s\n' '#!/bin/bash' '# SPDX-License-Identifier: GPL-2.0-or-later' \
			"# Written by analysis/sweep.sh: an array task of the sweep in $out" \
			"# (task I of a job runs cells of group OFFSET+I, $per a group). Queue the" \
			"# tasks with $qsub: it gives each job its --array, --output and OFFSET."
		sbatch_lines "$name"
		# shellcheck disable=SC2016  # expanded when the task runs
		printf 'exec %q --task %q %q %q "${1:-0}" "${SLURM_ARRAY_TASK_ID:-}" %q\n' \
			"$self" "$out" "$(cells_sum "$out")" "$per" "$ksmsim"
	} >"$out/sweep.sbatch"
	{
		printf '%s\n' '#!/bin/bash' '# SPDX-License-Identifier: GPL-2.0-or-later' \
			"# Written by analysis/sweep.sh: merge the finished cells into $out/sweep.csv" \
			"# (all done) or $out/sweep.partial.csv (some missing; exit 1). $qsub" \
			"# queues it after the array jobs; it runs by hand too."
		sbatch_lines "$name-merge"
		printf 'exec %q --merge --out %q\n' "$self" "$out"
	} >"$out/merge.sh"
	{
		printf '%s\n' '#!/bin/bash' '# SPDX-License-Identifier: GPL-2.0-or-later' \
			"# Written by analysis/sweep.sh: queue the cells of $out not done yet (each" \
			"# run: a resubmission queues only the missing ones) as array jobs, then" \
			"# $qm after them. Prints the job ids."
		printf 'exec %q --queue %q %q %q' "$self" "$out" "$per" "$max"
		((${#sargs[@]} == 0)) || printf ' %q' "${sargs[@]}"
		echo
	} >"$out/submit.sh"
	chmod +x "$out/sweep.sbatch" "$out/merge.sh" "$out/submit.sh"
	ntasks=0 desc=""
	while read -r o l n; do
		ntasks=$((ntasks + n)) desc+="${desc:+; }--array=$l"
		((o == 0)) || desc+=" from cell group $((o + 1))"
	done < <(plan "$out" "$per" "$max")
	say "$total cells, $todo to run in $ntasks tasks${desc:+ ($desc)}; queue them: $qsub"
	((submit == 0)) || exec "$out/submit.sh"
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
