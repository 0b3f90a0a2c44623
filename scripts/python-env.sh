#!/usr/bin/env bash
# The Python environment wheels are built against on a machine of this kind: Python 3.12 (pyenv's,
# else the system's), torch 2.11.0 from PyPI (the native-cu130 profile's torch, a CUDA 13.0
# build), scikit-build-core, pytest. Idempotent: made once in build/torch-venv, remade only when
# this list changes. Prints nothing else on success.
set -euo pipefail
cd "$(dirname "$0")/.."

torch_version=2.11.0
python=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.*/bin/python3.12 2>/dev/null | tail -1 || true)
python=${python:-$(command -v python3.12 || command -v python3)}
venv=build/torch-venv
stamp=$venv/.requirements
wanted="torch==$torch_version scikit-build-core==1.1.2 pytest numpy ninja"
if [[ ! -x $venv/bin/python || ! -f $stamp || "$(cat "$stamp")" != "$wanted" ]]; then
  echo "python-env: installing $wanted into $venv ($python)"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check $wanted
  printf '%s' "$wanted" >"$stamp"
fi
