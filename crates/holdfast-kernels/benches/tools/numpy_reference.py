"""Times numpy.einsum (opt_einsum path, one BLAS thread) on the einsum benchmark instances.

Used to quote numpy and holdfast medians measured side by side on the same machine:

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python3 numpy_reference.py [DIR] [NAME_FILTER]

Needs numpy and opt_einsum (numpy 2.4 + opt_einsum 3.4 were used for the reference table).
Operands are random normal values; the path is the instance's opt_flops path, run through
opt_einsum.contract as numpy's reference measurements were.
"""

import glob
import json
import os
import sys
import time

import numpy as np
import opt_einsum as oe

here = os.path.dirname(os.path.abspath(__file__))
default_dir = os.path.join(here, "..", "..", "..", "..", "..", "shared", "einsum-instances")
folder = sys.argv[1] if len(sys.argv) > 1 and os.path.isdir(sys.argv[1]) else default_dir
flt = sys.argv[-1] if len(sys.argv) > 1 and not os.path.isdir(sys.argv[-1]) else ""

rng = np.random.default_rng(0x5EED)
for f in sorted(glob.glob(os.path.join(folder, "*.json"))):
    d = json.load(open(f))
    if flt not in d["name"]:
        continue
    ops = [rng.standard_normal(s) for s in d["shapes"]]
    path = [tuple(p) for p in d["paths"]["opt_flops"]["path"]]
    run = lambda: oe.contract(d["format_string"], *ops, optimize=path)
    t0 = time.perf_counter()
    run()
    first = time.perf_counter() - t0
    n = 3 if first > 2.0 else 5
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    times.sort()
    print(f"{d['name']}\t{times[len(times) // 2] * 1e3:.2f}", flush=True)
