"""ziggurat.sparse.linalg (SciPy's signatures) and ziggurat.KrylovSolver (set up once), against
SciPy and NumPy on the default device (ZIGGURAT_DEVICE selects another)."""

import inspect
import warnings

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.linalg

import ziggurat
from ziggurat.sparse import linalg as zla

SOLVERS = [zla.cg, zla.bicgstab, zla.gmres]


def poisson2d(m):
    """The five-point Laplacian on an m x m grid (SPD), in CSR."""
    one = scipy.sparse.diags([-1, 2, -1], [-1, 0, 1], shape=(m, m))
    return scipy.sparse.kronsum(one, one, format="csr")


def poisson_operator(m):
    """The same Laplacian matrix-free: a LinearOperator whose matvec never forms the matrix."""
    def matvec(x):
        u = np.asarray(x).reshape(m, m)
        y = 4 * u
        y[1:, :] -= u[:-1, :]
        y[:-1, :] -= u[1:, :]
        y[:, 1:] -= u[:, :-1]
        y[:, :-1] -= u[:, 1:]
        return y.reshape(-1)
    return scipy.sparse.linalg.LinearOperator((m * m, m * m), matvec=matvec, dtype=np.float64)


def residual(A, x, b):
    return np.linalg.norm(b - A @ x)


@pytest.mark.parametrize("solver", SOLVERS, ids=lambda s: s.__name__)
def test_converges_as_scipy_says(solver):
    A = poisson2d(20)
    b = np.random.default_rng(1).random(A.shape[0])
    x, info = solver(A, b, rtol=1e-8)
    assert info == 0
    assert residual(A, x, b) < 1e-8 * np.linalg.norm(b)
    report = zla.last_report()
    assert report["status"] == "converged" and report["method"] == solver.__name__ and report["rtol"] == 1e-8


@pytest.mark.parametrize("solver", SOLVERS, ids=lambda s: s.__name__)
def test_matrix_free_poisson_to_rtol_1e_8(solver):
    m = 24
    op = poisson_operator(m)
    b = np.random.default_rng(2).random(m * m)
    kwargs = {"restart": 50} if solver is zla.gmres else {}
    x, info = solver(op, b, rtol=1e-8, **kwargs)
    assert info == 0
    assert residual(poisson2d(m), x, b) < 1e-8 * np.linalg.norm(b)
    assert zla.last_report()["product_kernel"] == "matrix-free"


@pytest.mark.parametrize("solver", SOLVERS, ids=lambda s: s.__name__)
def test_atol_bounds_the_residual(solver):
    A = poisson2d(12)
    b = 1e3 * np.random.default_rng(3).random(A.shape[0])
    x, info = solver(A, b, rtol=0.0, atol=1e-3)
    assert info == 0
    assert residual(A, x, b) < 1e-3
    loose, _ = solver(A, b, rtol=0.0, atol=1e2)
    # A looser atol stops earlier: its residual is larger, and still within it.
    assert 1e-3 < residual(A, loose, b) < 1e2


@pytest.mark.parametrize("solver", SOLVERS, ids=lambda s: s.__name__)
def test_zero_rhs_gives_zero_from_any_start(solver):
    A = poisson2d(6)
    x, info = solver(A, np.zeros(36), x0=np.ones(36))
    assert info == 0 and not x.any()


@pytest.mark.parametrize("solver", [zla.cg, zla.bicgstab], ids=lambda s: s.__name__)
def test_callback_gets_each_iterate(solver):
    A = poisson2d(10)
    b = np.ones(100)
    seen = []
    x, info = solver(A, b, rtol=1e-10, callback=lambda xk: seen.append(residual(A, xk, b)))
    assert info == 0
    assert len(seen) == zla.last_report()["iterations"]
    # The iterates are x's: the last one called back is the solution returned.
    assert seen[-1] == pytest.approx(residual(A, x, b), rel=1e-6, abs=1e-12)
    short = []
    _, info = solver(A, b, rtol=1e-12, maxiter=3, callback=short.append)
    assert info == 3 and len(short) == 3


def test_gmres_callback_residual():
    # SciPy 1.0's value (test_iterative's TestGMRES.test_callback, its unpreconditioned half).
    A = scipy.sparse.csr_matrix(np.diag([-2.0] * 6) + np.diag([1.0] * 5, 1) + np.diag([1.0] * 5, -1))
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        x, info = zla.gmres(A, np.ones(6), x0=np.zeros(6), tol=1e-16, maxiter=1, callback=seen.append)
    assert info == 1
    np.testing.assert_allclose(seen, [0.81649658092772603], rtol=1e-10)


