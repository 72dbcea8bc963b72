"""Finite-element capabilities: natural frequencies and mode shapes (modes), elastic waves (wave)."""

import numpy as np

from . import _checks, _core
from ._arrays import real_dtype as _real_dtype


def modes(mesh=None, *, material=(210e9, 0.3, 7850.0), lumped=False, elements=None, dofs=None, mass=None, modes=10,
          vectors=None, tol=None, max_iterations=100, solve_tol=None, cg_operator="assembled", preconditioner="auto",
          ordering="colours", scatter="auto", projection="auto", batch_elements=None, block_size=3, deflation=True, dtype="float64",
          progress=None, context=None, vtk=None):
    """The lowest natural frequencies and mode shapes of K phi = lambda M phi by subspace iteration
    on the device, as `ziggurat modes` finds them; returns (frequencies, phi, report).

    The model, one of:
      mesh: a generated brick cantilever clamped at x = 0, "cantilever:LxWxH:nx,ny,nz" (metres,
        bricks), of `material` (E, nu, rho: Pa, -, kg/m^3) with consistent mass (lumped=True: lumped);
      elements: element stiffness matrices, shape (m, l, l), with dofs: the global DOF of each
        local DOF, integers of shape (m, l) (negative: constrained, dropped), and optionally mass:
        element mass matrices, (m, l, l) on the same dofs (default the identity: K phi = lambda phi).
    modes: p, how many of the lowest; vectors: q (default min(2p, p + 8)); tol: the largest relative
        change of a wanted eigenvalue to stop at (default 1e-10 in float64, 1e-4 in float32);
        max_iterations; solve_tol: CG's tolerance on ||r|| / ||b||.
    cg_operator: "assembled" (block CSR, block_size DOFs a node) or "matrix-free" (element by
        element); preconditioner: "auto" (ilu0 assembled, block-jacobi matrix-free), "ilu0",
        "block-jacobi", "jacobi" or "none"; ordering: ILU(0)'s ("natural", "levels", "colours",
        "block-colours"); scatter: "colouring", "atomics" or "auto" (the faster on the device,
        measured once and recorded); projection: the layout of the projections' kernel, "tiles",
        "columns", "tensor" (NVIDIA GPUs of compute capability 8.0 or later, float64) or "auto" (as
        scatter; tiles and columns give the same bits, tensor its own); batch_elements: stream the elements in batches of this many
        (default: resident where the stiffness and the mass fit in half the device's memory, else
        batches of about 256 MiB); deflation: deflate CG by the Ritz vectors (float64).
    dtype: "float64" (default) or "float32".
    progress: called after each iteration with a dict (iteration, change, cg_iterations); an
        exception it raises stops the run, as Ctrl-C does after the iteration it interrupted.
    vtk: also write a generated mesh for ParaView, as `ziggurat modes --vtk` does: NAME.vtu (the
        nodes in metres, the bricks, each mode's displacement a point vector "mode_K_FREQHz").

    frequencies: (p,) in Hz, ascending. phi: (dofs, p), M-orthonormal, in dtype (no copy: the
    array owns the solver's result). report: the dict `ziggurat modes --json` prints (device,
    model, dofs, settings, converged, reason, iterations, cg_iterations, eigenvalues,
    frequencies_hz, residuals ||K phi - lambda M phi|| / ||K phi||, changes, times: setup_s, ...).
    """
    if (mesh is None) == (elements is None):
        raise _core.InvalidArgument('give the model: mesh="cantilever:LxWxH:nx,ny,nz", or elements= with dofs=')
    if elements is not None and dofs is None:
        raise _core.InvalidArgument("elements need dofs: the global DOF of each local DOF, integers of shape (m, l)")
    if elements is None and (dofs is not None or mass is not None):
        raise _core.InvalidArgument("dofs and mass go with elements, not with mesh")
    vtk = _checks.vtk_path(vtk, (".vtu",))
    if vtk and mesh is None:
        raise _core.InvalidArgument("vtk= writes the mesh of a generated mesh=; element matrices carry no geometry")
    if mesh is not None and not isinstance(mesh, str):
        raise _core.InvalidArgument(f'mesh is a text "cantilever:LxWxH:nx,ny,nz", not {mesh!r}')
    dtype = _real_dtype(dtype, "dtype")
    if progress is not None and not callable(progress):
        raise _core.InvalidArgument("progress must be callable (it gets a dict after each iteration)")
    names = {"cg_operator": cg_operator, "preconditioner": preconditioner, "ordering": ordering, "scatter": scatter,
             "projection": projection}
    for name, value in names.items():
        if not isinstance(value, str):
            raise _core.InvalidArgument(f"{name} is a name (text), not {value!r}")
    return _core.modes(elements, dofs, mass, dtype.name, mesh or "", _checks.numbers_text(material, 3, "material"),
                       bool(lumped), _checks.count(modes, "modes", 1), _checks.optional_count(vectors, "vectors") or 0,
                       _checks.tolerance(tol, "tol"), _checks.count(max_iterations, "max_iterations", 1),
                       _checks.tolerance(solve_tol, "solve_tol"), cg_operator, preconditioner, ordering, scatter,
                       projection, _checks.optional_count(batch_elements, "batch_elements") or 0,
                       _checks.count(block_size, "block_size", 1), bool(deflation), progress, context, vtk)


