# Type stubs of the package ziggurat (the public API of __init__.py, _sparse.py and _core).
import os
from typing import Any, Callable, Dict, List, Literal, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import sparse as sparse

__version__: str
ILU2_THRESHOLD: float

class Error(Exception): ...
class InvalidArgument(Error, ValueError): ...
class DeviceNotFound(Error, LookupError): ...
class UnsupportedFeature(Error): ...
class IoError(Error, OSError): ...
class BuildError(Error):
    log: str
class ZeroPivot(Error, ArithmeticError):
    block_row: int
class OpenCLError(Error):
    code: int
class OutOfDeviceMemory(OpenCLError, MemoryError): ...

DeviceSelection = Union[str, int, None]
MemorySize = Union[int, float, str, None]  # a float only when a whole number of bytes
FloatArray = npt.NDArray[Union[np.float32, np.float64]]
OutputPath = Union[str, "os.PathLike[str]", None]  # a file written, None: none

def devices(spec: str = "all") -> List[Dict[str, Any]]: ...

class Context:
    def __init__(self, device: DeviceSelection = None) -> None: ...
    @property
    def device(self) -> Dict[str, Any]: ...
    def calibrate(self, force: bool = False) -> Dict[str, Any]: ...
    def finish(self) -> None: ...

ContextLike = Union[Context, str, int, None]

def max_stable_alpha(dims: int) -> float: ...

def heat(
    u0: npt.ArrayLike,
    steps: int,
    alpha: Optional[float] = None,
    *,
    device_memory: MemorySize = None,
    mode: Literal["auto", "incore", "trivial", "strip", "block"] = "auto",
    height: Optional[int] = None,
    depth: Union[int, Literal["auto"], None] = None,
    serial: bool = False,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
    profile: Optional[Dict[str, Any]] = None,
    context: ContextLike = None,
    vtk: OutputPath = None,
) -> Tuple[FloatArray, Dict[str, Any]]: ...

def poisson(
    f: npt.ArrayLike,
    u0: Optional[npt.ArrayLike] = None,
    *,
    spacing: Optional[float] = None,
    tol: float = 1e-6,
    max_sweeps: int = 10000,
    device_memory: MemorySize = None,
    mode: Literal["auto", "incore", "strip"] = "auto",
    height: Optional[int] = None,
    depth: Union[int, Literal["auto"], None] = None,
    serial: bool = False,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
    profile: Optional[Dict[str, Any]] = None,
    context: ContextLike = None,
    vtk: OutputPath = None,
) -> Tuple[FloatArray, Dict[str, Any]]: ...

def modes(
    mesh: Optional[str] = None,
    *,
    material: Union[str, Sequence[float]] = (210e9, 0.3, 7850.0),
    lumped: bool = False,
    elements: Optional[npt.ArrayLike] = None,
    dofs: Optional[npt.ArrayLike] = None,
    mass: Optional[npt.ArrayLike] = None,
    modes: int = 10,
    vectors: Optional[int] = None,
    tol: Optional[float] = None,
    max_iterations: int = 100,
    solve_tol: Optional[float] = None,
    cg_operator: Literal["assembled", "matrix-free"] = "assembled",
    preconditioner: Literal["auto", "ilu0", "block-jacobi", "jacobi", "none"] = "auto",
    ordering: Literal["natural", "levels", "colours", "block-colours"] = "colours",
    scatter: Literal["auto", "colouring", "atomics"] = "auto",
    projection: Literal["auto", "tiles", "columns", "tensor"] = "auto",
    batch_elements: Optional[int] = None,
    block_size: int = 3,
    deflation: bool = True,
    dtype: npt.DTypeLike = "float64",
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
    context: ContextLike = None,
    vtk: OutputPath = None,
) -> Tuple[FloatArray, FloatArray, Dict[str, Any]]: ...

def wave(
    vp: npt.ArrayLike,
    vs: npt.ArrayLike,
    rho: npt.ArrayLike,
    *,
    dx: float,
    steps: int,
    dt: Optional[float] = None,
    source: Optional[Sequence[float]] = None,
    source_kind: Literal["explosion", "force"] = "explosion",
    force: Optional[Sequence[float]] = None,
    freq: float = 15.0,
    receivers: Optional[npt.ArrayLike] = None,
    absorbing: int = 20,
    dtype: npt.DTypeLike = "float32",
    devices: Optional[str] = None,
    halo_steps: Optional[int] = None,
    split: Literal["measured", "equal"] = "measured",
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
    context: ContextLike = None,
    vtk: OutputPath = None,
) -> Tuple[FloatArray, Dict[str, Any]]: ...

