#!/usr/bin/env bash
# Configures and builds Tessera into ${BUILD_DIR:-build} with Ninja.
# Extra arguments go to cmake (e.g. -DTESSERA_SANITIZE=thread).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} "$@"
cmake --build "$BUILD_DIR" -j "$JOBS"
