#!/usr/bin/env python3
"""The Python peer of `ziggurat-bench wave` (method notes, section 5): the explicit FEM wave step
u3 = -(K1 u2 + K2 u1) / m written with CuPy as a GPU user would write it: K1, given as its
half-stored symmetric diagonals, expanded into a full CSR matrix once (cupyx.scipy.sparse, whose
product is cuSPARSE's SpMV), then each step one product and elementwise operations. The source
is left out (it touches a few DOFs).

Usage:
  wave_peers.py FOLDER    how bench/src/bench_wave.cpp runs it (through run_peer_script): FOLDER
                          holds request.json {"command": "time", "steps": N}, k1.npy (d, n): row d
                          holds K1(i, i + offsets[d]) at [d, i], offsets.npy (d), k2.npy (n),
                          inverse_mass.npy (n): 1 / m
  wave_peers.py selftest  the expansion and the step against a direct product of the half-stored
                          diagonals, with NumPy and SciPy (and CuPy where present)

FOLDER answers one JSON line on stdout: {"seconds_per_step", "note"} (the best of three timed runs
of N steps after a warm-up, between device synchronisations), or {"unavailable": "reason"} when it
cannot run (no CuPy, no CUDA device, out of memory, any exception); it exits 0 either way.
selftest prints {"selftest": "passed" | "failed", ...} and exits 1 on a failure.
"""

import json
import pathlib
import sys
import time

import numpy as np


def full_matrix(k1, offsets, sparse):
    """The full symmetric K1 (n x n CSR) from its half-stored diagonals, with `sparse` the
    scipy.sparse or cupyx.scipy.sparse module. DIA data[k, j] holds A(j - o_k, j)."""
    d, n = k1.shape
    rows, offs = [], []
    for row, o in zip(k1, offsets):
        o = int(o)
        upper = np.zeros(n, dtype=k1.dtype)  # A(i, i + o) = k1[d, i] sits at column i + o
        upper[o:] = row[:n - o]
        rows.append(upper)
        offs.append(o)
        if o > 0:  # A(i + o, i) = k1[d, i] sits at column i
            rows.append(row.copy())
            offs.append(-o)
    data, offs = np.array(rows), np.array(offs)
    if sparse.__name__.startswith("cupyx"):
        import cupy
        data, offs = cupy.asarray(data), cupy.asarray(offs)
    return sparse.dia_matrix((data, offs), shape=(n, n)).tocsr()


def half_product(k1, offsets, x):
    """K1 x from the half-stored diagonals directly (the reference)."""
    n = x.size
    y = np.zeros(n, dtype=np.float64)
    for row, o in zip(k1.astype(np.float64), offsets):
        o = int(o)
        y[:n - o] += row[:n - o] * x[o:]
        if o > 0:
            y[o:] += row[:n - o] * x[:n - o]
    return y


def time_steps(folder):
    request = json.loads((folder / "request.json").read_text())
    steps = int(request["steps"])
    try:
        import cupy
        import cupyx.scipy.sparse as cusparse
    except ImportError as error:
        return {"unavailable": f"CuPy is missing ({error})"}
    try:
        k1, offsets = np.load(folder / "k1.npy"), np.load(folder / "offsets.npy")
        a = full_matrix(k1, offsets, cusparse)
        k2, inverse = (cupy.asarray(np.load(folder / f"{name}.npy")) for name in ("k2", "inverse_mass"))
        inverse = -inverse
        u1 = cupy.zeros_like(k2)
        u2 = cupy.asarray(np.random.default_rng(1).uniform(-1, 1, k2.size).astype(k2.dtype))
        best = float("inf")
        for run in range(4):  # a warm-up, then three timed
            cupy.cuda.Device().synchronize()
            start = time.perf_counter()
            for _ in range(steps):
                u3 = (a @ u2 + k2 * u1) * inverse
                u1, u2 = u2, u3
            cupy.cuda.Device().synchronize()
            if run > 0:
                best = min(best, (time.perf_counter() - start) / steps)
        return {"seconds_per_step": best,
                "note": f"CuPy {cupy.__version__}: u3 = (K1 @ u2 + k2 * u1) * (-1 / m), K1 a full CSR of "
                        f"{a.nnz} entries, {k1.dtype}"}
    except Exception as error:  # noqa: BLE001 - a peer that fails answers why
        text = str(error)
        return {"unavailable": ("out of memory: " if "memory" in text.lower() else "") + text}


def selftest():
    import scipy.sparse
    failures = []
    rng = np.random.default_rng(7)
    n, offsets = 300, np.array([0, 1, 2, 3, 37, 38, 39, 40, 41, 42, 43], dtype=np.int32)
    for dtype, tolerance in ((np.float64, 1e-12), (np.float32, 1e-5)):
        k1 = rng.uniform(-1, 1, (offsets.size, n)).astype(dtype)
        for d, o in enumerate(offsets):  # values whose column falls outside are zero, as ziggurat stores them
            k1[d, n - o:] = 0
        x = rng.uniform(-1, 1, n).astype(dtype)
        want = half_product(k1, offsets, x)
        a = full_matrix(k1, offsets, scipy.sparse)
        got = a @ x
        error = np.abs(got - want).max() / np.abs(want).max()
        print(f"full matrix, {dtype.__name__}: relative error {error:.2e}", file=sys.stderr)
        if not error <= tolerance or (a - a.T).count_nonzero() != 0:
            failures.append(f"full matrix {dtype.__name__}")
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        folder = pathlib.Path(folder)
        np.save(folder / "k1.npy", k1)
        np.save(folder / "offsets.npy", offsets)
        np.save(folder / "k2.npy", np.ones(n, dtype=np.float32))
        np.save(folder / "inverse_mass.npy", np.full(n, 0.5, dtype=np.float32))
        (folder / "request.json").write_text(json.dumps({"command": "time", "steps": 5}))
        answer = time_steps(folder)
        print(f"FOLDER form: {answer}", file=sys.stderr)
        if not ("unavailable" in answer or answer.get("seconds_per_step", 0) > 0):
            failures.append("FOLDER form")
    print(json.dumps({"selftest": "failed" if failures else "passed", "failures": failures}))
    return 1 if failures else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "selftest":
        return selftest()
    if len(argv) == 2 and pathlib.Path(argv[1]).is_dir():
        print(json.dumps(time_steps(pathlib.Path(argv[1]))))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
