#!/usr/bin/env python3
"""The same SciPy script on the CPU and on the device: only the import changes.

    PYTHONPATH=build/release/python python3 examples/python/from_scipy.py --backend scipy
    PYTHONPATH=build/release/python python3 examples/python/from_scipy.py --backend ziggurat

A 2D Poisson matrix (SPD) solved by CG with Jacobi, a convection-diffusion one (nonsymmetric) by
BiCGStab and GMRES(30), and the Poisson operator matrix-free (a LinearOperator) by CG; each line
prints info and the relative residual. docs/from-scipy.md walks through it.
"""

import argparse
import importlib
import inspect

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator


def poisson(m):
    one = sp.diags([-1, 2, -1], [-1, 0, 1], shape=(m, m))
    return sp.kronsum(one, one, format="csr")


def convection_diffusion(m, wind=0.4):
    one = sp.diags([-1 - wind, 2, -1 + wind], [-1, 0, 1], shape=(m, m))
    return sp.kronsum(one, one, format="csr")


def run(linalg, m=64):
    """The script a SciPy user has, with `linalg` either scipy.sparse.linalg or ziggurat.sparse.linalg:
    {name: (info, relative residual)}."""
    # SciPy 1.12 and later, and ziggurat, spell the relative tolerance rtol; SciPy 1.10 (Debian 12)
    # spells it tol, with atol=0.0 for the same test.
    tol = {"rtol": 1e-8} if "rtol" in inspect.signature(linalg.cg).parameters else {"tol": 1e-8, "atol": 0.0}
    b = np.ones(m * m)
    A = poisson(m)
    N = convection_diffusion(m)
    jacobi = LinearOperator(A.shape, matvec=lambda x: x / A.diagonal())
    matrix_free = LinearOperator(A.shape, matvec=lambda x: A @ x)
    runs = {"cg + Jacobi": (A, linalg.cg(A, b, M=jacobi, **tol)),
            "bicgstab": (N, linalg.bicgstab(N, b, **tol)),
            "gmres(30)": (N, linalg.gmres(N, b, restart=30, maxiter=200, **tol)),
            "cg, matrix-free": (A, linalg.cg(matrix_free, b, **tol))}
    return {name: (info, np.linalg.norm(b - matrix @ x) / np.linalg.norm(b)) for name, (matrix, (x, info)) in runs.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["scipy", "ziggurat"], default="ziggurat")
    parser.add_argument("--m", type=int, default=64)
    args = parser.parse_args()
    linalg = importlib.import_module("scipy.sparse.linalg" if args.backend == "scipy" else "ziggurat.sparse.linalg")
    for name, (info, residual) in run(linalg, args.m).items():
        print(f"{name:16s} info {info}  ||b - A x|| / ||b|| = {residual:.2e}")


if __name__ == "__main__":
    main()
