#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Does tune's pick do live what the model says? The operator's four
# commands in a row, on any workload:
#   1. COPIES copies of COMMAND started through `ksmsim merge-exec` ({i} in
#      its words becomes the copy's number, 1..COPIES), then LOAD if given;
#   2. `ksmsim record --pid` of them for MINUTES, KSM off;
#   3. `ksmsim tune` on the trace (the pick, its band, its sysfs lines);
#   4. the copies started again the same way (RESTART=0: the same ones go
#      on), then `ksmsim verify` of the pick on them for MINUTES: live
#      pages_sharing and ksmd CPU every minute beside the model's.
#
#   sudo workloads/real/predict.sh -- memcached -u nobody -p '{port}' -m 1024
#   sudo WORKLOAD=redis workloads/real/predict.sh     # the Redis study
#   sudo WORKLOAD=numpy workloads/real/predict.sh     # the NumPy study
#
# Environment: COPIES (3), MINUTES (5), INTERVAL_MS (record's, 1000),
# MAX_CPU (record's --max-cpu, 50), BUDGET (tune's --cpu-budget, 5),
# WARMUP_S (start to attach / to KSM on, 3, counted after LOAD's fill),
# LOAD (a shell command run after the copies start, with PIDS, PORTS and
# LOADED in its environment; it may stay running, it is stopped with the
# copies; when it names LOADED, the script waits for it to create that
# file, the end of its fill), PORT_BASE (6390: {port} in COMMAND's words
# is PORT_BASE + the copy's number),
# RESTART (1), RESULTS (where everything goes; default a new directory
# from mktemp, never inside the checkout), KSMSIM (as common.sh),
# REUSE (0; 1: RESULTS already holds trace.ksmb and tune.csv of an
# earlier run of the same workload and options, which did not finish its
# live half: only step 4, the copies started afresh), WAIT_FOREIGN_S (0;
# before step 4, wait up to this many seconds while another process has
# memory KSM would merge, e.g. a QEMU guest with mem-merge=on: the
# machine's KSM would merge it too, and verify refuses to start beside
# it; exit 1 if it is still there).
# WORKLOAD=redis: Debian's redis-server on 127.0.0.1:6391.., no persistence,
# loaded and driven by redis_load.py (REDIS_KEYS 200000, REDIS_VALUE 512,
# REDIS_WRITES 100, REDIS_READS 400 a second each). WORKLOAD=numpy:
# workloads/vm/numpy_vm.py (N 8000000, SIZES "4000 4000").
# Exit 77 when not root or this kernel has no KSM or no
# PR_SET_MEMORY_MERGE. verify saves and restores every KSM knob; every
# process started here is stopped by PID on every exit path.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
ksm=/sys/kernel/mm/ksm
COPIES=${COPIES:-3}
MINUTES=${MINUTES:-5}
INTERVAL_MS=${INTERVAL_MS:-1000}
MAX_CPU=${MAX_CPU:-50}
BUDGET=${BUDGET:-5}
WARMUP_S=${WARMUP_S:-3}
RESTART=${RESTART:-1}
LOAD=${LOAD:-}
PORT_BASE=${PORT_BASE:-${REDIS_PORT:-6390}}
REUSE=${REUSE:-0}
WAIT_FOREIGN_S=${WAIT_FOREIGN_S:-0}
for v in COPIES MINUTES INTERVAL_MS MAX_CPU BUDGET WARMUP_S RESTART PORT_BASE REUSE WAIT_FOREIGN_S; do
	case ${!v} in
	'' | *[!0-9]* | 0?*) echo "$0: $v=${!v}: not a whole number" >&2; exit 2 ;;
	esac
done
[ "$COPIES" -ge 1 ] && [ "$MINUTES" -ge 1 ] && [ "$INTERVAL_MS" -ge 1 ] ||
	{ echo "$0: COPIES, MINUTES and INTERVAL_MS must be at least 1" >&2; exit 2; }
if [ "$REUSE" != 0 ]; then
	[ "$REUSE" = 1 ] && [ "$RESTART" = 1 ] && [ -n "${RESULTS:-}" ] &&
		[ -s "${RESULTS:-}/trace.ksmb" ] && [ -s "${RESULTS:-}/tune.csv" ] ||
		{ echo "$0: REUSE=1 needs RESTART=1 and RESULTS holding trace.ksmb and tune.csv (REUSE=$REUSE, RESULTS=${RESULTS:-unset})" >&2; exit 2; }
