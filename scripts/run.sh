#!/usr/bin/env bash
# ziggurat's main job on a fresh Debian 12 machine: installs what is missing, builds, lists the
# OpenCL devices, calibrates the default device (ZIGGURAT_DEVICE picks another; the profile is
# cached), and solves the 2D heat equation on a grid four times larger than a 16 MiB device-memory
# budget with the plan the cost model picks, writing the final field to build/heat.npy and its
# picture to build/heat.png.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh release -DCMAKE_BUILD_TYPE=Release >/dev/null
ziggurat=build/release/bin/ziggurat
echo "== ziggurat devices"
"$ziggurat" devices
echo
echo "== ziggurat calibrate"
"$ziggurat" calibrate | head -3
echo
args=(heat --size 4096x4096 --steps 200 --device-memory 16MiB --out build/heat.npy --png build/heat.png)
echo "== ziggurat ${args[*]}"
"$ziggurat" "${args[@]}"
