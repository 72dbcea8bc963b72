#!/usr/bin/env bash
# Configures and builds one variant of ziggurat into build/<name>: build.sh NAME [CMAKE ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1
shift
mkdir -p build
cmake -S . -B "build/$name" "$@" >"build/$name.configure.log" 2>&1 || { cat "build/$name.configure.log"; exit 1; }
cmake --build "build/$name" -j "$(nproc)"
