#!/usr/bin/env bash
# Set up, build, and run every test (ctest).  CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# CI must run Vulkan, not skip it: vulkan_required fails without a usable
# vulkan device (lavapipe, installed above).  TESSERA_REQUIRE_VULKAN=OFF
# bash scripts/test.sh runs the suite on a machine that has no Vulkan.
TESSERA_REQUIRE_VULKAN=${TESSERA_REQUIRE_VULKAN:-ON} bash scripts/build.sh
cd build
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 300
cd ..
# The libFuzzer smoke run (docs/fuzzing.md): build-fuzz with clang-16, the
# five harness targets only (about 12 minutes cold on 2 cores), then every
# seed and regression input and 5 s of fuzzing per harness (about 20 s).
# TESSERA_FUZZ_SMOKE=OFF skips it.
if [[ ${TESSERA_FUZZ_SMOKE:-ON} != OFF ]]; then
  bash scripts/fuzz.sh --smoke
fi
# The sanitizer stage (scripts/sanitize-ci.sh): core-only builds (no MLIR)
#  - address: the unit tests and the cpu conformance suite under ASan +
#    UBSan + LSan (build-ci-address; TESSERA_SANITIZE_CONFORMANCE=OFF leaves
#    the suite out);
#  - thread: the unit tests under ThreadSanitizer (build-ci-thread).
# TESSERA_SANITIZE_CI=OFF skips it.
if [[ ${TESSERA_SANITIZE_CI:-ON} != OFF ]]; then
  TESSERA_SANITIZE_CONFORMANCE=${TESSERA_SANITIZE_CONFORMANCE:-ON} bash scripts/sanitize-ci.sh address thread
fi
