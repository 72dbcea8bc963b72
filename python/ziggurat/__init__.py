"""ziggurat: grid equations and sparse systems on any OpenCL device, from NumPy and SciPy.

A thin layer over ziggurat's C++ library (the same functions the `ziggurat` command runs):

    import numpy as np, ziggurat
    ctx = ziggurat.Context(device="gpu")            # or "cpu", "nvidia", a device number, None
    u, report = ziggurat.heat(np.random.rand(1024, 1024), steps=1000, device_memory="512MiB", context=ctx)
    x, report = ziggurat.solve(A, b, method="bicgstab", preconditioner="ilu0", rtol=1e-8, context=ctx)
    f, phi, report = ziggurat.modes("cantilever:2x0.1x0.2:40,2,4", modes=6, context=ctx)
    A_dev = ziggurat.DeviceMatrix(A, context=ctx)   # stays on the device; A_dev @ X multiplies

Arrays: float32 and float64 are computed in their own type; integer, boolean and float16 arrays are
converted (to float64, float16 to float32); complex and other dtypes are refused with
InvalidArgument. Arrays in any order and with any strides are accepted (a C-contiguous copy is made
when an array is not C-contiguous already). Errors are ziggurat.Error and its subclasses, with the
library's message. Ctrl-C stops a long run cleanly between its passes (heat, poisson) or
iterations (solve), raising KeyboardInterrupt (an in-core run is one pass: it stops only at its
end). The GIL is released while the device works, but the process does one device call at a time:
calls from several threads run one after another.
"""

import numpy as np

from ._core import (BuildError, Context, DeviceNotFound, DeviceVectors, Error, InvalidArgument, IoError,
                    OpenCLError, OutOfDeviceMemory, UnsupportedFeature, ZeroPivot, __version__, devices)
from ._arrays import real_array as _real_array, real_dtype as _real_dtype
from . import _checks
from ._sparse import DeviceMatrix, solve, spmm
from ._fem import modes, wave
from ._krylov import KrylovSolver
from . import _core
from . import sparse

#: ILU2's drop threshold when solve() is given none (ziggurat::sparse::kDefaultIlu2Threshold).
ILU2_THRESHOLD = _core.ILU2_THRESHOLD

__all__ = ["ILU2_THRESHOLD", "BuildError", "Context", "DeviceMatrix", "KrylovSolver", "DeviceNotFound", "DeviceVectors", "Error", "InvalidArgument",
           "IoError", "OpenCLError", "OutOfDeviceMemory", "UnsupportedFeature", "ZeroPivot", "__version__", "devices",
           "heat", "max_stable_alpha", "model", "modes", "poisson", "solve", "sparse", "spmm", "wave"]


def max_stable_alpha(dims):
    """The largest stable alpha of the explicit heat scheme in `dims` dimensions: 1 / (2 dims)."""
    return _core.max_stable_alpha(dims)


def heat(u0, steps, alpha=None, *, device_memory=None, mode="auto", height=None, depth=None, serial=False,
         progress=None, profile=None, context=None, vtk=None):
    """Advances the explicit heat scheme `steps` steps from the field u0; returns (field, report).

    u0: the initial field, shape (W,), (H, W) or (D, H, W) (at least 3 nodes an axis); its boundary
        nodes keep their values (Dirichlet). Every interior node becomes
        alpha * (sum of its 2 dims neighbours, x then y then z) + (1 - 2 dims alpha) * itself,
        in the array's dtype (float32 or float64), without fused multiply-add.
    alpha: 0 < alpha <= 1 / (2 dims); default 80 % of that limit.
    device_memory: the budget the run may use on the device, in bytes or as text ("512MiB", "2GB");
        default 90 % of the device's memory. A grid larger than the budget runs in pyramid passes.
    mode: "auto" (the cost model's choice), "incore", "trivial", "strip" or "block".
    height: the pyramid height n (steps a pass) of mode strip, block or auto; default the model's
        choice.
    depth: steps a kernel launch advances with its tile on chip (same bits); "auto" tunes it (measured
        once a device; on CPUs depths 1, 2 and 4 only); default "auto", as the CLI.
    serial: the paper's serial schedule instead of overlapping transfers and kernels.
    progress: called after each pass with a dict (passes_done, passes, steps_done, steps, time_s,
        nodes_per_s, eta_s). An exception it raises stops the run, as Ctrl-C does after
        the pass it interrupted; an in-core run is a single pass, so Ctrl-C stops it only at its end.
    profile: plan with this device profile (a dict of Context.calibrate()) instead of the device's
        cached one (measured now when there is none).
    context: a Context, or a device selection for one; default the default device.
    vtk: also write the field for ParaView, as `ziggurat heat --vtk` does: NAME.vti (a VTK image,
        the point array "u" with the field's bits), or NAME.pvti naming one piece NAME_0.vti.

    The report, like `ziggurat heat --json`: device, size (fastest axis first), dtype, alpha,
    steps, plan (mode, decomposition, height, task_extent, buffer_extent, tasks, passes, depth,
    group, schedule, kernel_ns_per_node and kernel_rate: the kernels' time a node and step the
    model charged and where it came from, "profile", "tuning record" or "given"), budget_bytes, device_bytes, pinned_host_memory, profile ("given", "cached" or
    "measured now"), time_s and predicted_s, nodes_per_s, ns_per_node and predicted_ns_per_node, and
    depth_tuning (every candidate's ns a node and step) and depth_plans (each tuned depth's
    candidate, height and predicted_s, the fastest chosen) when the depth was tuned. u0 is copied
    (one host copy) into the solver's grid, which the solver copies into its page-locked host
    layers; the result is copied out of them (the solver's memory is freed on return).
    """
    steps = _checks.count(steps, "steps")
    height = _checks.optional_count(height, "height")
    alpha = _checks.number(alpha, "alpha", optional=True)
    mode = _checks.name(mode, "mode")
    if height is not None and mode in ("incore", "trivial"):
        raise InvalidArgument(f"height sets the pyramid height of mode strip, block or auto; mode '{mode}' " +
                              ("always takes one step per pass" if mode == "trivial" else "has no pyramid"))
    field = _real_array(u0, "u0")
    vtk = _checks.vtk_path(vtk, (".vti", ".pvti"))
    return _core.heat(field, steps, alpha, _checks.memory(device_memory), mode, height, _checks.depth(depth), serial,
                      progress, _checks.profile(profile), context, vtk)


