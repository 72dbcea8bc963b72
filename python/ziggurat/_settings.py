"""The Krylov solvers' settings as keywords. ziggurat.solve and ziggurat.KrylovSolver take the same
names, those of `ziggurat solve`'s options (docs/vocabulary.md); their types are checked here, naming
the keyword, and their values once, by the compiled module's SolverSettings (the CLI's check)."""

import warnings

from . import _checks
from ._core import InvalidArgument

NO_VALUE = object()  # the default of a deprecated keyword: not given


def renamed(value, old_value, old, new, where):
    """`value`, or `old_value` when the caller used the old keyword `old` instead of `new`
    (kept for one version: a DeprecationWarning)."""
    if old_value is NO_VALUE:
        return value
    warnings.warn(f"{where}'s keyword '{old}' is deprecated and goes in the next version: use '{new}'",
                  DeprecationWarning, stacklevel=3)
    return old_value


def _stopping_tolerance(value, name):
    """A tolerance of the stopping test: a number >= 0, infinity included (SciPy's atol=inf stops at
    once); else InvalidArgument naming `name`."""
    if _checks._is_real(value) and value >= 0:
        return float(value)
    raise InvalidArgument(f"{name} is a number >= 0 (infinity included), not {value!r}")


def solver_settings(*, method, preconditioner, rtol, atol, max_iterations, restart, ordering="auto", sweep="auto",
                    kernel="auto", aggregate=8, shift=0.0, threshold=None, static_pivoting="auto", jacobi_sweeps=None):
    """The settings as the compiled module takes them (a dict; threshold and jacobi_sweeps None: the
    library's defaults)."""
    settings = {name: _checks.name(value, name) for name, value in (
        ("method", method), ("preconditioner", preconditioner), ("ordering", ordering), ("sweep", sweep),
        ("kernel", kernel), ("static_pivoting", static_pivoting))}
    settings.update(rtol=_stopping_tolerance(rtol, "rtol"), atol=_stopping_tolerance(atol, "atol"),
                    max_iterations=_checks.count(max_iterations, "max_iterations"),
                    restart=_checks.count(restart, "restart", 1), aggregate=_checks.count(aggregate, "aggregate", 1),
                    shift=_checks.number(shift, "shift"))
    if threshold is not None:
        settings["threshold"] = _checks.number(threshold, "threshold", minimum=0)
    if jacobi_sweeps is not None:
        settings["jacobi_sweeps"] = str(_checks.count(jacobi_sweeps, "jacobi_sweeps"))
    return settings
