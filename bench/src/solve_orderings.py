#!/usr/bin/env python3
"""ziggurat.solve's orderings and triangular sweeps on SciPy matrices of a size the suite does not
run: the wall time of each call (time to solution as a user sees it), beside what auto chose.

Usage: solve_orderings.py [--n N] [--device SPEC] [--repeat R] [--json]

Systems on N^3 nodes, built with scipy.sparse as CSR (b = 1): -Laplace u (seven points),
anisotropic (coupling along x 100 times the others) and upwind convection-diffusion (first
differences, nonsymmetric). Each runs BiCGStab + ILU(0) to 1e-8 with ordering and sweep: auto,
colours, natural with sync-free sweeps and natural with sequential sweeps (the last only on a CPU
device: one work-item walks the rows). The least wall time of R calls is reported.
"""

import argparse
import json
import time

import numpy as np
import scipy.sparse as sp

import ziggurat


def systems(n):
    e = np.ones(n)
    second = sp.diags([-e[:-1], 2 * e, -e[:-1]], [-1, 0, 1])
    first = sp.diags([-e[:-1], e], [-1, 0])
    i = sp.identity(n)

    def along(x, y, z):
        return sp.kron(sp.kron(z, i), i) + sp.kron(sp.kron(i, y), i) + sp.kron(sp.kron(i, i), x)

    upwind = second + 0.3 * first
    return {"laplace7": along(second, second, second).tocsr(),
            "anisotropic": along(100 * second, second, second).tocsr(),
            "upwind": along(upwind, upwind, upwind).tocsr()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--device", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    context = ziggurat.Context(args.device)
    configs = [("auto", "auto"), ("colours", "auto"), ("natural", "sync-free")]
    if context.device["type"] == "cpu":
        configs.append(("natural", "sequential"))
    rows = []
    for name, a in systems(args.n).items():
        b = np.ones(a.shape[0])
        for ordering, sweep in configs:
            calls = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                _, report = ziggurat.solve(a, b, ordering=ordering, sweep=sweep, context=context)
                calls.append((time.perf_counter() - start, report))
            wall, report = min(calls, key=lambda c: c[0])
            t = report["times"]
            rows.append({"system": f"{name} {args.n}^3", "asked": f"{ordering}, {sweep}",
                         "ran": f"{report['ordering']}, {report['sweep']}", "iterations": report["iterations"],
                         "converged": report["converged"], "wall_s": wall, "setup_s": t["setup_s"],
                         "solve_s": t["solve_s"]})
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"device: {context.device['label']}; ziggurat {ziggurat.__version__}; least of {args.repeat} calls\n")
    print("| system | ordering, sweep asked | ran | iterations | wall ms | setup ms | solve ms |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['system']} | {r['asked']} | {r['ran']} | {r['iterations']}{'' if r['converged'] else ' (not converged)'}"
              f" | {r['wall_s'] * 1e3:.1f} | {r['setup_s'] * 1e3:.1f} | {r['solve_s'] * 1e3:.1f} |")


if __name__ == "__main__":
    main()
