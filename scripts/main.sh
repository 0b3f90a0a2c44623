#!/usr/bin/env bash
# The main job on a machine of this kind (CPU-only Linux, CUDA 13.0, pyenv Pythons): build the
# self-contained sagebuild, check matrix.yaml, and plan this machine's profile (native-cu130):
# its entries, their expected wheel names, and the Docker Bake file of the seeds' profiles.
# `sagebuild build --profile native-cu130` joins this script when the build backend lands
# (issue 6); until then this script stops at the plan and says so.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-build-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
sb=build/release/tools/sagebuild/sagebuild

"$sb" --version
"$sb" validate
"$sb" matrix --profile native-cu130
mkdir -p build
"$sb" bake -o build/docker-bake.json
echo "main: planned profile native-cu130; 'sagebuild build' (wheels into dist/) is not implemented yet"
