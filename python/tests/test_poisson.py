"""ziggurat.poisson against a NumPy version of the Jacobi sweep, on every device and precision."""

import numpy as np
import pytest

import ziggurat
from conftest import device_nbytes
from references import numpy_jacobi


def test_poisson_matches_numpy_and_every_plan_gives_the_same_bits(context, profile, dtype):
    rng = np.random.default_rng(5)
    u0, f = (rng.uniform(-1, 1, (23, 9, 12)).astype(dtype) for _ in range(2))
    incore, report = ziggurat.poisson(f, u0, spacing=0.1, tol=0, max_sweeps=7, mode="incore", context=context,
                                      profile=profile)
    assert (report["reason"], report["sweeps"], incore.dtype) == ("max-sweeps", 7, dtype)
    np.testing.assert_allclose(incore, numpy_jacobi(u0, f, 0.1, 7), rtol=0, atol=4 * 7 * np.finfo(dtype).eps)
    # Four grids as the device pads their rows: several tasks a pass in the six task buffers.
    strip, report = ziggurat.poisson(f, u0, spacing=0.1, tol=0, max_sweeps=7, mode="strip", height=3,
                                     device_memory=4 * device_nbytes(context, f), context=context, profile=profile)
    assert report["plan"]["decomposition"] == "strip" and report["plan"]["tasks"] > 1
    assert strip.tobytes() == incore.tobytes()


def test_a_converging_run_reports_its_residual(context, profile):
    shape = (30, 12, 14)
    x = np.arange(shape[2]) / (shape[2] - 1)
    u_star = np.broadcast_to(x * x, shape)  # -Laplace(x^2) = -2, exact in the seven-point scheme
    f = np.full(shape, -2.0, np.float32)
    u0 = np.zeros(shape, np.float32)
    u0[:, :, -1] = 1.0  # u* on the x = 1 face, zero is u* on x = 0; y and z faces take u* as well
    for face in (np.s_[0], np.s_[-1]):
        u0[face] = u_star[face]
        u0[:, face] = u_star[:, face]
    calls = []
    u, report = ziggurat.poisson(f, u0, tol=1e-6, max_sweeps=20000, progress=calls.append, context=context,
                                 profile=profile)
    assert report["reason"] == "converged" and report["update"] < 1e-6 and calls
    assert report["residual"] < 1e-2 and np.abs(u - u_star).max() < 5e-3


def test_errors(context, profile):
    with pytest.raises(ziggurat.InvalidArgument, match="3"):
        ziggurat.poisson(np.zeros((8, 8), np.float32), context=context, profile=profile)
    with pytest.raises(ziggurat.InvalidArgument, match="shape of f"):
        ziggurat.poisson(np.zeros((5, 5, 5), np.float32), np.zeros((5, 5, 6), np.float32), context=context,
                         profile=profile)
    with pytest.raises(ziggurat.InvalidArgument, match="strip"):
        ziggurat.poisson(np.zeros((5, 5, 5), np.float32), mode="block", context=context, profile=profile)


def test_the_tuned_depth_gives_the_bits_of_single_sweeps(context, profile):
    rng = np.random.default_rng(8)
    u0, f = (rng.uniform(-1, 1, (20, 12, 16)).astype(np.float32) for _ in range(2))
    one, _ = ziggurat.poisson(f, u0, tol=0, max_sweeps=9, mode="incore", depth=1, context=context, profile=profile)
    tuned, report = ziggurat.poisson(f, u0, tol=0, max_sweeps=9, mode="incore", depth="auto", context=context,
                                     profile=profile)
    assert report["plan"]["depth"] >= 1 and (report["plan"]["group"] == "default") == (report["plan"]["depth"] == 1)
    assert tuned.tobytes() == one.tobytes()
