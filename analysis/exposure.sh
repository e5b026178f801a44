#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The KSM side channel in the model (issue 34): how much of the saving
# crosses security domains on the bundled trace and the generators (what
# `--policy selective` costs), and how soon an attacker's probe pages merge
# with a victim's (`ksmsim gen probe`) by host size and knob setting.
# Results: analysis/results/exposure/README.md.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: analysis/exposure.sh [OPTIONS]
  --out DIR        where the CSVs, the cells and the plot go
                   (default analysis/results/exposure)
  --sizes LIST     host sizes, GiB of background guests (4 guests each;
                   default 4,8,16,32)
  --knobs LIST     of default (100 pages / 20 ms), ubuntu (100 / 200 ms),
                   aggressive (3000 / 20 ms), advisor (scan-time, 20 ms)
                   (default all four)
  --scale S        gen --scale of the saving table's workloads (default 0.25)
  --jobs N         probe cells at once (default 2)
  --skip-saving    only the probe cells
  --nice N         the niceness of every ksmsim run (default 19)
  --reuse          keep a probe cell whose exposure CSV is already in DIR/cells
  --no-run         run no cell: probe.csv and probe.png from the cells in
                   DIR/cells (a missing cell is left out, and said so)
  --channels       only the channel cells (below): channels.csv
  --channel-sizes LIST  their host sizes, GiB (default 1,2; 128,256 for the
                   full table: about 11 GiB and hours a cell); channels.csv
                   holds every channel cell in DIR/cells, of these sizes
                   or of earlier runs, by size, setting and channel
  --channel-kinds LIST  which channels to run (default cow,unmap)
  --max-page-sharing LIST  their max_page_sharing settings
                   (default 2,16,256,1024; 256 is the kernel's)
  --trace FILE     (repeatable) only the saving table, over these traces (a
                   recorded guest trace, each mm its own domain), written to
                   DIR/saving-recorded.csv; no probe cells. A trace with
                   vmN-end marks (workloads/vm's recordings, which end with
                   the guests' RAM unmapped and so nothing saved) is cut at
                   the last of them: its figures are those of the moment
                   every guest's workload was done and every guest still up
Every probe cell: `ksmsim gen probe --vms 4 --mem-mib SIZE*256 --probe-pages
100 --seed 1` with the cell's knobs; with a pass = every page at the cell's
base rate (pages_to_scan per wake-up; the advisor's at its minimum, 500),
the probe pages are written once, spread over one pass from t = one pass
(--probe-at PASS --probe-spread PASS: page i at PASS + i PASS / 100, so
they meet ksmd's cursor at every phase of its pass), and the trace ends at
five passes;
`ksmsim run --no-ideal --domain victim=victim --domain attacker=attacker
--exposure-csv`, under nice -n 19 (or --nice), its wall time and peak RSS measured
(/usr/bin/time). T50 and T99 are the 50th and 99th percentiles (nearest
rank) of the attacker's write_to_merge_us: the time from its probe write
until its copy merged.
Every channel cell (--channels): the same probe at the default knobs and
a max_page_sharing of the list, the copies written every pass (4 rounds)
and read before each round after the first, by the CoW write (cow) or by
munmap (unmap: --probe-channel unmap); reads, reveals (the attacker's
merged_us count for cow, its unmap_reveal_us count for unmap) and the
reveals in a stable_node chain (unmap_reveals_in_chain).
EOF
}

root=$(cd "$(dirname "$0")/.." && pwd)
ksmsim=${KSMSIM:-$root/build/cli/ksmsim}
out=$root/analysis/results/exposure
sizes=4,8,16,32
knobs=default,ubuntu,aggressive,advisor
scale=0.25
jobs=2
saving=1
reuse=0
norun=0
given=()
channels=0
channel_sizes=1,2
mps_list=2,16,256,1024
niceness=19
kinds=cow,unmap
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--knobs) knobs=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	--skip-saving) saving=0; shift ;;
	--channels) channels=1; saving=0; shift ;;
	--channel-sizes) channel_sizes=$2; shift 2 ;;
	--max-page-sharing) mps_list=$2; shift 2 ;;
	--channel-kinds) kinds=$2; shift 2 ;;
	--reuse) reuse=1; shift ;;
	--nice) niceness=$2; shift 2 ;;
	--no-run) norun=1; saving=0; shift ;;
	--trace) [ -r "${2:-}" ] || { echo "exposure.sh: --trace: cannot read '${2:-}'" >&2; exit 2; }
		given+=("$2"); shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "exposure.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[ -x "$ksmsim" ] || { echo "exposure.sh: no $ksmsim (build first)" >&2; exit 2; }
