#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes the LTP-, selftest- and tricky-* cases in cases/ (not the eight
written by hand: see README.md). The trace format is traces/FORMAT.md.
Re-record their expected files with record.sh after changing a case, and
list a new case in meson.build."""
import os
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
def w(name, header, body):
    with open(os.path.join(OUT, name + ".ksmt"), "w") as f:
        f.write("ksmtrace 1\n")
        for l in header.strip("\n").splitlines():
            f.write("# " + l.strip() + "\n" if l.strip() else "#\n")
        for l in body:
            f.write(l + "\n")

def fast(extra=()):
    return ["0        set pages_to_scan 5000", "0        set sleep_millisecs 10"] + list(extra)

def settles(prefix, n, t=0):
    out = []
    for i in range(1, n + 1):
        out += [f"{t}        settle 1", f"{t}        mark {prefix}{i}"]
    return out

# ---- LTP ksm02-style: create_same_memory with the default max_page_sharing (chains)
def csm(name, hdr, mps, smart, num=3, pages=512, unit=128, pts=5000, nsettle=3):
    b = [f"0        set pages_to_scan {pts}", "0        set sleep_millisecs 10"]
    if mps is not None:
        b.append(f"0        set max_page_sharing {mps}")
    b.append(f"0        set smart_scan {smart}")
    b.append("0        set stable_node_chains_prune_millisecs 0")
    kids = [f"child{i}" for i in range(num)]
    for k in kids:
        b.append(f"0        spawn {k}")
    for k in kids:
        for u in range(pages // unit):
            vpn = 0x10000 + u * (unit + 1)
            b.append(f"0        map {k} {vpn:#x} {unit}")
            b.append(f"0        advise {k} {vpn:#x} {unit} mergeable")
    def phase(vals, last_e=False):
        out = []
        for k, v in zip(kids, vals):
            for u in range(pages // unit):
                vpn = 0x10000 + u * (unit + 1)
                out.append(f"0        fill {k} {vpn:#x} {unit} byte:{v}")
        if last_e:
            vpn = 0x10000 + (pages // unit - 1) * (unit + 1) + unit - 1
            out.append(f"0        write child1 {vpn:#x} bytes:4095:65")
        return out
    b += ["# phase 1: c/a/a"] + phase(["63", "61", "61"]) + ["0        set run 1"] + settles("p1_s", nsettle)
    b += ["# phase 2: c/b/a"] + phase(["63", "62", "61"]) + settles("p2_s", nsettle)
    b += ["# phase 3: d/d/d"] + phase(["64", "64", "64"]) + settles("p3_s", nsettle)
    b += ["# phase 4: d/d/d with one 'e' byte"] + phase(["64", "64", "64"], True) + settles("p4_s", nsettle)
    b += ["0        set run 2", "0        mark unmerged", "0        set run 0", "0        mark stopped"]
    w(name, hdr, b)

csm("ltp_ksm02_mps", """
LTP ksm02 runs create_same_memory (as ksm01) inside a cpuset; the cpuset has
no trace equivalent, so this variant keeps the default max_page_sharing 256
(older LTP did not raise it): 3 mms x 512 pages in 128-page mappings, so
1536 identical pages build stable-node chains (1536 / 256 = 6 dups per
content) and every phase rewrite leaves stale dups behind.
stable_node_chains_prune_millisecs 0 so pruning does not depend on wall time.
Phases as LTP: c/a/a, c/b/a, d/d/d, d/d/d + 'e' (last byte of child1's last
page), then run=2 and run=0.  smart_scan 0 as current LTP.
""", None, 0)

csm("ltp_ksm03_smart", """
LTP ksm03 = create_same_memory under a memory cgroup limit (no trace
equivalent).  Variant: smart_scan left at its default 1, pages_to_scan 300
so that a pass of 1536 pages spans 6 batches, max_page_sharing 1536 (no
chains) as LTP sets it.  3 mms x 512 pages in 64-page mappings.  With smart
scan the unchanging pages start to be skipped after a few passes; LTP's
volatile/unshared expectations only hold with smart_scan 0 (the reason LTP
now disables it).
""", 1536, 1, unit=64, pts=300, nsettle=4)

# ---- LTP ksm06: merge_across_nodes 0 on a single node
b = fast(["0        set max_page_sharing 1024"])
b += ["0        spawn n0", "0        spawn n1"]
for m in ("n0", "n1"):
    b += [f"0        map {m} 0x20000 256", f"0        advise {m} 0x20000 256 mergeable",
          f"0        fill {m} 0x20000 128 byte:a5", f"0        fillseq {m} 0x20080 128 {0x600000 if m=='n0' else 0x700000}"]
b += ["0        set run 1"] + settles("man1_s", 3)
b += ["# LTP: unmerge before switching merge_across_nodes", "0        set run 2", "0        mark unmerged1",
      "0        set merge_across_nodes 0", "0        set run 1"] + settles("man0_s", 3)
b += ["0        set run 2", "0        mark unmerged0", "0        set merge_across_nodes 1", "0        set run 1"] + settles("back1_s", 2)
w("ltp_ksm06_single_node", """
LTP ksm06 (merge_across_nodes): on a one-node machine every page is on node
0, so merge_across_nodes 0 must merge exactly as 1 does.  Two mms, 128
identical pages each (byte:a5) plus 128 distinct pages each.  Merge with
merge_across_nodes 1; run=2 (the kernel refuses the switch while anything is
merged); switch to 0; merge again; run=2; back to 1; merge again.
full_scans keeps counting across the run=2s.
""", b)

# ---- kernel selftests ksm_tests.c
b = fast()
b += ["0        spawn p0", "0        spawn p1"]
for m in ("p0", "p1"):
    b += [f"0        map {m} 0x50000 100", f"0        advise {m} 0x50000 100 mergeable", f"0        fill {m} 0x50000 100 byte:2a"]
b += ["0        set run 1"] + settles("s", 3)
w("kst_merge_across", """
tools/testing/selftests/mm/ksm_tests.c -P (check_ksm_merge across
processes): two processes map 100 pages each with the same content; after
merging: pages_shared 1, pages_sharing 199.
""", b)

b = fast()
b += ["0        spawn m", "0        map m 0x51000 2", "0        advise m 0x51000 2 mergeable", "0        fill m 0x51000 2 byte:2b",
      "0        set run 1"] + settles("merge_s", 2)
b += ["# unmerge the second page", "0        advise m 0x51001 1 unmergeable", "0        mark unmerged"] + settles("after_s", 3)
w("kst_unmerge", """
ksm_tests.c -U (check_ksm_unmerge): two identical pages merge (1 shared,
1 sharing); MADV_UNMERGEABLE on the second page unshares it at once
(cow_ksm 1) and, after a scan, the selftest expects pages_shared 0 and
pages_sharing 0 (the KSM page keeps its last mapping as a stable node with
one item: see the marks).
""", b)

for z in (0, 1):
    b = fast([f"0        set use_zero_pages {z}"])
    b += ["0        spawn zm", "0        map zm 0x52000 256", "0        advise zm 0x52000 256 mergeable", "0        fill zm 0x52000 256 zero",
          "0        set run 1"] + settles("s", 3)
    w(f"kst_zero_pages_{z}", f"""
