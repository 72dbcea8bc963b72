"""ziggurat.modes against SciPy's dense generalised eigensolver, on every device."""

import numpy as np
import pytest
import scipy.linalg

import ziggurat
from conftest import require_fp64


def bar(n, clamped=True):
    """A fixed-free bar of n two-node elements (EA = rho A = 1, h = 1 / n): element stiffness and
    consistent mass, and the DOF of each local DOF (node 0 clamped: -1)."""
    h = 1.0 / n
    k = np.array([[1.0, -1.0], [-1.0, 1.0]]) / h
    m = np.array([[2.0, 1.0], [1.0, 2.0]]) * h / 6
    dofs = np.array([[i - 1, i] for i in range(n)]) if clamped else np.array([[i, i + 1] for i in range(n)])
    return np.repeat(k[None], n, axis=0), np.repeat(m[None], n, axis=0), dofs


def assembled(elements, dofs, size):
    a = np.zeros((size, size))
    for e, idx in zip(elements, dofs):
        for r, i in enumerate(idx):
            for c, j in enumerate(idx):
                if i >= 0 and j >= 0:
                    a[i, j] += e[r, c]
    return a


def test_modes_of_elements_match_scipy_and_are_m_orthonormal(context):
    require_fp64(context)
    k, m, dofs = bar(60)
    f, phi, report = ziggurat.modes(elements=k, dofs=dofs, mass=m, modes=4, tol=1e-12, context=context)
    kd, md = assembled(k, dofs, 60), assembled(m, dofs, 60)
    want = scipy.linalg.eigh(kd, md, eigvals_only=True)[:4]
    np.testing.assert_allclose(report["eigenvalues"], want, rtol=1e-8)
    np.testing.assert_allclose(f, np.sqrt(want) / (2 * np.pi), rtol=1e-8)
    assert phi.shape == (60, 4) and phi.dtype == np.float64 and report["converged"]
    np.testing.assert_allclose(phi.T @ md @ phi, np.eye(4), atol=1e-8)
    assert max(report["residuals"]) < 1e-6 and report["dofs"] == 60


def test_float32_is_kept_and_the_identity_is_the_default_mass(context):
    k, _, dofs = bar(40)
    f, phi, report = ziggurat.modes(elements=k.astype(np.float32), dofs=dofs, modes=2, dtype="float32",
                                    context=context)
    want = scipy.linalg.eigh(assembled(k, dofs, 40), eigvals_only=True)[:2]
    assert phi.dtype == np.float32 and report["precision"] == "f32" and "identity mass" in report["model"]
    np.testing.assert_allclose(report["eigenvalues"], want, rtol=1e-3)


def test_a_generated_cantilever_gives_the_benchmark_frequency(context):
    require_fp64(context)
    seen = []
    f, phi, report = ziggurat.modes("cantilever:2x0.1x0.2:20,1,2", modes=3, progress=seen.append, context=context)
    # The convergence table of bench/results/2026-11-25-h100-ebe.md, 20x1x2 bricks: 25.9873 Hz.
    assert f[0] == pytest.approx(25.9873, rel=1e-5) and phi.shape == (report["dofs"], 3)
    assert [p["iteration"] for p in seen] == list(range(1, report["iterations"] + 1))
    assert {"times", "cg_iterations", "scatter", "preconditioner", "projection_layout"} <= report.keys()


def test_both_projection_layouts_give_the_same_bits(context):
    require_fp64(context)
    runs = {layout: ziggurat.modes("cantilever:2x0.1x0.2:20,1,2", modes=3, scatter="colouring", projection=layout,
                                   context=context)
            for layout in ("tiles", "columns")}
    assert [r[2]["projection_layout"] for r in runs.values()] == ["tiles", "columns"]
    assert np.array_equal(runs["tiles"][0], runs["columns"][0])
    with pytest.raises(ziggurat.InvalidArgument, match="projection"):
        ziggurat.modes("cantilever:2x0.1x0.2:20,1,2", modes=3, projection="rows", context=context)


def test_the_tensor_layout_runs_on_nvidia_tensor_cores_else_says_why(context):
    require_fp64(context)
    mesh = "cantilever:2x0.1x0.2:20,1,2"
    if context.device["nvidia_compute_capability"] >= 80:
        tensor = ziggurat.modes(mesh, modes=3, scatter="colouring", projection="tensor", context=context)
        tiles = ziggurat.modes(mesh, modes=3, scatter="colouring", projection="tiles", context=context)
        assert tensor[2]["projection_layout"] == "tensor"
        assert tensor[2]["projection_factored"] == {"stiffness": True, "mass": True}
        np.testing.assert_allclose(tensor[0], tiles[0], rtol=1e-10)
    else:
        with pytest.raises(ziggurat.UnsupportedFeature, match="compute capability 8.0"):
            ziggurat.modes(mesh, modes=3, projection="tensor", context=context)


def test_a_progress_callback_that_raises_stops_the_run(context):
    k, m, dofs = bar(30)

    def stop(progress):
        raise RuntimeError(f"stopped at {progress['iteration']}")

    with pytest.raises(RuntimeError, match="stopped at 1"):
        ziggurat.modes(elements=k, dofs=dofs, mass=m, modes=2, progress=stop, context=context,
                       dtype="float64" if context.device["fp64"] else "float32")


@pytest.mark.parametrize("call, message", [
    (lambda: ziggurat.modes(), "give the model"),
    (lambda: ziggurat.modes("cantilever:1x1x1:2,2,2", elements=np.zeros((1, 2, 2)), dofs=[[0, 1]]), "give the model"),
    (lambda: ziggurat.modes(elements=np.eye(2)[None]), "need dofs"),
    (lambda: ziggurat.modes("cube:1x1x1:2,2,2"), "cantilever"),
    (lambda: ziggurat.modes(elements=np.eye(3)[None], dofs=[[0, 1]]), "shape"),
    (lambda: ziggurat.modes(elements=np.array([[[1.0, 2.0], [0.0, 1.0]]]), dofs=[[0, 1]]), "symmetric"),
    (lambda: ziggurat.modes(elements=np.eye(2)[None], dofs=[[0.5, 1]]), "integer"),
    (lambda: ziggurat.modes("cantilever:1x0.2x0.2:4,1,1", preconditioner="magic"), "preconditioner"),
    (lambda: ziggurat.modes("cantilever:1x0.2x0.2:4,1,1", modes=0), "modes"),
    (lambda: ziggurat.modes("cantilever:1x0.2x0.2:4,1,1", material=(1, 2)), "material"),
    (lambda: ziggurat.modes("cantilever:1x0.2x0.2:4,1,1", progress=3), "callable"),
])
def test_bad_input_is_a_clear_error(context, call, message):
    with pytest.raises(ziggurat.InvalidArgument, match=message):
        call()
