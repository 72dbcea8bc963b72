"""NumPy references of ziggurat's schemes, shared by the command-line tool's tests (tests/cli/) and
the Python package's (python/tests/): each computes in the array's dtype, in the order of
operations of the C++ scheme it names, so that results compare to a few ulps.

tests/cli/cli_support.py and python/tests/conftest.py put this folder on the module path.
"""
import numpy as np


def numpy_heat(u, alpha, steps):
    """The scheme of include/ziggurat/ops/heat_scheme.hpp in 1 to 3 dimensions, in its order of operations
    (neighbours along x, the LAST array axis, first, then y, then z) and in u's dtype."""
    u = u.copy()
    a = u.dtype.type(alpha)
    b = u.dtype.type(1.0 - 2.0 * u.ndim * alpha)
    inner = (slice(1, -1),) * u.ndim
    for _ in range(steps):
        s = None
        for axis in reversed(range(u.ndim)):  # x, then y, then z
            for shift in (slice(None, -2), slice(2, None)):
                side = list(inner)
                side[axis] = shift
                s = u[tuple(side)] if s is None else s + u[tuple(side)]
        v = u.copy()
        v[inner] = a * s + b * u[inner]
        u = v
    return u


def numpy_jacobi(u, f, h, sweeps):
    """The sweep of include/ziggurat/ops/poisson_scheme.hpp, in its order of operations, in u's dtype."""
    u = u.copy()
    sixth, h2 = u.dtype.type(1.0 / 6.0), u.dtype.type(h * h)
    inner = np.s_[1:-1, 1:-1, 1:-1]
    for _ in range(sweeps):
        s = u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:]
        s = s + u[1:-1, :-2, 1:-1]
        s = s + u[1:-1, 2:, 1:-1]
        s = s + u[:-2, 1:-1, 1:-1]
        s = s + u[2:, 1:-1, 1:-1]
        v = u.copy()
        v[inner] = sixth * (s + h2 * f[inner])
        u = v
    return u
