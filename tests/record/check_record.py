#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Tests of ksmsim record (tests/record/meson.build).

  check_record.py pattern KSMSIM PATTERN   record PATTERN, check every page
  check_record.py pattern-digest KSMSIM PATTERN  the same with --content digest: every
                                           page's digest is the digest of what PATTERN wrote
  check_record.py errors  KSMSIM PATTERN   bad option values, missing command, not root,
                                           exits at once
  check_record.py sigint  KSMSIM PATTERN   SIGINT mid-capture: the trace replays
  check_record.py sigpipe KSMSIM PATTERN   SIGPIPE (stderr's reader gone): the same, exit 141
  check_record.py progress KSMSIM PATTERN  progress lines: --progress, --quiet, none
  check_record.py hugepage KSMSIM PATTERN  a range advised MADV_HUGEPAGE (as QEMU does guest
                                           RAM) is advised hugepage in the trace, 2 MiB
                                           aligned, and the model faults THPs in it

The scope (--scope advised|all), with ADVISE (advise.c: regions of one byte each,
A advised MADV_MERGEABLE, B never, C advised mid-run when A is unadvised), under
every detector available:

  check_record.py scope KSMSIM ADVISE      advised: only A's and C's pages, C's map and
                                           advise at its advice, A's advise unmergeable;
                                           all: B's pages too
  check_record.py scope-prctl KSMSIM ADVISE  a process that set PR_SET_MEMORY_MERGE:
                                           advised records every region

Attached to running processes (ATTACH: attach.c, which writes pattern.c's
pages, forks a long-lived and short-lived children, and checks its own pages):

  check_record.py attach KSMSIM ATTACH     record --pid: the trace replays (run --check),
                                           has the parent's, the child's and the short
                                           children's mms (exit records for those that
                                           ended) and every page they wrote; after the
                                           detach they run on, untraced, no userfaultfd,
                                           same maps, and their pages held throughout
  check_record.py cgroup KSMSIM ATTACH     record --cgroup on a cgroup v2 directory made
                                           for it (removed on every path): two processes
                                           in it, a third that joins mid-capture and
                                           forks; none outside it
  check_record.py attach-self KSMSIM ATTACH  record --pid of the shell that started it:
                                           the shell is captured, the recorder never
  check_record.py attach-errors KSMSIM ATTACH  a pid that does not exist, a kernel
                                           thread, a bad list, --find pagemap-scan, a
                                           path that is not a cgroup v2 directory, a PID
                                           with a COMMAND: one line, exit 2, no file

The detectors, with WRITER (writer.c: known stores in steps, pauses far
longer than the interval between them, so each step has captures of its own):

  check_record.py pagemap-scan KSMSIM PATTERN WRITER  the trace's written pages are
                                           exactly the writer's stores, same-byte ones too
  check_record.py agree KSMSIM PATTERN WRITER   the same writer under compare and
                                           pagemap-scan: the same changed pages, step by step
  check_record.py fallback KSMSIM PATTERN WRITER  a process without the shim
                                           (env -u LD_PRELOAD) is recorded by compare
  check_record.py orphan KSMSIM PATTERN WRITER  the recorder is killed (SIGKILL): the
                                           write-protected writer runs on unharmed
  check_record.py measure KSMSIM PATTERN WRITER [NPAGES STEPS PAUSE_MS INTERVAL_MS]
                                           not a test: CPU time and pages of both
                                           detectors on one workload (workloads/real/README.md)

