#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Prove tune's prediction on the live kernel: run COPIES copies of a real
# workload, record them by attaching (KSM off), run 'ksmsim tune' on the
# trace, replay the trace through the model at the recommended setting, then
# run the same workload again, started the same way, with the live KSM at
# that setting, and compare pages_sharing and ksmd's CPU at every mark (one a
# minute). WORKLOAD picks the copies:
#   numpy  workloads/vm/numpy_vm.py with large matrices, so that each runs
#          for minutes; it rewrites its matrices in phases.
#   redis  redis-server (Debian's redis-server), each on its own port of
#          127.0.0.1 from REDIS_PORT + 1 on, no persistence, no maxmemory;
#          each is loaded with the same REDIS_KEYS keys of REDIS_VALUE-byte
#          record-like values, then driven by workloads/real/redis_load.py
#          at a fixed REDIS_WRITES SETs and REDIS_READS GETs a second each,
#          the same requests in the same order in both runs: a steady
#          service host (identical value pages, pointer-bearing dict pages).
#
#   sudo workloads/real/predict.sh                  # the whole study, NumPy
#   sudo WORKLOAD=redis workloads/real/predict.sh   # the whole study, Redis
#   workloads/real/predict.sh report DIR            # README.md and plot from DIR's CSVs
#
# Environment: WORKLOAD (numpy), COPIES (3), MINUTES (6), INTERVAL_MS
# (record's, 2000), WARMUP_S (from start to attach / to KSM on, 3; for redis
# counted after the load), BUDGET (tune's --cpu-budget, 5), MAX_CPU (record's
# --max-cpu, 50), RESULTS (analysis/results/predict, for redis
# analysis/results/predict-redis), KSMSIM, OUT, WORK (as common.sh).
# numpy: SIZES (matrix sizes, "4000 4000"), N (STREAM doubles, 8000000).
# redis: REDIS_KEYS (200000), REDIS_VALUE (512), REDIS_WRITES (100),
# REDIS_READS (400), REDIS_PORT (6390).
# It takes about 2 x MINUTES + 4 min (tune and the model run in between);
# each NumPy copy holds up to about 500 MiB, each Redis copy about 150 MiB
# with the defaults. The copies (and the Redis load) run at nice 0 (they are
# the workload), the recorder at nice 5 (ksmd's), tune and run at nice 19.
# Exit 77 when not root, when this kernel has no KSM or no
# prctl(PR_SET_MEMORY_MERGE); every KSM knob it touches is saved first and
# restored on every exit path; every process it started is stopped by PID.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
WORKLOAD=${WORKLOAD:-numpy}
case $WORKLOAD in
numpy) results_rel=analysis/results/predict trace_name=predict.ksmb ;;
redis) results_rel=analysis/results/predict-redis trace_name=predict-redis.ksmb ;;
*) echo "$0: WORKLOAD=$WORKLOAD: not numpy or redis" >&2; exit 2 ;;
esac
RESULTS=${RESULTS:-$top/$results_rel}
ksm=/sys/kernel/mm/ksm
py=/usr/bin/python3

# ---- report: README.md and the plot from the CSVs in DIR ----------------
report() {
	dir=$1
	csv=$dir/minutes.csv
	[ -r "$csv" ] || { echo "$0: no $csv" >&2; exit 2; }
	gnuplot -e "csv='$csv'; out='$dir/predict.png'" "$top/workloads/real/predict.gp"
	"$py" "$top/workloads/real/predict_report.py" "$dir" > "$dir/README.md.tmp"
	mv "$dir/README.md.tmp" "$dir/README.md"
	echo "wrote $dir/README.md and $dir/predict.png"
}
if [ "${1:-}" = report ]; then
	report "${2:-$RESULTS}"
	exit 0
fi

