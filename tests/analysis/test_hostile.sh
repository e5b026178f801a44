#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_hostile.sh CASE KSMSIM SRCDIR: analysis/plot.sh and analysis/sweep.sh
# on hostile input. Labels, knob values, file names and OUT paths carrying
# quotes, backslashes, $(...), backquotes, gnuplot system(...), line breaks
# and commas inside quoted fields run nothing (no canary file appears),
# the figures are drawn from the right columns, and bad input is one line
# and exit 2.
#   plot-hostile  strings from CSVs, file names and --title reach gnuplot
#                 as quoted text only; numbers are checked; quoted fields
#                 do not shift columns
#   plot-lows     output folder errors, failed writes, folders and
#                 header-only CSVs as input
#   sweep-hostile --slurm's sweep.sbatch and merge.sh with a hostile OUT,
#                 --run-args not globbed, trace names with tabs or line breaks
#   sweep-lows    unknown options, --merge and --out errors, values gen
#                 refuses, SIGTERM to the sweep
# Exit 0 pass, 1 fail, 77 skip (no gnuplot, for the plot cases).
set -euo pipefail
case_=$1 ksmsim=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
plot=$src/analysis/plot.sh sweep=$src/analysis/sweep.sh
trace=$src/traces/samples/default.ksmt
# Every command runs in $tmp (or a folder in it), and the hostile strings
# touch a file there: a relative name, so that it holds no / (a path
# holding the string makes folders, never a file of that name).
cd "$tmp"
mkdir "$tmp/elsewhere"
canary=PWNED

# no_canary WHAT: nothing a hostile string held was run
no_canary() {
	local c
	c=$(find "$tmp" -maxdepth 2 -type f -name 'PWNED*' | head -1)
	[[ -z $c ]] || fail "$1: $c was created: hostile text ran"
}

# refused WANT-PATTERN CMD...: exit 2, nothing on stdout, one line on
# stderr matching the pattern
refused() {
	local pat=$1 rc=0
	shift
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[[ $rc -eq 2 ]] || fail "$*: exit $rc, want 2: $(cat "$tmp/err")"
	[[ $(wc -l <"$tmp/err") -eq 1 ]] || fail "$*: not one line: $(cat "$tmp/err")"
	grep -q -- "$pat" "$tmp/err" || fail "$*: $(cat "$tmp/err"), want $pat"
	[[ ! -s $tmp/out ]] || fail "$*: printed $(cat "$tmp/out")"
}

# Strings that would run something if gnuplot or a shell took them as code.
hostile=(
	"x' . system('touch $canary-1') . '"
	"y\") . system(\"touch $canary-2\") . (\""
	"ends with a backslash\\"
	"\$(touch $canary-3) \`touch $canary-4\`"
	"@x \` ; \"; '; print 1 #"
	"a, b,\"c\"; d"
	"line
break"
)

# csv_col CSV NAME: that column, parsed as CSV, one value a line (line breaks
# inside a value shown as spaces, as plot.sh shows them)
csv_col() {
	python3 - "$1" "$2" <<'EOF'
import csv, sys
with open(sys.argv[1], newline="") as f:
    rows = list(csv.reader(f))
i = rows[0].index(sys.argv[2])
for r in rows[1:]:
    print(r[i].replace("\n", " "))
EOF
}

# csv_set CSV NAME VALUE...: column NAME (added at the end if missing) of
# row k becomes the k-th VALUE (the last one for the rows after), written
# back as ksmsim writes CSV
csv_set() {
	python3 - "$@" <<'EOF'
import csv, sys
path, name, vals = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(path, newline="") as f:
    rows = list(csv.reader(f))
if name not in rows[0]:
    for r in rows:
        r.append(name if r is rows[0] else "")
i = rows[0].index(name)
for k, r in enumerate(rows[1:]):
    r[i] = vals[min(k, len(vals) - 1)]
with open(path, "w", newline="") as f:
    csv.writer(f, lineterminator="\n").writerows(rows)
EOF
}

# A gnuplot that keeps each script it is given, and the data files beside
# the PNG it is told to write, then runs the real one.
gnuplot_recorder() {
	local real
	real=$(command -v gnuplot)
	mkdir -p "$tmp/bin" "$tmp/gp"
	cat >"$tmp/bin/gnuplot" <<EOF
#!/bin/bash
d=$tmp/gp/\$(ls "$tmp/gp" | wc -l)
mkdir "\$d"
cat >"\$d/script"
w=\$(sed -n "s|^set output '\\(.*\\)/out.png'\\\$|\\1|p" "\$d/script")
[[ -n \$w ]] && cp -r "\$w" "\$d/work"
exec "$real" "\$d/script"
EOF
	chmod +x "$tmp/bin/gnuplot"
	PATH=$tmp/bin:$PATH
}

