#!/usr/bin/env bash
# Each test of some conformance areas in a process of its own.  The
# whole-area run shares one runtime between the tests, so a test can pass
# only because an earlier one warmed the device: on vulkan, a first
# Stream_WriteTimestamp calibrated the clock through the queue and waited
# behind a gated kernel until the gate timed out; it passed in the area
# because WriteTimestampOnAnIdleStream ran first.
#   usage: each_test_alone.sh [--variant PLUGIN.NAME=VALUE]... CTS BACKEND SUITE...
# Every test runs once as the plugin comes, then once more per --variant
# (a plugin option, e.g. vulkan.test_mask_features=VK_EXT_calibrated_timestamps).
# Exits 77 (ctest SKIP) when the backend is not available here.
set -u
variants=("")
while [[ $# -gt 0 && $1 == --variant ]]; do
  variants+=("$2")
  shift 2
done
if [[ $# -lt 3 ]]; then
  echo "usage: each_test_alone.sh [--variant PLUGIN.NAME=VALUE]... CTS BACKEND SUITE..." >&2
  exit 64
fi
CTS=$1 BACKEND=$2
shift 2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$CTS" --backend "$BACKEND" --cts-probe "$T/probe.json" >/dev/null 2>&1
if ! grep -q '"devices": \[$' "$T/probe.json" 2>/dev/null; then
  echo "backend $BACKEND not available: skipped"
  cat "$T/probe.json" 2>/dev/null
  exit 77
fi
failed=0 ran=0
for suite in "$@"; do
  tests=$("$CTS" --gtest_list_tests --gtest_filter="$suite.*" | awk '/^[^ ]/ {s=$1} /^  / {print s $1}')
  [[ -n "$tests" ]] || { echo "FAIL: no tests in suite $suite"; exit 1; }
  for variant in "${variants[@]}"; do
    opt=()
    [[ -n "$variant" ]] && opt=(--plugin-option "$variant")
    for t in $tests; do
      ran=$((ran + 1))
      if ! "$CTS" --backend "$BACKEND" "${opt[@]}" --cts-child-results="$T/r.jsonl" \
           --gtest_filter="$t" >"$T/log" 2>&1; then
        echo "FAIL: $t alone${variant:+ (with $variant)}:"
        grep -v '^\[ *RUN\|^$' "$T/log" | tail -20
        failed=$((failed + 1))
      fi
    done
  done
done
echo "$ran runs on $BACKEND, $failed failed"
[[ $failed -eq 0 ]]
