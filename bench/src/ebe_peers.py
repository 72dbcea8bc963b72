#!/usr/bin/env python3
"""The Python peers of `ziggurat-bench ebe` (method notes, section 4): the element-by-element
projection K+ = X^T K X written as a GPU user would write it (PyTorch, else CuPy), and SciPy's
shift-invert eigsh on the assembled matrices.

An element set is two .npy files: the element matrices L, an (m, l, l) float32 or float64 array
(each L_i symmetric), and the DOF indices V, an (m, l) integer array: V[i, a] is the global DOF of
local DOF a of element i, a negative index a constrained DOF (its row and column dropped). A set of
k vectors X is a (v, k) array, row-major (the k vectors interleaved), v the number of DOFs.

Usage:
  ebe_peers.py project  --matrices L.npy --indices V.npy --vectors X.npy [--repeat N]
                        [--device cuda|cpu] [--precision float|double] [--backend B]
                        [--batch-elements B] [--out KP.npy]
  ebe_peers.py eigsh    --matrices K.npy --mass M.npy --indices V.npy --modes p [--dofs v]
                        [--timeout S]
  ebe_peers.py assemble --matrices L.npy --indices V.npy --out K.npz [--dofs v]
  ebe_peers.py selftest
  ebe_peers.py FOLDER   (how bench/src/bench_ebe.cpp runs it, through run_peer_script)

Every subcommand but selftest prints one JSON line on stdout and exits with status 0 whenever it
answers, whatever the answer: a peer that cannot run (no module, no CUDA device, out of memory, bad
input, any exception) answers {"unavailable": "reason"} and never has a "seconds" field, which the
caller takes as the sign of a result. A usage error exits with status 2 (argparse).

project: K+ = sum_i X_i^T L_i X_i (k x k), X_i = the rows V_i of X (zero rows for negative
  indices). What runs, in the precision asked for (default: that of L):
    1. upload (timed once, "upload_seconds", not part of "seconds"): L, V as int64 with every
       negative index replaced by v, and X to the device;
    2. each timed run: Xp = X with a zero row appended (row v, where the negative indices point),
       then for each batch of B elements: Xg = Xp[V_batch] (B, l, k), Y = bmm(L_batch, Xg)
       (B, l, k), K+ += Xg^T Y with both flattened to (B l, k) -- one GEMM that is the bmm of
       Xg_i^T Y_i and its sum over the batch in one, without a (B, k, k) temporary; then K+ is
       downloaded to the host (a run ends with the result on the host, as ziggurat's does).
  B (--batch-elements, 0 = automatic) makes the batch's temporaries Xg and Y (2 B l k values) fit
  in a quarter of the device memory free after the upload (on the CPU: in 128 MiB). Backends
  (--backend auto picks the first that works): --device cuda: PyTorch ("torch-bmm", torch.bmm and
  torch.mm), else CuPy ("cupy-matmul", cupy.matmul); --device cpu: PyTorch on the CPU, else NumPy
  ("numpy-matmul", numpy.matmul). GPU times are wall times between synchronisations of the device;
  "seconds" is the best of --repeat timed runs after one untimed run (warm-up). PyTorch runs with
  its defaults (no TF32 in matmul unless the environment turns it on).
  Answer: {"peer", "backend_version", "device", "precision", "elements", "element_size", "dofs",
    "k", "batch_elements", "batches", "repeat", "seconds", "median_seconds", "upload_seconds",
    "flops" (2 m (l^2 k + l k^2), the multiply-adds this route performs, the full k x k),
    "result" (K+ as k lists of k numbers; with --out, "result_file" instead: K+ saved there as a
    (k, k) float64 .npy)}.

eigsh: K and M assembled (below), then scipy.sparse.linalg.eigsh(K, k=p, M=M, sigma=0,
  which="LM"): shift-invert about 0, K factorised by SuperLU; ARPACK to machine precision
  (tol = 0). Always in float64, whatever the files hold. With --timeout S, eigsh runs in a child
  process (multiprocessing, forked where the platform can) that is killed after S seconds.
  Answer: {"peer": "scipy-eigsh", "modes", "dofs", "nnz" (of K), "mass_nnz", "assembly_seconds"
    (both matrices), "seconds" (eigsh alone, timed inside the child), "eigenvalues" (ascending),
    "frequencies_hz" (sqrt(lambda) / (2 pi), 0 for a negative lambda)}; past the timeout
    {"peer", "timeout": S, "dofs", "nnz", "assembly_seconds"}; out of memory (a MemoryError, or
    the child killed by a signal) {"unavailable": "out of memory ..."}.

assemble: K = sum_i P_i^T L_i P_i as a scipy.sparse CSR matrix (duplicates summed, sorted
  columns, entries with a negative row or column index dropped; v = the largest index + 1 unless
  --dofs), saved with scipy.sparse.save_npz. Answer: {"dofs", "nnz", "assembly_seconds", "out"}.

FOLDER (written by bench/src/bench_ebe.cpp) holds request.json, {"command": "project" | "eigsh" |
  "assemble", and the options above by name: "repeat", "device", "precision", "backend",
  "batch_elements", "modes", "dofs", "timeout"}, and the files under fixed names: project L.npy,
  V.npy, X.npy; eigsh K.npy, M.npy, V.npy; assemble L.npy, V.npy (writes K.npz there). The answer
  is the same as the subcommand's; project always answers "result" as a list.

selftest: a small random model (a triangulated 2-D grid, 2 DOFs a node, l = 6, one edge's DOFs
  constrained, the free DOFs numbered at random) checked against dense references in float64:
  project on every backend present (NumPy always; PyTorch and CuPy where importable, CUDA where a
  device is), in batches and whole, against X^T K X (relative 1e-12 in double, 1e-4 in float);
  eigsh against scipy.linalg.eigh(K, M) (relative 1e-8); assemble against the dense K; the
  command-line and FOLDER forms, the timeout and the failure answers. Prints a line per check on
  stderr and {"selftest": "passed" | "failed", "checks", "failures"} on stdout; exits 1 on any
  failure.

Only the standard library, NumPy and SciPy are needed; PyTorch and CuPy are used where present.
"""

