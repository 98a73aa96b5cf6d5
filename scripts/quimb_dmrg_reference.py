"""quimb's two-site DMRG (`quimb.tensor.DMRG2`) on holdfast's chains, for `cargo xtask bench-report`.

Times quimb's DMRG2 sweeps on the chain `holdfast dmrg` runs (SPEC §12 W2, W3, §13 N1), with the
same Hamiltonian, bond-dimension schedule, cutoff and sweep count, one thread (the BLAS, OpenMP
and numba thread counts are set to 1 before numpy loads, unless the caller set them).

Models (open chain of L spin-1/2 sites, Pauli X, Y, Z, S = sigma/2), exactly as holdfast's:
  tfim:       H = -J sum_{i<L} Z_i Z_{i+1} - h sum_i X_i
  heisenberg: H =  J sum_{i<L} S_i . S_{i+1}
  xxz:        H =  J sum_{i<L} (Sx Sx + Sy Sy + D Sz Sz)
quimb's builders use spin operators (S = sigma/2) and their own signs (`MPO_ham_ising` is
`j Sz Sz - bx Sx`), so the MPO is built here term by term with `qtn.SpinHam1D(S=1/2)` in spin
operators: tfim is `-4J Sz Sz - 2h Sx`; heisenberg `J/2 (S+S- + S-S+) + J Sz Sz`; xxz
`J/2 (S+S- + S-S+) + J D Sz Sz`. `--exact` checks this against an independent reference built
from Pauli matrices: dense diagonalisation of the 2^L Hamiltonian (L <= 12) and, for tfim at any
L, the free-fermion energy.

What one sweep is. holdfast counts a sweep as one full pass over the bonds to the right and back
(bonds 0..L-2, then L-2..0; docs/design/mps-conventions.md, crates/holdfast-mps/src/dmrg/), with
one bond dimension for both halves. quimb counts each half as a sweep (`DMRG.solve` takes one
entry of `bond_dims` per direction, and its default sequence "R" re-canonises before every
sweep). So this script drives quimb's own `DMRG2.sweep("R")` then `DMRG2.sweep("L")` for each
holdfast sweep, with the same bond dimension for both and `canonize=False` (the state is
already in the right form, as `solve(sweep_sequence="RL")` would do after its first sweep); the
two halves visit exactly holdfast's bonds. Sweep k (from 0) keeps at most `schedule[k]` while
k < len(schedule), then `chi`. A sweep's time includes everything quimb does in it (it rebuilds
its moving environments at the start of each half-sweep).

Not timed: building the MPO, the random initial state (seeded, bond dimension of the first
sweep, as holdfast) and bringing it to right-canonical form (holdfast also does this before its
first sweep), and a warm-up run of two sweeps on a `--warmup-sites` chain of the same model so
numba's JIT compilation and scipy's first calls are not in the timings.

Truncation. holdfast's cutoff is the relative discarded weight sum(dropped s^2) / sum(s^2);
quimb's DMRG default is `cutoff_mode="sum2"` (absolute discarded weight), so this script sets
`bond_compress_cutoff_mode = "rsum2"`, quimb's relative discarded weight (it keeps values while
the kept weight is below (1 - cutoff) of the total: the same rule up to ties at the boundary).
Neither renormalises the kept values.

Energies. `energies_per_sweep` is holdfast's definition: the local eigenvalue at the sweep's last
bond (bond 0-1 at the end of the left-moving half). `state_energies_per_sweep` is quimb's
`DMRG.energies` convention: <psi|H|psi> of the truncated state after that bond. The local
eigensolver is quimb's default (scipy eigsh, or dense eigh on small blocks; `local_eig_tol` 1e-3,
`local_eig_ncv` 4) unless `--local-eig-tol` / `--local-eig-ncv` are given.

The run stops after `--sweeps` sweeps, or earlier once the energy moves less than `--tolerance`
(absolute, default 1e-12, holdfast's default; 0 runs every sweep) between two sweeps.

Usage:
  python quimb_dmrg_reference.py --model tfim|heisenberg|xxz --sites L [--coupling J]
      [--field h] [--anisotropy D] --chi CHI [--schedule 16,32] [--sweeps N] [--cutoff 1e-12]
      [--tolerance 1e-12] [--warmup-sites 8] [--seed 7] [--local-eig-tol T]
      [--local-eig-ncv N] [--exact]

Prints one JSON object on standard output (progress on standard error):
{"model", "sites", "coupling", "field", "anisotropy", "chi", "schedule", "bond_dims",
 "sweeps" (run), "cutoff", "cutoff_mode", "energy", "energies_per_sweep": [..],
 "state_energies_per_sweep": [..], "max_bond_per_sweep": [..], "sweep_seconds": [..],
 "total_seconds", "warmup_seconds", "local_eig": {..}, "exact_energy" (with --exact, when
 known), "versions": {"python", "quimb", "numpy", "scipy", "numba"}, "threads": {..},
 "blas": threadpoolctl's info (when installed)}
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402  (after the thread pinning above)
import scipy  # noqa: E402
import numba  # noqa: E402
import quimb as qu  # noqa: E402
import quimb.tensor as qtn  # noqa: E402

MODELS = ("tfim", "heisenberg", "xxz")


def build_mpo(model, sites, j, h, d):
    """The model's MPO through quimb's SpinHam1D, written in spin operators S = sigma/2."""
    ham = qtn.SpinHam1D(S=1 / 2)
    if model == "tfim":
        ham += -4.0 * j, "Z", "Z"  # -J Z Z = -4J Sz Sz
        ham += -2.0 * h, "X"  # -h X = -2h Sx
    else:
        zz = j if model == "heisenberg" else j * d
        ham += j / 2, "+", "-"  # Sx Sx + Sy Sy = (S+S- + S-S+)/2
        ham += j / 2, "-", "+"
        ham += zz, "Z", "Z"
    return ham.build_mpo(sites)


def dense_hamiltonian(model, sites, j, h, d):
    """The 2^L x 2^L Hamiltonian from Kronecker products of Pauli matrices (independent of quimb)."""
    x = np.array([[0.0, 1.0], [1.0, 0.0]])
    y = np.array([[0.0, -1.0j], [1.0j, 0.0]])
    z = np.array([[1.0, 0.0], [0.0, -1.0]])

    def chain(ops):
        """The Kronecker product over the chain of {site: operator}, identity elsewhere."""
        out = np.ones((1, 1))
        for i in range(sites):
            out = np.kron(out, ops.get(i, np.eye(2)))
        return out

    dim = 2**sites
    hmat = np.zeros((dim, dim), dtype=complex)
    for i in range(sites - 1):
        if model == "tfim":
            hmat += -j * chain({i: z, i + 1: z})
        else:
            zz = 1.0 if model == "heisenberg" else d
            hmat += (j / 4) * (chain({i: x, i + 1: x}) + chain({i: y, i + 1: y}))
            hmat += (j * zz / 4) * chain({i: z, i + 1: z})
    if model == "tfim":
        for i in range(sites):
            hmat += -h * chain({i: x})
    assert np.abs(hmat.imag).max() == 0.0
    return hmat.real


def exact_energy(model, sites, j, h, d):
    """A reference ground energy: dense ED for L <= 12, free fermions for tfim; else None."""
    if sites <= 12:
        return float(np.linalg.eigvalsh(dense_hamiltonian(model, sites, j, h, d))[0]), "dense ED"
    if model == "tfim":
        # Majorana form: the 2L x 2L tridiagonal matrix with zero diagonal and h, J, h, ... beside
        # it has eigenvalues +-sigma_k; E0 = -sum_k sigma_k.
        off = np.array([h if k % 2 == 0 else j for k in range(2 * sites - 1)])
        t = np.diag(off, 1) + np.diag(off, -1)
        w = np.linalg.eigvalsh(t)
        return float(-w[w > 0].sum()), "free fermions"
    return None, None


class Run:
    """One DMRG2 run driven sweep by sweep, holdfast's way (right then left per sweep)."""

    def __init__(self, mpo, bond_dims, cutoff, seed, local_eig):
        qu.seed_rand(seed)
        p0 = mpo.rand_state(bond_dims[0])
        self.dmrg = qtn.DMRG2(mpo, bond_dims=bond_dims, cutoffs=cutoff, p0=p0)
        self.dmrg.opts["bond_compress_cutoff_mode"] = "rsum2"
        self.dmrg.opts.update(local_eig)
        self.cutoff = cutoff
        # holdfast brings its random state to right-canonical form before the first sweep
        self.dmrg._k.right_canonize(bra=self.dmrg._b)

    def sweep(self, bond_dim):
        """One holdfast sweep: quimb's right-moving then left-moving half-sweep."""
        opts = {
            "canonize": False,
            "max_bond": bond_dim,
            "cutoff": self.cutoff,
            "cutoff_mode": self.dmrg.opts["bond_compress_cutoff_mode"],
            "method": self.dmrg.opts["bond_compress_method"],
            "verbosity": 0,
        }
        with warnings.catch_warnings():
            # as DMRG.solve(suppress_warnings=True): the loose local solves may warn
            warnings.simplefilter("ignore")
            self.dmrg.sweep(direction="R", **opts)
            state_energy = self.dmrg.sweep(direction="L", **opts)
        self.dmrg.energies.append(state_energy)
        local = float(np.real(self.dmrg.local_energies[-1][-1]))
        return local, float(np.real(state_energy)), int(self.dmrg._k.max_bond())


