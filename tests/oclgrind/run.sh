#!/usr/bin/env bash
# Runs every kernel under Oclgrind with its data-race and API checks, and its uninitialised-value
# check where Oclgrind can follow the transfers, on small sizes: the device tests of the
# "oclgrind" suite (cold program cache, then the quick ones again from the warm cache) and the CLI.
# FAILS if Oclgrind reports anything at all.
#   run.sh OCLGRIND DEVICE_TESTS CLI WORK [PART]
# PART runs one part (ctest runs each as an entry of its own, in parallel, each with its own WORK):
# lists (every case of the suite is in a part's list), whole-buffers, rectangular, ebe, ebe-factor,
# ebe-storage, cli-heat, cli-poisson, cli-spmm, cli-solve, cli-modes, cli-wave. Without PART, all.
set -euo pipefail
oclgrind=$1 tests=$2 cli=$3 work=$4 part=${5:-all}
all_parts=(lists whole-buffers rectangular ebe ebe-factor ebe-storage cli-heat cli-poisson cli-spmm cli-solve cli-modes
           cli-wave)
if [ "$part" != all ] && [[ " ${all_parts[*]} " != *" $part "* ]]; then
  echo "FAILED: no part '$part' (the parts: ${all_parts[*]})"
  exit 1
fi
rm -rf "$work" && mkdir -p "$work"
export ZIGGURAT_CACHE_DIR="$work/cache"
unset ZIGGURAT_DEVICE  # under Oclgrind its simulated device is the only one
# Whether to run PART: every part when none is named.
in_part() { [ "$part" = all ] || [ "$part" = "$1" ]; }

runs=0
checks=(--data-races --uninitialized --check-api)
# check COMMAND...: runs it under Oclgrind; expected_status=STATUS before it names an exit status other than 0.
check() {
  runs=$((runs + 1))
  local log="$work/run$runs.log" pipe="$work/run$runs.pipe" status=0 keep reader
  echo "+ oclgrind ${checks[*]} $*"
  # Oclgrind 21.10 reopens its --log file, emptying it, for every OpenCL context a process makes,
  # and stops reporting after 1000 errors: its reports go through a pipe, which nothing can empty,
  # with no cap, so that every one is kept. The held write end keeps the reader going between
  # Oclgrind's opens.
  mkfifo "$pipe"
  cat "$pipe" > "$log" &
  reader=$!
  exec {keep}>"$pipe"
  "$oclgrind" "${checks[@]}" --max-errors 1000000 --log "$pipe" "$@" || status=$?
  exec {keep}>&-
  wait "$reader"
  rm -f "$pipe"
  if [ "$status" -ne "${expected_status:-0}" ] || [ -s "$log" ]; then
    echo "FAILED: Oclgrind (exit status $status) reported problems in: $*"
    head -c 20000 "$log"
    exit 1
  fi
}

# The device tests whose transfers move whole buffers, which Oclgrind's uninitialised-value check
# follows: with it, on a cold program cache; then those but the in-device heat again, their programs
# (calibration, stream, user kernel, sparse products) loaded from the warm cache. Every kernel runs
# in the cold pass; the warm pass checks programs loaded from Oclgrind's binaries, which needs no
# second run of the heat grids (65 of the 70 s of a pass).
quick_whole_buffers='the calibration kernels*,programs are built*,device capabilities*,a context has three*'
quick_whole_buffers+=',pinned host memory*,a user kernel*,sparse products*'
whole_buffers="$quick_whole_buffers,in-device heat*"
rectangular='pyramid passes*,Poisson sweeps*,wave step*,3D wave step*'
# Every case of the suite is in one of the lists (or is an EBE case, below).
cases() { "$tests" --list-test-cases --test-suite=oclgrind "$@" | grep -vc '^\[doctest\]\|^=*$'; }
if in_part lists; then
  listed=$(( $(cases --test-case="$whole_buffers") + $(cases --test-case="$rectangular") + $(cases --test-case='EBE*') ))
  if [ "$listed" -ne "$(cases)" ]; then
    echo "FAILED: $(cases) test cases in the oclgrind suite, $listed in this script's lists: add the new ones"
    exit 1
  fi
  echo "Oclgrind: the $listed test cases of the oclgrind suite are in the lists"
  # ctest's entries (tests/CMakeLists.txt) name the parts: each must be one of them.
  if [ -n "${ZIGGURAT_OCLGRIND_PARTS:-}" ] && [ "$ZIGGURAT_OCLGRIND_PARTS" != "${all_parts[*]}" ]; then
    echo "FAILED: ctest runs the parts '$ZIGGURAT_OCLGRIND_PARTS', this script has '${all_parts[*]}'"
    exit 1
  fi
fi
if in_part whole-buffers; then
  check "$tests" --test-suite=oclgrind --test-case="$whole_buffers"
  check "$tests" --test-suite=oclgrind --test-case="$quick_whole_buffers"
