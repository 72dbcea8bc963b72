#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: installs what is missing, builds, and runs
# every test on every OpenCL device found (ZIGGURAT_DEVICE narrows that), the kernels under
# Oclgrind, the CLI against NumPy, the installed package from a separate project; then the host
# code again under AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh

echo "== release build"
./scripts/build.sh release -DCMAKE_BUILD_TYPE=Release >/dev/null
ctest --test-dir build/release --output-on-failure

echo "== ASan + UBSan build"
# No Python module here: an interpreter without the sanitizer runtime cannot load a module built
# with it (ASan must come first in the process), so the python test runs in the release pass only.
./scripts/build.sh sanitize -DCMAKE_BUILD_TYPE=Debug -DZIGGURAT_SANITIZE=address,undefined \
  -DZIGGURAT_TEST_OCLGRIND=OFF -DZIGGURAT_TEST_FUZZ=OFF -DZIGGURAT_PYTHON=OFF >/dev/null
# The downstream project links without sanitizers, so it runs in the release pass only.
ctest --test-dir build/sanitize --output-on-failure -E downstream
