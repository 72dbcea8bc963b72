"""ziggurat.sparse: sparse solvers with SciPy's interface (ziggurat.sparse.linalg)."""

from . import linalg

__all__ = ["linalg"]
