#!/usr/bin/env bash
# Each test of one conformance area in a process of its own, on the Vulkan
# plugin, with and without VK_EXT_calibrated_timestamps (masked by the
# plugin's test hook).  The whole-area run shares one runtime between the
# tests, so a test can pass only because an earlier one warmed the device
# (a first Stream_WriteTimestamp that calibrated the clock through the
# queue used to wait behind a gated kernel until the gate timed out; it
# passed in the area because WriteTimestampOnAnIdleStream ran first).
# Exits 77 (ctest SKIP) when lavapipe is not installed.
#   usage: vulkan_each_test_alone.sh TESSERA_CONFORMANCE SUITE [SUITE...]
set -u
CTS=$1
shift
if ! ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1; then
  echo "no lavapipe ICD (mesa-vulkan-drivers): skipped"; exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
failed=0 ran=0
for suite in "$@"; do
  tests=$("$CTS" --gtest_list_tests --gtest_filter="$suite.*" | awk '/^[^ ]/ {s=$1} /^  / {print s $1}')
  [[ -n "$tests" ]] || { echo "FAIL: no tests in suite $suite"; exit 1; }
  for mask in "" "VK_EXT_calibrated_timestamps"; do
    opt=()
    [[ -n "$mask" ]] && opt=(--plugin-option "vulkan.test_mask_features=$mask")
    for t in $tests; do
      ran=$((ran + 1))
      if ! "$CTS" --backend vulkan "${opt[@]}" --cts-child-results="$T/r.jsonl" \
           --gtest_filter="$t" >"$T/log" 2>&1; then
        echo "FAIL: $t alone${mask:+ (without $mask)}:"
        grep -v '^\[ *RUN\|^$' "$T/log" | tail -20
        failed=$((failed + 1))
      fi
    done
  done
done
echo "$ran runs, $failed failed"
[[ $failed -eq 0 ]]
