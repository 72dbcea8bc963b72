#!/usr/bin/env python3
"""The user's whole path through Python: ziggurat.solve and ziggurat.spmm on SciPy arrays, wall
time against the report's own times, beside SciPy's A @ x on the same matrix.

Usage: python_path.py [--n N] [--device SPEC] [--json]

Systems: -Laplace u (seven points) on N^3 nodes as a SciPy CSR (b = 1), and the same operator for
3-vectors as a SciPy BSR of 3 x 3 blocks (b = 3, (N^3 * 3) rows), both built with scipy.sparse.
Each call runs twice: the first builds the device's programs (or loads them from the binary
cache), the second is what a time-stepping user pays every step. "outside solve" is the wall
time minus the report's solve time: the conversion of SciPy's arrays, the set-up (ordering,
factorisation, uploads) and the Python layer; the target of issue 37 is at most 8 SciPy A @ x.
"""

import argparse
import json
import time

import numpy as np
import scipy
import scipy.sparse as sp

import ziggurat


def laplace7(n):
    e = np.ones(n)
    t = sp.diags([-e[:-1], 2 * e, -e[:-1]], [-1, 0, 1])
    i = sp.identity(n)
    return (sp.kron(sp.kron(t, i), i) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(i, i), t)).tocsr()


def timed(call):
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def measure(name, a, device):
    b = np.ones(a.shape[0])
    x = np.ones(a.shape[0])
    scipy_8 = timed(lambda: [a @ x for _ in range(8)])[0]
    rows = []
    for call in ("first", "second"):
        wall, (_, report) = timed(lambda: ziggurat.solve(a, b, context=device))
        t = report["times"]
        rows.append({"system": name, "call": call, "rows": a.shape[0], "stored": int(a.nnz),
                     "block_size": report["block_size"], "ordering": report["ordering"],
                     "iterations": report["iterations"], "wall_s": wall, "setup_s": t["setup_s"],
                     "solve_s": t["solve_s"], "outside_solve_s": wall - t["solve_s"],
                     "scipy_8_products_s": scipy_8, "spmm_s": timed(lambda: ziggurat.spmm(a, x, context=device))[0]})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=128)
    parser.add_argument("--device", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    device = ziggurat.Context(args.device) if args.device else None
    scalar = laplace7(args.n)
    vector = sp.kron(scalar, sp.identity(3) * 2 + sp.eye(3, k=1) - sp.eye(3, k=-1), format="bsr").tobsr((3, 3))
    rows = measure(f"laplace7 {args.n}^3 (CSR)", scalar, device)
    rows += measure(f"laplace7 x 3x3 {args.n}^3 (BSR)", vector, device)
    label = (device or ziggurat.Context()).device["label"]
    if args.json:
        print(json.dumps({"device": label, "date": time.strftime("%Y-%m-%d"), "scipy": scipy.__version__,
                          "ziggurat": ziggurat.__version__, "rows": rows}, indent=2))
        return
    print(f"device: {label}; SciPy {scipy.__version__}, ziggurat {ziggurat.__version__}, {time.strftime('%Y-%m-%d')}\n")
    print("| system | call | rows | stored | b | ordering | iterations | wall s | setup s | solve s | outside solve s "
          "| 8 SciPy A @ x s | outside / 8 A @ x | spmm s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['system']} | {r['call']} | {r['rows']} | {r['stored']} | {r['block_size']} | {r['ordering']} | "
              f"{r['iterations']} | {r['wall_s']:.3f} | {r['setup_s']:.3f} | {r['solve_s']:.3f} | "
              f"{r['outside_solve_s']:.3f} | {r['scipy_8_products_s']:.3f} | "
              f"{r['outside_solve_s'] / r['scipy_8_products_s']:.2f} | {r['spmm_s']:.3f} |")


if __name__ == "__main__":
    main()
