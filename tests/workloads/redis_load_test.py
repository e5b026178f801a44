#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""workloads/real/redis_load.py against two stand-in RESP servers on
127.0.0.1 (no Redis needed): load sends every key once, in order, with
values of exactly SIZE bytes, the same to every server and in every run;
drive sends the same seeded SETs and GETs to every server at the asked
rate, new versions of the values, and stops by itself; an error reply
fails it (exit 1); bad arguments get one line and exit 2.  Then
predict.sh's own checks on WORKLOAD, REUSE and the REDIS_* sizes (exit 2, one
line, before it needs root or KSM).
redis_load_test.py REPO_ROOT"""
import os
import socket
import subprocess
import sys
import threading

root = sys.argv[1]
load_py = os.path.join(root, "workloads", "real", "redis_load.py")
predict_sh = os.path.join(root, "workloads", "real", "predict.sh")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, failed, finish  # noqa: E402


class FakeRedis:
    """Accepts one connection, parses RESP arrays of bulk strings, answers
    SET with +OK (or -ERR when told to) and GET with a 3-byte bulk string."""

    def __init__(self, error=False):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.error = error
        self.cmds = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        conn, _ = self.sock.accept()
        f = conn.makefile("rb")
        while True:
            line = f.readline()
            if not line:
                break
            n = int(line[1:])
            args = []
            for _ in range(n):
                ln = int(f.readline()[1:])
                args.append(f.read(ln + 2)[:-2])
            self.cmds.append(args)
            if self.error:
                conn.sendall(b"-ERR no\r\n")
            elif args[0] == b"GET":
                conn.sendall(b"$3\r\nabc\r\n")
            else:
                conn.sendall(b"+OK\r\n")
        conn.close()
        self.sock.close()


def run(*args):
    servers = [FakeRedis(), FakeRedis()]
    ports = ",".join(str(s.port) for s in servers)
    r = subprocess.run([sys.executable, load_py, args[0], ports] + [str(a) for a in args[1:]],
                       capture_output=True, timeout=60)
    for s in servers:
        s.thread.join(10)
    return r, [s.cmds for s in servers]


# load: 300 keys of 128 bytes
r, (a, b) = run("load", 300, 128)
check(r.returncode == 0, "load exit %d: %s" % (r.returncode, r.stderr))
check(len(a) == 300, "load sent %d commands, not 300" % len(a))
check([c[1] for c in a] == [b"user:%08d" % k for k in range(300)], "load keys in order")
check(all(c[0] == b"SET" and len(c[2]) == 128 for c in a), "load values of 128 bytes")
check(a == b, "load sent the same to both servers")
check(len({c[2] for c in a}) == 300, "load values distinct per key")
r2, (a2, _) = run("load", 300, 128)
check(a2 == a, "load the same in a second run")

# drive: 1 s at 40 SET and 120 GET a second: 10 ticks of 4 and 12
r, (a, b) = run("drive", 300, 128, 40, 120, 1)
check(r.returncode == 0, "drive exit %d: %s" % (r.returncode, r.stderr))
sets = [c for c in a if c[0] == b"SET"]
gets = [c for c in a if c[0] == b"GET"]
check(len(sets) == 40 and len(gets) == 120,
      "drive sent %d SET and %d GET, not 40 and 120" % (len(sets), len(gets)))
check(a == b, "drive sent the same to both servers")
check(all(len(c[2]) == 128 and b'"v":0,' not in c[2] for c in sets),
      "drive SETs new versions of 128 bytes")
r2, (a2, _) = run("drive", 300, 128, 40, 120, 1)
check(a2 == a, "drive the same in a second run")

# an error reply fails it
servers = [FakeRedis(error=True)]
r = subprocess.run([sys.executable, load_py, "load", str(servers[0].port), "10", "100"],
                   capture_output=True, timeout=60)
check(r.returncode == 1 and b"ERR" in r.stderr, "error reply: exit %d" % r.returncode)

# bad arguments: exit 2, one line, nothing sent (no server listens)
for bad in (["load"], ["load", "1,2", "10"], ["drive", "6391", "10", "100", "1", "1"],
            ["load", "x", "10", "100"], ["load", "70000", "10", "100"],
            ["load", "6391", "0", "100"], ["load", "6391", "10", "8"], ["flood", "6391", "1", "100"]):
    r = subprocess.run([sys.executable, load_py] + bad, capture_output=True, timeout=60)
    check(r.returncode == 2 and r.stderr.count(b"\n") == 1,
          "redis_load.py %s: exit %d, stderr %r" % (" ".join(bad), r.returncode, r.stderr))

# predict.sh: bad WORKLOAD and sizes, one line and exit 2, whoever runs it
env = dict(os.environ)
for extra in ({"WORKLOAD": "memcached"}, {"WORKLOAD": "redis", "REDIS_VALUE": "10"},
              {"WORKLOAD": "redis", "COPIES": "0"}, {"WORKLOAD": "redis", "MINUTES": "six"},
              {"WORKLOAD": "redis", "REDIS_PORT": "65534"}, {"INTERVAL_MS": "0"},
              {"WORKLOAD": "redis", "REDIS_KEYS": "08"},
              # REUSE: only with RESTART=1 and an earlier run's trace and tune.csv
              {"WORKLOAD": "redis", "REUSE": "1", "RESULTS": "/nonexistent"},
              {"WORKLOAD": "redis", "REUSE": "1", "RESTART": "0"},
              {"WORKLOAD": "redis", "REUSE": "2"}, {"WORKLOAD": "redis", "WAIT_FOREIGN_S": "-1"}):
    e = dict(env, **extra)
    r = subprocess.run(["bash", predict_sh], capture_output=True, env=e, timeout=60)
    check(r.returncode == 2 and r.stderr.count(b"\n") == 1 and not r.stdout,
          "predict.sh %s: exit %d, stderr %r" % (extra, r.returncode, r.stderr))

finish()
