#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The number-crunching workload of numpy.sh: DGEMM-like, then STREAM-like."""
import sys
import time

import numpy as np

n = int(sys.argv[1]) if len(sys.argv) > 1 else 8_000_000
rng = np.random.default_rng(1)
t0 = time.time()
for size in (600, 1200):
    a = rng.random((size, size))
    b = rng.random((size, size))
    for _ in range(3):
        c = a @ b
    del a, b, c
a = np.full(n, 1.0)
b = np.full(n, 2.0)
c = np.zeros(n)
for _ in range(5):
    c[:] = a            # copy
    b[:] = 3.0 * c      # scale
    c[:] = a + b        # add
    a[:] = b + 3.0 * c  # triad
print("numpy workload: %.2f s, checksum %.6g" % (time.time() - t0, a[:1000].sum()))