def test_gmres_maxiter_counts_cycles():
    rng = np.random.default_rng(4)
    A = scipy.sparse.csr_matrix(rng.random((40, 40)) + 0.1 * np.eye(40))
    b = rng.random(40)
    cycles = []
    x, info = zla.gmres(A, b, rtol=1e-14, restart=5, maxiter=3, callback=cycles.append, callback_type="x")
    assert info == 3
    assert len(cycles) == 4  # x0, then each of the 3 cycles' ends
    assert zla.last_report()["iterations"] == 15
    np.testing.assert_array_equal(cycles[-1], x)


def test_tol_is_a_deprecated_alias():
    A = poisson2d(8)
    b = np.ones(64)
    with pytest.warns(DeprecationWarning, match="'tol' is deprecated"):
        x, info = zla.cg(A, b, tol=1e-9)
    assert info == 0 and residual(A, x, b) < 1e-9 * 8


def test_host_preconditioner_and_operator_count_products():
    A = poisson2d(10)
    calls = {"A": 0, "M": 0}
    dense = A.toarray()

    def matvec(x):
        calls["A"] += 1
        return A @ x

    def inverse(x):
        calls["M"] += 1
        return np.linalg.solve(dense, x)

    op = scipy.sparse.linalg.LinearOperator(A.shape, matvec=matvec)
    M = scipy.sparse.linalg.LinearOperator(A.shape, matvec=inverse)
    calls.update(A=0, M=0)  # SciPy called each once to find its dtype
    x, info = zla.cg(op, np.ones(100), rtol=1e-10, M=M)
    assert info == 0
    # M = A^-1: one iteration, its product and the true residual's; no product for x0 = 0.
    assert calls["A"] <= 2 and calls["M"] >= 1


@pytest.mark.parametrize("solver", SOLVERS, ids=lambda s: s.__name__)
def test_host_preconditioner_is_applied_every_iteration(solver):
    # Jacobi applied on the host (a LinearOperator) and on the device (jacobi(A)) are the same
    # preconditioner: the same iterations, and fewer than without (the diagonal varies).
    A = poisson2d(16) + scipy.sparse.diags(np.linspace(1, 50, 256))
    b = np.ones(256)
    inverse_diagonal = 1 / A.diagonal()
    host = scipy.sparse.linalg.LinearOperator(A.shape, matvec=lambda x: inverse_diagonal * x, dtype=np.float64)
    counts = []
    for M in (None, host, zla.jacobi(A)):
        x, info = solver(A, b, rtol=1e-10, M=M)
        assert info == 0 and residual(A, x, b) < 1e-10 * 16
        counts.append(zla.last_report()["iterations"])
    assert abs(counts[1] - counts[2]) <= 1 and counts[1] < counts[0]


@pytest.mark.parametrize("make", [lambda A: zla.jacobi(A), lambda A: zla.block_jacobi(A),
                                  lambda A: zla.ilu(A), lambda A: zla.ilu(A, kind="ilu2", ordering="natural")],
                         ids=["jacobi", "block_jacobi", "ilu0", "ilu2"])
def test_ziggurat_preconditioners_as_M(make):
    A = poisson2d(16)
    b = np.ones(256)
    _, plain = zla.cg(A, b, rtol=1e-8, maxiter=1000), zla.last_report()["iterations"]
    x, info = zla.cg(A, b, rtol=1e-8, M=make(A))
    assert info == 0 and residual(A, x, b) < 1e-8 * 16
    assert zla.last_report()["preconditioner"] != "none"
    assert zla.last_report()["iterations"] <= plain


def test_refusals_are_clear():
    A = poisson2d(4)
    with pytest.raises(ziggurat.InvalidArgument, match="real"):
        zla.gmres(A.astype(complex), np.ones(16))
    with pytest.raises(ziggurat.InvalidArgument, match="b must hold 16"):
        zla.cg(A, np.ones(5))
    with pytest.raises(ziggurat.InvalidArgument, match="rtol"):
        zla.cg(A, np.ones(16), rtol=float("nan"))
    with pytest.raises(ValueError, match="callback_type"):
        zla.gmres(A, np.ones(16), callback=print, callback_type="y")
    with pytest.raises(ziggurat.InvalidArgument, match="needs A as a SciPy matrix"):
        zla.cg(poisson_operator(4), np.ones(16), M=zla.jacobi(A))


def test_not_reentrant():
    A = np.diag([1.0, 2.0, 3.0])

    def matvec(x):
        y, _ = zla.cg(A, x)
        return y

    op = scipy.sparse.linalg.LinearOperator((3, 3), matvec=matvec, dtype=np.float64)
    with pytest.raises(RuntimeError, match="not re-entrant"):
        zla.bicgstab(op, np.ones(3))
    x, info = zla.cg(A, np.ones(3))  # the failed call left nothing behind
    assert info == 0