fi
# The pyramid passes (heat, Poisson) and the waves move rows and halos by rectangular and offset
# copies. Oclgrind 21.10's uninitialised-value check loses track of those: a host copy into a
# buffer replaces the buffer's whole record with one as large as the copy, so what a kernel writes
# there afterwards reads as uninitialised (every result equals the in-core run's and the CPU
# reference's on every device). They run with the race and API checks.
checks=(--data-races --check-api)
# Once, on a cold cache: loading from the warm one is checked with the whole buffers above.
if in_part rectangular; then
  check "$tests" --test-suite=oclgrind --test-case="$rectangular"
fi
# The element-by-element kernels, the block products and (below) the eigen-solver: built without
# optimisation under Oclgrind, because Oclgrind 21.10 cannot interpret the `freeze` instruction its
# optimiser emits for their index arithmetic; and without the uninitialised-value check, which
# flags every read of Y by the scatter's additions although a fill kernel (which that check does
# see elsewhere) wrote all of Y just before and every result matches the host reference.
checks=(--data-races --check-api)
if in_part ebe; then
  OCLGRIND_BUILD_OPTIONS=-cl-opt-disable check "$tests" --test-suite=oclgrind --test-case='EBE*'
fi
# The elements' factoring (ebe_factor.cl; the tensor layout's, tested alone on every device) moves
# whole buffers: again with the uninitialised-value check.
checks=(--data-races --uninitialized --check-api)
if in_part ebe-factor; then
  OCLGRIND_BUILD_OPTIONS=-cl-opt-disable check "$tests" --test-suite=oclgrind --test-case='EBE: factoring*'
fi
# The tensor layout's reordering of element matrices (ebe_storage.cl) runs only where that layout
# does (NVIDIA's tensor cores): here it runs alone through oclgrind-kernel, 3 work-groups over 5
# elements of 36 values in reversed order, with the data-race and uninitialised-value checks, and
# every value it writes is checked.
if in_part ebe-storage; then
  storage="$work/ebe_storage" lib="$(dirname "$0")/../../lib"
  mkdir -p "$storage"
  cat "$lib/base/prologue.cl" "$lib/ops/ebe_storage.cl" > "$storage/kernel.cl"
  python3 - "$storage" <<'PY'
import sys
d = sys.argv[1]
with open(d + "/kernel.sim", "w") as f:
    f.write(d + "/kernel.cl\nebe_storage_order\n96 1 1\n32 1 1\n\n<size=4 uint>\n5\n\n")
    f.write("<size=1440 double dump>\n" + " ".join(str(float(v)) for v in range(180)) + "\n\n")
    f.write("<size=72 ushort>\n" + " ".join(str(35 - i) for i in range(36)) + "\n")
PY
  runs=$((runs + 1))
  echo "+ ${oclgrind}-kernel --data-races --uninitialized $storage/kernel.sim"
  "${oclgrind}-kernel" --data-races --uninitialized --log "$storage/log" \
    --build-options "-DPACKED=36 -DREAL=double -DREAL_IS_DOUBLE=1" "$storage/kernel.sim" > "$storage/out"
  if [ -s "$storage/log" ] || ! python3 - "$storage/out" <<'PY'
import re, sys
values = {int(i): float(v) for i, v in re.findall(r"matrices\[(\d+)\] = (\S+)", open(sys.argv[1]).read())}
sys.exit(0 if values == {36 * e + i: 36 * e + 35 - i for e in range(5) for i in range(36)} else 1)
PY
  then
    echo "FAILED: ebe_storage_order under Oclgrind (reports in $storage/log, result in $storage/out)"
    head -c 20000 "$storage/log"
    exit 1
  fi
fi
# The CLI plans with a saved PoCL profile: calibrating under the simulator would take hours. Its
# heat solver moves rows by rectangular transfers and keeps the grid in mapped (pinned) host
# memory; Oclgrind 21.10's uninitialised-value check does not see those writes and reports every
# value they bring, so the CLI runs without it (the device tests of whole buffers run with it).
profile="$(dirname "$0")/profile.json"
checks=(--data-races --check-api)
# --depth 1: the simulator reports a GPU, whose default would tune the depth (heat steps, Poisson
# sweeps) on a grid of 16 M nodes (the device tests above run the blocked kernels).
if in_part cli-heat; then
  check "$cli" heat --profile "$profile" --size 37x29 --steps 5 --depth 1
  check "$cli" heat --profile "$profile" --size 5x9 --steps 3 --precision f64 --depth 1
  check "$cli" heat --profile "$profile" --size 45x21 --steps 5 --mode block --height 2 --device-memory 24KiB --depth 1
  check "$cli" heat --profile "$profile" --size 9x7x11 --steps 4 --mode strip --height 2 --device-memory 40KiB --depth 1
