#!/usr/bin/env python3
"""The peers of `ziggurat-bench heat`'s in-device kernels (method notes, section 1), measured on
the same GPU:
  cupy   the explicit heat step as a GPU user would write it: one naive CUDA kernel a step
         (cupy.RawKernel), one thread a node, every neighbour read from global memory;
  ebisu  EBISU (Zhang et al., "Revisiting Temporal Blocking Stencil Optimizations", ICS 2023,
         neozhang307/EBISU-ICS23), the temporally blocked state of the art: its 2D five-point
         (2d5pt) and 3D seven-point (3d7pt) star stencils, built here with nvcc once.

The step is ziggurat's (include/ziggurat/ops/heat_scheme.hpp): on interior nodes
  U' = A * (((((U[x-1] + U[x+1]) + U[y-1]) + U[y+1]) + U[z-1]) + U[z+1]) + B * U,
B = 1 - 2 dims A, A and B rounded to the element type once, no fused multiply-add; boundary
nodes keep their values. EBISU's stencils weigh each neighbour with a coefficient of its own
(2D: 12/118 east and west, 5/118 north and south, 15/118 the centre), not the heat step's: the
same loads and stores a step, a few more flops.

Usage:
  heat_peers.py FOLDER    how bench/src/bench_heat.cpp runs it (through run_peer_script): FOLDER
                          holds request.json {"extents": [W, H(, D)] (fastest axis first),
                          "dtype": "float32" | "float64", "steps": N, "alpha": A,
                          "peers": ["cupy", "ebisu"]}
  heat_peers.py selftest  the NumPy step against a loop over the nodes and the slowest mode's exact
                          decay, the CuPy kernel against the NumPy step (where CuPy is), and the
                          reader of EBISU's output on its printf format

FOLDER answers one JSON line on stdout, an entry for each peer asked: {"seconds_per_step",
"extents" (the grid it ran), "interior_nodes" (of that grid), "note"}, or {"unavailable":
"reason"}; it exits 0 either way. CuPy's time is the best of three rounds of N steps after a
warm-up round (CUDA events). EBISU's is the best of three runs of its program, each timing its
launches with CUDA events; N is rounded up to a multiple of its depth (steps a launch, compiled
in), and the grid is cut down where EBISU cannot run it (its grid of blocks must fit on the
device at once), as the note says.

EBISU's source comes from $ZIGGURAT_EBISU_SOURCE, else .device/peers/ebisu in the working folder
(scripts/prepare-device.sh exports it there); its programs are built once into
$ZIGGURAT_EBISU_BUILD, else peers/ebisu in ziggurat's cache folder ($ZIGGURAT_CACHE_DIR, else
$XDG_CACHE_HOME/ziggurat, else ~/.cache/ziggurat), for the GPU present ($ZIGGURAT_EBISU_ARCH,
default "native"). Its source is used as published, but for one line: its cuda_common.cuh stops
the build for any architecture but sm_60, sm_70 and sm_80, and sm_90 gets sm_80's branch (which
only sets the number it prints as "ptx").

selftest prints {"selftest": "passed" | "failed", ...} and exits 1 on a failure.
"""

import hashlib
import json
import math
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

PEERS = ("cupy", "ebisu")


class Unavailable(Exception):
    """Why a peer cannot run, as a sentence."""


# The scheme --------------------------------------------------------------------------------

def coefficients(alpha, dims, dtype):
    """A and B, each rounded to the element type once (heat_coefficients)."""
    return dtype.type(alpha), dtype.type(1.0 - 2.0 * dims * alpha)


def interior_nodes(extents):
    return math.prod(e - 2 for e in extents)


def numpy_step(u, a, b):
    """One step of u (NumPy axes slowest first) into a new array, the neighbours added x-1, x+1,
    y-1, y+1, z-1, z+1."""
    inner = (slice(1, -1),) * u.ndim
    total = None
    for axis in reversed(range(u.ndim)):  # x is NumPy's last axis
        for shift in (-1, 1):
            index = list(inner)
            index[axis] = slice(1 + shift, u.shape[axis] - 1 + shift)
            total = u[tuple(index)] if total is None else total + u[tuple(index)]
    v = u.copy()
    v[inner] = a * total + b * u[inner]
    return v


