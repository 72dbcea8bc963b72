"""A pytest plugin that runs SciPy's own Krylov tests, the installed module
scipy/sparse/linalg/_isolve/tests/test_iterative.py (unchanged, not copied), against
ziggurat.sparse.linalg: ziggurat's cg, bicgstab and gmres take the place of SciPy's before the module
imports them, so its solver lists, cases and TestGMRES call ziggurat's.

    PYTHONPATH=<build>/python:python/tests python3 -m pytest -p scipy_krylov_plugin \
        --pyargs scipy.sparse.linalg._isolve.tests.test_iterative

What does not apply is skipped with its reason (UNSUPPORTED); the tests of SciPy's other solvers
(cgs, qmr, minres, ...) are deselected: they would test SciPy, not ziggurat.
"""

import pytest
import scipy.sparse.linalg._isolve as isolve

import ziggurat.sparse.linalg as zla

OURS = {"cg": zla.cg, "bicgstab": zla.bicgstab, "gmres": zla.gmres}
for _name, _solver in OURS.items():
    setattr(isolve, _name, _solver)

COMPLEX = "ziggurat's solvers are real (float32 and float64): complex systems are refused with InvalidArgument"
# Test ids (after the module's name) that cannot apply, and why.
UNSUPPORTED = {
    "test_maxiter_worsening[gmres]": COMPLEX + " (the case's matrix is complex)",
    "test_maxiter_worsening[bicgstab]": COMPLEX + " (the case's matrix is complex)",
    "TestGMRES::test_abi": COMPLEX + " (the test solves a complex system)",
    "TestGMRES::test_atol_legacy": "SciPy 1.10's legacy atol=None rule (tol taken as an absolute bound on the first "
                                   "residual only), which SciPy 1.12 removed: ziggurat follows 1.12, atol=0.0 by "
                                   "default",
    "TestGMRES::test_callback": "its second half expects the residual scaled by M (SciPy's GMRES is left-"
                                "preconditioned); ziggurat's GMRES is right-preconditioned, its residual b - A x "
                                "unscaled (the first half, without M, is test_sparse_linalg's "
                                "test_gmres_callback_residual)",
}
# Complex cases of the module's `params`, which its loops would give our solvers.
COMPLEX_CASES = ("rand-cmplx", "rand-cmplx-herm", "rand-cmplx-sym-pd")


def _test_id(item):
    return item.nodeid.split("::", 1)[1]


def _tests_scipy_only(item):
    """Whether the item tests one of SciPy's other solvers only (a parameter naming one)."""
    spec = getattr(item, "callspec", None)
    if spec is not None and "solver" in spec.params:
        return spec.params["solver"] not in OURS.values()
    return _test_id(item).startswith(("TestQMR", "test_show"))


def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for item in items:
        module = item.module
        params = getattr(module, "params", None)
        if params is not None and not getattr(params, "_ziggurat", False):
            params._ziggurat = True
            params.solvers[:] = list(OURS.values())  # the loops over every solver take ours only
            for case in params.cases:
                if case.name in COMPLEX_CASES or case.A.dtype.kind == "c":
                    case.skip = case.skip + list(OURS.values())
        (drop if _tests_scipy_only(item) else keep).append(item)
        reason = UNSUPPORTED.get(_test_id(item))
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_report_header(config):
    return ["ziggurat.sparse.linalg's cg, bicgstab and gmres stand in for SciPy's in test_iterative.py",
            "not applicable (skipped): " + "; ".join(f"{k}: {v}" for k, v in UNSUPPORTED.items()),
            "complex cases of the solver loops: skipped for ziggurat's solvers: " + COMPLEX]
