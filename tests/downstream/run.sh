#!/usr/bin/env bash
# Installs the built ziggurat (shared or static) into a scratch prefix, then builds and runs a
# separate project against it twice: through find_package(ziggurat) and through pkg-config; where
# it has the MPI component, an MPI application that finds it (find_package COMPONENTS mpi) on 2
# ranks; then checks what the installation holds.
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
static=()
if grep -q BUILD_SHARED_LIBS:BOOL=OFF "$build/CMakeCache.txt"; then static=(--static); fi
step pkg-config-flags pkg-config "${static[@]}" --cflags --libs ziggurat
flags=$(pkg-config "${static[@]}" --cflags --libs ziggurat)
libdir=$(pkg-config --variable=libdir ziggurat)
# The .pc leaves the standard to the consumer: C++17 is given here as a user would.
step pkg-config c++ -std=c++17 "$here/main.cpp" -o "$work/downstream-pkg-config" $flags -Wl,-rpath,"$libdir"
"$work/downstream-pkg-config"

if [ -n "$(find "$work/prefix" -name 'libziggurat_mpi.*' -print -quit)" ]; then
  step configure-mpi cmake -S "$here/mpi" -B "$work/build-mpi" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release
  step build-mpi cmake --build "$work/build-mpi"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 "$work/build-mpi/downstream_mpi"
fi

# What a user installs depends only on what users need: no benchmark peer (ViennaCL) in the
# library or the tool, no path into the source tree, and the benchmarks only as their own
# component.
source_dir=$(cd "$here/../.." && pwd)
checked=0
tool=()
if grep -q ZIGGURAT_BUILD_TOOLS:BOOL=ON "$build/CMakeCache.txt"; then tool=("$work/prefix/bin/ziggurat"); fi
for file in "${tool[@]}" $(find "$work/prefix" -name 'libziggurat.so*' -type f -o -name 'libziggurat.a' -type f); do
  [ -f "$file" ] || { echo "FAILED: $file is not installed"; exit 1; }
  checked=$((checked + 1))
  # ViennaCL's code, by its namespace in symbols and type names
  if grep -qa -e 'viennacl::' -e '8viennacl' "$file"; then echo "FAILED: $file contains ViennaCL's code"; exit 1; fi
  if grep -qa "$source_dir" "$file"; then echo "FAILED: $file points into the source tree $source_dir"; exit 1; fi
done
[ "$checked" -ge $((${#tool[@]} + 1)) ] || { echo "FAILED: no installed library found to check"; exit 1; }
if [ -e "$work/prefix/libexec/ziggurat/ziggurat-bench" ]; then
  echo "FAILED: the default installation holds the benchmarks (an optional component)"
  exit 1
fi
if grep -q ZIGGURAT_BUILD_BENCH:BOOL=ON "$build/CMakeCache.txt"; then
  step install-bench cmake --install "$build" --prefix "$work/prefix" --component bench
  [ -x "$work/prefix/libexec/ziggurat/ziggurat-bench" ] && [ -f "$work/prefix/libexec/ziggurat/cusparse_spmm.py" ] ||
    { echo "FAILED: the bench component did not install ziggurat-bench and its script"; exit 1; }
  "$work/prefix/bin/ziggurat" bench --help >/dev/null || { echo "FAILED: the installed tool cannot run the benchmarks"; exit 1; }
fi
echo "downstream: the installed package links no benchmark peer and points nowhere into the source tree"
