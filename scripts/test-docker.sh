#!/usr/bin/env bash
# The Docker backend end to end with real wheels, on a machine without Docker Hub or systemd
# (docs/build.md, "Docker builds"; figures there). Not part of scripts/test.sh: cold, it takes the
# best part of an hour on 2 cores (two toolkits' kernels, four torch environments).
#   1. the engine and its images (scripts/docker-engine.sh), sagebuild (the release preset);
#   2. `sagebuild build --backend docker --images local --profile docker-local`: the universal
#      CUDA 13.0 wheel and torch 2.11 + cu130 for Python 3.12 (PyPI's toolkit on Debian 12), the
#      torch 2.6.0 wheel for every Python and the universal CUDA 12.4 wheel (Debian 13's
#      toolkit), each verified with its import test inside its container, then on the host;
#   3. the same four through `sagebuild bake` and a plain `docker buildx bake -f`: the same bytes;
#   4. the universal CUDA 13.0 entry built natively from a clone at /src (the container's path)
#      with the container's toolkit (`--cuda-path 13.0=pypi`): the same bytes as the container's
#      but for the provenance, which names the build's Python and CMake (tests/wheels/wheel_diff.py);
#   5. every wheel is import-tested in its container with PyPI's torch (torch 2.6.0, a CUDA 12.4
#      build, for the torch 2.6 wheel; torch 2.10.0, a CUDA 12.8 build, for the CUDA 12.4 universal
#      wheel); the torch 2.6 wheel also here, on Python 3.9 with torch 2.6.0.
# Step timings go to build/docker-test/timings.txt. Exit status: the first failure's.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/docker-test
mkdir -p "$out"
timings=$PWD/$out/timings.txt
: >"$timings"
timed() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "$name $((SECONDS - start)) s" | tee -a "$timings"
}

bash scripts/install-build-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
sb=$PWD/build/release/tools/sagebuild/sagebuild
timed engine bash scripts/docker-engine.sh start
timed python-image bash scripts/docker-engine.sh python 3.12
export SAGEBUILD_DOCKER_IMAGES=local

# 2. The profile through sagebuild.
dist=$out/dist
rm -rf "$dist"
timed docker-build "$sb" build --backend docker --profile docker-local --dist "$dist"
"$sb" verify-wheel --expect-profile docker-local "$dist"/*.whl

# 3. The generated file through a plain bake (BuildKit reuses the built layers: what is checked
# is that the file alone, without sagebuild, gives the same wheels).
plain=$out/plain
rm -rf "$plain"
"$sb" bake --profile docker-local --output-dir "$plain" -o "$out/bake.json"
timed plain-bake docker buildx bake -f "$out/bake.json" --progress plain docker-local \
  >"$out/plain-bake.log" 2>&1
for wheel in "$dist"/*.whl; do
  cmp "$wheel" "$plain/$(basename "$wheel")"
done
echo "test-docker: plain bake gave the same $(ls "$dist"/*.whl | wc -l) wheels"

# 4. Native and container builds of one entry, from the same checkout path: the container builds
# in /src, and nvcc hashes a source's absolute path into device symbol names (docs/reproducible.md),
# so the native build runs in a clone at /src too (made here, and only where /src is free or
# ours), with a cache of its own, and with the toolkit the container provisions from PyPI (another
# CUDA 13.0 links another static runtime).
native=$PWD/$out/native
rm -rf "$native"
entry=linux-sage2-universal-pytorch210-cu130
if [[ -e /src && ! -e /src/.sagebuild-test-docker ]]; then
  echo "test-docker: /src exists and is not this script's clone; skipping the native comparison" >&2
else
  rm -rf /src
  git clone -q "$PWD" /src
  touch /src/.git/info/exclude && echo /.sagebuild-test-docker >>/src/.git/info/exclude
  touch /src/.sagebuild-test-docker
  (cd /src && timed native-build "$sb" build --entry "$entry" --dist "$native" \
    --cache-dir "$native-cache" --cuda-path 13.0=pypi)
  python3 tests/wheels/wheel_diff.py "$dist"/*-2100.130-py3-none-*.whl "$native"/*.whl \
    --allow '*.dist-info/sagebuild.json' | tee "$out/native-vs-docker.txt"
fi

# 5. The torch 2.6.0 wheel on another Python than the one it was built and import-tested with in
# its container (Debian 13's 3.13, as the universal CUDA 12.4 wheel with torch 2.10.0 there):
# installed here into a fresh environment of Python 3.9 with PyPI's torch 2.6.0, and imported.
timed torch-2.6.0-py3.9 bash scripts/python-env.sh 2.6.0 build/torch-2.6-py3.9-venv 3.9
"$sb" verify-wheel --select I001 --import-python build/torch-2.6-py3.9-venv/bin/python \
  "$dist"/*-260.124-py3-none-*.whl
echo "test-docker: passed"
cat "$timings"