fi
[ "${1:-}" = -- ] && shift
case ${WORKLOAD:-} in
'') [ $# -gt 0 ] || { echo "usage: $0 -- COMMAND [ARG...]  (or WORKLOAD=redis|numpy $0)" >&2; exit 2; } ;;
redis)
	for v in REDIS_KEYS REDIS_VALUE REDIS_WRITES REDIS_READS; do
		case ${!v:-1} in
		'' | *[!0-9]* | 0?*) echo "$0: $v=${!v}: not a whole number" >&2; exit 2 ;;
		esac
	done
	[ "${REDIS_KEYS:-200000}" -ge 1 ] && [ "${REDIS_VALUE:-512}" -ge 64 ] &&
		[ $((PORT_BASE + COPIES)) -le 65535 ] ||
		{ echo "$0: WORKLOAD=redis needs REDIS_KEYS >= 1, REDIS_VALUE >= 64 and ports up to 65535 (REDIS_PORT + COPIES)" >&2; exit 2; }
	set -- redis-server --port '{port}' --bind 127.0.0.1 --save '' --appendonly no \
		--maxmemory 0 --daemonize no --logfile ''
	seconds_load=$((MINUTES * 60 * 2 + 600))
	LOAD=${LOAD:-"for p in \${PORTS//,/ }; do until redis-cli -p \$p ping > /dev/null 2>&1; do sleep 0.1; done; done; python3 '$top/workloads/real/redis_load.py' load \$PORTS ${REDIS_KEYS:-200000} ${REDIS_VALUE:-512} && touch \"\$LOADED\" && exec python3 '$top/workloads/real/redis_load.py' drive \$PORTS ${REDIS_KEYS:-200000} ${REDIS_VALUE:-512} ${REDIS_WRITES:-100} ${REDIS_READS:-400} $seconds_load"} ;;
numpy)
	# shellcheck disable=SC2086 # SIZES is a list
	set -- env OPENBLAS_NUM_THREADS=1 python3 "$top/workloads/vm/numpy_vm.py" "${N:-8000000}" ${SIZES:-4000 4000} ;;
*) echo "$0: WORKLOAD=$WORKLOAD: not redis or numpy (or give -- COMMAND)" >&2; exit 2 ;;
esac
if [ "$(id -u)" != 0 ]; then
	echo "$0: skipped: needs root (attaches to processes, owns KSM's knobs)" >&2
	exit 77
fi
[ -w "$ksm/run" ] || { echo "$0: skipped: no KSM here ($ksm)" >&2; exit 77; }
. "$top/workloads/real/common.sh"
case ${WORKLOAD:-} in
redis) need redis-server redis-tools ;;
numpy) need python3-numpy ;;
esac
"$KSMSIM" merge-exec -- true 2> /dev/null ||
	{ echo "$0: skipped: no prctl(PR_SET_MEMORY_MERGE) (Linux 6.6+)" >&2; exit 77; }
RESULTS=${RESULTS:-$(mktemp -d /tmp/ksmsim-predict.XXXXXX)}
mkdir -p "$RESULTS"
step() { echo "[$(date -u +%H:%M:%S)] $*"; }

