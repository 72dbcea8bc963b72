"""Sparse matrices from SciPy: DeviceMatrix (kept in device memory), spmm() and solve().

Any scipy.sparse matrix or array is accepted. CSR, and BSR with square blocks of 1 to 16, go in
as their own arrays; every other format (COO, CSC, DIA, LIL, ...) is converted to CSR first by
SciPy (scipy's DIA stores its diagonals by column, ziggurat's by row). Unsorted indices or
duplicate entries are put right on a copy, never on the caller's matrix. The library then copies
the arrays once into its own (32-bit indices) and uploads them; the matrix on the device is
independent of the SciPy one from then on.
"""

import numpy as np

from . import _checks, _core
from ._arrays import real_array, real_dtype
from ._core import InvalidArgument
from ._settings import NO_VALUE, renamed, solver_settings


def _scipy_arrays(a):
    """(rows, cols, b, indptr, indices, data) of a scipy.sparse matrix: its own arrays where it is
    CSR, or BSR with square blocks of at most 16, in canonical form; else those of a CSR copy."""
    _require_sparse(a)
    ordered = _check_structure(a)
    rows, cols = a.shape
    if a.format == "bsr" and a.blocksize[0] == a.blocksize[1] <= 16:
        b = a.blocksize[0]
    else:
        ordered = ordered if a.format == "csr" else None
        a, b = a.tocsr(), 1
    # Sorted indices, no duplicates (as checked on every core, else SciPy's own test on one
    # thread): otherwise put right on a copy.
    if not (ordered if ordered is not None else a.has_canonical_format):
        a = a.copy()
        a.sum_duplicates()
    return (rows, cols, b, a.indptr, a.indices, a.data)


def _corrupt(a, problem):
    return InvalidArgument(f"A ({a.format}, shape {a.shape}) is corrupt: {problem}; build it again through SciPy's "
                           "constructors (A.check_format(full_check=True) names the fault)")


