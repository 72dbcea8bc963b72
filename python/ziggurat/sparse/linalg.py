"""scipy.sparse.linalg's Krylov solvers on the device: cg, bicgstab and gmres with SciPy's
signatures, keyword for keyword, returning (x, info) as SciPy does.

    from ziggurat.sparse.linalg import cg          # instead of scipy.sparse.linalg's
    x, info = cg(A, b, rtol=1e-8)                  # info: 0 converged, > 0 not, < 0 breakdown

A: a scipy.sparse matrix or array, or a dense array (uploaded to the device for the call), a
ziggurat.DeviceMatrix (kept on the device: the products are its kernels; M then None or host), or a
LinearOperator (run matrix-free: its matvec is called on the host at every product, which costs a
download and an upload of n values plus the matvec's own time: an iteration of CG one call, of
BiCGStab two). M: None, a ziggurat preconditioner (jacobi(A), block_jacobi(A), ilu(A, ...):
factorised and applied on the device; A must then be a matrix), or any LinearOperator, matrix or
function applying M^-1 (called on the host each iteration).

Stopping: converged when ||b - A x|| < max(rtol ||b||, atol); b = 0 returns x = 0 at once (info
0), as SciPy does. `tol` is the deprecated alias of rtol (SciPy 1.12 and 1.13's). maxiter: default
10 n; CG's and BiCGStab's iterations; gmres' restart cycles (of `restart` inner iterations,
default 20, at most n), or, for a callback of callback_type "legacy" (the default, as in SciPy
1.10), its inner iterations. callback: cg and bicgstab call callback(xk) after every iteration
(xk downloaded only when a callback is given); gmres calls callback(residual) after every inner
iteration (callback_type "pr_norm" or "legacy": ||b - A x|| / ||b||, GMRES' estimate, which is not
scaled by M: ziggurat's GMRES is right-preconditioned) or callback(xk) with x0 and then at every
restart cycle's end ("x", as SciPy: cycles + 1 calls).

info: 0 converged; the iteration count (gmres: maxiter) when the iteration limit came first or the
solve stagnated; -1 on a breakdown, -2 when the iteration overflowed (NaN or an infinity). The full
report (ziggurat.solve()'s keys: status, reason, iterations, residuals, times) of the calling
thread's last solve is last_report(). The solvers are not re-entrant, like SciPy's: a solve
started from inside another's matvec raises RuntimeError.
"""

import threading
import warnings

import numpy as np

from .. import _checks
from .._core import InvalidArgument
from .._sparse import DeviceMatrix
from .._krylov import KrylovSolver, _host_function, _is_operator, _operand_dtype, _shape_of

__all__ = ["bicgstab", "block_jacobi", "cg", "gmres", "ilu", "jacobi", "last_report", "Preconditioner"]

_state = threading.local()
_NO_VALUE = object()


def last_report():
    """The report of this thread's last cg, bicgstab or gmres call (None before the first)."""
    return getattr(_state, "report", None)


class Preconditioner:
    """A preconditioner of ziggurat's, set up on the device once (jacobi(), block_jacobi(), ilu()),
    to pass as M, or to apply anywhere through .matvec (so SciPy's solvers take it as M too).

    As M of cg, bicgstab or gmres with the A it was made from (the same object), it is not set up
    again: the solver set up with it is kept (one a method; with cg, ILU2 is IC2, factorised for
    cg's first use). With another A of its shape, the solver sets up the same kind for that A.
    shape, dtype: A's. matvec(x): M^-1 x on the device (x downloaded to the host and back)."""

    def __init__(self, A, kind, **options):
        self.shape = _shape_of(A)
        if _is_operator(A):
            raise InvalidArgument(f"{kind} needs A as a matrix (scipy.sparse or dense), not a LinearOperator")
        self.kind = kind
        self.options = {k: v for k, v in options.items() if v is not None}
        self._matrix = A
        self._solvers = {}
        self._solver("bicgstab", None)  # set up now: made once, ready for matvec
        self.dtype = self._solvers[("bicgstab", None)].dtype

    def _solver(self, method, restart):
        """The solver of `method` (gmres: and `restart`) set up with this preconditioner for A."""
        key = (method, restart)
        if key not in self._solvers:
            extra = {"restart": restart} if restart is not None else {}
            self._solvers[key] = KrylovSolver(self._matrix, method=method, preconditioner=self.kind,
                                              **self.options, **extra)
        return self._solvers[key]

    def matvec(self, x):
        """M^-1 x, applied on the device."""
        solver = self._solvers[("bicgstab", None)]
        return solver._system.apply_preconditioner(np.asarray(x, dtype=solver.dtype))

    def __matmul__(self, x):
        return self.matvec(x)

    def __repr__(self):
        return f"<ziggurat preconditioner {self.kind} {self.shape[0]}x{self.shape[1]}>"


