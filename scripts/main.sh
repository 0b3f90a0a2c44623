#!/usr/bin/env bash
# The main job on a machine of this kind (CPU-only Linux, CUDA 13.0, pyenv Pythons): build the
# self-contained sagebuild, check matrix.yaml, show this machine's profile (native-cu130), then
# build the wheel of its Python 3.12 entry natively (torch 2.11 from PyPI, CUDA 13.0): named by
# the convention, provenance recorded, verified, in dist/. Finally verify dist/ as a release
# manager would.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-build-deps.sh
bash scripts/python-env.sh
cmake --preset release >/dev/null
cmake --build --preset release
sb=build/release/tools/sagebuild/sagebuild

"$sb" --version
"$sb" validate
"$sb" matrix --profile native-cu130
"$sb" build --env current --python build/torch-venv/bin/python
"$sb" verify-wheel --expect-profile native-cu130 dist/*.whl