import argparse
import json
import math
import multiprocessing
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

CPU_BATCH_BYTES = 128 << 20  # the budget of a batch's temporaries on the CPU


class Unavailable(Exception):
    """The peer cannot answer with a result; the message says why."""


def answer(fields):
    """Prints the answer, one JSON line. A NaN or infinity makes it an "unavailable" answer."""
    try:
        text = json.dumps(fields, allow_nan=False)
    except ValueError:
        text = json.dumps({"unavailable": "the result holds a NaN or an infinity"})
    print(text, flush=True)


def error_text(error):
    return f"{type(error).__name__}: {error}"


def is_out_of_memory(error):
    """MemoryError, torch.cuda.OutOfMemoryError, cupy's OutOfMemoryError, or a message saying so."""
    return isinstance(error, MemoryError) or "OutOfMemory" in type(error).__name__ or \
        "out of memory" in str(error).lower()


def failure_text(error, who=""):
    """Why `who` failed, beginning "out of memory" for a memory error."""
    if is_out_of_memory(error):
        return f"out of memory{' in ' + who if who else ''} ({error_text(error)})"
    return f"{who + ': ' if who else ''}{error_text(error)}"


def cpu_name():
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "CPU"


# ---- element sets ----

def load_elements(numpy, matrices_path, indices_path):
    """L (m, l, l) and V (m, l) from their files, shapes checked; Unavailable names the problem."""
    matrices = numpy.load(matrices_path)
    indices = numpy.load(indices_path)
    if matrices.ndim != 3 or matrices.shape[1] != matrices.shape[2]:
        raise Unavailable(f"bad input: {matrices_path} has shape {matrices.shape}, expected (m, l, l)")
    if indices.ndim != 2 or indices.shape != matrices.shape[:2]:
        raise Unavailable(f"bad input: {indices_path} has shape {indices.shape}, expected (m, l) = "
                          f"{matrices.shape[:2]}")
    if not numpy.issubdtype(indices.dtype, numpy.integer):
        raise Unavailable(f"bad input: {indices_path} holds {indices.dtype}, expected integers")
    if not numpy.issubdtype(matrices.dtype, numpy.floating):
        raise Unavailable(f"bad input: {matrices_path} holds {matrices.dtype}, expected float32 or float64")
    return matrices, indices


def dof_count(numpy, indices, dofs=None):
    """v: `dofs` when given (every index must be below it), else the largest index + 1."""
    largest = int(indices.max()) if indices.size else -1
    if dofs is None or dofs <= 0:
        return largest + 1
    if largest >= dofs:
        raise Unavailable(f"bad input: an index is {largest}, not below the {dofs} DOFs given")
    return int(dofs)


def assemble(numpy, scipy_sparse, matrices, indices, dofs):
    """sum_i P_i^T L_i P_i as CSR (dofs x dofs, float64, duplicates summed, sorted columns);
    entries with a negative row or column index dropped."""
    l = indices.shape[1]
    index = numpy.int32 if dofs < 2**31 else numpy.int64
    v = indices.astype(index, copy=False)
    rows = numpy.broadcast_to(v[:, :, None], (v.shape[0], l, l))
    cols = numpy.broadcast_to(v[:, None, :], (v.shape[0], l, l))
    keep = (rows >= 0) & (cols >= 0)
    values = numpy.asarray(matrices[keep], dtype=numpy.float64)
    matrix = scipy_sparse.coo_matrix((values, (rows[keep], cols[keep])), shape=(dofs, dofs)).tocsr()  # sums duplicates
    matrix.sum_duplicates()  # and sorts the columns of each row
    return matrix


