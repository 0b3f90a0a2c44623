#!/usr/bin/env bash
# The Docker backend end to end with real wheels, on a machine without Docker Hub or systemd
# (docs/build.md, "Docker builds"; figures there). Not part of scripts/test.sh: cold, it takes the
# best part of an hour on 2 cores (two toolkits' kernels, four torch environments).
#   1. the engine and its images (scripts/docker-engine.sh), sagebuild (the release preset);
#   2. `sagebuild build --backend docker --images local --profile docker-local`: the universal
#      CUDA 13.0 wheel and torch 2.11 + cu130 for Python 3.12 (PyPI's toolkit on Debian 12), the
#      torch 2.6.0 wheel for every Python and the universal CUDA 12.4 wheel (Debian 13's
#      toolkit unpacked onto Debian 12), each verified with its import test inside its container,
#      then on the host; the plan (`--dry-run`) names exactly the files the build wrote;
#   3. the same four through `sagebuild bake` and a plain `docker buildx bake -f`: the same bytes;
#   4. the universal CUDA 13.0 entry built natively from a clone at /src (the container's path)
#      with the container's toolkit (`--cuda-path 13.0=pypi`): the same bytes as the container's
#      but for the provenance, which names the build's Python and CMake (tests/wheels/wheel_diff.py);
#   5. every wheel is import-tested in its container with PyPI's torch (torch 2.6.0, a CUDA 12.4
#      build, for the torch 2.6 wheel; torch 2.10.0, a CUDA 12.8 build, for the CUDA 12.4 universal
#      wheel); the two CUDA 12.4 wheels (manylinux_2_28) also load on this host (Debian 12), in a
#      Debian 13 container and, the torch 2.6 one, in a Debian 11 container (glibc 2.31, the
#      oldest the archive serves; its Python 3.9 is too old for torch 2.10), each with PyPI's torch
#      for the distribution's own Python (the environment made here, mounted at its path).
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
# (Timed, to set beside the images' own compile of sagebuild: the bake's "sagebuild 4/4" step.)
timed sagebuild-host cmake --build --preset release
sb=$PWD/build/release/tools/sagebuild/sagebuild
timed engine bash scripts/docker-engine.sh start
timed python-image bash scripts/docker-engine.sh python 3.12
export SAGEBUILD_DOCKER_IMAGES=local

# 2. The profile through sagebuild.
dist=$out/dist
rm -rf "$dist"
timed docker-build "$sb" build --backend docker --profile docker-local --dist "$dist"
"$sb" verify-wheel --expect-profile docker-local "$dist"/*.whl
# What the plan says is what the files are: every name, the platform tag the build earned
# included (wheel/identity decides it before the build; the binaries are held to it after).
"$sb" build --backend docker --profile docker-local --dry-run |
  awk '$1 == "wheel" { print $2 }' | sort >"$out/planned.txt"
(cd "$dist" && ls -- *.whl) | sort >"$out/built.txt"
diff -u "$out/planned.txt" "$out/built.txt"
echo "test-docker: the plan names the $(wc -l <"$out/built.txt") wheels built"

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

# 5. The CUDA 12.4 wheels where their users are: this host (Debian 12, glibc 2.36), Debian 13
# (2.41) and Debian 11 (2.31), each with PyPI's torch for the Python it runs. The environments are
# made here (python-env.sh) and mounted into the containers at their paths; a container uses its
# own interpreter of the same X.Y with the environment's site-packages, so only the kernels, torch
# and the distribution's own libraries meet.
load_in() {  # IMAGE PYTHON_X.Y VENV WHEEL
  local image=$1 py=$2 venv=$3 wheel=$4 site
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  docker run --rm -v "$PWD:$PWD:ro" -w /tmp "$image" "python$py" -c "
import site, sys, zipfile
zipfile.ZipFile('$PWD/$wheel').extractall('/tmp/w'); sys.path.insert(0, '/tmp/w')
site.addsitedir('$site')
import sageattention._ops as ops
assert ops.available(), ops.LOAD_ERROR
print('loaded in', open('/etc/debian_version').read().strip(), 'with torch', __import__('torch').__version__)"
}
test_image() {  # NAME BASE: the base with its distribution's python3
  docker image inspect "$1" >/dev/null 2>&1 && return 0
  printf 'FROM %s\nRUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 && rm -rf /var/lib/apt/lists/*\n' "$2" |
    docker build -q -t "$1" - >/dev/null
}
bash scripts/docker-engine.sh base debian11
bash scripts/docker-engine.sh base debian13
test_image sagebuild-test:debian11 sagebuild-base:debian11
test_image sagebuild-test:debian13 sagebuild-base:debian13
per_torch=$(ls "$dist"/*-260.124-py3-none-*.whl)
universal=$(ls "$dist"/*-2100.124-py3-none-*.whl)
for pair in "2.6.0 3.9" "2.6.0 3.13" "2.10.0 3.12" "2.10.0 3.13"; do
  set -- $pair
  timed "torch-$1-py$2" bash scripts/python-env.sh "$1" "build/torch-$1-py$2-venv" "$2"
done
for pair in "2.6.0 3.9 $per_torch" "2.10.0 3.12 $universal"; do
  set -- $pair
  "$sb" verify-wheel --select I001 --import-python "build/torch-$1-py$2-venv/bin/python" "$3"
done
load_in sagebuild-test:debian13 3.13 build/torch-2.6.0-py3.13-venv "$per_torch"
load_in sagebuild-test:debian13 3.13 build/torch-2.10.0-py3.13-venv "$universal"
load_in sagebuild-test:debian11 3.9 build/torch-2.6.0-py3.9-venv "$per_torch"
echo "test-docker: passed"
cat "$timings"