COPIES=${COPIES:-3}
SIZES=${SIZES:-4000 4000}
N=${N:-8000000}
REDIS_KEYS=${REDIS_KEYS:-200000}
REDIS_VALUE=${REDIS_VALUE:-512}
REDIS_WRITES=${REDIS_WRITES:-100}
REDIS_READS=${REDIS_READS:-400}
REDIS_PORT=${REDIS_PORT:-6390}
MINUTES=${MINUTES:-6}
INTERVAL_MS=${INTERVAL_MS:-2000}
WARMUP_S=${WARMUP_S:-3}
BUDGET=${BUDGET:-5}
MAX_CPU=${MAX_CPU:-50}
for v in COPIES MINUTES INTERVAL_MS WARMUP_S BUDGET MAX_CPU N REDIS_KEYS REDIS_VALUE \
	REDIS_WRITES REDIS_READS REDIS_PORT; do
	case ${!v} in
	'' | *[!0-9]* | 0?*) echo "$0: $v=${!v}: not a whole number" >&2; exit 2 ;;
	esac
done
if [ "$WORKLOAD" = redis ] && { [ "$COPIES" -lt 1 ] || [ "$REDIS_KEYS" -lt 1 ] ||
	[ "$REDIS_VALUE" -lt 64 ] || [ $((REDIS_PORT + COPIES)) -gt 65535 ]; }; then
	echo "$0: WORKLOAD=redis needs COPIES >= 1, REDIS_KEYS >= 1, REDIS_VALUE >= 64 and ports up to 65535" >&2
	exit 2
fi
if [ "$INTERVAL_MS" -lt 1 ]; then
	echo "$0: INTERVAL_MS=$INTERVAL_MS: not a positive number" >&2
	exit 2
fi
seconds=$((MINUTES * 60))
mark_every=$((60000 / INTERVAL_MS))

if [ "$(id -u)" != 0 ]; then
	echo "$0: skipped: needs root (attaches to processes, owns KSM's knobs)" >&2
	exit 77
fi
if [ ! -w "$ksm/run" ] || [ ! -r "$ksm/pages_sharing" ]; then
	echo "$0: skipped: no KSM here ($ksm)" >&2
	exit 77
fi
. "$top/workloads/real/common.sh"
case $WORKLOAD in
numpy) need python3-numpy gnuplot-nox ;;
redis) need redis-server redis-tools gnuplot-nox ;;
esac
trace=$OUT/$trace_name
mkdir -p "$RESULTS"
case $WORKLOAD in
numpy)
	workload=$top/workloads/vm/numpy_vm.py
	describe="$COPIES x numpy_vm.py $N $SIZES" ;;
redis)
	redis_load=$top/workloads/real/redis_load.py
	redis_dir=$WORK/predict-redis
	describe="$COPIES x redis-server $(redis-server --version | awk '{ print $3 }' | sed 's/v=//') ($REDIS_KEYS keys of $REDIS_VALUE-byte values, then $REDIS_WRITES SET and $REDIS_READS GET a second each)" ;;
esac

# The launcher: prctl(PR_SET_MEMORY_MERGE, 1) (67; inherited across fork and
# exec since Linux 6.6), then exec the workload, so that KSM scans every
# anonymous private writable mapping, what record's --scope all captures.
# Both runs start the workload through it; while recording, KSM is off.
launcher='import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(67, 1, 0, 0, 0) != 0:
    sys.exit("prctl(PR_SET_MEMORY_MERGE): %s" % os.strerror(ctypes.get_errno()))
os.execv(sys.argv[1], sys.argv[1:])'
if ! "$py" -c "$launcher" /bin/true; then
	echo "$0: skipped: no prctl(PR_SET_MEMORY_MERGE) (Linux 6.6+)" >&2
	exit 77
fi

# ---- KSM knobs: saved now, restored on every exit path ------------------
knobs="advisor_mode advisor_target_scan_time pages_to_scan sleep_millisecs smart_scan use_zero_pages max_page_sharing"
knob_get() { # advisor_mode reads "[none] scan-time"
	sed -e 's/.*\[\(.*\)\].*/\1/' "$ksm/$1"
}
saved_run=$(cat "$ksm/run")
declare -A saved
for k in $knobs; do
	if [ -e "$ksm/$k" ]; then saved[$k]=$(knob_get "$k"); fi
