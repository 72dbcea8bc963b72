#!/usr/bin/env python3
"""The Python peers of `ziggurat-bench solve`: SciPy on the CPU and cuSPARSE (through CuPy) on an
NVIDIA GPU, each solving A x = b with the tolerance and limits ziggurat ran with.

Usage: solve_peers.py FOLDER

FOLDER (written by bench/src/solve_peers.cpp) holds descriptor.json, {"rows", "cols", "nnz",
"dtype": "float32" | "float64", "tolerance", "max_iterations", "restart", "block_size",
"scipy_ilu_limit", "ilu_only": leave out every config but the ILU ones of SciPy and cuSPARSE's bicgstab + ilu0}, and raw arrays in the host's byte order: row_ptr (uint32, rows + 1), col
(uint32, nnz), values (dtype, nnz) and b (dtype, rows).

Prints one JSON line, {"runs": [run, ...]}, a run per config:
  {"peer", "method", "preconditioner", "ran", "why_not", "device", "iterations", "setup_s",
   "solve_s", "x_file", "note"}
Each config that ran wrote its x (dtype, rows values) to FOLDER/x_file: the caller judges every
peer's x by one rule (its true residual and error in double). A config that cannot run (a module,
the GPU or a cuSPARSE function missing, any exception) is "ran": false with why_not, and the
others still run. Every config first solves a small system (warm-up: CuPy's kernels compiled,
cuSPARSE's handle made), then the system once, timed: setup_s is the matrix's upload to the GPU
(timed once, shared by the GPU configs) plus the preconditioner's construction, solve_s the solve
with the upload of b and the download of x; GPU times are wall times between synchronisations of
the device.

The configs, the peers' arithmetic in the system's dtype:
  SciPy     bicgstab + spilu   scipy.sparse.linalg.spilu (SuperLU's ILUTP, not ILU(0): natural
                               column order, fill_factor 1 for about ILU(0)'s storage) in bicgstab
            gmres<m> + spilu   the same factors in gmres(restart = m)
            bicgstab + jacobi  1 / diagonal
            Each is skipped when nnz > scipy_ilu_limit (SuperLU, and any CPU solve, would take too long).
  cuSPARSE  bicgstab + ilu0    cupyx.cusparse.csrilu02 (cuSPARSE's exact ILU(0) of the CSR
                               pattern, with level information) applied by two cuSPARSE triangular
                               solves (SpSM analysed once; csrsm2 where a CUDA 11 CuPy has no SpSM)
                               inside a right-preconditioned BiCGStab written here in CuPy with
                               ziggurat's stopping rule
            gmres<m> + ilu0    cupyx.scipy.sparse.linalg.gmres with that ILU(0) as M
            bicgstab + jacobi  cupyx.scipy.sparse.linalg.bicgstab (CuPy 14 and later) with 1 / diagonal
Each note says how the config's solver decides it has converged.
"""

import inspect
import json
import math
import pathlib
import platform
import sys
import time


def config_names(restart):
    """The (method, preconditioner) pairs of each peer, in the order of the answer."""
    gmres = f"gmres{restart}"
    return {"SciPy": [("bicgstab", "spilu"), (gmres, "spilu"), ("bicgstab", "jacobi")],
            "cuSPARSE": [("bicgstab", "ilu0"), (gmres, "ilu0"), ("bicgstab", "jacobi")]}


def new_run(peer, method, preconditioner, device="", why_not=""):
    return {"peer": peer, "method": method, "preconditioner": preconditioner, "ran": False,
            "why_not": why_not, "device": device, "iterations": 0, "setup_s": 0.0, "solve_s": 0.0,
            "x_file": "", "note": ""}


def not_run(peer, names, why_not, device=""):
    return [new_run(peer, method, preconditioner, device, why_not) for method, preconditioner in names]


def error_text(error):
    return f"{type(error).__name__}: {error}"


