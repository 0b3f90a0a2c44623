#!/usr/bin/env bash
# On the GPU machine: build the wheel against the machine's torch, install it into a fresh venv,
# run the GPU tests, and (when a sagebuild binary is given) verify the wheel with --import-test.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build/gpu-results}
mkdir -p "$out" /tmp/wheelhouse
export PATH=/usr/local/cuda/bin:$PATH
python3 -m pip wheel -q --no-build-isolation --no-deps -w /tmp/wheelhouse python 2>&1 | tail -20
wheel=$(ls /tmp/wheelhouse/sageattention-*.whl | head -1)
echo "built: $wheel"
python3 -m venv --system-site-packages /tmp/sage-venv
/tmp/sage-venv/bin/python -m pip install -q --no-deps --force-reinstall "$wheel"
(cd /tmp && PYTHONUNBUFFERED=1 /tmp/sage-venv/bin/python -m pytest -q -m gpu "$OLDPWD/python/tests" \
   -p no:cacheprovider 2>&1 | tail -25) | tee "$out/pytest-gpu.log"
if [[ -n ${SAGEBUILD:-} ]]; then
  "$SAGEBUILD" verify-wheel --ignore P001,N002,B004 --import-python "$(command -v python3)" "$wheel" | tee "$out/verify.log"
fi
