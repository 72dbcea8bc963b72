#!/usr/bin/env bash
# Once per checkout, before using the GPU machine (see ../shared/device/): copies the shared
# OpenCL packages into .device/ and adds the header-only libraries the GPU machine also lacks
# (CLI11, nlohmann-json), downloaded here as Debian packages. gpu-env.sh unpacks them all there.
set -euo pipefail
cd "$(dirname "$0")/.."
../shared/device/prepare.sh
(cd .device && apt-get download -qq libcli11-dev nlohmann-json3-dev)
ls .device
