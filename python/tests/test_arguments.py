"""Wrong arguments raise InvalidArgument naming them, and the forms NumPy users pass are taken."""

import os

import numpy as np
import pytest
import scipy.sparse as sp

import ziggurat
from conftest import device_nbytes, require_fp64

GRID = np.zeros((8, 8), np.float32)
CUBE = np.zeros((5, 5, 5), np.float32)
A = sp.identity(4, dtype=np.float32, format="csr")
MODEL = {"device_memory": "1MiB", "tau_c": 1.0, "tau_a": 0.1}


@pytest.mark.parametrize("call, name", [
    (lambda: ziggurat.heat(GRID, -1), "steps"),
    (lambda: ziggurat.heat(GRID, 2.5), "steps"),
    (lambda: ziggurat.heat(GRID, 5, mode="strip", height=-2), "height"),
    (lambda: ziggurat.heat(GRID, 5, mode="strip", height=1.5), "height"),
    (lambda: ziggurat.heat(GRID, 5, mode="incore", height=2), "height.*no pyramid"),
    (lambda: ziggurat.heat(GRID, 5, mode="trivial", height=2), "height.*one step per pass"),
    (lambda: ziggurat.heat(GRID, 5, depth=0), "depth"),
    (lambda: ziggurat.heat(GRID, 5, depth="fast"), "depth"),
    (lambda: ziggurat.heat(GRID, 5, device_memory=1.5), "device_memory"),
    (lambda: ziggurat.heat(GRID, 5, device_memory=[1 << 20]), "device_memory"),
    (lambda: ziggurat.heat(GRID, 5, device_memory=True), "device_memory"),
    (lambda: ziggurat.heat(GRID, 5, profile="profile.json"), r"Context\.calibrate\(\)"),
    (lambda: ziggurat.poisson(CUBE, max_sweeps=-1), "max_sweeps"),
    (lambda: ziggurat.poisson(CUBE, depth="deep"), "depth"),
    (lambda: ziggurat.solve(A, np.ones(4, np.float32), max_iterations=-1), "max_iterations"),
    (lambda: ziggurat.solve(A, np.ones(4, np.float32), max_iterations=10.5), "max_iterations"),
    (lambda: ziggurat.solve(A, np.ones((4, 2), np.float32), x0=np.ones((2, 4), np.float32)), r"x0.*\(4, 2\)"),
    (lambda: ziggurat.spmm([[1.0, 0.0], [0.0, 1.0]], np.ones(2)), "scipy.sparse"),
    (lambda: ziggurat.model(100, -5, **MODEL), "steps"),
    (lambda: ziggurat.model(100, 5, height=0, **MODEL), "height"),
    (lambda: ziggurat.model(100, 5, device_memory="1MiB", tau_c=0.0, tau_a=0.1), "tau_c"),
    (lambda: ziggurat.model(100, 5, device_memory="1MiB", tau_c=1.0, tau_a=-1.0), "tau_a"),
    (lambda: ziggurat.model(100, 5, profile="profile.json", device_memory="1MiB"), r"Context\.calibrate\(\)"),
    (lambda: ziggurat.Context(True), "bool"),
    (lambda: ziggurat.Context(1.0), "float"),
    # Issue 38, item 25: InvalidArgument naming the argument, never pybind11's TypeError.
    (lambda: ziggurat.heat(GRID, 5, alpha="0.2"), "alpha"),
    (lambda: ziggurat.heat(GRID, 5, alpha=float("nan")), "alpha"),
    (lambda: ziggurat.heat(GRID, 5, alpha=np.complex128(0.2)), "alpha"),
    (lambda: ziggurat.heat(GRID, 2**70), "steps"),
    (lambda: ziggurat.heat(GRID, 5, mode=3), "mode"),
    (lambda: ziggurat.poisson(CUBE, spacing="0.1"), "spacing"),
    (lambda: ziggurat.poisson(CUBE, tol=float("inf")), "tol"),
    (lambda: ziggurat.solve(A, np.ones(4, np.float32), rtol="1e-8"), "rtol"),
    (lambda: ziggurat.solve(A, np.ones(4, np.float32), restart=2**64), "restart"),
    (lambda: ziggurat.solve(A, np.ones(4, np.float32), method=None), "method"),
    (lambda: ziggurat.model(100, 5, device_memory="1MiB", tau_c="1", tau_a=0.1), "tau_c"),
    (lambda: ziggurat.modes("cantilever:1x0.1x0.1:4,1,1", modes=2**64), "modes"),
    (lambda: ziggurat.wave(np.full((4, 4), 3000.0), 1700.0, 2500.0, dx="10", steps=5), "dx"),
    (lambda: ziggurat.wave(np.full((4, 4), 3000.0), 1700.0, 2500.0, dx=10, steps=5, receivers=[]), "receivers"),
    (lambda: ziggurat.wave(np.full((4, 4), 3000.0), 1700.0, 2500.0, dx=10, steps=5, source=["a", "b"]), "source"),
    # Item 10: complex input is refused, never cut to its real part.
    (lambda: ziggurat.wave(np.full((4, 4), 3000.0 + 1j), 1700.0, 2500.0, dx=10, steps=5), "vp has dtype complex"),
], ids=lambda value: "" if callable(value) else value)
def test_a_wrong_argument_is_named(call, name):
    with pytest.raises(ziggurat.InvalidArgument, match=name):
        call()