done
pids=
rec_pid=
prog_pid=
drv_pid=
restore() {
	rc=$?
	trap - EXIT INT TERM HUP
	for p in $drv_pid $pids $rec_pid $prog_pid; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in $drv_pid $pids $rec_pid $prog_pid; do
		wait "$p" 2>/dev/null || true
	done
	if [ "$(cat "$ksm/run")" != "$saved_run" ]; then
		echo 2 > "$ksm/run" || true # unmerge everything first
	fi
	for k in $knobs; do
		[ -n "${saved[$k]+set}" ] || continue
		[ "$(knob_get "$k")" = "${saved[$k]}" ] || echo "${saved[$k]}" > "$ksm/$k" || true
	done
	echo "$saved_run" > "$ksm/run" || true
	exit "$rc"
}
trap restore EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# start_copies: the copies started, their PIDs in pids (what record attaches
# to and progress sums); for redis also loaded, and the load driver running
# (drv_pid). stop_copies: all of them stopped, by PID.
start_copies() {
	pids=
	case $WORKLOAD in
	numpy)
		for i in $(seq "$COPIES"); do
			# shellcheck disable=SC2086 # SIZES is a list
			OPENBLAS_NUM_THREADS=1 "$py" -c "$launcher" "$py" "$workload" "$N" $SIZES \
				> "$WORK/predict-copy$i.log" 2>&1 &
			pids="$pids $!"
		done ;;
	redis) start_redis ;;
	esac
}
start_redis() {
	local i port ports='' tries
	for i in $(seq "$COPIES"); do
		port=$((REDIS_PORT + i))
		if redis-cli -p "$port" ping > /dev/null 2>&1; then
			echo "$0: 127.0.0.1:$port already answers (REDIS_PORT=$REDIS_PORT): not starting a copy there" >&2
			exit 1
		fi
		rm -rf "${redis_dir:?}/$i"
		mkdir -p "$redis_dir/$i"
		"$py" -c "$launcher" /usr/bin/redis-server --port "$port" --bind 127.0.0.1 \
			--save '' --appendonly no --maxmemory 0 --dir "$redis_dir/$i" \
			--daemonize no --logfile '' > "$WORK/predict-copy$i.log" 2>&1 &
		pids="$pids $!"
		ports="$ports,$port"
	done
	ports=${ports#,}
	for port in ${ports//,/ }; do
		tries=0
		until redis-cli -p "$port" ping > /dev/null 2>&1; do
			tries=$((tries + 1))
			if [ "$tries" -gt 100 ]; then
				echo "$0: redis-server on port $port did not answer in 10 s ($WORK/predict-copy*.log)" >&2
				exit 1
			fi
			sleep 0.1
		done
	done
	"$py" "$redis_load" load "$ports" "$REDIS_KEYS" "$REDIS_VALUE" \
		|| { echo "$0: loading the Redis copies failed" >&2; exit 1; }
	# bounded: it stops by itself 2 min after the run's length
	"$py" "$redis_load" drive "$ports" "$REDIS_KEYS" "$REDIS_VALUE" "$REDIS_WRITES" \
		"$REDIS_READS" $((seconds + 120)) > "$WORK/predict-drive.log" 2>&1 &
	drv_pid=$!
}
stop_copies() {
	if [ -n "$drv_pid" ]; then
		if ! kill -0 "$drv_pid" 2>/dev/null; then
			# it ended before it was told to: an error, or too slow a run
			wait "$drv_pid" || { echo "$0: the Redis load driver failed: $(tail -1 "$WORK/predict-drive.log")" >&2; exit 1; }
		fi
		kill -TERM "$drv_pid" 2>/dev/null || true
		wait "$drv_pid" 2>/dev/null || true
		drv_pid=
	fi
	for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
	for p in $pids; do wait "$p" 2>/dev/null || true; done
	pids=
}
ksmd_ns() { # ksmd's own run time (ns), never wall time
	k=$(ps -e -o pid=,comm= | awk '$2 == "ksmd" { print $1; exit }')
	cut -d' ' -f1 "/proc/$k/schedstat"
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# The workload's progress: every 2 s, ms since T0 and the CPU time (s) all
# copies have had (utime + stime), so that the two runs' timing can be set
# side by side.   progress FILE T0 &
progress() {
	local out=$1 start=$2 hz t ticks st p
	hz=$(getconf CLK_TCK)
	echo "t_ms,workload_cpu_s" > "$out"
	while :; do
		t=$(( $(now_ms) - start ))
		ticks=0
		for p in $pids; do
			# fields 14 and 15 (utime, stime) are 12 and 13 after "(comm) "
			st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null) || continue
			ticks=$((ticks + $(echo "$st" | awk '{ print $12 + $13 }')))
		done
		echo "$t,$((ticks / hz))" >> "$out"
		sleep 2
	done
}
stop_progress() {
	kill -TERM "$prog_pid" 2>/dev/null || true
	wait "$prog_pid" 2>/dev/null || true
	prog_pid=
}

# ---- 1. record, KSM off ---------------------------------------------------
echo 0 > "$ksm/run"
echo "record: $describe, ${MINUTES} min, interval ${INTERVAL_MS} ms"
start_copies
sleep "$WARMUP_S"
# shellcheck disable=SC2086 # pids is a list
rec_cmd=(nice -n 5 "$KSMSIM" record --pid "$(echo $pids | tr ' ' ,)" --scope all
	--content digest --find compare --interval-ms "$INTERVAL_MS"
	--mark-every "$mark_every" --max-seconds "$seconds" --max-cpu "$MAX_CPU"
	--quiet -o "$trace")
"${rec_cmd[@]}" > "$RESULTS/record.txt" 2>&1 &
rec_pid=$!
progress "$RESULTS/record-progress.csv" "$(now_ms)" &
prog_pid=$!
wait "$rec_pid" || { echo "$0: record failed: $(tail -3 "$RESULTS/record.txt")" >&2; exit 1; }
rec_pid=
stop_progress
stop_copies
"$KSMSIM" trace stat "$trace" > "$RESULTS/trace-stat.txt"

# ---- 2. tune, and the model at the recommended setting -------------------
nice -n 19 "$KSMSIM" tune "$trace" --cpu-budget "$BUDGET" --interval-ms 1000 --jobs 2 --quiet \
	-o "$RESULTS/tune.csv" --plot "$RESULTS/tune.png" > "$RESULTS/tune.txt"
rec=$("$py" - "$RESULTS/tune.csv" <<'EOF'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))]
r = [r for r in rows if r["recommended"] == "1"][0]
print(r["setting"], r["pages_to_scan"], r["sleep_millisecs"], r["advisor_mode"],
      r["advisor_target_scan_time"] or "0", r["smart_scan"], r["use_zero_pages"],
      r["max_page_sharing"], sep="|")
