"""The einsum peers of `cargo xtask bench-report`: numpy + opt_einsum, JAX (XLA CPU) and TBLIS.

Every peer runs at one thread (the BLAS, XLA and TBLIS thread counts are pinned before their
libraries load; the command also pins the process to one CPU), on the instance's `opt_flops` path
and on the same operands. Instance by instance, the peers take turns: each runs the instance once
untimed (page faults, allocator warm-up, JAX's compilation), then timed until a time budget is
spent (at least once); the median is reported.

- numpy: `opt_einsum.contract(spec, *operands, optimize=path)` (BLAS steps through numpy's
  tensordot, the others through numpy.einsum).
- jax: the same path's pairwise steps, each a `jax.numpy.einsum`, in one `jax.jit` function with
  64-bit floats enabled; operands are on the device before the clock starts.
- tblis: opt_einsum's contraction along the path with pytblis as its backend (TBLIS's tensordot
  and einsum; numpy's transpose, which makes a strided view, not a copy).

float64 operands are SplitMix64's uniform values in [0, 1) (seed 0, one stream through the
operands in order, each filled row-major), exactly the operands `holdfast bench` draws, so that
each peer's result can be compared with holdfast's: the script reports each result's sum and sum
of squares (when finite). complex128 operands take both parts from numpy's default generator (seed 0).

With `--gemm-bound` it also times numpy's (OpenBLAS's) single-thread DGEMM at 2048^3 and reports
each instance's GEMM flops: 2 x the product of every index size of each pairwise step that sums
an index (steps that sum none are products, not GEMMs).

With `--runs N` each peer runs each instance exactly N times instead (no untimed run, no
budget): the fixed workload whose resident peak `cargo xtask bench-report` measures.

With `--holdfast PROGRAM` holdfast takes its turn too, after the peers on each instance:
`PROGRAM einsum FILE --threads 1 --repeat R --retention-mib 4096 --json` (one held session, the
first of its R runs cold), with R chosen so that its runs fill about the budget at the fastest
peer's median (at least 5, at most 1000), and its median reported under "holdfast". Its ratios
to the peers then divide medians measured minutes apart at most, not a whole campaign apart.

Usage: python einsum_peers.py INSTANCES_DIR [--peers numpy,jax,tblis] [--budget-s S] [--runs N]
                              [--filter TEXT[,TEXT..]] [--dtype float64|complex128] [--gemm-bound]
                              [--holdfast PROGRAM]

Prints one JSON object on standard output:
{"versions": {...}, "dtype": ..., "peers": {"numpy": {"medians_ms": {...}, "runs": {...},
 "digests": {name: [sum, sum_sq]}, "errors": {name: message}}, ...}, "gemm_flops": {...},
 "largest_live_bytes": {...}, "openblas_dgemm_gflops": x,
 "holdfast": {"medians_ms": {...}, "runs": {...}, "errors": {...}}}
A peer that cannot be imported appears with an "unavailable" message instead.
"""

import ast
import importlib
import importlib.metadata
import json
import math
import os
import subprocess
import sys
import time
import types

for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "TBLIS_NUM_THREADS"):
    os.environ[var] = "1"
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
).strip()

import numpy as np  # noqa: E402  (after the thread pinning above)
import opt_einsum as oe  # noqa: E402

PEERS = ("numpy", "jax", "tblis")


def field(doc, name):
    """A field that the instance files store either as JSON or as a Python literal string."""
    value = doc[name]
    return ast.literal_eval(value) if isinstance(value, str) and name != "format_string" else value


def splitmix_uniform(seed, count, chunk=1 << 20):
    """SplitMix64's first `count` outputs from `seed`, as uniform floats in [0, 1) (53 bits),
    computed a chunk at a time so that the temporaries stay small beside the result."""
    out = np.empty(count, dtype=np.float64)
    for start in range(0, count, chunk):
        k = np.arange(start + 1, min(start + chunk, count) + 1, dtype=np.uint64)
        z = np.uint64(seed) + k * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
        out[start:start + len(k)] = (z >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))
    return out


def operands_of(shapes, dtype):
    if dtype == "complex128":
        rng = np.random.default_rng(0)
        return [rng.random(shape) + 1j * rng.random(shape) for shape in shapes]
    sizes = [int(np.prod(shape, dtype=np.int64)) for shape in shapes]
    values = splitmix_uniform(0, sum(sizes))
    out, at = [], 0
    for shape, size in zip(shapes, sizes):
        out.append(values[at:at + size].reshape(shape))
        at += size
    return out


