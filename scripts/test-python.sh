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
# --check-reproducible compares an ordinary build (kernels and binding from sagebuild's cache,
# objects from ccache) with a fresh compile of everything, which must bypass ccache (whose objects
# would be the first's): a recording `ccache` first on PATH (the real one behind it, if any) logs
# every compile it launches; no kernel source may appear there twice, and the second build's log
# must show each one compiled.
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
touch "$launcher/log"
rm -f build/logs/*-again.log
# The entry as matrix.yaml declares it (all its architectures), so that the wheel also passes
# verify-wheel against matrix.yaml below.
# --check-reproducible builds it twice and requires byte-identical wheels (docs/reproducible.md).
# The cache is the one scripts/test-universal.sh builds with: its wheel's kernels (the same
# sources, toolkit and architectures) come from this build's, not from a third compile of them.
PATH="$launcher:$PATH" env -u TORCH_CUDA_ARCH_LIST "$sb" build --env current --python "$venv/bin/python" \
  --dist build/ci-dist --check-reproducible --cache-dir build/sagebuild-cache
sources=$(git ls-files 'kernels/src/*.cu' | sed 's|^kernels/||' | sort)
through_ccache=$(grep -o -E '[^ ]+/kernels/src/[^ ]+\.cu( |$)' "$launcher/log" | sed 's/ $//' | sort | uniq -c || true)
if grep -q -v -E '^ *1 ' <<<"${through_ccache:-  1 none}"; then
  echo "test-python: kernel sources compiled through ccache more than once (the second build must bypass it):" >&2
  echo "$through_ccache" >&2
  exit 1
fi
again_log=$(ls build/logs/*-again.log)
compiled=$(grep -o -E 'src/[^ ]+\.cu\.o' "$again_log" | sed 's/\.o$//' | sort -u)
if [[ $compiled != "$sources" ]]; then
  echo "test-python: the second build ($again_log) did not compile exactly the kernel sources:" >&2
  diff <(echo "$sources") <(echo "$compiled") >&2 || true
  exit 1
fi
first=$(grep -c . <<<"$through_ccache" || true)
echo "test-python: the second build compiled all $(wc -l <<<"$sources") kernel sources, none through ccache" \
  "(the first build compiled $first through it, $([[ $first == 0 ]] && echo "its kernels from sagebuild's cache" || echo "no cached kernels"))"
# The kernel library the wheel links (the kernel cache's): SASS for every architecture of the
# entry (matrix.yaml default_archs), the FP8 instantiations for none below sm_89.
cuobjdump=$(ls build/pytools/lib/python3*/site-packages/nvidia/*/bin/cuobjdump | head -1)
library=$(ls -t build/sagebuild-cache/kernels/*/prefix/lib/libsageattn.a | head -1)
python3 tests/kernels_archs_check.py "$cuobjdump" "$library" sm_80 sm_86 sm_89 sm_90a sm_120
wheel=$(ls build/ci-dist/sageattention-*.whl)
"$sb" verify-wheel --import-python "$venv/bin/python" "$wheel"

rm -rf build/wheel-site
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps --target build/wheel-site "$wheel"
(cd build && PYTHONPATH="$PWD/wheel-site" "$PWD/torch-venv/bin/python" -m pytest -q -p no:cacheprovider \
  ../python/tests)
