#!/usr/bin/env bash
# Runs every kernel under Oclgrind with its data-race, uninitialised-value and API checks, on
# small sizes: the device tests of the "oclgrind" suite (twice: cold, then warm program cache)
# and the CLI. FAILS if Oclgrind reports anything at all.
set -euo pipefail
oclgrind=$1 tests=$2 cli=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
export ZIGGURAT_CACHE_DIR="$work/cache"
unset ZIGGURAT_DEVICE  # under Oclgrind its simulated device is the only one

runs=0
check() {
  runs=$((runs + 1))
  local log="$work/run$runs.log"
  echo "+ oclgrind $*"
  "$oclgrind" --data-races --uninitialized --check-api --log "$log" "$@"
  if [ -s "$log" ]; then
    echo "FAILED: Oclgrind reported problems in: $*"
    cat "$log"
    exit 1
  fi
}

check "$tests" --test-suite=oclgrind
check "$tests" --test-suite=oclgrind
check "$cli" heat --size 37x29 --steps 5
check "$cli" heat --size 5x9 --steps 3 --precision f64
echo "Oclgrind: $runs runs, no problems reported"