# gq TEXT: TEXT as plot.sh quotes it for gnuplot: 'TEXT', '' for ', and a
# line break as a space
gq() { local s=${1//$'\n'/ }; printf "'%s'" "${s//\'/\'\'}"; }

case $case_ in
plot-hostile)
	command -v gnuplot >/dev/null || { echo "gnuplot missing: skip"; exit 77; }
	gnuplot_recorder
	# 1. ksmsim's own summaries, the trace labelled with each hostile string
	# (the attack the review found): one bar group per label
	i=0
	for l in "${hostile[@]}"; do
		"$ksmsim" run --quiet --trace "$trace" --hash xxhash --trace-label "$l" \
			--summary-csv "$tmp/s$i.csv"
		i=$((i + 1))
	done
	{ cat "$tmp/s0.csv"; for ((j = 1; j < i; j++)); do tail -n +2 "$tmp/s$j.csv"; done; } >"$tmp/labels.csv"
	"$plot" -o "$tmp/png" "$tmp/labels.csv" >"$tmp/list" || fail "labels.csv: exit $?"
	no_canary "trace labels"
	grep -qx "$tmp/png/labels-cost.png" "$tmp/list" || fail "no labels-cost.png: $(cat "$tmp/list")"
	# the cost figure (checksum_ns, then ksmd_cpu_ms): its data, row by row,
	# is the columns' (bars.dat: x, hash, then value and its label per panel)
	s=$(grep -l 'ksmd CPU time' "$tmp"/gp/*/script | head -1)
	[[ -n $s ]] || fail "no gnuplot script drew ksmd_cpu_ms"
	d=$(dirname "$s")
	cmp <(cut -d, -f3 "$d/work/bars.dat") <(csv_col "$tmp/labels.csv" checksum_ns) ||
		fail "bars.dat's first panel is not the checksum_ns column"
	cmp <(cut -d, -f5 "$d/work/bars.dat") <(csv_col "$tmp/labels.csv" ksmd_cpu_ms) ||
		fail "bars.dat's second panel is not the ksmd_cpu_ms column"
	# each label is under its bars, as one quoted gnuplot string (a trace
	# label is shown by its last / part)
	for l in "${hostile[@]}"; do
		grep -qF -- "set label $(gq "${l##*/}") at first" "$s" || fail "label $l: not quoted in $s"
	done

	# 2. hash labels (xtics and keys) in every kind of figure
	"$ksmsim" run --quiet --trace "$trace" --hash xxhash --csv "$tmp/ts-a.csv" --summary-csv "$tmp/h.csv"
	"$ksmsim" run --quiet --trace "$trace" --hash crc32c --csv "$tmp/ts-b.csv" --summary-csv "$tmp/h2.csv"
	tail -n +2 "$tmp/h2.csv" >>"$tmp/h.csv"
	"$ksmsim" collide birthday --bits 12 --trials 20 --max-pages 1000 --hashes crc32,xxhash \
		-o "$tmp/bd.csv" --curve-csv "$tmp/curve.csv" >/dev/null 2>&1
	"$ksmsim" collide fp --trials 500 --hashes crc32,xxhash -o "$tmp/fp.csv" >/dev/null 2>&1
	cp "$src/analysis/results/costs.csv" "$tmp/costs.csv"
	h1=${hostile[0]} h2=${hostile[1]}
	csv_set "$tmp/h.csv" hash "$h1" "$h2"
	# the two runs differ in CoW and pages_sharing, so that plot.sh draws
	# their effects and memory figures (equal bars are named, not drawn)
	csv_set "$tmp/h.csv" cow_ksm 1 2
	csv_set "$tmp/h.csv" pages_sharing 10 20
	csv_set "$tmp/ts-a.csv" hash "$h1"
	csv_set "$tmp/ts-b.csv" hash "$h2"
	for f in bd curve fp; do
		python3 - "$tmp/$f.csv" "$h1" "$h2" <<'EOF'
import csv, sys
path, a, b = sys.argv[1:]
with open(path, newline="") as f:
    rows = list(csv.reader(f))
for r in rows[1:]:
    r[0] = {"crc32": a, "xxhash": b}[r[0]]
with open(path, "w", newline="") as f:
    csv.writer(f, lineterminator="\n").writerows(rows)
EOF
	done
	csv_set "$tmp/fp.csv" change "${hostile[@]:2}"
	csv_set "$tmp/costs.csv" name "${hostile[@]}"
	rm -rf "$tmp/gp"/*
	"$plot" -o "$tmp/png" --title "${hostile[3]}" "$tmp/h.csv" "$tmp/ts-a.csv" "$tmp/ts-b.csv" \
		"$tmp/bd.csv" "$tmp/curve.csv" "$tmp/fp.csv" "$tmp/costs.csv" >"$tmp/list" || fail "hash labels: exit $?"
	no_canary "hash labels"
	[[ $(wc -l <"$tmp/list") -ge 7 ]] || fail "hash labels: $(cat "$tmp/list")"
	# a hash is a whole string in the summaries' xtics, the time series' key
	# and first-collision's xtics; it starts one in birthday and fp
	for l in "$h1" "$h2"; do
		e=$(gq "$l")
		[[ $(grep -lF -- "$e" "$tmp"/gp/*/script | wc -l) -ge 3 ]] ||
			fail "hash $l: not quoted in the figures"
		[[ $(grep -lF -- "${e%\'} (" "$tmp"/gp/*/script | wc -l) -ge 2 ]] ||
			fail "hash $l: not quoted in birthday and fp"
	done
	e=$(gq "${hostile[3]}: ")
	[[ $(grep -lF -- "${e%\'}" "$tmp"/gp/*/script | wc -l) -ge 7 ]] || fail "--title not quoted"

	# 3. a quoted comma in a column before the numbers shifts nothing: the
	# same rows with a plain trace name draw the same PNGs
	cp "$tmp/h.csv" "$tmp/plain.csv"
	cp "$tmp/h.csv" "$tmp/commas.csv"
	csv_set "$tmp/plain.csv" trace "abc"
	csv_set "$tmp/commas.csv" trace "a,\"b\",c"
	csv_set "$tmp/plain.csv" policy "kernel"
	csv_set "$tmp/commas.csv" policy "kernel"
	"$plot" -o "$tmp/p1" --title same "$tmp/plain.csv" >/dev/null
	"$plot" -o "$tmp/p2" --title same "$tmp/commas.csv" >/dev/null
	[[ $(find "$tmp/p1" -name '*.png' | wc -l) -ge 2 ]] || fail "plain.csv: $(ls "$tmp/p1")"
	for p in "$tmp"/p1/*.png; do
		w=${p##*/}
		cmp -s "$p" "$tmp/p2/${w/plain/commas}" || fail "$w: a quoted comma changed the figure"
	done

	# 4. a file name and an output folder holding quotes and $(...)
	n="o'k \"q\" \$(touch $canary-5) \`touch $canary-6\`"
	cp "$tmp/h.csv" "$tmp/$n.csv"
	"$plot" -o "$tmp/out '\$(touch $canary-7)" "$tmp/$n.csv" >"$tmp/list" || fail "file name: exit $?"
	no_canary "file names"
	grep -qxF "$tmp/out '\$(touch $canary-7)/$n-cost.png" "$tmp/list" || fail "file name: $(cat "$tmp/list")"
	[[ -s "$tmp/out '\$(touch $canary-7)/$n-cost.png" ]] || fail "file name: no PNG"

	# 5. numbers that are not numbers: refused, in a metric and in the swept knob
	cp "$tmp/h.csv" "$tmp/bad.csv"
	csv_set "$tmp/bad.csv" ksmd_cpu_ms "1" "system(\"touch $canary-8\")"
	refused "ksmd_cpu_ms: 'system" "$plot" -o "$tmp/png" "$tmp/bad.csv"
	{
		echo "workload,set_pages_to_scan,$(head -1 "$tmp/h2.csv")"
		echo "w,100,$(tail -1 "$tmp/h2.csv")"
		echo "w,\"1),system(\"\"touch $canary-9\"\"),(2\",$(tail -1 "$tmp/h2.csv")"
	} >"$tmp/knob.csv"
	refused "set_pages_to_scan: '1),system" "$plot" -o "$tmp/png" "$tmp/knob.csv"
	# a hostile value in a knob that is not on x only names a panel
	{ cat "$tmp/h2.csv"; for i in 1 2 3; do tail -1 "$tmp/h2.csv"; done; } >"$tmp/panels.csv"
	csv_set "$tmp/panels.csv" workload "${hostile[0]}" "${hostile[0]}" "${hostile[6]}"
	csv_set "$tmp/panels.csv" set_pages_to_scan 100 400 100 400
	rm -rf "$tmp/gp"/*
	"$plot" -o "$tmp/png" "$tmp/panels.csv" >"$tmp/list" || fail "panels: exit $?"
	grep -qF -- "set title $(gq "workload = ${hostile[0]}")" "$tmp"/gp/*/script || fail "panel title not quoted"
	no_canary "numbers"
	;;