EOF
)
IFS='|' read -r setting p2s sleep_ms adv_mode _ smart zero mps <<< "$rec"
echo "tune recommends: $setting"
if [ "$adv_mode" != none ]; then
	# run pins no advisor_mode; the advisor's settings are not compared here
	echo "$0: tune recommended the advisor ($setting): not handled" >&2
	exit 1
fi
nice -n 19 "$KSMSIM" run --trace "$trace" --trace-label "$trace_name" --batch-time \
	--pages-to-scan "$p2s" --sleep-millisecs "$sleep_ms" --smart-scan "$smart" \
	--use-zero-pages "$zero" --max-page-sharing "$mps" \
	--marks-csv "$RESULTS/model-marks.csv" > "$RESULTS/model-run.txt"
# the marks' trace times, in seconds after attach
marks=$("$py" - "$RESULTS/model-marks.csv" <<'EOF'
import csv, sys
for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")):
    print(r["label"], r["t_us"])
EOF
)

# ---- 3. live: the same workload, KSM at the recommended setting ----------
echo 2 > "$ksm/run"
echo 0 > "$ksm/run"
[ -e "$ksm/advisor_mode" ] && echo none > "$ksm/advisor_mode"
echo "$p2s" > "$ksm/pages_to_scan"
echo "$sleep_ms" > "$ksm/sleep_millisecs"
[ -e "$ksm/smart_scan" ] && echo "$smart" > "$ksm/smart_scan"
echo "$zero" > "$ksm/use_zero_pages"
echo "$mps" > "$ksm/max_page_sharing"
live=$RESULTS/live-marks.csv
procs=$RESULTS/live-ksm-stat.csv
echo "label,t_us,full_scans,pages_scanned,pages_shared,pages_sharing,pages_unshared,ksm_zero_pages,ksmd_cpu_ms" > "$live"
echo "label,t_us,pid,ksm_rmap_items,ksm_zero_pages,ksm_merging_pages,ksm_process_profit,ksm_merge_any" > "$procs"
start_copies
sleep "$WARMUP_S"
cpu0=$(ksmd_ns)
t0=$(now_ms)
echo 1 > "$ksm/run"
progress "$RESULTS/live-progress.csv" "$t0" &
prog_pid=$!
while read -r label t_us; do
	due=$((t0 + t_us / 1000))
	wait_ms=$((due - $(now_ms)))
	[ "$wait_ms" -gt 0 ] && sleep "$(printf '%d.%03d' $((wait_ms / 1000)) $((wait_ms % 1000)))"
	t=$(( ($(now_ms) - t0) * 1000 ))
	cpu=$(ksmd_ns)
	printf '%s,%s' "$label" "$t" >> "$live"
	for f in full_scans pages_scanned pages_shared pages_sharing pages_unshared ksm_zero_pages; do
		printf ',%s' "$(cat "$ksm/$f")" >> "$live"
	done
	printf ',%s\n' $(( (cpu - cpu0) / 1000000 )) >> "$live"
	for p in $pids; do
		[ -r "/proc/$p/ksm_stat" ] || continue
		awk -v l="$label" -v t="$t" -v p="$p" '{ v[$1] = $2 }
			END { printf "%s,%s,%s,%s,%s,%s,%s,%s\n", l, t, p, v["ksm_rmap_items"],
				v["ksm_zero_pages"], v["ksm_merging_pages"], v["ksm_process_profit"],
				v["ksm_merge_any:"] }' "/proc/$p/ksm_stat" >> "$procs" || true
	done
	echo "live $label t=$((t / 1000000)) s pages_sharing=$(cat "$ksm/pages_sharing")"
