"""KrylovSolver: a sparse system set up once on the device (upload, ordering, factorisation of the
preconditioner), then solved for as many right-hand sides as asked, each solve without setup."""

import numpy as np

from . import _checks, _core
from ._arrays import real_dtype
from ._core import InvalidArgument
from ._settings import NO_VALUE, renamed, solver_settings
from ._sparse import DeviceMatrix, _scipy_arrays


def _operand_dtype(*dtypes):
    """float32 or float64: the operands' dtype together (complex refused, as every solve does)."""
    dtype = np.result_type(*dtypes)
    if dtype.kind == "c":
        raise InvalidArgument(f"ziggurat's Krylov solvers are real: the operands are {dtype}; solve the real and "
                              "imaginary parts as a real system of twice the size")
    return real_dtype(dtype, "the operands")


class KrylovSolver:
    """A x = b on the device, A set up once: KrylovSolver(A, method=..., preconditioner=..., **options).

    A: a scipy.sparse matrix or array (or a dense 2-D array), uploaded, reordered and its
    preconditioner factorised here, once; a ziggurat.DeviceMatrix, kept on the device (its products
    are the solve's, in its context; preconditioner "none" or a host function, and not in blocks
    that pad its rows); or a scipy.sparse.linalg.LinearOperator (anything with
    .shape and .matvec), run matrix-free: its matvec is called on the host for every product, each
    call costing a download and an upload of n values besides the function's own time (with
    preconditioner "none").
    method: "cg", "bicgstab" or "gmres". preconditioner: "none", "jacobi", "block-jacobi", "ilu0" or
    "ilu2", or a function / LinearOperator applying M^-1 on the host (as `M=` of SciPy's solvers).
    options (the names of ziggurat.solve and `ziggurat solve`'s options): rtol (default 1e-8) and
    atol (0.0): converged when ||b - A x|| < max(rtol ||b||, atol); max_iterations (1000: CG and
    BiCGStab iterations, GMRES inner iterations; `maxiter` is its deprecated spelling); restart
    (GMRES, 30); ordering ("auto"), sweep ("auto"), jacobi_sweeps (sweep "jacobi"; None: chosen per
    triangle), threshold (ILU2's tau), static_pivoting (ILU2: "auto", "on", "off"), aggregate (block-colours' rows an aggregate, 8), shift, kernel (the
    products' block CSR kernel: "rule", the default, nothing measured; "auto" or a name as
    ziggurat.solve takes it), block_size, dtype (float32 or float64, default A's), vectors (k
    right-hand sides a solve, 1), context.

    setup_seconds: the setup's wall time, paid once. solve(b, x0=None) returns (x, report); the
    report (ziggurat.solve()'s keys) has times.solve_s, the solve alone, and setup_s, the
    constructor's, which no solve pays again.
    """

    def __init__(self, A, *, method="bicgstab", preconditioner="ilu0", rtol=1e-8, atol=0.0, max_iterations=1000,
                 restart=30, ordering="auto", sweep="auto", threshold=None, static_pivoting="auto", aggregate=8,
                 shift=0.0, kernel="rule", jacobi_sweeps=None, block_size=None, dtype=None, vectors=1, context=None,
                 maxiter=NO_VALUE):
        host_m = None
        if not isinstance(preconditioner, str):
            host_m, preconditioner = _host_function(preconditioner, "preconditioner"), "none"
        max_iterations = renamed(max_iterations, maxiter, "maxiter", "max_iterations", "ziggurat.KrylovSolver")
        vectors = _checks.count(vectors, "vectors", 1)
        self.shape = _shape_of(A)
        if isinstance(A, DeviceMatrix) or _is_operator(A):
            if preconditioner != "none":
                what = "a DeviceMatrix A runs matrix-free on the device" if isinstance(A, DeviceMatrix) else \
                    "a LinearOperator A runs matrix-free"
                raise InvalidArgument(f"{what}: the preconditioner '{preconditioner}' needs the assembled (SciPy) "
                                      "matrix; give that, or M as a function or LinearOperator")
            ordering, kernel = "natural", "rule"  # nothing to order, no product kernel of ours
        settings = solver_settings(method=method, preconditioner=preconditioner, rtol=rtol, atol=atol,
                                   max_iterations=max_iterations, restart=restart, ordering=ordering, sweep=sweep,
                                   kernel=kernel, aggregate=aggregate, shift=shift, threshold=threshold,
                                   static_pivoting=static_pivoting, jacobi_sweeps=jacobi_sweeps)
        if isinstance(A, DeviceMatrix):  # kept on the device: the solve's products are its kernels
            self.dtype = A.dtype
            product, matrix_context = A._matrix.linear_operator()
            self._system = _system_class(self.dtype)(self.shape[0], product, settings, matrix_context)
            self._matrix = A  # its device arrays serve every product
        elif _is_operator(A):
            self.dtype = _operand_dtype(dtype if dtype is not None else (getattr(A, "dtype", None) or np.float64))
            self._system = _system_class(self.dtype)(self.shape[0], _host_function(A, "A"), settings, vectors, context)
        else:
            A = _as_sparse(A)
            self.dtype = _operand_dtype(A.dtype) if dtype is None else real_dtype(dtype, "dtype")
            block_size = _checks.optional_count(block_size, "block_size")
            self._system = _system_class(self.dtype)(_scipy_arrays(A), settings, block_size, vectors, context)
        if host_m is not None:
            self._system.precondition_with(host_m)
        self.method = method
        self.setup_seconds = self._system.setup_seconds

    def solve(self, b, x0=None, *, callback=None):
        """(x, report) for b of shape (n,) (or (n, k) with vectors=k), from x0 (default zeros).
        callback(iteration, relative_residual) after each iteration."""
        b = np.asarray(b, dtype=self.dtype)
        if x0 is not None:
            x0 = np.asarray(x0, dtype=self.dtype)
        hook = None if callback is None else (lambda i, r, _x: callback(i, r))
        return self._system.solve(b, x0, hook, None)


def _system_class(dtype):
    return _core.KrylovSystemFloat32 if dtype == np.float32 else _core.KrylovSystemFloat64


def _is_operator(a):
    """Whether A is a host operator (a LinearOperator's matvec), not a matrix the device holds."""
    import scipy.sparse

    return not (scipy.sparse.issparse(a) or isinstance(a, (np.ndarray, DeviceMatrix))) and hasattr(a, "matvec") \
        and hasattr(a, "shape")


def _shape_of(a):
    shape = tuple(np.shape(a)) if not hasattr(a, "shape") else tuple(a.shape)
    if len(shape) == 1:  # a 1-D array is a 1 x n matrix, as SciPy takes it
        shape = (1, shape[0])
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InvalidArgument(f"A must be a square matrix or operator; its shape is {shape}")
    return shape


def _as_sparse(a):
    """A scipy.sparse matrix from a sparse one (as it is) or a dense array (in CSR)."""
    import scipy.sparse

    if scipy.sparse.issparse(a):
        return a
    dense = np.atleast_2d(np.asarray(a))
    if dense.dtype.kind == "c":
        _operand_dtype(dense.dtype)
    return scipy.sparse.csr_matrix(dense)


def _host_function(m, what):
    """A function y = M x on the host: a callable itself, else a LinearOperator's (or matrix's) matvec."""
    if callable(m) and not hasattr(m, "matvec"):
        return m
    import scipy.sparse.linalg

    try:
        return scipy.sparse.linalg.aslinearoperator(m).matvec
    except TypeError as error:
        raise InvalidArgument(f"{what} must be a LinearOperator, a matrix or a function, not {type(m).__name__}") \
            from error