mkdir -p "$out/cells"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# fig CSV SCOPE FIGURE COLUMN: one cell of an exposure CSV (3 count, 4 p50, 5 p90, 6 p99, 7 max)
fig() {
	awk -F, -v s="$2" -v f="$3" -v c="$4" '$1 == s && $2 == f { print $c }' "$1"
}
# seconds of a µs figure, or empty
sec() { [ -n "$1" ] && awk -v v="$1" 'BEGIN { printf "%.3f", v / 1e6 }' || true; }

# cut_at_last_end IN CUT: prints the trace to replay, IN itself or, when IN
# has vmN-end marks, CUT: IN's records up to the last of them (after it a
# recorded guest trace only unmaps the guests' RAM). awk reads every line
# (no early exit), so that pipefail sees no SIGPIPE.
cut_at_last_end() {
	local n
	n=$("$ksmsim" trace cat "$1" | awk '$2 == "mark" && $3 ~ /^vm[0-9]+-end$/ { n = NR } END { print n + 0 }')
	if [ "$n" -gt 0 ]; then
		"$ksmsim" trace cat "$1" | awk -v n="$n" 'NR <= n' | "$ksmsim" trace convert - "$2"
		printf '%s\n' "$2"
	else
		printf '%s\n' "$1"
	fi
}

