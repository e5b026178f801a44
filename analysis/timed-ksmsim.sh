#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# ksmsim under /usr/bin/time, for sweep.sh --ksmsim: each `ksmsim run`
# appends one tab-separated line to $KSMSIM_TIMES (wall s, user s, system
# s, peak RSS KiB, then the run's arguments), so a study can say what
# every run cost. Other subcommands, or no $KSMSIM_TIMES, run as they are.
# The real binary: $KSMSIM_REAL.
set -euo pipefail
real=${KSMSIM_REAL:?timed-ksmsim.sh: set KSMSIM_REAL to the ksmsim binary}
if [[ ${1:-} != run || -z ${KSMSIM_TIMES:-} ]]; then
	exec "$real" "$@"
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# a TERM or INT (sweep.sh stopping its cells) goes on to the run itself
stop() {
	local c
	for c in $(pgrep -P "$tp" 2>/dev/null); do kill -TERM "$c" 2>/dev/null || true; done
	wait "$tp" 2>/dev/null || true
	exit "$1"
}
/usr/bin/time -f '%e	%U	%S	%M' -o "$tmp" "$real" "$@" &
tp=$!
trap 'stop 143' TERM
trap 'stop 130' INT
rc=0
wait "$tp" || rc=$?
trap - TERM INT
if ((rc == 0)); then
	# one write of one short line: lines of runs that end together do not mix
	printf '%s\t%s\n' "$(tail -n 1 "$tmp")" "$*" >>"$KSMSIM_TIMES"
fi
exit $rc
