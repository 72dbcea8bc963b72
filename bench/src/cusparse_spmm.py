#!/usr/bin/env python3
"""cuSPARSE's CSR products through CuPy, the NVIDIA peer of `ziggurat bench spmm`.

Usage: cusparse_spmm.py FOLDER

FOLDER (written by tools/ziggurat/bench_peers.cpp) holds descriptor.json, {"rows", "cols", "nnz",
"k", "dtype": "float32" | "float64", "repeat"}, and raw arrays in the host's byte order: row_ptr
(int32, rows + 1), col (int32, nnz), values (dtype, nnz), x (dtype, cols x k, row-major) and
reference (dtype, rows x k, row-major).

Times A @ x (k == 1) or A @ X (k > 1, X a C-ordered cols x k array) with CUDA events, `repeat`
times after one untimed run, and prints one JSON line:
  {"ran": true, "median_s", "min_s", "max_error", "device", "cuda", "cupy"}
or {"ran": false, "why_not"} when numpy, cupy or a CUDA device is missing or the product fails.
max_error is max |y - ref| / max |ref| (null when the result holds a NaN or an infinity).

What CuPy calls (cupyx/scipy/sparse/_csr.py, csr_matrix.__mul__): the legacy csrmvEx / csrmv
and csrmm2 where the CUDA toolkit still has them, else (CUDA 12 and later, e.g. CuPy 14.2 on
CUDA 13.2) the generic API:
  A @ x  cupyx.cusparse.spmv: cusparseSpMV with its default algorithm.
  A @ X  cupyx.cusparse.spmm: cusparseSpMM with column-major dense operands only, so CuPy first
         copies the C-ordered X into Fortran order (cupy.asfortranarray) on every call, and
         returns a Fortran-ordered result. The copy is part of the time measured here, as it is
         for a CuPy user with row-major data (it is small beside the product).
Both also allocate the result (zeroed) on every call, from CuPy's memory pool.
"""

import json
import math
import pathlib
import statistics
import sys


def answer(**fields):
    print(json.dumps(fields, allow_nan=False), flush=True)


def load(folder, numpy):
    """The descriptor and the host arrays of FOLDER."""
    descriptor = json.loads((folder / "descriptor.json").read_text())
    dtype = numpy.dtype(descriptor["dtype"])
    rows, cols, nnz, k = (int(descriptor[key]) for key in ("rows", "cols", "nnz", "k"))

    def array(name, kind, count):
        values = numpy.fromfile(folder / name, dtype=kind)
        if values.size != count:
            raise ValueError(f"{name} holds {values.size} values, expected {count}")
        return values

    arrays = {
        "row_ptr": array("row_ptr", numpy.int32, rows + 1),
        "col": array("col", numpy.int32, nnz),
        "values": array("values", dtype, nnz),
        "x": array("x", dtype, cols * k),
        "reference": array("reference", dtype, rows * k),
    }
    return descriptor, arrays


def time_runs(product, repeat, cupy):
    """Median and least seconds of `repeat` runs of product() after one untimed run (which
    creates the cuSPARSE handle and fills CuPy's memory pool), and the last result."""
    result = product()
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    seconds = []
    for _ in range(repeat):
        start.record()
        result = product()
        stop.record()
        stop.synchronize()
        seconds.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3)
    return statistics.median(seconds), min(seconds), result


def max_relative_error(result, reference, cupy):
    """max |result - reference| / max |reference|, in double; None when not finite."""
    y = result.astype(cupy.float64)
    ref = reference.astype(cupy.float64)
    largest = max(float(cupy.max(cupy.abs(ref))), sys.float_info.min)
    error = float(cupy.max(cupy.abs(y - ref))) / largest
    return error if math.isfinite(error) else None


def run(folder):
    try:
        import numpy
        import cupy
        import cupyx.scipy.sparse
    except ImportError as error:
        return answer(ran=False, why_not=str(error))
    try:
        devices = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as error:
        return answer(ran=False, why_not=f"no CUDA device ({error})")
    if devices == 0:
        return answer(ran=False, why_not="no CUDA device")

    descriptor, arrays = load(folder, numpy)
    rows, cols, k = (int(descriptor[key]) for key in ("rows", "cols", "k"))
    a = cupyx.scipy.sparse.csr_matrix(
        (cupy.asarray(arrays["values"]), cupy.asarray(arrays["col"]), cupy.asarray(arrays["row_ptr"])),
        shape=(rows, cols))
    # ziggurat's CSR has sorted, unique columns in each row; saying so spares CuPy's
    # sum_duplicates() pass (and its copies of the matrix) on the first product.
    a.has_canonical_format = True
    x = cupy.asarray(arrays["x"])
    reference = cupy.asarray(arrays["reference"])
    if k > 1:
        x = x.reshape(cols, k)
        reference = reference.reshape(rows, k)
    median_s, min_s, result = time_runs(lambda: a @ x, int(descriptor["repeat"]), cupy)

    properties = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = properties["name"]
    version = cupy.cuda.runtime.runtimeGetVersion()
    return answer(ran=True, median_s=median_s, min_s=min_s,
                  max_error=max_relative_error(result, reference, cupy),
                  device=name.decode() if isinstance(name, bytes) else str(name),
                  cuda=f"{version // 1000}.{version % 1000 // 10}", cupy=cupy.__version__)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        run(pathlib.Path(argv[0]))
    except Exception as error:  # any failure of the peer is an answer, not a crash
        answer(ran=False, why_not=f"{type(error).__name__}: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