# ---- the saving across domains, and what selective costs ----
if [ "$saving" = 1 ]; then
	saving_csv=$out/saving.csv
	# an array: a trace's path may hold blanks
	if [ ${#given[@]} -gt 0 ]; then
		traces=("${given[@]}")
		saving_csv=$out/saving-recorded.csv
	else
		traces=("$root/traces/samples/default.ksmt")
		for w in kernel-build iozone number-crunching vm-clones zero-heavy; do
			"$ksmsim" gen "$w" --scale "$scale" --seed 1 -o "$work/$w.ksmb" --quiet
			traces+=("$work/$w.ksmb")
		done
	fi
	{
		echo "trace,saved_pages,saved_cross_pages,saved_cross_zero_pages,cross_share,zero_share_of_cross,selective_saved_pages,selective_cost,merges_cross,merges_within,cross_write_to_merge_p50_s,cross_write_to_merge_p99_s,cross_merged_p50_s,cross_merged_p99_s,cross_domains_p50,cross_domains_max"
		for t in "${traces[@]}"; do
			name=$(basename "$t"); name=${name%.*}
			t=$(cut_at_last_end "$t" "$work/cut.ksmb")
			nice -n "$niceness" "$ksmsim" run --quiet --no-ideal --trace "$t" --exposure-csv "$work/k.csv"
			nice -n "$niceness" "$ksmsim" run --quiet --no-ideal --trace "$t" --policy selective \
				--exposure-csv "$work/s.csv"
			cp "$work/k.csv" "$out/cells/saving-$name-kernel.csv"
			cp "$work/s.csv" "$out/cells/saving-$name-selective.csv"
			s=$(fig "$work/k.csv" all saved_pages 3)
			x=$(fig "$work/k.csv" all saved_cross_pages 3)
			z=$(fig "$work/k.csv" all saved_cross_zero_pages 3)
			ss=$(fig "$work/s.csv" all saved_pages 3)
			# the name from the environment: awk -v would read its backslashes as escapes
			name=$name awk -v s="$s" -v x="$x" -v z="$z" -v ss="$ss" \
			    -v mc="$(fig "$work/k.csv" cross write_to_merge_us 3)" \
			    -v mw="$(fig "$work/k.csv" within write_to_merge_us 3)" \
			    -v a="$(sec "$(fig "$work/k.csv" cross write_to_merge_us 4)")" \
			    -v b="$(sec "$(fig "$work/k.csv" cross write_to_merge_us 6)")" \
			    -v c="$(sec "$(fig "$work/k.csv" cross merged_us 4)")" \
			    -v d="$(sec "$(fig "$work/k.csv" cross merged_us 6)")" \
			    -v e="$(fig "$work/k.csv" cross domains_at_peak 4)" \
			    -v f="$(fig "$work/k.csv" cross domains_at_peak 7)" 'BEGIN {
				n = ENVIRON["name"]
				if (n ~ /[",\r\n]/) {	# a CSV field in quotes, its quotes doubled
					gsub(/"/, "\"\"", n)
					n = "\"" n "\""
				}
				printf "%s,%d,%d,%d,%.3f,%.4f,%d,%.3f,%d,%d,%s,%s,%s,%s,%s,%s\n", n, s, x, z,
				       s ? x / s : 0, x ? z / x : 0, ss, s ? 1 - ss / s : 0, mc, mw,
				       a, b, c, d, e, f }'
		done
	} > "$saving_csv.tmp"
	mv "$saving_csv.tmp" "$saving_csv"
fi
if [ ${#given[@]} -gt 0 ]; then
	echo "exposure.sh: $saving_csv"
	exit 0
fi

# ---- the channel cells: the CoW write and the unmap, by max_page_sharing ----
# chcell SIZE MPS CHANNEL: cells/channel-SIZE-MPS-CHANNEL.csv and .time
chcell() {
	local size=$1 mps=$2 ch=$3
	local base=$out/cells/channel-$size-$mps-$ch
	if [ "$norun" = 1 ] || { [ "$reuse" = 1 ] && [ -s "$base.csv" ] && [ -s "$base.time" ]; }; then
		return 0
	fi
	# one pass at the default knobs (100 pages every 20 ms = 6 ticks)
	local pass=$(( (size * 262144 + 200) * 6 * 4 / 100 / 1000 + 1 ))
	"$ksmsim" gen probe --quiet --vms 4 --mem-mib $((size * 256)) --probe-pages 100 --seed 1 \
		--probe-channel "$ch" --probe-at "$pass" --probe-spread "$pass" --probe-every "$pass" \
		--duration-s $((5 * pass)) -o "$work/ch-$size-$mps-$ch.ksmb"
	/usr/bin/time -f "%e %M" -o "$base.time.tmp" nice -n "$niceness" "$ksmsim" run --quiet --no-ideal \
		--trace "$work/ch-$size-$mps-$ch.ksmb" --max-page-sharing "$mps" \
		--domain victim=victim --domain attacker=attacker --exposure-csv "$base.csv.tmp"
	echo "$pass" >> "$base.time.tmp"
	rm -f "$work/ch-$size-$mps-$ch.ksmb"
	mv "$base.csv.tmp" "$base.csv"
	mv "$base.time.tmp" "$base.time"
}
if [ "$channels" = 1 ]; then
	IFS=, read -r -a csize_list <<<"$channel_sizes"
	IFS=, read -r -a mps_arr <<<"$mps_list"
	IFS=, read -r -a kind_arr <<<"$kinds"
	for ch in "${kind_arr[@]}"; do
		case $ch in cow|unmap) ;; *) echo "exposure.sh: --channel-kinds: unknown channel '$ch' (cow, unmap)" >&2; exit 2 ;; esac
	done
	running=0
	for size in "${csize_list[@]}"; do
		for mps in "${mps_arr[@]}"; do
			for ch in "${kind_arr[@]}"; do
				chcell "$size" "$mps" "$ch" &
				running=$((running + 1))
				if [ "$running" -ge "$jobs" ]; then
					wait -n
					running=$((running - 1))
				fi
			done
		done
	done
	wait
	{
		echo "host_gib,max_page_sharing,channel,pass_s,probes,merged,t50_s,t99_s,reads,reveals,reveal_share,reveal_p50_s,reveal_p99_s,reveals_in_chain,run_wall_s,run_peak_rss_mib"
		# every cell made, this run's or an earlier one's (a 256 GiB cell
		# takes hours: the sizes are run one at a time), by size, setting
		# and channel; a cell asked for and not made is said
		for size in "${csize_list[@]}"; do
			for mps in "${mps_arr[@]}"; do
				for ch in "${kind_arr[@]}"; do
					c=$out/cells/channel-$size-$mps-$ch
					if [ ! -s "$c.csv" ] || [ ! -s "$c.time" ]; then
						echo "exposure.sh: no channel cell $size GiB $mps $ch (not made)" >&2
					fi
				done
			done
		done
		for c in "$out"/cells/channel-*-*-*.time; do
			[ -e "$c" ] || continue
			c=${c%.time}
			[ -s "$c.csv" ] && [ -s "$c.time" ] || continue
			IFS=- read -r _ size mps ch <<<"${c##*/}"
			echo "$size $mps $ch"
		done | sort -k1,1n -k2,2n -k3,3 | while read -r size mps ch; do
					c=$out/cells/channel-$size-$mps-$ch
					read -r wall rss < <(head -1 "$c.time")
					pass=$(sed -n 2p "$c.time")
					if [ "$ch" = cow ]; then
						# rounds 2-4 write the 100 copies again: 300 reads
						reads=300; rev=$(fig "$c.csv" domain:attacker merged_us 3); rp50=; rp99=
					else
						reads=$(fig "$c.csv" domain:attacker unmaps 3)
						rev=$(fig "$c.csv" domain:attacker unmap_reveal_us 3)
						rp50=$(sec "$(fig "$c.csv" domain:attacker unmap_reveal_us 4)")
						rp99=$(sec "$(fig "$c.csv" domain:attacker unmap_reveal_us 6)")
					fi
					chain=$(fig "$c.csv" all unmap_reveals_in_chain 3)
					printf "%s,%s,%s,%s,100,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n" "$size" "$mps" "$ch" \
						"$pass" "$(fig "$c.csv" domain:attacker write_to_merge_us 3)" \
						"$(sec "$(fig "$c.csv" domain:attacker write_to_merge_us 4)")" \
						"$(sec "$(fig "$c.csv" domain:attacker write_to_merge_us 6)")" \
						"$reads" "$rev" "$(awk -v r="$rev" -v n="$reads" 'BEGIN { printf "%.3f", n ? r / n : 0 }')" \
						"$rp50" "$rp99" "${chain:-0}" "$wall" $((rss / 1024))
		done
	} > "$out/channels.csv.tmp"
	mv "$out/channels.csv.tmp" "$out/channels.csv"
	# the plot: by host size at the kernel's max_page_sharing (256), the
	# time from a copy's write until it merged (when a read first reveals
	# it) and the share of the reads that revealed, CoW write beside unmap
	if command -v gnuplot >/dev/null; then
		for ch in cow unmap; do
			awk -F, -v ch="$ch" 'NR > 1 && $2 == 256 && $3 == ch && $7 != "" {
				print $1, $7, $8, $11 * 100 }' "$out/channels.csv" > "$work/ch-$ch.dat"
		done
		if [ -s "$work/ch-cow.dat" ] || [ -s "$work/ch-unmap.dat" ]; then
			sq="'"
			{
				echo 'set terminal pngcairo noenhanced size 1100,480 font ",10"'
				echo "set output '${out//$sq/$sq$sq}/channels.png.tmp'"
				echo 'set multiplot layout 1,2 title "The CoW-write and the unmap channel (ksmsim model, gen probe, 100 pages, default knobs, max_page_sharing 256)\nCoW drawn thick, unmap thin on top of it: their times lie within 3% of each other"'
				echo 'set logscale x 2'
				echo 'set grid'
				echo 'set xlabel "background guests, GiB (4 guests)"'
				echo 'set logscale y 10'
				echo 'set ylabel "seconds from the copy'"'"'s write to its merge"'
				echo 'set key top left'
				# CoW thick and under: its times lie within a few % of unmap's
				printf "plot '%s' using 1:2 with linespoints lt 1 lw 5 pt 7 ps 1.6 title \"CoW T50\", " "$work/ch-cow.dat"
				printf "'%s' using 1:3 with linespoints lt 1 lw 5 dt 2 pt 6 ps 1.6 title \"CoW T99\", " "$work/ch-cow.dat"
				printf "'%s' using 1:2 with linespoints lt 2 pt 5 title \"unmap T50\", " "$work/ch-unmap.dat"
				printf "'%s' using 1:3 with linespoints lt 2 dt 2 pt 4 title \"unmap T99\"\n" "$work/ch-unmap.dat"
				echo 'unset logscale y'
				echo 'set yrange [0:100]'
				echo 'set ylabel "reads that revealed the merge, %"'
				echo 'set key bottom left'
				printf "plot '%s' using 1:4 with linespoints lt 1 lw 5 pt 7 ps 1.6 title \"CoW write\", " "$work/ch-cow.dat"
				printf "'%s' using 1:4 with linespoints lt 2 pt 5 title \"unmap\"\n" "$work/ch-unmap.dat"
				echo 'unset multiplot'
			} > "$work/channels.gp"
			gnuplot "$work/channels.gp"
			mv "$out/channels.png.tmp" "$out/channels.png"
		fi
	fi
	echo "exposure.sh: $out/channels.csv"
	exit 0
fi

# ---- the probe cells ----
# knob NAME: pages_to_scan sleep_ms advisor(0|1)
knob() {
	case $1 in
	default) echo "100 20 0" ;;
	ubuntu) echo "100 200 0" ;;
	aggressive) echo "3000 20 0" ;;
	advisor) echo "500 20 1" ;;
	*) echo "exposure.sh: unknown knob setting '$1'" >&2; exit 2 ;;
	esac
}

