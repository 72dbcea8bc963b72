#!/usr/bin/env bash
# Once per checkout, before using the GPU machine (see ../shared/device/): copies the shared
# OpenCL packages into .device/ and adds what the GPU machine also lacks: the header-only
# CLI11, nlohmann-json and Eigen, METIS, and libpng with the zlib headers its png.h includes, downloaded here
# as Debian packages, and pybind11 with pytest for the Python module. gpu-env.sh unpacks them all there.
set -euo pipefail
cd "$(dirname "$0")/.."
../shared/device/prepare.sh
(cd .device && apt-get download -qq libcli11-dev nlohmann-json3-dev libeigen3-dev libmetis-dev libmetis5 libpng-dev libpng16-16 zlib1g-dev \
  pybind11-dev python3-pytest python3-pluggy python3-iniconfig python3-packaging)
# EBISU (neozhang307/EBISU-ICS23, ICS 2023), the temporal-blocking peer of `ziggurat-bench heat`:
# its source at a fixed commit, from a git mirror of that repository on this machine, into
# .device/peers/ebisu, where bench/src/heat_peers.py builds it with nvcc on the GPU machine.
ebisu_git=${ZIGGURAT_EBISU_GIT:-/work/.mirror/neozhang307+EBISU-ICS23/repo}
ebisu_commit=dd3d84471cb64f504ad3019e29def10a3434599d
rm -rf .device/peers/ebisu
if git --git-dir="$ebisu_git" cat-file -e "$ebisu_commit^{commit}" 2>/dev/null; then
  mkdir -p .device/peers/ebisu
  git --git-dir="$ebisu_git" archive "$ebisu_commit" 2dstencil 3dstencil share LICENSE README.md |
    tar -x -C .device/peers/ebisu
  echo "neozhang307/EBISU-ICS23 ${ebisu_commit:0:12}" > .device/peers/ebisu/SNAPSHOT
else
  echo "no EBISU source (no git mirror holding $ebisu_commit at $ebisu_git; set ZIGGURAT_EBISU_GIT):" \
       "the EBISU peer of ziggurat-bench heat will answer unavailable" >&2
fi
ls .device
