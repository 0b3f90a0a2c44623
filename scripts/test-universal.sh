#!/usr/bin/env bash
# The universal (stable-ABI) wheel on a machine without a GPU (docs/build.md, "Universal wheels"):
#   1. built once by `sagebuild build --entry` against torch 2.10, the stable ABI's target;
#      it must come out as py3-none-manylinux_2_28_x86_64 and pass every verify-wheel check;
#   2. installed into environments with torch 2.10, torch 2.11 and the newest torch on PyPI,
#      each with its own CUDA runtime from PyPI: the import check there, then the package's CPU
#      tests (the operator registered, torch.compile(fullgraph=True) through the fake
#      implementation, the fallback to SDPA) against the installed wheel;
#   3. judged by sagebuild and by auditwheel, which must agree (tests/wheels/manylinux_verdict_check.py);
#   4. served by `sagebuild index` and installed from with real pip (tests/universal_index_check.py):
#      the universal wheel for torch >= 2.10, the per-torch one for torch 2.9, refused with 2.9;
#   5. the per-torch binding in one wheel for every Python (abi per-torch-py3, torch 2.11 + CUDA
#      13.0, the kernels from step 1's cache): py3-none-manylinux_2_28_x86_64, every check passed
#      (B005: no libpython, no CPython API symbol; M003: torch==2.11.*), and it imports with torch
#      2.11.
# Needs sagebuild built (scripts/test.sh) and the per-torch wheel of scripts/test-python.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
sb=build/ci/tools/sagebuild/sagebuild
entry=linux-sage2-universal-pytorch210-cu130

bash scripts/universal-envs.sh  # torch 2.10, the newest and 2.9 (made once)
venv29=build/torch-2.9-venv

rm -rf build/universal-dist
"$sb" build --entry "$entry" --python-env build/torch-2.10-venv/bin/python --dist build/universal-dist \
  --cache-dir build/sagebuild-cache
wheel=$(ls build/universal-dist/*.whl)
case $wheel in
  *-2100.130-py3-none-manylinux_2_28_x86_64.whl) ;;
  *) echo "test-universal: expected a py3-none manylinux_2_28 wheel, got $wheel" >&2; exit 1 ;;
esac
"$sb" verify-wheel --expect-entry "$entry" "$wheel"

for env in build/torch-2.10-venv build/torch-venv build/torch-newest-venv; do
  torch=$("$env/bin/python" -c 'import importlib.metadata as m; print(m.version("torch"))')
  echo "== the universal wheel with torch $torch"
  "$sb" verify-wheel --select I001 --import-python "$env/bin/python" "$wheel"
  rm -rf build/universal-site
  "$env/bin/pip" install -q --disable-pip-version-check --no-deps --target build/universal-site "$wheel"
  (cd build && PYTHONPATH="$PWD/universal-site" "$PWD/${env#build/}/bin/python" -m pytest -q -p no:cacheprovider \
    ../python/tests)
done

per_torch=$(ls build/ci-dist/sageattention-*-cp312-*.whl)
# sagebuild's manylinux verdict on both real wheels equals auditwheel's.
build/pytools/bin/python tests/wheels/manylinux_verdict_check.py "$sb" "$per_torch" "$wheel"
build/torch-venv/bin/python tests/universal_index_check.py "$sb" "$wheel" "$per_torch" \
  "$venv29/bin/python" build/torch-venv/bin/python build/torch-newest-venv/bin/python

py3_entry=linux-sage2-pytorch211-cu130-python3
rm -rf build/py3-dist
"$sb" build --entry "$py3_entry" --python-env build/torch-venv/bin/python --dist build/py3-dist \
  --cache-dir build/sagebuild-cache
py3_wheel=$(ls build/py3-dist/*.whl)
case $py3_wheel in
  *-2110.130-py3-none-manylinux_2_28_x86_64.whl) ;;
  *) echo "test-universal: expected a py3-none per-torch wheel, got $py3_wheel" >&2; exit 1 ;;
esac
"$sb" verify-wheel --expect-entry "$py3_entry" --import-python build/torch-venv/bin/python "$py3_wheel"
