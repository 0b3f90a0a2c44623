#!/usr/bin/env bash
# The Python package on a machine without a GPU, through sagebuild itself: `sagebuild build
# --env current` builds the wheel against torch 2.11 from PyPI with the CUDA 13.0 toolkit
# (sm_80 to sm_120, the entry's list), names it, records provenance and verifies it; then
# verify-wheel --import-python installs it into a fresh venv and imports it; then the CPU tests
# run against the installed wheel. Needs sagebuild built first (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/python-env.sh
venv=build/torch-venv
sb=build/ci/tools/sagebuild/sagebuild

rm -rf build/ci-dist
# --check-reproducible compares two real compiles only if the second one bypasses ccache (whose
# objects would be the first's): a recording `ccache` first on PATH (the real one behind it, if
# any) logs every compile it launches, and each kernel source must appear there once.
launcher=$(mktemp -d)
trap 'rm -rf "$launcher"' EXIT
run='exec "$@"'  # the compiler itself where this machine has no ccache
if real=$(command -v ccache); then run="exec \"$real\" \"\$@\""; fi
cat >"$launcher/ccache" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >>"$launcher/log"
$run
EOF
chmod +x "$launcher/ccache"
# The entry as matrix.yaml declares it (all its architectures), so that the wheel also passes
# verify-wheel against matrix.yaml below.
# --check-reproducible builds it twice and requires byte-identical wheels (docs/reproducible.md).
PATH="$launcher:$PATH" env -u TORCH_CUDA_ARCH_LIST "$sb" build --env current --python "$venv/bin/python" \
  --dist build/ci-dist --check-reproducible
# Each kernel source compiled through the launcher by the first build, none by the second.
compiles=$(grep -o -E '[^ ]+/kernels/src/[^ ]+\.cu( |$)' "$launcher/log" | sed 's/ $//' | sort | uniq -c || true)
if [[ -z $compiles ]] || grep -q -v -E '^ *1 ' <<<"$compiles"; then
  echo "test-python: the kernels' compiles through ccache, by source (each once expected):" >&2
  echo "${compiles:-  none}" >&2
  exit 1
fi
echo "test-python: $(wc -l <<<"$compiles") kernel sources compiled through ccache once (the second build bypassed it)"
wheel=$(ls build/ci-dist/sageattention-*.whl)
"$sb" verify-wheel --import-python "$venv/bin/python" "$wheel"

rm -rf build/wheel-site
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps --target build/wheel-site "$wheel"
(cd build && PYTHONPATH="$PWD/wheel-site" "$PWD/torch-venv/bin/python" -m pytest -q -p no:cacheprovider \
  ../python/tests)