def test_numpy_integers_whole_floats_and_lists_are_taken(context, profile):
    assert ziggurat.model(np.int64(100), np.int32(5), **MODEL) == ziggurat.model(100, 5, **MODEL)
    assert ziggurat.Context(np.int64(context.device["index"])).device == context.device
    u0 = np.random.default_rng(1).uniform(-1, 1, (20, 20)).astype(np.float32)
    budget = 3 * device_nbytes(context, u0)
    want, _ = ziggurat.heat(u0, np.int64(6), mode="strip", height=np.int64(2), device_memory=budget, context=context,
                            profile=profile)
    got, report = ziggurat.heat(u0, 6, mode="strip", height=2, device_memory=float(budget), context=context,
                                profile=profile)
    assert got.tobytes() == want.tobytes() and report["budget_bytes"] <= budget
    require_fp64(context)
    f = np.ones((5, 6, 7))
    u, _ = ziggurat.poisson(f, np.zeros_like(f), tol=0, max_sweeps=3, context=context, profile=profile)
    from_list, _ = ziggurat.poisson(f, np.zeros_like(f).tolist(), tol=0, max_sweeps=3, context=context, profile=profile)
    assert from_list.tobytes() == u.tobytes()


def test_a_message_that_is_not_utf8_still_raises_the_right_exception(monkeypatch):
    monkeypatch.setitem(os.environb, b"ZIGGURAT_DEVICE", b"name:caf\xe9")  # Latin-1, not UTF-8
    with pytest.raises(ziggurat.DeviceNotFound, match="caf\ufffd"):
        ziggurat.Context()


def test_an_empty_profile_is_a_wrong_argument_not_a_file_error(context):
    with pytest.raises(ziggurat.InvalidArgument, match="profile"):
        ziggurat.heat(GRID, 2, profile={}, context=context)
    with pytest.raises(ziggurat.InvalidArgument, match="profile"):
        ziggurat.model(100, 5, device_memory="1MiB", profile={"format": 1})


def test_complex_vectors_are_refused_by_a_device_matrix(context):
    matrix = ziggurat.DeviceMatrix(A, context=context)
    vectors = np.ones((4, 2)) + 1j
    with pytest.raises(ziggurat.InvalidArgument, match="X has dtype complex"):
        matrix @ vectors
    with pytest.raises(ziggurat.InvalidArgument, match="X has dtype complex"):
        matrix.input_vectors(vectors)
    np.testing.assert_array_equal(matrix @ vectors.real, vectors.real)  # the real ones are taken