def poisson(f, u0=None, *, spacing=None, tol=1e-6, max_sweeps=10000, device_memory=None, mode="auto", height=None,
            depth=None, serial=False, progress=None, profile=None, context=None, vtk=None):
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
        launch, "auto" or None as for heat()), serial, profile, context, vtk (u as a VTK image): as
        for heat().
    progress: called after each pass with a dict (sweeps_done, max_sweeps, update, time_s,
        eta_s). An exception it raises stops the run, as Ctrl-C does after the pass (or
        stopping test) it interrupted.

    The report, like `ziggurat poisson --json`: device, size, dtype, spacing, tolerance,
    max_sweeps, reason ("converged", "max-sweeps" or "diverged"), sweeps, update, residual
    (max |f + Laplace_h u|, in double), plan (as heat()'s), budget_bytes, device_bytes,
    pinned_host_memory, profile, time_s and predicted_s, ns_per_node_sweep,
    predicted_ns_per_node_sweep and paper_eq2_ns_per_node_sweep, and depth_tuning when tuned. f and u0 are copied (one host copy each) into the solver's grids,
    which the solver copies into its host layers, and u out of them.
    """
    max_sweeps = _checks.count(max_sweeps, "max_sweeps")
    height = _checks.optional_count(height, "height")
    depth = _checks.depth(depth)
    spacing = _checks.number(spacing, "spacing", positive=True, optional=True)
    tol = _checks.number(tol, "tol", minimum=0)
    mode = _checks.name(mode, "mode")
    values = np.asarray(f)
    guess = None if u0 is None else np.asarray(u0)
    dtype = _real_dtype(np.result_type(values, guess) if guess is not None else values.dtype, "f")
    rhs = _real_array(values, "f", dtype)
    initial = np.zeros_like(rhs) if guess is None else _real_array(guess, "u0", dtype)
    vtk = _checks.vtk_path(vtk, (".vti", ".pvti"))
    return _core.poisson(rhs, initial, spacing, tol, max_sweeps, _checks.memory(device_memory), mode, height, depth,
                         serial, progress, _checks.profile(profile), context, vtk)


def model(grid, steps=1000, *, dims=2, dtype="float32", device_memory=None, tau_c=None, tau_a=None, profile=None,
          context=None, decomposition="auto", serial=False, height=None):
    """The cost model's plan and prediction for the explicit heat scheme, as `ziggurat model` gives it.

    grid: nodes a side (an int, NumPy's too, with `dims` axes), or a grid's shape as NumPy orders
        it ((H, W), ...).
    steps: time steps. dtype: "float32" or "float64".
    device_memory: the budget (bytes or "512MiB"); default the memory of the context's device.
    tau_c, tau_a: ns to move one value, ns to compute one node and step (the paper's two constants,
        > 0);
        with profile= (a dict of Context.calibrate()) or context= (its device's cached or measured
        profile), the measured constants, which tau_c and tau_a override where given.
    decomposition: "auto", "strip" or "block". serial: the paper's serial schedule. height: fix n.

    Returns a dict: grid, steps, dtype, budget_bytes, schedule, constants and plan (decomposition,
    height, task_extent, buffer_extent, tasks_per_pass, passes, predicted_s, ns_per_node,
    trivial_ns_per_node, speedup_over_trivial, paper_formula_ns_per_node).
    """
    if np.ndim(grid) == 0:
        extents = [_checks.count(grid, "grid")] * _checks.count(dims, "dims", 1)
    else:
        extents = [_checks.count(n, "grid's extents") for n in reversed(tuple(grid))]
    value_bytes = _real_dtype(dtype, "dtype").itemsize
    tau_c = _checks.number(tau_c, "tau_c", positive=True, optional=True)
    tau_a = _checks.number(tau_a, "tau_a", positive=True, optional=True)
    return _core.model(extents, _checks.count(steps, "steps"), value_bytes, _checks.memory(device_memory), tau_c, tau_a,
                       _checks.profile(profile), context, _checks.name(decomposition, "decomposition"), serial,
                       _checks.optional_count(height, "height"))