def loop_step(u, a, b):
    """The same step node by node over the flat array with ziggurat's strides (the reference of
    the reference)."""
    extents = u.shape[::-1]
    strides = [math.prod(extents[:axis]) for axis in range(len(extents))]
    flat, out = u.reshape(-1), u.copy().reshape(-1)
    for node in np.ndindex(*[e - 2 for e in extents]):
        c = sum((i + 1) * s for i, s in zip(node, strides))
        total = flat[c - 1] + flat[c + 1]
        for s in strides[1:]:
            total = total + flat[c - s]
            total = total + flat[c + s]
        out[c] = a * total + b * flat[c]
    return out.reshape(u.shape)


def mode_field(extents, xp, dtype):
    """The slowest mode (heat_mode_field): the product of sin(pi i / (E-1)), zero on the boundary;
    `xp` is numpy or cupy."""
    u = None
    for e in reversed(extents):  # slowest first
        s = xp.sin(xp.pi * xp.arange(e, dtype=dtype) / dtype.type(e - 1)).astype(dtype)
        s[0] = s[-1] = 0
        u = s if u is None else u[..., None] * s
    return u


def mode_decay(extents, alpha):
    """The slowest mode's factor a step (heat_mode_decay)."""
    return 1 - 2 * len(extents) * alpha + 2 * alpha * sum(math.cos(math.pi / (e - 1)) for e in extents)


# CuPy: the naive kernel --------------------------------------------------------------------

KERNELS = r"""
typedef REAL real;
// One thread a node (x, y) = (thread index + 1); boundary nodes are never written.
extern "C" __global__ void heat2d(const real* __restrict__ u, real* __restrict__ v, int nx, int ny, real a, real b) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
  const int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (x >= nx - 1 || y >= ny - 1) return;
  const size_t c = (size_t)y * nx + x;
  v[c] = a * (((u[c - 1] + u[c + 1]) + u[c - nx]) + u[c + nx]) + b * u[c];
}
// The same with z = block index z + 1.
extern "C" __global__ void heat3d(const real* __restrict__ u, real* __restrict__ v, int nx, int ny, int nz, real a,
                                  real b) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
  const int y = blockIdx.y * blockDim.y + threadIdx.y + 1;
  const int z = blockIdx.z + 1;
  if (x >= nx - 1 || y >= ny - 1) return;
  const size_t plane = (size_t)nx * ny;
  const size_t c = (size_t)z * plane + (size_t)y * nx + x;
  v[c] = a * (((((u[c - 1] + u[c + 1]) + u[c - nx]) + u[c + nx]) + u[c - plane]) + u[c + plane]) + b * u[c];
}
"""

BLOCK = (32, 8, 1)


