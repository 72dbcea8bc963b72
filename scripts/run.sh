#!/usr/bin/env bash
# ziggurat's main job on a fresh Debian 12 machine: installs what is missing, builds, lists the
# OpenCL devices, and solves the 2D heat equation on the default device (ZIGGURAT_DEVICE picks
# another), writing the final field to build/heat.npy.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh release -DCMAKE_BUILD_TYPE=Release >/dev/null
ziggurat=build/release/tools/ziggurat
echo "== ziggurat devices"
"$ziggurat" devices
echo
echo "== ziggurat heat --size 2048x2048 --steps 500 --out build/heat.npy"
"$ziggurat" heat --size 2048x2048 --steps 500 --out build/heat.npy