pids='' load_pid=''
stop_copies() {
	for p in $load_pid $pids; do kill -TERM "$p" 2> /dev/null || true; done
	for p in $load_pid $pids; do wait "$p" 2> /dev/null || true; done
	pids='' load_pid=''
}
# shellcheck disable=SC2154 # rc is the trap's own
trap 'rc=$?; trap - EXIT; stop_copies; exit "$rc"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# start_copies TAG: the copies through merge-exec, their PIDs in pids; LOAD after
start_copies() {
	local i w ports=
	for i in $(seq "$COPIES"); do
		local argv=()
		for w in "$@"; do
			w=${w//\{i\}/$i}
			argv+=("${w//\{port\}/$((PORT_BASE + i))}")
		done
		"$KSMSIM" merge-exec -- "${argv[@]}" > "$RESULTS/copy$i-$run_tag.log" 2>&1 &
		pids="$pids $!"
		ports="$ports,$((PORT_BASE + i))"
	done
	sleep 1
	for p in $pids; do
		kill -0 "$p" 2> /dev/null || { echo "$0: a copy exited at once: $(tail -2 "$RESULTS"/copy*-"$run_tag".log)" >&2; exit 1; }
	done
	if [ -n "$LOAD" ]; then
		local loaded=$RESULTS/loaded-$run_tag
		rm -f "$loaded"
		step "load ($run_tag run)"
		PIDS=$(echo $pids | tr ' ' ,) PORTS=${ports#,} LOADED=$loaded bash -c "$LOAD" \
			> "$RESULTS/load-$run_tag.log" 2>&1 &
		load_pid=$!
		case $LOAD in
		*LOADED*)
			until [ -e "$loaded" ]; do
				kill -0 "$load_pid" 2> /dev/null ||
					{ echo "$0: LOAD ended before its fill: $(tail -2 "$RESULTS/load-$run_tag.log")" >&2; exit 1; }
				sleep 1
			done ;;
		esac
	fi
	sleep "$WARMUP_S"
}

# foreign_mergeable: the first process other than the copies whose memory
# KSM would merge, as "PID (COMM)"; false when there is none
foreign_mergeable() {
	local s p
	for s in /proc/[0-9]*/ksm_stat; do
		p=${s#/proc/} && p=${p%/ksm_stat}
		case " $pids " in *" $p "*) continue ;; esac
		grep -qE 'ksm_mergeable: yes|ksm_merge_any: yes' "$s" 2> /dev/null || continue
		echo "$p ($(cat "/proc/$p/comm" 2> /dev/null))"
		return 0
	done
	return 1
}

run_tag=record
step "results in $RESULTS"
if [ "$REUSE" = 1 ]; then
	step "1-3/4 reused: $RESULTS/trace.ksmb and tune.csv, recorded and tuned earlier"
else
	step "1/4 start: $COPIES x $* (through ksmsim merge-exec)"
	echo 0 > "$ksm/run" 2> /dev/null || true
	start_copies "$@"
	plist=$(echo $pids | tr ' ' ,)
	step "2/4 record --pid $plist for $MINUTES min (KSM off)"
	"$KSMSIM" record --pid "$plist" --content digest --interval-ms "$INTERVAL_MS" --max-cpu "$MAX_CPU" \
		--max-seconds $((MINUTES * 60)) --progress -o "$RESULTS/trace.ksmb"
	"$KSMSIM" trace stat "$RESULTS/trace.ksmb" > "$RESULTS/trace-stat.txt"
	step "3/4 tune (the model under each setting; one line per setting with an ETA)"
	nice -n 19 "$KSMSIM" tune "$RESULTS/trace.ksmb" --cpu-budget "$BUDGET" -o "$RESULTS/tune.csv" \
		--plot "$RESULTS/tune.png" > "$RESULTS/tune.txt" 2> >(tee "$RESULTS/tune.err" >&2)
fi
sed -n '/^Recommended/,$p' "$RESULTS/tune.txt"
spec=$(python3 - "$RESULTS/tune.csv" <<'EOF'
import csv, sys
r = [r for r in csv.DictReader(open(sys.argv[1])) if r["recommended"] == "1"][0]
k = ("advisor=1,advisor_target_scan_time=%s" % r["advisor_target_scan_time"]
     if r["advisor_mode"] == "scan-time" else "pages_to_scan=%s" % r["pages_to_scan"])
print("%s,sleep_millisecs=%s,smart_scan=%s,use_zero_pages=%s,max_page_sharing=%s" % (
    k, r["sleep_millisecs"], r["smart_scan"], r["use_zero_pages"], r["max_page_sharing"]))
EOF
)
if [ "$RESTART" = 1 ]; then
	stop_copies
	waited=0
	while [ "$WAIT_FOREIGN_S" -gt 0 ] && f=$(foreign_mergeable); do
		[ "$waited" -lt "$WAIT_FOREIGN_S" ] ||
			{ echo "$0: KSM still in use by pid $f after $WAIT_FOREIGN_S s" >&2; exit 1; }
		[ "$waited" != 0 ] || step "waiting for pid $f to end: KSM would merge it too (up to $WAIT_FOREIGN_S s)"
		sleep 10
		waited=$((waited + 10))
	done
	run_tag=verify
	step "4/4 the copies started again the same way, then verify $spec for $MINUTES min"
	start_copies "$@"
	plist=$(echo $pids | tr ' ' ,)
else
	step "4/4 verify $spec on the same copies for $MINUTES min"
fi
"$KSMSIM" verify --trace "$RESULTS/trace.ksmb" --setting "$spec" --pid "$plist" \
	--minutes "$MINUTES" --csv "$RESULTS/verify.csv" | tee "$RESULTS/verify.txt"
# tee's status is the pipeline's: a verify that refused must not make a README
vrc=${PIPESTATUS[0]}
[ "$vrc" = 0 ] || { echo "$0: verify failed (exit $vrc)" >&2; exit "$vrc"; }
stop_copies
{
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
	echo "kernel=$(uname -r)"
	echo "ksmsim=$("$KSMSIM" --version)"
	echo "workload=$COPIES x $*"
	echo "load=$LOAD"
	echo "minutes=$MINUTES interval_ms=$INTERVAL_MS max_cpu=$MAX_CPU budget=$BUDGET warmup_s=$WARMUP_S restart=$RESTART reuse=$REUSE"
	echo "setting=$spec"
} > "$RESULTS/run.env"
# README.md: what ran and the minute table, from the files above
{
	echo "# predict.sh: $COPIES x $*"
	echo
	echo "Made by \`workloads/real/predict.sh\` ($(sed -n 's/^date=//p' "$RESULTS/run.env"), $(sed -n 's/^cpu=//p' "$RESULTS/run.env"), Linux $(uname -r), $("$KSMSIM" --version))."
	echo "Load: \`${LOAD:-none}\`."
	echo "Record: $MINUTES min, --interval-ms $INTERVAL_MS; tune's pick (budget $BUDGET%): \`$spec\`."
	echo "The copies were $( [ "$RESTART" = 1 ] && echo "started again the same way" || echo "kept running") for verify."
	echo
	echo "| t_s | live pages_sharing | model | ratio | live ksmd CPU ms | model | ratio |"
	echo "|---|---|---|---|---|---|---|"
	tail -n +2 "$RESULTS/verify.csv" | awk -F, '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $7, $8, $9 }'
	echo
	echo "Files: trace-stat.txt, tune.txt, tune.csv, tune.png, verify.txt, verify.csv, run.env."
} > "$RESULTS/README.md"
step "done: $RESULTS (README.md, trace.ksmb, tune.txt/csv/png, verify.txt/csv, run.env)"
