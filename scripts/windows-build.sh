#!/usr/bin/env bash
# Cross-compiles sagebuild.exe and its unit tests (sagebuild_tests.exe) for Windows x64 with
# Debian's MinGW-w64 compiler, as self-contained executables (everything linked statically).
# What sagebuild links comes from Debian's own source packages (the versions Debian 12 ships on
# Linux), built for Windows into build/windows/prefix:
#   yaml-cpp, fmt, CLI11, nlohmann-json, Catch2, PCRE2, libdeflate   as on Linux
#   libgit2   no network transports (sagebuild reads local repositories only), built-in SHA-1
#   curl      HTTP(S) through Windows' own TLS (Schannel), no OpenSSL
#   zlib      Debian's libz-mingw-w64-dev
# SHA-256 comes from Windows' CNG (util/sha256_win32.cpp), so OpenSSL is not needed at all.
# The sources are fetched once with apt through a separate deb-src list and state folder (the
# system's apt configuration is not changed) into ~/.cache/sagebuild/windows-src; each library
# is built once per version. The executables run under Wine: scripts/windows-test.sh.
#   bash scripts/windows-build.sh        -> build/windows/sagebuild/tools/sagebuild/*.exe
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${SAGEBUILD_WINDOWS_BUILD:-$repo/build/windows}
prefix=$out/prefix
sources=${XDG_CACHE_HOME:-$HOME/.cache}/sagebuild/windows-src
mirror=${SAGEBUILD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
jobs=$(nproc)
say() { echo "windows-build: $*" >&2; }
die() { echo "windows-build: error: $*" >&2; exit 1; }

source "$repo/scripts/lib/apt.sh"
apt_install_missing windows-build g++-mingw-w64-x86-64-posix gcc-mingw-w64-x86-64-posix \
  libz-mingw-w64-dev dpkg-dev cmake ninja-build pkg-config make

export SAGEBUILD_WINDOWS_PREFIX=$prefix
toolchain=$repo/cmake/mingw-w64.cmake
mkdir -p "$prefix/stamps" "$sources"

# Downloads and unpacks Debian 12's source package PACKAGE once; prints its folder.
fetch_source() {
  local package=$1 dir
  dir=$(find "$sources" -maxdepth 1 -type d -name "$package-[0-9]*" -print -quit)
  if [[ -z $dir ]]; then
    say "fetching the source of $package (Debian 12)"
    local tmp
    tmp=$(mktemp -d)
    mkdir -p "$tmp/lists/partial"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm main" \
      >"$tmp/sources.list"
    local apt=(apt-get -qq -o "Dir::Etc::SourceList=$tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=$tmp/lists" -o Dir::State::Status=/dev/null -o APT::Sandbox::User=root)
    "${apt[@]}" update || die "apt could not read the deb-src list of $mirror"
    (cd "$tmp" && "${apt[@]}" source --download-only "$package" >/dev/null) ||
      die "apt could not download the source package $package"
    local version
    version=$(cd "$tmp" && ls ./*.dsc | sed -E "s|^\./${package}_([^-]+)(-.*)?\.dsc$|\1|")
    dir=$sources/$package-$version
    # Unpacked beside its final place, then renamed: an interrupted fetch leaves no half folder.
    rm -rf "$dir.partial"
    (cd "$tmp" && dpkg-source --no-check -x ./*.dsc "$dir.partial" >/dev/null) ||
      die "dpkg-source could not unpack $package"
    mv "$dir.partial" "$dir"
    rm -rf "$tmp"
  fi
  echo "$dir"
}

# Builds and installs one CMake project into the prefix unless this version is there already.
cmake_library() {
  local package=$1
  shift
  local src stamp
  src=$(fetch_source "$package")
  # One stamp per version and options: changing either builds the library again.
  stamp=$prefix/stamps/$(basename "$src")-$(echo "$*" | sha256sum | cut -c1-12)
  [[ -e $stamp ]] && return 0
  say "building $(basename "$src")"
  rm -rf "$out/lib-build/$package"
  cmake -S "$src" -B "$out/lib-build/$package" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DBUILD_SHARED_LIBS=OFF \
    -DBUILD_TESTING=OFF "$@" >"$out/lib-build/$package.log" 2>&1 &&
    cmake --build "$out/lib-build/$package" -j "$jobs" >>"$out/lib-build/$package.log" 2>&1 &&
    cmake --install "$out/lib-build/$package" >>"$out/lib-build/$package.log" 2>&1 ||
    die "$package failed to build ($out/lib-build/$package.log)"
  touch "$stamp"
}

mkdir -p "$out/lib-build"
cmake_library yaml-cpp -DYAML_CPP_BUILD_TESTS=OFF -DYAML_CPP_BUILD_TOOLS=OFF -DYAML_BUILD_SHARED_LIBS=OFF
cmake_library fmtlib -DFMT_TEST=OFF -DFMT_DOC=OFF
cmake_library cli11 -DCLI11_BUILD_TESTS=OFF -DCLI11_BUILD_EXAMPLES=OFF -DCLI11_BUILD_DOCS=OFF
cmake_library nlohmann-json3 -DJSON_BuildTests=OFF
cmake_library catch2 -DCATCH_BUILD_TESTING=OFF -DCATCH_INSTALL_DOCS=OFF -DCATCH_INSTALL_HELPERS=ON
cmake_library pcre2 -DPCRE2_BUILD_PCRE2GREP=OFF -DPCRE2_BUILD_TESTS=OFF -DPCRE2_SUPPORT_JIT=OFF
cmake_library curl -DCURL_USE_SCHANNEL=ON -DCURL_USE_OPENSSL=OFF -DCURL_USE_LIBSSH2=OFF \
  -DCURL_USE_LIBPSL=OFF -DUSE_LIBIDN2=OFF -DUSE_NGHTTP2=OFF -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF \
  -DCURL_DISABLE_LDAP=ON -DBUILD_CURL_EXE=OFF -DENABLE_MANUAL=OFF -DCURL_STATICLIB=ON -DHTTP_ONLY=ON
# Builds one library with its own Makefile:
#   make_library PACKAGE MAKE-TARGET BUILT-ARCHIVE INSTALLED-ARCHIVE HEADER
make_library() {
  local package=$1 target=$2 built=$3 installed=$4 header=$5 src
  src=$(fetch_source "$package")
  [[ -e $prefix/stamps/$(basename "$src") ]] && return 0
  say "building $(basename "$src")"
  rm -rf "$out/lib-build/$package"
  cp -a "$src" "$out/lib-build/$package"
  make -C "$out/lib-build/$package" -j "$jobs" CC=x86_64-w64-mingw32-gcc-posix AR=x86_64-w64-mingw32-ar \
    "$target" >"$out/lib-build/$package.log" 2>&1 || die "$package failed to build ($out/lib-build/$package.log)"
  install -D -m 0644 "$out/lib-build/$package/$built" "$prefix/lib/$installed"
  install -D -m 0644 "$out/lib-build/$package/$header" "$prefix/include/$header"
  touch "$prefix/stamps/$(basename "$src")"
}
# libdeflate 1.14 (CMake came with 1.15; its Makefile names the MinGW archive
# libdeflatestatic.lib) and http-parser build with their Makefiles.
make_library libdeflate libdeflatestatic.lib libdeflatestatic.lib libdeflate.a libdeflate.h
make_library http-parser package libhttp_parser.a libhttp_parser.a http_parser.h

# libgit2 without what Debian strips from its source (deps/: bundled http-parser, zlib, WinHTTP
# headers): http-parser above, zlib from libz-mingw-w64-dev. None of its transports (HTTPS,
# SSH, NTLM, GSSAPI, WinHTTP) is used: sagebuild reads local repositories only.
cmake_library libgit2 -DBUILD_CLI=OFF -DBUILD_TESTS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_FUZZERS=OFF \
  -DUSE_HTTPS=OFF -DUSE_WINHTTP=OFF -DUSE_SSH=OFF -DUSE_GSSAPI=OFF -DUSE_NTLMCLIENT=OFF \
  -DUSE_SHA1=CollisionDetection -DREGEX_BACKEND=pcre2 -DUSE_HTTP_PARSER=system -DUSE_BUNDLED_ZLIB=OFF \
  -DCMAKE_C_FLAGS=-DPCRE2_STATIC

say "building sagebuild.exe and sagebuild_tests.exe"
cmake -S "$repo" -B "$out/sagebuild" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
  -DCMAKE_BUILD_TYPE=Release -DSAGEBUILD_WERROR=ON -DCMAKE_CUDA_COMPILER=NOTFOUND >/dev/null
cmake --build "$out/sagebuild" -j "$jobs" --target sagebuild sagebuild_tests
say "done: $out/sagebuild/tools/sagebuild/sagebuild.exe"
