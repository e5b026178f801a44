#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The model's speed and memory, measured and written as one CSV (issue 32):
# README's "Performance" table is bench/perf_report.py's rendering of it.
#
# usage: bench/perf.sh [KSMSIM] [--base OLD_KSMSIM] [--runs N] [-o FILE]
#                      [--work DIR] [--quick] [--big] [--tune]
#
# Measurements, each RUNS times with the binary (KSMSIM, else $KSMSIM,
# else build/cli/ksmsim) and, with --base, as often with the old binary,
# the two alternating (new first in odd runs, base first in even ones):
#   model-job1   `ksmsim bench model --mib 1024 --skip-big`: 1 GiB of
#                distinct pages in 2 mms, 8 scans (visits/s in steady state)
#   model-job2   `bench model --mib 1 --vm-mib 4096 --host-gib 0`: 4 guests
#                x 4 GiB of mixed pages, 10 scans (job 1 at 256 pages first:
#                bench model cannot skip it)
#   model-job3a, model-job3b   only with --big: `bench model --host-gib 256`
#                (a 64 Mi-page host, job 2's mix and every page distinct;
#                ~12 GiB: skipped with a message when MemAvailable is short)
#   e2e-kernel-build, e2e-kernel-build-no-ideal, e2e-number-crunching
#                `ksmsim gen WORKLOAD` (4 guests x 4 GiB, 1800 s, seed 1,
#                made once by KSMSIM) replayed as analysis/reproduce_2017.sh
#                replays it: `ksmsim run --batch-time --hash xxhash
#                --pages-to-scan 1600 --sleep-millisecs 200 --csv
#                --interval-ms 1000 --summary-csv` (and --no-ideal)
#   tune-grid    only with --tune: `ksmsim tune --jobs 2` over its default
#                grid of 24 settings on bench/tune_speed.sh's host (`gen
#                vm-clones --vms 16 --mem-mib 4096`, 64 GiB; about 12
#                minutes a run on 2 cores, 1.6 GiB a worker)
# --quick shrinks every size (job 1 16 MiB, job 2 4 x 16 MiB, job 3 1 GiB,
# traces --scale 0.02, tune's host 1 x 8 MiB for 20 s) so that the whole run takes seconds (for the test).
#
# One CSV row per measurement, build and run (columns: bench/perf_report.py):
# the date (UTC), the CPU model, nproc and the 1-minute load average when
# the run started, the binary's tree (`git describe --always --dirty`, or
# "unknown"), wall_s, cpu_s (user + system) and peak_rss_mib of the process
# (GNU time, /usr/bin/time), and bench model's own visits_per_s,
# bytes_per_page (its peak RSS, or job 1's RSS after, per simulated page)
# and model_bytes_per_page (its structures' total per page). Job 3's two
# variants run in one process: their wall_s and peak_rss_mib are the ones
# bench model prints for each, their cpu_s is left empty. e2e and tune
# rows say in outputs_identical whether their output files (series and
# summary; tune's CSV) are byte-identical to the first new run's (the reference itself: yes); a "no" is warned about.
#   KSMSIM       the build measured ("new"; default $KSMSIM, else
#                build/cli/ksmsim)
#   --base OLD   also measure OLD ("base"), alternating with KSMSIM
#   --runs N     runs of each measurement and build (default 2)
#   -o FILE      the CSV (default bench/results/perf-CPU.csv, CPU the
#                model name of /proc/cpuinfo as a slug, as sim/MODEL.md's
#                calibrate command makes it); written whole or not at all
#   --work DIR   keep the traces and outputs in DIR (default: a temporary
#                directory, removed at exit); a trace already there (same
#                workload and scale) is used again
#   --quick      the small sizes above
#   --big        job 3 as well (about 10 minutes a run, ~12 GiB)
#   --tune       tune-grid as well (about 12 minutes a run)
# Render it: bench/perf_report.py FILE (bench/results/PERFORMANCE.md).
# Progress on standard error. Exit 2 on a bad option, 1 when a measurement
# fails or bench model's output is not as expected.
set -euo pipefail