done <<< "$marks"
stop_progress
stop_copies

# ---- 4. the comparison -----------------------------------------------------
"$py" - "$RESULTS/model-marks.csv" "$live" "$RESULTS/record-progress.csv" \
	"$RESULTS/live-progress.csv" > "$RESULTS/minutes.csv" <<'EOF'
import csv, sys
def rows(f):
    return list(csv.DictReader(l for l in open(f) if not l.startswith("#")))
model, live = rows(sys.argv[1]), rows(sys.argv[2])
rprog, lprog = rows(sys.argv[3]), rows(sys.argv[4])
def at(prog, t_ms):  # the workload's CPU time at the sample nearest t_ms
    return min(prog, key=lambda r: abs(int(r["t_ms"]) - t_ms))["workload_cpu_s"]
print("minute,label,t_s,live_pages_sharing,model_pages_sharing,"
      "live_ksmd_cpu_ms,model_ksmd_cpu_ms,live_pages_shared,model_pages_shared,"
      "live_full_scans,model_full_scans,record_workload_cpu_s,live_workload_cpu_s")
for m, l in zip(model, live):
    t = int(m["t_us"]) / 1e6
    print("%.2f,%s,%.1f,%s,%s,%s,%.0f,%s,%s,%s,%s,%s,%s" % (
        t / 60, m["label"], t, l["pages_sharing"], m["pages_sharing"],
        l["ksmd_cpu_ms"], float(m["ksmd_cpu_ms"]), l["pages_shared"],
        m["pages_shared"], l["full_scans"], m["full_scans"],
        at(rprog, t * 1000), at(lprog, t * 1000)))
EOF
{
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "cpu=$(lscpu | sed -n 's/^Model name: *//p')"
	echo "kernel=$(uname -r)"
	echo "workload=$describe"
	echo "kind=$WORKLOAD"
	echo "trace=$trace_name"
	echo "results=$results_rel"
	echo "minutes=$MINUTES"
	echo "interval_ms=$INTERVAL_MS"
	echo "warmup_s=$WARMUP_S"
	echo "budget=$BUDGET"
	echo "setting=$setting"
	echo "knobs=pages_to_scan=$p2s sleep_millisecs=$sleep_ms smart_scan=$smart use_zero_pages=$zero max_page_sharing=$mps"
	echo "record=${rec_cmd[*]//$top\//}"
} > "$RESULTS/run.env"
report "$RESULTS"