# ---- project ----

class Backend:
    """One library's arrays on one device: upload, the timed projection, synchronisation."""

    peer = ""

    def __init__(self, precision):
        self.precision = precision

    def synchronize(self):
        pass


class TorchBackend(Backend):
    peer = "torch-bmm"

    def __init__(self, precision, device):
        super().__init__(precision)
        import torch
        self.torch = torch
        self.version = f"PyTorch {torch.__version__}"
        if device == "cuda":
            if not torch.cuda.is_available():
                raise Unavailable(f"PyTorch {torch.__version__} sees no CUDA device "
                                  "(torch.cuda.is_available() is False)")
            self.device = torch.device("cuda")
            self.device_name = torch.cuda.get_device_name(self.device)
        else:
            self.device = torch.device("cpu")
            self.device_name = f"{cpu_name()} (PyTorch, {torch.get_num_threads()} threads)"
        self.dtype = torch.float32 if precision == "float" else torch.float64

    def synchronize(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)

    def free_bytes(self):
        if self.device.type == "cuda":
            return self.torch.cuda.mem_get_info(self.device)[0]
        return CPU_BATCH_BYTES * 4

    def upload(self, numpy, matrices, indices, x):
        torch = self.torch
        self.matrices = torch.as_tensor(matrices).to(self.device, self.dtype)
        self.indices = torch.tensor(indices, dtype=torch.int64, device=self.device)  # a copy, never a view
        self.indices[self.indices < 0] = x.shape[0]
        self.x = torch.as_tensor(x).to(self.device, self.dtype)

    def project(self, batch):
        torch = self.torch
        k = self.x.shape[1]
        padded = torch.cat([self.x, torch.zeros((1, k), dtype=self.dtype, device=self.device)])
        total = torch.zeros((k, k), dtype=self.dtype, device=self.device)
        for start in range(0, self.matrices.shape[0], batch):
            gathered = padded[self.indices[start:start + batch]]            # (B, l, k)
            y = torch.bmm(self.matrices[start:start + batch], gathered)      # (B, l, k)
            total += gathered.reshape(-1, k).T @ y.reshape(-1, k)
        return total.cpu().numpy()


class CupyBackend(Backend):
    peer = "cupy-matmul"

    def __init__(self, precision, device):
        super().__init__(precision)
        if device != "cuda":
            raise Unavailable("CuPy runs on CUDA devices only")
        import cupy
        self.cupy = cupy
        self.version = f"CuPy {cupy.__version__}"
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except cupy.cuda.runtime.CUDARuntimeError as error:
            raise Unavailable(f"CuPy {cupy.__version__} sees no CUDA device ({error})")
        if count == 0:
            raise Unavailable(f"CuPy {cupy.__version__} sees no CUDA device")
        name = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"]
        self.device_name = name.decode() if isinstance(name, bytes) else str(name)
        self.dtype = cupy.float32 if precision == "float" else cupy.float64

    def synchronize(self):
        self.cupy.cuda.Device().synchronize()

    def free_bytes(self):
        return self.cupy.cuda.runtime.memGetInfo()[0] + self.cupy.get_default_memory_pool().free_bytes()

    def upload(self, numpy, matrices, indices, x):
        cupy = self.cupy
        self.matrices = cupy.asarray(matrices, dtype=self.dtype)
        self.indices = cupy.asarray(indices, dtype=cupy.int64)
        self.indices[self.indices < 0] = x.shape[0]
        self.x = cupy.asarray(x, dtype=self.dtype)

    def project(self, batch):
        cupy = self.cupy
        k = self.x.shape[1]
        padded = cupy.concatenate([self.x, cupy.zeros((1, k), dtype=self.dtype)])
        total = cupy.zeros((k, k), dtype=self.dtype)
        for start in range(0, self.matrices.shape[0], batch):
            gathered = padded[self.indices[start:start + batch]]
            y = cupy.matmul(self.matrices[start:start + batch], gathered)
            total += gathered.reshape(-1, k).T @ y.reshape(-1, k)
        return cupy.asnumpy(total)


