#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The front door's contract, fuzzed: every command given hostile strings
(a newline, ESC, CR, BEL, a tab, invalid UTF-8, a raw 0x9b, U+009B, a very
long word, the empty word, '-', '--') as option values, in unknown options
and as operands exits 0, 1 or 2 and writes at most one line on standard
error (exactly one when it fails), with no raw control byte and nothing
that is not valid UTF-8 or is a C1 control (issue 46).

The options are read from each command's own --help, so a new option is
fuzzed without touching this file. Nothing here reaches the live KSM or
records a program, though the suite may run as root: every option form
ends with an unknown option (--zz-fuzz-end), which getopt reaches before a
command does any work, and the operand forms are refused while parsing
(record gets no -o, live, bench and the pool commands an operand they
refuse). Runs in a temporary directory, standard input /dev/null.

usage: cli_fuzz.py KSMSIM
"""
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time

HOSTILE = [
    b"a\nb", b"\x1b[31mred", b"a\rb", b"bell\x07", b"tab\tx", b"\xff\xfe",
    b"csi\x9b31m", b"c1\xc2\x9bx", b"\xe2\x82", b"x" * 100000, b"", b"-", b"--",
    b"=\n", b"\x7f",
]
END = b"--zz-fuzz-end"

# the forms whose --help lists options, and how to reach each command
FORMS = [
    ["run"], ["live"], ["diff"], ["trace", "convert"], ["trace", "retime"], ["gen"],
    ["record"], ["collide", "birthday"], ["collide", "false-positive"], ["collide", "ksm"],
    ["advise"], ["tune"], ["hashes"], ["policies"], ["bench", "trace"], ["bench", "costs"],
    ["bench", "model"], ["bench", "calibrate"],
]
# operand forms: refused while parsing, whatever the operand (see above)
OPERAND_FORMS = [
    [], ["run"], ["live"], ["diff"], ["diff", "a.csv"], ["trace"], ["trace", "stat"],
    ["trace", "cat"], ["gen"], ["record"], ["collide"], ["collide", "birthday"],
    ["collide", "ksm"], ["advise"], ["tune"], ["hashes"], ["policies"], ["bench"],
    ["bench", "trace"], ["bench", "calibrate"],
]


# forms that do real work given nothing at all (bench calibrate: the live KSM)
RUN_ON_EMPTY = [["collide", "birthday"], ["collide", "ksm"], ["bench", "trace"],
                ["bench", "calibrate"], ["hashes"], ["policies"]]


def options_of(ksmsim, form):
    """Every --name a form's --help mentions."""
    r = subprocess.run([ksmsim, *form, "--help"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=20)
    names = set(re.findall(rb"(?<![\w-])--([a-z][a-z0-9_-]*[a-z0-9])", r.stdout))
    return sorted(n for n in names if n not in (b"help", b"zz-fuzz-end"))


def problem(rc, err):
    """What breaks the contract in one invocation's exit status and stderr, or None."""
    if rc not in (0, 1, 2):
        return "exit %d" % rc
    lines = err.count(b"\n")
    if lines > 1 or (rc != 0 and lines != 1) or (err and not err.endswith(b"\n")):
        return "%d lines on stderr" % lines
    body = err[:-1]
    raw = [b for b in body if b < 0x20 or b == 0x7f]
    if raw:
        return "raw control byte 0x%02x" % raw[0]
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        return "invalid UTF-8 (%s)" % e.reason
    if any(0x80 <= ord(ch) <= 0x9f for ch in text):
        return "a raw C1 control"
    return None


def main():
    ksmsim = os.path.realpath(sys.argv[1])
    t0 = time.monotonic()
    cases = []
    for h in HOSTILE:
        cases.append([h])				# ksmsim H
        for form in OPERAND_FORMS:
            # '--' leaves these no operand: they would run their study
            if h != b"--" or form not in RUN_ON_EMPTY:
                cases.append([*form, h])
        for form in FORMS:
            f = [a.encode() for a in form]
            cases.append([*f, b"--x" + h, END])	# an unknown option
            if h and not h.startswith(b"-"):
                cases.append([*f, b"-" + h, END])
    # every option of every form, three hostile values each, rotating through
    # the list so that every value meets every form
    k = 0
    for form in FORMS:
        f = [a.encode() for a in form]
        for name in options_of(ksmsim, form):
            for j in range(3):
                h = HOSTILE[k % len(HOSTILE)]
                k += 1
                # the attached form goes through the same parse; one in three
                cases.append([*f, b"--" + name + (b"=" + h if j == 2 else b""),
                              *([] if j == 2 else [h]), END])
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        def one(args):
            argv = [ksmsim.encode(), *[a if isinstance(a, bytes) else a.encode() for a in args]]
            try:
                r = subprocess.run(argv, cwd=tmp, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)
                return args, problem(r.returncode, r.stderr), r.stderr
            except subprocess.TimeoutExpired:
                return args, "timed out", b""
        # a few at once: the time is in fork and exec, not in ksmsim
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            for args, why, err in pool.map(one, cases):
                if why:
                    failures += 1
                    if failures <= 20:
                        shown = [a[:40] for a in args]
                        print("FAIL ksmsim %r: %s: %r" % (shown, why, err[:300]))
    took = time.monotonic() - t0
    print("%d invocations, %d broke the contract, %.1f s" % (len(cases), failures, took))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
