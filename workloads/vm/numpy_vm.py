#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The guests' numpy workload: workloads/real/numpy_work.py made small
enough for TCG (Debian's numpy uses the reference BLAS): matrix multiplies
of SIZE x SIZE (default 300 and 600), then STREAM copy/scale/add/triad
over N doubles.   numpy_vm.py [N [SIZE...]]"""
import sys
import time

import numpy as np

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
sizes = [int(s) for s in sys.argv[2:]] or [300, 600]
rng = np.random.default_rng(1)
t0 = time.time()
for size in sizes:
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