class NumpyBackend(Backend):
    peer = "numpy-matmul"

    def __init__(self, precision, device):
        super().__init__(precision)
        if device != "cpu":
            raise Unavailable("NumPy runs on the CPU only")
        import numpy
        self.numpy = numpy
        self.version = f"NumPy {numpy.__version__}"
        self.device_name = f"{cpu_name()} (NumPy)"
        self.dtype = numpy.float32 if precision == "float" else numpy.float64

    def free_bytes(self):
        return CPU_BATCH_BYTES * 4

    def upload(self, numpy, matrices, indices, x):
        self.matrices = numpy.ascontiguousarray(matrices, dtype=self.dtype)
        self.indices = numpy.where(indices < 0, x.shape[0], indices).astype(numpy.int64)
        self.x = numpy.ascontiguousarray(x, dtype=self.dtype)

    def project(self, batch):
        numpy = self.numpy
        k = self.x.shape[1]
        padded = numpy.concatenate([self.x, numpy.zeros((1, k), dtype=self.dtype)])
        total = numpy.zeros((k, k), dtype=self.dtype)
        for start in range(0, self.matrices.shape[0], batch):
            gathered = padded[self.indices[start:start + batch]]
            y = numpy.matmul(self.matrices[start:start + batch], gathered)
            total += gathered.reshape(-1, k).T @ y.reshape(-1, k)
        return total


BACKENDS = {"torch": TorchBackend, "cupy": CupyBackend, "numpy": NumpyBackend}


def choose_backend(name, device, precision):
    """The backend asked for, or with "auto" the first of the device's that works; Unavailable
    with every reason otherwise."""
    if name == "auto":
        names = ["torch", "cupy"] if device == "cuda" else ["torch", "numpy"]
    else:
        names = [name]
    reasons = []
    for candidate in names:
        try:
            return BACKENDS[candidate](precision, device)
        except Unavailable as error:
            reasons.append(str(error))
        except Exception as error:  # ImportError, or a library that cannot load its CUDA parts
            reasons.append(f"{candidate}: {error_text(error)}")
    raise Unavailable(f"no {device} backend: " + "; ".join(reasons))