class System:
    """A CSR system A x = b on the host: int32 indices where they fit (what cuSPARSE takes), else int64."""

    def __init__(self, numpy, rows, row_ptr, col, values, b):
        """row_ptr and col as uint32 (ziggurat's indices)."""
        fits = int(row_ptr[-1]) < 2**31 and rows < 2**31
        index = numpy.int32 if fits else numpy.int64
        # uint32 below 2^31 has int32's bytes: a view, no copy.
        self.row_ptr = row_ptr.view(index) if fits else row_ptr.astype(index)
        self.col = col.view(index) if fits else col.astype(index)
        self.rows, self.values, self.b, self.dtype = rows, values, b, values.dtype
        self.int32 = fits

    @property
    def nnz(self):
        return self.values.size

    @classmethod
    def load(cls, folder, numpy):
        descriptor = json.loads((folder / "descriptor.json").read_text())
        dtype = numpy.dtype(descriptor["dtype"])
        rows, nnz = int(descriptor["rows"]), int(descriptor["nnz"])

        def array(name, kind, count):
            values = numpy.fromfile(folder / name, dtype=kind)
            if values.size != count:
                raise ValueError(f"{name} holds {values.size} values, expected {count}")
            return values

        system = cls(numpy, rows, array("row_ptr", numpy.uint32, rows + 1), array("col", numpy.uint32, nnz),
                     array("values", dtype, nnz), array("b", dtype, rows))
        return descriptor, system

    @classmethod
    def warm_up(cls, numpy, dtype, rows=1000):
        """A small nonsymmetric, diagonally dominant system: 4 on the diagonal, -2 and -1 beside it."""
        row_ptr, col, values = [0], [], []
        for i in range(rows):
            for j, value in ((i - 1, -2.0), (i, 4.0), (i + 1, -1.0)):
                if 0 <= j < rows:
                    col.append(j)
                    values.append(value)
            row_ptr.append(len(col))
        values = numpy.array(values, dtype=dtype)
        b = numpy.full(rows, 1.0, dtype=dtype)
        return cls(numpy, rows, numpy.array(row_ptr, dtype=numpy.uint32), numpy.array(col, dtype=numpy.uint32),
                   values, b)


class Answer:
    """The runs of the answer, and the solution files they name."""

    def __init__(self, folder, numpy):
        self.folder, self.numpy, self.runs = folder, numpy, []

    def save(self, run, x, dtype):
        run["x_file"] = f"x{len(self.runs)}"
        self.numpy.asarray(x, dtype=dtype).tofile(self.folder / run["x_file"])


def attempt(answer, run, config, real, warm):
    """Runs config(warm) untimed and config(real) timed, filling `run`; an exception is its why_not."""
    try:
        config(warm)
        result = config(real)
        answer.save(run, result["x"], real.dtype)
        run.update(ran=True, iterations=int(result["iterations"]), setup_s=float(result["setup_s"]),
                   solve_s=float(result["solve_s"]), note=result["note"])
    except Exception as error:  # a failing config is an answer, not a crash
        run.update(ran=False, why_not=error_text(error))
    answer.runs.append(run)


def tolerance_keywords(solver, tolerance):
    """The relative tolerance under its name in this version (rtol, formerly tol), and atol = 0."""
    name = "rtol" if "rtol" in inspect.signature(solver).parameters else "tol"
    return {name: tolerance, "atol": 0.0}


def with_status(note, info):
    if info > 0:
        return note + f"; not converged (info {info})"
    if info < 0:
        return note + f"; broke down (info {info})"
    return note


# ---- SciPy ----

def cpu_name():
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "CPU"


