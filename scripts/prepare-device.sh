#!/usr/bin/env bash
# Once per checkout, before using the GPU machine (see ../shared/device/): copies the shared
# OpenCL packages into .device/ and adds what the GPU machine also lacks: the header-only
# CLI11, nlohmann-json and Eigen, and libpng with the zlib headers its png.h includes, downloaded here
# as Debian packages. gpu-env.sh unpacks them all there.
set -euo pipefail
cd "$(dirname "$0")/.."
../shared/device/prepare.sh
(cd .device && apt-get download -qq libcli11-dev nlohmann-json3-dev libeigen3-dev libpng-dev libpng16-16 zlib1g-dev)
ls .device
