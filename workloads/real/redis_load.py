#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""predict.sh's load for WORKLOAD=redis: the same dataset, then the same
requests at a fixed rate, sent to every Redis instance on 127.0.0.1, so
that the instances hold the same values (KSM can merge those pages; the
pointer-bearing dict entries and objects differ by address) and the
recorded run and the live run see the same load.  Plain RESP over a
socket, so that it needs no client library.

  redis_load.py load  PORTS KEYS SIZE
      SET user:00000000 .. KEYS-1, each value SIZE bytes of record-like
      text (seeded by the key), pipelined; returns when every instance
      has answered every SET.
  redis_load.py drive PORTS KEYS SIZE WRITES READS SECONDS
      every 100 ms, WRITES/10 SETs (a new version of a key drawn from a
      seeded generator) and READS/10 GETs to each instance, for SECONDS
      seconds at most (then it stops by itself), ticks at fixed times.

PORTS is a comma-separated list.  Exit 2 on bad arguments, 1 when an
instance answers with an error or goes away."""
import random
import socket
import sys
import time

WORDS = ("cache session user order item price stock region cluster node "
         "alpha beta gamma delta status active pending shipped paid note "
         "street city country email phone created updated visits score "
         "rank level group owner admin guest token expires locale theme "
         "light dark en fr de es it pt nl sv").split()
TICK_S = 0.1


def value(key, version, size):
    """Record-like text for key at version: the same bytes for the same
    (key, version) in every instance and every run."""
    rng = random.Random(key * 1000003 + version)
    head = '{"id":%d,"v":%d,"name":"user-%d","score":%d,"bio":"' % (
        key, version, key, rng.randrange(100000))
    words = []
    n = len(head)
    while n < size:
        w = rng.choice(WORDS)
        words.append(w)
        n += len(w) + 1
    return (head + " ".join(words))[:size - 2] + '"}'


def cmd(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, port):
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            data = self.sock.recv(1 << 16)
            if not data:
                sys.exit("redis_load.py: port %d closed the connection" % self.port)
            self.buf += data
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _skip(self, n):
        while len(self.buf) < n:
            data = self.sock.recv(1 << 16)
            if not data:
                sys.exit("redis_load.py: port %d closed the connection" % self.port)
            self.buf += data
        self.buf = self.buf[n:]

    def replies(self, count):
        """Read count replies (+OK, :n, $len bulk, $-1); exit on an error."""
        for _ in range(count):
            line = self._line()
            if line[:1] == b"-":
                sys.exit("redis_load.py: port %d: %s" % (self.port, line.decode(errors="replace")))
            if line[:1] == b"$" and int(line[1:]) >= 0:
                self._skip(int(line[1:]) + 2)


def key_name(k):
    return "user:%08d" % k


def load(conns, keys, size):
    batch = 1000
    for first in range(0, keys, batch):
        ks = range(first, min(first + batch, keys))
        data = b"".join(cmd("SET", key_name(k), value(k, 0, size)) for k in ks)
        for c in conns:
            c.sock.sendall(data)
        for c in conns:
            c.replies(len(ks))


def drive(conns, keys, size, writes, reads, seconds):
    rng = random.Random(33)
    per_tick_w = writes * TICK_S
    per_tick_r = reads * TICK_S
    version = {}
    owed_w = owed_r = 0.0
    start = time.monotonic()
    tick = 0
    while True:
        due = start + tick * TICK_S
        if due - start >= seconds:
            return
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        tick += 1
        owed_w += per_tick_w
        owed_r += per_tick_r
        nw, nr = int(owed_w), int(owed_r)
        owed_w -= nw
        owed_r -= nr
        parts = []
        for _ in range(nw):
            k = rng.randrange(keys)
            version[k] = version.get(k, 0) + 1
            parts.append(cmd("SET", key_name(k), value(k, version[k], size)))
        for _ in range(nr):
            parts.append(cmd("GET", key_name(rng.randrange(keys))))
        data = b"".join(parts)
        for c in conns:
            c.sock.sendall(data)
        for c in conns:
            c.replies(nw + nr)


def main(argv):
    usage = ("usage: redis_load.py load PORTS KEYS SIZE | "
             "drive PORTS KEYS SIZE WRITES READS SECONDS")
    if len(argv) < 2 or argv[1] not in ("load", "drive") or \
            len(argv) != {"load": 5, "drive": 8}[argv[1]]:
        print(usage, file=sys.stderr)
        return 2
    try:
        ports = [int(p) for p in argv[2].split(",")]
        nums = [int(a) for a in argv[3:]]
    except ValueError as e:
        print("redis_load.py: %s (%s)" % (e, usage), file=sys.stderr)
        return 2
    if not ports or any(not 0 < p < 65536 for p in ports) or \
            any(n < 0 for n in nums) or nums[0] < 1 or nums[1] < 64:
        print("redis_load.py: bad ports or sizes (%s)" % usage, file=sys.stderr)
        return 2
    try:
        conns = [Conn(p) for p in ports]
    except OSError as e:
        print("redis_load.py: %s" % e, file=sys.stderr)
        return 1
    if argv[1] == "load":
        load(conns, nums[0], nums[1])
    else:
        drive(conns, *nums)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
