#!/usr/bin/env bash
# Installs the built ziggurat into a scratch prefix, then builds and runs a separate project
# against it twice: through find_package(ziggurat) and through pkg-config.
set -euo pipefail
build=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"

step() {  # step NAME COMMAND...: runs quietly, shows the log if it fails
  local log="$work/$1.log"
  shift
  "$@" >"$log" 2>&1 || { echo "FAILED: $*"; cat "$log"; exit 1; }
}

step install cmake --install "$build" --prefix "$work/prefix"
step configure cmake -S "$here" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release
step build cmake --build "$work/build"
"$work/build/downstream"

pc=$(find "$work/prefix" -name ziggurat.pc)
export PKG_CONFIG_PATH=$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
step pkg-config-flags pkg-config --cflags --libs ziggurat
flags=$(pkg-config --cflags --libs ziggurat)
libdir=$(pkg-config --variable=libdir ziggurat)
step pkg-config c++ "$here/main.cpp" -o "$work/downstream-pkg-config" $flags -Wl,-rpath,"$libdir"
"$work/downstream-pkg-config"
