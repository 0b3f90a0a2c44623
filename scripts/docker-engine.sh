#!/usr/bin/env bash
# A Docker engine for the Docker backend on a machine without Docker Hub or systemd.
#
#   scripts/docker-engine.sh [start]   install dockerd and the buildx plugin, start dockerd, build
#                                      the base images (each step skipped when already done)
#   scripts/docker-engine.sh python X.Y   make sagebuild-python:X.Y from this host's Python X.Y
#                                      (the image set `local` takes a per-Python entry's from it)
#   scripts/docker-engine.sh base debian11   make one base image (debian11: the oldest Debian
#                                      the archive still serves, where scripts/test-docker.sh
#                                      loads the CUDA 12 wheels)
#   scripts/docker-engine.sh stop      stop the dockerd this script started
#   scripts/docker-engine.sh status    what is installed and running, and the base images
#
# The engine keeps its data under build/docker-engine/ (SAGEBUILD_DOCKER_ROOT moves it);
# SAGEBUILD_DOCKER_BASES=tiny makes only the smoke-test image (the test command's case). Base
# images come from debootstrap against Debian's archive and `docker import`, never from a
# registry; their root file systems are kept in ~/.cache/sagebuild/docker-bases/ so that a fresh
# engine imports them in seconds. matrix.yaml's `docker.local` names them (docs/build.md,
# "Docker builds on this machine"):
#   sagebuild-base:debian12   Debian 12: the CUDA 13 toolkit from PyPI (nvidia's wheels), and
#                             Debian 13's CUDA 12.4 unpacked (toolkit_suite: trixie)
#   sagebuild-base:debian13   Debian 13, where the wheels are load-tested (and the suite CUDA 12.4
#                             comes from)
#   sagebuild-base:tiny       busybox only: the engine's smoke test (.ci/run)
# buildx: Debian 12 does not package it; Debian 13's docker-buildx is one static plugin, fetched
# with apt from the trixie suite through a separate source list and state folder (the system's
# apt configuration is not changed) and put in ~/.docker/cli-plugins/.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=${SAGEBUILD_DOCKER_ROOT:-$repo/build/docker-engine}
bases=${XDG_CACHE_HOME:-$HOME/.cache}/sagebuild/docker-bases
mirror=${SAGEBUILD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
plugins=$HOME/.docker/cli-plugins
say() { echo "docker-engine: $*" >&2; }
die() { echo "docker-engine: error: $*" >&2; exit 1; }

sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"

engine_up() { docker info >/dev/null 2>&1; }

source "$repo/scripts/lib/apt.sh"
install_packages() { apt_install_missing docker-engine docker.io debootstrap busybox-static; }

install_buildx() {
  docker buildx version >/dev/null 2>&1 && return 0
  say "installing the buildx plugin (Debian 13's docker-buildx)"
  local tmp
  tmp=$(mktemp -d)
  mkdir -p "$tmp/lists/partial" "$tmp/archives/partial"
  echo "deb $mirror trixie main" >"$tmp/sources.list"
  local apt=(apt-get -qq -o "Dir::Etc::SourceList=$tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache::Archives=$tmp/archives"
    -o Dir::State::Status=/dev/null -o APT::Sandbox::User=root)
  "${apt[@]}" update
  (cd "$tmp" && "${apt[@]}" download docker-buildx)
  dpkg-deb -x "$tmp"/docker-buildx_*.deb "$tmp/x"
  mkdir -p "$plugins"
  install -m 0755 "$tmp/x/usr/libexec/docker/cli-plugins/docker-buildx" "$plugins/docker-buildx.new"
  mv "$plugins/docker-buildx.new" "$plugins/docker-buildx"
  rm -rf "$tmp"
  docker buildx version >/dev/null || die "the buildx plugin in $plugins does not run"
}

start_engine() {
  if engine_up; then
    say "an engine is already running ($(docker version -f '{{.Server.Version}}' 2>/dev/null))"
    return 0
  fi
  mkdir -p "$root"
  say "starting dockerd (data in $root)"
  # setsid: the engine outlives this script and the terminal's Ctrl-C.
  setsid $sudo dockerd --data-root "$root/data" --exec-root "$root/exec" \
    --pidfile "$root/dockerd.pid" >"$root/dockerd.log" 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    engine_up && return 0
    if ! kill -0 $! 2>/dev/null && [[ ! -s $root/dockerd.pid ]]; then break; fi
    sleep 1
  done
  tail -n 20 "$root/dockerd.log" >&2 || true
  die "dockerd did not answer within 60 s; its log: $root/dockerd.log"
}

# debootstrap's root file system, kept as a tar so a fresh engine imports it without the network.
rootfs_tar() {
  local suite=$1 tar=$bases/$1.tar
  if [[ ! -s $tar ]]; then
    say "debootstrap $suite (about 2 minutes, once)"
    local dir log=$bases/debootstrap-$suite.log
    dir=$(mktemp -d)
    # The log beside the result: an engine started elsewhere leaves no folder of ours to use.
    mkdir -p "$bases"
    local components=main,contrib,non-free,non-free-firmware
    [[ $suite == bullseye ]] && components=main,contrib,non-free  # before non-free-firmware
    $sudo debootstrap --variant=minbase --components=$components \
      "$suite" "$dir" "$mirror" >"$log" 2>&1 ||
      { tail -n 20 "$log" >&2; die "debootstrap $suite failed (log: $log)"; }
    # Every component, so that an image can install from non-free (nvidia-cuda-toolkit).
    echo "deb $mirror $suite ${components//,/ }" |
      $sudo tee "$dir/etc/apt/sources.list" >/dev/null
    $sudo rm -rf "$dir/var/cache/apt/archives/"*.deb "$dir/var/lib/apt/lists/"*
    mkdir -p "$bases"
    $sudo tar -C "$dir" -cf "$tar.partial" .
    mv "$tar.partial" "$tar"
    $sudo rm -rf "$dir"
  fi
  echo "$tar"
}

tiny_tar() {
  local tar=$bases/tiny.tar
  if [[ ! -s $tar ]]; then
    local dir
    dir=$(mktemp -d)
    mkdir -p "$dir/bin" "$dir/tmp"
    cp /bin/busybox "$dir/bin/busybox"
    for tool in sh cat echo ls mkdir sha256sum test cp; do ln -s busybox "$dir/bin/$tool"; done
    mkdir -p "$bases"
    tar -C "$dir" -cf "$tar.partial" .
    mv "$tar.partial" "$tar"
    rm -rf "$dir"
  fi
  echo "$tar"
}

import_image() {
  local name=$1 tar=$2
  docker image inspect "$name" >/dev/null 2>&1 && return 0
  say "importing $name"
  docker import --change 'CMD ["/bin/sh"]' "$tar" "$name" >/dev/null
}

build_bases() {
  # Each tar made first, on its own line: a failure inside $(...) passed as an argument would not
  # stop this script (set -e sees only the outer command), an assignment's does.
  local tar
  tar=$(tiny_tar)
  import_image sagebuild-base:tiny "$tar"
  [[ ${SAGEBUILD_DOCKER_BASES:-all} == tiny ]] && return 0
  tar=$(rootfs_tar bookworm)
  import_image sagebuild-base:debian12 "$tar"
  tar=$(rootfs_tar trixie)
  import_image sagebuild-base:debian13 "$tar"
}

# This host's interpreter X.Y as an image: its prefix at the same path (a pyenv build's
# libpython is found through a run path into it) and pythonX.Y on PATH. The files are laid over a
# Debian 12 build image, whose python3 packages bring the libraries it links (libssl3, libffi8).
python_image() {
  local version=$1 name=sagebuild-python:$1
  [[ $version =~ ^3\.[0-9]+$ ]] || die "python takes a version like 3.12, not '$version'"
  docker image inspect "$name" >/dev/null 2>&1 && { say "$name exists"; return 0; }
  # pyenv's own build of X.Y (its shims answer only for the selected version), else PATH's.
  local exe="" prefix candidate
  for candidate in "${PYENV_ROOT:-$HOME/.pyenv}/versions/$version".*/bin/"python$version"; do
    [[ -x $candidate ]] && exe=$candidate
  done
  if [[ -z $exe ]]; then exe=$(command -v "python$version") || exe=""; fi
  [[ -n $exe ]] && prefix=$("$exe" -c 'import sys; print(sys.base_prefix)' 2>/dev/null) ||
    die "no working python$version (pyenv or PATH) to make $name from"
  case $prefix in
    /usr | /usr/local | /) die "python$version is installed into $prefix, whose files cannot be told apart from the system's; use a pyenv or uv interpreter" ;;
  esac
  say "making $name from $prefix"
  local tmp
  tmp=$(mktemp -d)
  mkdir -p "$tmp/usr/local/bin"
  ln -s "$prefix/bin/python$version" "$tmp/usr/local/bin/python$version"
  tar -cf "$tmp/python.tar" -C / "${prefix#/}" -C "$tmp" usr
  docker import "$tmp/python.tar" "$name" >/dev/null
  rm -rf "$tmp"
}