def cupy_stepper(cupy, extents, dtype, alpha):
    """step(u, v): one launch of the naive kernel computing v from u. No contraction into fused
    multiply-add (--fmad=false), so that it rounds as ziggurat's kernels and the NumPy step do."""
    source = KERNELS.replace("REAL", "float" if dtype == np.float32 else "double", 1)
    kernel = cupy.RawKernel(source, f"heat{len(extents)}d", options=("--fmad=false",))
    a, b = coefficients(alpha, len(extents), dtype)
    nx, ny = extents[0], extents[1]
    grid = (-(-(nx - 2) // BLOCK[0]), -(-(ny - 2) // BLOCK[1]), extents[2] - 2 if len(extents) == 3 else 1)
    sizes = tuple(np.int32(e) for e in extents)
    return lambda u, v: kernel(grid, BLOCK, (u, v, *sizes, a, b))


def cupy_peer(request):
    try:
        import cupy
    except ImportError as error:
        raise Unavailable(f"CuPy is missing ({error})") from None
    extents, dtype, steps = request["extents"], np.dtype(request["dtype"]), int(request["steps"])
    try:
        step = cupy_stepper(cupy, extents, dtype, float(request["alpha"]))
        u = mode_field(extents, cupy, dtype)
        v = u.copy()  # both hold the boundary
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        best = math.inf
        for round_ in range(4):  # a warm-up (which also compiles), then three timed
            start.record()
            for _ in range(steps):
                step(u, v)
                u, v = v, u
            stop.record()
            stop.synchronize()
            if round_ > 0:
                best = min(best, cupy.cuda.get_elapsed_time(start, stop) * 1e-3 / steps)
    except Exception as error:  # noqa: BLE001 - a peer that fails answers why
        text = str(error)
        raise Unavailable(("out of memory: " if "memory" in text.lower() else "") + text) from None
    finally:
        u = v = None
        cupy.get_default_memory_pool().free_all_blocks()  # the device memory back for EBISU's runs
    return {"seconds_per_step": best, "extents": extents, "interior_nodes": interior_nodes(extents),
            "note": f"CuPy {cupy.__version__} RawKernel, one thread a node, blocks {BLOCK[0]}x{BLOCK[1]}, "
                    f"one step a launch, {dtype.name}"}


# EBISU -------------------------------------------------------------------------------------

# dims: (folder, stencil, the kernel's source, the driver, the CPU reference's sources).
EBISU_STENCILS = {
    2: ("2dstencil", "2d5pt", "jacobi-temporal-traditional.cu", "jacobi-2d.cu", "jacobi.driver.cpp",
        ("jacobi_gold.cpp", "jacobi_gold_gen.cpp")),
    3: ("3dstencil", "3d7pt", "j3d-temporal.cu", "j3d.cu", "j3d.driver.cpp", ("3d7pt_gold.cpp", "3d7pt_gold_gen.cpp")),
}
EBISU_ARCH_LINE = "#if __CUDA_ARCH__==800"  # its cuda_common.cuh: #error for any other architecture
# Its 3D driver's runTest() (a double) falls off its end when the check is off, which g++ turns
# into a trap (the 3D program stopped with SIGILL on an H100): it returns 0 there instead.
EBISU_3D_RUNTEST_END = "  delete[] output_gold;\n}\n\nint main("
RUNS = 3


def ebisu_source():
    return pathlib.Path(os.environ.get("ZIGGURAT_EBISU_SOURCE") or ".device/peers/ebisu")


def ebisu_build_root():
    if os.environ.get("ZIGGURAT_EBISU_BUILD"):
        return pathlib.Path(os.environ["ZIGGURAT_EBISU_BUILD"])
    for variable, below in (("ZIGGURAT_CACHE_DIR", ()), ("XDG_CACHE_HOME", ("ziggurat",)),
                            ("HOME", (".cache", "ziggurat"))):
        if os.environ.get(variable):
            return pathlib.Path(os.environ[variable], *below, "peers", "ebisu")
    return pathlib.Path(tempfile.gettempdir(), "ziggurat-peers", "ebisu")


def last_error_line(text):
    lines = [line for line in text.splitlines() if line.strip()]
    for mark in ("error:", "error", "fatal"):  # the compiler's message first, not its excerpt of the source
        marked = [line for line in lines if mark in line.lower()]
        if marked:
            return marked[-1].strip()
    return (lines or ["no output"])[-1].strip()


def build_ebisu(dims):
    """The path of EBISU's program for `dims`, built on first use; Unavailable with why not."""
    source = ebisu_source()
    folder, stencil, kernel, driver, main, golds = EBISU_STENCILS[dims]
    if not (source / folder / stencil / "config.cuh").is_file():
        raise Unavailable(f"no EBISU source at {source.resolve()} (scripts/prepare-device.sh exports it there; "
                          "or set ZIGGURAT_EBISU_SOURCE)")
    nvcc = shutil.which("nvcc") or shutil.which("/usr/local/cuda/bin/nvcc")
    if not nvcc:
        raise Unavailable("no nvcc to build EBISU (not on PATH nor in /usr/local/cuda/bin)")
    arch = os.environ.get("ZIGGURAT_EBISU_ARCH") or "native"
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    digest = hashlib.sha256(f"{arch}\n{version}".encode())
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes())
    build = ebisu_build_root() / digest.hexdigest()[:16]
    program = build / f"{stencil}.exe"
    if program.is_file():
        return program
    ebisu_build_root().mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="build-", dir=ebisu_build_root()))
    try:
        shutil.copytree(source, work / "src")
        common = work / "src" / folder / "common" / "cuda_common.cuh"
        common.write_text(common.read_text().replace(EBISU_ARCH_LINE, "#if __CUDA_ARCH__>=800"))
        if dims == 3:
            driver_source = work / "src" / folder / main
            text = driver_source.read_text()
            if EBISU_3D_RUNTEST_END not in text:
                raise Unavailable(f"EBISU's {main} is not the one this peer patches (no end of runTest found)")
            driver_source.write_text(text.replace(EBISU_3D_RUNTEST_END,
                                                  "  delete[] output_gold;\n  return 0;\n}\n\nint main("))
        top, here = work / "src" / folder, work / "src" / folder / stencil
        # As its CMakeLists: the C++ files by the host compiler (nvcc would define __NVCC__ and
        # expose CUDA types it does not include), the CUDA files relocatable, the flags it gives.
        flags = ["-D_TIMER_", "-DEBISU", f"-I{here}"]
        objects = []
        for cpp in [top / main] + [here / gold for gold in golds]:
            objects.append(work / (cpp.stem + ".o"))
            run_build(["g++", "-std=c++14", *flags, "-c", str(cpp), "-o", str(objects[-1])])
        run_build([nvcc, "-std=c++17", f"-arch={arch}", "-rdc=true", *flags, str(top / driver), str(top / kernel),
                   *map(str, objects), "-o", str(work / program.name)])
        build.mkdir(parents=True, exist_ok=True)
        os.replace(work / program.name, program)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return program


