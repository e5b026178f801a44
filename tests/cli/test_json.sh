#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --json on run, tune, advise and diff: each prints one object that
# `python3 -m json.tool` parses, carrying the same fields as the CSV the
# command writes (the same names, the same values); verify's is checked
# by cli-verify-live.
#   test_json.sh KSMSIM SOURCE_DIR
set -uo pipefail
ksmsim=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
trace=$src/traces/samples/default.ksmt
parse() { python3 -m json.tool "$1" > /dev/null || fail "$1 does not parse: $(head -c 300 "$1")"; }
same() { # same JSON_OBJECTS CSV: every CSV row's fields, by name and value
	python3 - "$1" "$2" <<'P' || fail "$1 and $2 differ"
import csv, json, sys
objs = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith('#')))
objs = objs if isinstance(objs, list) else [objs]
assert len(objs) == len(rows) and rows, (len(objs), len(rows))
for o, r in zip(objs, rows):
    assert list(o) == list(r), 'the same fields in the same order'
    for k, v in r.items():
        j = o[k]
        if v == '':
            assert j is None, (k, j)
        elif isinstance(j, (int, float)) and not isinstance(j, bool):
            assert float(v) == j, (k, v, j)
        else:
            assert j == v, (k, v, j)
P
}

# run: the summary row
"$ksmsim" run --trace "$trace" --json > "$tmp/run.json" || fail "run --json"
parse "$tmp/run.json"
"$ksmsim" run --trace "$trace" --quiet --summary-csv "$tmp/run.csv" || fail "run --summary-csv"
same "$tmp/run.json" "$tmp/run.csv"
[ "$(wc -l < "$tmp/run.json")" = 1 ] || fail "run --json: not one line"

# tune: the rows as 'settings'
"$ksmsim" tune "$trace" --quiet --setting pages_to_scan=100 --setting pages_to_scan=1000 \
	--json -o "$tmp/tune.csv" > "$tmp/tune.json" || fail "tune --json"
parse "$tmp/tune.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["command"] == "tune" and d["recommended"]; json.dump(d["settings"], open(sys.argv[2], "w"))' \
	"$tmp/tune.json" "$tmp/tune-rows.json" || fail "tune --json's frame"
same "$tmp/tune-rows.json" "$tmp/tune.csv"

# advise: the rows as 'rows'
"$ksmsim" advise "$trace" --quiet --policies kernel --hashes xxhash,crc32c --json \
	-o "$tmp/advise.csv" > "$tmp/advise.json" || fail "advise --json"
parse "$tmp/advise.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["command"] == "advise" and d["rows"][d["pick"]]["pick"] == 1; json.dump(d["rows"], open(sys.argv[2], "w"))' \
	"$tmp/advise.json" "$tmp/advise-rows.json" || fail "advise --json's frame"
same "$tmp/advise-rows.json" "$tmp/advise.csv"

# diff: a file against itself agrees; against another setting it does not
"$ksmsim" run --trace "$trace" --quiet --marks-csv "$tmp/a.csv" || fail "run a"
"$ksmsim" run --trace "$trace" --quiet --pages-to-scan 50 --marks-csv "$tmp/b.csv" || fail "run b"
"$ksmsim" diff "$tmp/a.csv" "$tmp/a.csv" --json > "$tmp/same.json" || fail "diff of one file: $?"
parse "$tmp/same.json"
"$ksmsim" diff "$tmp/a.csv" "$tmp/b.csv" --json > "$tmp/d.json"
[ $? = 1 ] || fail "diff --json of two settings: want exit 1"
parse "$tmp/d.json"
"$ksmsim" diff "$tmp/a.csv" "$tmp/b.csv" > "$tmp/d.txt"
python3 - "$tmp/same.json" "$tmp/d.json" "$tmp/d.txt" <<'P' || fail "diff --json"
import json, sys
s, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert s['agree'] is True and not s['differences'], s
assert d['agree'] is False and d['differences'], d
text = open(sys.argv[3]).read()
n = int(text.split(' difference')[0].split('\n')[-1])
assert len(d['differences']) == n, (len(d['differences']), n)
for c in d['differences']:
    if c['delta'] is not None:
        assert int(c['b']) - int(c['a']) == c['delta'], c
P
echo ok
