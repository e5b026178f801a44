#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# meson install --destdir: the binary, the record shim in libexec (where
# the installed binary finds it), a man page per command of ksmsim --help
# that man -l renders, made from the same text as --help (regenerated from
# the binary, the same bytes), the bash completion (commands and options
# complete), and the docs.
#   test_install.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v man > /dev/null || { echo "skipped: no man (apt-get install man-db)" >&2; exit 77; }
meson install -C "$build" --destdir "$tmp/d" --no-rebuild --quiet > "$tmp/install.log" 2>&1 ||
	fail "meson install: $(tail -3 "$tmp/install.log")"
bin=$(find "$tmp/d" -path '*/bin/ksmsim' -type f)
[ -x "$bin" ] || fail "no bin/ksmsim installed"
root=$(dirname "$(dirname "$bin")")
[ -f "$root/libexec/ksmsim/ksmsim-record-shim.so" ] || fail "no shim in libexec/ksmsim"
[ ! -e "$root/bin/ksmsim-record-shim.so" ] || fail "the shim is still in bin/"
for doc in README.md DEVELOPING.md FORMAT.md MODEL.md; do
	[ -s "$root/share/doc/ksmsim/$doc" ] || fail "doc $doc not installed"
done
cmp -s "$root/share/doc/ksmsim/README.md" "$src/README.md" || fail "README.md differs from the source's"
man1=$root/share/man/man1
cmds=$("$bin" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 { print $1 }')
for page in ksmsim $(for c in $cmds; do echo "ksmsim-$c"; done); do
	f=$man1/$page.1
	[ -s "$f" ] || fail "no man page $page.1"
	MANWIDTH=100 man -l "$f" > "$tmp/out" 2> "$tmp/err" || fail "man -l $page.1: $(cat "$tmp/err")"
	[ ! -s "$tmp/err" ] || fail "man -l $page.1 warns: $(head -3 "$tmp/err")"
	grep -q '^NAME' "$tmp/out" && grep -q '^DESCRIPTION' "$tmp/out" || fail "$page.1: no NAME or DESCRIPTION"
	c=${page#ksmsim-}
	[ "$page" = ksmsim ] && c=-
	python3 "$src/cli/help2man.py" "$bin" "$c" "$tmp/again.1" || fail "help2man $c"
	cmp -s "$f" "$tmp/again.1" || fail "$page.1 is not what the installed binary's --help makes"
done
# the rendered page holds the help's text: one distinctive line of each
MANWIDTH=200 man -l "$man1/ksmsim-verify.1" 2> /dev/null | grep -q -- '--setting SPEC' || fail "verify's page lacks --setting"
comp=$root/share/bash-completion/completions/ksmsim.bash
[ -s "$comp" ] || fail "no bash completion"
got=$(bash -c 'source "$1"; COMP_WORDS=(ksmsim tu); COMP_CWORD=1; _ksmsim; echo "${COMPREPLY[*]}"' _ "$comp")
[ "$got" = tune ] || fail "completion of 'ksmsim tu': '$got'"
got=$(bash -c 'source "$1"; COMP_WORDS=(ksmsim verify --mi); COMP_CWORD=2; _ksmsim; echo "${COMPREPLY[*]}"' _ "$comp")
[ "$got" = --minutes ] || fail "completion of 'ksmsim verify --mi': '$got'"
got=$(bash -c 'source "$1"; COMP_WORDS=(ksmsim help merge); COMP_CWORD=2; _ksmsim; echo "${COMPREPLY[*]}"' _ "$comp")
[ "$got" = merge-exec ] || fail "completion of 'ksmsim help merge': '$got'"
# the installed binary finds the installed shim (as root, where PAGEMAP_SCAN can be asked for)
if [ "$(id -u)" = 0 ]; then
	(cd "$tmp" && "$bin" record --find pagemap-scan --quiet -o "$tmp/x.ksmb" -- true 2> "$tmp/rec.err")
	if grep -q 'no shim' "$tmp/rec.err"; then fail "installed ksmsim did not find its shim: $(cat "$tmp/rec.err")"; fi
fi
"$bin" --version | grep -q 'commit' || fail "--version names no commit"
echo ok