def run_build(command):
    print(" ".join(command), file=sys.stderr)
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except FileNotFoundError:
        raise Unavailable(f"no {command[0]} to build EBISU") from None
    if done.returncode != 0:
        raise Unavailable(f"EBISU's build failed ({pathlib.Path(command[0]).name}): "
                          f"{last_error_line(done.stderr + done.stdout)}")


def parse_ebisu(text, dims):
    """EBISU's output (its PrintHelper, not verbose): one tab-separated line, 2D:
    ptx words width_x width_y iteration depth bdim valid_bdim <gx,gy,gz> blocks/SM/asked
    shared_KB/of range/asked ms GCells/s; 3D: ptx words width_x width_y height iteration depth
    bdim ilp <gx,gy,gz> ... the same. Also its check's "[Test] RMS Error : e" line. Unavailable
    when a CUDA call failed or no result line is there."""
    failures = [line.strip() for line in text.splitlines() if line.startswith("Cuda failure")]
    if failures:
        raise Unavailable(f"EBISU: {failures[0]}")
    result = None
    for line in text.splitlines():
        fields = line.split()
        grid = next((i for i, f in enumerate(fields) if re.fullmatch(r"<\d+,\d+,\d+>", f)), None)
        if grid is None or grid != 6 + dims or len(fields) < grid + 6:
            continue
        numbers = [int(f) for f in fields[:grid]]
        result = {"extents": numbers[2:2 + dims], "steps": numbers[2 + dims], "depth": numbers[3 + dims],
                  "block": numbers[4 + dims], "valid_or_ilp": numbers[5 + dims],
                  "grid": [int(g) for g in fields[grid][1:-1].split(",")],
                  "blocks_per_sm": int(fields[grid + 1].split("/")[1]),
                  "ms": float(fields[grid + 4]), "gcells": float(fields[grid + 5])}
    if result is None:
        raise Unavailable("EBISU printed no result (it returns silently when its grid cannot launch)")
    check = re.search(r"\[Test\] RMS Error : (\S+)", text)
    if check:
        result["rms_error"] = float(check.group(1))
    return result


