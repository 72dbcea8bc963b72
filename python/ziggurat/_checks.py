"""Argument checks of the public functions: a wrong value raises InvalidArgument naming the
argument, before the compiled module sees it (where it would be a TypeError, or a wrong size)."""

import numbers
import os

import numpy as np

from ._core import InvalidArgument


MOST = 2**63 - 1  # the largest count the compiled module takes (a C++ size_t or int64)


def _is_integer(value):
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_real(value):
    return isinstance(value, (numbers.Real, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def count(value, name, minimum=0):
    """`value` as an int from minimum to 2**63 - 1 (NumPy integers taken); else InvalidArgument naming
    `name`."""
    if not _is_integer(value) or not minimum <= value <= MOST:
        raise InvalidArgument(f"{name} is an integer from {minimum} to 2**63 - 1, not {value!r}")
    return int(value)


def number(value, name, *, positive=False, minimum=None, optional=False):
    """`value` as a finite float (NumPy's taken; bools, text and complex refused), > 0 when
    `positive`, >= minimum when given; None stays None when `optional`. Else InvalidArgument
    naming `name`."""
    if value is None and optional:
        return None
    if _is_real(value) and np.isfinite(value) and (not positive or value > 0) and (minimum is None or value >= minimum):
        return float(value)
    kind = "a positive finite number" if positive else "a finite number" + (f" >= {minimum}" if minimum is not None else "")
    raise InvalidArgument(f"{name} is {kind}{' or None' if optional else ''}, not {value!r}")


def name(value, argument):
    """A name (text) as `argument` takes it ("auto", "strip"); else InvalidArgument."""
    if not isinstance(value, str):
        raise InvalidArgument(f"{argument} is a name (text), not {value!r}")
    return value


def optional_count(value, name, minimum=1):
    """None, or count(value, name, minimum)."""
    return None if value is None else count(value, name, minimum)


def depth(value):
    """A depth (steps or sweeps a launch): an int >= 1, or "auto" (0 to the module), or None (the
    device's default)."""
    if value is None or value == "auto":
        return None if value is None else 0
    if not _is_integer(value) or value < 1:
        raise InvalidArgument(f'depth is an integer >= 1 or "auto", not {value!r}')
    return int(value)


def memory(value, name="device_memory"):
    """None, a positive number of bytes (an int, or a float that is a whole number: 1.5e9), or a
    size text ("512MiB"); else InvalidArgument naming `name`."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (numbers.Real, np.number)) and not isinstance(value, (bool, np.bool_)):
        if float(value).is_integer() and value >= 1:
            return int(value)
    raise InvalidArgument(f"{name} is a positive number of bytes or a size text ('512MiB', '2GB'), not {value!r}")


def profile(value):
    """None, or the dict Context.calibrate() returns."""
    if value is not None and not isinstance(value, dict):
        raise InvalidArgument(f"profile is the dict Context.calibrate() returns (json.load a saved one), not a "
                              f"{type(value).__name__}")
    return value


def tolerance(value, name):
    """None (the default: 0 to the module), or a positive finite number; else InvalidArgument."""
    return 0.0 if value is None else number(value, name, positive=True)


def numbers_text(value, count_, name):
    """A text "a,b,c" of `count_` finite numbers (as the CLI takes it) from a sequence or a text."""
    if isinstance(value, str):
        return value
    try:
        items = [float(v) for v in value]
    except (TypeError, ValueError):
        items = []
    if len(items) != count_ or not all(np.isfinite(items)):
        raise InvalidArgument(f"{name} is {count_} finite numbers, not {value!r}")
    return ",".join(repr(v) for v in items)


def vtk_path(value, endings):
    """The vtk= file as text ("" for None): a str or os.PathLike ending in one of `endings` (".vti");
    else InvalidArgument, before any work."""
    if value is None:
        return ""
    try:
        path = os.fspath(value)
    except TypeError:
        path = None
    if not isinstance(path, str) or not path.endswith(endings):
        raise InvalidArgument(f"vtk is a file name ending in {' or '.join(endings)}, not {value!r}")
    return path
