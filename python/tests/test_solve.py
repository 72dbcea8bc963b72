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
                               block_size=block_size, tol=1e-10, context=context)
    assert report["converged"] and report["status"] == "converged", report["reason"]
    assert relative_residual(a, x, b) <= 1e-10
    np.testing.assert_allclose(x, spla.spsolve(a.tocsc(), b), rtol=0, atol=1e-8 * np.abs(x).max())
    assert report["iterations"] > 0 and len(report["vectors"][0]["history"]) == report["iterations"] + 1
    assert report["block_size"] == block_size if block_size else 1 <= report["block_size"] <= 16
    assert x.dtype == np.float64
    if preconditioner == "ilu0":  # the keys of `ziggurat solve --json`
        assert report["lower_levels"] > 0 and report["upper_levels"] > 0 and report["sweep"]
        assert report["times"]["solve_s"] > 0 and "deflation_s" in report["times"]


def test_several_right_hand_sides_and_a_first_guess(context):
    if not context.device["fp64"]:
        pytest.skip("float64 solves need fp64")
    a = convection(12)
    b = np.random.default_rng(2).uniform(-1, 1, (a.shape[0], 3))
    x, report = ziggurat.solve(a, b, tol=1e-10, context=context)
    assert x.shape == b.shape and len(report["vectors"]) == 3 and report["converged"]
    np.testing.assert_allclose(x, spla.spsolve(a.tocsc(), b), atol=1e-8)
    again, report = ziggurat.solve(a, b[:, 0], x0=x[:, 0], tol=1e-10, context=context)
    assert report["iterations"] <= 1


def test_float32_stays_float32(context):
    a = laplacian(12, np.float32)
    b = np.ones(a.shape[0], np.float32)
    x, report = ziggurat.solve(a, b, method="cg", preconditioner="ilu0", tol=1e-5, context=context)
    assert x.dtype == np.float32 and report["converged"]
    assert relative_residual(a.astype(np.float64), x.astype(np.float64), b.astype(np.float64)) <= 2e-5


def test_not_converging_is_a_report_not_an_exception(context):
    x, report = ziggurat.solve(convection(16, np.float32), np.ones(256, np.float32), preconditioner="none", max_iter=2,
                               context=context)
    assert not report["converged"] and report["status"] == "max_iterations" and report["reason"]
    assert report["iterations"] == 2


def test_progress_is_reported_after_each_iteration(context):
    a, b = convection(16, np.float32), np.ones(256, np.float32)
    seen = []
    ziggurat.solve(a, b, preconditioner="none", tol=1e-5, progress=lambda i, r: seen.append((i, r)), context=context)
    assert [i for i, _ in seen] == list(range(1, len(seen) + 1)) and seen[-1][1] < seen[0][1]


def test_ctrl_c_while_the_device_works_stops_the_solve_early(context):
    """SIGINT arrives (from a timer's thread) while the main thread is in the library, GIL released."""
    a, b = laplacian(48, np.float32), np.ones(48 * 48, np.float32)

    def long_solve(max_iter=LONG):
        return ziggurat.solve(a, b, method="gmres", preconditioner="none", restart=2, tol=1e-30, max_iter=max_iter,
                              context=context)

    long_solve(max_iter=2)  # kernels built: the timings below are the solve's
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
    x, report = ziggurat.solve(a, b, kernel="multirow/2", tol=1e-5, context=context)
    assert report["product_kernel"] == "multirow/2" and report["converged"]
    x_auto, report = ziggurat.solve(a, b, tol=1e-5, context=context)
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
