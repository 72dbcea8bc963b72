"""The package's dtype rule: float32 and float64 are kept, integers, booleans and float16 converted,
everything else refused."""

import numpy as np

from ._core import InvalidArgument


def real_dtype(dtype, what="the array"):
    """The dtype ziggurat computes `dtype` in: float32 or float64.

    float32 and float64 stay; float16 becomes float32; integers, booleans and longer floats become
    float64; complex, object and other dtypes raise InvalidArgument naming `what`.
    """
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.dtype(np.float32) if dtype.itemsize <= 4 else np.dtype(np.float64)
    if dtype.kind in "iub":
        return np.dtype(np.float64)
    raise InvalidArgument(f"{what} has dtype {dtype}: ziggurat computes in float32 or float64 (integers and booleans "
                          "are converted to float64); convert it, e.g. with .real or .astype(np.float64)")


def real_array(values, what="the array", dtype=None):
    """`values` as a C-contiguous array of real_dtype(its dtype), or of `dtype` when given: the same
    array when it already is one, else a converted copy. Values of a dtype real_dtype() refuses
    (complex: their imaginary parts would be dropped) raise InvalidArgument even when `dtype` is
    given."""
    array = np.asarray(values)
    own = real_dtype(array.dtype, what)
    return np.ascontiguousarray(array, dtype=own if dtype is None else real_dtype(dtype, what))