plot-lows)
	command -v gnuplot >/dev/null || { echo "gnuplot missing: skip"; exit 77; }
	cd "$tmp"
	"$ksmsim" run --quiet --trace "$trace" --hash xxhash --csv "$tmp/ts.csv" --summary-csv "$tmp/sum.csv"
	# bad output folders and inputs: one line, exit 2, nothing made
	: >"$tmp/afile"
	refused "-o $tmp/afile: not a folder" "$plot" -o "$tmp/afile" "$tmp/ts.csv"
	refused "-o /dev/full: not a folder" "$plot" -o /dev/full "$tmp/ts.csv"
	refused "$tmp is a folder, not a CSV" "$plot" -o "$tmp/png" "$tmp"
	head -1 "$tmp/sum.csv" >"$tmp/header-only.csv"
	refused "header-only.csv: a header and no rows" "$plot" -o "$tmp/png" "$tmp/header-only.csv"
	refused "missing.csv is empty or missing" "$plot" -o "$tmp/png" "$tmp/missing.csv"
	printf 'hash,cow_ksm\n"unclosed,1\n' >"$tmp/broken.csv"
	refused "broken.csv: not CSV" "$plot" -o "$tmp/png" "$tmp/broken.csv"
	# a later bad file stops the call before any figure
	refused "header-only.csv" "$plot" -o "$tmp/png2" "$tmp/ts.csv" "$tmp/header-only.csv"
	[[ -z $(ls -A "$tmp/png2" 2>/dev/null) ]] || fail "a refused call made $(ls -A "$tmp/png2")"
	# gnuplot fails: no PNG and no temporary file left
	printf 't_us,pages_sharing,pages_unshared\n0,,\n' >"$tmp/empty-y.csv"
	refused "gnuplot failed" "$plot" -o "$tmp/png3" "$tmp/empty-y.csv"
	[[ -z $(ls -A "$tmp/png3") ]] || fail "a failed figure left $(ls -A "$tmp/png3")"
	# writes that fail (a file size limit stands in for a full disk): gnuplot
	# does not report them, so the PNG is checked; the copy into place is
	# checked too; neither leaves a file
	rc=0
	(trap '' XFSZ; ulimit -f 4; "$plot" -o "$tmp/png4" "$tmp/ts.csv") >/dev/null 2>"$tmp/err" || rc=$?
	if [[ $rc -ne 2 ]] || ! grep -qE "wrote no whole PNG|gnuplot failed" "$tmp/err"; then
		fail "truncated PNG: exit $rc, $(cat "$tmp/err")"
	fi
	[[ -z $(ls -A "$tmp/png4") ]] || fail "a truncated PNG left $(ls -A "$tmp/png4")"
	mkdir -p "$tmp/bin"
	printf '#!/bin/bash\nulimit -f 1\nexec %q "$@"\n' "$(command -v cp)" >"$tmp/bin/cp"
	chmod +x "$tmp/bin/cp"
	PATH=$tmp/bin:$PATH refused "cannot write $tmp/png5/ts-pages.png" "$plot" -o "$tmp/png5" "$tmp/ts.csv"
	[[ -z $(ls -A "$tmp/png5") ]] || fail "a failed copy left $(ls -A "$tmp/png5")"
	# and the PNG it writes has the mode a new file gets
	"$plot" -o "$tmp/png6" "$tmp/ts.csv" >/dev/null
	: >"$tmp/mode-ref"
	[[ $(stat -c %a "$tmp/png6/ts-pages.png") == $(stat -c %a "$tmp/mode-ref") ]] ||
		fail "PNG mode $(stat -c %a "$tmp/png6/ts-pages.png")"
	;;
