#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# csv2tsv.py CSV TSV: reads CSV (RFC 4180: quoted fields may hold commas,
# quotes and line breaks, as ksmsim writes them) and writes TSV, the header
# and then one line per row, fields separated by tabs. A tab, line break or
# other control character inside a field becomes a space, so every row is
# one line and the shell and awk can split it on tabs; nothing else changes.
# Blank lines are dropped. Exit 0, or 2 with one line on standard error
# ("CSV: why") when the file cannot be read, is not CSV or has no header.
# analysis/plot.sh reads every CSV through this.
import csv
import re
import sys

CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def fail(path, why):
    print(CONTROL.sub("?", f"{path}: {why}"), file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) != 3:
        print("usage: csv2tsv.py CSV TSV", file=sys.stderr)
        sys.exit(2)
    src, dst = sys.argv[1], sys.argv[2]
    # a field may be larger than the module's default limit (128 KiB)
    csv.field_size_limit(1 << 24)
    rows = []
    try:
        # bytes that are not UTF-8 go through unchanged (surrogateescape)
        with open(src, newline="", encoding="utf-8", errors="surrogateescape") as f:
            for row in csv.reader(f, strict=True):
                if row:
                    rows.append("\t".join(CONTROL.sub(" ", v) for v in row))
    except IsADirectoryError:
        fail(src, "is a folder, not a CSV")
    except OSError as e:
        fail(src, e.strerror or "cannot be read")
    except csv.Error as e:
        fail(src, f"not CSV ({e})")
    if not rows:
        fail(src, "is empty")
    try:
        with open(dst, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write("\n".join(rows) + "\n")
    except OSError as e:
        fail(dst, e.strerror or "cannot be written")


main()