def steps_of(spec, shapes, path):
    """The pairwise steps of `path` (operand positions, popped in this order, and the step's
    einsum string), the path's GEMM flops and its largest live set in elements (every operand
    and intermediate still needed, plus the step's output, at the step that holds the most)."""
    _, info = oe.contract_path(spec, *shapes, optimize=path, shapes=True)
    size = lambda labels: int(np.prod([info.size_dict[c] for c in labels], dtype=np.float64))
    live = [int(np.prod(shape, dtype=np.float64)) for shape in shapes]
    steps, gemm, peak = [], 0, sum(live)
    for contraction in info.contraction_list:
        inds, removed, einsum_str = contraction[0], contraction[1], contraction[2]
        steps.append((tuple(inds), einsum_str))
        inputs, output = einsum_str.split("->")
        if removed:
            gemm += 2 * size(set("".join(inputs.split(","))))
        out = size(output)
        peak = max(peak, sum(live) + out)
        for i in inds:
            live.pop(i)
        live.append(out)
    return steps, gemm, peak


def along(steps, einsum, operands):
    ops = list(operands)
    for inds, einsum_str in steps:
        args = [ops.pop(i) for i in inds]
        ops.append(einsum(einsum_str, *args))
    return ops[0]


def tblis_backend():
    """pytblis as an opt_einsum backend module: its tensordot and einsum, numpy's transpose."""
    pytblis = importlib.import_module("pytblis")
    shim = types.ModuleType("holdfast_pytblis_backend")
    shim.tensordot = pytblis.tensordot
    shim.einsum = pytblis.einsum
    shim.transpose = getattr(pytblis, "transpose", np.transpose)
    sys.modules[shim.__name__] = shim
    return shim.__name__


def runner(peer, spec, path, steps, operands):
    """A function running one contraction with `peer`, returning a numpy array."""
    if peer == "numpy":
        return lambda: oe.contract(spec, *operands, optimize=path)
    if peer == "jax":
        import jax
        import jax.numpy as jnp

        on_device = [jax.device_put(x) for x in operands]
        compiled = jax.jit(lambda *ops: along(steps, jnp.einsum, ops))
        return lambda: compiled(*on_device).block_until_ready()
    backend = tblis_backend()
    return lambda: oe.contract(spec, *operands, optimize=path, backend=backend)


def available(peer):
    """The peer's version string, or raises ImportError."""
    if peer == "numpy":
        return f"numpy {np.__version__}, opt_einsum {oe.__version__}"
    if peer == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
        return f"jax {jax.__version__}, jaxlib {importlib.metadata.version('jaxlib')}"
    importlib.import_module("pytblis")
    return f"pytblis {importlib.metadata.version('pytblis')}"


def timed(run, budget):
    out = run()
    times = []
    spent = time.perf_counter()
    while not times or time.perf_counter() - spent < budget:
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    times.sort()
    return out, times


def repeated(run, runs):
    """`runs` runs, each timed, none untimed (a memory measurement's fixed count)."""
    times, out = [], None
    for _ in range(runs):
        start = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - start)
    times.sort()
    return out, times