cell() {	# cell SIZE KNOB: cells/probe-SIZE-KNOB.csv and .time
	local size=$1 k=$2 pts ms adv
	read -r pts ms adv < <(knob "$k")
	local base=$out/cells/probe-$size-$k
	if [ "$norun" = 1 ] || { [ "$reuse" = 1 ] && [ -s "$base.csv" ] && [ -s "$base.time" ]; }; then
		return 0
	fi
	# one pass of every page: pages / (pages_to_scan per wake-up of (ms/4 + 1) ticks)
	local pages=$((size * 262144 + 200))
	local pass
	pass=$(awk -v p="$pages" -v n="$pts" -v ms="$ms" \
		'BEGIN { w = (int((ms * 250 + 999) / 1000) + 1) * 0.004; printf "%d", p / n * w + 1 }')
	local adv_opt=""
	[ "$adv" = 1 ] && adv_opt=--advisor
	"$ksmsim" gen probe --quiet --vms 4 --mem-mib $((size * 256)) --probe-pages 100 --seed 1 \
		--pages-to-scan "$pts" --sleep-millisecs "$ms" $adv_opt \
		--probe-at "$pass" --probe-spread "$pass" --duration-s $((5 * pass)) \
		-o "$work/probe-$size-$k.ksmb"
	/usr/bin/time -f "%e %M" -o "$base.time.tmp" nice -n "$niceness" "$ksmsim" run --quiet --no-ideal \
		--trace "$work/probe-$size-$k.ksmb" --domain victim=victim --domain attacker=attacker \
		--exposure-csv "$base.csv.tmp"
	echo "$pass" >> "$base.time.tmp"
	rm -f "$work/probe-$size-$k.ksmb"
	mv "$base.csv.tmp" "$base.csv"
	mv "$base.time.tmp" "$base.time"
}