def project(numpy, matrices, indices, x, repeat=5, device="cuda", precision=None, backend="auto",
            batch_elements=0):
    """The projection on a backend, timed; the answer's fields with "result" a (k, k) float64 array."""
    if x.ndim != 2:
        raise Unavailable(f"bad input: the vectors have shape {x.shape}, expected (v, k)")
    m, l = indices.shape
    v, k = x.shape
    if indices.size and int(indices.max()) >= v:
        raise Unavailable(f"bad input: an index is {int(indices.max())}, but X has only {v} rows")
    if precision is None:
        precision = "float" if matrices.dtype == numpy.float32 else "double"
    peer = choose_backend(backend, device, precision)
    value_bytes = 4 if precision == "float" else 8
    try:
        peer.synchronize()
        start = time.perf_counter()
        peer.upload(numpy, matrices, indices, x)
        peer.synchronize()
        upload_seconds = time.perf_counter() - start
        batch = int(batch_elements) if batch_elements and batch_elements > 0 else \
            max(1, peer.free_bytes() // 4 // (2 * l * k * value_bytes))
        batch = max(1, min(batch, m))
        result = peer.project(batch)  # warm-up: kernels loaded, memory pools filled
        seconds = []
        for _ in range(max(1, int(repeat))):
            peer.synchronize()
            start = time.perf_counter()
            result = peer.project(batch)
            peer.synchronize()
            seconds.append(time.perf_counter() - start)
    except Exception as error:  # out of memory on the device, a backend's own failure
        raise Unavailable(failure_text(error, f"{peer.peer} on {peer.device_name}"))
    return {"peer": peer.peer, "backend_version": peer.version, "device": peer.device_name,
            "precision": precision, "elements": m, "element_size": l, "dofs": v, "k": k,
            "batch_elements": batch, "batches": -(-m // batch), "repeat": len(seconds),
            "seconds": min(seconds), "median_seconds": statistics.median(seconds),
            "upload_seconds": upload_seconds, "flops": 2.0 * m * (l * l * k + l * k * k),
            "result": numpy.asarray(result, dtype=numpy.float64)}


def run_project(matrices_path, indices_path, vectors_path, out=None, **options):
    import numpy
    matrices, indices = load_elements(numpy, matrices_path, indices_path)
    x = numpy.load(vectors_path)
    fields = project(numpy, matrices, indices, x, **options)
    if out:
        numpy.save(out, fields.pop("result"))
        fields["result_file"] = str(out)
    else:
        fields["result"] = fields["result"].tolist()
    return fields


# ---- eigsh ----

def eigsh_values(matrix_k, matrix_m, modes):
    """The eigenvalues of shift-invert eigsh about 0 (ascending) and the seconds eigsh took."""
    import numpy
    import scipy.sparse.linalg
    start = time.perf_counter()
    values = scipy.sparse.linalg.eigsh(matrix_k, k=modes, M=matrix_m, sigma=0, which="LM",
                                       return_eigenvectors=False)
    seconds = time.perf_counter() - start
    return sorted(float(value) for value in numpy.asarray(values)), seconds


def eigsh_child(connection, matrix_k, matrix_m, modes):
    """The child process of a run with a timeout: sends ("done", values, seconds) or ("failed", text)."""
    try:
        values, seconds = eigsh_values(matrix_k, matrix_m, modes)
        connection.send(("done", values, seconds))
    except BaseException as error:  # whatever it is, the parent reports it
        connection.send(("failed", failure_text(error, "scipy-eigsh")))
    finally:
        connection.close()


def eigsh_with_timeout(matrix_k, matrix_m, modes, timeout):
    """eigsh in a child process killed after `timeout` seconds: (values, seconds), or None at the
    timeout; Unavailable when the child fails or dies."""
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=eigsh_child, args=(sender, matrix_k, matrix_m, modes), daemon=True)
    child.start()
    sender.close()  # the child's end only: EOF here once the child is gone
    try:
        if not receiver.poll(timeout):
            return None
        try:
            message = receiver.recv()
        except EOFError:
            child.join()
            code = child.exitcode
            if code is not None and code < 0:
                raise Unavailable(f"out of memory, probably: the eigsh process was killed by signal {-code}")
            raise Unavailable(f"the eigsh process ended with status {code} and no answer")
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receiver.close()
    if message[0] == "failed":
        raise Unavailable(message[1])
    return message[1], message[2]


def run_eigsh(matrices_path, mass_path, indices_path, modes, dofs=None, timeout=None):
    import numpy
    import scipy.sparse
    stiffness, indices = load_elements(numpy, matrices_path, indices_path)
    mass, _ = load_elements(numpy, mass_path, indices_path)
    v = dof_count(numpy, indices, dofs)
    modes = int(modes)
    if not 0 < modes < v:
        raise Unavailable(f"bad input: eigsh needs 0 < modes < dofs, got {modes} modes of {v} DOFs")
    try:
        start = time.perf_counter()
        matrix_k = assemble(numpy, scipy.sparse, stiffness, indices, v)
        matrix_m = assemble(numpy, scipy.sparse, mass, indices, v)
        assembly_seconds = time.perf_counter() - start
    except MemoryError as error:
        raise Unavailable(f"out of memory assembling K and M ({error_text(error)})")
    del stiffness, mass
    fields = {"peer": "scipy-eigsh", "modes": modes, "dofs": v, "nnz": int(matrix_k.nnz),
              "mass_nnz": int(matrix_m.nnz), "assembly_seconds": assembly_seconds}
    if timeout is not None and timeout > 0:
        got = eigsh_with_timeout(matrix_k, matrix_m, modes, timeout)
        if got is None:
            fields["timeout"] = timeout
            return fields
    else:
        try:
            got = eigsh_values(matrix_k, matrix_m, modes)
        except Exception as error:  # SuperLU's singular factor, ARPACK's no convergence, memory
            raise Unavailable(failure_text(error, "scipy-eigsh"))
    values, seconds = got
    fields.update(seconds=seconds, eigenvalues=values,
                  frequencies_hz=[math.sqrt(max(value, 0.0)) / (2 * math.pi) for value in values])
    return fields


# ---- assemble ----

def run_assemble(matrices_path, indices_path, out, dofs=None):
    import numpy
    import scipy.sparse
    matrices, indices = load_elements(numpy, matrices_path, indices_path)
    v = dof_count(numpy, indices, dofs)
    try:
        start = time.perf_counter()
        matrix = assemble(numpy, scipy.sparse, matrices, indices, v)
        seconds = time.perf_counter() - start
    except MemoryError as error:
        raise Unavailable(f"out of memory assembling ({error_text(error)})")
    scipy.sparse.save_npz(out, matrix)
    return {"dofs": v, "nnz": int(matrix.nnz), "assembly_seconds": seconds, "out": str(out)}


# ---- FOLDER, the bench's form ----

def run_folder(folder):
    folder = pathlib.Path(folder)
    request = json.loads((folder / "request.json").read_text())
    command = request.get("command")
    if command == "project":
        return run_project(folder / "L.npy", folder / "V.npy", folder / "X.npy",
                           repeat=int(request.get("repeat", 5)), device=request.get("device", "cuda"),
                           precision=request.get("precision"), backend=request.get("backend", "auto"),
                           batch_elements=int(request.get("batch_elements", 0)))
    if command == "eigsh":
        return run_eigsh(folder / "K.npy", folder / "M.npy", folder / "V.npy", int(request["modes"]),
                         dofs=request.get("dofs"), timeout=request.get("timeout"))
    if command == "assemble":
        return run_assemble(folder / "L.npy", folder / "V.npy", folder / "K.npz", dofs=request.get("dofs"))
    raise Unavailable(f"bad request: unknown command {command!r} in {folder / 'request.json'}")


# ---- selftest ----

def test_model(numpy, nx=12, ny=8, seed=11):
    """A triangulated nx x ny grid of nodes (nx + 1) x (ny + 1), 2 DOFs a node (l = 6), the nodes of
    x = 0 constrained (index -1), the free DOFs numbered at random; random SPD element matrices for
    K and M. Returns (K elements, M elements, V, dofs)."""
    rng = numpy.random.default_rng(seed)
    node = lambda i, j: j * (nx + 1) + i
    free = numpy.array([i > 0 for j in range(ny + 1) for i in range(nx + 1)])
    dofs = 2 * int(free.sum())
    numbers = numpy.full((len(free), 2), -1, dtype=numpy.int64)
    numbers[free] = rng.permutation(dofs).reshape(-1, 2)
    triangles = []
    for j in range(ny):
        for i in range(nx):
            a, b, c, d = node(i, j), node(i + 1, j), node(i + 1, j + 1), node(i, j + 1)
            triangles += [(a, b, c), (a, c, d)]
    indices = numbers[numpy.array(triangles)].reshape(len(triangles), 6).astype(numpy.int32)

    def spd(shift):
        b = rng.uniform(-1, 1, size=(len(triangles), 6, 6))
        return b @ b.transpose(0, 2, 1) / 6 + shift * numpy.eye(6)

    return spd(0.5), spd(2.0), indices, dofs


def dense(numpy, matrices, indices, dofs):
    """The assembled matrix, element by element into a dense array: the reference."""
    k = numpy.zeros((dofs, dofs))
    for matrix, index in zip(matrices, indices):
        for a, row in enumerate(index):
            for b, col in enumerate(index):
                if row >= 0 and col >= 0:
                    k[row, col] += matrix[a, b]
    return k


class Checks:
    def __init__(self):
        self.passed, self.failures = 0, []

    def check(self, name, ok, detail=""):
        print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", file=sys.stderr, flush=True)
        if ok:
            self.passed += 1
        else:
            self.failures.append(f"{name}: {detail}")

    def run(self, name, function):
        try:
            function()
        except Exception as error:  # a crash in a check is its failure
            self.check(name, False, f"raised {error_text(error)}")


def relative_error(numpy, got, want):
    got, want = numpy.asarray(got, dtype=numpy.float64), numpy.asarray(want, dtype=numpy.float64)
    return float(numpy.max(numpy.abs(got - want)) / numpy.max(numpy.abs(want)))


def invoke(*args):
    """This script run as a command: (exit status, its answer's JSON or None, stderr)."""
    done = subprocess.run([sys.executable, os.path.abspath(__file__), *map(str, args)], capture_output=True,
                          text=True, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    try:
        return done.returncode, json.loads(lines[-1]), done.stderr
    except (IndexError, ValueError):
        return done.returncode, None, done.stderr


def selftest():
    import numpy
    import scipy.linalg
    import scipy.sparse
    checks = Checks()
    stiffness, mass, indices, dofs = test_model(numpy)
    k_dense, m_dense = dense(numpy, stiffness, indices, dofs), dense(numpy, mass, indices, dofs)
    rng = numpy.random.default_rng(5)
    x = rng.uniform(-1, 1, size=(dofs, 5))
    want = x.T @ k_dense @ x
    modes = 6
    eigen_want = scipy.linalg.eigh(k_dense, m_dense, eigvals_only=True)[:modes]
    print(f"model: {len(indices)} elements, l = 6, {dofs} DOFs, {int((indices < 0).sum())} constrained "
          f"local DOFs; 5 vectors; {modes} modes", file=sys.stderr)

    # project on every backend present, in batches (7 elements, not a divisor of m) and whole
    backends = [("numpy", "cpu"), ("torch", "cpu"), ("torch", "cuda"), ("cupy", "cuda")]
    for name, device in backends:
        for precision, tolerance in (("double", 1e-12), ("float", 1e-4)):
            try:
                choose_backend(name, device, precision)
            except (Unavailable, ImportError) as error:
                print(f"skip project on {name}/{device}: {error}", file=sys.stderr)
                break
            for batch in (7, 0):
                label = f"project {name}/{device} {precision} batch {batch or 'auto'}"

                def check_project(precision=precision, tolerance=tolerance, batch=batch, label=label):
                    got = project(numpy, stiffness, indices, x, repeat=2, device=device, precision=precision,
                                  backend=name, batch_elements=batch)
                    error = relative_error(numpy, got["result"], want)
                    checks.check(label, error <= tolerance and got["seconds"] > 0,
                                 f"relative error {error:.2e} (limit {tolerance:g}), {got['batches']} batches")
                checks.run(label, check_project)

    # eigsh in process and in a child, against the dense generalised eigenproblem
    def check_eigsh(timeout):
        label = f"eigsh {'in a child' if timeout else 'in process'}"
        with tempfile.TemporaryDirectory() as folder:
            paths = [os.path.join(folder, name) for name in ("K.npy", "M.npy", "V.npy")]
            for path, array in zip(paths, (stiffness, mass, indices)):
                numpy.save(path, array)
            got = run_eigsh(*paths, modes, timeout=timeout)
        error = relative_error(numpy, got["eigenvalues"], eigen_want)
        frequencies = numpy.sqrt(eigen_want) / (2 * numpy.pi)
        ok = error <= 1e-8 and got["dofs"] == dofs and got["nnz"] == numpy.count_nonzero(k_dense) and \
            relative_error(numpy, got["frequencies_hz"], frequencies) <= 1e-8
        checks.check(label, ok, f"relative error {error:.2e} (limit 1e-8), {got['dofs']} DOFs, nnz {got['nnz']}")
    checks.run("eigsh in process", lambda: check_eigsh(None))
    checks.run("eigsh in a child", lambda: check_eigsh(60))

    with tempfile.TemporaryDirectory() as folder:
        path = lambda name: os.path.join(folder, name)
        numpy.save(path("L.npy"), stiffness)
        numpy.save(path("M.npy"), mass)
        numpy.save(path("V.npy"), indices.astype(numpy.int64))
        numpy.save(path("X.npy"), x)

        def check_assemble():
            status, got, _ = invoke("assemble", "--matrices", path("L.npy"), "--indices", path("V.npy"),
                                    "--out", path("K.npz"))
            matrix = scipy.sparse.load_npz(path("K.npz"))
            error = relative_error(numpy, matrix.toarray(), k_dense)  # sums in another order: not bit-equal
            ok = status == 0 and got["nnz"] == matrix.nnz == numpy.count_nonzero(k_dense) and \
                matrix.format == "csr" and matrix.has_sorted_indices and error <= 1e-14
            checks.check("assemble (command line)", ok, f"{matrix.shape}, nnz {matrix.nnz}, relative error {error:.2e}")
        checks.run("assemble (command line)", check_assemble)

        def check_command_line():
            status, got, _ = invoke("project", "--matrices", path("L.npy"), "--indices", path("V.npy"),
                                    "--vectors", path("X.npy"), "--device", "cpu", "--repeat", 2,
                                    "--out", path("KP.npy"))
            error = relative_error(numpy, numpy.load(path("KP.npy")), want)
            checks.check("project (command line, --out)", status == 0 and error <= 1e-12 and "result" not in got,
                         f"{got.get('peer')}, relative error {error:.2e}")
            status, got, _ = invoke("eigsh", "--matrices", path("L.npy"), "--mass", path("M.npy"),
                                    "--indices", path("V.npy"), "--modes", modes, "--timeout", 60)
            error = relative_error(numpy, got["eigenvalues"], eigen_want)
            checks.check("eigsh (command line)", status == 0 and error <= 1e-8, f"relative error {error:.2e}")
        checks.run("command line", check_command_line)

        def check_folder():
            os.link(path("L.npy"), path("K.npy"))  # eigsh's FOLDER names
            request = {"command": "project", "repeat": 1, "device": "cpu"}
            pathlib.Path(path("request.json")).write_text(json.dumps(request))
            status, got, _ = invoke(folder)
            error = relative_error(numpy, got["result"], want)
            checks.check("project (FOLDER)", status == 0 and error <= 1e-12, f"relative error {error:.2e}")
            request = {"command": "eigsh", "modes": modes, "timeout": 60}
            pathlib.Path(path("request.json")).write_text(json.dumps(request))
            status, got, _ = invoke(folder)
            error = relative_error(numpy, got["eigenvalues"], eigen_want)
            checks.check("eigsh (FOLDER)", status == 0 and error <= 1e-8 and got["seconds"] > 0,
                         f"relative error {error:.2e}")
        checks.run("FOLDER", check_folder)

        def check_failures():
            # a timeout no eigsh can meet
            status, got, _ = invoke("eigsh", "--matrices", path("L.npy"), "--mass", path("M.npy"),
                                    "--indices", path("V.npy"), "--modes", modes, "--timeout", 1e-6)
            checks.check("eigsh timeout", status == 0 and got.get("timeout") == 1e-6 and "seconds" not in got,
                         json.dumps(got))
            # more DOFs than the elements touch: K singular, SuperLU refuses
            status, got, _ = invoke("eigsh", "--matrices", path("L.npy"), "--mass", path("M.npy"),
                                    "--indices", path("V.npy"), "--modes", modes, "--dofs", dofs + 3)
            checks.check("eigsh singular K", status == 0 and "unavailable" in got and "seconds" not in got,
                         json.dumps(got))
            # an index beyond X's rows
            numpy.save(path("short.npy"), x[:-1])
            status, got, _ = invoke("project", "--matrices", path("L.npy"), "--indices", path("V.npy"),
                                    "--vectors", path("short.npy"), "--device", "cpu")
            checks.check("project bad input", status == 0 and "bad input" in got.get("unavailable", ""),
                         json.dumps(got))
            # CUDA asked for where there may be none: either a result or "unavailable", never a crash
            status, got, _ = invoke("project", "--matrices", path("L.npy"), "--indices", path("V.npy"),
                                    "--vectors", path("X.npy"), "--repeat", 1)
            ok = status == 0 and got is not None and (
                "unavailable" in got or relative_error(numpy, got["result"], want) <= 1e-12)
            checks.check("project --device cuda answers", ok, json.dumps(got)[:200])
        checks.run("failures", check_failures)

    answer({"selftest": "failed" if checks.failures else "passed", "checks": checks.passed + len(checks.failures),
            "failures": checks.failures})
    return 1 if checks.failures else 0


# ---- command line ----

def parser():
    top = argparse.ArgumentParser(description="The Python peers of `ziggurat-bench ebe` (see the top of this file).")
    commands = top.add_subparsers(dest="command", required=True)

    p = commands.add_parser("project", help="K+ = sum_i X_i^T L_i X_i by batched matrix products")
    p.add_argument("--matrices", required=True, help="element matrices L, (m, l, l) .npy")
    p.add_argument("--indices", required=True, help="DOF indices V, (m, l) integer .npy, negative: constrained")
    p.add_argument("--vectors", required=True, help="X, (v, k) .npy")
    p.add_argument("--repeat", type=int, default=5, help="timed runs, the best counts (default 5)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--precision", choices=("float", "double"), default=None, help="default: that of L")
    p.add_argument("--backend", choices=("auto", "torch", "cupy", "numpy"), default="auto")
    p.add_argument("--batch-elements", type=int, default=0, help="elements a batch (0: automatic)")
    p.add_argument("--out", help="save K+ as a (k, k) float64 .npy instead of answering it")

    e = commands.add_parser("eigsh", help="SciPy's shift-invert eigsh on the assembled K and M")
    e.add_argument("--matrices", required=True, help="stiffness element matrices, (m, l, l) .npy")
    e.add_argument("--mass", required=True, help="mass element matrices, (m, l, l) .npy")
    e.add_argument("--indices", required=True, help="DOF indices, (m, l) integer .npy")
    e.add_argument("--modes", type=int, required=True)
    e.add_argument("--dofs", type=int, default=None, help="v (default: the largest index + 1)")
    e.add_argument("--timeout", type=float, default=None, help="seconds eigsh may take (default: no limit)")

    a = commands.add_parser("assemble", help="assemble one element set into a CSR .npz")
    a.add_argument("--matrices", required=True)
    a.add_argument("--indices", required=True)
    a.add_argument("--out", required=True, help="the .npz (scipy.sparse.save_npz)")
    a.add_argument("--dofs", type=int, default=None)

    commands.add_parser("selftest", help="check every subcommand on a small model against dense references")
    return top


def respond(function):
    """Runs function() and prints its answer; every failure becomes an "unavailable" answer."""
    try:
        fields = function()
    except Unavailable as error:
        fields = {"unavailable": str(error)}
    except ImportError as error:
        fields = {"unavailable": f"a module is missing ({error})"}
    except Exception as error:  # any failure of the peer is an answer, not a crash
        fields = {"unavailable": failure_text(error)}
    answer(fields)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 1 and os.path.isdir(argv[0]):
        return respond(lambda: run_folder(argv[0]))
    arguments = parser().parse_args(argv)
    if arguments.command == "selftest":
        return selftest()
    if arguments.command == "project":
        return respond(lambda: run_project(arguments.matrices, arguments.indices, arguments.vectors, out=arguments.out,
                                           repeat=arguments.repeat, device=arguments.device,
                                           precision=arguments.precision, backend=arguments.backend,
                                           batch_elements=arguments.batch_elements))
    if arguments.command == "eigsh":
        return respond(lambda: run_eigsh(arguments.matrices, arguments.mass, arguments.indices, arguments.modes,
                                         dofs=arguments.dofs, timeout=arguments.timeout))
    return respond(lambda: run_assemble(arguments.matrices, arguments.indices, arguments.out, dofs=arguments.dofs))


if __name__ == "__main__":
    sys.exit(main())