def run_ebisu(program, dims, extents, steps, dtype, check=False):
    size = [extents[1], extents[0]] if dims == 2 else list(extents)  # 2D takes height first
    command = [str(program), *map(str, size), f"--iter={steps}"] + (["--fp32"] if dtype == np.float32 else [])
    done = subprocess.run(command + (["--check"] if check else []), capture_output=True, text=True, timeout=1800)
    try:
        return parse_ebisu(done.stdout, dims)
    except Unavailable as why:
        if done.returncode == 0:
            raise
        raise Unavailable(f"{why}; exit status {done.returncode}: {last_error_line(done.stderr)}") from None


def ebisu_fit(program, dims, extents, dtype):
    """The probe run, the grid EBISU runs for `extents`, and why it is smaller where it is. Its
    grid of blocks must be resident at once (one wave; the 3D launch is cooperative), so a small
    probe run tells how many blocks fit (SMs x blocks a SM) and what each block covers."""
    if dims == 2:
        probe = run_ebisu(program, 2, [64, 1024], 1, dtype)  # one column of blocks: <1, all, 1>
        most = probe["valid_or_ilp"] * probe["grid"][1]  # the valid width of a block x the blocks
        fitted = [min(extents[0], most), extents[1]]
        why = f"at most {most} columns, a block a {probe['valid_or_ilp']}-column strip"
    else:
        probe = run_ebisu(program, 3, [64, 32, 4096], 1, dtype)  # <64 / tile x, 32 / tile y, the rest>
        gx, gy, gz = probe["grid"]
        if gx == 0 or gy == 0:
            raise Unavailable(f"EBISU's probe found no block in a 64x32 plane (grid {probe['grid']})")
        tx, ty, most = 64 // gx, 32 // gy, gx * gy * gz  # its tile, the blocks that fit
        nx = min(extents[0] - extents[0] % tx, tx * most)
        ny = min(extents[1] - extents[1] % ty, ty * max(1, most // max(1, nx // tx)))
        if nx < tx or ny < ty:
            raise Unavailable(f"the grid is smaller than EBISU's {tx}x{ty} tile")
        fitted = [nx, ny, extents[2]]
        if extents[2] < 3 * max(1, most // ((nx // tx) * (ny // ty))):
            raise Unavailable("the grid is too shallow for EBISU's blocks along z")
        why = f"whole {tx}x{ty} tiles, at most {most} in a plane"
    if math.prod(fitted) >= 2 ** 31:
        raise Unavailable(f"EBISU indexes with int: {'x'.join(map(str, fitted))} has 2^31 nodes or more")
    return probe, fitted, "" if fitted == list(extents) else f" (asked {'x'.join(map(str, extents))}; EBISU runs {why})"


def ebisu_peer(request):
    extents, dtype, steps = request["extents"], np.dtype(request["dtype"]), int(request["steps"])
    dims = len(extents)
    program = build_ebisu(dims)
    probe, fitted, cut = ebisu_fit(program, dims, extents, dtype)
    depth = probe["depth"]
    steps = -(-steps // depth) * depth  # it runs whole launches of `depth` steps
    # Its own check against its CPU reference, on a small grid (the build's correctness on this GPU).
    check = run_ebisu(program, dims, [2048, 2048] if dims == 2 else [128, 128, 128], depth, dtype, check=True)
    best = min((run_ebisu(program, dims, fitted, steps, dtype) for _ in range(RUNS)), key=lambda r: r["ms"])
    if not best["ms"] > 0:
        raise Unavailable(f"EBISU measured {best['ms']} ms")
    snapshot = ebisu_source() / "SNAPSHOT"
    origin = snapshot.read_text().strip() if snapshot.is_file() else "EBISU (commit unknown)"
    verdict = "passed" if check.get("rms_error", 1.0) < 1e-5 else "FAILED"
    return {"seconds_per_step": best["ms"] * 1e-3 / steps, "extents": fitted, "interior_nodes": interior_nodes(fitted),
            "note": f"{origin}, {EBISU_STENCILS[dims][1]} with its own coefficients, {depth} steps a launch (compiled "
                    f"in), {best['block']} threads x <{','.join(map(str, best['grid']))}> blocks, "
                    f"{best['blocks_per_sm']} a SM; {'x'.join(map(str, fitted))}{cut}; best of {RUNS} runs of "
                    f"{steps} steps ({best['gcells']:.1f} GCells/s by its count); its --check {verdict} "
                    f"(RMS error {check.get('rms_error', 'missing')})"}


# The request --------------------------------------------------------------------------------

def answer(folder):
    request = json.loads((folder / "request.json").read_text())
    out = {}
    for name in request.get("peers", PEERS):
        try:
            if name not in PEERS:
                raise Unavailable(f"no peer '{name}' (there are {', '.join(PEERS)})")
            out[name] = (cupy_peer if name == "cupy" else ebisu_peer)(request)
        except Unavailable as why:
            out[name] = {"unavailable": str(why)}
        except Exception as error:  # noqa: BLE001 - a peer that fails answers why
            out[name] = {"unavailable": f"{type(error).__name__}: {error}"}
    return out


# Selftest -----------------------------------------------------------------------------------

# EBISU's result line as its printf formats write it (share/printHelper.hpp, not verbose: "%d\t"
# for ptx, sizeof / 4, the extents, iteration, depth, bdim, valid_bdim; "<%d,%d,%d>\t";
# "%.3f/%d\t"; "%.3f/%.3f\t"; "%d/%d\t"; "%f\t" ms; "%f\t" GCells/s; "\n").
EBISU_2D_SAMPLE = "800\t1\t31416\t32768\t261\t9\t256\t238\t<132,1,1>\t1.000/1\t128.004/227.000\t128/89\t" \
                  "498.123047\t2156.478912\t\n"
EBISU_3D_SAMPLE = "800\t2\t512\t256\t4096\t256\t8\t256\t4\t<16,8,1>\t0.970/1\t153.531/227.000\t17/17\t" \
                  "812.456909\t336.781234\t\n[Test] RMS Error : 3.117e-09\n"
# Its output without a usable driver (captured from the program built here).
EBISU_FAILED_SAMPLE = "Cuda failure 2dstencil/jacobi-2d.cu:117: 'CUDA driver version is insufficient for CUDA " \
                      "runtime version'\n0\t1\t64\t1024\t1\t9\t256\t238\t<1,0,1>\t-nan/100\t128.004/-1.000\t128/89\t" \
                      "0.000000\tinf\t\n"


def check_scheme(failures):
    rng = np.random.default_rng(5)
    for extents in ([7, 6], [6, 5, 7]):
        for dtype in (np.dtype(np.float32), np.dtype(np.float64)):
            a, b = coefficients(0.9 / (2 * len(extents)), len(extents), dtype)
            u = rng.uniform(-1, 1, extents[::-1]).astype(dtype)
            same = np.array_equal(numpy_step(u, a, b), loop_step(u, a, b))
            print(f"NumPy step = loop step, {extents} {dtype.name}: {same}", file=sys.stderr)
            if not same:
                failures.append(f"NumPy step {extents} {dtype.name}")
    extents, alpha, steps = [33, 17, 9], 0.15, 20
    a, b = coefficients(alpha, 3, np.dtype(np.float64))
    u = mode_field(extents, np, np.dtype(np.float64))
    want = u * mode_decay(extents, alpha) ** steps
    for _ in range(steps):
        u = numpy_step(u, a, b)
    error = np.abs(u - want).max()
    print(f"slowest mode after {steps} steps: error {error:.1e}", file=sys.stderr)
    if not error < 1e-13:
        failures.append("slowest mode")


def check_cupy(failures):
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # noqa: BLE001 - no CuPy or no device: the kernel is not checked
        print(f"CuPy kernel not checked: {error}", file=sys.stderr)
        return
    for extents in ([67, 45], [37, 21, 11]):
        for dtype in (np.dtype(np.float32), np.dtype(np.float64)):
            alpha = 0.9 / (2 * len(extents))
            step = cupy_stepper(cupy, extents, dtype, alpha)
            u = np.random.default_rng(3).uniform(-1, 1, extents[::-1]).astype(dtype)
            want, gu = u, cupy.asarray(u)
            gv = gu.copy()
            for _ in range(3):
                want = numpy_step(want, *coefficients(alpha, len(extents), dtype))
                step(gu, gv)
                gu, gv = gv, gu
            same = np.array_equal(cupy.asnumpy(gu), want)
            print(f"CuPy kernel = NumPy step, {extents} {dtype.name}: {same}", file=sys.stderr)
            if not same:
                failures.append(f"CuPy kernel {extents} {dtype.name}")


def check_ebisu_reader(failures):
    two, three = parse_ebisu(EBISU_2D_SAMPLE, 2), parse_ebisu(EBISU_3D_SAMPLE, 3)
    good = (two["extents"] == [31416, 32768] and two["depth"] == 9 and two["grid"] == [132, 1, 1]
            and two["valid_or_ilp"] == 238 and two["ms"] == 498.123047 and "rms_error" not in two
            and three["extents"] == [512, 256, 4096] and three["steps"] == 256 and three["depth"] == 8
            and three["grid"] == [16, 8, 1] and three["blocks_per_sm"] == 1 and three["rms_error"] == 3.117e-09)
    for text, dims, reason in ((EBISU_FAILED_SAMPLE, 2, "driver version is insufficient"),
                               ("the height is too smal\n", 3, "printed no result")):
        try:
            parse_ebisu(text, dims)
            good = False
        except Unavailable as why:
            good = good and reason in str(why)
    print(f"EBISU output reader: {good}", file=sys.stderr)
    if not good:
        failures.append("EBISU output reader")


def check_folder(failures):
    with tempfile.TemporaryDirectory() as folder:
        folder = pathlib.Path(folder)
        request = {"extents": [66, 34], "dtype": "float32", "steps": 4, "alpha": 0.225, "peers": ["cupy", "ebisu", "x"]}
        (folder / "request.json").write_text(json.dumps(request))
        saved = os.environ.get("ZIGGURAT_EBISU_SOURCE")
        os.environ["ZIGGURAT_EBISU_SOURCE"] = str(folder / "none")  # no build here: the missing source
        try:
            got = answer(folder)
        finally:
            os.environ.pop("ZIGGURAT_EBISU_SOURCE")
            if saved is not None:
                os.environ["ZIGGURAT_EBISU_SOURCE"] = saved
    print(f"FOLDER form: {got}", file=sys.stderr)
    cupy = got.get("cupy", {})
    if not ("unavailable" in cupy or (cupy.get("seconds_per_step", 0) > 0 and cupy.get("interior_nodes") == 64 * 32)) \
            or "no EBISU source" not in got.get("ebisu", {}).get("unavailable", "") \
            or "no peer 'x'" not in got.get("x", {}).get("unavailable", ""):
        failures.append("FOLDER form")


def selftest():
    failures = []
    for check in (check_scheme, check_cupy, check_ebisu_reader, check_folder):
        check(failures)
    print(json.dumps({"selftest": "failed" if failures else "passed", "failures": failures}))
    return 1 if failures else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "selftest":
        return selftest()
    if len(argv) == 2 and pathlib.Path(argv[1]).is_dir():
        print(json.dumps(answer(pathlib.Path(argv[1]))))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
