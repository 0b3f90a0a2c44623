#!/usr/bin/env bash
# The compile cache shared by Docker builds through ccache's remote storage (docs/build.md, "A
# compile cache shared across machines"): a real Redis server on this host, served on loopback
# and on the Docker bridge (builds in containers reach the host there), with a password. Two
# "machines" build the universal CUDA 13 entry with `sagebuild build --backend docker --force`
# on the local images, each from nothing: no layer cache (--force) and no cache mounts (the
# engine's are pruned first: kernels, environments and ccache's local objects gone):
#   E  fills the remote: every compile compiled and stored;
#   F  compiles nothing: every compile a remote hit, by ccache's own statistics as the build
#      inside reports them, and the same wheel, byte for byte.
# Pruning the engine's cache mounts is why this runs only on the engine scripts/docker-engine.sh
# started for this checkout, or with SAGEBUILD_DOCKER_PRUNE_OK=1. ~14 min on 2 cores (docs/build.md).
# Needs sagebuild (scripts/test.sh builds it; SAGEBUILD=path for another).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/apt.sh
apt_install_missing test-remote-cache-docker redis-server
bash scripts/docker-engine.sh start >/dev/null

sb=$(realpath "${SAGEBUILD:-build/ci/tools/sagebuild/sagebuild}")
[[ -x $sb ]] || { echo "test-remote-cache-docker: no sagebuild at $sb" >&2; exit 2; }
own=$PWD/build/docker-engine/data
if [[ "$(docker info -f '{{.DockerRootDir}}')" != "$own" && -z ${SAGEBUILD_DOCKER_PRUNE_OK:-} ]]; then
  echo "test-remote-cache-docker: the engine running is not this checkout's ($own); its cache" \
    "mounts would be pruned: stop it, or set SAGEBUILD_DOCKER_PRUNE_OK=1" >&2
  exit 2
fi
entry=linux-sage2-universal-pytorch210-cu130
out=$PWD/build/remote-cache-docker-test
rm -rf "$out"
mkdir -p "$out"
# The bridge's address on this host: the engine's IPAM names it only where it was configured.
bridge=$(docker network inspect bridge -f '{{range .IPAM.Config}}{{.Gateway}}{{end}}')
[[ -n $bridge ]] || bridge=$(ip -4 -o addr show docker0 | awk '{print $4}' | cut -d/ -f1)
[[ -n $bridge ]] || { echo "test-remote-cache-docker: no address of the Docker bridge found" >&2; exit 2; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
password=$(python3 -c 'import secrets; print(secrets.token_hex(12))')
redis-server --port "$port" --bind 127.0.0.1 "$bridge" --requirepass "$password" --save '' \
  --appendonly no --daemonize yes --pidfile "$out/redis.pid" --logfile "$out/redis.log" --dir "$out"
trap 'kill "$(cat "$out/redis.pid")" 2>/dev/null || true' EXIT
export REDISCLI_AUTH=$password
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -h "$bridge" -p "$port" ping >/dev/null ||
  { cat "$out/redis.log" >&2; echo "test-remote-cache-docker: Redis does not answer on $bridge:$port" >&2; exit 1; }
# redis://PASSWORD@host: the form ccache 4.7 (Debian 12's, in the image) reads.
remote="redis://$password@$bridge:$port"

failures=0
check() {  # name, condition (a shell expression), detail
  if eval "$2"; then echo "ok   $1"; else echo "FAIL $1: $3"; failures=$((failures + 1)); fi
}
machine() {  # name: a build from nothing against the remote; sets compiles remote_hits compiled
  local name=$1 start=$SECONDS dir=$out/$1
  docker builder prune -f --filter type=exec.cachemount >/dev/null
  mkdir -p "$dir"
  CCACHE_REMOTE_STORAGE=$remote SAGEBUILD_DOCKER_IMAGES=local \
    "$sb" build --backend docker --entry "$entry" --force --dist "$dir/dist" >"$dir/build.log" 2>&1 ||
    { tail -40 "$dir/build.log"; exit 1; }
  echo "$name $((SECONDS - start)) s" | tee -a "$out/timings.txt"
  cp "build/results/$entry.json" "$dir/result.json"
  read -r compiles remote_hits compiled < <(python3 -c '
import json, sys
c = json.load(open(sys.argv[1])).get("compile_cache", {})
print(c.get("compiles", 0), c.get("remote_hits", 0), c.get("compiled", 0))' "$dir/result.json")
  echo "  $name: $compiles compiles: $remote_hits remote hits, $compiled compiled; the remote holds" \
    "$(redis-cli -p "$port" dbsize) entries"
}

machine E
check "E compiled everything and stored it" '((compiled > 20 && remote_hits == 0))' "$(cat "$out/E/result.json")"
e_compiles=$compiles
machine F
check "F compiled nothing: every compile a remote hit" '((compiles > 20 && compiled == 0 && remote_hits == e_compiles))' \
  "$(cat "$out/F/result.json")"
check "F's wheel is E's, byte for byte" 'cmp -s "$out"/E/dist/*.whl "$out"/F/dist/*.whl' "differ"
check "the password appears in no log or record" '! grep -r -q "$password" "$out"/E "$out"/F build/sagebuild/docker-bake.json build/logs/docker-bake.log' \
  "found"
cat "$out/timings.txt"
echo "test-remote-cache-docker: $failures failed"
((failures == 0))