def bond_dim(schedule, chi, k):
    """The bond dimension of sweep k: schedule[k] while k < len(schedule), then chi."""
    return schedule[k] if k < len(schedule) else chi


def blas_info():
    try:
        import threadpoolctl
    except ImportError:
        return None
    return threadpoolctl.threadpool_info()


def parse(argv):
    p = argparse.ArgumentParser(
        description="Time quimb's DMRG2 on holdfast's chains; JSON on stdout."
    )
    p.add_argument("--model", choices=MODELS, required=True)
    p.add_argument("--sites", type=int, required=True)
    p.add_argument("--coupling", type=float, default=1.0, help="J (default 1)")
    p.add_argument("--field", type=float, default=1.0, help="h of tfim (default 1)")
    p.add_argument("--anisotropy", type=float, default=1.0, help="D of xxz (default 1)")
    p.add_argument("--chi", type=int, required=True, help="bond dimension after the schedule")
    p.add_argument(
        "--schedule",
        default="",
        help="comma-separated bond dimensions of the first sweeps (before chi)",
    )
    p.add_argument("--sweeps", type=int, default=10)
    p.add_argument("--cutoff", type=float, default=1e-12, help="relative discarded weight")
    p.add_argument(
        "--tolerance",
        type=float,
        default=1e-12,
        help="stop once the energy moves less than this between sweeps (0: run every sweep)",
    )
    p.add_argument("--warmup-sites", type=int, default=8, help="0 skips the warm-up")
    p.add_argument("--seed", type=int, default=7, help="seed of the random initial state")
    p.add_argument("--local-eig-tol", type=float, default=None, help="quimb's default: 1e-3")
    p.add_argument("--local-eig-ncv", type=int, default=None, help="quimb's default: 4")
    p.add_argument("--exact", action="store_true", help="also report a reference energy")
    args = p.parse_args(argv)
    try:
        args.schedule = [int(s) for s in args.schedule.split(",") if s.strip()]
    except ValueError:
        p.error(f"--schedule must be comma-separated integers, got {args.schedule!r}")
    if args.sites < 2 or args.chi < 1 or any(s < 1 for s in args.schedule):
        p.error("need at least 2 sites and bond dimensions of at least 1")
    if args.sweeps < 1:
        p.error("at least one sweep")
    if not 0.0 <= args.cutoff <= 1.0:
        p.error("the cutoff must be in [0, 1]")
    if args.warmup_sites == 1 or args.warmup_sites < 0:
        p.error("--warmup-sites must be 0 or at least 2")
    return args