class ScipyPeer:
    """SciPy's bicgstab and gmres on the CPU, in the system's dtype."""

    BICGSTAB_RULE = ("SciPy's bicgstab stops when its recurrence residual ||r|| <= tol ||b|| (right-preconditioned, "
                     "the true residual never checked)")

    def __init__(self, scipy, numpy, descriptor):
        import scipy.sparse.linalg as linalg
        self.scipy, self.numpy, self.linalg = scipy, numpy, linalg
        self.tolerance = float(descriptor["tolerance"])
        self.max_iterations = int(descriptor["max_iterations"])
        self.restart = int(descriptor["restart"])
        self.factors = {}  # spilu of each system, shared by bicgstab and gmres

    def matrix(self, system):
        return self.scipy.sparse.csr_matrix((system.values, system.col, system.row_ptr),
                                            shape=(system.rows, system.rows))

    def operator(self, system, apply, counter):
        def counted(v):
            counter[0] += 1
            return apply(v)
        return self.linalg.LinearOperator((system.rows, system.rows), matvec=counted, dtype=system.dtype)

    def spilu(self, system):
        """SuperLU's incomplete LU of the system, timed once: (apply, seconds, note)."""
        if id(system) not in self.factors:
            start = time.perf_counter()
            csc = self.matrix(system).tocsc()
            options = {"drop_tol": 1e-4, "fill_factor": 1.0, "permc_spec": "NATURAL"}
            note = ("SuperLU's ILUTP (scipy.sparse.linalg.spilu, fill_factor 1, drop_tol 1e-4, natural column order, "
                    "threshold pivoting), not ILU(0): its pattern comes from thresholds; on the CPU")
            try:
                factor = self.linalg.spilu(csc, **options)
                apply = factor.solve
            except (TypeError, ValueError, RuntimeError):
                if system.dtype == self.numpy.float64:
                    raise
                # single precision without a single-precision SuperLU: factorise in double
                factor = self.linalg.spilu(csc.astype(self.numpy.float64), **options)
                apply = lambda v: factor.solve(v.astype(self.numpy.float64)).astype(system.dtype)
                note += "; factorised and applied in float64 (no float32 spilu here)"
            self.factors[id(system)] = (apply, time.perf_counter() - start, note)
        return self.factors[id(system)]

    def jacobi(self, system):
        start = time.perf_counter()
        inverse = (1 / self.matrix(system).diagonal()).astype(system.dtype)
        return (lambda v: v * inverse), time.perf_counter() - start, "1 / diagonal on the CPU"

    def bicgstab(self, system, preconditioner):
        apply, setup_s, note = preconditioner(system)
        calls = [0]
        a = self.matrix(system)
        m = self.operator(system, apply, calls)
        start = time.perf_counter()
        x, info = self.linalg.bicgstab(a, system.b, M=m, maxiter=self.max_iterations,
                                       **tolerance_keywords(self.linalg.bicgstab, self.tolerance))
        solve_s = time.perf_counter() - start
        # two applications of M an iteration, one when it stops half-way
        return {"x": x, "iterations": (calls[0] + 1) // 2, "setup_s": setup_s, "solve_s": solve_s,
                "note": with_status(f"{note}; {self.BICGSTAB_RULE}", info)}

    def gmres(self, system):
        apply, setup_s, note = self.spilu(system)
        iterations = [0]
        a = self.matrix(system)
        m = self.linalg.LinearOperator((system.rows, system.rows), matvec=apply, dtype=system.dtype)
        start = time.perf_counter()
        # maxiter counts restart cycles; pr_norm calls back once an inner iteration
        x, info = self.linalg.gmres(a, system.b, M=m, restart=self.restart,
                                    maxiter=max(1, math.ceil(self.max_iterations / self.restart)),
                                    callback=lambda _: iterations.__setitem__(0, iterations[0] + 1),
                                    callback_type="pr_norm",
                                    **tolerance_keywords(self.linalg.gmres, self.tolerance))
        solve_s = time.perf_counter() - start
        rule = (f"SciPy {self.scipy.__version__}'s gmres stops on ||b - A x|| <= tol ||b||, the true residual checked "
                "at the end of a cycle (SciPy 1.10: its inner iterations on the left-preconditioned residual); "
                "the factorisation is bicgstab + spilu's, timed there")
        return {"x": x, "iterations": iterations[0], "setup_s": setup_s, "solve_s": solve_s,
                "note": with_status(f"{note}; {rule}", info)}


def scipy_runs(answer, descriptor, system, warm):
    names = config_names(int(descriptor["restart"]))["SciPy"]
    try:
        import scipy
        import scipy.sparse
        import scipy.sparse.linalg  # noqa: F401 (ScipyPeer's)
    except ImportError as error:
        answer.runs += not_run("SciPy", names, f"SciPy is missing ({error})")
        return
    peer = ScipyPeer(scipy, answer.numpy, descriptor)
    device = f"{cpu_name()} (CPU)"
    limit = int(descriptor["scipy_ilu_limit"])
    configs = [lambda s: peer.bicgstab(s, peer.spilu), peer.gmres, lambda s: peer.bicgstab(s, peer.jacobi)]
    for (method, preconditioner), config in zip(names, configs):
        run = new_run(f"SciPy {scipy.__version__}", method, preconditioner, device)
        if descriptor.get("ilu_only") and preconditioner != "spilu":
            continue
        if system.nnz > limit:
            run["why_not"] = (f"the matrix has {system.nnz} stored values, more than the {limit} up to which SciPy's "
                              "solves are run (SuperLU's ILU, and any CPU solve, would take too long)")
            answer.runs.append(run)
            continue
        attempt(answer, run, config, system, warm)