def model(
    grid: Union[int, Sequence[int]],
    steps: int = 1000,
    *,
    dims: int = 2,
    dtype: npt.DTypeLike = "float32",
    device_memory: MemorySize = None,
    tau_c: Optional[float] = None,
    tau_a: Optional[float] = None,
    profile: Optional[Dict[str, Any]] = None,
    context: ContextLike = None,
    decomposition: Literal["auto", "strip", "block"] = "auto",
    serial: bool = False,
    height: Optional[int] = None,
) -> Dict[str, Any]: ...

class DeviceVectors:
    @property
    def shape(self) -> Tuple[int, int]: ...
    @property
    def dtype(self) -> np.dtype: ...
    def upload(self, values: npt.ArrayLike) -> None: ...
    def download(self, out: Optional[FloatArray] = None) -> FloatArray: ...

class DeviceMatrix:
    dtype: np.dtype
    shape: Tuple[int, int]
    def __init__(
        self,
        A: Any,
        *,
        format: Literal["bsr", "csr", "dia"] = "bsr",
        block_size: Optional[int] = None,
        kernel: Optional[str] = None,
        symmetric: bool = False,
        dtype: npt.DTypeLike = None,
        context: ContextLike = None,
    ) -> None: ...
    def __matmul__(self, X: npt.ArrayLike) -> FloatArray: ...
    def matvec(self, x: npt.ArrayLike) -> FloatArray: ...
    def multiply(self, x: DeviceVectors, out: DeviceVectors) -> DeviceVectors: ...
    def input_vectors(self, X: Union[npt.ArrayLike, int]) -> DeviceVectors: ...
    def output_vectors(self, k: int) -> DeviceVectors: ...
    @property
    def format(self) -> str: ...
    @property
    def block_size(self) -> int: ...
    @property
    def info(self) -> Dict[str, Any]: ...

def spmm(
    A: Union[Any, DeviceMatrix],
    X: npt.ArrayLike,
    *,
    format: Literal["bsr", "csr", "dia"] = "bsr",
    block_size: Optional[int] = None,
    kernel: Optional[str] = None,
    context: ContextLike = None,
) -> FloatArray: ...

def solve(
    A: Any,
    b: npt.ArrayLike,
    *,
    method: Literal["cg", "bicgstab", "gmres"] = "bicgstab",
    preconditioner: Literal["none", "jacobi", "block-jacobi", "ilu0", "ilu2"] = "ilu0",
    rtol: float = 1e-8,
    atol: float = 0.0,
    max_iterations: int = 1000,
    ordering: Literal["auto", "natural", "levels", "colours", "block-colours", "nested-dissection"] = "auto",
    sweep: Literal["levels", "sync-free", "sequential", "jacobi", "auto"] = "auto",
    kernel: str = "auto",
    restart: int = 30,
    aggregate: int = 8,
    shift: float = 0.0,
    threshold: Optional[float] = None,
    static_pivoting: Literal["auto", "on", "off"] = "auto",
    jacobi_sweeps: Optional[int] = None,
    block_size: Optional[int] = None,
    x0: Optional[npt.ArrayLike] = None,
    dtype: npt.DTypeLike = None,
    progress: Optional[Callable[[int, float], None]] = None,
    context: ContextLike = None,
    tol: float = ...,
    max_iter: int = ...,
) -> Tuple[FloatArray, Dict[str, Any]]: ...

class KrylovSolver:
    shape: Tuple[int, int]
    dtype: np.dtype
    method: str
    setup_seconds: float
    def __init__(
        self,
        A: Any,
        *,
        method: Literal["cg", "bicgstab", "gmres"] = "bicgstab",
        preconditioner: Any = "ilu0",
        rtol: float = 1e-8,
        atol: float = 0.0,
        max_iterations: int = 1000,
        restart: int = 30,
        ordering: Literal["auto", "natural", "levels", "colours", "block-colours", "nested-dissection"] = "auto",
        sweep: Literal["levels", "sync-free", "sequential", "jacobi", "auto"] = "auto",
        threshold: Optional[float] = None,
        static_pivoting: Literal["auto", "on", "off"] = "auto",
        aggregate: int = 8,
        shift: float = 0.0,
        kernel: str = "rule",
        jacobi_sweeps: Optional[int] = None,
        block_size: Optional[int] = None,
        dtype: npt.DTypeLike = None,
        vectors: int = 1,
        context: ContextLike = None,
        maxiter: int = ...,
    ) -> None: ...
    def solve(
        self,
        b: npt.ArrayLike,
        x0: Optional[npt.ArrayLike] = None,
        *,
        callback: Optional[Callable[[int, float], None]] = None,
    ) -> Tuple[FloatArray, Dict[str, Any]]: ...
