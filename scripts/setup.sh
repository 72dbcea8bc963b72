#!/usr/bin/env bash
# Installs the Debian 12 packages ziggurat needs, and only those that are missing.
# Idempotent and non-interactive; uses sudo when not run as root.
set -euo pipefail

packages=(
  # build (ccache: the test builds of the wheel reuse the release build's objects)
  g++ cmake make pkg-config ccache
  # OpenCL: ICD loader, C and C++ headers, the PoCL CPU device, the Oclgrind simulator
  ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers pocl-opencl-icd oclgrind clinfo
  # libraries
  libclblast-dev doctest-dev libcli11-dev nlohmann-json3-dev
  # the subspace iteration's small generalised eigenproblems (header-only)
  libeigen3-dev
  # the nested-dissection ordering of sparse systems (METIS' vertex separators)
  libmetis-dev
  # benchmark peer (ziggurat bench spmm): ViennaCL's OpenCL sparse products
  libviennacl-dev
  # fuzzing the Matrix Market parser (libFuzzer)
  clang libclang-rt-dev
  # pictures (ziggurat heat --png)
  libpng-dev
  # plots (ziggurat model --plot)
  libplplot-dev plplot-driver-cairo
  # tests: NumPy cross-checks of the .npy reader and writer
  python3-numpy
  # benchmark peer (ziggurat bench solve): SciPy's Krylov solvers on the CPU
  python3-scipy
  # the Python module (import ziggurat) and its tests
  pybind11-dev python3-dev python3-pytest
  # the stubs checked against the module (mypy.stubtest)
  python3-mypy
  # the package built as a wheel and installed by pip into a venv (pyproject.toml, ctest python_wheel)
  python3-build python3-pip python3-venv
  # the distributed layer (ziggurat::mpi, mpirun ... ziggurat wave): Open MPI
  libopenmpi-dev openmpi-bin
  # tests: a one-node Slurm started by tests/cli/test_slurm.py (srun --mpi=pmix), and its munge
  slurm-wlm munge
  # tests: VTK's own readers for the files of --vtk, and an X server for its offscreen render of a
  # mode shape (Debian's VTK renders through X)
  python3-vtk9 xvfb xauth
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

sudo=()
if ((EUID != 0)); then sudo=(sudo); fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