# ---- cuSPARSE through CuPy ----

class SpsmTriangle:
    """x = T^-1 b for one triangle T of a CSR matrix holding both (ILU's L and U in one), by cuSPARSE's
    SpSM on one column: buffer, descriptors and analysis made once, so that each solve is one
    cusparseSpSM_solve (cupyx.cusparse.spsm would analyse again on every call)."""

    def __init__(self, cupy, matrix, lower, unit):
        import numpy
        from cupy._core import _dtype
        from cupy_backends.cuda.libs import cusparse as cs
        import cupyx.cusparse
        self.cs = cs
        n, dtype = matrix.shape[0], matrix.dtype
        # cuSPARSE wants the output zeroed (CuPy's spsm says so too): zeroed before each solve
        self.rhs = cupy.zeros((n, 1), dtype=dtype, order="F")
        self.out = cupy.zeros((n, 1), dtype=dtype, order="F")
        self.matrix = cupyx.cusparse.SpMatDescriptor.create(matrix)
        self.matrix.set_attribute(cs.CUSPARSE_SPMAT_FILL_MODE,
                                  cs.CUSPARSE_FILL_MODE_LOWER if lower else cs.CUSPARSE_FILL_MODE_UPPER)
        self.matrix.set_attribute(cs.CUSPARSE_SPMAT_DIAG_TYPE,
                                  cs.CUSPARSE_DIAG_TYPE_UNIT if unit else cs.CUSPARSE_DIAG_TYPE_NON_UNIT)
        self.rhs_desc = cupyx.cusparse.DnMatDescriptor.create(self.rhs)
        self.out_desc = cupyx.cusparse.DnMatDescriptor.create(self.out)
        self.alpha = numpy.array(1, dtype=dtype)
        self.handle = cupy.cuda.device.get_cusparse_handle()
        self.cuda_dtype = _dtype.to_cuda_dtype(dtype)
        self.descr = cs.spSM_createDescr()
        size = cs.spSM_bufferSize(*self.arguments())
        self.buffer = cupy.empty(size, dtype=cupy.int8)
        cs.spSM_analysis(*self.arguments(), self.buffer.data.ptr)

    def arguments(self):
        op = self.cs.CUSPARSE_OPERATION_NON_TRANSPOSE
        return (self.handle, op, op, self.alpha.ctypes.data, self.matrix.desc, self.rhs_desc.desc,
                self.out_desc.desc, self.cuda_dtype, self.cs.CUSPARSE_SPSM_ALG_DEFAULT, self.descr)

    def __call__(self, v):
        """T^-1 v, in a buffer that the next call overwrites."""
        self.rhs[:, 0] = v
        self.out.fill(0)
        self.cs.spSM_solve(*self.arguments())
        return self.out[:, 0]

    def __del__(self):
        # at the interpreter's exit CUDA may be gone already (CuPy's descriptors skip it too)
        if getattr(self, "descr", None) is not None and not sys.is_finalizing():
            self.cs.spSM_destroyDescr(self.descr)
            self.descr = None