IFS=, read -r -a size_list <<<"$sizes"
IFS=, read -r -a knob_list <<<"$knobs"
running=0
for size in "${size_list[@]}"; do
	for k in "${knob_list[@]}"; do
		knob "$k" >/dev/null
		cell "$size" "$k" &
		running=$((running + 1))
		if [ "$running" -ge "$jobs" ]; then
			wait -n
			running=$((running - 1))
		fi
	done
done
wait

{
	echo "host_gib,knobs,pages_to_scan,sleep_ms,probe_at_s,duration_s,probes,merged,t50_s,t99_s,max_s,attacker_merged_cross,run_wall_s,run_peak_rss_mib"
	for size in "${size_list[@]}"; do
		for k in "${knob_list[@]}"; do
			read -r pts ms adv < <(knob "$k")
			c=$out/cells/probe-$size-$k.csv
			if [ ! -s "$c" ] || [ ! -s "$out/cells/probe-$size-$k.time" ]; then
				echo "exposure.sh: no cell $size GiB $k: left out of probe.csv" >&2
				continue
			fi
			read -r wall rss < <(head -1 "$out/cells/probe-$size-$k.time")
			pass=$(sed -n 2p "$out/cells/probe-$size-$k.time")
			[ "$adv" = 1 ] && pts=advisor
			n=$(fig "$c" domain:attacker write_to_merge_us 3)
			printf "%s,%s,%s,%s,%s,%s,100,%s,%s,%s,%s,%s,%s,%s\n" "$size" "$k" "$pts" "$ms" \
				"$pass" $((5 * pass)) "$n" \
				"$(sec "$(fig "$c" domain:attacker write_to_merge_us 4)")" \
				"$(sec "$(fig "$c" domain:attacker write_to_merge_us 6)")" \
				"$(sec "$(fig "$c" domain:attacker write_to_merge_us 7)")" "$n" \
				"$wall" $((rss / 1024))
		done
	done
} > "$out/probe.csv.tmp"
mv "$out/probe.csv.tmp" "$out/probe.csv"

# ---- the plot (analysis/plot_exposure_probe.sh: times in s, min, h) ----
if command -v gnuplot >/dev/null; then
	"$root/analysis/plot_exposure_probe.sh" "$out/probe.csv" "$out/probe.png" >/dev/null
fi
echo "exposure.sh: $out/saving.csv, $out/probe.csv, $out/probe.png"
