#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What `ksmsim record --pid` costs the process it is attached to.

  sudo workloads/real/attach_cost.py [-o RESULTS.md] [--size-mib 4096]
       [--interval-ms 1000] [--on-s 15] [--off-s 10] [--repeats 2]
       [--max-cpu PCT ...] [--nice] [--pin] [--subject-nice N]

One run of build/bench/record-throughput (SIZE_MIB of MADV_MERGEABLE memory
rewritten page by page flat out; every second it prints its own rate, in
pages per second of wall time and per second of its own CPU time). Once it
is running, windows alternate: OFF_S seconds alone, then one with
`ksmsim record --pid PID --interval-ms INTERVAL_MS --max-seconds ON_S`
attached, for each configuration: uncapped and each --max-cpu value (all
under `nice -n 19` with --nice); REPEATS times over, and OFF_S alone at the
end. With --pin the subject runs on CPU 0 and the recorder on CPU 1
(taskset), as on a host that keeps a CPU for housekeeping; --subject-nice
runs the subject at that nice value, so that other jobs on a shared machine
do not set its CPU share. The first 2 s of every window are left out (the transition). The
cost of a window is 1 - (mean rate while attached) / (mean rate of the
windows alone just before and after it), so that a slow drift in the
machine's load is taken out; it is given for both rates: per wall second
(what the process loses, including the CPU share the recorder takes from it
on a busy machine) and per CPU second (how much slower it runs when it
runs). The recorder's own report (detector, CPU, coverage) is kept with each
window. Writes a markdown table to RESULTS.md (default
workloads/real/attach-cost.md) and prints it.
"""
import argparse
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cpu_model():
    out = subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", default=os.path.join(TOP, "workloads/real/attach-cost.md"))
    ap.add_argument("--ksmsim", default=os.path.join(TOP, "build/cli/ksmsim"))
    ap.add_argument("--bench", default=os.path.join(TOP, "build/bench/record-throughput"))
    ap.add_argument("--size-mib", type=int, default=4096)
    ap.add_argument("--interval-ms", type=int, default=1000)
    ap.add_argument("--on-s", type=int, default=15)
    ap.add_argument("--off-s", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--max-cpu", type=float, nargs="*", default=[5])
    ap.add_argument("--nice", action="store_true", help="the recorder under nice -n 19")
    ap.add_argument("--subject-nice", type=int, default=0,
                    help="the subject's nice value (say -10: the machine's other jobs "
                    "do not set its CPU share)")
    ap.add_argument("--pin", action="store_true",
                    help="the subject on CPU 0, the recorder on CPU 1 (taskset)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("attach_cost.py: must run as root (ksmsim record --pid)")

    configs = [(a.nice, c) for c in [None] + a.max_cpu]
    plan = [c for _ in range(a.repeats) for c in configs]
    # it runs until killed: a window attached can outlast ON_S (its last capture)
    pin = (lambda cpu: ["taskset", "-c", str(cpu)]) if a.pin else (lambda cpu: [])
    prio = ["nice", "-n", str(a.subject_nice)] if a.subject_nice else []
    bench = subprocess.Popen(pin(0) + prio + [a.bench, str(a.size_mib), "1000000"],
                             stdout=subprocess.PIPE,
                             text=True)
    line = bench.stdout.readline().split()
    if len(line) != 2 or line[0] != "ready":
        sys.exit("attach_cost.py: the benchmark did not start: %r" % line)
    pid = int(line[1])
    rates = []     # (monotonic s at the report, pages/s, pages/CPU s)

    def reader():
        for l in bench.stdout:
            f = l.split()
            if len(f) == 3:
                rates.append((time.monotonic(), float(f[1]), float(f[2])))
    th = threading.Thread(target=reader, daemon=True)
    th.start()

    windows = []   # (config or "off", t0, t1, recorder report)
    tmp = tempfile.mkdtemp(prefix="ksmsim-attach-cost-")
    try:
        t = time.monotonic()
        time.sleep(a.off_s)
        windows.append(("off", t, time.monotonic(), ""))
        for c in plan:
            out = os.path.join(tmp, "t.ksmb")
            cmd = [a.ksmsim, "record", "--pid", str(pid), "--interval-ms", str(a.interval_ms),
                   "--max-seconds", str(a.on_s), "--quiet", "-o", out]
            if c[1] is not None:
                cmd[2:2] = ["--max-cpu", "%g" % c[1]]
            if c[0]:
                cmd[0:0] = ["nice", "-n", "19"]
            cmd[0:0] = pin(1)
            t = time.monotonic()
            r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            t1 = time.monotonic()
            if r.returncode != 0:
                sys.exit("attach_cost.py: record exited %d: %s" % (r.returncode, r.stderr))
            windows.append((c, t, t1, r.stderr))
            os.unlink(out)
            t = time.monotonic()
            time.sleep(a.off_s)
            windows.append(("off", t, time.monotonic(), ""))
    finally:
        bench.kill()
        bench.wait()
        os.rmdir(tmp)

    def mean_in(t0, t1, k):
        # a report covers the second before it: keep those wholly inside, but the first
        xs = [r[k] for r in rates if t0 + 2.0 <= r[0] <= t1]
        return sum(xs) / len(xs) if xs else float("nan"), len(xs)

    def cost(i, k):
        """(rate alone, rate attached, cost) of window i, column k of rates."""
        on, _ = mean_in(*windows[i][1:3], k)
        b0, n0 = mean_in(*windows[i - 1][1:3], k)
        b1, n1 = mean_in(*windows[i + 1][1:3], k)
        base = (b0 * n0 + b1 * n1) / (n0 + n1)
        return base, on, 1 - on / base

    rows = {}
    for i, (c, t0, t1, rep) in enumerate(windows):
        if c == "off":
            continue
        base, on, wall_cost = cost(i, 1)
        cbase, con, cpu_cost = cost(i, 2)
        cov = [l for l in rep.splitlines() if "--max-cpu" in l and "intervals covered" in l]
        det = [l for l in rep.splitlines() if "detector " in l]
        cap = [l for l in rep.splitlines() if "capture took" in l]
        rows.setdefault(c, []).append((base, on, wall_cost, cpu_cost, base / cbase, on / con,
                                       det, cap, cov))

    load = open("/proc/loadavg").read().split()[:3]
    lines = [
        "# What `ksmsim record --pid` costs the recorded process",
        "",
        "Generated by `sudo workloads/real/attach_cost.py` (its docstring says how);",
        "do not edit.",
        "",
        "- CPU: %s, %d CPUs (`lscpu`); kernel %s" % (cpu_model(), os.cpu_count(),
                                                     platform.release()),
        "- load average at the end: %s (the machine is shared: other jobs run)" % " ".join(load),
        "- subject: `record-throughput %d` (%d MiB, every page rewritten whole, flat out; "
        "its own pages/s every second), one run of it%s" % (
            a.size_mib, a.size_mib, ", at nice %d" % a.subject_nice if a.subject_nice else ""),
        "- recorder: `%sksmsim record --pid PID --interval-ms %d --max-seconds %d` "
        "[`--max-cpu PCT`], windows of %d s alone between, %d rounds; the first 2 s of "
        "each window left out%s" % ("nice -n 19 " if a.nice else "", a.interval_ms, a.on_s,
                                    a.off_s, a.repeats,
                                    "; subject pinned to CPU 0, recorder to CPU 1 (`--pin`)"
                                    if a.pin else ""),
        "- command: `sudo workloads/real/attach_cost.py%s`" % "".join(
            " " + x for i, x in enumerate(sys.argv[1:]) if x not in ("--ksmsim", "--bench", "-o")
            and (i == 0 or sys.argv[i] not in ("--ksmsim", "--bench", "-o"))),
        "",
        "| recorder | round | pages/s alone | pages/s attached | cost per wall s | "
        "cost per CPU s | subject's CPU share alone / attached | recorder report |",
        "|---|---|---|---|---|---|---|---|",
    ]

    def label(c):
        return ("nice 19, " if c[0] else "") + ("uncapped" if c[1] is None else
                                                  "--max-cpu %g" % c[1])
    for c in configs:
        for k, (base, on, wc, cc, sh0, sh1, det, cap, cov) in enumerate(rows.get(c, [])):
            note = "; ".join(x.replace("ksmsim record: ", "") for x in (cov or cap) + det)
            lines.append("| %s | %d | %.0f | %.0f | %+.1f%% | %+.1f%% | %.2f / %.2f | %s |" % (
                label(c), k + 1, base, on, 100 * wc, 100 * cc, sh0, sh1, note.replace("|", "/")))
    lines.append("")
    lines.append("| recorder | mean cost per wall s | mean cost per CPU s |")
    lines.append("|---|---|---|")
    for c in configs:
        rs = rows.get(c, [])
        if rs:
            lines.append("| %s | %+.1f%% | %+.1f%% |" % (
                label(c), 100 * sum(r[2] for r in rs) / len(rs),
                100 * sum(r[3] for r in rs) / len(rs)))
    text = "\n".join(lines) + "\n"
    with open(a.o, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