def jacobi(A):
    """Jacobi (1 / the diagonal) for the solves of A x = b."""
    return Preconditioner(A, "jacobi")


def block_jacobi(A, block_size=None):
    """Block Jacobi (the inverted diagonal blocks, b x b; default A's blocks or the size of least fill)."""
    return Preconditioner(A, "block-jacobi", block_size=block_size)


def ilu(A, kind="ilu0", ordering="auto", threshold=None):
    """Block ILU(0) (kind "ilu0") or ILU2 with drop threshold `threshold` ("ilu2"; IC2 with cg),
    in the ordering `ordering` ("auto", "natural", "levels", "colours", "block-colours",
    "nested-dissection")."""
    if kind not in ("ilu0", "ilu2"):
        raise InvalidArgument(f"ilu's kind is 'ilu0' or 'ilu2', not {kind!r}")
    if threshold is not None and kind != "ilu2":
        raise InvalidArgument("threshold is ILU2's drop threshold: give kind='ilu2'")
    return Preconditioner(A, kind, ordering=ordering, threshold=threshold)


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None, tol=_NO_VALUE):
    """Conjugate gradients for A symmetric positive definite; returns (x, info)."""
    return _solve("cg", A, b, x0, _rtol(rtol, tol, "cg"), atol, maxiter, M, callback)


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None, tol=_NO_VALUE):
    """BiCGStab (right-preconditioned); returns (x, info)."""
    return _solve("bicgstab", A, b, x0, _rtol(rtol, tol, "bicgstab"), atol, maxiter, M, callback)


def gmres(A, b, x0=None, *, rtol=1e-5, atol=0.0, restart=None, maxiter=None, M=None, callback=None,
          callback_type=None, tol=_NO_VALUE, restrt=None):
    """Restarted GMRES(restart) (right-preconditioned); returns (x, info)."""
    if restrt is not None:
        if restart is not None:
            raise ValueError("Cannot specify both restart and restrt keywords. Preferably use 'restart' only.")
        warnings.warn("'gmres' keyword argument 'restrt' is deprecated in favour of 'restart' (as in SciPy)",
                      DeprecationWarning, stacklevel=2)
        restart = restrt
    if callback_type is None:
        if callback is not None:  # as SciPy warns (its tests expect it)
            warnings.warn("ziggurat.sparse.linalg.gmres called without specifying `callback_type`: it is 'legacy' "
                          "(SciPy 1.10's default, maxiter counting inner iterations); give callback_type='legacy', "
                          "'pr_norm' or 'x'", DeprecationWarning, stacklevel=2)
        callback_type = "legacy"
    if callback_type not in ("x", "pr_norm", "legacy"):
        raise ValueError(f"Unknown callback_type: {callback_type!r}")
    return _solve("gmres", A, b, x0, _rtol(rtol, tol, "gmres"), atol, maxiter, M, callback,
                  restart=restart, callback_type=callback_type)


def _rtol(rtol, tol, name):
    if tol is _NO_VALUE:
        return rtol
    warnings.warn(f"ziggurat.sparse.linalg.{name}'s keyword argument 'tol' is deprecated in favour of 'rtol' "
                  "(as in SciPy 1.12)", DeprecationWarning, stacklevel=3)
    return tol


def _solve(method, A, b, x0, rtol, atol, maxiter, M, callback, restart=None, callback_type=None):
    if getattr(_state, "busy", False):
        raise RuntimeError(f"ziggurat.sparse.linalg.{method} is not re-entrant: it was called from inside a solve "
                           "(a matvec or callback of another)")
    _state.busy = True
    try:
        return _run(method, A, b, x0, rtol, atol, maxiter, M, callback, restart, callback_type)
    finally:
        _state.busy = False


