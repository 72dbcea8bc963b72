#!/usr/bin/env bash
# Builds the Matrix Market fuzzer with clang (libFuzzer, AddressSanitizer, UndefinedBehaviorSanitizer
# and unsigned overflow checks) and runs it on a copy of the seeds (corpus/ and the real matrices in
# tests/data) for a fixed number of inputs from a fixed random seed, so that a pass is the same on
# any machine at any load. FAILS on any crash, sanitizer report, leak, slow input or memory blow-up;
# libFuzzer prints the input and leaves it in the work folder.
#   run.sh CLANG++ SOURCE_DIR GENERATED_INCLUDE_DIR WORK_DIR [RUNS [SEED]]
set -euo pipefail
cxx=$1 source=$2 generated=$3 work=$4 runs=${5:-50000} seed=${6:-38}
here="$source/tests/fuzz"
rm -rf "$work" && mkdir -p "$work/corpus"
cp "$here/corpus/"* "$source/tests/data/matrices/"*.mtx "$work/corpus/"
"$cxx" -std=c++17 -O1 -g -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined,unsigned-integer-overflow -fno-sanitize-recover=all \
  -I"$source/include" -I"$generated" -I"$source/lib" \
  "$here/fuzz_matrix_market.cpp" "$source/lib/io/matrix_market.cpp" "$source/lib/base/files.cpp" "$source/lib/base/host_memory.cpp" "$source/lib/base/system_error.cpp" "$source/lib/base/host_cores.cpp" \
  "$source/lib/matrix/sparse.cpp" "$source/lib/base/large_arrays.cpp" \
  -lOpenCL -o "$work/fuzz_matrix_market"  # error.hpp's OpenCL bindings need the loader
cd "$work"  # where libFuzzer writes crash-* files
./fuzz_matrix_market -runs="$runs" -seed="$seed" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
  -dict="$here/matrix_market.dict" -print_final_stats=1 corpus
