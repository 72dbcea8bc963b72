"""ziggurat.solve against scipy.sparse.linalg.spsolve and the residual, on every device."""

import time

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ziggurat
from conftest import interrupted_after, require_fp64


def laplacian(n, dtype=np.float64):
    """The five-point Laplacian on an n x n grid (SPD), plus a small shift."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    return (sp.kronsum(t, t) + 0.1 * sp.identity(n * n)).astype(dtype).tocsr()


def convection(n, dtype=np.float64):
    """A nonsymmetric, diagonally dominant upwind convection-diffusion matrix on an n x n grid."""
    t = sp.diags([-1.6, 2.2, -0.4], [-1, 0, 1], shape=(n, n))
    return (sp.kronsum(t, t)).astype(dtype).tocsr()


def relative_residual(a, x, b):
    return np.linalg.norm(b - a @ x) / np.linalg.norm(b)


@pytest.mark.parametrize("method, preconditioner, ordering, block_size", [
    ("cg", "jacobi", "natural", 1), ("cg", "ilu0", "colours", 1), ("bicgstab", "ilu0", "natural", 2),
    ("gmres", "block-jacobi", "natural", 4), ("bicgstab", "none", "natural", None)])
def test_solutions_match_spsolve(context, method, preconditioner, ordering, block_size):
    if not context.device["fp64"]:
        pytest.skip("float64 solves need fp64")
    a = laplacian(16) if method == "cg" else convection(16)
    b = np.random.default_rng(1).uniform(-1, 1, a.shape[0])
    x, report = ziggurat.solve(a, b, method=method, preconditioner=preconditioner, ordering=ordering,
                               block_size=block_size, rtol=1e-10, context=context)
    assert report["converged"] and report["status"] == "converged", report["reason"]
    assert relative_residual(a, x, b) <= 1e-10
    np.testing.assert_allclose(x, spla.spsolve(a.tocsc(), b), rtol=0, atol=1e-8 * np.abs(x).max())
    assert report["iterations"] > 0 and len(report["vectors"][0]["history"]) == report["iterations"] + 1
    assert report["block_size"] == block_size if block_size else 1 <= report["block_size"] <= 16
    assert x.dtype == np.float64
    if preconditioner == "ilu0":  # the keys of `ziggurat solve --json`
        assert report["lower_levels"] > 0 and report["upper_levels"] > 0 and report["sweep"]
        assert report["times"]["solve_s"] > 0 and "deflation_s" in report["times"]


def auto_sweep(device):
    """The sweep auto takes above 16 levels (ops/block_ilu.hpp)."""
    return "sequential" if device["type"] == "cpu" and device["compute_units"] <= 4 else "sync-free"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_triangular_sweep_gives_the_same_bits(context, dtype):
    if dtype == np.float64 and not context.device["fp64"]:
        pytest.skip("float64 solves need fp64")
    a = convection(20, dtype)  # natural order: 39 levels each way, past auto's 16
    b = np.random.default_rng(3).uniform(-1, 1, a.shape[0]).astype(dtype)
    solutions = {}
    for sweep in ("levels", "sync-free", "sequential", "auto"):
        x, report = ziggurat.solve(a, b, ordering="natural", sweep=sweep, rtol=1e-5, context=context)
        assert report["converged"], report["reason"]
        assert report["sweep"] == (sweep if sweep != "auto" else auto_sweep(context.device))
        solutions[sweep] = x
    # Jacobi sweeps as many as the levels less one are the exact solves.
    x, report = ziggurat.solve(a, b, ordering="natural", sweep="jacobi", jacobi_sweeps=38, rtol=1e-5, context=context)
    assert (report["sweep"], report["lower_jacobi_sweeps"], report["upper_jacobi_sweeps"]) == ("jacobi", 38, 38)
    solutions["jacobi"] = x
    for sweep, x in solutions.items():
        assert x.tobytes() == solutions["levels"].tobytes(), sweep
    with pytest.raises(ziggurat.InvalidArgument, match="levels, sync-free, sequential, jacobi or auto"):
        ziggurat.solve(a, b, sweep="fast", context=context)


def test_jacobi_sweeps_solve_approximately_and_are_checked(context):
    if not context.device["fp64"]:
        pytest.skip("float64 solves need fp64")
    a = convection(20)
    b = np.random.default_rng(4).uniform(-1, 1, a.shape[0])
    iterations = {}
    for sweeps in (0, 2, 38):
        x, report = ziggurat.solve(a, b, ordering="natural", sweep="jacobi", jacobi_sweeps=sweeps, rtol=1e-10,
                                   context=context)
        assert report["converged"], report["reason"]
        assert relative_residual(a, x, b) <= 1e-9
        assert report["lower_jacobi_sweeps"] == report["upper_jacobi_sweeps"] == sweeps
        iterations[sweeps] = report["iterations"]
    assert iterations[0] > iterations[2] >= iterations[38]  # closer to ILU(0)'s exact solves
    solver = ziggurat.KrylovSolver(a, ordering="natural", sweep="jacobi", jacobi_sweeps=1, context=context)
    _, report = solver.solve(b)
    assert report["converged"] and report["lower_jacobi_sweeps"] == 1
    _, report = ziggurat.solve(a, b, ordering="natural", sweep="jacobi", context=context)  # chosen per triangle
    assert report["converged"] and 1 <= report["upper_jacobi_sweeps"] <= report["lower_jacobi_sweeps"] <= 16
    for bad in (-1, 1.5, "2"):
        with pytest.raises(ziggurat.InvalidArgument, match="jacobi_sweeps is an integer"):
            ziggurat.solve(a, b, sweep="jacobi", jacobi_sweeps=bad, context=context)
    with pytest.raises(ziggurat.InvalidArgument, match="with sweep sync-free it would do nothing"):
        ziggurat.solve(a, b, sweep="sync-free", jacobi_sweeps=2, context=context)
    with pytest.raises(ziggurat.InvalidArgument, match="jacobi_sweeps .* is auto or 0 to 100000"):
        ziggurat.solve(a, b, sweep="jacobi", jacobi_sweeps=100001, context=context)


def test_several_right_hand_sides_and_a_first_guess(context):
    if not context.device["fp64"]:
        pytest.skip("float64 solves need fp64")
    a = convection(12)
    b = np.random.default_rng(2).uniform(-1, 1, (a.shape[0], 3))
    x, report = ziggurat.solve(a, b, rtol=1e-10, context=context)
    assert x.shape == b.shape and len(report["vectors"]) == 3 and report["converged"]
    np.testing.assert_allclose(x, spla.spsolve(a.tocsc(), b), atol=1e-8)
    again, report = ziggurat.solve(a, b[:, 0], x0=x[:, 0], rtol=1e-10, context=context)
    assert report["iterations"] <= 1


def test_a_csr_goes_in_with_the_same_bits_whether_its_block_size_is_chosen_or_given(context):
    a = convection(16, np.float32)  # a scattered pattern: the block size of least fill is 1
    wide = a.copy()
    wide.indptr, wide.indices = wide.indptr.astype(np.int64), wide.indices.astype(np.int64)
    b = np.random.default_rng(3).uniform(-1, 1, a.shape[0]).astype(np.float32)
    x, report = ziggurat.solve(a, b, rtol=1e-6, context=context)
    assert report["block_size"] == 1 and report["converged"]
    for given in ({"A": a, "block_size": 1}, {"A": wide}, {"A": wide, "block_size": 1}):
        again, other = ziggurat.solve(b=b, rtol=1e-6, context=context, **given)
        assert again.tobytes() == x.tobytes() and other["iterations"] == report["iterations"]


def test_float32_stays_float32(context):
    a = laplacian(12, np.float32)
    b = np.ones(a.shape[0], np.float32)
    x, report = ziggurat.solve(a, b, method="cg", preconditioner="ilu0", rtol=1e-5, context=context)
    assert x.dtype == np.float32 and report["converged"]
    assert relative_residual(a.astype(np.float64), x.astype(np.float64), b.astype(np.float64)) <= 2e-5


def test_not_converging_is_a_report_not_an_exception(context):
    x, report = ziggurat.solve(convection(16, np.float32), np.ones(256, np.float32), preconditioner="none",
                               max_iterations=2, context=context)
    assert not report["converged"] and report["status"] == "max_iterations" and report["reason"]
    assert report["iterations"] == 2


def test_progress_is_reported_after_each_iteration(context):
    a, b = convection(16, np.float32), np.ones(256, np.float32)
    seen = []
    ziggurat.solve(a, b, preconditioner="none", rtol=1e-5, progress=lambda i, r: seen.append((i, r)), context=context)
    assert [i for i, _ in seen] == list(range(1, len(seen) + 1)) and seen[-1][1] < seen[0][1]


def test_ctrl_c_while_the_device_works_stops_the_solve_early(context):
    """SIGINT arrives (from a timer's thread) while the main thread is in the library, GIL released."""
    a, b = laplacian(48, np.float32), np.ones(48 * 48, np.float32)

    def long_solve(max_iterations=LONG):
        return ziggurat.solve(a, b, method="gmres", preconditioner="none", restart=2, rtol=1e-30,
                              max_iterations=max_iterations, context=context)

    long_solve(max_iterations=2)  # kernels built: the timings below are the solve's
    start = time.perf_counter()
    _, report = long_solve()
    whole = time.perf_counter() - start
    assert report["iterations"] == LONG, report["reason"]
    interrupted, seconds = interrupted_after(whole / 10, long_solve)
    assert interrupted, "the solve was not interrupted"
    assert seconds < whole / 2, f"stopped after {seconds:.3f} s of a {whole:.3f} s solve"


LONG = 2000  # iterations of the solve Ctrl-C interrupts


def test_the_product_kernel_is_measured_or_named(context):
    a = laplacian(6, np.float32)
    b = np.ones(a.shape[0], np.float32)
    x, report = ziggurat.solve(a, b, kernel="multirow/2", rtol=1e-5, context=context)
    assert report["product_kernel"] == "multirow/2" and report["converged"]
    x_auto, report = ziggurat.solve(a, b, rtol=1e-5, context=context)
    assert report["converged"] and report["product_kernel"]
    np.testing.assert_allclose(x_auto, x, rtol=1e-3)
    with pytest.raises(ziggurat.InvalidArgument, match="rule"):
        ziggurat.solve(a, b, kernel="fast", context=context)


def test_errors(context):
    with pytest.raises(ziggurat.InvalidArgument, match="square"):
        ziggurat.solve(sp.random(5, 4, 0.5, format="csr", dtype=np.float32), np.ones(5, np.float32), context=context)
    with pytest.raises(ziggurat.InvalidArgument, match="shape"):
        ziggurat.solve(laplacian(4, np.float32), np.ones(5, np.float32), context=context)
    with pytest.raises(ziggurat.InvalidArgument, match="bicgstab"):
        ziggurat.solve(laplacian(4, np.float32), np.ones(16, np.float32), method="lu", context=context)
    zero_diagonal = (np.array([0, 1, 1, 0], np.float32), np.array([0, 1, 0, 1]), np.array([0, 2, 4]))
    singular = sp.csr_matrix(zero_diagonal, shape=(2, 2))  # the zeros on the diagonal stored
    with pytest.raises(ziggurat.ZeroPivot) as caught:
        ziggurat.solve(singular, np.ones(2, np.float32), preconditioner="ilu0", block_size=1, context=context)
    assert caught.value.block_row == 0 and isinstance(caught.value, ArithmeticError)


# ILU2 (issue 37): robust where ILU(0) is not. The real matrices beside the C++ tests'.
MATRICES = __import__("pathlib").Path(__file__).resolve().parents[2] / "tests" / "data" / "matrices"
REAL = ["bcsstk01", "bp_1200", "can___24", "fs_183_1", "gre_115", "olm500", "west0067"]


def gmres_inner_iterations(a, b, apply_m):
    """SciPy's restarted GMRES(50) to 1e-9 with the preconditioner `apply_m`, counting inner
    iterations (one callback each, as ziggurat counts them); (iterations, true relative residual)."""
    count = [0]

    def inner(_):
        count[0] += 1

    m = spla.LinearOperator(a.shape, apply_m)
    try:  # SciPy >= 1.12 names the tolerance rtol
        x, _ = spla.gmres(a, b, M=m, restart=50, rtol=1e-9, atol=0, maxiter=40, callback=inner,
                          callback_type="pr_norm")
    except TypeError:
        x, _ = spla.gmres(a, b, M=m, restart=50, tol=1e-9, atol=0, maxiter=40, callback=inner,
                          callback_type="pr_norm")
    return count[0], relative_residual(a, x, b)


@pytest.mark.parametrize("name", REAL)
def test_ilu2_meets_spilu_on_the_real_matrices(context, name):
    """With its default threshold, GMRES(50) + ILU2 converges to 1e-9 on every real system that
    SciPy's spilu (drop_tol 1e-4, fill_factor 10) + GMRES(50) solves, in at most 1.5x its
    iterations + 5."""
    require_fp64(context)
    import scipy.io
    a = sp.csr_matrix(scipy.io.mmread(str(MATRICES / f"{name}.mtx"))).astype(np.float64)
    b = np.ones(a.shape[0])
    ilu = spla.spilu(a.tocsc(), drop_tol=1e-4, fill_factor=10)
    spilu_iterations, spilu_residual = gmres_inner_iterations(a, b, ilu.solve)
    if not spilu_residual < 1e-9:
        pytest.skip(f"spilu + GMRES(50) does not solve {name}")
    x, report = ziggurat.solve(a, b, method="gmres", restart=50, preconditioner="ilu2", rtol=1e-9, max_iterations=2000,
                               context=context)
    assert report["converged"], report["reason"]
    assert relative_residual(a, x, b) < 1e-9
    assert report["iterations"] <= 1.5 * spilu_iterations + 5, (report["iterations"], spilu_iterations)
    assert report["fill"] >= 1 or name in ("fs_183_1", "can___24")  # dropping may leave fewer blocks than A
    assert report["times"]["host_factorization_s"] > 0 and report["preconditioner"] == "ilu2"


def test_ilu2_where_ilu0_stops_and_its_options(context):
    require_fp64(context)
    import scipy.io
    a = sp.csr_matrix(scipy.io.mmread(str(MATRICES / "bp_1200.mtx")))
    b = np.ones(a.shape[0])
    with pytest.raises(ziggurat.InvalidArgument, match="no diagonal block"):
        ziggurat.solve(a, b, method="gmres", restart=50, preconditioner="ilu0", context=context)
    fills = []
    for threshold in (0.05, ziggurat.ILU2_THRESHOLD, 0.0):
        x, report = ziggurat.solve(a, b, method="gmres", restart=50, preconditioner="ilu2", threshold=threshold,
                                   ordering="nested-dissection", rtol=1e-9, context=context)
        assert report["converged"] and report["matched_rows"], report["reason"]
        fills.append(report["fill"])
    assert fills == sorted(fills)
    with pytest.raises(ziggurat.ZeroPivot, match="ILU2 failed.*block row"):
        ziggurat.solve(a, b, method="gmres", preconditioner="ilu2", static_pivoting="off", context=context)
    with pytest.raises(ziggurat.InvalidArgument, match="static pivoting"):
        ziggurat.solve(laplacian(8), np.ones(64), method="cg", preconditioner="ilu2", static_pivoting="on",
                       context=context)
    with pytest.raises(ziggurat.InvalidArgument, match="threshold"):
        ziggurat.solve(laplacian(8), np.ones(64), preconditioner="ilu2", threshold=-1.0, context=context)
    x, report = ziggurat.solve(laplacian(12), np.ones(144), method="cg", preconditioner="ilu2", rtol=1e-10,
                               context=context)  # IC2
    assert report["converged"] and not report["matched_rows"] and report["fill"] > 1
    np.testing.assert_allclose(x, spla.spsolve(laplacian(12).tocsc(), np.ones(144)), atol=1e-8)


def test_krylov_solver_takes_every_setting_of_solve(context):
    # One SolverSettings behind both (app/solver_settings.hpp): KrylovSolver takes static_pivoting and
    # aggregate as solve does, gives the same answer, and refuses the same values.
    require_fp64(context)
    import scipy.io
    a = sp.csr_matrix(scipy.io.mmread(str(MATRICES / "bp_1200.mtx")))
    b = np.ones(a.shape[0])
    settings = dict(method="gmres", restart=50, preconditioner="ilu2", ordering="nested-dissection", rtol=1e-9,
                    static_pivoting="on", kernel="rule", context=context)
    x, report = ziggurat.solve(a, b, **settings)
    solver = ziggurat.KrylovSolver(a, **settings)
    again, report_again = solver.solve(b)
    assert report_again["matched_rows"] and report_again["converged"]
    assert report_again["iterations"] == report["iterations"]
    np.testing.assert_array_equal(again, x)
    with pytest.raises(ziggurat.ZeroPivot, match="ILU2 failed"):
        ziggurat.KrylovSolver(a, method="gmres", preconditioner="ilu2", static_pivoting="off", context=context)
    grid = laplacian(16)
    blocks = ziggurat.KrylovSolver(grid, method="cg", preconditioner="ilu0", ordering="block-colours", aggregate=4,
                                   context=context)
    x, report = blocks.solve(np.ones(256))
    assert report["converged"] and report["ordering"] == "block-colours"
    for bad, message in ((dict(static_pivoting="sometimes"), "static pivoting|static_pivoting"),
                         (dict(aggregate=0), "aggregate"), (dict(threshold=-1.0), "threshold"),
                         (dict(method="gmres", restart=500), "restart"), (dict(rtol=0.0), "rtol and atol")):
        for call in (lambda: ziggurat.solve(grid, np.ones(256), context=context, **bad),
                     lambda: ziggurat.KrylovSolver(grid, context=context, **bad)):
            with pytest.raises(ziggurat.InvalidArgument, match=message):
                call()


def test_old_keyword_spellings_still_work_and_warn(context):
    # docs/vocabulary.md: tol and max_iter (solve) and maxiter (KrylovSolver) are kept for one version.
    a, b = laplacian(12), np.ones(144)
    x, report = ziggurat.solve(a, b, method="cg", rtol=1e-9, max_iterations=3, context=context)
    for old in (dict(tol=1e-9, max_iterations=3), dict(rtol=1e-9, max_iter=3)):
        with pytest.warns(DeprecationWarning, match="'(tol|max_iter)' is deprecated.*use '(rtol|max_iterations)'"):
            old_x, old_report = ziggurat.solve(a, b, method="cg", context=context, **old)
        np.testing.assert_array_equal(old_x, x)
        assert old_report["iterations"] == report["iterations"] == 3
    with pytest.warns(DeprecationWarning, match="'maxiter' is deprecated.*use 'max_iterations'"):
        solver = ziggurat.KrylovSolver(a, method="cg", rtol=1e-9, maxiter=3, context=context)
    assert solver.solve(b)[1]["iterations"] == 3