ksm_tests.c -Z -z {z} (check_ksm_zero_page_merge): 256 zero-filled pages
(1 MiB) with use_zero_pages {z}.  With 0 they merge into one KSM page
(pages_shared 1, pages_sharing 255); with 1 they are mapped to the zero page
(ksm_zero_pages 256, pages_shared/pages_sharing 0).
""", b)

b = fast(["0        set max_page_sharing 4", "0        set stable_node_chains_prune_millisecs 0"])
b += ["0        spawn m", "0        map m 0x53000 5", "0        advise m 0x53000 5 mergeable", "0        fill m 0x53000 5 byte:2c",
      "0        spawn n", "0        map n 0x53000 10", "0        advise n 0x53000 10 mergeable", "0        fill n 0x53000 10 byte:2d",
      "0        set run 1"] + settles("s", 3)
b += ["0        set run 2", "0        mark unmerged", "0        set max_page_sharing 3", "0        set run 1"] + settles("mps3_s", 3)
w("kst_mps_limit", """
ksm_tests.c -M (max_page_sharing limit, assert_ksm_pages_count): with
max_page_sharing 4, mm m has 5 = mps+1 identical pages (pages_shared 2,
pages_sharing 3) and mm n 10 others (a chain of 3 dups: 4+4+2).  Then run=2,
max_page_sharing 3 and merge again.
""", b)

b = fast()
b += ["0        spawn p", "0        map p 0x54000 512", "0        advise p 0x54000 512 mergeable", "0        fill p 0x54000 512 byte:2e",
      "0        set run 1"] + settles("merge_s", 2)
b += ["# MADV_UNMERGEABLE on the middle half", "0        advise p 0x54080 256 unmergeable", "0        mark partial"] + settles("partial_s", 2)
b += ["# write to the first unmerged page and one still-merged page", "0        write p 0x54080 byte:2e", "0        write p 0x54000 byte:2e", "0        mark written"] + settles("written_s", 2)
w("kst_partial_unmerge", """
ksm_functional_tests.c test_unmerge_discarded / partial unmerge: 512
identical pages (2 MiB) merge into one KSM page (pages_sharing 511);
MADV_UNMERGEABLE on the middle 256 pages copies them at once (cow_ksm 256)
and leaves the rest merged; pages_sharing drops when the cursor passes.
Then a store to an unmerged page (no cow) and to a merged one (cow).
""", b)

# ---- tricky (a): unstable-tree page rewritten mid-pass
b = ["0        set pages_to_scan 400", "0        set sleep_millisecs 10", "0        set smart_scan 0",
     "0        spawn a", "0        map a 0x1000 300", "0        advise a 0x1000 300 mergeable", "0        fillseq a 0x1000 300 1000",
     "0        spawn b", "0        map b 0x1000 300", "0        advise b 0x1000 300 mergeable",
     "0        fillseq b 0x1000 150 1000", "0        fillseq b 0x1096 150 5000",
     "0        set run 1", "0        settle 1", "0        mark checksummed",
     "# a long sleep: the batch that starts now (a 0-299, b 0-99) is followed by 1 s of sleep",
     "0        set sleep_millisecs 1000",
     "# mid-pass, 0.5 s later: a 200-299 sit in the unstable tree and now get b 150-249's bytes",
     "500000   fillseq a 0x10c8 100 5000", "500000   mark midpass",
     "500000   set sleep_millisecs 10", "500000   settle 1", "500000   mark s1",
     "500000   settle 1", "500000   mark s2", "500000   settle 1", "500000   mark s3", "500000   settle 1", "500000   mark s4"]
w("tricky_unstable_rewrite", """
Unstable tree 'corruption' (reference section 7): a page inserted into the
unstable tree earlier in the pass is rewritten before the pass ends.
a: 300 distinct pages rand:1000+i; b: 0-149 equal to a 0-149, 150-299 =
rand:5000+j.  pages_to_scan 400 (a pass of 600 visits takes two batches).
After the checksum pass, sleep_millisecs becomes 1000: that wakes ksmd, the
first batch of the pass (a 0-299 inserted, b 0-99 merged with a 0-99) runs,
then ksmd sleeps 1 s.  0.5 s later a 200-299 are rewritten with b 150-249's
contents while their nodes sit in the unstable tree under their old
contents; the 'midpass' mark is taken between the two batches (it depends on
ksmd waking within 0.5 s: true on an idle machine).  Then sleep 10 ms and
settles: what the search of b 150-249 finds in the now misordered tree.
smart_scan 0.
""", b)

# ---- tricky (b): unmap pages in the unstable tree mid-pass
b = ["0        set pages_to_scan 400", "0        set sleep_millisecs 10", "0        set smart_scan 0",
     "0        spawn a", "0        map a 0x2000 300", "0        advise a 0x2000 300 mergeable", "0        fillseq a 0x2000 300 20000",
     "0        spawn b", "0        map b 0x2000 300", "0        advise b 0x2000 300 mergeable", "0        fillseq b 0x2000 300 30000",
     "0        spawn c", "0        map c 0x2000 100", "0        advise c 0x2000 100 mergeable", "0        fillseq c 0x2000 100 20150",
     "0        set run 1", "0        settle 1", "0        mark checksummed",
     "0        set sleep_millisecs 1000",
     "# mid-pass: a 100-299 (in the unstable tree since this pass's first batch) go away",
     "500000   unmap a 0x2064 200", "500000   mark midpass",
     "500000   set sleep_millisecs 10", "500000   settle 1", "500000   mark s1",
     "500000   settle 1", "500000   mark s2", "500000   settle 1", "500000   mark s3"]
w("tricky_unmap_unstable", """
munmap of pages that sit in the unstable tree while the pass goes on.
a: 300 distinct pages (rand:20000+i); b: 300 distinct unique pages; c: 100
pages equal to a 150-249 (rand:20150+j).  pages_to_scan 400: a pass (700
visits) takes two batches.  After the checksum pass sleep_millisecs 1000
starts the first batch (a 0-299 and b 0-99 go into the unstable tree); 0.5 s
later a 100-299 are unmapped; then the rest of the pass (b 100-299, then c,
whose pages match a's vanished ones) and more passes.
smart_scan 0.
""", b)

# ---- tricky (c): exit of an mm with merged pages
b = fast(["0        set max_page_sharing 1024"])
for m, n in (("a", 200), ("b", 200), ("c", 100)):
    b += [f"0        spawn {m}", f"0        map {m} 0x3000 {n}", f"0        advise {m} 0x3000 {n} mergeable", f"0        fill {m} 0x3000 {n} byte:3c"]
b += ["0        spawn u", "0        map u 0x3000 50", "0        advise u 0x3000 50 mergeable", "0        fillseq u 0x3000 50 777"]
b += ["0        set run 1"] + settles("merged_s", 2)
b += ["0        exit a", "0        mark exit_a"] + settles("exit_a_s", 2)
b += ["# b (200 sharers) and c leave together: only u and the KSM page's last mapper remain",
      "0        exit b", "0        mark exit_b"] + settles("exit_b_s", 2)
b += ["0        exit c", "0        mark exit_c"] + settles("exit_c_s", 2)
w("tricky_exit_merged", """
exit of mms with merged pages (reference section 9): a, b (200 pages each)
and c (100) hold one KSM page (499 sharers); u has 50 unique pages and stays.
a exits first (its slot is moved behind the cursor, its items are freed when
the cursor reaches it: counters drop only then), then b, then c (the KSM
page loses its last mapping).
""", b)

# ---- tricky (d): run=2 then run=1 again
b = fast()
b += ["0        spawn a", "0        map a 0x4000 300", "0        advise a 0x4000 300 mergeable", "0        fill a 0x4000 200 byte:4d", "0        fillseq a 0x40c8 100 4000",
      "0        spawn b", "0        map b 0x4000 300", "0        advise b 0x4000 300 mergeable", "0        fill b 0x4000 300 byte:4d",
      "0        set run 1"] + settles("merged_s", 3)
b += ["0        set run 2", "0        mark unmerged", "0        set run 1"] + settles("again_s", 3)
b += ["0        set run 0", "0        mark stopped", "0        set run 2", "0        mark unmerged_from_0", "0        set run 1"] + settles("third_s", 2)
w("tricky_run2_rerun", """
run=2 unmerges everything at once (cow_ksm + one per mapping) and zeroes
the kernel's full_scans (the marks keep counting); run=1 afterwards starts a
fresh pass in which every page is volatile again.  Then run=0, run=2 from
run=0, run=1 once more.  a: 200 pages byte:4d + 100 distinct; b: 300 byte:4d.
""", b)

# ---- tricky (e): smart_scan over ~15 passes
b = fast()
b += ["0        spawn u", "0        map u 0x5000 100", "0        advise u 0x5000 100 mergeable", "0        fillseq u 0x5000 100 9000",
      "0        spawn m", "0        map m 0x5000 100", "0        advise m 0x5000 100 mergeable", "0        fill m 0x5000 100 byte:5e",
      "0        spawn r", "0        map r 0x5000 60", "0        advise r 0x5000 60 mergeable", "0        fill r 0x5000 60 byte:5f",
      "0        set run 1"]
for i in range(1, 16):
    b += ["0        settle 1", f"0        mark pass{i}"]
    if i % 3 == 0:
        b += [f"0        fill r 0x5000 30 word:0:{i}"]
    if i == 7:
        b += ["0        fill m 0x5000 10 byte:5e"]
w("tricky_smart_scan", """
smart_scan 1 (default) over 15 passes: u 100 unique pages (aged and
skipped more and more: processed on their passes 0,1,2,3,5,8,13), m 100
identical pages (merged: KSM pages are never skipped), r 60 pages byte:5f
of which the first 30 are rewritten every third pass (word:0:i) and merge
among themselves in between; after pass 7 ten of m's pages get the same
bytes again (CoW, re-merge on the next visit).
""", b)

# ---- tricky (f): use_zero_pages with writes, unmap, exit
b = fast(["0        set use_zero_pages 1"])
b += ["0        spawn a", "0        map a 0x6000 200", "0        advise a 0x6000 200 mergeable", "0        fill a 0x6000 200 zero",
      "0        spawn b", "0        map b 0x6000 150", "0        advise b 0x6000 150 mergeable", "0        fill b 0x6000 100 zero", "0        fill b 0x6064 50 byte:11",
      "0        spawn c", "0        map c 0x6000 50", "0        advise c 0x6000 50 mergeable", "0        fill c 0x6000 50 byte:11",
      "0        set run 1"] + settles("merged_s", 3)
b += ["# zero written over KSM zero pages: no cow_ksm, ksm_zero_pages drops at once",
      "0        fill a 0x6000 20 zero", "# non-zero bytes into 20 more",
      "0        fill a 0x6014 20 word:7:7", "0        mark written"] + settles("written_s", 3)
b += ["0        unmap b 0x6000 50", "0        mark unmapped"] + settles("unmapped_s", 2)
b += ["0        exit b", "0        mark exited"] + settles("exited_s", 2)
b += ["0        set run 2", "0        mark unmerged"]
w("tricky_zero_pages_mix", """
use_zero_pages 1: a 200 zero pages, b 100 zero + 50 byte:11, c 50 byte:11
(one KSM page for the 100 byte:11 pages).  Writes of zero over KSM zero
pages (ksm_zero_pages drops at once, no cow_ksm; the fresh zero pages go
back to the zero page on the next visits), non-zero writes, unmap of half
of b's zero pages, exit of b, run=2.
""", b)

# ---- tricky (g): max_page_sharing 2 and 3, 7 identical pages, stale dups
for mps in (2, 3):
    b = fast([f"0        set max_page_sharing {mps}", "0        set stable_node_chains_prune_millisecs 0"])
    b += ["0        spawn a", "0        map a 0x7000 4", "0        advise a 0x7000 4 mergeable", "0        fill a 0x7000 4 byte:77",
          "0        spawn b", "0        map b 0x7000 3", "0        advise b 0x7000 3 mergeable", "0        fill b 0x7000 3 byte:77",
          "0        set run 1"] + settles("merged_s", 3)
    b += ["# a's pages leave their dups (stale when all mappings are gone)", "0        fill a 0x7000 4 word:0:1"] + ["0        mark cow1"] + settles("cow1_s", 3)
    b += ["# back to byte:77 one page at a time", "0        write a 0x7000 byte:77", "0        write a 0x7001 byte:77"] + settles("back_s", 2)
    b += ["0        fill b 0x7000 3 word:0:1", "0        write a 0x7002 byte:77", "0        write a 0x7003 byte:77"] + settles("swap_s", 4)
    b += ["0        fill a 0x7000 4 byte:77", "0        fill b 0x7000 3 byte:77"] + settles("all_s", 4)
    w(f"tricky_mps{mps}", f"""
max_page_sharing {mps} with 7 identical pages (a 4, b 3): a chain of
dups of at most {mps} mappings each.  Rewrites leave dups with no mapping
(stale, pruned at every lookup: stable_node_chains_prune_millisecs 0), the
rewritten pages form a second chain, then pages move back and forth between
the two contents over many passes.
""", b)

# ---- tricky: new pages wait in the per-CPU lru_add batch (PAGEVEC_SIZE 31)
def midpass(t, changes, label):
    """A pass that stops after its first 5 pages for 0.5 s; changes land then."""
    return ([f"{t} set pages_to_scan 5", f"{t} set sleep_millisecs 1000"] +
            [f"{t + 500000} {c}" for c in changes] +
            [f"{t + 500000} mark {label}_mid", f"{t + 500000} set sleep_millisecs 10",
             f"{t + 500000} set pages_to_scan 5000"] + settles(f"{label}_s", 2, t + 500000))

b = ["0 set pages_to_scan 5000", "0 set sleep_millisecs 10", "0 set smart_scan 0",
     "0 spawn a", "0 map a 0x1000 200", "0 advise a 0x1000 200 mergeable", "0 fillseq a 0x1000 200 1000",
     "0 spawn z", "0 map z 0x1000 100", "0 advise z 0x1000 100 mergeable", "0 fill z 0x1000 100 byte:11",
     "0 set run 1", "0 settle 2", "0 mark merged"]
b += midpass(0, ["fill z 0x1000 10 byte:11"], "cow10")
b += midpass(500000, ["fill z 0x1000 45 byte:11"], "cow45")
b += midpass(1000000, ["fill z 0x1000 62 byte:11"], "cow62")
b += midpass(1500000, ["fill z 0x1000 20 byte:11", "unmap a 0x10c0 8", "fill z 0x1014 5 byte:11"], "unmap")
w("tricky_lru_batch", """
A new anonymous page waits in its CPU's lru_add batch (31 folios) until the
batch fills or ksmd drains all CPUs at the start of a pass; meanwhile its raised refcount makes write_protect_page
fail, so KSM cannot merge it.  a: 200 distinct pages (a pass stops after
its first 5 pages, all of a, when pages_to_scan is 5 and ksmd sleeps 1 s);
z: 100 pages of byte:11 merged.  0.5 s into a pass, 10, 45, 62 of z's
pages are written with the bytes they had: CoW copies with unchanged
checksums that the same pass would merge straight back, but N mod 31 of
them (10, 14, 0) are still batched and stay volatile until the next pass.
Last, 20 CoWs, a munmap of 8 of a's pages, 5 more CoWs: 25 stay out, so
munmap did not drain the batch (nor did an exit, tried by hand, even with
every task pinned to one CPU).
""", b)

b = ["0 set pages_to_scan 5000", "0 set sleep_millisecs 10", "0 set smart_scan 0",
     "0 spawn a", "0 map a 0x1000 200", "0 advise a 0x1000 200 mergeable", "0 fillseq a 0x1000 200 1000",
     "0 spawn z", "0 map z 0x1000 100", "0 advise z 0x1000 100 mergeable", "0 fill z 0x1000 100 byte:11",
     "0 set run 1", "0 settle 2", "0 mark merged"]
b += midpass(0, ["spawn n", "map n 0x1000 20", "advise n 0x1000 20 mergeable",
                 "fill n 0x1000 20 byte:11", "fill z 0x1000 20 byte:11"], "spawn")
b += midpass(500000, ["spawn m", "exit n", "map m 0x1000 3", "advise m 0x1000 3 mergeable",
                      "fill m 0x1000 3 byte:11", "fill z 0x1014 30 byte:11"], "again")
w("tricky_lru_spawn", """
A process spawned mid-pass: its 20 new pages and 20 CoWs of z (byte:11,
merged) fill the lru_add batch once (n's 20, z's first 11), so z's last 9
stay volatile until the next pass (n, advised behind the cursor, is first
visited in the next pass).  Then a second spawn, 3 new pages and 30 CoWs:
33 - 31 = 2 of z stay out.  Only trace pages may count: a replayer whose
own start-up writes (a new process's stack, copy-on-write after fork) land
in the same CPU's batch shifts both.
""", b)

b = ["0 set sleep_millisecs 0", "0 set pages_to_scan 50", "0 set smart_scan 0",
     "0 spawn a", "0 map a 0x1000 300", "0 advise a 0x1000 300 mergeable", "0 fillseq a 0x1000 300 1",
     "0 spawn z", "0 map z 0x1000 100", "0 advise z 0x1000 100 mergeable", "0 fill z 0x1000 100 byte:5a",
     "0 set run 1", "0 settle 1", "0 mark s1", "0 settle 2", "0 mark s3",
     "0 fill z 0x1000 10 byte:a5", "0 fill a 0x1000 5 byte:5a", "0 settle 1", "0 mark w1",
     "0 set sleep_millisecs 1", "0 settle 1", "0 mark w2"]
w("tricky_sleep0", """
sleep_millisecs 0 (ksmd never sleeps) and 1, with 50 pages a batch (8 batches
a pass): every settle still ends at the pass boundary and the counters are
the model's.  A live replay cannot stop a ksmd that never sleeps at a
boundary, so `ksmsim live` settles at sleep_millisecs 10 when the trace has
less (the trace clock stands still in a settle anyway).
""", b)

b = ["0 set pages_to_scan 5000", "0 set sleep_millisecs 10", "0 set smart_scan 0",
     "0 set max_page_sharing 2", "0 set stable_node_chains_prune_millisecs 0",
     "0 spawn a", "0 map a 0x1000 200", "0 advise a 0x1000 200 mergeable", "0 fillseq a 0x1000 200 1000",
     "0 spawn t", "0 map t 0x1000 2", "0 advise t 0x1000 2 mergeable", "0 fill t 0x1000 2 byte:44",
     "0 spawn s", "0 map s 0x1000 1", "0 advise s 0x1000 1 mergeable", "0 fill s 0x1000 1 byte:44",
     "0 set run 1", "0 settle 3", "0 mark settled"]
b += midpass(0, ["fill t 0x1000 2 byte:44"], "cow")
w("tricky_lru_break_cow", """
break_cow after half a merge.  max_page_sharing 2 and three byte:44 pages:
t's two share one KSM page (a full dup), s's sits in the unstable tree.
Mid-pass both of t's pages are written with byte:44 (CoW: two fresh copies
in the lru_add batch, the KSM page freed).  Later in the pass t 0x1000
finds nothing stable and enters the unstable tree; t 0x1001 matches it but
is batched itself (no merge); s matches t 0x1000: s is write-protected and
made a KSM page, then t 0x1000 cannot be (batched), so ksmd breaks s's
half-made KSM page again (break_cow: cow_ksm + 1); those two stay
volatile until the next pass merges them.
""", b)
