"""ziggurat: grid equations and sparse systems on any OpenCL device, from NumPy and SciPy.

A thin layer over ziggurat's C++ library (the same functions the `ziggurat` command runs):

    import numpy as np, ziggurat
    ctx = ziggurat.Context(device="gpu")            # or "cpu", "nvidia", a device number, None
    u, report = ziggurat.heat(np.random.rand(1024, 1024), steps=1000, device_memory="512MiB", context=ctx)
    x, report = ziggurat.solve(A, b, method="bicgstab", preconditioner="ilu0", tol=1e-8, context=ctx)
    A_dev = ziggurat.DeviceMatrix(A, context=ctx)   # stays on the device; A_dev @ X multiplies

Arrays: float32 and float64 are computed in their own type; integer, boolean and float16 arrays are
converted (to float64, float16 to float32); complex and other dtypes are refused with
InvalidArgument. Arrays in any order and with any strides are accepted (a C-contiguous copy is made
when an array is not C-contiguous already). Errors are ziggurat.Error and its subclasses, with the
library's message. Ctrl-C stops a long run cleanly between its passes (heat) or iterations (solve),
raising KeyboardInterrupt; the GIL is released while the device works.
"""

import numpy as np

from ._core import (BuildError, Context, DeviceNotFound, DeviceVectors, Error, InvalidArgument, IoError,
                    OpenCLError, OutOfDeviceMemory, UnsupportedFeature, ZeroPivot, __version__, devices)
from ._arrays import real_array as _real_array, real_dtype as _real_dtype
from ._sparse import DeviceMatrix, solve, spmm
from . import _core

__all__ = ["BuildError", "Context", "DeviceMatrix", "DeviceNotFound", "DeviceVectors", "Error", "InvalidArgument",
           "IoError", "OpenCLError", "OutOfDeviceMemory", "UnsupportedFeature", "ZeroPivot", "__version__", "devices",
           "heat", "max_stable_alpha", "model", "poisson", "solve", "spmm"]


def max_stable_alpha(dims):
    """The largest stable alpha of the explicit heat scheme in `dims` dimensions: 1 / (2 dims)."""
    return _core.max_stable_alpha(dims)


def heat(u0, steps, alpha=None, *, device_memory=None, mode="auto", height=None, depth=None, serial=False,
         progress=None, profile=None, context=None):
    """Advances the explicit heat scheme `steps` steps from the field u0; returns (field, report).

    u0: the initial field, shape (W,), (H, W) or (D, H, W) (at least 3 nodes an axis); its boundary
        nodes keep their values (Dirichlet). Every interior node becomes
        alpha * (sum of its 2 dims neighbours, x then y then z) + (1 - 2 dims alpha) * itself,
        in the array's dtype (float32 or float64), without fused multiply-add.
    alpha: 0 < alpha <= 1 / (2 dims); default 80 % of that limit.
    device_memory: the budget the run may use on the device, in bytes or as text ("512MiB", "2GB");
        default 90 % of the device's memory. A grid larger than the budget runs in pyramid passes.
    mode: "auto" (the cost model's choice), "incore", "trivial", "strip" or "block".
    height: the pyramid height n (steps a pass); default the model's choice.
    depth: steps a kernel launch advances with its tile on chip (same bits); "auto" tunes it (measured
        once a device); default "auto" on GPUs and 1 elsewhere, as the CLI.
    serial: the paper's serial schedule instead of overlapping transfers and kernels.
    progress: called after each pass with a dict (passes_done, passes, steps_done, steps, seconds,
        nodes_per_second, eta_seconds). An exception it raises stops the run.
    profile: plan with this device profile (a dict of Context.calibrate()) instead of the device's
        cached one (measured now when there is none).
    context: a Context, or a device selection for one; default the default device.

    The report (the keys of `ziggurat heat --json`) holds the plan that ran (decomposition, height,
    task size, tasks, passes, depth, schedule), time_s measured and predicted_s, ns_per_node beside
    predicted_ns_per_node, the budget and device bytes. u0 is copied into the solver's page-locked
    host memory and the result copied out of it (the solver's memory is freed on return).
    """
    field = _real_array(u0, "u0")
    return _core.heat(field, steps, alpha, device_memory, mode, height, 0 if depth == "auto" else depth, serial,
                      progress, profile, context)


