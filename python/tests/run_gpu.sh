#!/usr/bin/env bash
# On the GPU machine: build the wheel against the machine's torch, install it into a fresh venv,
# run the GPU tests, and (when a sagebuild binary is given) verify the wheel with --import-test.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build/gpu-results}
mkdir -p "$out" /tmp/wheelhouse
export PATH=/usr/local/cuda/bin:$PATH
python3 -m pip wheel -q --no-build-isolation --no-deps -w /tmp/wheelhouse ./python 2>&1 | tail -20
wheel=$(ls /tmp/wheelhouse/sageattention-*.whl | head -1)
echo "built: $wheel"
# A fresh directory holding only the installed wheel, on top of the machine's torch.
rm -rf /tmp/sage-site && python3 -m pip install -q --no-deps --target /tmp/sage-site "$wheel"
(cd /tmp && PYTHONPATH=/tmp/sage-site:${PYTHONPATH:-} PYTHONUNBUFFERED=1 python3 -m pytest -q -m gpu \
   "$OLDPWD/python/tests" -p no:cacheprovider 2>&1 | tail -25) | tee "$out/pytest-gpu.log"
if [[ -n ${SAGEBUILD:-} ]]; then
  "$SAGEBUILD" verify-wheel --ignore P001,N002,B004 --import-python "$(command -v python3)" "$wheel" | tee "$out/verify.log"
fi
