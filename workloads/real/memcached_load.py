#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A load for memcached copies (predict.sh's LOAD): the same dataset, then
the same requests at a fixed rate, to every instance on 127.0.0.1, so that
the copies hold the same values (KSM can merge those pages) and a recorded
run and a live run see the same load. The text protocol over a socket: no
client library.

  memcached_load.py load  PORTS KEYS
      set key:00000000 .. KEYS-1, each value 4-20 KiB of base64 text
      seeded by the key; returns when every instance stored every key.
  memcached_load.py drive PORTS KEYS SECONDS
      every 100 ms, 1 set (a new version of a seeded key) and 10 gets to
      each instance, for SECONDS at most, ticks at fixed times.

PORTS is a comma-separated list. Exit 2 on bad arguments, 1 when an
instance answers with an error or goes away."""
import base64
import random
import socket
import sys
import time


def value(key, version=0):
    r = random.Random("%s/%d" % (key, version))
    return base64.b64encode(r.randbytes(r.randint(3072, 15360)))


def conn(port):
    s = socket.create_connection(("127.0.0.1", port))
    # one request, one answer: Nagle would hold each for the last one's ACK
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s, s.makefile("rb")


def expect(f, want):
    line = f.readline()
    if not line.startswith(want):
        sys.exit("memcached_load.py: answered %r, wanted %r" % (line[:80], want))


def set_key(s, f, key, v):
    s.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key.encode(), len(v), v))
    expect(f, b"STORED")


def get_key(s, f, key):
    s.sendall(b"get %s\r\n" % key.encode())
    line = f.readline()
    while line and not line.startswith(b"END"):
        if line.startswith(b"VALUE"):
            f.read(int(line.split()[3]) + 2)
        line = f.readline()


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("load", "drive"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    ports = [int(p) for p in sys.argv[2].split(",")]
    keys = int(sys.argv[3])
    cs = [conn(p) for p in ports]
    name = lambda i: "key:%08d" % i
    if sys.argv[1] == "load":
        for i in range(keys):
            v = value(name(i))
            for s, f in cs:
                set_key(s, f, name(i), v)
        return
    seconds = float(sys.argv[4])
    r = random.Random(1)
    t0 = time.monotonic()
    tick = 0
    versions = {}
    while time.monotonic() - t0 < seconds:
        k = r.randrange(keys)
        versions[k] = versions.get(k, 0) + 1
        v = value(name(k), versions[k])
        gets = [name(r.randrange(keys)) for _ in range(10)]
        for s, f in cs:
            set_key(s, f, name(k), v)
            for g in gets:
                get_key(s, f, g)
        tick += 1
        time.sleep(max(0.0, t0 + tick * 0.1 - time.monotonic()))


main()
