"""Argument checks of the public functions: a wrong value raises InvalidArgument naming the
argument, before the compiled module sees it (where it would be a TypeError, or a wrong size)."""

import numbers

import numpy as np

from ._core import InvalidArgument


def _is_integer(value):
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def count(value, name, minimum=0):
    """`value` as an int >= minimum (NumPy integers taken); else InvalidArgument naming `name`."""
    if not _is_integer(value) or value < minimum:
        raise InvalidArgument(f"{name} is an integer >= {minimum}, not {value!r}")
    return int(value)


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
    if value is None:
        return 0.0
    if isinstance(value, (numbers.Real, np.number)) and not isinstance(value, (bool, np.bool_)):
        if np.isfinite(value) and value > 0:
            return float(value)
    raise InvalidArgument(f"{name} is a positive number, not {value!r}")


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
