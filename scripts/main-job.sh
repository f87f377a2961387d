#!/usr/bin/env bash
# The main job: set up, build, and run on the selected backend (the embedded
# cpu backend unless TESSERA_BACKEND says otherwise): the fused MLP compiled
# from Graph IR and checked against a reference, then the streams demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/bin/tessera-info
./build/bin/tessera-run examples/mlp.mlir
./build/bin/tessera-streams-demo