def holdfast_turn(program, file, estimate_ms, budget):
    """holdfast's median (ms) on one instance file and its run count, timed by the program
    itself in one held session."""
    runs = max(5, min(1000, int(budget * 1e3 / max(estimate_ms, 1e-3))))
    out = subprocess.run(
        [program, "einsum", file, "--threads", "1", "--repeat", str(runs),
         "--retention-mib", "4096", "--json"],
        capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["instances"][0]["median_seconds"] * 1e3, runs


def dgemm_gflops(n=2048, repeats=3):
    a, b = np.random.default_rng(1).random((2, n, n))
    a @ b
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    times.sort()
    return 2.0 * n ** 3 / times[len(times) // 2] / 1e9


def main(argv):
    if not argv:
        sys.exit(__doc__.split("Prints")[0].split("Usage: ")[1])
    folder, budget, only, dtype, peers, gemm_bound = argv[0], 6.0, [""], "float64", PEERS, False
    runs, holdfast = None, None
    rest = argv[1:]
    while rest:
        flag = rest.pop(0)
        if flag == "--budget-s" and rest:
            budget = float(rest.pop(0))
        elif flag == "--filter" and rest:
            only = rest.pop(0).split(",")
        elif flag == "--peers" and rest:
            peers = tuple(rest.pop(0).split(","))
            if any(p not in PEERS for p in peers):
                sys.exit(f"--peers {','.join(peers)}: choose from {','.join(PEERS)}")
        elif flag == "--dtype" and rest:
            dtype = rest.pop(0)
            if dtype not in ("float64", "complex128"):
                sys.exit(f"--dtype {dtype}: float64 or complex128")
        elif flag == "--gemm-bound":
            gemm_bound = True
        elif flag == "--holdfast" and rest:
            holdfast = rest.pop(0)
        elif flag == "--runs" and rest:
            runs = int(rest.pop(0))
            if runs < 1:
                sys.exit("--runs must be at least 1")
        else:
            sys.exit(f"unknown argument {flag}")
    versions, results = {}, {}
    for peer in peers:
        try:
            versions[peer] = available(peer)
            results[peer] = {"medians_ms": {}, "runs": {}, "digests": {}, "errors": {}}
        except Exception as e:  # noqa: BLE001  (any import failure: the peer is not measured)
            results[peer] = {"unavailable": f"{type(e).__name__}: {e}"}
    gemm_flops, live_bytes = {}, {}
    own = {"medians_ms": {}, "runs": {}, "errors": {}}
    for entry in sorted(os.listdir(folder)):
        if not entry.endswith(".json") or not any(part in entry for part in only):
            continue
        file = os.path.join(folder, entry)
        with open(file, encoding="utf-8") as f:
            doc = json.load(f)
        name, spec = doc["name"], doc["format_string"]
        shapes = [tuple(s) for s in field(doc, "shapes")]
        path = [tuple(step) for step in field(doc, "paths")["opt_flops"]["path"]]
        steps, gemm_flops[name], peak = steps_of(spec, shapes, path)
        live_bytes[name] = peak * (16 if dtype == "complex128" else 8)
        operands = operands_of(shapes, dtype)
        for peer in peers:
            result = results[peer]
            if "unavailable" in result:
                continue
            try:
                run = runner(peer, spec, path, steps, operands)
                out, times = timed(run, budget) if runs is None else repeated(run, runs)
            except Exception as e:  # noqa: BLE001  (reported per instance, the run goes on)
                result["errors"][name] = f"{type(e).__name__}: {e}"
                print(f"{peer}: {name}: failed: {e}", file=sys.stderr)
                continue
            result["medians_ms"][name] = times[len(times) // 2] * 1e3
            result["runs"][name] = len(times)
            if runs is None:  # the digest's temporaries would count in a memory measurement
                out = np.asarray(out)
                digest = [float(np.real(out).sum()), float((np.abs(out) ** 2).sum())]
                # An instance whose values overflow (a long product of uniform values) has no
                # digest to compare: JSON has no infinity.
                if all(math.isfinite(x) for x in digest):
                    result["digests"][name] = digest
            print(f"{peer}: {name}: {result['medians_ms'][name]:.3f} ms over {len(times)} runs",
                  file=sys.stderr)
        if holdfast is not None:
            measured = [r["medians_ms"][name] for r in results.values()
                        if name in r.get("medians_ms", {})]
            try:
                ms, n = holdfast_turn(holdfast, file, min(measured, default=1e3), budget)
            except (OSError, subprocess.CalledProcessError, ValueError, KeyError) as e:
                own["errors"][name] = f"{type(e).__name__}: {e}"
                print(f"holdfast: {name}: failed: {e}", file=sys.stderr)
                continue
            own["medians_ms"][name], own["runs"][name] = ms, n
            print(f"holdfast: {name}: {ms:.3f} ms over {n} runs", file=sys.stderr)
    doc = {"versions": versions, "dtype": dtype, "peers": results, "gemm_flops": gemm_flops,
           "largest_live_bytes": live_bytes}
    if gemm_bound:
        doc["openblas_dgemm_gflops"] = dgemm_gflops()
    if holdfast is not None:
        doc["holdfast"] = own
    print(json.dumps(doc))


if __name__ == "__main__":
    main(sys.argv[1:])
