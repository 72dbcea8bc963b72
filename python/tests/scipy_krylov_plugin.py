"""A pytest plugin that runs SciPy's own Krylov tests, the installed module
scipy/sparse/linalg/_isolve/tests/test_iterative.py (unchanged, not copied), against
ziggurat.sparse.linalg: ziggurat's cg, bicgstab and gmres take the place of SciPy's before the module
imports them, so its solver lists, cases and TestGMRES call ziggurat's.

    PYTHONPATH=<build>/python:python/tests python3 -m pytest -p scipy_krylov_plugin \
        --pyargs scipy.sparse.linalg._isolve.tests.test_iterative

What does not apply is skipped with its reason (UNSUPPORTED); the tests of SciPy's other solvers
(cgs, qmr, minres, ...) are deselected: they would test SciPy, not ziggurat.

Two layouts of the module are known. SciPy 1.10 and 1.11 (Debian 12's) keep the solvers and cases
on an object, `params` (.solvers, .cases). SciPy 1.12 and later keep the solvers in a list,
`_SOLVERS`, and make every (case, solver) pair at import (`cases`, each with its .solver and .A):
the pairs of SciPy's other solvers are deselected and the complex ones skipped by that .solver.
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
    # SciPy 1.12 and later (the module of a newer SciPy than Debian 12's).
    "test_positional_deprecation[cg]": "SciPy 1.12-1.13 still took tol and the rest positionally with a "
                                       "DeprecationWarning; ziggurat's are keyword-only, as SciPy 1.14 made them "
                                       "(its test_positional_error passes)",
    "TestGMRES::test_callback_type": "SciPy 1.12 stopped calling gmres' callback_type='x' callback with x0 before "
                                     "the first cycle; ziggurat keeps SciPy 1.10's call, which Debian 12's module "
                                     "tests",
    "TestGMRES::test_callback_x_monotonic": "the same x0 call as test_callback_type (SciPy 1.10's, one call more)",
}
UNSUPPORTED["test_positional_deprecation[bicgstab]"] = UNSUPPORTED["test_positional_deprecation[cg]"]
UNSUPPORTED["test_positional_deprecation[gmres]"] = UNSUPPORTED["test_positional_deprecation[cg]"]
# Complex cases of the module's `params`, which its loops would give our solvers.
COMPLEX_CASES = ("rand-cmplx", "rand-cmplx-herm", "rand-cmplx-sym-pd")


def _test_id(item):
    return item.nodeid.split("::", 1)[1]


def _parameter(item, name):
    spec = getattr(item, "callspec", None)
    return None if spec is None else spec.params.get(name)


def _solver_of(value):
    """The solver a parameter names: itself, or the one wrapped in a pytest.param's values."""
    values = getattr(value, "values", None)
    return values[0] if isinstance(values, tuple) and values else value


def _ours(solver):
    return any(solver is ours or getattr(solver, "__wrapped__", None) is ours for ours in OURS.values())


def _tests_scipy_only(item):
    """Whether the item tests one of SciPy's other solvers only (a parameter naming one, or a case
    made for one)."""
    solver, case = _parameter(item, "solver"), _parameter(item, "case")
    if solver is not None:
        return not _ours(_solver_of(solver))
    if case is not None and hasattr(case, "solver"):  # SciPy >= 1.12: a (case, solver) pair
        return not _ours(case.solver)
    return _test_id(item).startswith(("TestQMR", "test_show"))


def _complex_case(item):
    case = _parameter(item, "case")
    matrix = getattr(case, "A", None)
    return matrix is not None and (getattr(matrix, "dtype", None) is not None and matrix.dtype.kind == "c")


def _restrict_to_ours(module):
    """Makes the module's own loops over every solver take ours only, in either layout (once)."""
    if getattr(module, "_ziggurat", False):
        return
    module._ziggurat = True
    params = getattr(module, "params", None)
    if params is not None:  # SciPy 1.10 and 1.11
        params.solvers[:] = list(OURS.values())
        for case in params.cases:
            if case.name in COMPLEX_CASES or case.A.dtype.kind == "c":
                case.skip = case.skip + list(OURS.values())
    solvers = getattr(module, "_SOLVERS", None)
    if isinstance(solvers, list):  # SciPy 1.12 and later
        solvers[:] = [solver for solver in solvers if _ours(solver)]


def pytest_collection_modifyitems(config, items):
    keep, drop = [], []
    for item in items:
        _restrict_to_ours(item.module)
        (drop if _tests_scipy_only(item) else keep).append(item)
        reason = UNSUPPORTED.get(_test_id(item)) or (COMPLEX if _complex_case(item) else None)
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_report_header(config):
    return ["ziggurat.sparse.linalg's cg, bicgstab and gmres stand in for SciPy's in test_iterative.py",
            "not applicable (skipped): " + "; ".join(f"{k}: {v}" for k, v in UNSUPPORTED.items()),
            "complex cases of the solver loops: skipped for ziggurat's solvers: " + COMPLEX]