def test_krylov_solver_sets_up_once(context):
    A = poisson2d(30)
    solver = ziggurat.KrylovSolver(A, method="cg", preconditioner="ilu0", rtol=1e-10, context=context)
    assert solver.setup_seconds > 0
    rng = np.random.default_rng(5)
    setups = set()
    for _ in range(3):
        b = rng.random(900)
        x, report = solver.solve(b)
        assert report["converged"]
        assert residual(A, x, b) < 1e-10 * np.linalg.norm(b) * 10
        assert 0 < report["times"]["setup_s"] <= solver.setup_seconds
        setups.add(report["times"]["setup_s"])
    assert len(setups) == 1  # every solve reports the constructor's one setup: none set up again
    x0 = x + 1e-3
    x, report = solver.solve(b, x0=x0)
    assert report["converged"]


def test_the_from_scipy_example_runs_alike_on_both():
    # examples/python/from_scipy.py (docs/from-scipy.md): one script, scipy.sparse.linalg or ours.
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python", "from_scipy.py")
    spec = importlib.util.spec_from_file_location("from_scipy", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        theirs = example.run(scipy.sparse.linalg, 24)
        ours = example.run(zla, 24)
    assert ours.keys() == theirs.keys()
    for name, (info, relative) in ours.items():
        assert info == 0 and relative < 1e-8, name
        assert theirs[name][0] == 0, name


def scipy_rtol(value):
    """SciPy's relative tolerance by the name the installed SciPy takes: `tol` up to 1.11
    (Debian 12 has 1.10), `rtol` from 1.12 (1.14 dropped `tol`)."""
    return {"rtol" if "rtol" in inspect.signature(scipy.sparse.linalg.cg).parameters else "tol": value}


def test_preconditioner_objects_are_made_once_and_apply_on_the_device():
    A = poisson2d(12) + scipy.sparse.diags(np.linspace(1, 9, 144))
    M = zla.jacobi(A)
    assert M.shape == A.shape and M.dtype == np.float64
    x = np.random.default_rng(6).random(144)
    np.testing.assert_allclose(M.matvec(x), x / A.diagonal(), rtol=1e-15)
    # SciPy's own solver takes it as M: it has .matvec and .shape.
    y, info = scipy.sparse.linalg.cg(A, np.ones(144), **scipy_rtol(1e-10), atol=0.0,
                                     M=scipy.sparse.linalg.aslinearoperator(M))
    assert info == 0 and residual(A, y, np.ones(144)) < 1e-9
    ilu = zla.ilu(A, kind="ilu0", ordering="natural")
    for rtol in (1e-6, 1e-10):
        y, info = zla.bicgstab(A, np.ones(144), rtol=rtol, M=ilu)
        assert info == 0 and residual(A, y, np.ones(144)) < rtol * 12
        setups = zla.last_report()["times"]["setup_s"]
        if rtol == 1e-6:
            first = setups
    # The second call ran on the solver the first set up: the same setup, not another.
    assert setups == first and len(ilu._solvers) == 1
    with pytest.raises(ziggurat.InvalidArgument, match="ilu0' or 'ilu2"):
        zla.ilu(A, kind="ilu1")


@pytest.mark.parametrize("solver", SOLVERS, ids=lambda s: s.__name__)
def test_device_matrix_stays_on_the_device(solver, context):
    A = poisson2d(20)
    b = np.random.default_rng(7).random(400)
    kwargs = {"restart": 40} if solver is zla.gmres else {}
    for fmt, dtype, rtol in (("csr", np.float64, 1e-8), ("dia", np.float64, 1e-8), ("csr", np.float32, 1e-4)):
        if dtype == np.float64 and not context.device["fp64"]:
            continue
        on_device = ziggurat.DeviceMatrix(A, format=fmt, dtype=dtype, context=context)
        x, info = solver(on_device, b, rtol=rtol, **kwargs)
        assert info == 0 and x.dtype == dtype
        assert residual(A, x.astype(np.float64), b) < 2 * rtol * np.linalg.norm(b)
        assert zla.last_report()["product_kernel"] == "matrix-free"
    np.testing.assert_allclose(on_device.matvec(b), A @ b, rtol=1e-4, atol=1e-5)  # float32
    with pytest.raises(ziggurat.InvalidArgument, match="pad its"):
        zla.cg(ziggurat.DeviceMatrix(poisson2d(5), format="bsr", block_size=4, context=context), np.ones(25))
