#!/usr/bin/env bash
# Installs what building and testing sagebuild needs, from Debian's packages. Idempotent: packages
# already installed are left alone, and apt is not touched at all when nothing is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang-format clang-tidy ccache
  clang libclang-rt-14-dev
  libcli11-dev nlohmann-json3-dev libyaml-cpp-dev libfmt-dev catch2 libssl-dev libdeflate-dev
  libgit2-dev libmbedtls-dev libhttp-parser-dev libssh2-1-dev libpcre2-dev zlib1g-dev git
  libcurl4-openssl-dev
  gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64
  zsh
)

source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
APT_SAY_PRESENT=1 apt_install_missing install-build-deps "${packages[@]}"
