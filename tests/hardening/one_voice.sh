#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One voice at the front door (issue 42): every message goes through the one
# funnel, util/escape.c's vreportf (cli/report.c's cli_* in cli/), which
# escapes and writes exactly one line. This fails when
#  - a file of cli/ other than report.c writes to standard error itself
#    (fprintf(stderr, fputs(..., stderr), usage(stderr), perror, g_printerr,
#    write(STDERR_FILENO, ...), ...);
#  - a library outside tests/ calls fprintf(stderr or fputs(..., stderr) in a
#    file not named below (each a reason: the funnel itself, and progress
#    lines redrawn in place with \r, which are no messages).
# usage: one_voice.sh SOURCE-TOP
set -u
top=$(realpath "${1:?usage: one_voice.sh SOURCE-TOP}")
cd "$top" || exit 2
fails=0
# a call that writes to stderr, or passes it on; comments and strings aside
pat='fprintf[[:space:]]*\([[:space:]]*stderr|vfprintf[[:space:]]*\([[:space:]]*stderr|[(,][[:space:]]*stderr[[:space:]]*[,)]|\bwrite[[:space:]]*\([[:space:]]*(2|STDERR_FILENO)[[:space:]]*,|\b(perror|g_printerr|g_warning|warnx?|errx?)[[:space:]]*\('
strip() {	# FILE: its code, comments and string literals blanked, line numbers kept
	# char literals first ('"' opens no string), then strings, then // comments
	# (a "//" inside a string is no comment); '#' delimits: '|' would make
	# the alternation \| a literal bar
	sed -e "s#'\\\\.'#''#g; s#'[^'\\\\]'#''#g" -e 's#"\([^"\\]\|\\.\)*"#""#g' \
		-e 's#//.*$##' "$1" |
		awk '{ while (match($0, /\/\*([^*]|\*+[^*\/])*\*+\//)) $0 = substr($0, 1, RSTART - 1) substr($0, RSTART + RLENGTH)
		       if (inc) { if (index($0, "*/")) { $0 = substr($0, index($0, "*/") + 2); inc = 0 } else $0 = "" }
		       if (index($0, "/*")) { $0 = substr($0, 1, index($0, "/*") - 1); inc = 1 }
		       print }'
}
for f in cli/*.c; do
	[ "$f" = cli/report.c ] && continue
	if hits=$(strip "$f" | grep -nE "$pat"); then
		echo "FAIL $f writes to stderr outside the funnel (cli.h: cli_error, cli_notice, ...):"
		echo "$hits" | sed 's/^/     /'
		fails=$((fails + 1))
	fi
done
# outside cli/: fprintf(stderr / fputs(stderr) only where a reason is given above
allowed=' util/escape.c util/progress.c bench/bench_costs.c bench/record_throughput.c '
for f in $(git ls-files '*.c' 2>/dev/null || find . -name '*.c' | sed 's|^\./||'); do
	case $f in tests/*|cli/*|build/*) continue ;; esac
	case $allowed in *" $f "*) continue ;; esac
	if hits=$(strip "$f" | grep -nE 'fprintf[[:space:]]*\([[:space:]]*stderr|fputs[[:space:]]*\(.*,[[:space:]]*stderr[[:space:]]*\)'); then
		echo "FAIL $f writes to stderr without util/escape.h's reportf:"
		echo "$hits" | sed 's/^/     /'
		fails=$((fails + 1))
	fi
done
[ $fails -eq 0 ] && echo "ok: one voice (cli/ through report.c, libraries through reportf)"
[ $fails -eq 0 ]