def _check_structure(a):
    """Refuses a CSR, CSC, BSR or COO matrix whose arrays contradict each other, before SciPy's own
    routines read them (they index without checks, and may crash the interpreter). For CSR, CSC and
    BSR, returns whether each row's (column's) indices increase strictly, checked on every core
    with the range; else None."""
    if a.format in ("csr", "csc", "bsr"):
        b = a.blocksize if a.format == "bsr" else (1, 1)
        lines, length = (a.shape[0] // b[0], a.shape[1] // b[1]) if a.format != "csc" else (a.shape[1], a.shape[0])
        indptr, indices = np.asarray(a.indptr), np.asarray(a.indices)
        if indptr.ndim != 1 or indptr.shape[0] != lines + 1 or indptr.dtype.kind not in "iu":
            raise _corrupt(a, f"indptr must be {lines + 1} integers, not an array of shape {indptr.shape} "
                              f"and dtype {indptr.dtype}")
        if indices.ndim != 1 or indices.dtype.kind not in "iu":
            raise _corrupt(a, f"indices must be one-dimensional integers, not shape {indices.shape}, {indices.dtype}")
        if indptr[0] != 0:
            raise _corrupt(a, f"indptr[0] is {indptr[0]}, not 0")
        falls = np.flatnonzero(indptr[1:] < indptr[:-1])
        if falls.size:
            raise _corrupt(a, f"indptr decreases at {falls[0]} ({indptr[falls[0]]} then {indptr[falls[0] + 1]})")
        stored = int(indptr[-1])
        if stored > indices.shape[0] or stored > np.shape(a.data)[0]:
            raise _corrupt(a, f"indptr[-1] = {stored} but indices holds {indices.shape[0]} and data "
                              f"{np.shape(a.data)[0]}")
        in_range, increasing = _core.index_order(indptr, indices, length)
        if not in_range:
            raise _corrupt(a, f"an index lies outside 0..{length - 1}")
        return increasing
    if a.format == "coo":
        row, col = np.asarray(a.row), np.asarray(a.col)
        if row.shape != col.shape or row.shape[:1] != np.shape(a.data)[:1]:
            raise _corrupt(a, f"row, col and data differ in length ({row.shape}, {col.shape}, {np.shape(a.data)})")
        for name, index, extent in (("row", row, a.shape[0]), ("col", col, a.shape[1])):
            if index.size and (index.min() < 0 or index.max() >= extent):
                raise _corrupt(a, f"an entry of {name} lies outside 0..{extent - 1}")


def _require_sparse(a, also=""):
    """Refuses anything but a scipy.sparse matrix or array (`also` names what else is taken)."""
    import scipy.sparse

    if not scipy.sparse.issparse(a):
        raise InvalidArgument(f"A must be a scipy.sparse matrix or array{also}, not {type(a).__name__}: "
                              "e.g. scipy.sparse.csr_matrix(A)")


def _dtype_of(*dtypes, dtype=None):
    """The dtype a computation runs in: `dtype` when given, else that of the operands together."""
    return real_dtype(dtype if dtype is not None else np.result_type(*dtypes), "the operands")


class DeviceMatrix:
    """A sparse matrix kept in device memory, for products Y = A X without moving A each time.

    DeviceMatrix(A, format="bsr", block_size=None, kernel=None, symmetric=False, dtype=None, context=None)

    A: any scipy.sparse matrix or array. format: "bsr" (block CSR; block_size 1 to 16, default
    A's own blocks, or for a CSR the block size of least fill), "csr", or "dia" (diagonal format;
    symmetric=True stores a symmetric matrix half). kernel (block CSR only): None (multirow by the
    library's rule, no measurement), "auto" (each kind of product timed once per device and kept as
    a tuning record), or "row", "group", "multirow/4", ... dtype: float32 or float64 (default A's,
    by the package's dtype rule). context: a Context or a device selection.

    A @ X (X of shape (n,) or (n, k)) returns Y as a new NumPy array: X's buffer (a converted copy
    when X is not C-contiguous of the matrix's dtype) is handed to the OpenCL write into device
    vectors kept for that k, and Y is read from the device into the new array's buffer.
    For products without leaving the device, keep DeviceVectors: x = A.input_vectors(X),
    y = A.output_vectors(k), then A.multiply(x, out=y) as often as needed, and y.download().
    The kernels for each k are built once, on the first product with k vectors.
    """

    def __init__(self, A, *, format="bsr", block_size=None, kernel=None, symmetric=False, dtype=None, context=None):
        arrays = _scipy_arrays(A)
        dtype = _dtype_of(A.dtype, dtype=dtype)
        make = _core.device_matrix_float32 if dtype == np.float32 else _core.device_matrix_float64
        self._matrix = make(arrays, format, block_size, kernel or "", symmetric, context)
        self.dtype = dtype
        self.shape = (A.shape[0], A.shape[1])

    def __matmul__(self, X):
        """Y = A X for X of shape (n,) or (n, k); Y has shape (m,) or (m, k)."""
        return self._matrix @ real_array(X, "X", self.dtype)

    def matvec(self, x):
        """A x, as scipy.sparse.linalg.LinearOperator's matvec (x uploaded, A x downloaded)."""
        return self @ x

    def multiply(self, x, out):
        """out = A x on the device, for DeviceVectors x (from input_vectors()) and out (from
        output_vectors()) with the same k; returns out. Nothing moves between host and device."""
        self._matrix.multiply(x, out)
        return out

    def input_vectors(self, X):
        """DeviceVectors shaped as this matrix's input: X an (n, k) or (n,) array to upload, or k."""
        if isinstance(X, (int, np.integer)):
            return self._matrix.input_vectors(int(X))
        values = np.asarray(X)
        vectors = self._matrix.input_vectors(values.shape[1] if values.ndim == 2 else 1)
        vectors.upload(real_array(values, "X", self.dtype))
        return vectors

    def output_vectors(self, k):
        """DeviceVectors shaped as this matrix's output for k vectors, all zeros."""
        return self._matrix.output_vectors(k)

    @property
    def format(self):
        """"bsr", "csr" or "dia"."""
        return self._matrix.info["format"]

    @property
    def block_size(self):
        """b of block CSR (1 for CSR and DIA)."""
        return self._matrix.info["block_size"]

    @property
    def info(self):
        """A dict: shape, dtype, format, block_size, stored_values, symmetric, the kernel built for
        each k so far (kernels), device."""
        return self._matrix.info

    def __repr__(self):
        i = self.info
        return (f"<ziggurat.DeviceMatrix {i['shape'][0]}x{i['shape'][1]} {i['dtype']} {i['format']}"
                f" b={i['block_size']} on {i['device']}>")


def spmm(A, X, *, format="bsr", block_size=None, kernel=None, context=None):
    """Y = A X on the device; A a scipy.sparse matrix (uploaded for this call) or a DeviceMatrix
    (already there), X an array of shape (n,) or (n, k). Y has shape (m,) or (m, k) and the dtype
    the operands compute in (float32 when both are float32, else float64; a DeviceMatrix's own)."""
    if not isinstance(A, DeviceMatrix):
        _require_sparse(A, " or a ziggurat.DeviceMatrix")
        A = DeviceMatrix(A, format=format, block_size=block_size, kernel=kernel,
                         dtype=_dtype_of(A.dtype, np.asarray(X).dtype), context=context)
    return A @ X


def solve(A, b, *, method="bicgstab", preconditioner="ilu0", rtol=1e-8, atol=0.0, max_iterations=1000, ordering="auto",
          sweep="auto", kernel="auto", restart=30, aggregate=8, shift=0.0, threshold=None, static_pivoting="auto",
          jacobi_sweeps=None, block_size=None, x0=None, dtype=None, progress=None, context=None, tol=NO_VALUE, max_iter=NO_VALUE):
    """Solves A x = b on the device by a preconditioned Krylov method; returns (x, report).

    A: a square scipy.sparse matrix, in block CSR on the device (block_size 1 to 16; default A's own
    blocks, or for a CSR the block size of least fill). b: shape (n,) or (n, k) (k right-hand sides
    at once, cg and bicgstab). method: "cg", "bicgstab" or "gmres" (restart m). preconditioner:
    "none", "jacobi", "block-jacobi", "ilu0" or "ilu2" (ordering "auto": the solver's rule, for
    ilu0 natural on a CPU device of at most 4 compute units, else for a diagonally dominant scalar
    system with sweep "auto" natural with "jacobi" sweeps, else colours for blocks of 1 to 3
    unless A is markedly nonsymmetric (skewness ||A - A^T|| / ||A + A^T|| above 0.05: natural);
    nested-dissection for ilu2; else natural; or "natural", "levels", "colours", "block-colours"
    with `aggregate` rows an aggregate, or "nested-dissection"; the report says which ran; sweep
    "levels", "sync-free", "sequential" (one work-item a vector walks the rows: CPU devices),
    "jacobi" (approximate solves: `jacobi_sweeps` Jacobi sweeps over every row at once, one launch
    each; None: chosen per triangle from its factor) or "auto" (above 16 levels sequential on a CPU
    device of at most 4 compute units, else sync-free; with ordering "auto", "jacobi" where that
    rule says); shift adds shift * max_j |a_rj| to each diagonal before factorising).
    ilu2: the second-order incomplete factorisation with drop threshold `threshold` (default
    ziggurat.ILU2_THRESHOLD; 0 is the complete LU), factorised on the host's cores, IC2 with cg;
    static_pivoting "auto" (on with bicgstab and gmres, off with cg), "on" (rows matched to large
    diagonal blocks, tiny pivots replaced) or "off" (a tiny pivot raises ZeroPivot). kernel: the
    products' block CSR kernel, "auto" (the fastest for this kind of matrix on this device, measured once and
    recorded), "rule" (nothing measured) or a name as spmm reports it ("multirow/2/v4"). rtol and
    atol: converged when ||b - A x|| < max(rtol ||b||, atol). max_iterations: the iteration limit
    (GMRES: inner iterations). `tol` and `max_iter` are the deprecated spellings of rtol and
    max_iterations (a DeprecationWarning; they go in the next version). x0: the first guess
    (default zeros). dtype: float32 or float64 (default that of A and b together). progress(iteration, relative_residual): called after
    each iteration; an exception it raises stops the solve.

    x has b's shape; it is the solver's own result array, handed to NumPy without a copy. A solve
    that does not converge is not an error: the report says why. The report, like `ziggurat solve
    --json`: device, method, preconditioner, ordering, block_size, converged, status, reason,
    iterations, relative_residual, vectors (one dict a right-hand side: status, reason,
    iterations, relative_residual, recurrence_residual, history), times (setup_s, ordering_s,
    preconditioner_setup_s, host_factorization_s (ILU2's), factorization_s (on the device),
    products_s, preconditioner_s, vector_ops_s, deflation_s, solve_s, device_timed), lower_levels
    and upper_levels (ILU(0)'s or ILU2's), colours, sweep, lower_jacobi_sweeps and upper_jacobi_sweeps (0 unless sweep "jacobi"),
    fill (blocks of L + U over A's), matched_rows and replaced_pivots (ILU2's static pivoting),
    product_kernel.
    """
    settings = solver_settings(method=method, preconditioner=preconditioner,
                               rtol=renamed(rtol, tol, "tol", "rtol", "ziggurat.solve"), atol=atol,
                               max_iterations=renamed(max_iterations, max_iter, "max_iter", "max_iterations",
                                                      "ziggurat.solve"),
                               restart=restart, ordering=ordering, sweep=sweep, kernel=kernel, aggregate=aggregate,
                               shift=shift, threshold=threshold, static_pivoting=static_pivoting,
                               jacobi_sweeps=jacobi_sweeps)
    block_size = _checks.optional_count(block_size, "block_size")
    arrays = _scipy_arrays(A)
    dtype = _dtype_of(A.dtype, np.asarray(b).dtype, dtype=dtype)
    return _core.solve(arrays, real_array(b, "b", dtype), x0, settings, block_size, progress, context)