stop_engine() {
  local pidfile=$root/dockerd.pid
  if [[ ! -s $pidfile ]]; then
    say "no dockerd started by this script is running"
    return 0
  fi
  local pid
  pid=$(cat "$pidfile")
  say "stopping dockerd ($pid)"
  $sudo kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 30); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 1
  done
  die "dockerd ($pid) did not stop within 30 s"
}

status() {
  local server
  if ! command -v docker >/dev/null; then
    echo "engine     not installed (scripts/docker-engine.sh start installs it)"
    return 0
  fi
  echo "buildx     $(docker buildx version 2>/dev/null || echo missing)"
  # The images live in the engine's store: with the engine stopped nobody can say whether they
  # are there, and "missing" would be a guess.
  if ! server=$(docker version -f '{{.Server.Version}}' 2>/dev/null); then
    echo "engine     not running (scripts/docker-engine.sh start); the images cannot be listed without it"
    return 0
  fi
  echo "engine     $server"
  for image in sagebuild-base:tiny sagebuild-base:debian12 sagebuild-base:debian13; do
    if docker image inspect "$image" >/dev/null 2>&1; then
      echo "image      $image"
    else
      echo "image      $image missing (scripts/docker-engine.sh start builds it)"
    fi
  done
}

case ${1:-start} in
  start)
    command -v apt-get >/dev/null || die "needs a Debian or Ubuntu host (apt-get)"
    install_packages
    install_buildx
    start_engine
    build_bases
    status
    ;;
  python)
    [[ $# -eq 2 ]] || die "usage: scripts/docker-engine.sh python X.Y"
    engine_up || die "no engine is running: scripts/docker-engine.sh start"
    python_image "$2"
    ;;
  base)
    [[ $# -eq 2 ]] || die "usage: scripts/docker-engine.sh base debian11|debian12|debian13"
    engine_up || die "no engine is running: scripts/docker-engine.sh start"
    case $2 in
      debian11) suite=bullseye ;;
      debian12) suite=bookworm ;;
      debian13) suite=trixie ;;
      *) die "no base image '$2' (debian11, debian12 or debian13)" ;;
    esac
    tar=$(rootfs_tar "$suite")
    import_image "sagebuild-base:$2" "$tar"
    ;;
  stop) stop_engine ;;
  status) status ;;
  *) die "unknown command '$1' (start, python, base, stop or status)" ;;
esac