sweep-hostile)
	cp "$trace" "$tmp/a.ksmt"
	# 1. --slurm with an OUT that would run code if either script spliced it
	out="$tmp/o \"q\" 's' \\ \$(touch $canary-1) \`touch $canary-2\`; touch $canary-3 #"
	"$sweep" --ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --hash xxhash,crc32c --pages-to-scan 100,1000 \
		--out "$out" --slurm 2>"$tmp/log" || fail "--slurm: $(cat "$tmp/log")"
	bash -n "$out/sweep.sbatch" || fail "sweep.sbatch: syntax error"
	bash -n "$out/merge.sh" || fail "merge.sh: syntax error"
	bash -n "$out/submit.sh" || fail "submit.sh: syntax error"
	# sbatch reads #SBATCH lines without a shell: plain values only, the job named after OUT
	grep -vqE '^#SBATCH --[a-z-]+=[A-Za-z0-9._+:,-]+$' <(grep '^#SBATCH' "$out/sweep.sbatch" "$out/merge.sh" | cut -d: -f2-) &&
		fail "#SBATCH lines: $(grep -h '^#SBATCH' "$out/sweep.sbatch" "$out/merge.sh")"
	grep -qx '#SBATCH --job-name=o__q___s______touch_PWNED-1___touch_PWNED-2___touch_PWNED-3__' "$out/sweep.sbatch" ||
		fail "job name: $(grep job-name "$out/sweep.sbatch")"
	(cd "$tmp/elsewhere" && SLURM_ARRAY_TASK_ID=3 bash "$out/sweep.sbatch") 2>/dev/null || fail "array task 3 failed"
	[[ $(find "$out/cells" -type f | wc -l) -eq 1 ]] || fail "task 3 made $(ls -A "$out/cells")"
	rc=0
	"$out/merge.sh" 2>"$tmp/err" || rc=$?
	[[ $rc -eq 1 ]] || fail "merge of 1 of 4 cells: exit $rc: $(cat "$tmp/err")"
	[[ ! -e $out/sweep.csv && $(wc -l <"$out/sweep.partial.csv") -eq 2 ]] || fail "partial merge"
	for n in 1 2 4; do SLURM_ARRAY_TASK_ID=$n bash "$out/sweep.sbatch" 2>/dev/null; done
	"$out/merge.sh" 2>/dev/null || fail "merge of every cell failed"
	[[ $(wc -l <"$out/sweep.csv") -eq 5 ]] || fail "full merge: $(cat "$out/sweep.csv")"
	no_canary "--slurm OUT"
	# submit.sh hands sbatch the paths as single arguments, a % of OUT
	# doubled in the log path (sbatch and squeue stand-ins record them)
	mkdir "$tmp/bin" "$tmp/stub"
	# shellcheck disable=SC2016  # the stand-in's own expansions
	printf '#!/bin/bash\nn=$(ls %q | wc -l)\nprintf "%%s\\n" "$@" >%q/$n\necho $((n + 100))\n' \
		"$tmp/stub" "$tmp/stub" >"$tmp/bin/sbatch"
	printf '#!/bin/bash\nexit 0\n' >"$tmp/bin/squeue"
	chmod +x "$tmp/bin/sbatch" "$tmp/bin/squeue"
	pct="$tmp/p%A q \$(touch $canary-4)"
	"$sweep" --ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --hash xxhash --out "$pct" --slurm --max-array-size 9 \
		--sbatch-args '--qos=a* --nice=1' 2>/dev/null || fail "--slurm with a % in OUT"
	(cd "$tmp/elsewhere" && PATH=$tmp/bin:$PATH "$pct/submit.sh") >"$tmp/ids" 2>"$tmp/err" ||
		fail "submit.sh: $(cat "$tmp/err")"
	[[ $(cat "$tmp/ids") == $'100\n101' ]] || fail "job ids: $(cat "$tmp/ids")"
	printf '%s\n' --parsable --array=1 "--output=${pct//%/%%}/logs/%x-%A_%a.out" '--qos=a*' --nice=1 \
		"$pct/sweep.sbatch" 0 | diff - "$tmp/stub/0" || fail "sbatch arguments of the array job"
	printf '%s\n' --parsable --dependency=afterany:100 "--output=${pct//%/%%}/logs/%x-%j.out" '--qos=a*' \
		--nice=1 "$pct/merge.sh" | diff - "$tmp/stub/1" || fail "sbatch arguments of the merge job"
	printf '100 1\n101 merge\n' | diff - "$pct/slurm-jobs" || fail "slurm-jobs"
	no_canary "--slurm OUT with a %"
	# 2. the same OUT, run here
	"$sweep" --ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --hash xxhash --out "$out-local" --jobs 2 \
		2>/dev/null || fail "local sweep with a hostile OUT"
	[[ $(wc -l <"$out-local/sweep.csv") -eq 2 ]] || fail "local sweep rows"
	no_canary "local OUT"
	# 3. --run-args is split into words, never globbed
	mkdir "$tmp/glob"
	: >"$tmp/glob/--no-ideal"
	(cd "$tmp/glob" && "$sweep" --ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --hash xxhash \
		--run-args '--no-idea*' --out "$tmp/g") 2>"$tmp/err" && fail "--run-args '--no-idea*' was globbed"
	grep -q "unknown option '--no-idea\*'" "$tmp/err" || fail "--run-args glob: $(cat "$tmp/err")"
	# 4. trace names that would break OUT/cells.tsv, and an OUT that would
	for n in $'tab\there' $'line\nbreak'; do
		cp "$trace" "$tmp/$n.ksmt"
		refused "--trace: a path with a control character" \
			"$sweep" --ksmsim "$ksmsim" --trace "$tmp/$n.ksmt" --out "$tmp/t"
		refused "--out: a path with a control character" \
			"$sweep" --ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --out "$tmp/$n"
	done
	[[ ! -e $tmp/t ]] || fail "a refused sweep made its folder"
	refused "'kernel x': a value with white space" \
		"$sweep" --ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --policy 'kernel x' --out "$tmp/t"
	no_canary "sweep"
	;;