fi
# The Poisson solver in core and in strip passes (the stopping test's reduction included); they stop
# at --max-sweeps above --tol, the exit status 2 of a run that did not reach its tolerance.
if in_part cli-poisson; then
  expected_status=2 check "$cli" poisson --profile "$profile" --size 9x7x12 --problem manufactured --max-sweeps 6 --tol 1e-9 --mode incore --height 4 --depth 1 --quiet
  expected_status=2 check "$cli" poisson --profile "$profile" --size 11x5x13 --problem manufactured --max-sweeps 5 --tol 1e-9 --mode strip --height 2 --device-memory 40KiB --depth 1 --quiet
fi
data="$(dirname "$0")/../data/matrices"
# Sparse products with explicit kernels (the automatic choice would time every variant).
if in_part cli-spmm; then
  check "$cli" spmm --matrix "$data/can___24.mtx" --block 2 --kernel group --vectors 3 --repeat 1
  check "$cli" spmm --matrix "$data/west0067.mtx" --format csr --kernel multirow --lanes 2 --repeat 1
  check "$cli" spmm --matrix "$data/bcsstk01.mtx" --format dia --precision f64 --repeat 1
fi
# The Krylov solvers: vector operations (4 vectors: their rows read 4 values at a time), ILU(0)
# factorised level by level with level-scheduled solves (and Jacobi sweeps), the colour ordering's renumbering on the
# device, block Jacobi, Jacobi; every method; the rule's product kernel (the automatic choice
# would time every variant). Without the uninitialised-value check here too:
# Oclgrind 21.10 marks the bytes of a host write at a non-zero offset as still uninitialised (a
# 20-line program with one clEnqueueWriteBuffer at offset 8 shows it), and the solvers write their
# coefficients into slots of a ring buffer.
if in_part cli-solve; then
  check "$cli" solve --generate 3x3x2 --block 2 --system convection --exact random --sweep levels --vectors 4 --kernel rule --quiet
  check "$cli" solve --generate 3x3x2 --block 2 --system convection --exact random --sweep sequential --vectors 2 --kernel rule --quiet
  # Jacobi sweeps: auto's choice for a dominant scalar system (Oclgrind is a GPU: counts chosen from
  # the factors' contraction), and a fixed count with blocks and two vectors.
  check "$cli" solve --generate 3x3x2 --block 1 --system convection --exact random --kernel rule --quiet
  check "$cli" solve --generate 3x3x2 --block 2 --system convection --exact random --ordering natural --sweep jacobi --jacobi-sweeps 3 --vectors 2 --kernel rule --quiet
  check "$cli" solve --generate 3x2x2 --block 3 --ordering colours --method gmres --restart 4 --precision f32 --rtol 1e-5 --kernel rule --quiet
  check "$cli" solve --generate 3x3x2 --block 2 --symmetric --method cg --preconditioner block-jacobi --vectors 2 --kernel rule --quiet
  check "$cli" solve --matrix "$data/bcsstk01.mtx" --block 5 --preconditioner jacobi --method cg --unfused --max-iterations 400 --kernel rule --quiet
  # The sync-free sweeps communicate between work-groups through flags in device memory, by design;
  # Oclgrind 21.10 has no acquire/release model across work-groups and would report every read of a
  # published row as a race, so they run with the API checks only (their bits equal the
  # level-scheduled sweeps', which the device tests check on every device).
  checks=(--check-api)  # this run only
  check "$cli" solve --generate 3x3x2 --block 2 --system convection --exact random --sweep sync-free --kernel rule --quiet
  checks=(--data-races --check-api)
fi
# The eigen-solver: element-by-element products and projections, CG on the assembled stiffness with
# ILU(0) in colour order (level-scheduled sweeps), deflated by the Ritz vectors (block products);
# built without optimisation, as the EBE tests above. Two subspace iterations, the second's CG
# deflated by the first's Ritz vectors: every kernel of the eigen-solve runs, in a third of the CG
# iterations of the converged run (6 subspace iterations); a run stopped short of its tolerance
# exits 2. Three bricks in a row (36 free DOFs, 4 vectors) still take two element colours, in
# 27 CG iterations where five bricks took 43 (PoCL, the first run).
if in_part cli-modes; then
  OCLGRIND_BUILD_OPTIONS=-cl-opt-disable expected_status=2 check "$cli" modes --mesh cantilever:1x0.2x0.2:3,1,1 --modes 2 \
    --scatter colouring --max-iterations 2 --quiet
  OCLGRIND_BUILD_OPTIONS=-cl-opt-disable expected_status=2 check "$cli" modes --mesh cantilever:1x0.2x0.2:3,1,1 --modes 2 \
    --scatter colouring --cg-operator matrix-free --max-iterations 2 --quiet
fi
# Elastic waves: the fused step, the source and the receivers.
if in_part cli-wave; then
  check "$cli" wave --size 14x10 --steps 6 --absorbing 2 --quiet
  check "$cli" wave --dims 3 --size 7x6x8 --steps 4 --absorbing 1 --source-kind force --quiet
fi
echo "Oclgrind ($part): $runs runs, no problems reported"
