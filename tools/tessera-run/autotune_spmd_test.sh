#!/usr/bin/env bash
# ctest tessera_run.autotune_spmd: --autotune of an SPMD program (the
# tensor-parallel MLP on 2 cpu devices): every trial runs the whole step on
# both devices, the result is checked, the choice is cached under the first
# device and a later run reuses it.  No timing is asserted.
# usage: autotune_spmd_test.sh TESSERA_RUN PROGRAM SCRATCH_DIR
set -u
run=$1 prog=$2 dir=$3
export TESSERA_BACKEND=cpu TESSERA_CACHE_DIR=$dir TESSERA_CPU_DEVICES=2
rm -rf "$dir"
fail() { echo "FAIL: $*"; echo "--- output:"; echo "$out"; exit 1; }

out=$("$run" "$prog" --autotune-space "tile-m=24,48 micro-m=4,6" --autotune-trials 3 --autotune-repeats 2 --iterations 1 2>&1) ||
  fail "the search failed"
echo "$out" | grep -q "autotune: best .* 3 trials (0 failed)" || fail "no summary of 3 trials"
echo "$out" | grep -q "cached in $dir/autotune/" || fail "not cached"
echo "$out" | grep -q "verify: 2 devices, .*PASS" || fail "not checked on 2 devices"

out=$(TESSERA_LOG=debug "$run" "$prog" --iterations 1 2>&1) || fail "the run after the search failed"
echo "$out" | grep -q "autotune cache hit .* looked up in" || fail "no debug line for the cached choice"

# Fewer devices than the mesh: a clear error, not a crash.
out=$(TESSERA_CPU_DEVICES=1 "$run" "$prog" --autotune --iterations 1 2>&1) && fail "a 2-device mesh tuned on 1 device"
echo "$out" | grep -q "needs 2 devices" || fail "no message naming the devices needed"
echo PASS
