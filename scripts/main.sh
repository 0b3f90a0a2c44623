#!/usr/bin/env bash
# The main job on a machine of this kind (CPU-only Linux, CUDA 13.0, pyenv Pythons): build the
# self-contained sagebuild, check matrix.yaml, then build every entry of this machine's profile,
# native-cu130 (torch 2.11 from PyPI, CUDA 13.0, Python 3.10-3.13), natively: each entry in its
# own environment (made once in ~/.cache/sagebuild), the kernels compiled once into the kernel
# cache and linked by all four wheels, each wheel named by the convention, its provenance
# recorded, verified (an import in a fresh venv included) and moved into dist/. Finally verify
# dist/ as a release manager would. A second run finds every wheel up to date.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-build-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
sb=build/release/tools/sagebuild/sagebuild

"$sb" --version
"$sb" validate
"$sb" matrix --profile native-cu130
"$sb" build --profile native-cu130 --jobs 2
"$sb" verify-wheel --expect-profile native-cu130 dist/*.whl
