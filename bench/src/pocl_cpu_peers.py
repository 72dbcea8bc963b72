#!/usr/bin/env python3
"""ziggurat on a CPU device (PoCL) beside the CPU's own limits and peers, in one run (issue 42,
item 4; results: bench/results/2026-11-28-pocl-cpu-device.md).

  heat  the default 2D heat step (`ziggurat.heat` with no depth: what `ziggurat heat --size NxN`
        runs) on an N x N float32 grid, against the streaming limit (a NumPy copy of 64 MiB, one
        thread and two, 8 bytes a node: one value read, one written) and NumPy's step
        (u + a * Laplacian with slicing, one thread, the same additions in the same order);
  spmv  `DeviceMatrix @ x` (float64, k = 1, transfers included) in CSR and BSR form of the 3D
        seven-point Laplacian on a 100^3 grid (10^6 rows, 6.94 M values) against SciPy's `A @ x`.

A rate is the best of ROUNDS repetitions; heat's is the time of 60 steps less that of 10 (which
leaves the transfers and planning out). Run it with PYTHONPATH naming the ziggurat build to measure
(several builds may be named with --build, e.g. main's and a branch's, to compare them in one run).
Prints one JSON object.
"""

import argparse
import importlib
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import scipy
import scipy.sparse as sp


def best(f, rounds):
    f()
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def copy_gbs(threads, rounds):
    """GB/s moved (read + written) by `threads` NumPy copies of 64 MiB / threads each."""
    src = np.ones((64 << 20) // 4, np.float32)
    dst = np.empty_like(src)
    parts = np.array_split(np.arange(src.size), threads)
    bounds = [(p[0], p[-1] + 1) for p in parts]

    def run():
        workers = [threading.Thread(target=np.copyto, args=(dst[a:b], src[a:b])) for a, b in bounds]
        for w in workers:
            w.start()
        for w in workers:
            w.join()

    return 2 * src.nbytes / best(run, rounds) / 1e9


def numpy_step_gnodes(n, rounds):
    u = np.random.default_rng(0).random((n, n)).astype(np.float32)
    v = u.copy()
    a, b = np.float32(0.2), np.float32(1 - 4 * 0.2)

    def step():
        v[1:-1, 1:-1] = a * (((u[1:-1, :-2] + u[1:-1, 2:]) + u[:-2, 1:-1]) + u[2:, 1:-1]) + b * u[1:-1, 1:-1]

    return (n - 2) ** 2 / best(step, rounds) / 1e9


def ziggurat_heat(z, n, rounds):
    u = np.random.default_rng(0).random((n, n)).astype(np.float32)
    z.heat(u, 2)  # programs, tuning
    rates, depth = [], None
    for _ in range(rounds):
        t = time.perf_counter()
        z.heat(u, 10)
        t10 = time.perf_counter() - t
        t = time.perf_counter()
        _, report = z.heat(u, 60)
        t60 = time.perf_counter() - t
        rates.append((n - 2) ** 2 * 50 / (t60 - t10) / 1e9)
        depth = report["plan"]["depth"]
    return {"gnodes_per_s": max(rates), "all": rates, "depth": depth}


def laplace7(n):
    i = sp.identity(n)
    t = sp.diags([-1, 2, -1], [-1, 0, 1], shape=(n, n))
    a = (sp.kron(sp.kron(t, i), i) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(i, i), t)).tocsr()
    a.sort_indices()
    return a


def ziggurat_spmv(z, a, x, rounds):
    out = {}
    for fmt in ("csr", "bsr"):
        d = z.DeviceMatrix(a, format=fmt)
        if not np.allclose(d @ x, a @ x, rtol=1e-12, atol=1e-12):
            raise SystemExit(f"{fmt}: DeviceMatrix @ x differs from SciPy's A @ x")
        out[fmt] = {"ms": best(lambda: d @ x, rounds) * 1e3, "kernel": d.info["kernels"][1], "block_size": d.block_size}
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096, help="heat grid N x N (default 4096: 2 x 64 MiB)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--build", action="append", default=[], help="a ziggurat Python folder (repeatable)")
    args = parser.parse_args()
    builds = args.build or [None]
    if len(builds) > 1 or builds[0] is not None:
        # One process a build: two ziggurat modules cannot share one interpreter.
        result = {"builds": {}}
        for folder in builds:
            env = dict(os.environ, PYTHONPATH=folder)
            text = subprocess.run([sys.executable, __file__, "--size", str(args.size), "--rounds", str(args.rounds)],
                                  env=env, check=True, capture_output=True, text=True).stdout
            result["builds"][folder] = json.loads(text)
        print(json.dumps(result, indent=1))
        return
    z = importlib.import_module("ziggurat")
    a = laplace7(100)
    x = np.random.default_rng(1).random(a.shape[0])
    result = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_before": os.getloadavg(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "copy_gbs_1_thread": copy_gbs(1, args.rounds),
        "copy_gbs_2_threads": copy_gbs(2, args.rounds),
        "numpy_step_gnodes": numpy_step_gnodes(args.size, args.rounds),
        "ziggurat_heat": ziggurat_heat(z, args.size, args.rounds),
        "scipy_spmv_ms": best(lambda: a @ x, 4 * args.rounds) * 1e3,
        "ziggurat_spmv": ziggurat_spmv(z, a, x, 4 * args.rounds),
        "rows": a.shape[0],
        "values": a.nnz,
        "load_after": os.getloadavg(),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
