#!/usr/bin/env bash
# On the GPU machine: build the wheel for this machine's torch with `sagebuild build --env
# current` (SAGEBUILD: a sagebuild binary, e.g. the self-contained release build; without it,
# plain pip wheel), or take a wheel built elsewhere (WHEEL: its path, e.g. the universal wheel
# built on the CPU machine and carried here), install it into a fresh directory, and run the GPU
# tests against it.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build/gpu-results}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
if [[ -n ${WHEEL:-} ]]; then
  wheel=$WHEEL
elif [[ -n ${SAGEBUILD:-} ]]; then
  rm -rf build/gpu-dist
  # The matrix entry's own architectures (the image's TORCH_CUDA_ARCH_LIST would override them).
  env -u TORCH_CUDA_ARCH_LIST "$SAGEBUILD" build --env current --python "$(command -v python3)" \
    --dist build/gpu-dist 2>&1 | tail -12 | tee "$out/build.log"
  wheel=$(ls build/gpu-dist/sageattention-*.whl 2>/dev/null | head -1)
  [[ -n $wheel ]] && "$SAGEBUILD" verify-wheel --import-python "$(command -v python3)" "$wheel" | tail -3
else
  mkdir -p /tmp/wheelhouse
  python3 -m pip wheel -q --no-build-isolation --no-deps -w /tmp/wheelhouse ./python 2>&1 | tail -20
  wheel=$(ls /tmp/wheelhouse/sageattention-*.whl | head -1)
fi
[[ -n ${wheel:-} ]] || { echo "no wheel was built"; exit 1; }
echo "testing: $wheel"
# A fresh directory holding only the installed wheel, on top of the machine's torch.
rm -rf /tmp/sage-site && python3 -m pip install -q --no-deps --target /tmp/sage-site "$wheel"
(cd /tmp && PYTHONPATH=/tmp/sage-site:${PYTHONPATH:-} PYTHONUNBUFFERED=1 python3 -m pytest -q -m gpu \
   "$OLDPWD/python/tests" -p no:cacheprovider 2>&1 | tail -25) | tee "$out/pytest-gpu${LOG_SUFFIX:-}.log"

if [[ -n ${BENCH:-} ]]; then
  (cd /tmp && PYTHONPATH=/tmp/sage-site:${PYTHONPATH:-} PYTHONUNBUFFERED=1 python3 "$OLDPWD/bench/sageattn_bench.py" \
     --json "$out/bench-sageattn.json" --png "$out/bench-sageattn.png") | tee "$out/bench-sageattn.log"
fi