def main(argv):
    args = parse(argv)
    j, h, d = args.coupling, args.field, args.anisotropy
    bond_dims = [bond_dim(args.schedule, args.chi, k) for k in range(args.sweeps)]
    local_eig = {}
    if args.local_eig_tol is not None:
        local_eig["local_eig_tol"] = args.local_eig_tol
    if args.local_eig_ncv is not None:
        local_eig["local_eig_ncv"] = args.local_eig_ncv

    warmup_seconds = 0.0
    if args.warmup_sites:
        started = time.perf_counter()
        warm = Run(
            build_mpo(args.model, args.warmup_sites, j, h, d),
            bond_dims, args.cutoff, args.seed, local_eig,
        )
        for k in range(min(2, args.sweeps)):
            warm.sweep(bond_dims[k])
        warmup_seconds = time.perf_counter() - started
        print(f"quimb: warm-up on {args.warmup_sites} sites: {warmup_seconds:.2f} s",
              file=sys.stderr)

    run = Run(build_mpo(args.model, args.sites, j, h, d), bond_dims, args.cutoff, args.seed,
              local_eig)
    energies, state_energies, max_bonds, seconds = [], [], [], []
    for k in range(args.sweeps):
        started = time.perf_counter()
        energy, state_energy, max_bond = run.sweep(bond_dims[k])
        seconds.append(time.perf_counter() - started)
        settled = bool(energies) and abs(energy - energies[-1]) < args.tolerance
        energies.append(energy)
        state_energies.append(state_energy)
        max_bonds.append(max_bond)
        print(f"quimb: sweep {k}: chi {bond_dims[k]}, max bond {max_bond}, E = {energy:.12f}, "
              f"{seconds[-1]:.3f} s", file=sys.stderr)
        if settled:
            break

    out = {
        "model": args.model,
        "sites": args.sites,
        "coupling": j,
        "field": h,
        "anisotropy": d,
        "chi": args.chi,
        "schedule": args.schedule,
        "bond_dims": bond_dims[: len(energies)],
        "sweeps": len(energies),
        "cutoff": args.cutoff,
        "cutoff_mode": run.dmrg.opts["bond_compress_cutoff_mode"],
        "tolerance": args.tolerance,
        "seed": args.seed,
        "energy": energies[-1],
        "energies_per_sweep": energies,
        "state_energies_per_sweep": state_energies,
        "max_bond_per_sweep": max_bonds,
        "sweep_seconds": seconds,
        "total_seconds": sum(seconds),
        "warmup_sites": args.warmup_sites,
        "warmup_seconds": warmup_seconds,
        "local_eig": {
            key: run.dmrg.opts[key]
            for key in ("local_eig_tol", "local_eig_ncv", "local_eig_backend")
        },
        "versions": {
            "python": platform.python_version(),
            "quimb": qu.__version__,
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "numba": numba.__version__,
        },
        "threads": {
            var: os.environ.get(var)
            for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                        "NUMBA_NUM_THREADS")
        },
    }
    if args.exact:
        exact, method = exact_energy(args.model, args.sites, j, h, d)
        if exact is not None:
            out["exact_energy"] = exact
            out["exact_method"] = method
            out["energy_error"] = energies[-1] - exact
    blas = blas_info()
    if blas is not None:
        out["blas"] = blas
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
