#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: installs what is missing, builds, and runs
# every test on every OpenCL device found (ZIGGURAT_DEVICE narrows that), the kernels under
# Oclgrind, the CLI against NumPy, the installed package from a separate project; then the host
# code again under AddressSanitizer and UndefinedBehaviorSanitizer.
# ctest runs its entries in parallel, as many as there are cores (ZIGGURAT_TEST_JOBS sets another
# number); both builds share one cache of programs, device profiles and tuning records.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
jobs=${ZIGGURAT_TEST_JOBS:-$(nproc)}
# Every build through ccache, with paths taken relative to the tree: the wheel's build of the
# library (ctest python_wheel, in build/wheel) compiles what the release build just compiled.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
launcher=-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
cache="$PWD/build/test-cache"
mkdir -p build
started=$SECONDS
elapsed() { echo "   ($((SECONDS - started)) s so far)"; }

echo "== release build"
# No link-time optimisation here (pybind11 asks for it in a Release build of the Python module):
# the tests do not need it, and it is the longest link. scripts/run.sh's release build keeps it.
./scripts/build.sh release -DCMAKE_BUILD_TYPE=Release -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF "$launcher" \
  -DZIGGURAT_TEST_CACHE_DIR="$cache" >/dev/null
elapsed
ctest --test-dir build/release --output-on-failure -j "$jobs"
elapsed

echo "== ASan + UBSan build"
# The library and the test programs only: the sanitizer pass runs the host tests and one quick case
# per device family (tests/CMakeLists.txt; every case runs in the release pass above). No Python
# module here: an interpreter without the sanitizer runtime cannot load a module built with it
# (ASan must come first in the process), and the downstream project links without sanitizers.
./scripts/build.sh sanitize "$launcher" -DCMAKE_BUILD_TYPE=Debug -DZIGGURAT_SANITIZE=address,undefined \
  -DZIGGURAT_TEST_OCLGRIND=OFF -DZIGGURAT_TEST_FUZZ=OFF -DZIGGURAT_PYTHON=OFF -DZIGGURAT_BUILD_TOOLS=OFF \
  -DZIGGURAT_MPI=OFF -DZIGGURAT_TEST_CACHE_DIR="$cache" >/dev/null
elapsed
ctest --test-dir build/sanitize --output-on-failure -j "$jobs"
elapsed