def poisson(f, u0=None, *, spacing=None, tol=1e-6, max_sweeps=10000, device_memory=None, mode="auto", height=None,
            depth=1, serial=False, progress=None, profile=None, context=None):
    """Solves -Laplace(u) = f on a 3D grid by Jacobi sweeps; returns (u, report).

    f: the right-hand side, shape (D, H, W) (at least 3 nodes an axis; D may be far larger than H
        and W). u0: the boundary values (kept) and the first guess inside, f's shape; default zeros.
        The dtype is f's and u0's together (float32 or float64).
    spacing: h, default 1 / (W - 1). Each sweep sets every interior node to
        (1/6) (((((U[x-1] + U[x+1]) + U[y-1]) + U[y+1]) + U[z-1]) + U[z+1] + h^2 f), without fused
        multiply-add.
    tol: the run stops at the first stopping test where the last sweep's largest update is below
        tol (0 runs exactly max_sweeps sweeps); tests come after each pass (in core: every `height`
        sweeps, default 32).
    device_memory, mode ("auto", "incore" or "strip"), height (sweeps a pass), depth (sweeps a
        launch), serial, profile, context: as for heat().
    progress: called after each pass with a dict (sweeps_done, max_sweeps, update, seconds,
        eta_seconds). An exception it raises stops the run.

    The report (the keys of `ziggurat poisson --json`): reason ("converged", "max-sweeps" or
    "diverged"), sweeps, update, residual (max |f + Laplace_h u|, in double), the plan, time_s and
    predicted_s, ns_per_node_sweep. f and u0 are copied into the solver's host memory and u out of it.
    """
    values = np.asarray(f)
    dtype = _real_dtype(np.result_type(values, u0) if u0 is not None else values.dtype, "f")
    rhs = _real_array(values, "f", dtype)
    initial = np.zeros_like(rhs) if u0 is None else _real_array(u0, "u0", dtype)
    return _core.poisson(rhs, initial, spacing, tol, max_sweeps, device_memory, mode, height, depth, serial, progress,
                         profile, context)


def model(grid, steps=1000, *, dims=2, dtype="float32", device_memory=None, tau_c=None, tau_a=None, profile=None,
          context=None, decomposition="auto", serial=False, height=None):
    """The cost model's plan and prediction for the explicit heat scheme, as `ziggurat model` gives it.

    grid: nodes a side (an int, with `dims` axes), or a grid's shape as NumPy orders it ((H, W), ...).
    steps: time steps. dtype: "float32" or "float64".
    device_memory: the budget (bytes or "512MiB"); default the memory of the context's device.
    tau_c, tau_a: ns to move one value, ns to compute one node and step (the paper's two constants);
        with profile= (a dict of Context.calibrate()) or context= (its device's cached or measured
        profile), the measured constants, which tau_c and tau_a override where given.
    decomposition: "auto", "strip" or "block". serial: the paper's serial schedule. height: fix n.

    Returns a dict: grid, steps, dtype, device_mem_bytes, schedule, constants and plan (decomposition,
    height, task_extent, buffer_extent, tasks_per_pass, passes, predicted_s, ns_per_node,
    trivial_ns_per_node, speedup_over_trivial, paper_formula_ns_per_node).
    """
    extents = [int(grid)] * dims if isinstance(grid, int) else [int(n) for n in reversed(tuple(grid))]
    value_bytes = _real_dtype(dtype, "dtype").itemsize
    return _core.model(extents, steps, value_bytes, device_memory, tau_c, tau_a, profile, context, decomposition,
                       serial, height)
