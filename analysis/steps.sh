# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by regenerate.sh and policies.sh: the ksmsim binary ($KSMSIM,
# else the checkout's build*/cli/ksmsim) and `step CMD...`, which echoes
# a command, runs it and prints its run time.
# usage: . steps.sh NAME (NAME: the script, for messages)
ksmsim=${KSMSIM:-}
if [[ -z $ksmsim ]]; then
	for b in "$here"/../build/cli/ksmsim "$here"/../build*/cli/ksmsim; do
		[[ -x $b ]] && { ksmsim=$(cd "$(dirname "$b")" && pwd)/ksmsim; break; }
	done
fi
[[ -x $ksmsim ]] || { echo "$1: build ksmsim first (or set KSMSIM)" >&2; exit 2; }
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }'; }
step() {
	local t=$EPOCHREALTIME
	echo "+ $*" >&2
	"$@"
	echo "  ($(since "$t") s)" >&2
}
t0=$EPOCHREALTIME