sweep-lows)
	cp "$trace" "$tmp/a.ksmt"
	refused "unknown option '--bogus'" "$sweep" --ksmsim "$ksmsim" --bogus
	refused "--seed needs a value" "$sweep" --ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --seed
	refused "--out $tmp/none: no results folder" "$sweep" --merge --out "$tmp/none"
	: >"$tmp/afile"
	refused "--out $tmp/afile: not a folder" "$sweep" --ksmsim "$ksmsim" --trace "$tmp/a.ksmt" --out "$tmp/afile"
	# values `ksmsim gen` refuses are refused before any trace is made
	refused "--seed wants an unsigned 64-bit number, not '18446744073709551616'" \
		"$sweep" --ksmsim "$ksmsim" --workload vm-clones --seed 18446744073709551616 --out "$tmp/g"
	refused "--scale wants a factor, more than 0 and at most 1000, not '0'" "$sweep" --ksmsim "$ksmsim" --workload vm-clones --scale 0 --out "$tmp/g"
	refused "--workload vm-clones: vm-clones needs at least 16 pages" \
		"$sweep" --ksmsim "$ksmsim" --workload vm-clones --scale 0.00001 --out "$tmp/g"
	[[ ! -e $tmp/g ]] || fail "a refused sweep made its folder"
	# SIGTERM to the sweep alone (not its process group): its cells stop,
	# their unfinished files go, nothing runs on
	"$ksmsim" gen vm-clones --scale 0.5 -o "$tmp/big.ksmt"
	"$sweep" --ksmsim "$ksmsim" --trace "$tmp/big.ksmt" --hash xxhash,crc32c --jobs 2 --series \
		--out "$tmp/term" 2>"$tmp/log" &
	pid=$!
	for ((i = 0; i < 600; i++)); do
		[[ -n $(ls -A "$tmp/term/cells" 2>/dev/null) ]] && break
		sleep 0.05
	done
	[[ -n $(ls -A "$tmp/term/cells" 2>/dev/null) ]] || fail "no cell started: $(cat "$tmp/log")"
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	[[ $rc -eq 143 ]] || fail "TERM: exit $rc: $(cat "$tmp/log")"
	if command -v pgrep >/dev/null; then
		! pgrep -f -- "$tmp/big.ksmt" >/dev/null || fail "a cell runs on after TERM"
	fi
	[[ -z $(find "$tmp/term/cells" "$tmp/term/series" -type f -name ".*") ]] ||
		fail "TERM left $(ls -A "$tmp/term/cells" "$tmp/term/series")"
	# the sweep resumes: every cell runs
	"$sweep" --ksmsim "$ksmsim" --trace "$tmp/big.ksmt" --hash xxhash,crc32c --jobs 2 \
		--out "$tmp/term" 2>"$tmp/log" || fail "resume after TERM: $(cat "$tmp/log")"
	grep -qE '2 cells, [12] to run' "$tmp/log" || fail "resume: $(cat "$tmp/log")"
	[[ $(wc -l <"$tmp/term/sweep.csv") -eq 3 ]] || fail "resumed sweep rows"
	;;
*)
	echo "unknown case $case_" >&2
	exit 2
	;;
esac
echo "ok $case_"
