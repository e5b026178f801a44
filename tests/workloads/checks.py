# SPDX-License-Identifier: GPL-2.0-or-later
"""What the Python tests of workloads/ share: count checks, print each
failure, end with the tally and the exit status."""
import sys

failed = []
passed = [0]


def check(cond, what):
    if cond:
        passed[0] += 1
    else:
        failed.append(what)
        print("FAIL: " + what)


def finish():
    print("%d passed, %d failed" % (passed[0], len(failed)))
    sys.exit(1 if failed else 0)