class CusparseIlu0:
    """cuSPARSE's ILU(0) of A (csrilu02, in a copy of A's values) and its application M^-1 v by
    two triangular solves, with what this CuPy exposes (probed): SpSM, else csrsm2."""

    def __init__(self, cupy, cupyx, a):
        import cupyx.cusparse as cusparse
        if not (hasattr(cusparse, "csrilu02") and cusparse.check_availability("csrilu02")):
            raise RuntimeError("this CuPy has no cupyx.cusparse.csrilu02 on this CUDA")
        lu = cupyx.scipy.sparse.csr_matrix((a.data.copy(), a.indices, a.indptr), shape=a.shape)
        lu.has_canonical_format = True
        cusparse.csrilu02(lu, level_info=True)
        self.lu = lu
        # no reference cycles (a lambda or bound method kept here): the GPU memory goes with the last reference
        if self.spsm_available(cusparse):
            self.triangles = (SpsmTriangle(cupy, lu, lower=True, unit=True),
                              SpsmTriangle(cupy, lu, lower=False, unit=False))
            self.solver = "cuSPARSE SpSM triangular solves (analysed once)"
        elif hasattr(cusparse, "csrsm2") and cusparse.check_availability("csrsm2"):
            self.triangles = None
            self.solver = "cuSPARSE csrsm2 triangular solves (CuPy's wrapper analyses on every call)"
        else:
            raise RuntimeError("this CuPy exposes neither cuSPARSE's SpSM nor csrsm2 for the triangular solves")

    @staticmethod
    def spsm_available(cusparse):
        try:
            from cupy._core import _dtype
            from cupy_backends.cuda.libs import cusparse as cs
        except ImportError:
            return False
        needed = ("spSM_createDescr", "spSM_bufferSize", "spSM_analysis", "spSM_solve", "spSM_destroyDescr",
                  "CUSPARSE_SPMAT_FILL_MODE", "CUSPARSE_SPMAT_DIAG_TYPE", "CUSPARSE_SPSM_ALG_DEFAULT")
        return (all(hasattr(cs, name) for name in needed) and hasattr(_dtype, "to_cuda_dtype")
                and hasattr(cusparse, "SpMatDescriptor")
                and hasattr(cusparse, "DnMatDescriptor") and cusparse.check_availability("spsm"))

    def __call__(self, v):
        """M^-1 v = U^-1 L^-1 v, a new array."""
        if self.triangles:
            lower, upper = self.triangles
            return upper(lower(v)).copy()
        import cupyx.cusparse as cusparse
        y = v.copy()
        cusparse.csrsm2(self.lu, y, lower=True, unit_diag=True, level_info=True)
        cusparse.csrsm2(self.lu, y, lower=False, unit_diag=False, level_info=True)
        return y


def bicgstab_ziggurat_rule(cupy, a, b, precondition, tolerance, max_iterations):
    """Right-preconditioned BiCGStab (A M^-1 u = b, x = M^-1 u) with ziggurat's stopping rule: once the
    recurrence ||r|| / ||b|| < tolerance, the true residual b - A x is computed; below the tolerance it
    is done, else the iteration goes on from the true residual (r and r0 replaced), and stops as
    stagnated when a second such check is no better. Returns (x, iterations, status)."""
    x = cupy.zeros_like(b)
    b_norm = float(cupy.linalg.norm(b))
    if b_norm == 0:
        return x, 0, "converged"

    def relative(squared):
        return math.sqrt(max(squared, 0.0)) / b_norm

    r = b.copy()
    rr = b_norm * b_norm
    if relative(rr) < tolerance:
        return x, 0, "converged"
    r0, rho, fresh = r.copy(), rr, True
    alpha = omega = rho_old = 1.0
    p = v = None
    replaced, last_true = False, math.inf
    for iteration in range(1, max_iterations + 1):
        p = r.copy() if fresh else r + ((rho / rho_old) * (alpha / omega)) * (p - omega * v)
        fresh = False
        phat = precondition(p)
        v = a @ phat
        r0v = float(r0 @ v)
        if r0v == 0 or not math.isfinite(r0v):
            return x, iteration, f"broke down (r0.v = {r0v})"
        alpha = rho / r0v
        s = r - alpha * v
        shat = precondition(s)
        t = a @ shat
        ss, ts, tt = (float(value) for value in cupy.stack([s @ s, t @ s, t @ t]).get())
        if relative(ss) < tolerance:
            omega = 0.0  # s is small enough: x += alpha phat, r = s
        elif tt == 0 or ts == 0 or not math.isfinite(tt):
            return x, iteration, f"broke down (omega = {ts} / {tt})"
        else:
            omega = ts / tt
        x += alpha * phat + omega * shat
        r = s - omega * t
        rr, rho_new = (float(value) for value in cupy.stack([r @ r, r0 @ r]).get())
        rho_old, rho = rho, rho_new
        if not math.isfinite(rr):
            return x, iteration, "not finite"
        if relative(rr) < tolerance:
            r = b - a @ x
            true_rr = float(r @ r)
            if relative(true_rr) < tolerance:
                return x, iteration, "converged"
            if replaced and relative(true_rr) >= last_true:
                return x, iteration, f"stagnated (true residual {relative(true_rr):.3g})"
            replaced, last_true = True, relative(true_rr)
            r0, rho, fresh = r.copy(), true_rr, True
        elif rho == 0:
            return x, iteration, "broke down (rho = 0)"
    return x, max_iterations, "not converged (iteration limit)"


