# SPDX-License-Identifier: GPL-2.0-or-later
# Shared settings of the real-trace scripts (sourced, not run).
# KSMSIM: the binary (default: build/cli/ksmsim of this checkout);
# OUT: where traces go (default /tmp/ksmsim-real); WORK: scratch space.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
KSMSIM=${KSMSIM:-$top/build/cli/ksmsim}
OUT=${OUT:-/tmp/ksmsim-real}
WORK=${WORK:-/tmp/ksmsim-real-work}
mkdir -p "$OUT" "$WORK"
if [ "$(id -u)" != 0 ]; then
	echo "$0: run as root (ksmsim record reads other processes' memory)" >&2
	exit 2
fi
if [ ! -x "$KSMSIM" ]; then
	echo "$0: no ksmsim at $KSMSIM (build it, or set KSMSIM)" >&2
	exit 2
fi

# apt-get install only what is missing, quietly
need() {
	missing=
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
	fi
}

done_msg() {
	echo "trace: $1"
	"$KSMSIM" trace stat "$1" | sed -n '1,9p'
}
