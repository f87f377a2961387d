#!/usr/bin/env bash
# Set up, build, and run every test (ctest).  CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
cd build
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 300