class CupyPeer:
    """cuSPARSE's ILU(0) and CuPy's solvers on the GPU, in the system's dtype."""

    def __init__(self, cupy, cupyx, descriptor):
        import cupyx.scipy.sparse.linalg as linalg
        self.cupy, self.cupyx, self.linalg = cupy, cupyx, linalg
        self.tolerance = float(descriptor["tolerance"])
        self.max_iterations = int(descriptor["max_iterations"])
        self.restart = int(descriptor["restart"])
        self.uploads = {}  # each system's matrix on the GPU and the seconds its upload took

    def timed(self, body):
        """body() between two synchronisations of the device, and the wall seconds it took."""
        self.cupy.cuda.Device().synchronize()
        start = time.perf_counter()
        value = body()
        self.cupy.cuda.Device().synchronize()
        return value, time.perf_counter() - start

    def matrix(self, system):
        if id(system) not in self.uploads:
            def upload():
                cupy = self.cupy
                a = self.cupyx.scipy.sparse.csr_matrix(
                    (cupy.asarray(system.values), cupy.asarray(system.col), cupy.asarray(system.row_ptr)),
                    shape=(system.rows, system.rows))
                # ziggurat's CSR has sorted, unique columns: spares CuPy a sum_duplicates() pass
                a.has_canonical_format = True
                return a
            self.uploads[id(system)] = self.timed(upload)
        return self.uploads[id(system)]

    def operator(self, n, dtype, apply, counter):
        def counted(v):
            counter[0] += 1
            return apply(v)
        return self.linalg.LinearOperator((n, n), matvec=counted, dtype=dtype)

    def solve_on_gpu(self, system, solve):
        """solve(b on the GPU) -> (x, info), timed with the upload of b and the download of x."""
        return self.timed(lambda: self.cupy.asnumpy(solve(self.cupy.asarray(system.b))))

    def bicgstab_ilu0(self, system):
        a, upload_s = self.matrix(system)
        ilu, setup_s = self.timed(lambda: CusparseIlu0(self.cupy, self.cupyx, a))
        status = []

        def solve(b):
            x, iterations, outcome = bicgstab_ziggurat_rule(self.cupy, a, b, ilu, self.tolerance, self.max_iterations)
            status.extend((iterations, outcome))
            return x
        x, solve_s = self.solve_on_gpu(system, solve)
        note = (f"cuSPARSE csrilu02 (exact ILU(0) of the CSR pattern, level information) with {ilu.solver}, in a "
                "right-preconditioned BiCGStab written in CuPy (unfused array expressions) with ziggurat's stopping "
                "rule: recurrence ||r|| / ||b|| < tol, then the true residual checked, the iteration going on from "
                f"it while above; {status[1]}")
        return {"x": x, "iterations": status[0], "setup_s": upload_s + setup_s, "solve_s": solve_s, "note": note}

    def gmres_ilu0(self, system):
        a, upload_s = self.matrix(system)
        ilu, setup_s = self.timed(lambda: CusparseIlu0(self.cupy, self.cupyx, a))
        m = self.operator(system.rows, system.dtype, ilu, [0])
        cycles, info = [0], [0]
        gmres = self.linalg.gmres

        def solve(b):
            x, info[0] = gmres(a, b, M=m, restart=self.restart, maxiter=self.max_iterations,
                               callback=lambda _: cycles.__setitem__(0, cycles[0] + 1), callback_type="pr_norm",
                               **tolerance_keywords(gmres, self.tolerance))
            return x
        x, solve_s = self.solve_on_gpu(system, solve)
        note = (f"cuSPARSE csrilu02 ILU(0) with {ilu.solver} as M of cupyx.scipy.sparse.linalg.gmres "
                "(right-preconditioned): it checks the true residual ||b - A x|| <= tol ||b|| only at the end of "
                "each cycle, so its iterations are whole cycles")
        return {"x": x, "iterations": cycles[0] * min(self.restart, system.rows), "setup_s": upload_s + setup_s,
                "solve_s": solve_s, "note": with_status(note, info[0])}

    def bicgstab_jacobi(self, system):
        if not hasattr(self.linalg, "bicgstab"):
            raise RuntimeError(f"CuPy {self.cupy.__version__} has no cupyx.scipy.sparse.linalg.bicgstab (CuPy 14 has)")
        a, upload_s = self.matrix(system)
        inverse, setup_s = self.timed(lambda: 1 / a.diagonal())
        calls, info = [0], [0]
        m = self.operator(system.rows, system.dtype, lambda v: v * inverse, calls)
        bicgstab = self.linalg.bicgstab

        def solve(b):
            x, info[0] = bicgstab(a, b, M=m, maxiter=self.max_iterations,
                                  **tolerance_keywords(bicgstab, self.tolerance))
            return x
        x, solve_s = self.solve_on_gpu(system, solve)
        note = ("cupyx.scipy.sparse.linalg.bicgstab, right-preconditioned by 1 / diagonal: it stops when its "
                "recurrence residual ||r|| <= tol ||b||, the true residual never checked")
        # two applications of M an iteration, one when it stops half-way
        return {"x": x, "iterations": (calls[0] + 1) // 2, "setup_s": upload_s + setup_s, "solve_s": solve_s,
                "note": with_status(note, info[0])}


