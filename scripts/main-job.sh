#!/usr/bin/env bash
# The main job: set up, build, and run the example program on the selected
# backend (the embedded cpu backend unless TESSERA_BACKEND says otherwise).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/bin/tessera-info
./build/bin/tessera-streams-demo
