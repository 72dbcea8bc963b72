"""Fixtures of the Python package's tests: every OpenCL device found, or those ZIGGURAT_DEVICE
selects (as the C++ device tests take them), each test run once per device; and the module path
to tests/support/references.py, the NumPy references the command-line tool's tests share."""

import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

import ziggurat

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "support"))

DEVICES = ziggurat.devices(os.environ.get("ZIGGURAT_DEVICE") or "all")


@pytest.fixture(scope="session", params=[d["index"] for d in DEVICES], ids=[d["label"] for d in DEVICES])
def context(request):
    """A Context on each device in turn."""
    return ziggurat.Context(device=request.param)


@pytest.fixture(scope="session")
def profile(context):
    """The device's profile: cached, or measured once for the session."""
    return context.calibrate()


@pytest.fixture(params=[np.float32, np.float64], ids=["float32", "float64"])
def dtype(request, context):
    """Each precision the device has (float64 skipped where it lacks fp64)."""
    if request.param == np.float64:
        require_fp64(context)
    return np.dtype(request.param)


def require_fp64(context):
    """Skips the test where the context's device lacks float64."""
    if not context.device["fp64"]:
        pytest.skip(f"{context.device['label']} has no float64")


def device_nbytes(context, array):
    """The bytes `array` (a grid of 2 or 3 axes) takes on the context's device, whose rows are padded
    to the device's base address alignment (64 B on PoCL, 512 B on NVIDIA): device-memory budgets
    of the tests scale with this, not with array.nbytes."""
    align = max(1, context.device["base_address_align_bytes"] // array.itemsize)
    width = array.shape[-1]
    return array.size // width * (-(-width // align) * align) * array.itemsize


def tolerance(dtype, terms):
    """The rounding bound of a sum of `terms` products, relative to the sum of their magnitudes."""
    return 2 * (terms + 1) * np.finfo(dtype).eps


def interrupted_after(seconds, run):
    """Calls run() with SIGINT sent to the process `seconds` after it starts (Ctrl-C, from a timer's
    thread): (whether run() raised KeyboardInterrupt, the seconds it ran)."""
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    try:
        run()
    except KeyboardInterrupt:
        return True, time.perf_counter() - start
    finally:
        timer.cancel()
    return False, time.perf_counter() - start
