#!/usr/bin/env bash
# The torch environments scripts/test-universal.sh tests the universal wheel in, beside
# build/torch-venv (torch 2.11, which must exist: scripts/python-env.sh):
#   build/torch-2.10-venv     torch 2.10, the stable ABI's target (the wheel is built against it)
#   build/torch-newest-venv   the newest torch PyPI serves for Python 3.12 (what a user gets today)
#   build/torch-2.9-venv      torch 2.9, the release before the stable ABI, for pip's choice among
#                             the wheels (its CUDA 12.8 runtime is the pool's, shared with 2.10's)
# One after the other (they share CUDA runtime wheels in build/torch-runtime); each is made once
# (scripts/python-env.sh). scripts/test.sh runs this in the background while the C++ builds and
# tests run, since it is mostly downloading (~10 GB).
set -euo pipefail
cd "$(dirname "$0")/.."

newest=$(build/torch-venv/bin/python -m pip install --quiet --dry-run --ignore-installed --no-deps \
  --disable-pip-version-check --report - torch 2>/dev/null |
  build/torch-venv/bin/python -c 'import json, sys; print(json.load(sys.stdin)["install"][0]["metadata"]["version"])' ||
  true)
if [[ -z $newest ]]; then
  echo "universal-envs: cannot ask PyPI for the newest torch" >&2
  exit 1
fi
bash scripts/python-env.sh 2.10.0 build/torch-2.10-venv
bash scripts/python-env.sh "$newest" build/torch-newest-venv
bash scripts/python-env.sh 2.9.0 build/torch-2.9-venv