Exit 77 (skip) when not root, or when record refuses to run for want of
soft-dirty tracking (its auto mode compares page bytes instead); the
detector tests also when --find pagemap-scan is not available (no
PAGEMAP_SCAN, userfaultfd or shim).
"""
import re
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


# digest:<hex> -> the bytes it stands for, for the pages pattern.c writes
DIGESTS = {}


def known_digests(ksmsim, tmp):
    """The digests of pattern.c's pages, as ksmsim's converter computes them."""
    pages = [page_bytes(k, i) for k in list(range(3)) + [100] for i in range(NPAGES)]
    src = os.path.join(tmp, "known.ksmt")
    with open(src, "w") as f:
        f.write("ksmtrace 1\n0 spawn p\n0 map p 0 %d\n" % len(pages))
        for v, b in enumerate(pages):
            f.write("0 write p 0x%x bytes:0:%s\n" % (v, b.hex()))
    out = subprocess.run([ksmsim, "trace", "convert", "--content", "digest", src, "-"],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    for line in out.splitlines():
        w = line.split()
        if len(w) == 5 and w[1] == "write" and w[4].startswith("digest:"):
            DIGESTS[w[4]] = pages[int(w[3], 16)]
    nonzero = {b for b in pages if any(b)}
    if len(DIGESTS) != len(nonzero):
        fail("the converter gave %d digests for %d non-zero pages" % (len(DIGESTS), len(nonzero)))


def content(blobs, c):
    if c.startswith("digest:"):
        # a page of pattern.c's, or one of the runtime's: bytes of its own
        return DIGESTS.get(c, c.encode().ljust(PAGE, b"\x01"))
    if c == "zero":
        return bytes(PAGE)
    if c.startswith("byte:"):
        return bytes([int(c[5:], 16)]) * PAGE
    if c.startswith("blob:"):
        return blobs[int(c[5:])]
    fail("unexpected content form " + c)


# A process that advises 4 MiB of an 8 MiB private mapping MADV_HUGEPAGE at a
# 2 MiB boundary, as QEMU does its guest RAM, and writes a few pages there.
HUGE_PROG = r"""
import ctypes, mmap, sys, time
m = mmap.mmap(-1, 8 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
off = (-addr) % (2 << 20)
m.madvise(mmap.MADV_HUGEPAGE, off, 4 << 20)
time.sleep(0.4)
for i in range(8):
    m[off + i * 4096] = 0x5a
m[off + (3 << 20)] = 0x33
time.sleep(0.4)
print(hex((addr + off) // 4096))
"""


def test_hugepage(ksmsim, pattern, tmp):
    need_root(ksmsim, tmp)
    out = os.path.join(tmp, "h.ksmb")
    r = record(ksmsim, out, [sys.executable, "-c", HUGE_PROG])
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        fail("record exited %d" % r.returncode)
    text = subprocess.run([ksmsim, "trace", "cat", out], stdout=subprocess.PIPE, text=True,
                          check=True).stdout
    if not text.startswith("ksmtrace 3"):
        fail("record did not write version 3: " + text.splitlines()[0])
    _, recs = parse(text)
    huge = [a for _, v, a in recs if v == "advise" and a[-1] == "hugepage"]
    if len(huge) != 1:
        fail("want one advise hugepage, got %r" % huge)
    vpn, n = int(huge[0][1], 16), int(huge[0][2])
    if n != 1024 or vpn % 512:
        fail("advise hugepage %s %d: want 1024 pages at a 512-aligned vpn" % (huge[0][1], n))
    # the stores land in that range, at the offsets they had
    writes = sorted(int(a[1], 16) - vpn for _, v, a in recs
                    if v == "write" and a[0] == huge[0][0] and vpn <= int(a[1], 16) < vpn + n)
    if writes[:8] != list(range(8)) or 768 not in writes:
        fail("stores in the hugepage range at %r, want 0-7 and 768" % writes[:12])
    run = subprocess.run([ksmsim, "run", "--check", "--trace", out], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        fail("run --check: " + run.stderr)
    m = re.search(r"thp_fault_alloc\s+(\d+)", run.stdout)
    if not m or int(m.group(1)) != 2:
        fail("the model faulted %s THPs, want 2 (one per 2 MiB written)" % (m and m.group(1)))
    print("ok   hugepage: advise hugepage %s 1024, 2 THPs in the model" % huge[0][1])


def scope_detectors(ksmsim, tmp):
    """The detectors this machine has: compare, and soft-dirty and pagemap-scan if they work."""
    have = ["compare"]
    for find in ("soft-dirty", "pagemap-scan"):
        r = record(ksmsim, os.path.join(tmp, "probe.ksmb"), ["true"], ["--find", find])
        if r.returncode == 0:
            have.append(find)
    return have


def record_scope(ksmsim, advise, tmp, find, scope, mode):
    """Records ADVISE MODE: (records, {byte: set of (mm, vpn) written with it}, stderr)."""
    out = os.path.join(tmp, "s-%s-%s-%s.ksmt" % (find, scope, mode))
    r = record(ksmsim, out, [advise, mode], ["--find", find, "--scope", scope])
    if r.returncode != 0:
        fail("record --find %s --scope %s exited %d: %s" % (find, scope, r.returncode, r.stderr))
    text = open(out).read()
    want = "scope=%s" % scope
    if want not in text.split("\n0 ", 1)[0]:
        fail("the header comment does not say %s" % want)
    blobs, recs = parse(text)
    by_byte = {}
    for _, verb, args in recs:
        if verb == "write":
            b = content(blobs, args[2])
            key = b[0] if b == bytes([b[0]]) * PAGE else None
            by_byte.setdefault(key, set()).add((args[0], int(args[1], 16)))
    return recs, by_byte, r.stderr


ADVISE_NPAGES = 32  # advise.c's NPAGES


def want_pages(by_byte, b, what, tag):
    n = len(by_byte.get(b, ()))
    if n != ADVISE_NPAGES:
        fail("%s: %d pages of %s (byte %02x) in the trace, want %d" % (tag, n, what, b, ADVISE_NPAGES))


def test_scope(ksmsim, advise, tmp):
    need_root(ksmsim, tmp)
    for find in scope_detectors(ksmsim, tmp):
        recs, by_byte, _ = record_scope(ksmsim, advise, tmp, find, "advised", "advise")
        tag = find + " advised"
        others = {b: len(v) for b, v in by_byte.items() if b not in (0xa1, 0xc3)}
        if others:
            fail("%s: pages of ranges never advised were captured: %r (byte: pages)" % (tag, others))
        want_pages(by_byte, 0xa1, "A (advised)", tag)
        want_pages(by_byte, 0xc3, "C (advised mid-run)", tag)
        maps = [(t, a) for t, v, a in recs if v == "map"]
        mapped = sum(int(a[2]) for _, a in maps)
        if mapped != 2 * ADVISE_NPAGES:
            fail("%s: %d pages mapped, want %d (A and C): %r" % (tag, mapped, 2 * ADVISE_NPAGES, maps))
        if maps[1][0] <= maps[0][0]:
            fail("%s: C was mapped at %d, not after A (%d): not when it was advised" %
                 (tag, maps[1][0], maps[0][0]))
        adv = [(t, a[1], a[2], a[3]) for t, v, a in recs if v == "advise"]
        a_vpn = min(v for _, v in by_byte[0xa1])
        c_vpn = min(v for _, v in by_byte[0xc3])
        want = [(maps[0][0], hex(a_vpn), str(ADVISE_NPAGES), "mergeable"),
                (maps[1][0], hex(c_vpn), str(ADVISE_NPAGES), "mergeable")]
        unadv = [x for x in adv if x[3] == "unmergeable"]
        if [x for x in adv if x[3] == "mergeable"] != want:
            fail("%s: advise mergeable records %r, want %r" % (tag, adv, want))
        if len(unadv) != 1 or unadv[0][1:3] != (hex(a_vpn), str(ADVISE_NPAGES)) or \
                unadv[0][0] < maps[1][0]:
            fail("%s: advise unmergeable records %r, want A's (%s %d) with C's advice" %
                 (tag, unadv, hex(a_vpn), ADVISE_NPAGES))
        # C's writes came before its advice: read when it joined the scope
        print("ok   %s: A %d + C %d pages, B none; C mapped and advised at t=%d us, A unadvised" %
              (tag, len(by_byte[0xa1]), len(by_byte[0xc3]), maps[1][0]))

        recs, by_byte, _ = record_scope(ksmsim, advise, tmp, find, "all", "advise")
        tag = find + " all"
        for b, what in ((0xa1, "A"), (0xb2, "B (never advised)"), (0xc3, "C")):
            want_pages(by_byte, b, what, tag)
        if any(v == "advise" and a[3] == "unmergeable" for _, v, a in recs):
            fail("%s: an advise unmergeable, but every range is in scope all" % tag)
        print("ok   %s: A, B and C %d pages each, %d pages of other mappings" %
              (tag, ADVISE_NPAGES, sum(len(v) for b, v in by_byte.items()
                                        if b not in (0xa1, 0xb2, 0xc3))))


def test_scope_prctl(ksmsim, advise, tmp):
    need_root(ksmsim, tmp)
    for find in scope_detectors(ksmsim, tmp):
        _, by_byte, err = record_scope(ksmsim, advise, tmp, find, "advised", "prctl")
        if "exited with status 3" in err:
            print("prctl(PR_SET_MEMORY_MERGE) refused here: skipped")
            sys.exit(SKIP)
        tag = find + " advised, merge-any"
        want_pages(by_byte, 0xa1, "A", tag)
        want_pages(by_byte, 0xb2, "B", tag)
        print("ok   %s: A and B %d pages each, %d pages of other mappings" %
              (tag, ADVISE_NPAGES, sum(len(v) for b, v in by_byte.items() if b not in (0xa1, 0xb2))))


def test_pattern(ksmsim, pattern, tmp):
    need_root(ksmsim, tmp)
    out = os.path.join(tmp, "p.ksmb")
    r = record(ksmsim, out, [pattern])
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        fail("record exited %d" % r.returncode)
    check_pattern_trace(ksmsim, out)


def test_pattern_digest(ksmsim, pattern, tmp):
    need_root(ksmsim, tmp)
    known_digests(ksmsim, tmp)
    out = os.path.join(tmp, "p.ksmb")
    r = record(ksmsim, out, [pattern], ["--content", "digest"])
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        fail("record --content digest exited %d" % r.returncode)
    if open(out, "rb").read(9)[8] != 4:
        fail("a digest recording is not trace version 4")
    if "stored as digests" not in r.stderr:
        fail("the report does not count the pages stored as digests")
    cat = subprocess.run([ksmsim, "trace", "cat", out], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    if " blob:" in cat or "\nblob " in cat:
        fail("a digest recording holds blobs")
    if not any(d in cat for d in DIGESTS):
        fail("no page of pattern.c's is in the trace as its digest")
    check_pattern_trace(ksmsim, out)
    print("ok   pattern-digest")


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
                     ("--find", "sometimes"), ("--scope", "merged"), ("--scope", ""),
                     ("--content", "sha"), ("--content", "")]:
        r = subprocess.run([ksmsim, "record", opt, val, "-o", out, "--", "true"],
                           stderr=subprocess.PIPE, text=True)
        # the one wording of a bad value (cli/cli.h): "--X wants W, not 'V'", one line
        if (r.returncode != 2 or ("%s wants " % opt) not in r.stderr or
                ("not '%s'" % val) not in r.stderr or r.stderr.count("\n") != 1 or
                os.path.exists(out)):
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


def test_sigpipe(ksmsim, pattern, tmp):
    """The reader of record's stderr goes away (issue 46): deferred like SIGINT, the
    program is stopped, the trace closed and committed, no NAME.tmp.*, exit 141."""
    need_root(ksmsim, tmp)
    out = os.path.join(tmp, "p.ksmt")
    p = subprocess.Popen([ksmsim, "record", "--progress", "--interval-ms", "50", "-o", out,
                          "--", pattern, "loop"], stderr=subprocess.PIPE)
    p.stderr.read(1)
    time.sleep(0.5)
    p.stderr.close()
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("record did not stop on SIGPIPE")
    if p.returncode != 141:
        fail("exit %d after SIGPIPE, expected 141" % p.returncode)
    left = [f for f in os.listdir(tmp) if ".tmp." in f]
    if left:
        fail("SIGPIPE left %s" % left)
    if not os.path.exists(out):
        fail("no trace after SIGPIPE")
    replay_check(ksmsim, out, "sigpipe")
    cat = subprocess.run([ksmsim, "trace", "cat", out], stdout=subprocess.PIPE, text=True, check=True)
    _, recs = parse(cat.stdout)
    if recs[-1][1] != "mark":
        fail("the trace cut by SIGPIPE lacks its final mark")
    for pid in {int(args[0].rsplit(".", 1)[1]) for _, v, args in recs if v == "spawn"}:
        st = proc_state(pid)
        if st is not None and st[0] not in ("Z", "X"):
            fail("the command (pid %d) still runs after SIGPIPE" % pid)
    print("ok: SIGPIPE: exit 141, %d records, program stopped" % len(recs))


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


# -- the detectors, on writer.c ------------------------------------------------

# Steps are told apart by gaps over half a pause in the trace's times, so a
# recorder that a loaded machine stalls mid-step must not reach that: with
# 300 ms pauses record-fallback failed once at load 5 (passing when run
# again); 600 ms leaves it 300 ms.
W_PAGES, W_STEPS, W_PAUSE_MS, W_INTERVAL_MS = 64, 6, 600, 20


def writer_page(role, i, v):
    """writer.c's page i, version v, of role (0 parent, 1 child)."""
    c = i * 31 + v * 7 + role * 101
    b = bytearray(bytes((j * (2 * v + 1) + c) & 0xff for j in range(256)) * (PAGE // 256))
    b[0:7] = b"KSMWRT\0"[:7]
    b[7] = role
    b[8:12] = i.to_bytes(4, "little")
    b[12:16] = v.to_bytes(4, "little")
    return bytes(b)


def writer_steps(npages, steps):
    """Per step, per role: the pages whose bytes change {(role, i, v)} and the
    same-byte stores {(role, i, v held)}, as writer.c makes them."""
    out = []
    last = {}
    for s in range(steps):
        changed, same = set(), set()
        for role, n in ((0, npages), (1, npages // 4)):
            for i in range(n):
                if s == 0 or (i * 7 + s * 13) % 16 == 0:
                    changed.add((role, i, s))
                    last[(role, i)] = s
                elif (i * 5 + s * 3) % 16 == 1:
                    same.add((role, i, last[(role, i)]))
        out.append((changed, same))
    return out


def need_pagemap_scan(ksmsim, tmp):
    if os.geteuid() != 0:
        print("not root: skipped")
        sys.exit(SKIP)
    r = record(ksmsim, os.path.join(tmp, "probe.ksmb"), ["true"], ["--find", "pagemap-scan"])
    if r.returncode == 2 and "not available" in r.stderr:
        print("--find pagemap-scan not available: skipped: " + r.stderr.strip())
        sys.exit(SKIP)


def detector_line(stderr):
    """The numbers of record's detector line."""
    m = re.search(r"detector (\S+): (\d+) pages reported \w+(?:, (\d+) process(?:es)? tracked, "
                  r"(\d+) fallbacks to compare)?, detector CPU ([\d.]+) s, recorder CPU ([\d.]+) s",
                  stderr)
    if not m:
        fail("no detector line in:\n" + stderr)
    return {"detector": m.group(1), "reported": int(m.group(2)),
            "tracked": int(m.group(3) or 0), "fallbacks": int(m.group(4) or 0),
            "detector_cpu": float(m.group(5)), "recorder_cpu": float(m.group(6))}


def record_writer(ksmsim, writer, out, find, npages=W_PAGES, steps=W_STEPS, pause=W_PAUSE_MS,
                  interval=W_INTERVAL_MS, prefix=(), zero0=False):
    r = subprocess.run([ksmsim, "record", "--interval-ms", str(interval), "--find", find,
                        "-o", out, "--", *prefix, writer, *(["-z"] if zero0 else []),
                        str(npages), str(steps), str(pause)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        fail("record --find %s exited %d" % (find, r.returncode))
    if "exited with status 0" not in r.stderr:
        fail("the writer failed under record --find %s (its pages were disturbed?)" % find)
    return detector_line(r.stderr)


def writer_epochs(ksmsim, out, npages, steps, pause, zero0=False, verify=True):
    """The writer's page writes in the trace at out, (role, i, v) in trace order,
    grouped into epochs: runs of captures separated by more than half a pause.
    A write is the writer's when its page has writer.c's header, or (zero0)
    is zero and in a writer's buffer, placed by the header pages of its mm
    (vpns are dense, in order of appearance). verify: every header page has
    exactly writer.c's bytes."""
    if out.endswith(".ksmt"):   # the binary form keeps no comments, nor does trace cat
        with open(out) as f:
            head = [f.readline() for _ in range(5)]
        if not any(line.startswith("# ksmsim record: detector=") for line in head):
            fail("%s: no '# ksmsim record: detector=' line in its header comment" % out)
    cat = subprocess.Popen([ksmsim, "trace", "cat", out], stdout=subprocess.PIPE, text=True)
    blobs, writes = {}, []      # id -> hex; (t, mm, vpn, content)
    for line in cat.stdout:
        f = line.split("#", 1)[0].split()
        if len(f) == 3 and f[0] == "blob":
            blobs[f[1]] = f[2]
        elif len(f) >= 5 and f[1] == "write":
            writes.append((int(f[0]), f[2], int(f[3], 16), f[4]))
    if cat.wait() != 0:
        fail("trace cat %s failed" % out)
    mms, base, recs = {}, {}, []    # role -> mm; mm -> vpn of page 0
    for t, mm, vpn, c in writes:
        h = bytes.fromhex(blobs[c[5:]][:32]) if c.startswith("blob:") else b""
        if h[:6] != b"KSMWRT":
            recs.append((t, mm, vpn, c == "zero"))
            continue
        role, i, v = h[7], int.from_bytes(h[8:12], "little"), int.from_bytes(h[12:16], "little")
        if verify and blobs[c[5:]] != writer_page(role, i, v).hex():
            fail("%s: %s vpn 0x%x: bytes differ from writer page %d version %d" % (out, mm, vpn, i, v))
        if mms.setdefault(role, mm) != mm:
            fail("%s: role %d in two mms" % (out, role))
        if base.setdefault(mm, vpn - i) != vpn - i:
            fail("%s: %s: the writer's buffer is not contiguous in vpns" % (out, mm))
        recs.append((t, mm, vpn, (role, i, v)))
    roles = {mm: role for role, mm in mms.items()}
    epochs, t_last = [], None
    for t, mm, vpn, w in recs:
        if not isinstance(w, tuple):
            # zero0: version 0 is zeros; anything else is the runtime's
            n = npages if roles.get(mm) == 0 else npages // 4
            if not (zero0 and w and mm in base and 0 <= vpn - base[mm] < n):
                continue
            w = (roles[mm], vpn - base[mm], 0)
        if t_last is None or t - t_last > pause * 1000 // 2:
            epochs.append([])
        t_last = t
        epochs[-1].append(w)
    if len(epochs) != steps:
        fail("%s: %d epochs of writes, the writer made %d steps" % (out, len(epochs), steps))
    if len(mms) != 2:
        fail("%s: writes of %d processes, expected parent and child" % (out, len(mms)))
    return epochs


def changes(epochs):
    """Per epoch, the writes that change a page's bytes: a version other than
    the one the trace had for that page before."""
    held, out = {}, []
    for ep in epochs:
        ch = set()
        for role, i, v in ep:
            if held.get((role, i)) != v:
                ch.add((role, i, v))
            held[(role, i)] = v
        out.append(ch)
    return out


def check_pagemap_scan_epochs(epochs, expect):
    for s, (ep, (changed, same)) in enumerate(zip(epochs, expect)):
        got = set(ep)
        if got != changed | same:
            fail("pagemap-scan step %d: missing %s, extra %s" % (
                s, sorted((changed | same) - got)[:8], sorted(got - (changed | same))[:8]))
        # after the first step (compare stands in while the shim starts) each store once
        if s > 0 and len(ep) != len(got):
            fail("pagemap-scan step %d: a page reported twice" % s)


def test_pagemap_scan(ksmsim, pattern, tmp, writer):
    need_pagemap_scan(ksmsim, tmp)
    out = os.path.join(tmp, "w.ksmt")
    st = record_writer(ksmsim, writer, out, "pagemap-scan")
    if st["detector"] != "pagemap-scan" or st["tracked"] != 2 or st["fallbacks"] != 0:
        fail("expected 2 processes tracked by pagemap-scan, none by compare: %s" % st)
    epochs = writer_epochs(ksmsim, out, W_PAGES, W_STEPS, W_PAUSE_MS)
    expect = writer_steps(W_PAGES, W_STEPS)
    check_pagemap_scan_epochs(epochs, expect)
    same = sum(len(s) for _, s in expect)
    print("ok: %d steps, every store in the trace, %d of them same-byte stores" % (W_STEPS, same))


def test_agree(ksmsim, pattern, tmp, writer):
    need_pagemap_scan(ksmsim, tmp)
    expect = writer_steps(W_PAGES, W_STEPS)
    got = {}
    for find in ("compare", "pagemap-scan"):
        out = os.path.join(tmp, find + ".ksmt")
        st = record_writer(ksmsim, writer, out, find)
        if st["detector"] != find:
            fail("--find %s ran detector %s" % (find, st["detector"]))
        got[find] = writer_epochs(ksmsim, out, W_PAGES, W_STEPS, W_PAUSE_MS)
    check_pagemap_scan_epochs(got["pagemap-scan"], expect)
    cmp_ch, pms_ch = changes(got["compare"]), changes(got["pagemap-scan"])
    for s, (changed, _) in enumerate(expect):
        if set(got["compare"][s]) != changed:
            fail("compare step %d: not the writer's changed pages" % s)
        if cmp_ch[s] != pms_ch[s]:
            fail("step %d: compare and pagemap-scan disagree on changed pages: %s vs %s" % (
                s, sorted(cmp_ch[s] ^ pms_ch[s])[:8], ""))
    extra = sum(len(e) for e in got["pagemap-scan"]) - sum(len(e) for e in got["compare"])
    print("ok: %d steps, the same changed pages; pagemap-scan has %d more writes "
          "(same-byte stores)" % (W_STEPS, extra))


def test_fallback(ksmsim, pattern, tmp, writer):
    need_pagemap_scan(ksmsim, tmp)
    env = shutil.which("env")
    if not env:
        print("no env: skipped")
        sys.exit(SKIP)
    out = os.path.join(tmp, "f.ksmt")
    st = record_writer(ksmsim, writer, out, "pagemap-scan", prefix=[env, "-u", "LD_PRELOAD"])
    # the writer and its child have no shim: compare records them
    if st["fallbacks"] < 2:
        fail("expected the writer and its child to fall back to compare: %s" % st)
    epochs = writer_epochs(ksmsim, out, W_PAGES, W_STEPS, W_PAUSE_MS)
    for s, (changed, _) in enumerate(writer_steps(W_PAGES, W_STEPS)):
        if set(epochs[s]) != changed:
            fail("fallback step %d: not the writer's changed pages" % s)
    print("ok: %d fallbacks, recorded by compare" % st["fallbacks"])


def test_orphan(ksmsim, pattern, tmp, writer):
    need_pagemap_scan(ksmsim, tmp)
    res = os.path.join(tmp, "result")
    p = subprocess.Popen([ksmsim, "record", "--interval-ms", "20", "--find", "pagemap-scan",
                          "-o", os.path.join(tmp, "o.ksmt"), "--", writer, str(W_PAGES), "8", "250", res],
                         stderr=subprocess.DEVNULL)
    time.sleep(0.8)     # a few steps protected and scanned
    p.kill()
    p.wait()
    for _ in range(100):
        if os.path.exists(res) and open(res).read().strip():
            break
        time.sleep(0.1)
    else:
        fail("the writer did not finish after its recorder was killed")
    if open(res).read().strip() != "ok":
        fail("the writer's pages were disturbed after its recorder was killed")
    print("ok: the writer ran on and its pages are intact")


def test_measure(ksmsim, pattern, tmp, writer):
    """Both detectors on one bigger writer run each, same interval: the figures."""
    need_pagemap_scan(ksmsim, tmp)
    a = [int(x) for x in sys.argv[5:9]] or [65536, 6, 1000, 100]
    npages, steps, pause, interval = a
    expect = writer_steps(npages, steps)
    rows, got = [], {}
    for find in ("compare", "pagemap-scan"):
        out = os.path.join(tmp, find + ".ksmb")
        st = record_writer(ksmsim, writer, out, find, npages, steps, pause, interval, zero0=True)
        got[find] = writer_epochs(ksmsim, out, npages, steps, pause, zero0=True, verify=False)
        rows.append((find, st))
    check_pagemap_scan_epochs(got["pagemap-scan"], expect)
    agree = changes(got["compare"]) == changes(got["pagemap-scan"]) and \
        [set(e) for e in got["compare"]] == [c for c, _ in expect]
    stores = sum(len(c) + len(s) for c, s in expect)
    changed = sum(len(c) for c, _ in expect)
    print("writer -z: %d + %d pages, %d steps %d ms apart, interval %d ms: %d stores, "
          "%d of them change bytes" % (npages, npages // 4, steps, pause, interval, stores, changed))
    print("| detector | pages reported | writer pages in trace | detector CPU s | recorder CPU s |")
    print("|---|---|---|---|---|")
    for find, st in rows:
        print("| %s | %d | %d | %.3f | %.3f |" % (find, st["reported"],
              sum(len(e) for e in got[find]), st["detector_cpu"], st["recorder_cpu"]))
    print("changed pages agree, step by step: %s" % ("yes" if agree else "NO"))
    if not agree:
        sys.exit(1)


def start_attach(attach, solo=False, preexec=None):
    """Starts ATTACH (attach.c); returns (process, pid, child pid) once it is ready."""
    p = subprocess.Popen([attach] + (["solo"] if solo else []), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, preexec_fn=preexec)
    line = p.stdout.readline().split()
    if len(line) != 3 or line[0] != "ready":
        p.kill()
        fail("attach program did not start: %r" % line)
    return p, int(line[1]), int(line[2])


def finish_attach(p, tag):
    """Ends ATTACH (end of input): it checks its pages once more; its verdict."""
    try:
        out, _ = p.communicate(input="", timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("%s: the attach program did not end" % tag)
    if p.returncode != 0 or not out.strip().startswith("ok"):
        fail("%s: the attach program reports %r (exit %d): its memory changed" %
             (tag, out.strip(), p.returncode))
    return out.strip()


def proc_state(pid):
    """(state letter, TracerPid, uses a userfaultfd) of a live pid, or None."""
    try:
        with open("/proc/%d/status" % pid) as f:
            st = dict(line.split(":", 1) for line in f if ":" in line)
        fds = os.listdir("/proc/%d/fd" % pid)
        uffd = any("userfaultfd" in os.readlink("/proc/%d/fd/%s" % (pid, fd)) for fd in fds)
    except OSError:
        return None
    return st["State"].split()[0], int(st["TracerPid"]), uffd


def maps_of(pid):
    with open("/proc/%d/maps" % pid) as f:
        return f.read()


def check_left_as_found(pid, maps_before, tag):
    """After the detach: pid runs on, not stopped, not traced, no userfaultfd, same maps."""
    st = proc_state(pid)
    if st is None:
        fail("%s: pid %d is gone after the detach" % (tag, pid))
    state, tracer, uffd = st
    if state in ("T", "t", "Z", "X") or tracer or uffd:
        fail("%s: pid %d after the detach: state %s, TracerPid %d, userfaultfd %s" %
             (tag, pid, state, tracer, uffd))
    if maps_of(pid) != maps_before:
        fail("%s: pid %d's maps changed across the capture" % (tag, pid))


def trace_mms(ksmsim, out):
    """{mm: (spawn time, exit time or None, {vpn: [bytes, ...]})} and the records."""
    cat = subprocess.run([ksmsim, "trace", "cat", out], stdout=subprocess.PIPE, text=True,
                         check=True)
    blobs, recs = parse(cat.stdout)
    mms = {}
    for t, verb, args in recs:
        if verb == "spawn":
            mms[args[0]] = [t, None, {}]
        elif verb == "exit":
            mms[args[0]][1] = t
        elif verb == "write":
            mms[args[0]][2].setdefault(int(args[1], 16), []).append(content(blobs, args[2]))
    return mms, recs


def phases_in(pages, k, n):
    """Whether the mm's page writes hold all n pages of phase k, each at one vpn run."""
    found = {}
    for vpn, seen in pages.items():
        for b in seen:
            if b[:8] == b"KSMPATT\0":
                kk, src = int.from_bytes(b[8:12], "little"), int.from_bytes(b[12:16], "little")
                if b != page_bytes(kk, src):
                    fail("vpn 0x%x: bytes differ from phase %d page %d" % (vpn, kk, src))
                if kk == k and src == 0:
                    found.setdefault(vpn, 0)
    for base in found:
        if all(page_bytes(k, i) in pages.get(base + i, []) for i in range(n)):
            return True
    return False


def replay_check(ksmsim, out, tag):
    run = subprocess.run([ksmsim, "run", "--check", "--trace", out], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        fail("%s: run --check on the trace: %d: %s" % (tag, run.returncode, run.stderr))


def record_attached(ksmsim, out, args, seconds=2.0):
    # bytes, so that the pages can be checked; attached, the default is digest
    r = subprocess.run([ksmsim, "record", "--interval-ms", "50", "--max-seconds", str(seconds),
                        "--content", "bytes", *args, "-o", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        fail("record %s exited %d" % (" ".join(args), r.returncode))
    return r.stderr


def test_attach(ksmsim, attach, tmp):
    need_root(ksmsim, tmp)
    p, pid, child = start_attach(attach)
    try:
        time.sleep(0.5)     # running well before the recorder comes
        maps = {x: maps_of(x) for x in (pid, child)}
        out = os.path.join(tmp, "a.ksmb")
        err = record_attached(ksmsim, out, ["--pid", str(pid)])
        # without --content an attached capture stores digests: version 4
        dig = os.path.join(tmp, "d.ksmt")
        r = subprocess.run([ksmsim, "record", "--interval-ms", "50", "--max-seconds", "1",
                            "--pid", str(pid), "-o", dig], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        if r.returncode != 0:
            fail("attach: record --pid without --content exited %d" % r.returncode)
        with open(dig) as f:
            text = f.read()
        if not text.startswith("ksmtrace 4\n") or " digest:" not in text:
            fail("attach: the default attached capture is not a digest trace (version 4)")
        replay_check(ksmsim, dig, "attach digest")
        for x in (pid, child):
            check_left_as_found(x, maps[x], "attach")
        time.sleep(0.5)     # a few more rounds, each checking the pages
        verdict = finish_attach(p, "attach")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
            try:
                os.kill(child, signal.SIGKILL)  # else it loops on, orphaned
            except OSError:
                pass
    if "attached for" not in err or "left running as found" not in err:
        fail("no attach line in the report")
    replay_check(ksmsim, out, "attach")
    mms, recs = trace_mms(ksmsim, out)
    names = {int(mm.rsplit(".", 1)[1]): mm for mm in mms}
    if pid not in names or child not in names:
        fail("attach: mms %s lack the parent %d or the child %d" % (sorted(mms), pid, child))
    shorts = [n for x, n in names.items() if x not in (pid, child)]
    if not shorts:
        fail("attach: no short child in the trace (forked every 0.75 s)")
    for mm in (names[pid], names[child]):
        if mms[mm][1] is not None:
            fail("attach: %s has an exit record, but it runs on" % mm)
    ended = [n for n in shorts if mms[n][1] is not None]
    if not ended:
        fail("attach: no short child's exit record (each lives 0.4 s)")
    for k in range(3):
        if not phases_in(mms[names[pid]][2], k, NPAGES):
            fail("attach: the parent's phase %d is not in the trace" % k)
    for k in (100, 101, 102):
        if not phases_in(mms[names[child]][2], k, CHILD_PAGES):
            fail("attach: the child's phase %d is not in the trace" % k)
    if not any(phases_in(mms[n][2], 200, 8) for n in shorts):
        fail("attach: no short child's pages in the trace")
    # the scope is advised: the programs' stacks and libc data are not in it
    other = sum(1 for mm in mms.values() for v, seen in mm[2].items()
                for b in seen if b[:8] != b"KSMPATT\0" and b.count(b[0]) != PAGE)
    if other:
        fail("attach: %d page writes outside the advised pages (scope advised)" % other)
    print("ok   attach: %d mms (%d short children, %d ended), every phase; %s" %
          (len(mms), len(shorts), len(ended), verdict))


def cgroup2_root():
    """Where cgroup v2 is mounted, or None."""
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            if fstype == "cgroup2":
                return mnt
    return None


def test_cgroup(ksmsim, attach, tmp):
    need_root(ksmsim, tmp)
    root = cgroup2_root()
    if not root or not root.startswith("/sys/fs/cgroup"):
        print("no cgroup v2 under /sys/fs/cgroup: skipped")
        sys.exit(SKIP)
    cg = os.path.join(root, "ksmsim-test-%d" % os.getpid())
    try:
        os.mkdir(cg)
    except OSError as e:
        print("cannot make a cgroup in %s (%s): skipped" % (root, e))
        sys.exit(SKIP)
    procs = []

    def join():
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write("0")
    try:
        a = start_attach(attach, solo=True, preexec=join)
        b = start_attach(attach, solo=True, preexec=join)
        outside = start_attach(attach, solo=True)
        procs += [a, b, outside]
        maps = {x[1]: maps_of(x[1]) for x in (a, b)}
        out = os.path.join(tmp, "c.ksmt")
        rec = subprocess.Popen([ksmsim, "record", "--interval-ms", "50", "--max-seconds", "3",
                                "--content", "bytes", "--cgroup", cg, "-o", out], stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        c = start_attach(attach, preexec=join)      # joins mid-capture, and forks
        procs.append(c)
        _, err = rec.communicate(timeout=60)
        sys.stderr.write(err)
        if rec.returncode != 0:
            fail("record --cgroup exited %d" % rec.returncode)
        for x in (a, b):
            check_left_as_found(x[1], maps[x[1]], "cgroup")
        for x in (a, b, c, outside):
            finish_attach(x[0], "cgroup pid %d" % x[1])
        replay_check(ksmsim, out, "cgroup")
        mms, _ = trace_mms(ksmsim, out)
        names = {int(mm.rsplit(".", 1)[1]): mm for mm in mms}
        for x, what in ((a, "A"), (b, "B"), (c, "C (joined)")):
            if x[1] not in names:
                fail("cgroup: %s (pid %d) not in the trace's mms %s" % (what, x[1], sorted(mms)))
            for k in range(3):
                if not phases_in(mms[names[x[1]]][2], k, NPAGES):
                    fail("cgroup: %s's phase %d not in the trace" % (what, k))
        if outside[1] in names:
            fail("cgroup: a process outside the cgroup was recorded")
        if c[2] not in names:
            fail("cgroup: C's child (pid %d, born in the cgroup) not in the trace" % c[2])
        if mms[names[c[1]]][0] < 500000:
            fail("cgroup: C spawned at %d us, before it joined" % mms[names[c[1]]][0])
        extra = set(names) - {a[1], b[1], c[1], c[2]}
        print("ok   cgroup: A, B, C (joined at %.2f s) and its child, %d short children; "
              "not the one outside" % (mms[names[c[1]]][0] / 1e6, len(extra)))
    finally:
        for x in procs:
            if x[0].poll() is None:
                x[0].kill()
                x[0].wait()
        # whatever is left in it (children orphaned by a kill): every path empties it
        try:
            with open(os.path.join(cg, "cgroup.kill"), "w") as f:
                f.write("1")
        except OSError:
            try:
                for pid in open(os.path.join(cg, "cgroup.procs")).read().split():
                    os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
        for _ in range(100):
            try:
                os.rmdir(cg)
                break
            except OSError:
                time.sleep(0.05)    # the killed ones may take a moment to leave it
        if os.path.exists(cg):
            fail("cgroup %s could not be removed" % cg)


def test_attach_self(ksmsim, attach, tmp):
    """record --pid of its own parent shell (issue 46): the recorder is a descendant of
    the attached process, and must not capture itself; the shell is captured."""
    need_root(ksmsim, tmp)
    out = os.path.join(tmp, "self.ksmt")
    # '; true': the shell stays the recorder's parent instead of exec'ing it
    r = subprocess.run(["sh", "-c", '"$0" record --pid $$ --scope all --max-seconds 1 '
                        '--interval-ms 100 -o "$1"; true', ksmsim, out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    sys.stderr.write(r.stderr)
    if r.returncode != 0 or not os.path.exists(out):
        fail("record --pid of its parent: exit %d" % r.returncode)
    mms, _ = trace_mms(ksmsim, out)
    if any(mm.startswith("ksmsim.") for mm in mms):
        fail("record --pid of its parent captured itself: %s" % sorted(mms))
    if not any(mm.startswith("sh.") for mm in mms):
        fail("record --pid of its parent lost the parent: %s" % sorted(mms))
    print("ok: attached to its parent: %s, not itself" % sorted(mms))


def test_attach_errors(ksmsim, attach, tmp):
    out = os.path.join(tmp, "e.ksmt")

    def refused(args, want, tag):
        r = subprocess.run([ksmsim, "record", "-o", out, *args], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=30)
        lines = r.stderr.strip().splitlines()
        # one line, always: no fallback note before the refusal (issue 46)
        if r.returncode != 2 or os.path.exists(out) or len(lines) != 1 or want not in lines[0]:
            fail("%s: exit %d, file %s, stderr %r (want %r)" % (tag, r.returncode,
                 os.path.exists(out), r.stderr, want))
    refused(["--pid", "12x"], "--pid wants process ids, comma-separated, not '12x'",
            "malformed pid")
    refused(["--pid", "1,,2"], "not '1,,2'", "empty pid")
    refused(["--pid", "0"], "not '0'", "pid 0")
    refused(["--pid", "1", "--pid", "2"], "--pid given twice", "--pid twice")
    refused(["--max-cpu", "0", "--pid", "1"], "--max-cpu wants a percentage", "--max-cpu 0")
    refused(["--max-cpu", "101", "--pid", "1"], "not '101'", "--max-cpu 101")
    if os.geteuid() != 0:
        refused(["--pid", "1"], "must run as root", "not root")
        print("ok (as non-root)")
        return
    refused(["--pid", "1", "--", "true"], "--pid and a COMMAND exclude each other", "pid+cmd")
    refused(["--pid", "1", "--cgroup", "/sys/fs/cgroup"], "exclude each other", "pid+cgroup")
    # a pid that does not exist: above pid_max
    with open("/proc/sys/kernel/pid_max") as f:
        gone = int(f.read()) + 1
    refused(["--pid", str(gone)], "--pid %d: no such process" % gone, "no such pid")
    refused(["--pid", "%d,%d" % (os.getpid(), gone)], "--pid %d: no such process" % gone,
            "one of two missing")
    refused(["--pid", "2"], "--pid 2: is a kernel thread", "kernel thread")
    refused(["--pid", str(os.getpid()), "--find", "pagemap-scan"],
            "--find pagemap-scan is not available for --pid", "pagemap-scan attached")
    refused(["--cgroup", tmp], "--cgroup %s: not a cgroup v2 directory" % tmp, "not a cgroup")
    refused(["--cgroup", os.path.join(tmp, "nope")], "nope: No such file or directory", "no path")
    root = cgroup2_root()
    if root:
        procs = os.path.join(root, "cgroup.procs")
        refused(["--cgroup", procs], "not a cgroup v2 directory", "cgroup file")
    # a thread, not a process: one of this python's threads if it has one
    import threading
    ev = threading.Event()
    t = threading.Thread(target=ev.wait)
    t.start()
    try:
        tids = [int(x) for x in os.listdir("/proc/self/task") if int(x) != os.getpid()]
        if tids:
            refused(["--pid", str(tids[0])], "--pid %d: is a thread of process %d" %
                    (tids[0], os.getpid()), "a thread")
    finally:
        ev.set()
        t.join()
    print("ok   attach errors")


def main():
    mode, ksmsim, pattern = sys.argv[1:4]
    writer = sys.argv[4] if len(sys.argv) > 4 else None
    if mode == "check":     # check an existing trace: check_record.py check KSMSIM TRACE
        check_pattern_trace(ksmsim, pattern)
        return
    with tempfile.TemporaryDirectory(prefix="ksmsim-record-") as tmp:
        tests = {"pattern": test_pattern, "pattern-digest": test_pattern_digest,
                 "errors": test_errors, "sigint": test_sigint, "sigpipe": test_sigpipe,
                 "progress": test_progress, "hugepage": test_hugepage,
                 "scope": test_scope, "scope-prctl": test_scope_prctl}
        if mode in ("attach", "cgroup", "attach-errors", "attach-self"):
            {"attach": test_attach, "cgroup": test_cgroup, "attach-self": test_attach_self,
             "attach-errors": test_attach_errors}[mode](ksmsim, pattern, tmp)
            return
        detectors = {"pagemap-scan": test_pagemap_scan, "agree": test_agree,
                     "fallback": test_fallback, "orphan": test_orphan, "measure": test_measure}
        if mode in tests:
            tests[mode](ksmsim, pattern, tmp)
        else:
            detectors[mode](ksmsim, pattern, tmp, writer)


if __name__ == "__main__":
    main()