def _coordinates(value, name, per_item=None):
    """A flat list of finite floats from a sequence or array (None: empty), `per_item` numbers each."""
    if value is None:
        return []
    try:
        given = np.asarray(value)
        array = np.asarray(given, dtype=float) if given.dtype.kind in "iuf" else None
    except (TypeError, ValueError):
        array = None
    if array is None or not np.all(np.isfinite(array)) or (per_item and array.size % per_item):
        raise _core.InvalidArgument(f"{name} takes finite numbers in metres, not {value!r}")
    return [float(v) for v in array.ravel()]


def wave(vp, vs, rho, *, dx, steps, dt=None, source=None, source_kind="explosion", force=None, freq=15.0,
         receivers=None, absorbing=20, dtype="float32", devices=None, halo_steps=None, split="measured",
         progress=None, context=None, vtk=None):
    """Elastic waves (2D P-SV or 3D) by explicit FEM on the device, as `ziggurat wave` runs them;
    returns (seismograms, report).

    vp, vs, rho: the model, one value a cell (m/s, m/s, kg/m^3), arrays of shape (nz - 1, nx - 1)
        (2D, x right, z down) or (nz - 1, ny - 1, nx - 1) (3D); a scalar takes the others' shape.
    dx: the node spacing (m); steps: time steps; dt: the time step (s), default 0.9 of the
        stability limit (a larger one is refused with the limit named).
    source: (x, z) or (x, y, z) in metres, default the centre of the top third; source_kind:
        "explosion" or "force" (force: (fx, fz) or (fx, fy, fz), default straight down); freq: the
        Ricker wavelet's peak frequency (Hz).
    receivers: (r, dims) coordinates in metres (at least one), default every tenth surface node.
        absorbing: the sponge's cells on every side but the free top.
    dtype: "float32" (default) or "float64".
    devices: several devices of this process, a selection text ("gpu", "0/1"); the vector is
        split into blocks with halos exchanged every halo_steps steps (default the cost model's),
        shares by measured copy bandwidth (split="measured") or "equal". Every split gives the
        bits of one device.
    progress: called every few hundred steps with a dict (step, steps, time_s); an exception it
        raises stops the run, as Ctrl-C does.
    vtk: also write the last step's displacement for ParaView: NAME.vti (the point array
        "displacement", ux, uz or ux, uy, uz a node, spacing dx), as each of `ziggurat wave --vtk`'s
        snapshots is.

    seismograms: (receivers, steps, dims), every component of each receiver at every step (no
    copy). report: the dict `ziggurat wave --json` prints (device, devices, halo_steps, grid, dx_m,
    dt_s, dt_limit_s, source, receivers, time_s, nodes_per_s, peak_amplitude).
    """
    try:
        given = [np.asarray(a) for a in (vp, vs, rho)]
        for array, what in zip(given, ("vp", "vs", "rho")):
            _real_dtype(array.dtype, what)  # complex refused: its imaginary part would be dropped
        arrays = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in given))
    except ValueError as error:
        raise _core.InvalidArgument(f"vp, vs and rho must have one shape (cells): {error}") from None
    except TypeError:
        raise _core.InvalidArgument("vp, vs and rho hold real numbers, one a cell") from None
    if arrays[0].ndim not in (2, 3):
        raise _core.InvalidArgument("vp, vs and rho are cells of shape (nz - 1, nx - 1) or (nz - 1, ny - 1, nx - 1)")
    dims = arrays[0].ndim
    dtype = _real_dtype(dtype, "dtype")
    if not isinstance(source_kind, str) or not isinstance(split, str):
        raise _core.InvalidArgument("source_kind and split are names (text)")
    if progress is not None and not callable(progress):
        raise _core.InvalidArgument("progress must be callable (it gets a dict every few hundred steps)")
    if devices is not None and not isinstance(devices, str):
        raise _core.InvalidArgument(f'devices is a selection text ("gpu", "0/1"), not {devices!r}')
    point = _coordinates(source, "source")
    if point and len(point) != dims:
        raise _core.InvalidArgument(f"source takes {dims} coordinates in metres, not {source!r}")
    vtk = _checks.vtk_path(vtk, (".vti",))
    places = _coordinates(receivers, "receivers", dims)
    if receivers is not None and not places:
        raise _core.InvalidArgument("receivers holds no receiver: give at least one, or None for the default line")
    return _core.wave(*(np.ascontiguousarray(a) for a in arrays), _checks.number(dx, "dx", positive=True),
                      _checks.count(steps, "steps", 1),
                      _checks.tolerance(dt, "dt"), point, source_kind, _coordinates(force, "force"),
                      _checks.tolerance(freq, "freq"), places,
                      _checks.count(absorbing, "absorbing"), dtype.name, devices,
                      _checks.optional_count(halo_steps, "halo_steps") or 0, split, progress, context, vtk)
