#!/usr/bin/env bash
# The Python package on a machine without a GPU: build the wheel against torch from PyPI with
# the CUDA 13.0 toolkit (sm_80 + sm_90a, to keep CI short), check it with sagebuild
# verify-wheel (including --import-test: a fresh venv, the wheel installed, imported), and run
# the CPU tests against the installed wheel. Needs sagebuild built first (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

torch_version=2.11.0   # the native-cu130 profile's torch (matrix.yaml)
python=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.*/bin/python3.12 2>/dev/null | tail -1 || true)
python=${python:-$(command -v python3.12 || command -v python3)}
venv=build/torch-venv
stamp=$venv/.requirements
wanted="torch==$torch_version scikit-build-core==1.1.2 pytest numpy ninja"
if [[ ! -x $venv/bin/python || ! -f $stamp || "$(cat "$stamp")" != "$wanted" ]]; then
  echo "test-python: installing $wanted into $venv ($python)"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check $wanted
  printf '%s' "$wanted" >"$stamp"
fi

nvcc_dir=$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")
export PATH=$nvcc_dir:$PATH
rm -rf build/wheelhouse
TORCH_CUDA_ARCH_LIST="8.0;9.0a" "$venv/bin/python" -m pip wheel -q --disable-pip-version-check \
  --no-build-isolation --no-deps -w build/wheelhouse ./python
wheel=$(ls build/wheelhouse/sageattention-*.whl)
echo "test-python: built $(basename "$wheel")"

# Not renamed or recorded yet (that is sagebuild build's job): P001/N002/B004 are expected here.
build/ci/tools/sagebuild/sagebuild verify-wheel --ignore P001,N002,B004 \
  --import-python "$venv/bin/python" "$wheel"

rm -rf build/wheel-site
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps --target build/wheel-site "$wheel"
(cd build && PYTHONPATH="$PWD/wheel-site" "$PWD/torch-venv/bin/python" -m pytest -q -p no:cacheprovider \
  ../python/tests)
