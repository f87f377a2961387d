#!/usr/bin/env bash
# ctest tessera_run.autotune: tessera-run --autotune searches and caches,
# a later run reuses the choice (TESSERA_LOG=debug says so), a corrupted
# entry is ignored with a warning, bad flags are refused; then an SPMD
# program (2 cpu devices) is tuned on its mesh, every trial checked on both
# devices, and fewer devices than its mesh is an error naming the count.
# No timing is asserted.
# usage: autotune_test.sh TESSERA_RUN PROGRAM SPMD_PROGRAM SCRATCH_DIR
set -u
run=$1 prog=$2 spmd=$3 dir=$4
export TESSERA_BACKEND=cpu TESSERA_CACHE_DIR=$dir
rm -rf "$dir"
fail() { echo "FAIL: $*"; echo "--- output:"; echo "$out"; exit 1; }

out=$("$run" "$prog" --autotune-space "tile-m=24,48 micro-m=4,6" --autotune-trials 3 --autotune-repeats 2 --iterations 1 2>&1) ||
  fail "the search failed"
echo "$out" | grep -q "autotune: best .* 3 trials (0 failed)" || fail "no summary of 3 trials"
echo "$out" | grep -q "cached in $dir/autotune/" || fail "not cached"
echo "$out" | grep -q "PASS" || fail "not checked"
entry=$(ls "$dir"/autotune/*.tat) || fail "no entry"

out=$(TESSERA_LOG=debug "$run" "$prog" --iterations 1 2>&1) || fail "the run after the search failed"
echo "$out" | grep -q "autotune cache hit .* looked up in" || fail "no debug line for the cached choice"

out=$("$run" "$prog" --autotune --iterations 1 2>&1) || fail "the second --autotune failed"
echo "$out" | grep -q "autotune: cached choice" || fail "the second --autotune searched again"

out=$(TESSERA_AUTOTUNE=off TESSERA_LOG=debug "$run" "$prog" --iterations 1 2>&1) || fail "TESSERA_AUTOTUNE=off run failed"
echo "$out" | grep -q "autotune cache hit" && fail "TESSERA_AUTOTUNE=off still used the cache"

sed -i 's/^schedule .*/schedule tile-m=8/' "$entry"   # an edit: the checksum no longer matches
out=$("$run" "$prog" --iterations 1 2>&1) || fail "a corrupted entry failed the run"
echo "$out" | grep -q "autotune cache entry .* is ignored: its checksum does not match" || fail "no warning for the corrupted entry"

out=$("$run" "$prog" --autotune --schedule "tile-m=16" 2>&1) && fail "--autotune with --schedule accepted"
out=$("$run" "$prog" --autotune-trials 0 2>&1) && fail "--autotune-trials 0 accepted"
out=$("$run" "$dir/x.tsp" --autotune 2>&1) && fail "--autotune of a .tsp accepted"
echo "$out" | grep -q "give its .mlir" || fail "no message for --autotune of a .tsp"
out=$("$run" "$prog" --autotune-space "tile-m" --iterations 1 2>&1) && fail "a bad space accepted"
echo "$out" | grep -q "write KEY=V1,V2" || fail "no message for the bad space"

# SPMD: the tensor-parallel MLP over 2 cpu devices.
rm -rf "$dir"
out=$(TESSERA_CPU_DEVICES=2 "$run" "$spmd" --autotune-space "tile-m=24,48 micro-m=4,6" --autotune-trials 3 \
        --autotune-repeats 2 --iterations 1 2>&1) || fail "the SPMD search failed"
echo "$out" | grep -q "autotune: best .* 3 trials (0 failed)" || fail "no summary of 3 SPMD trials"
echo "$out" | grep -q "verify: 2 devices, .*PASS" || fail "the SPMD run was not checked on 2 devices"
out=$(TESSERA_CPU_DEVICES=2 TESSERA_LOG=debug "$run" "$spmd" --iterations 1 2>&1) || fail "the SPMD run after the search failed"
echo "$out" | grep -q "autotune cache hit .* looked up in" || fail "no debug line for the cached SPMD choice"
out=$(TESSERA_CPU_DEVICES=1 "$run" "$spmd" --autotune --iterations 1 2>&1) && fail "a 2-device mesh tuned on 1 device"
echo "$out" | grep -q "needs 2 devices" || fail "no message naming the devices needed"
echo PASS
