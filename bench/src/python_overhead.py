#!/usr/bin/env python3
"""The cost of calling ziggurat from Python: a small sparse product Y = A X through the binding
beside the same library calls timed in C++ with no Python in between.

Two calls are compared, each timed --repeat times after a warm-up (median and best):
  round trip  `matrix @ X` (NumPy X in, NumPy Y out: upload, product, download)
  resident    `matrix.multiply(x, out=y)` on DeviceVectors (the product alone)
The overhead is the binding's time minus the C++ time.

Usage: PYTHONPATH=build/release/python python3 bench/src/python_overhead.py [--device gpu] [--n 4096]
       [--k 1] [--repeat 2000] [--dtype float32]
"""

import argparse
import statistics
import time

import numpy as np
import scipy.sparse as sp

import ziggurat


def call_seconds(call, repeat):
    """The seconds of each of `repeat` calls, after one warm-up."""
    call()
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - start)
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="device selection (default: ZIGGURAT_DEVICE, else the first GPU)")
    parser.add_argument("--n", type=int, default=4096, help="rows of the tridiagonal matrix")
    parser.add_argument("--k", type=int, default=1, help="vectors")
    parser.add_argument("--repeat", type=int, default=2000)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = parser.parse_args()

    context = ziggurat.Context(device=args.device)
    a = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(args.n, args.n), format="csr", dtype=args.dtype)
    matrix = ziggurat.DeviceMatrix(a, format="csr", context=context)
    x = np.random.default_rng(1).uniform(-1, 1, (args.n, args.k)).astype(args.dtype)
    xd, yd = matrix.input_vectors(x), matrix.output_vectors(args.k)

    rows = []
    for name, call, resident in (("round trip (A @ X)", lambda: matrix @ x, False),
                                 ("resident (multiply)", lambda: matrix.multiply(xd, yd), True)):
        bound = call_seconds(call, args.repeat)
        native = matrix._matrix.native_seconds(x, args.repeat, resident)
        rows.append((name, "median", statistics.median(bound), statistics.median(native)))
        rows.append((name, "best", min(bound), min(native)))

    print(f"device  {context.device['label']}")
    print(f"product {args.n} x {args.n} tridiagonal CSR, k = {args.k}, {args.dtype}, {args.repeat} calls each")
    print(f"{'call':<22}{'of calls':<10}{'Python (us)':>12}{'C++ (us)':>10}{'overhead (us)':>15}{'ratio':>7}")
    for name, statistic, bound, native in rows:
        print(f"{name:<22}{statistic:<10}{bound * 1e6:>12.2f}{native * 1e6:>10.2f}{(bound - native) * 1e6:>15.2f}"
              f"{bound / native:>7.2f}")


if __name__ == "__main__":
    main()
