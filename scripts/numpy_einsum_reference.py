"""numpy + opt_einsum on the einsum-benchmark instances, for `cargo xtask bench-report`.

Runs every instance of a folder the way the kernels issue quotes numpy: one thread (the BLAS
thread count is pinned before numpy loads), the instance's `opt_flops` path, float64 operands
drawn from a fixed seed (with `--dtype complex128`, complex operands, both parts drawn). Each
instance runs once untimed (page faults, allocator warm-up), then timed until a time budget is
spent (at least once); the median is reported. `--filter` keeps the instances whose file name
contains one of its comma-separated parts.

Usage: python numpy_einsum_reference.py INSTANCES_DIR [--budget-s S] [--filter TEXT[,TEXT..]]
                                        [--dtype float64|complex128]

Prints one JSON object on standard output:
{"numpy": "2.4.x", "opt_einsum": "3.4.x", "medians_ms": {"name": ms, ...}, "runs": {...}}
"""

import ast
import json
import os
import sys
import time

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402  (after the thread pinning above)
import opt_einsum as oe  # noqa: E402


def field(doc, name):
    """A field that the instance files store either as JSON or as a Python literal string."""
    value = doc[name]
    return ast.literal_eval(value) if isinstance(value, str) and name != "format_string" else value


def main(argv):
    if not argv:
        sys.exit("usage: numpy_einsum_reference.py INSTANCES_DIR [--budget-s S] [--filter TEXT]")
    folder, budget, only, dtype = argv[0], 10.0, [""], "float64"
    rest = argv[1:]
    while rest:
        flag = rest.pop(0)
        if flag == "--budget-s" and rest:
            budget = float(rest.pop(0))
        elif flag == "--filter" and rest:
            only = rest.pop(0).split(",")
        elif flag == "--dtype" and rest:
            dtype = rest.pop(0)
            if dtype not in ("float64", "complex128"):
                sys.exit(f"--dtype {dtype}: float64 or complex128")
        else:
            sys.exit(f"unknown argument {flag}")
    medians, runs = {}, {}
    for entry in sorted(os.listdir(folder)):
        if not entry.endswith(".json") or not any(part in entry for part in only):
            continue
        with open(os.path.join(folder, entry), encoding="utf-8") as f:
            doc = json.load(f)
        name = doc["name"]
        path = [tuple(step) for step in field(doc, "paths")["opt_flops"]["path"]]
        rng = np.random.default_rng(0)
        if dtype == "complex128":
            operands = [rng.random(shape) + 1j * rng.random(shape) for shape in field(doc, "shapes")]
        else:
            operands = [rng.random(shape) for shape in field(doc, "shapes")]
        spec = doc["format_string"]
        oe.contract(spec, *operands, optimize=path)
        times = []
        spent = time.perf_counter()
        while not times or time.perf_counter() - spent < budget:
            start = time.perf_counter()
            oe.contract(spec, *operands, optimize=path)
            times.append(time.perf_counter() - start)
        times.sort()
        medians[name] = times[len(times) // 2] * 1e3
        runs[name] = len(times)
        print(f"numpy: {name}: {medians[name]:.3f} ms over {len(times)} runs", file=sys.stderr)
    print(json.dumps({
        "numpy": np.__version__,
        "opt_einsum": oe.__version__,
        "dtype": dtype,
        "medians_ms": medians,
        "runs": runs,
    }))


if __name__ == "__main__":
    main(sys.argv[1:])
