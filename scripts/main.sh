#!/usr/bin/env bash
# The main job on a machine of this kind (CPU-only Linux, CUDA 13.0, pyenv Pythons): build the
# self-contained sagebuild, check matrix.yaml, then build every entry of this machine's profile,
# native-cu130, natively: the universal CUDA 13 wheel (the stable-ABI binding, built against
# torch 2.10: one py3-none wheel for torch 2.10 and later and every Python) and the per-torch
# wheels of torch 2.11 for Python 3.10-3.13. Each entry builds in its own environment (made once
# in ~/.cache/sagebuild), the kernels are compiled once into the kernel cache and linked by all
# five wheels, each wheel is named by the convention (manylinux_2_28 when its binaries earn it),
# its provenance recorded, verified (an import in a fresh venv included) and moved into dist/.
# Entries whose Python this machine lacks (a stock Debian/Ubuntu has one system Python) are
# skipped with how to get them (--skip-unavailable). Finally verify dist/ as a release manager
# would. A second run finds every wheel up to date.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-build-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
sb=build/release/tools/sagebuild/sagebuild

"$sb" --version
"$sb" validate
"$sb" matrix --profile native-cu130
"$sb" build --profile native-cu130 --jobs 2 --skip-unavailable
"$sb" verify-wheel --expect-profile native-cu130 dist/*.whl
