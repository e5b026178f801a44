#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Random traces through the model with the invariant checker on.

usage: model_fuzz.py KSMSIM [FIRST_SEED] [COUNT] [--thp]
Each seed makes a small trace mixing every verb and knob (several mms, NUMA
nodes, chains, zero pages, run 0/1/2, unmap and exit mid-pass). A run may
refuse a trace (exit 2: e.g. a knob change the kernel would refuse), but it
must never crash and never break an invariant (exit 1).
With --thp the traces (version 3) hold hugepage areas of whole 2 MiB
blocks and fork, so THPs are shared by up to several mms while they
store, cut their VMAs (unmap, advice flips), exit and merge.
"""
import os, random, subprocess, sys, tempfile

CONTENTS = ["zero", "byte:11", "byte:22", "rand:5", "rand:6"]


def content(r):
    x = r.random()
    if x < 0.7:
        return r.choice(CONTENTS)
    if x < 0.85:
        return "word:%d:%d" % (r.randrange(512), r.randrange(3))
    return "rand:%d" % r.randrange(1000)


def trace(seed):
    r = random.Random(seed)
    out = ["ksmtrace 1",
           "0 set pages_to_scan %d" % r.choice([1, 3, 7, 50, 1000]),
           "0 set max_page_sharing %d" % r.choice([2, 3, 256]),
           "0 set use_zero_pages %d" % r.randrange(2),
           "0 set smart_scan %d" % r.randrange(2),
           "0 set stable_node_chains_prune_millisecs %d" % r.choice([0, 10, 2000])]
    if r.random() < 0.3:
        out.append("0 set merge_across_nodes 0")
    out.append("0 set run 1")
    t, mms, names = 0, {}, 0
    for i in range(r.randrange(20, 120)):
        t += r.choice([0, 0, 1000, 5000, 20000, 100000])
        op = r.random()
        if op < 0.1 or not mms:
            name = "m%d" % names
            names += 1
            mms[name] = {}
            out.append("%d spawn %s node=%d" % (t, name, r.randrange(2)))
            base = 0x100
            for _ in range(r.randrange(1, 3)):
                n = r.randrange(1, 12)
                out.append("%d map %s %d %d" % (t, name, base, n))
                mms[name][base] = (n, False)
                if r.random() < 0.8:
                    out.append("%d advise %s %d %d mergeable" % (t, name, base, n))
                    mms[name][base] = (n, True)
                base += n + r.randrange(0, 3)
            continue
        m = r.choice(sorted(mms))
        areas = sorted(mms[m].items())
        if op < 0.5 and areas:
            b, (n, _) = r.choice(areas)
            s = r.randrange(n)
            k = r.randrange(1, n - s + 1)
            if r.random() < 0.5:
                out.append("%d fill %s %d %d %s" % (t, m, b + s, k, content(r)))
            else:
                out.append("%d write %s %d %s" % (t, m, b + s, content(r)))
        elif op < 0.55 and areas:
            b, (n, mg) = r.choice(areas)
            out.append("%d advise %s %d %d %s" % (t, m, b, n, "unmergeable" if mg else "mergeable"))
            mms[m][b] = (n, not mg)
        elif op < 0.6 and areas:
            b, _ = r.choice(areas)
            out.append("%d unmap %s %d %d" % (t, m, b, mms[m][b][0]))
            del mms[m][b]
        elif op < 0.65:
            out.append("%d exit %s" % (t, m))
            del mms[m]
        elif op < 0.7:
            out.append("%d set %s" % (t, r.choice([
                "run 0", "run 1", "run 2", "run 1", "max_page_sharing 2", "max_page_sharing 5",
                "merge_across_nodes 0", "merge_across_nodes 1",
                "stable_node_chains_prune_millisecs 0", "stable_node_chains_prune_millisecs 100",
                "sleep_millisecs %d" % r.choice([0, 5, 20, 100]), "smart_scan %d" % r.randrange(2),
                "use_zero_pages %d" % r.randrange(2), "pages_to_scan %d" % r.choice([1, 5, 100])])))
        elif op < 0.8:
            out += ["%d set run 1" % t, "%d settle %d" % (t, r.randrange(1, 4)), "%d mark x%d" % (t, i)]
        else:
            out.append("%d mark y%d" % (t, i))
    return "\n".join(out) + "\n"


HPAGE = 512


def thp_trace(seed):
    """THPs shared by forks: stores, VMA cuts, exits and merges in any order."""
    r = random.Random(seed)
    out = ["ksmtrace 3",
           "0 set pages_to_scan %d" % r.choice([7, 100, 3000]),
           "0 set max_page_sharing %d" % r.choice([2, 256]),
           "0 set use_zero_pages %d" % r.randrange(2),
           "0 set smart_scan %d" % r.randrange(2),
           "0 set sleep_millisecs 10"]
    if r.random() < 0.6:
        out.append("0 set run 1")
    t, live, names = 0, [], 0
    base, blocks = 0x80000, r.randrange(1, 4)
    for i in range(r.randrange(15, 60)):
        t += r.choice([0, 0, 1000, 20000])
        op = r.random()
        if op < 0.08 or not live:
            name = "m%d" % names
            names += 1
            live.append(name)
            out.append("%d spawn %s" % (t, name))
            out.append("%d map %s %d %d" % (t, name, base, blocks * HPAGE))
            out.append("%d advise %s %d %d hugepage" % (t, name, base, blocks * HPAGE))
            out.append("%d advise %s %d %d mergeable" % (t, name, base, blocks * HPAGE))
            continue
        m = r.choice(live)
        if op < 0.25:
            child = "m%d" % names
            names += 1
            live.append(child)
            out.append("%d fork %s %s" % (t, m, child))
        elif op < 0.6:
            s_ = r.randrange(blocks * HPAGE)
            k = r.randrange(1, min(40, blocks * HPAGE - s_) + 1)
            out.append("%d fill %s %d %d %s" % (t, m, base + s_, k, content(r)))
        elif op < 0.68:
            s_ = r.randrange(blocks * HPAGE)
            k = r.randrange(1, min(64, blocks * HPAGE - s_) + 1)
            out.append("%d advise %s %d %d %s" % (t, m, base + s_, k, r.choice(
                ["nohugepage", "hugepage", "unmergeable", "mergeable"])))
        elif op < 0.72:
            # unmap then map back: the range is empty, then faults afresh
            s_ = r.randrange(blocks * HPAGE)
            k = r.randrange(1, min(64, blocks * HPAGE - s_) + 1)
            out.append("%d unmap %s %d %d" % (t, m, base + s_, k))
            out.append("%d map %s %d %d" % (t, m, base + s_, k))
            out.append("%d advise %s %d %d mergeable" % (t, m, base + s_, k))
        elif op < 0.8:
            out.append("%d exit %s" % (t, m))
            live.remove(m)
        elif op < 0.85:
            out.append("%d set run %d" % (t, r.choice([0, 1, 1, 2])))
        else:
            out += ["%d set run 1" % t, "%d settle %d" % (t, r.randrange(1, 3)), "%d mark x%d" % (t, i)]
    return "\n".join(out) + "\n"


def main():
    args = [a for a in sys.argv[1:] if a != "--thp"]
    make = thp_trace if "--thp" in sys.argv[1:] else trace
    bin_ = args[0]
    first = int(args[1]) if len(args) > 1 else 1
    count = int(args[2]) if len(args) > 2 else 150
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.ksmt")
        for seed in range(first, first + count):
            with open(path, "w") as f:
                f.write(make(seed))
            p = subprocess.run([bin_, "run", "--check", "--quiet", "--trace", path],
                               capture_output=True, text=True)
            if p.returncode not in (0, 2):
                bad += 1
                print("seed %d: exit %d: %s" % (seed, p.returncode, p.stderr.strip()[:300]))
    print("%d seeds, %d failures" % (count, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
