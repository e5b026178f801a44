#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Tests of ksmsim record (tests/record/meson.build).

  check_record.py pattern KSMSIM PATTERN   record PATTERN, check every page
  check_record.py errors  KSMSIM PATTERN   bad option values, missing command, not root,
                                           exits at once
  check_record.py sigint  KSMSIM PATTERN   SIGINT mid-capture: the trace replays
  check_record.py progress KSMSIM PATTERN  progress lines: --progress, --quiet, none

Exit 77 (skip) when not root, or when record refuses to run for want of
soft-dirty tracking (its auto mode compares page bytes instead).
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
PAGE = 4096
NPAGES, CHILD_PAGES = 64, 16


def page_bytes(k, i):
    """pattern.c's page i of phase k."""
    src = i - 1 if i % 4 == 1 else i
    if i % 4 == 3:
        return bytes([0x40 + k if k % 2 else 0]) * PAGE
    b = bytearray((j * (2 * k + 1) + src * 31 + k * 7) & 0xff for j in range(PAGE))
    b[0:8] = b"KSMPATT\0"
    b[8:12] = k.to_bytes(4, "little")
    b[12:16] = src.to_bytes(4, "little")
    return bytes(b)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def record(ksmsim, out, cmd, extra=(), **kw):
    return subprocess.run([ksmsim, "record", "--interval-ms", "50", *extra, "-o", out, "--", *cmd],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def need_root(ksmsim, tmp):
    if os.geteuid() != 0:
        print("not root: skipped")
        sys.exit(SKIP)
    # auto mode falls back to comparing bytes; only a refusal means skip
    r = record(ksmsim, os.path.join(tmp, "probe.ksmb"), ["true"])
    if r.returncode == 2 and "soft-dirty" in r.stderr:
        print("no soft-dirty tracking: skipped")
        sys.exit(SKIP)


def parse(text):
    """The records of a 'trace cat' output: (t, verb, args) and the blobs."""
    blobs, recs = {}, []
    for line in text.splitlines():
        line = line.split("#", 1)[0].split()
        if not line or line[0] == "ksmtrace":
            continue
        if line[0] == "blob":
            blobs[int(line[1])] = bytes.fromhex(line[2])
            continue
        recs.append((int(line[0]), line[1], line[2:]))
    return blobs, recs


def content(blobs, c):
    if c == "zero":
        return bytes(PAGE)
    if c.startswith("byte:"):
        return bytes([int(c[5:], 16)]) * PAGE
    if c.startswith("blob:"):
        return blobs[int(c[5:])]
    fail("unexpected content form " + c)


def test_pattern(ksmsim, pattern, tmp):
    need_root(ksmsim, tmp)
    out = os.path.join(tmp, "p.ksmb")
    r = record(ksmsim, out, [pattern])
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        fail("record exited %d" % r.returncode)
    check_pattern_trace(ksmsim, out)


def check_pattern_trace(ksmsim, out):
    """Every page pattern.c wrote is in the trace at out, byte for byte."""
    cat = subprocess.run([ksmsim, "trace", "cat", out], stdout=subprocess.PIPE, text=True, check=True)
    blobs, recs = parse(cat.stdout)
    if len(set(blobs.values())) != len(blobs):
        fail("a page's bytes are stored in more than one blob")
    if recs[0][:2] != (0, "set") or recs[0][2] != ["run", "1"]:
        fail("the trace does not start with 0 set run 1")

    # every captured page with a header is exactly the page pattern.c wrote
    pages = {}      # (mm, vpn) -> bytes now
    header_vpn = {}  # (mm, k, src) -> lowest vpn
    snapshots = []  # (t, copy of pages) after each capture instant
    advised = set()
    exits, unmaps = set(), []
    t_prev = None
    for t, verb, args in recs:
        if t_prev is not None and t != t_prev:
            snapshots.append(dict(pages))
        t_prev = t
        if verb == "write":
            mm, vpn, b = args[0], int(args[1], 16), content(blobs, args[2])
            if not any((mm, v) in advised for v in [vpn]):
                fail("write to %s 0x%x outside a mergeable range" % (mm, vpn))
            pages[(mm, vpn)] = b
            if b[:8] == b"KSMPATT\0":
                k, src = int.from_bytes(b[8:12], "little"), int.from_bytes(b[12:16], "little")
                if b != page_bytes(k, src):
                    fail("%s vpn 0x%x: bytes differ from phase %d page %d" % (mm, vpn, k, src))
                key = (mm, k, src)
                header_vpn[key] = min(header_vpn.get(key, vpn), vpn)
        elif verb == "advise" and args[3] == "mergeable":
            advised.update((args[0], v) for v in range(int(args[1], 16), int(args[1], 16) + int(args[2])))
        elif verb == "exit":
            exits.add(args[0])
        elif verb == "unmap":
            unmaps.append((args[0], int(args[1], 16), int(args[2])))
    snapshots.append(dict(pages))

    parents = {mm for (mm, k, s) in header_vpn if k == 0}
    children = {mm for (mm, k, s) in header_vpn if k == 100}
    if len(parents) != 1 or len(children) != 1:
        fail("expected one parent and one child mm, got %s and %s" % (parents, children))
    parent, child = parents.pop(), children.pop()

    def phase_seen(mm, k, n):
        base = header_vpn.get((mm, k, 0))
        if base is None:
            return False
        want = [page_bytes(k, i) for i in range(n)]
        return any(all(s.get((mm, base + i), bytes(PAGE)) == want[i] for i in range(n))
                   for s in snapshots)

    for k in range(3):
        if not phase_seen(parent, k, NPAGES):
            fail("no capture shows all %d pages of phase %d" % (NPAGES, k))
    if not phase_seen(child, 100, CHILD_PAGES):
        fail("no capture shows the child's pages")
    if child not in exits or parent not in exits:
        fail("missing exit of %s" % ({child, parent} - exits))
    base = header_vpn[(parent, 0, 0)]
    half = base + NPAGES // 2
    if not any(mm == parent and v <= half and v + n >= base + NPAGES for mm, v, n in unmaps):
        fail("the munmap of the second half is not in the trace")
    # the duplicate pages (i % 4 == 1) cost no blob: at most 32 distinct
    # non-uniform pages per phase are patterned, plus whatever the runtime wrote
    print("ok: %d records, %d blobs, %d snapshots" % (len(recs), len(blobs), len(snapshots)))

    run = subprocess.run([ksmsim, "run", "--trace", out, "--hash", "xxhash"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        fail("ksmsim run on the trace: %d: %s" % (run.returncode, run.stderr))
    if not out.endswith(".ksmb"):
        return
    # binary -> gz text -> binary keeps every byte
    subprocess.run([ksmsim, "trace", "convert", out, out + ".ksmt.gz"], check=True)
    subprocess.run([ksmsim, "trace", "convert", out + ".ksmt.gz", out + "2.ksmb"], check=True)
    if open(out, "rb").read() != open(out + "2.ksmb", "rb").read():
        fail("binary -> text -> binary changed the trace")


def test_errors(ksmsim, pattern, tmp):
    out = os.path.join(tmp, "e.ksmb")
    # a missing command: exit 2, a clear message, no file (root or not: it says why)
    r = record(ksmsim, out, ["/nonexistent/command-xyz"])
    if r.returncode != 2 or os.path.exists(out):
        fail("missing command: exit %d, file %s" % (r.returncode, os.path.exists(out)))
    if os.geteuid() == 0 and "command not found" not in r.stderr:
        fail("missing command: message %r" % r.stderr)
    r = record(ksmsim, out, ["no-such-command-xyz"])
    if r.returncode != 2 or os.path.exists(out):
        fail("missing command in PATH: exit %d" % r.returncode)
    # usage
    r = subprocess.run([ksmsim, "record", "--", "true"], stderr=subprocess.PIPE, text=True)
    if r.returncode != 2 or "-o FILE" not in r.stderr:
        fail("missing -o: exit %d %r" % (r.returncode, r.stderr))
    # option values: decimal only (util/parse.h), checked before anything runs
    for opt, val in [("--interval-ms", " -5"), ("--interval-ms", "0"), ("--interval-ms", "3600001"),
                     ("--interval-ms", "0x10"), ("--mark-every", "0"), ("--mark-every", "1e3"),
                     ("--max-seconds", "inf"), ("--max-seconds", " 1"), ("--max-seconds", "0"),
                     ("--find", "sometimes")]:
        r = subprocess.run([ksmsim, "record", opt, val, "-o", out, "--", "true"],
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 2 or ("bad %s '%s'" % (opt, val)) not in r.stderr or os.path.exists(out):
            fail("%s %r: exit %d %r" % (opt, val, r.returncode, r.stderr))
    if os.geteuid() != 0:
        r = record(ksmsim, out, ["true"])
        if r.returncode != 2 or "must run as root" not in r.stderr:
            fail("not root: exit %d %r" % (r.returncode, r.stderr))
        print("ok (as non-root)")
        return
    # not root, from root: drop to nobody where setpriv exists
    setpriv = shutil.which("setpriv")
    if setpriv:
        r = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
                            ksmsim, "record", "-o", os.path.join("/tmp", "never.ksmb"), "--", "true"],
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 2 or "must run as root" not in r.stderr:
            fail("not root: exit %d %r" % (r.returncode, r.stderr))
    need_root(ksmsim, tmp)
    # a command that exits at once: exit 1 and a valid (empty) trace; on a
    # slow machine the first capture may still catch it alive (exit 0)
    r = record(ksmsim, out, ["true"])
    if not (r.returncode == 1 and "before anything was captured" in r.stderr) and r.returncode != 0:
        fail("exits at once: exit %d %r" % (r.returncode, r.stderr))
    subprocess.run([ksmsim, "trace", "stat", out], stdout=subprocess.DEVNULL, check=True)
    print("ok")


def test_sigint(ksmsim, pattern, tmp):
    need_root(ksmsim, tmp)
    out = os.path.join(tmp, "s.ksmt.gz")
    p = subprocess.Popen([ksmsim, "record", "--interval-ms", "50", "-o", out, "--", pattern, "loop"],
                         stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("record did not stop on SIGINT")
    sys.stderr.write(err)
    if p.returncode != 130:
        fail("exit %d after SIGINT, expected 130" % p.returncode)
    if not os.path.exists(out):
        fail("no trace after SIGINT")
    run = subprocess.run([ksmsim, "run", "--trace", out], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        fail("the interrupted trace does not replay: %s" % run.stderr)
    cat = subprocess.run([ksmsim, "trace", "cat", out], stdout=subprocess.PIPE, text=True, check=True)
    blobs, recs = parse(cat.stdout)
    if not any(v == "write" for _, v, _ in recs) or recs[-1][1] != "mark":
        fail("the interrupted trace lacks writes or its final mark")
    # the command was stopped too: its pid is in its mm's name, COMM.PID
    pids = {int(args[0].rsplit(".", 1)[1]) for _, v, args in recs if v == "spawn"}
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            fail("the command (pid %d) still runs" % pid)
    print("ok: %d records" % len(recs))


def test_progress(ksmsim, pattern, tmp):
    need_root(ksmsim, tmp)
    import re
    line = re.compile(r"^ksmsim record: recording: \d+ page writes, 100\.0%", re.M)
    for extra, want in ((["--progress"], True), ([], False), (["--quiet", "--progress"], False)):
        out = os.path.join(tmp, "g.ksmb")
        r = record(ksmsim, out, ["sleep", "5"], ["--max-seconds", "1", *extra])
        if r.returncode != 0:
            fail("record %s exited %d: %s" % (extra, r.returncode, r.stderr))
        got = "recording:" in r.stderr
        if got != want:
            fail("record %s: progress %s on a non-terminal stderr:\n%s"
                 % (extra, "shown" if got else "missing", r.stderr))
        if want and (not line.search(r.stderr) or "\r" in r.stderr):
            fail("record %s: no final 100%% line, or carriage returns:\n%s" % (extra, r.stderr))
        os.unlink(out)
    print("ok: progress shown with --progress only, ending at 100%")


def main():
    mode, ksmsim, pattern = sys.argv[1:4]
    if mode == "check":     # check an existing trace: check_record.py check KSMSIM TRACE
        check_pattern_trace(ksmsim, pattern)
        return
    with tempfile.TemporaryDirectory(prefix="ksmsim-record-") as tmp:
        {"pattern": test_pattern, "errors": test_errors, "sigint": test_sigint,
         "progress": test_progress}[mode](ksmsim, pattern, tmp)


if __name__ == "__main__":
    main()