def _run(method, A, b, x0, rtol, atol, maxiter, M, callback, restart, callback_type):
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not _checks._is_real(value) or not value >= 0:  # None ("legacy") and text too: SciPy 1.12's rule
            raise InvalidArgument(f"{name} must be a number >= 0, not {value!r}")
    n = _shape_of(A)[0]
    b = np.asarray(b)
    if b.dtype.kind == "c":
        raise InvalidArgument(f"ziggurat's Krylov solvers are real: b is {b.dtype}")
    if b.size != n:
        raise InvalidArgument(f"b must hold {n} values (A is {n} x {n}); its shape is {b.shape}")
    if M is None and _is_operator(A) and hasattr(A, "psolve"):
        M = A.psolve  # scipy.sparse.linalg.aslinearoperator(A) with a psolve, as SciPy's make_system takes it
    A = getattr(A, "A", A) if type(A).__name__ == "MatrixLinearOperator" else A  # its matrix, to the device
    options = {}
    kept = None
    if isinstance(M, Preconditioner) and M._matrix is A:
        kept = M  # set up once, with this A: its solver is reused
        preconditioner = M.kind
    elif isinstance(M, Preconditioner):
        if _is_operator(A) or isinstance(A, DeviceMatrix):
            raise InvalidArgument(f"M = {M!r} needs A as a SciPy matrix, not a LinearOperator or DeviceMatrix; give M as "
                                  "a LinearOperator")
        if M.shape[0] != n:
            raise InvalidArgument(f"M was made for a {M.shape[0]} x {M.shape[0]} matrix; A is {n} x {n}")
        options = {k: v for k, v in M.options.items() if v is not None}
        preconditioner = M.kind
    elif M is None:
        preconditioner = "none"
    else:
        preconditioner = _host_function(M, "M")
    if isinstance(x0, str):
        if x0 != "Mb":
            raise InvalidArgument(f"x0 is an array, None or 'Mb', not {x0!r}")
        x0 = b if M is None else (M.matvec(b) if isinstance(M, Preconditioner) else preconditioner(b))
    if maxiter is None:
        maxiter = 10 * n
    maxiter = int(maxiter)
    if maxiter < 1:
        raise InvalidArgument(f"maxiter must be at least 1, not {maxiter}")
    limit = maxiter
    if method == "gmres":
        restart = min(20 if restart is None else int(restart), n)
        if callback is None or callback_type != "legacy":  # "legacy" counts inner iterations, as SciPy 1.10
            limit = maxiter * restart
        options["restart"] = restart
    # A's dtype and b's together, as SciPy's make_system: float32 A with float64 b solves in float64.
    dtype = np.result_type(getattr(A, "dtype", None) or np.float64, b.dtype)
    if kept is not None:
        solver = kept._solver(method, options.get("restart"))
        solver._system.set_stopping(float(rtol), float(atol), limit)
    else:
        solver = KrylovSolver(A, method=method, preconditioner=preconditioner, rtol=float(rtol), atol=float(atol),
                              max_iterations=limit, dtype=_operand_dtype(dtype), **options)
    if x0 is not None and not np.any(x0):
        x0 = None  # from zeros: the solver then takes r = b without a product
    if method == "gmres" and callback is not None and callback_type == "x":
        callback(np.zeros(n, solver.dtype) if x0 is None else np.asarray(x0, solver.dtype).reshape(n))  # as SciPy
    x, report = _solve_with_callback(solver, b.reshape(n), x0, callback, method, callback_type)
    _state.report = report
    return x.reshape(b.shape), _info(report, maxiter if method == "gmres" else report["iterations"])


def _solve_with_callback(solver, b, x0, callback, method, callback_type):
    if callback is None:
        return solver._system.solve(b.astype(solver.dtype), x0, None, None)
    dtype = solver.dtype

    def each_iterate(_iteration, _residual, iterate):
        callback(iterate().astype(dtype))

    def each_residual(_iteration, residual, _iterate):
        callback(float(residual))

    if method != "gmres":
        return solver._system.solve(b.astype(dtype), x0, each_iterate, None)
    if callback_type == "x":
        return solver._system.solve(b.astype(dtype), x0, None, each_iterate)
    return solver._system.solve(b.astype(dtype), x0, each_residual, None)


def _info(report, not_converged):
    status = report["status"]
    if status == "converged":
        return 0
    if status == "breakdown":
        return -1
    if status == "not_finite":
        return -2
    return max(int(not_converged), 1)  # max_iterations or stagnation
