#!/usr/bin/env bash
# sagebuild on Windows, as far as this machine goes: the tool and its unit tests cross-compiled
# (scripts/windows-build.sh) and run under Wine (Debian's wine64).
#   1. sagebuild_tests.exe: every unit test but those tagged [posix-tools] (they run sh, cp or
#      other POSIX programs) and [git-cli] (they make repositories with the git program);
#   2. tests/windows_cli_check.py: the commands that need no build (validate, profiles, matrix,
#      bake, verify-wheel, parse-wheel-names, ...) give the same exit code, output and files
#      as the Linux build of this checkout.
# The MSVC build and the MSVC backend's compiles are not run here (no MSVC): docs/build.md.
#   bash scripts/windows-test.sh      (~25 min the first time on 2 cores, ~3 min after)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
out=${SAGEBUILD_WINDOWS_BUILD:-$repo/build/windows}
say() { echo "windows-test: $*" >&2; }

bash scripts/windows-build.sh
source scripts/lib/apt.sh
apt_install_missing windows-test wine wine64

# A Wine prefix of our own, made once; no Mono or Gecko installers, no debug chatter.
# No crash debugger either: a crash ends its process (and fails its check) instead of leaving
# winedbg holding the pipes of a run that then never ends.
export WINEPREFIX=$out/wineprefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=;winedbg.exe=d"
if [[ ! -e $WINEPREFIX/system.reg ]]; then
  say "creating the Wine prefix $WINEPREFIX"
  wineboot --init >/dev/null 2>&1
  wineserver --wait
fi

bin=$out/sagebuild/tools/sagebuild
say "unit tests under Wine ($(wine --version 2>/dev/null))"
wine "$bin/sagebuild_tests.exe" '~[posix-tools]~[git-cli]'

# The Linux build to compare with: the CI or dev preset's, or a Release build of its own.
linux=build/ci/tools/sagebuild/sagebuild
[[ -x $linux ]] || linux=build/dev/tools/sagebuild/sagebuild
if [[ ! -x $linux ]]; then
  bash scripts/install-build-deps.sh
  cmake -S . -B build/windows/linux -G Ninja -DCMAKE_BUILD_TYPE=Release -DSAGEBUILD_BUILD_TESTS=OFF \
    -DBUILD_TESTING=OFF >/dev/null
  cmake --build build/windows/linux --target sagebuild
  linux=build/windows/linux/tools/sagebuild/sagebuild
fi
# One Wine server kept up for the ~250 short runs (each then starts in well under a second);
# a server already running (exit 2) serves as well.
wineserver --persistent=120 || [[ $? -eq 2 ]]
python3 tests/windows_cli_check.py --linux "$linux" --windows "$bin/sagebuild.exe"
wineserver --kill || true
