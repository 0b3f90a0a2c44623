#!/usr/bin/env bash
# Compiles sagebuild's Windows-only sources (the Win32 process layer, file lock and Ctrl-C
# handler, SHA-256 through CNG, the MSVC backend) with the MinGW-w64 cross compiler, warning-free
# against the real <windows.h>: a quick check for every test run. The whole tool and its unit
# tests are built for Windows and run under Wine by scripts/windows-test.sh. Installs the
# compiler when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
cxx=x86_64-w64-mingw32-g++-posix
if ! command -v "$cxx" >/dev/null; then
  sudo_=""; [[ $(id -u) -eq 0 ]] || sudo_=sudo
  $sudo_ apt-get update -qq && $sudo_ apt-get install -y -qq g++-mingw-w64-x86-64-posix >/dev/null
fi
# Only fmt and nlohmann/json from the host's headers (both header-only), nothing else of /usr/include.
inc=$(mktemp -d)
trap 'rm -rf "$inc"' EXIT
ln -s /usr/include/fmt "$inc/fmt"
ln -s /usr/include/nlohmann "$inc/nlohmann"
src=tools/sagebuild/src
for f in platform/process.cpp platform/process_win32.cpp platform/file_lock.cpp \
         platform/file_lock_win32.cpp platform/interrupt_win32.cpp backend/msvc/msvc.cpp util/sha256_cng.cpp \
         util/secrets.cpp; do
  "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Werror -DFMT_HEADER_ONLY -I"$src" -isystem "$inc" "$src/$f"
done
echo "check-win32: the Win32 sources compile with $($cxx -dumpversion) (MinGW-w64)"
