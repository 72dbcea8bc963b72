#!/usr/bin/env bash
# Builds ziggurat as a static library (the library and its MPI component only), then runs
# run.sh's consumers against that installation: its CMake config and .pc must bring the static
# library's private dependencies (CLBlast, nlohmann_json, Threads, METIS) to the consumer's link.
# static.sh SOURCE WORK [CMAKE ARGS...]
set -euo pipefail
source_dir=$1 work=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
cmake -S "$source_dir" -B "$work/static-build" -DBUILD_SHARED_LIBS=OFF -DCMAKE_BUILD_TYPE=Release \
  -DZIGGURAT_BUILD_TOOLS=OFF -DZIGGURAT_BUILD_BENCH=OFF -DZIGGURAT_BUILD_TESTS=OFF -DZIGGURAT_PYTHON=OFF "$@" >"$work/static-configure.log" 2>&1 ||
  { echo "FAILED: configuring the static build"; cat "$work/static-configure.log"; exit 1; }
cmake --build "$work/static-build" -j "$(nproc)" >"$work/static-build.log" 2>&1 ||
  { echo "FAILED: building the static library"; tail -50 "$work/static-build.log"; exit 1; }
"$here/run.sh" "$work/static-build" "$work/consumers"
