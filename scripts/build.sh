#!/usr/bin/env bash
# Configures and builds Tessera into ${BUILD_DIR:-build} with Ninja.
# Extra arguments go to cmake (e.g. -DTESSERA_SANITIZE=thread).
# TESSERA_REQUIRE_VULKAN=ON (scripts/test.sh, i.e. CI) makes the ctest
# vulkan_required fail when the vulkan backend has no usable device; a plain
# build sets it OFF, so a developer machine without Vulkan skips those tests
# (even in a build tree that CI configured before).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} \
  -DTESSERA_REQUIRE_VULKAN=${TESSERA_REQUIRE_VULKAN:-OFF} "$@"
cmake --build "$BUILD_DIR" -j "$JOBS"