def gpu_name(cupy):
    properties = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = properties["name"]
    version = cupy.cuda.runtime.runtimeGetVersion()
    name = name.decode() if isinstance(name, bytes) else str(name)
    return f"{name}, CUDA {version // 1000}.{version % 1000 // 10}"


def cupy_runs(answer, descriptor, system, warm):
    names = config_names(int(descriptor["restart"]))["cuSPARSE"]
    try:
        import cupy
        import cupyx
        import cupyx.cusparse  # noqa: F401 (CusparseIlu0's)
        import cupyx.scipy.sparse
        import cupyx.scipy.sparse.linalg  # noqa: F401 (CupyPeer's)
    except Exception as error:  # ImportError, or a CUDA library that does not load
        answer.runs += not_run("cuSPARSE (CuPy)", names, f"CuPy is missing ({error_text(error)})")
        return
    peer_name = f"cuSPARSE (CuPy {cupy.__version__})"
    try:
        devices = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:
        devices, reason = 0, f"no CUDA device ({error_text(error)})"
    else:
        reason = "no CUDA device"
    if devices == 0:
        answer.runs += not_run(peer_name, names, reason)
        return
    if not system.int32:
        answer.runs += not_run(peer_name, names, "the matrix needs 64-bit indices; cuSPARSE's ILU(0) takes int32 ones")
        return
    peer = CupyPeer(cupy, cupyx, descriptor)
    device = gpu_name(cupy)
    for (method, preconditioner), config in zip(names, (peer.bicgstab_ilu0, peer.gmres_ilu0, peer.bicgstab_jacobi)):
        if descriptor.get("ilu_only") and method != "bicgstab" or descriptor.get("ilu_only") and preconditioner != "ilu0":
            continue
        attempt(answer, new_run(peer_name, method, preconditioner, device), config, system, warm)
        cupy.get_default_memory_pool().free_all_blocks()  # the next config starts with the GPU's memory free


def run(folder):
    try:
        import numpy
    except ImportError as error:
        descriptor = json.loads((folder / "descriptor.json").read_text())
        names = config_names(int(descriptor["restart"]))
        return {"runs": not_run("SciPy", names["SciPy"], f"numpy is missing ({error})") +
                not_run("cuSPARSE (CuPy)", names["cuSPARSE"], f"numpy is missing ({error})")}
    descriptor, system = System.load(folder, numpy)
    warm = System.warm_up(numpy, system.dtype)
    answer = Answer(folder, numpy)
    scipy_runs(answer, descriptor, system, warm)
    cupy_runs(answer, descriptor, system, warm)
    return {"runs": answer.runs}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        result = run(pathlib.Path(argv[0]))
    except Exception as error:  # no runs at all: the caller reports why
        result = {"why_not": error_text(error)}
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
