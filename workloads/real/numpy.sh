#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Number-crunching, recorded: NumPy matrix multiplies and STREAM-like sweeps
# (copy, scale, add, triad) over arrays of N doubles (default 8M: 64 MiB each).
. "$(dirname "$0")/common.sh"
need python3-numpy
trace=$OUT/numpy.ksmb
"$KSMSIM" record --interval-ms "${INTERVAL_MS:-200}" --max-seconds "${MAX:-300}" ${BASELINE:+--baseline} \
	-o "$trace" -- /usr/bin/python3 "$(dirname "$0")/numpy_work.py" "${N:-8000000}"
done_msg "$trace"
