#!/usr/bin/env python3
"""A SciPy sparse system solved by ziggurat on the device and by scipy.sparse.linalg on the CPU:
a 2D convection-diffusion matrix (nonsymmetric), BiCGStab with ILU(0) against spsolve; then
products of the same matrix kept on the device.

    PYTHONPATH=build/release/python python3 examples/python/solve_scipy.py [--device cpu] [--n 200]
"""

import argparse
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ziggurat


def convection_diffusion(n):
    t = sp.diags([-1.6, 2.2, -0.4], [-1, 0, 1], shape=(n, n))
    return sp.kronsum(t, t, format="csr")


def main():
    parser = argparse.ArgumentParser(description="a SciPy system solved with ziggurat")
    parser.add_argument("--device", default=None)
    parser.add_argument("--n", type=int, default=200, help="grid side: n^2 unknowns")
    args = parser.parse_args()

    a = convection_diffusion(args.n)
    b = np.random.default_rng(1).uniform(-1, 1, a.shape[0])
    context = ziggurat.Context(device=args.device)

    start = time.perf_counter()
    x, report = ziggurat.solve(a, b, method="bicgstab", preconditioner="ilu0", rtol=1e-10, context=context)
    ours = time.perf_counter() - start
    start = time.perf_counter()
    direct = spla.spsolve(a.tocsc(), b)
    theirs = time.perf_counter() - start

    print(f"{a.shape[0]} unknowns, {a.nnz} nonzeros, on {report['device']}")
    print(f"ziggurat bicgstab + ilu0: {report['status']} in {report['iterations']} iterations, "
          f"||b - Ax|| / ||b|| = {np.linalg.norm(b - a @ x) / np.linalg.norm(b):.2e}, {ours:.3f} s")
    print(f"scipy spsolve:            {theirs:.3f} s; max |x - x_spsolve| = {np.abs(x - direct).max():.2e}")

    matrix = ziggurat.DeviceMatrix(a, context=context)  # uploaded once
    xs = np.random.default_rng(2).uniform(-1, 1, (a.shape[0], 8))
    start = time.perf_counter()
    for _ in range(10):
        y = matrix @ xs
    print(f"10 products with 8 vectors from a DeviceMatrix: {(time.perf_counter() - start) / 10 * 1e3:.2f} ms each, "
          f"max |Y - A X| = {np.abs(y - a @ xs).max():.2e}")


if __name__ == "__main__":
    main()