usage() { sed -n '4,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }
die() { echo "perf.sh: $*" >&2; exit 2; }
fail() { echo "perf.sh: $*" >&2; exit 1; }
say() { echo "perf.sh: $*" >&2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
invocation="bench/perf.sh${*:+ $*}"
new=${KSMSIM:-$here/../build/cli/ksmsim}
if [[ $# -gt 0 && $1 != -* ]]; then new=$1; shift; fi
base="" runs=2 out="" work="" quick=0 big=0 tune=0
need() { (($# >= 2)) || die "$1 needs a value"; }
while (($#)); do
	case $1 in
	--base) need "$@"; base=$2; shift 2 ;;
	--runs) need "$@"; runs=$2; shift 2 ;;
	-o | --output) need "$@"; out=$2; shift 2 ;;
	--work) need "$@"; work=$2; shift 2 ;;
	--quick) quick=1; shift ;;
	--big) big=1; shift ;;
	--tune) tune=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown option '$1' (bench/perf.sh --help lists them)" ;;
	esac
done
[[ $runs =~ ^[1-9][0-9]{0,2}$ ]] || die "--runs wants a whole number from 1 to 999, not '$runs'"
[[ -x $new && -f $new ]] || die "$new is not an executable (build ksmsim, or pass KSMSIM)"
[[ -z $base || (-x $base && -f $base) ]] || die "--base $base is not an executable"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is needed (Debian package time)"

cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n1)
cpu=${cpu:-unknown}
# shellcheck disable=SC2018,SC2019  # the slug exactly as sim/MODEL.md's calibrate command makes it
slug=$(printf '%s\n' "$cpu" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '-' | sed 's/-$//')
out=${out:-$here/results/perf-$slug.csv}
mkdir -p "$(dirname "$out")" 2>/dev/null || die "-o $out: cannot make its directory"
[[ -d $(dirname "$out") && -w $(dirname "$out") ]] || die "-o $out: its directory is not writable"
if [[ -n $work ]]; then
	mkdir -p "$work" 2>/dev/null || die "--work $work: cannot make it"
	work=$(cd "$work" && pwd)
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
nproc=$(nproc)

# The tree a binary was built from, or "unknown".
commit_of() {
	local d
	d=$(cd "$(dirname "$1")" && pwd)
	git -C "$d" describe --always --dirty 2>/dev/null || echo unknown
}
commit_new=$(commit_of "$new")
commit_base=""
[[ -n $base ]] && commit_base=$(commit_of "$base")

# Sizes: full, or --quick's.
if ((quick)); then
	j1_mib=16 j2_vm_mib=16 j3_host_gib=1 scale=0.02 tune_vms=1 tune_mib=8 tune_s=20
else
	j1_mib=1024 j2_vm_mib=4096 j3_host_gib=256 scale=1 tune_vms=16 tune_mib=4096 tune_s=""
fi

# A CSV field: quoted when it holds a comma, a quote or a space.
field() {
	local s=$1
	if [[ $s == *[,\"\ ]* ]]; then s=${s//\"/\"\"}; s="\"$s\""; fi
	printf '%s' "$s"
}
csv="$work/perf.csv.part"
echo "date_utc,cpu_model,nproc,load_avg_1m,commit,build,measurement,run,wall_s,cpu_s,peak_rss_mib,visits_per_s,bytes_per_page,model_bytes_per_page,outputs_identical,command,invocation" >"$csv"
row() { # BUILD MEASUREMENT RUN WALL CPU RSS VPS BPP MBPP IDENTICAL COMMAND (date/load: $row_date/$row_load)
	local c=$commit_new
	[[ $1 == base ]] && c=$commit_base
	{
		printf '%s,%s,%s,%s,%s' "$row_date" "$(field "$cpu")" "$nproc" "$row_load" "$(field "$c")"
		local f
		for f in "$@"; do printf ',%s' "$(field "$f")"; done
		printf ',%s\n' "$(field "$invocation")"
	} >>"$csv"
}

# measure TIMES STDOUT CMD...: runs CMD (standard output to STDOUT) and
# writes "wall_s cpu_s peak_rss_mib" of it to TIMES; fails as CMD does.
# GNU time waits for CMD with wait4: its own rusage, not this shell's.
measure() {
	local times=$1 stdout=$2
	shift 2
	/usr/bin/time -f '%e %U %S %M' -o "$times.raw" "$@" >"$stdout" || return 1
	awk '{ printf "%.2f %.2f %.1f\n", $1, $2 + $3, $4 / 1024 }' "$times.raw" >"$times"
}

# bench_figure OUT JOB FIGURE: one figure of one job from bench model's
# output (JOB 1, 2, 3a, 3b; FIGURE wall, vps, peak, bpp, mbpp); fails
# loudly when the line is not there or not a number.
bench_figure() {
	local v
	v=$(awk -v job="$2" -v what="$3" '
		/^job [0-9a-z]+:/ { cur = $2; sub(":", "", cur); next }
		cur != job { next }
		what == "wall" && /^  wall time / { print $3; exit }
		what == "vps" && /^  visits per second / { print $4; exit }
		what == "peak" && /^  peak RSS / { print $3; exit }
		what == "bpp" && /^  bytes per page / { print $4; exit }
		what == "bpp" && /^  RSS after .* bytes per simulated page/ {
			for (i = 1; i <= NF; i++) if ($i == "bytes") { print $(i - 1); exit } }
		what == "mbpp" && /^    model total / {
			for (i = 1; i <= NF; i++) if ($i == "B/page") { print $(i - 1); exit } }' "$1")
	local label
	case $3 in
	wall) label="wall time" ;; vps) label="visits per second" ;; peak) label="peak RSS" ;;
	bpp) label="bytes per page" ;; *) label="model total B/page" ;;
	esac
	[[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
		fail "bench model's output ($1) has no '$label' figure for job $2 (got '$v'): has its format changed?"
	printf '%s' "$v"
}

# The builds in the order of run R: new first in odd runs, base first in even ones.
order() {
	if [[ -z $base ]]; then echo new
	elif (($1 % 2)); then echo new base
	else echo base new
	fi
}
bin_of() { if [[ $1 == new ]]; then echo "$new"; else echo "$base"; fi; }
start_row() {
	row_date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	row_load=$(cut -d' ' -f1 /proc/loadavg)
}

# model MEASUREMENT JOB ARGS...: a bench model job, every run and build.
model() {
	local m=$1 job=$2 r b t o jw jp vps bpp mbpp wall cpus rss
	shift 2
	for r in $(seq "$runs"); do
		for b in $(order "$r"); do
			start_row
			say "$m: $b run $r/$runs: ksmsim bench model $*"
			measure "$work/times" "$work/$m-$b-$r.out" "$(bin_of "$b")" bench model "$@" ||
				fail "$m: $b run $r: ksmsim bench model $* failed"
			read -r wall cpus rss <"$work/times"
			o="$work/$m-$b-$r.out"
			if [[ $job == 3 ]]; then
				for t in 3a 3b; do
					# separate assignments: a failing figure stops the script
					jw=$(bench_figure "$o" "$t" wall)
					jp=$(bench_figure "$o" "$t" peak)
					vps=$(bench_figure "$o" "$t" vps)
					bpp=$(bench_figure "$o" "$t" bpp)
					mbpp=$(bench_figure "$o" "$t" mbpp)
					row "$b" "model-job$t" "$r" "$jw" "" "$jp" "$vps" "$bpp" "$mbpp" "" "ksmsim bench model $*"
				done
			else
				vps=$(bench_figure "$o" "$job" vps)
				bpp=$(bench_figure "$o" "$job" bpp)
				mbpp=$(bench_figure "$o" "$job" mbpp)
				row "$b" "$m" "$r" "$wall" "$cpus" "$rss" "$vps" "$bpp" "$mbpp" "" "ksmsim bench model $*"
			fi
			say "$m: $b run $r/$runs: ${wall} s wall, ${cpus} s CPU, peak RSS ${rss} MiB"
		done
	done
}

# gen_trace NAME GEN-ARGS...: $work/NAME.ksmb made once by KSMSIM (ksmsim
# gen GEN-ARGS), its path in $trace.
gen_trace() {
	local name=$1
	shift
	trace="$work/$name.ksmb"
	[[ -e $trace ]] && return 0
	say "ksmsim gen $*"
	"$new" gen "$@" --quiet -o "$trace.tmp.ksmb" || fail "ksmsim gen $* failed"
	mv "$trace.tmp.ksmb" "$trace"
}

# replay MEASUREMENT SHOWN "FILE..." ARG...: `ksmsim ARG...` every run and
# build, each in a directory of its own, which an ARG names as {out}; the
# FILEs it writes there must be byte-identical to the first new run's.
different=0
replay() {
	local m=$1 shown=$2 files=$3 r b d f a ref="" same wall cpus rss
	shift 3
	local args=()
	for r in $(seq "$runs"); do
		for b in $(order "$r"); do
			d="$work/out/$m-$b-$r"
			mkdir -p "$d"
			args=()
			for a in "$@"; do args+=("${a//\{out\}/$d}"); done
			start_row
			say "$m: $b run $r/$runs"
			measure "$work/times" "$d/stdout" "$(bin_of "$b")" "${args[@]}" ||
				fail "$m: $b run $r: ksmsim ${args[*]} failed"
			read -r wall cpus rss <"$work/times"
			same=yes
			for f in $files; do
				[[ -s $d/$f ]] || fail "$m: $b run $r wrote no $f"
				if [[ -n $ref ]] && ! cmp -s "$ref/$f" "$d/$f"; then
					same=no different=1
					say "WARNING: $m: $b run $r's $f differs from $(basename "$ref")'s"
				fi
			done
			[[ -n $ref ]] || ref=$d
			row "$b" "$m" "$r" "$wall" "$cpus" "$rss" "" "" "" "$same" "$shown"
			say "$m: $b run $r/$runs: ${wall} s wall, ${cpus} s CPU, peak RSS ${rss} MiB, outputs identical: $same"
		done
	done
}

# e2e MEASUREMENT WORKLOAD [RUN-OPTION...]: a 2017 run as
# analysis/reproduce_2017.sh makes it.
e2e() {
	local m=$1 w=$2
	shift 2
	gen_trace "$w-s$scale" "$w" --scale "$scale" --seed 1
	replay "$m" "ksmsim gen $w --scale $scale --seed 1; ksmsim run --batch-time --hash xxhash --pages-to-scan 1600 --sleep-millisecs 200 --csv --interval-ms 1000 --summary-csv${*:+ $*}" \
		"series.csv summary.csv" run --quiet --batch-time --trace "$trace" --trace-label "$w" \
		--hash xxhash --pages-to-scan 1600 --sleep-millisecs 200 --interval-ms 1000 "$@" \
		--csv "{out}/series.csv" --summary-csv "{out}/summary.csv"
}

say "$cpu, $nproc CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); new $new ($commit_new)${base:+, base $base ($commit_base)}; $runs run(s) each; work in $work"
model model-job1 1 --mib "$j1_mib" --skip-big
model model-job2 2 --mib 1 --vm-mib "$j2_vm_mib" --host-gib 0
if ((big)); then
	# ~180 bytes a simulated page (sim/MODEL.md, "Sizing a run"), with room
	need_mib=$((j3_host_gib * 262144 * 200 / 1048576))
	avail_mib=$(($(sed -n 's/^MemAvailable: *\([0-9]*\) kB/\1/p' /proc/meminfo) / 1024))
	if ((avail_mib < need_mib)); then
		say "model-job3: skipped: a ${j3_host_gib} GiB host needs about $need_mib MiB, MemAvailable is $avail_mib MiB"
	else
		model model-job3 3 --mib 1 --vm-mib 1 --host-gib "$j3_host_gib"
	fi
fi
e2e e2e-kernel-build kernel-build
e2e e2e-kernel-build-no-ideal kernel-build --no-ideal
e2e e2e-number-crunching number-crunching
if ((tune)); then
	# bench/tune_speed.sh's host: the target is 15 minutes for it on 2 cores
	gen_trace "vm-clones-$tune_vms" vm-clones --vms "$tune_vms" --mem-mib "$tune_mib" \
		--seed 1 ${tune_s:+--duration-s "$tune_s"}
	replay tune-grid "ksmsim gen vm-clones --vms $tune_vms --mem-mib $tune_mib --seed 1${tune_s:+ --duration-s $tune_s}; ksmsim tune --jobs 2 -o CSV" \
		tune.csv tune "$trace" --jobs 2 --quiet -o "{out}/tune.csv"
fi
cp "$csv" "$out.tmp" && mv "$out.tmp" "$out"
say "wrote $out"
((different == 0)) || say "WARNING: some outputs differ (outputs_identical no): see $out"
