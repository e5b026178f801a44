#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# `ksmsim help CMD` prints the same bytes as `ksmsim CMD --help` for every
# command the top-level help lists; an unknown one is one line and exit 2;
# --version names the commit: git describe of the source tree when it is a
# git checkout, the word "unknown" otherwise.
#   test_help.sh KSMSIM SOURCE_DIR
set -u
ksmsim=$1 src=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

cmds=$("$ksmsim" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 { print $1 }')
[ "$(echo "$cmds" | wc -l)" -ge 12 ] || fail "top-level help lists too few commands: $cmds"
for c in $cmds; do
	"$ksmsim" help "$c" > "$tmp/a" || fail "help $c: exit $?"
	"$ksmsim" "$c" --help > "$tmp/b" || fail "$c --help: exit $?"
	cmp -s "$tmp/a" "$tmp/b" || fail "help $c differs from $c --help"
	head -1 "$tmp/a" | grep -q "ksmsim $c" || fail "help $c: first line names no '$c': $(head -1 "$tmp/a")"
done
"$ksmsim" help no-such-command > "$tmp/out" 2> "$tmp/err"
[ $? = 2 ] || fail "help of an unknown command: want exit 2"
[ ! -s "$tmp/out" ] && [ "$(wc -l < "$tmp/err")" = 1 ] || fail "unknown command: $(cat "$tmp/err")"
"$ksmsim" help | grep -q '^Commands:' || fail "plain help lists no commands"

v=$("$ksmsim" --version) || fail "--version: exit $?"
echo "$v" | grep -Eq '^ksmsim [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{7,}|[^ ]+-g[0-9a-f]{7,})(-dirty)?\)$|\(commit unknown\)$' ||
	fail "--version: '$v'"
if git -C "$src" rev-parse --git-dir > /dev/null 2>&1; then
	# the commit built (the build may predate a commit made since: compare the hash only)
	built=$(echo "$v" | sed -n 's/.*(commit \([^)]*\)).*/\1/p' | sed 's/-dirty$//; s/.*-g//')
	git -C "$src" cat-file -e "$built^{commit}" 2> /dev/null || fail "--version names '$built', no commit of $src"
fi
echo ok
